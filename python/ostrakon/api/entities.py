from typing import Optional

from pydantic import Field

from .base_model import BaseModel


class Entities(BaseModel):
    entities: "EntitiesEntities"


class EntitiesEntities(BaseModel):
    page_info: "EntitiesEntitiesPageInfo" = Field(alias="pageInfo")
    nodes: list["EntitiesEntitiesNodes"]


class EntitiesEntitiesPageInfo(BaseModel):
    has_next_page: bool = Field(alias="hasNextPage")
    end_cursor: Optional[str] = Field(alias="endCursor")


class EntitiesEntitiesNodes(BaseModel):
    id: str
    name: str
    kind: Optional[str]
    aliases: list[str]


Entities.model_rebuild()
EntitiesEntities.model_rebuild()
