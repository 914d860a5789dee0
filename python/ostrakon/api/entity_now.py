from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import FactStatus, ValueType


class EntityNow(BaseModel):
    entity: Optional["EntityNowEntity"]


class EntityNowEntity(BaseModel):
    id: str
    name: str
    kind: Optional[str]
    aliases: list[str]
    facts: list["EntityNowEntityFacts"]
    basis: "EntityNowEntityBasis"


class EntityNowEntityFacts(BaseModel):
    id: str
    predicate: str
    object_: "EntityNowEntityFactsObject" = Field(alias="object")
    valid: "EntityNowEntityFactsValid"
    status: FactStatus
    reason: str


class EntityNowEntityFactsObject(BaseModel):
    type_: ValueType = Field(alias="type")
    entity: Optional["EntityNowEntityFactsObjectEntity"]
    integer: Optional[int]


class EntityNowEntityFactsObjectEntity(BaseModel):
    name: str


class EntityNowEntityFactsValid(BaseModel):
    from_: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(alias="from")
    to: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]]


class EntityNowEntityBasis(BaseModel):
    seq: int
    system_time: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]] = Field(
        alias="systemTime"
    )
    valid_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="validAt"
    )
    clock: Annotated[DateTime, BeforeValidator(parse_datetime)]


EntityNow.model_rebuild()
EntityNowEntity.model_rebuild()
EntityNowEntityFacts.model_rebuild()
EntityNowEntityFactsObject.model_rebuild()
