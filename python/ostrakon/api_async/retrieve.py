from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import FactStatus, RecordKind, SearchComponent, ValueType


class Retrieve(BaseModel):
    search: "RetrieveSearch"


class RetrieveSearch(BaseModel):
    basis: "RetrieveSearchBasis"
    hits: list["RetrieveSearchHits"]


class RetrieveSearchBasis(BaseModel):
    seq: int
    valid_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="validAt"
    )


class RetrieveSearchHits(BaseModel):
    kind: RecordKind
    score: float
    explain: "RetrieveSearchHitsExplain"
    episode: Optional["RetrieveSearchHitsEpisode"]
    fact: Optional["RetrieveSearchHitsFact"]
    entity: Optional["RetrieveSearchHitsEntity"]


class RetrieveSearchHitsExplain(BaseModel):
    components: list["RetrieveSearchHitsExplainComponents"]
    fused: float
    relevance: float
    retention: float
    status: Optional[FactStatus]


class RetrieveSearchHitsExplainComponents(BaseModel):
    component: SearchComponent
    rank: int
    score: float


class RetrieveSearchHitsEpisode(BaseModel):
    id: str
    external_id: Optional[str] = Field(alias="externalId")
    text: str
    occurred_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="occurredAt"
    )
    recorded_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="recordedAt"
    )
    thread: Optional[str]
    role: Optional[str]


class RetrieveSearchHitsFact(BaseModel):
    id: str
    subject: Optional["RetrieveSearchHitsFactSubject"]
    predicate: str
    object_: "RetrieveSearchHitsFactObject" = Field(alias="object")
    valid: "RetrieveSearchHitsFactValid"
    status: FactStatus
    reason: str
    asserted_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="assertedAt"
    )
    superseded_by: Optional["RetrieveSearchHitsFactSupersededBy"] = Field(
        alias="supersededBy"
    )


class RetrieveSearchHitsFactSubject(BaseModel):
    name: str


class RetrieveSearchHitsFactObject(BaseModel):
    type_: ValueType = Field(alias="type")
    entity: Optional["RetrieveSearchHitsFactObjectEntity"]
    string: Optional[str]
    integer: Optional[int]
    float_: Optional[float] = Field(alias="float")
    boolean: Optional[bool]
    time: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]]


class RetrieveSearchHitsFactObjectEntity(BaseModel):
    name: str


class RetrieveSearchHitsFactValid(BaseModel):
    from_: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(alias="from")
    to: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]]


class RetrieveSearchHitsFactSupersededBy(BaseModel):
    id: str
    predicate: str
    object_: "RetrieveSearchHitsFactSupersededByObject" = Field(alias="object")


class RetrieveSearchHitsFactSupersededByObject(BaseModel):
    entity: Optional["RetrieveSearchHitsFactSupersededByObjectEntity"]
    string: Optional[str]
    integer: Optional[int]
    float_: Optional[float] = Field(alias="float")
    boolean: Optional[bool]
    time: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]]


class RetrieveSearchHitsFactSupersededByObjectEntity(BaseModel):
    name: str


class RetrieveSearchHitsEntity(BaseModel):
    id: str
    name: str


Retrieve.model_rebuild()
RetrieveSearch.model_rebuild()
RetrieveSearchHits.model_rebuild()
RetrieveSearchHitsExplain.model_rebuild()
RetrieveSearchHitsFact.model_rebuild()
RetrieveSearchHitsFactObject.model_rebuild()
RetrieveSearchHitsFactSupersededBy.model_rebuild()
RetrieveSearchHitsFactSupersededByObject.model_rebuild()
