from typing import Optional

from pydantic import Field

from .base_model import BaseModel


class ContextBlock(BaseModel):
    full: "ContextBlockFull"
    small: "ContextBlockSmall"
    in_the_past: "ContextBlockInThePast" = Field(alias="inThePast")


class ContextBlockFull(BaseModel):
    text: str
    tokens: int
    truncated: bool
    facts: list["ContextBlockFullFacts"]
    episodes: list["ContextBlockFullEpisodes"]
    entities: list["ContextBlockFullEntities"]


class ContextBlockFullFacts(BaseModel):
    predicate: str
    object_: "ContextBlockFullFactsObject" = Field(alias="object")


class ContextBlockFullFactsObject(BaseModel):
    entity: Optional["ContextBlockFullFactsObjectEntity"]


class ContextBlockFullFactsObjectEntity(BaseModel):
    name: str


class ContextBlockFullEpisodes(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")


class ContextBlockFullEntities(BaseModel):
    name: str


class ContextBlockSmall(BaseModel):
    text: str
    tokens: int
    truncated: bool


class ContextBlockInThePast(BaseModel):
    text: str


ContextBlock.model_rebuild()
ContextBlockFull.model_rebuild()
ContextBlockFullFacts.model_rebuild()
ContextBlockFullFactsObject.model_rebuild()
