from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import RecordKind


class MemoryRecall(BaseModel):
    recall: "MemoryRecallRecall"


class MemoryRecallRecall(BaseModel):
    seq: int
    at: Annotated[DateTime, BeforeValidator(parse_datetime)]
    records: list["MemoryRecallRecallRecords"]


class MemoryRecallRecallRecords(BaseModel):
    kind: RecordKind
    retention: float
    fact: Optional["MemoryRecallRecallRecordsFact"]
    episode: Optional["MemoryRecallRecallRecordsEpisode"]


class MemoryRecallRecallRecordsFact(BaseModel):
    id: str
    strength: float
    recall_count: int = Field(alias="recallCount")
    last_recalled_at: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]] = (
        Field(alias="lastRecalledAt")
    )
    recalled_at: list[Annotated[DateTime, BeforeValidator(parse_datetime)]] = Field(
        alias="recalledAt"
    )
    retention: float


class MemoryRecallRecallRecordsEpisode(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")
    strength: float
    recall_count: int = Field(alias="recallCount")


MemoryRecall.model_rebuild()
MemoryRecallRecall.model_rebuild()
MemoryRecallRecallRecords.model_rebuild()
