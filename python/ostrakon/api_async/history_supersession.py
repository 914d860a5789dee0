from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import FactStatus


class HistorySupersession(BaseModel):
    history: "HistorySupersessionHistory"


class HistorySupersessionHistory(BaseModel):
    nodes: list["HistorySupersessionHistoryNodes"]


class HistorySupersessionHistoryNodes(BaseModel):
    id: str
    object_: "HistorySupersessionHistoryNodesObject" = Field(alias="object")
    status: FactStatus
    reason: str
    valid: "HistorySupersessionHistoryNodesValid"
    effective: list["HistorySupersessionHistoryNodesEffective"]
    superseded_by: Optional["HistorySupersessionHistoryNodesSupersededBy"] = Field(
        alias="supersededBy"
    )
    provenance: list["HistorySupersessionHistoryNodesProvenance"]
    confidence: float
    corroborations: int
    asserted_seq: int = Field(alias="assertedSeq")


class HistorySupersessionHistoryNodesObject(BaseModel):
    entity: Optional["HistorySupersessionHistoryNodesObjectEntity"]


class HistorySupersessionHistoryNodesObjectEntity(BaseModel):
    name: str


class HistorySupersessionHistoryNodesValid(BaseModel):
    from_: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(alias="from")
    to: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]]


class HistorySupersessionHistoryNodesEffective(BaseModel):
    from_: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(alias="from")
    to: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]]


class HistorySupersessionHistoryNodesSupersededBy(BaseModel):
    id: str
    object_: "HistorySupersessionHistoryNodesSupersededByObject" = Field(alias="object")


class HistorySupersessionHistoryNodesSupersededByObject(BaseModel):
    entity: Optional["HistorySupersessionHistoryNodesSupersededByObjectEntity"]


class HistorySupersessionHistoryNodesSupersededByObjectEntity(BaseModel):
    name: str


class HistorySupersessionHistoryNodesProvenance(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")
    text: str
    occurred_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="occurredAt"
    )
    thread: Optional[str]


HistorySupersession.model_rebuild()
HistorySupersessionHistory.model_rebuild()
HistorySupersessionHistoryNodes.model_rebuild()
HistorySupersessionHistoryNodesObject.model_rebuild()
HistorySupersessionHistoryNodesSupersededBy.model_rebuild()
HistorySupersessionHistoryNodesSupersededByObject.model_rebuild()
