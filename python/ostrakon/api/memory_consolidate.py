from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import RecordKind


class MemoryConsolidate(BaseModel):
    consolidate: "MemoryConsolidateConsolidate"


class MemoryConsolidateConsolidate(BaseModel):
    seq: Optional[int]
    merged: list["MemoryConsolidateConsolidateMerged"]
    corroborated: list["MemoryConsolidateConsolidateCorroborated"]
    dormant: list["MemoryConsolidateConsolidateDormant"]


class MemoryConsolidateConsolidateMerged(BaseModel):
    from_: "MemoryConsolidateConsolidateMergedFrom" = Field(alias="from")
    into: "MemoryConsolidateConsolidateMergedInto"


class MemoryConsolidateConsolidateMergedFrom(BaseModel):
    name: str


class MemoryConsolidateConsolidateMergedInto(BaseModel):
    name: str


class MemoryConsolidateConsolidateCorroborated(BaseModel):
    statements: int


class MemoryConsolidateConsolidateDormant(BaseModel):
    kind: RecordKind
    dormant_at: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]] = Field(
        alias="dormantAt"
    )
    fact: Optional["MemoryConsolidateConsolidateDormantFact"]
    entity: Optional["MemoryConsolidateConsolidateDormantEntity"]


class MemoryConsolidateConsolidateDormantFact(BaseModel):
    predicate: str


class MemoryConsolidateConsolidateDormantEntity(BaseModel):
    name: str


MemoryConsolidate.model_rebuild()
MemoryConsolidateConsolidate.model_rebuild()
MemoryConsolidateConsolidateMerged.model_rebuild()
MemoryConsolidateConsolidateDormant.model_rebuild()
