from typing import Optional

from pydantic import Field

from .base_model import BaseModel
from .enums import Cardinality, ValueType


class MutationDefineAndConfigure(BaseModel):
    define_predicate: "MutationDefineAndConfigureDefinePredicate" = Field(
        alias="definePredicate"
    )
    configure_namespace: "MutationDefineAndConfigureConfigureNamespace" = Field(
        alias="configureNamespace"
    )


class MutationDefineAndConfigureDefinePredicate(BaseModel):
    seq: int
    predicate: "MutationDefineAndConfigureDefinePredicatePredicate"


class MutationDefineAndConfigureDefinePredicatePredicate(BaseModel):
    name: str
    cardinality: Cardinality
    value_type: ValueType = Field(alias="valueType")
    description: Optional[str]


class MutationDefineAndConfigureConfigureNamespace(BaseModel):
    name: str
    time_zone: str = Field(alias="timeZone")


MutationDefineAndConfigure.model_rebuild()
MutationDefineAndConfigureDefinePredicate.model_rebuild()
