from typing import Optional

from pydantic import Field

from .base_model import BaseModel
from .enums import RecordKind


class TopicsRead(BaseModel):
    topics: list["TopicsReadTopics"]
    alice: Optional["TopicsReadAlice"]
    london: Optional["TopicsReadLondon"]
    namespace: "TopicsReadNamespace"
    topic_search: "TopicsReadTopicSearch" = Field(alias="topicSearch")
    inside: "TopicsReadInside"
    everywhere: "TopicsReadEverywhere"


class TopicsReadTopics(BaseModel):
    id: str
    label: str
    terms: list[str]
    segment_count: int = Field(alias="segmentCount")
    members: list["TopicsReadTopicsMembers"]
    episodes: list["TopicsReadTopicsEpisodes"]


class TopicsReadTopicsMembers(BaseModel):
    entity: "TopicsReadTopicsMembersEntity"
    centrality: float


class TopicsReadTopicsMembersEntity(BaseModel):
    name: str


class TopicsReadTopicsEpisodes(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")


class TopicsReadAlice(BaseModel):
    related: list["TopicsReadAliceRelated"]
    topic: Optional["TopicsReadAliceTopic"]


class TopicsReadAliceRelated(BaseModel):
    entity: "TopicsReadAliceRelatedEntity"
    weight: float
    segments: int
    similarity: Optional[float]
    retention: float


class TopicsReadAliceRelatedEntity(BaseModel):
    name: str


class TopicsReadAliceTopic(BaseModel):
    id: str


class TopicsReadLondon(BaseModel):
    related: list["TopicsReadLondonRelated"]
    topic: Optional["TopicsReadLondonTopic"]


class TopicsReadLondonRelated(BaseModel):
    entity: "TopicsReadLondonRelatedEntity"


class TopicsReadLondonRelatedEntity(BaseModel):
    name: str


class TopicsReadLondonTopic(BaseModel):
    id: str


class TopicsReadNamespace(BaseModel):
    segmentation: "TopicsReadNamespaceSegmentation"


class TopicsReadNamespaceSegmentation(BaseModel):
    threshold: float
    hysteresis: float
    max_gap_seconds: int = Field(alias="maxGapSeconds")
    min_length: int = Field(alias="minLength")


class TopicsReadTopicSearch(BaseModel):
    hits: list["TopicsReadTopicSearchHits"]
    topics: list["TopicsReadTopicSearchTopics"]


class TopicsReadTopicSearchHits(BaseModel):
    kind: RecordKind


class TopicsReadTopicSearchTopics(BaseModel):
    score: float
    topic: "TopicsReadTopicSearchTopicsTopic"


class TopicsReadTopicSearchTopicsTopic(BaseModel):
    id: str
    label: str


class TopicsReadInside(BaseModel):
    hits: list["TopicsReadInsideHits"]
    topics: list["TopicsReadInsideTopics"]


class TopicsReadInsideHits(BaseModel):
    kind: RecordKind
    episode: Optional["TopicsReadInsideHitsEpisode"]
    entity: Optional["TopicsReadInsideHitsEntity"]


class TopicsReadInsideHitsEpisode(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")


class TopicsReadInsideHitsEntity(BaseModel):
    name: str


class TopicsReadInsideTopics(BaseModel):
    topic: "TopicsReadInsideTopicsTopic"


class TopicsReadInsideTopicsTopic(BaseModel):
    id: str


class TopicsReadEverywhere(BaseModel):
    hits: list["TopicsReadEverywhereHits"]


class TopicsReadEverywhereHits(BaseModel):
    kind: RecordKind
    episode: Optional["TopicsReadEverywhereHitsEpisode"]
    entity: Optional["TopicsReadEverywhereHitsEntity"]


class TopicsReadEverywhereHitsEpisode(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")


class TopicsReadEverywhereHitsEntity(BaseModel):
    name: str


TopicsRead.model_rebuild()
TopicsReadTopics.model_rebuild()
TopicsReadTopicsMembers.model_rebuild()
TopicsReadAlice.model_rebuild()
TopicsReadAliceRelated.model_rebuild()
TopicsReadLondon.model_rebuild()
TopicsReadLondonRelated.model_rebuild()
TopicsReadNamespace.model_rebuild()
TopicsReadTopicSearch.model_rebuild()
TopicsReadTopicSearchTopics.model_rebuild()
TopicsReadInside.model_rebuild()
TopicsReadInsideHits.model_rebuild()
TopicsReadInsideTopics.model_rebuild()
TopicsReadEverywhere.model_rebuild()
TopicsReadEverywhereHits.model_rebuild()
