from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import FactStatus


class EntityAsOfSystemTime(BaseModel):
    entity: Optional["EntityAsOfSystemTimeEntity"]


class EntityAsOfSystemTimeEntity(BaseModel):
    facts: list["EntityAsOfSystemTimeEntityFacts"]
    basis: "EntityAsOfSystemTimeEntityBasis"


class EntityAsOfSystemTimeEntityFacts(BaseModel):
    predicate: str
    object_: "EntityAsOfSystemTimeEntityFactsObject" = Field(alias="object")
    status: FactStatus


class EntityAsOfSystemTimeEntityFactsObject(BaseModel):
    entity: Optional["EntityAsOfSystemTimeEntityFactsObjectEntity"]


class EntityAsOfSystemTimeEntityFactsObjectEntity(BaseModel):
    name: str


class EntityAsOfSystemTimeEntityBasis(BaseModel):
    seq: int
    system_time: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]] = Field(
        alias="systemTime"
    )
    valid_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="validAt"
    )


EntityAsOfSystemTime.model_rebuild()
EntityAsOfSystemTimeEntity.model_rebuild()
EntityAsOfSystemTimeEntityFacts.model_rebuild()
EntityAsOfSystemTimeEntityFactsObject.model_rebuild()
