from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel


class Neighbors(BaseModel):
    neighbors: "NeighborsNeighbors"


class NeighborsNeighbors(BaseModel):
    basis: "NeighborsNeighborsBasis"
    nodes: list["NeighborsNeighborsNodes"]
    edges: list["NeighborsNeighborsEdges"]


class NeighborsNeighborsBasis(BaseModel):
    seq: int
    valid_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="validAt"
    )


class NeighborsNeighborsNodes(BaseModel):
    entity: "NeighborsNeighborsNodesEntity"
    distance: int


class NeighborsNeighborsNodesEntity(BaseModel):
    name: str


class NeighborsNeighborsEdges(BaseModel):
    subject: Optional["NeighborsNeighborsEdgesSubject"]
    predicate: str
    object_: "NeighborsNeighborsEdgesObject" = Field(alias="object")


class NeighborsNeighborsEdgesSubject(BaseModel):
    name: str


class NeighborsNeighborsEdgesObject(BaseModel):
    entity: Optional["NeighborsNeighborsEdgesObjectEntity"]


class NeighborsNeighborsEdgesObjectEntity(BaseModel):
    name: str


Neighbors.model_rebuild()
NeighborsNeighbors.model_rebuild()
NeighborsNeighborsNodes.model_rebuild()
NeighborsNeighborsEdges.model_rebuild()
NeighborsNeighborsEdgesObject.model_rebuild()
