from typing import Optional

from pydantic import Field

from .base_model import BaseModel
from .enums import FactStatus


class HistoryCorrection(BaseModel):
    history: "HistoryCorrectionHistory"


class HistoryCorrectionHistory(BaseModel):
    nodes: list["HistoryCorrectionHistoryNodes"]


class HistoryCorrectionHistoryNodes(BaseModel):
    id: str
    object_: "HistoryCorrectionHistoryNodesObject" = Field(alias="object")
    status: FactStatus
    reason: str
    retracted_seq: Optional[int] = Field(alias="retractedSeq")
    superseded_by: Optional["HistoryCorrectionHistoryNodesSupersededBy"] = Field(
        alias="supersededBy"
    )


class HistoryCorrectionHistoryNodesObject(BaseModel):
    entity: Optional["HistoryCorrectionHistoryNodesObjectEntity"]


class HistoryCorrectionHistoryNodesObjectEntity(BaseModel):
    name: str


class HistoryCorrectionHistoryNodesSupersededBy(BaseModel):
    id: str


HistoryCorrection.model_rebuild()
HistoryCorrectionHistory.model_rebuild()
HistoryCorrectionHistoryNodes.model_rebuild()
HistoryCorrectionHistoryNodesObject.model_rebuild()
