from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import FactStatus


class EntityAsOfValidTime(BaseModel):
    entity: Optional["EntityAsOfValidTimeEntity"]


class EntityAsOfValidTimeEntity(BaseModel):
    name: str
    facts: list["EntityAsOfValidTimeEntityFacts"]
    basis: "EntityAsOfValidTimeEntityBasis"


class EntityAsOfValidTimeEntityFacts(BaseModel):
    predicate: str
    object_: "EntityAsOfValidTimeEntityFactsObject" = Field(alias="object")
    status: FactStatus


class EntityAsOfValidTimeEntityFactsObject(BaseModel):
    entity: Optional["EntityAsOfValidTimeEntityFactsObjectEntity"]


class EntityAsOfValidTimeEntityFactsObjectEntity(BaseModel):
    name: str


class EntityAsOfValidTimeEntityBasis(BaseModel):
    seq: int
    valid_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="validAt"
    )


EntityAsOfValidTime.model_rebuild()
EntityAsOfValidTimeEntity.model_rebuild()
EntityAsOfValidTimeEntityFacts.model_rebuild()
EntityAsOfValidTimeEntityFactsObject.model_rebuild()
