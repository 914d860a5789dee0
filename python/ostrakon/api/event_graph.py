from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import FactStatus, MentionSource


class EventGraph(BaseModel):
    thread: "EventGraphThread"
    alice: Optional["EventGraphAlice"]
    acme: Optional["EventGraphAcme"]
    london: Optional["EventGraphLondon"]


class EventGraphThread(BaseModel):
    nodes: list["EventGraphThreadNodes"]


class EventGraphThreadNodes(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")
    text: str
    previous: Optional["EventGraphThreadNodesPrevious"]
    next: Optional["EventGraphThreadNodesNext"]
    mentions: list["EventGraphThreadNodesMentions"]
    facts: list["EventGraphThreadNodesFacts"]


class EventGraphThreadNodesPrevious(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")


class EventGraphThreadNodesNext(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")


class EventGraphThreadNodesMentions(BaseModel):
    entity: "EventGraphThreadNodesMentionsEntity"
    source: MentionSource


class EventGraphThreadNodesMentionsEntity(BaseModel):
    name: str


class EventGraphThreadNodesFacts(BaseModel):
    subject: Optional["EventGraphThreadNodesFactsSubject"]
    predicate: str
    object_: "EventGraphThreadNodesFactsObject" = Field(alias="object")
    status: FactStatus


class EventGraphThreadNodesFactsSubject(BaseModel):
    name: str


class EventGraphThreadNodesFactsObject(BaseModel):
    entity: Optional["EventGraphThreadNodesFactsObjectEntity"]


class EventGraphThreadNodesFactsObjectEntity(BaseModel):
    name: str


class EventGraphAlice(BaseModel):
    mentions: "EventGraphAliceMentions"


class EventGraphAliceMentions(BaseModel):
    nodes: list["EventGraphAliceMentionsNodes"]


class EventGraphAliceMentionsNodes(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")
    occurred_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="occurredAt"
    )
    thread: Optional[str]


class EventGraphAcme(BaseModel):
    mentions: "EventGraphAcmeMentions"


class EventGraphAcmeMentions(BaseModel):
    nodes: list["EventGraphAcmeMentionsNodes"]


class EventGraphAcmeMentionsNodes(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")


class EventGraphLondon(BaseModel):
    name: str
    mentions: "EventGraphLondonMentions"


class EventGraphLondonMentions(BaseModel):
    nodes: list["EventGraphLondonMentionsNodes"]


class EventGraphLondonMentionsNodes(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")
    next: Optional["EventGraphLondonMentionsNodesNext"]
    previous: Optional["EventGraphLondonMentionsNodesPrevious"]


class EventGraphLondonMentionsNodesNext(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")


class EventGraphLondonMentionsNodesPrevious(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")


EventGraph.model_rebuild()
EventGraphThread.model_rebuild()
EventGraphThreadNodes.model_rebuild()
EventGraphThreadNodesMentions.model_rebuild()
EventGraphThreadNodesFacts.model_rebuild()
EventGraphThreadNodesFactsObject.model_rebuild()
EventGraphAlice.model_rebuild()
EventGraphAliceMentions.model_rebuild()
EventGraphAcme.model_rebuild()
EventGraphAcmeMentions.model_rebuild()
EventGraphLondon.model_rebuild()
EventGraphLondonMentions.model_rebuild()
EventGraphLondonMentionsNodes.model_rebuild()
