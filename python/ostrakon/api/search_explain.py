from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import FactStatus, RecordKind, SearchComponent


class SearchExplain(BaseModel):
    now: "SearchExplainNow"
    history: "SearchExplainHistory"
    episodes_of_thread: "SearchExplainEpisodesOfThread" = Field(
        alias="episodesOfThread"
    )


class SearchExplainNow(BaseModel):
    basis: "SearchExplainNowBasis"
    matched_entities: list["SearchExplainNowMatchedEntities"] = Field(
        alias="matchedEntities"
    )
    indexed_seq: int = Field(alias="indexedSeq")
    warnings: list[str]
    hits: list["SearchExplainNowHits"]


class SearchExplainNowBasis(BaseModel):
    seq: int
    valid_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="validAt"
    )
    at: Annotated[DateTime, BeforeValidator(parse_datetime)]


class SearchExplainNowMatchedEntities(BaseModel):
    name: str


class SearchExplainNowHits(BaseModel):
    kind: RecordKind
    score: float
    episode: Optional["SearchExplainNowHitsEpisode"]
    fact: Optional["SearchExplainNowHitsFact"]
    entity: Optional["SearchExplainNowHitsEntity"]
    explain: "SearchExplainNowHitsExplain"


class SearchExplainNowHitsEpisode(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")
    text: str


class SearchExplainNowHitsFact(BaseModel):
    subject: Optional["SearchExplainNowHitsFactSubject"]
    predicate: str
    object_: "SearchExplainNowHitsFactObject" = Field(alias="object")
    status: FactStatus


class SearchExplainNowHitsFactSubject(BaseModel):
    name: str


class SearchExplainNowHitsFactObject(BaseModel):
    entity: Optional["SearchExplainNowHitsFactObjectEntity"]


class SearchExplainNowHitsFactObjectEntity(BaseModel):
    name: str


class SearchExplainNowHitsEntity(BaseModel):
    name: str


class SearchExplainNowHitsExplain(BaseModel):
    components: list["SearchExplainNowHitsExplainComponents"]
    fused: float
    cue: float
    retention: float
    weight: float
    relevance: float
    mmr: float
    status: Optional[FactStatus]
    dormant: bool


class SearchExplainNowHitsExplainComponents(BaseModel):
    component: SearchComponent
    rank: int
    score: float


class SearchExplainHistory(BaseModel):
    hits: list["SearchExplainHistoryHits"]


class SearchExplainHistoryHits(BaseModel):
    fact: Optional["SearchExplainHistoryHitsFact"]
    explain: "SearchExplainHistoryHitsExplain"


class SearchExplainHistoryHitsFact(BaseModel):
    object_: "SearchExplainHistoryHitsFactObject" = Field(alias="object")
    status: FactStatus


class SearchExplainHistoryHitsFactObject(BaseModel):
    entity: Optional["SearchExplainHistoryHitsFactObjectEntity"]


class SearchExplainHistoryHitsFactObjectEntity(BaseModel):
    name: str


class SearchExplainHistoryHitsExplain(BaseModel):
    status: Optional[FactStatus]


class SearchExplainEpisodesOfThread(BaseModel):
    hits: list["SearchExplainEpisodesOfThreadHits"]


class SearchExplainEpisodesOfThreadHits(BaseModel):
    episode: Optional["SearchExplainEpisodesOfThreadHitsEpisode"]


class SearchExplainEpisodesOfThreadHitsEpisode(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")
    thread: Optional[str]


SearchExplain.model_rebuild()
SearchExplainNow.model_rebuild()
SearchExplainNowHits.model_rebuild()
SearchExplainNowHitsFact.model_rebuild()
SearchExplainNowHitsFactObject.model_rebuild()
SearchExplainNowHitsExplain.model_rebuild()
SearchExplainHistory.model_rebuild()
SearchExplainHistoryHits.model_rebuild()
SearchExplainHistoryHitsFact.model_rebuild()
SearchExplainHistoryHitsFactObject.model_rebuild()
SearchExplainEpisodesOfThread.model_rebuild()
SearchExplainEpisodesOfThreadHits.model_rebuild()
