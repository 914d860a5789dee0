from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import ValueType


class Context(BaseModel):
    context: "ContextContext"


class ContextContext(BaseModel):
    text: str
    tokens: int
    truncated: bool
    facts: list["ContextContextFacts"]
    episodes: list["ContextContextEpisodes"]


class ContextContextFacts(BaseModel):
    id: str
    subject: Optional["ContextContextFactsSubject"]
    predicate: str
    object_: "ContextContextFactsObject" = Field(alias="object")
    valid: "ContextContextFactsValid"


class ContextContextFactsSubject(BaseModel):
    name: str


class ContextContextFactsObject(BaseModel):
    type_: ValueType = Field(alias="type")
    entity: Optional["ContextContextFactsObjectEntity"]
    string: Optional[str]
    integer: Optional[int]


class ContextContextFactsObjectEntity(BaseModel):
    name: str


class ContextContextFactsValid(BaseModel):
    from_: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(alias="from")
    to: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]]


class ContextContextEpisodes(BaseModel):
    id: str
    external_id: Optional[str] = Field(alias="externalId")
    text: str
    occurred_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="occurredAt"
    )


Context.model_rebuild()
ContextContext.model_rebuild()
ContextContextFacts.model_rebuild()
ContextContextFactsObject.model_rebuild()
