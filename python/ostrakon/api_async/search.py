from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import FactStatus, RecordKind, ValueType


class Search(BaseModel):
    search: "SearchSearch"


class SearchSearch(BaseModel):
    basis: "SearchSearchBasis"
    hits: list["SearchSearchHits"]


class SearchSearchBasis(BaseModel):
    seq: int
    valid_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="validAt"
    )


class SearchSearchHits(BaseModel):
    kind: RecordKind
    score: float
    episode: Optional["SearchSearchHitsEpisode"]
    fact: Optional["SearchSearchHitsFact"]
    entity: Optional["SearchSearchHitsEntity"]


class SearchSearchHitsEpisode(BaseModel):
    id: str
    external_id: Optional[str] = Field(alias="externalId")
    text: str
    occurred_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="occurredAt"
    )


class SearchSearchHitsFact(BaseModel):
    id: str
    subject: Optional["SearchSearchHitsFactSubject"]
    predicate: str
    object_: "SearchSearchHitsFactObject" = Field(alias="object")
    valid: "SearchSearchHitsFactValid"
    status: FactStatus


class SearchSearchHitsFactSubject(BaseModel):
    name: str


class SearchSearchHitsFactObject(BaseModel):
    type_: ValueType = Field(alias="type")
    entity: Optional["SearchSearchHitsFactObjectEntity"]
    string: Optional[str]
    integer: Optional[int]


class SearchSearchHitsFactObjectEntity(BaseModel):
    name: str


class SearchSearchHitsFactValid(BaseModel):
    from_: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(alias="from")
    to: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]]


class SearchSearchHitsEntity(BaseModel):
    id: str
    name: str


Search.model_rebuild()
SearchSearch.model_rebuild()
SearchSearchHits.model_rebuild()
SearchSearchHitsFact.model_rebuild()
SearchSearchHitsFactObject.model_rebuild()
