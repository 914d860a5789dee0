from typing import Optional

from pydantic import Field

from .base_model import BaseModel


class EraseEpisodesFacts(BaseModel):
    facts: "EraseEpisodesFactsFacts"


class EraseEpisodesFactsFacts(BaseModel):
    edges: list["EraseEpisodesFactsFactsEdges"]


class EraseEpisodesFactsFactsEdges(BaseModel):
    node: "EraseEpisodesFactsFactsEdgesNode"


class EraseEpisodesFactsFactsEdgesNode(BaseModel):
    subject: Optional["EraseEpisodesFactsFactsEdgesNodeSubject"]
    object_: "EraseEpisodesFactsFactsEdgesNodeObject" = Field(alias="object")
    provenance: list["EraseEpisodesFactsFactsEdgesNodeProvenance"]
    erased_provenance: list["EraseEpisodesFactsFactsEdgesNodeErasedProvenance"] = Field(
        alias="erasedProvenance"
    )


class EraseEpisodesFactsFactsEdgesNodeSubject(BaseModel):
    name: str


class EraseEpisodesFactsFactsEdgesNodeObject(BaseModel):
    entity: Optional["EraseEpisodesFactsFactsEdgesNodeObjectEntity"]


class EraseEpisodesFactsFactsEdgesNodeObjectEntity(BaseModel):
    name: str


class EraseEpisodesFactsFactsEdgesNodeProvenance(BaseModel):
    text: str


class EraseEpisodesFactsFactsEdgesNodeErasedProvenance(BaseModel):
    kind: str
    id: str
    record_seq: Optional[int] = Field(alias="recordSeq")
    erased_in_seq: int = Field(alias="erasedInSeq")


EraseEpisodesFacts.model_rebuild()
EraseEpisodesFactsFacts.model_rebuild()
EraseEpisodesFactsFactsEdges.model_rebuild()
EraseEpisodesFactsFactsEdgesNode.model_rebuild()
EraseEpisodesFactsFactsEdgesNodeObject.model_rebuild()
