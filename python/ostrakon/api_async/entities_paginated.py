from typing import Optional

from pydantic import Field

from .base_model import BaseModel


class EntitiesPaginated(BaseModel):
    first: "EntitiesPaginatedFirst"
    next: "EntitiesPaginatedNext"
    cities: "EntitiesPaginatedCities"
    alias: "EntitiesPaginatedAlias"


class EntitiesPaginatedFirst(BaseModel):
    page_info: "EntitiesPaginatedFirstPageInfo" = Field(alias="pageInfo")
    nodes: list["EntitiesPaginatedFirstNodes"]


class EntitiesPaginatedFirstPageInfo(BaseModel):
    has_next_page: bool = Field(alias="hasNextPage")
    end_cursor: Optional[str] = Field(alias="endCursor")


class EntitiesPaginatedFirstNodes(BaseModel):
    id: str
    name: str


class EntitiesPaginatedNext(BaseModel):
    page_info: "EntitiesPaginatedNextPageInfo" = Field(alias="pageInfo")
    nodes: list["EntitiesPaginatedNextNodes"]


class EntitiesPaginatedNextPageInfo(BaseModel):
    has_next_page: bool = Field(alias="hasNextPage")
    has_previous_page: bool = Field(alias="hasPreviousPage")


class EntitiesPaginatedNextNodes(BaseModel):
    id: str
    name: str


class EntitiesPaginatedCities(BaseModel):
    nodes: list["EntitiesPaginatedCitiesNodes"]


class EntitiesPaginatedCitiesNodes(BaseModel):
    name: str
    aliases: list[str]


class EntitiesPaginatedAlias(BaseModel):
    nodes: list["EntitiesPaginatedAliasNodes"]


class EntitiesPaginatedAliasNodes(BaseModel):
    name: str


EntitiesPaginated.model_rebuild()
EntitiesPaginatedFirst.model_rebuild()
EntitiesPaginatedNext.model_rebuild()
EntitiesPaginatedCities.model_rebuild()
EntitiesPaginatedAlias.model_rebuild()
