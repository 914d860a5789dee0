from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import FactStatus, ValueType


class Entity(BaseModel):
    entity: Optional["EntityEntity"]


class EntityEntity(BaseModel):
    id: str
    name: str
    kind: Optional[str]
    aliases: list[str]
    facts: list["EntityEntityFacts"]
    basis: "EntityEntityBasis"


class EntityEntityFacts(BaseModel):
    id: str
    predicate: str
    object_: "EntityEntityFactsObject" = Field(alias="object")
    valid: "EntityEntityFactsValid"
    status: FactStatus


class EntityEntityFactsObject(BaseModel):
    type_: ValueType = Field(alias="type")
    entity: Optional["EntityEntityFactsObjectEntity"]
    string: Optional[str]
    integer: Optional[int]
    float_: Optional[float] = Field(alias="float")
    boolean: Optional[bool]


class EntityEntityFactsObjectEntity(BaseModel):
    id: str
    name: str


class EntityEntityFactsValid(BaseModel):
    from_: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(alias="from")
    to: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]]


class EntityEntityBasis(BaseModel):
    seq: int
    valid_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="validAt"
    )


Entity.model_rebuild()
EntityEntity.model_rebuild()
EntityEntityFacts.model_rebuild()
EntityEntityFactsObject.model_rebuild()
