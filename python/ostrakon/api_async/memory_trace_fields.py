from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel


class MemoryTraceFields(BaseModel):
    entity: Optional["MemoryTraceFieldsEntity"]


class MemoryTraceFieldsEntity(BaseModel):
    basis: "MemoryTraceFieldsEntityBasis"
    facts: list["MemoryTraceFieldsEntityFacts"]


class MemoryTraceFieldsEntityBasis(BaseModel):
    valid_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="validAt"
    )
    at: Annotated[DateTime, BeforeValidator(parse_datetime)]


class MemoryTraceFieldsEntityFacts(BaseModel):
    predicate: str
    object_: "MemoryTraceFieldsEntityFactsObject" = Field(alias="object")
    strength: float
    retention: float
    half_life: Optional[float] = Field(alias="halfLife")
    recall_count: int = Field(alias="recallCount")
    last_recalled_at: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]] = (
        Field(alias="lastRecalledAt")
    )
    dormant: bool
    later_retention: float = Field(alias="laterRetention")
    provenance: list["MemoryTraceFieldsEntityFactsProvenance"]


class MemoryTraceFieldsEntityFactsObject(BaseModel):
    entity: Optional["MemoryTraceFieldsEntityFactsObjectEntity"]


class MemoryTraceFieldsEntityFactsObjectEntity(BaseModel):
    name: str


class MemoryTraceFieldsEntityFactsProvenance(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")
    strength: float
    retention: float
    dormant: bool


MemoryTraceFields.model_rebuild()
MemoryTraceFieldsEntity.model_rebuild()
MemoryTraceFieldsEntityFacts.model_rebuild()
MemoryTraceFieldsEntityFactsObject.model_rebuild()
