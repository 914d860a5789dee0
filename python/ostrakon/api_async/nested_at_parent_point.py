from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import FactStatus


class NestedAtParentPoint(BaseModel):
    entity: Optional["NestedAtParentPointEntity"]


class NestedAtParentPointEntity(BaseModel):
    facts: list["NestedAtParentPointEntityFacts"]


class NestedAtParentPointEntityFacts(BaseModel):
    object_: "NestedAtParentPointEntityFactsObject" = Field(alias="object")
    basis: "NestedAtParentPointEntityFactsBasis"


class NestedAtParentPointEntityFactsObject(BaseModel):
    entity: Optional["NestedAtParentPointEntityFactsObjectEntity"]


class NestedAtParentPointEntityFactsObjectEntity(BaseModel):
    name: str
    basis: "NestedAtParentPointEntityFactsObjectEntityBasis"
    incoming: list["NestedAtParentPointEntityFactsObjectEntityIncoming"]


class NestedAtParentPointEntityFactsObjectEntityBasis(BaseModel):
    seq: int
    valid_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="validAt"
    )


class NestedAtParentPointEntityFactsObjectEntityIncoming(BaseModel):
    subject: Optional["NestedAtParentPointEntityFactsObjectEntityIncomingSubject"]
    predicate: str
    status: FactStatus


class NestedAtParentPointEntityFactsObjectEntityIncomingSubject(BaseModel):
    name: str


class NestedAtParentPointEntityFactsBasis(BaseModel):
    seq: int
    valid_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="validAt"
    )


NestedAtParentPoint.model_rebuild()
NestedAtParentPointEntity.model_rebuild()
NestedAtParentPointEntityFacts.model_rebuild()
NestedAtParentPointEntityFactsObject.model_rebuild()
NestedAtParentPointEntityFactsObjectEntity.model_rebuild()
NestedAtParentPointEntityFactsObjectEntityIncoming.model_rebuild()
