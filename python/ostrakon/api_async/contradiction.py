from typing import Optional

from pydantic import Field

from .base_model import BaseModel
from .enums import FactStatus


class Contradiction(BaseModel):
    history: "ContradictionHistory"


class ContradictionHistory(BaseModel):
    nodes: list["ContradictionHistoryNodes"]


class ContradictionHistoryNodes(BaseModel):
    object_: "ContradictionHistoryNodesObject" = Field(alias="object")
    confidence: float
    status: FactStatus
    reason: str
    contradicts: list["ContradictionHistoryNodesContradicts"]


class ContradictionHistoryNodesObject(BaseModel):
    entity: Optional["ContradictionHistoryNodesObjectEntity"]


class ContradictionHistoryNodesObjectEntity(BaseModel):
    name: str


class ContradictionHistoryNodesContradicts(BaseModel):
    object_: "ContradictionHistoryNodesContradictsObject" = Field(alias="object")


class ContradictionHistoryNodesContradictsObject(BaseModel):
    entity: Optional["ContradictionHistoryNodesContradictsObjectEntity"]


class ContradictionHistoryNodesContradictsObjectEntity(BaseModel):
    name: str


Contradiction.model_rebuild()
ContradictionHistory.model_rebuild()
ContradictionHistoryNodes.model_rebuild()
ContradictionHistoryNodesObject.model_rebuild()
ContradictionHistoryNodesContradicts.model_rebuild()
ContradictionHistoryNodesContradictsObject.model_rebuild()
