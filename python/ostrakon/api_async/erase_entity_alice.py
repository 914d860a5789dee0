from typing import Optional

from pydantic import Field

from .base_model import BaseModel


class EraseEntityAlice(BaseModel):
    facts: "EraseEntityAliceFacts"
    entities: "EraseEntityAliceEntities"
    erasures: list["EraseEntityAliceErasures"]


class EraseEntityAliceFacts(BaseModel):
    edges: list["EraseEntityAliceFactsEdges"]


class EraseEntityAliceFactsEdges(BaseModel):
    node: "EraseEntityAliceFactsEdgesNode"


class EraseEntityAliceFactsEdgesNode(BaseModel):
    predicate: str
    object_: "EraseEntityAliceFactsEdgesNodeObject" = Field(alias="object")


class EraseEntityAliceFactsEdgesNodeObject(BaseModel):
    entity: Optional["EraseEntityAliceFactsEdgesNodeObjectEntity"]


class EraseEntityAliceFactsEdgesNodeObjectEntity(BaseModel):
    name: str


class EraseEntityAliceEntities(BaseModel):
    edges: list["EraseEntityAliceEntitiesEdges"]


class EraseEntityAliceEntitiesEdges(BaseModel):
    node: "EraseEntityAliceEntitiesEdgesNode"


class EraseEntityAliceEntitiesEdgesNode(BaseModel):
    name: str


class EraseEntityAliceErasures(BaseModel):
    reason: Optional[str]
    by: Optional[str]
    records: list["EraseEntityAliceErasuresRecords"]


class EraseEntityAliceErasuresRecords(BaseModel):
    kind: str
    id: str


EraseEntityAlice.model_rebuild()
EraseEntityAliceFacts.model_rebuild()
EraseEntityAliceFactsEdges.model_rebuild()
EraseEntityAliceFactsEdgesNode.model_rebuild()
EraseEntityAliceFactsEdgesNodeObject.model_rebuild()
EraseEntityAliceEntities.model_rebuild()
EraseEntityAliceEntitiesEdges.model_rebuild()
EraseEntityAliceErasures.model_rebuild()
