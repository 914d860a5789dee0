from typing import Optional

from pydantic import Field

from .base_model import BaseModel
from .enums import Cardinality, ValueType


class DefinePredicate(BaseModel):
    define_predicate: "DefinePredicateDefinePredicate" = Field(alias="definePredicate")


class DefinePredicateDefinePredicate(BaseModel):
    seq: int
    predicate: "DefinePredicateDefinePredicatePredicate"


class DefinePredicateDefinePredicatePredicate(BaseModel):
    name: str
    cardinality: Cardinality
    value_type: ValueType = Field(alias="valueType")
    description: Optional[str]


DefinePredicate.model_rebuild()
DefinePredicateDefinePredicate.model_rebuild()
