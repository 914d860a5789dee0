from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import RecordKind


class MemoryRecallable(BaseModel):
    recallable: "MemoryRecallableRecallable"


class MemoryRecallableRecallable(BaseModel):
    basis: "MemoryRecallableRecallableBasis"
    items: list["MemoryRecallableRecallableItems"]


class MemoryRecallableRecallableBasis(BaseModel):
    valid_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="validAt"
    )
    at: Annotated[DateTime, BeforeValidator(parse_datetime)]


class MemoryRecallableRecallableItems(BaseModel):
    kind: RecordKind
    retention: float
    fact: Optional["MemoryRecallableRecallableItemsFact"]
    entity: Optional["MemoryRecallableRecallableItemsEntity"]
    episode: Optional["MemoryRecallableRecallableItemsEpisode"]


class MemoryRecallableRecallableItemsFact(BaseModel):
    subject: Optional["MemoryRecallableRecallableItemsFactSubject"]
    predicate: str


class MemoryRecallableRecallableItemsFactSubject(BaseModel):
    name: str


class MemoryRecallableRecallableItemsEntity(BaseModel):
    name: str


class MemoryRecallableRecallableItemsEpisode(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")


MemoryRecallable.model_rebuild()
MemoryRecallableRecallable.model_rebuild()
MemoryRecallableRecallableItems.model_rebuild()
MemoryRecallableRecallableItemsFact.model_rebuild()
