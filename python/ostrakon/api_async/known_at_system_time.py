from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import FactStatus


class KnownAtSystemTime(BaseModel):
    history: "KnownAtSystemTimeHistory"


class KnownAtSystemTimeHistory(BaseModel):
    basis: "KnownAtSystemTimeHistoryBasis"
    nodes: list["KnownAtSystemTimeHistoryNodes"]


class KnownAtSystemTimeHistoryBasis(BaseModel):
    seq: int
    system_time: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]] = Field(
        alias="systemTime"
    )


class KnownAtSystemTimeHistoryNodes(BaseModel):
    object_: "KnownAtSystemTimeHistoryNodesObject" = Field(alias="object")
    status: FactStatus


class KnownAtSystemTimeHistoryNodesObject(BaseModel):
    entity: Optional["KnownAtSystemTimeHistoryNodesObjectEntity"]


class KnownAtSystemTimeHistoryNodesObjectEntity(BaseModel):
    name: str


KnownAtSystemTime.model_rebuild()
KnownAtSystemTimeHistory.model_rebuild()
KnownAtSystemTimeHistoryNodes.model_rebuild()
KnownAtSystemTimeHistoryNodesObject.model_rebuild()
