from typing import Optional

from pydantic import Field

from .base_model import BaseModel
from .enums import Cardinality, ValueType


class Namespace(BaseModel):
    namespace: "NamespaceNamespace"


class NamespaceNamespace(BaseModel):
    name: str
    time_zone: str = Field(alias="timeZone")
    predicates: list["NamespaceNamespacePredicates"]
    counts: "NamespaceNamespaceCounts"


class NamespaceNamespacePredicates(BaseModel):
    name: str
    cardinality: Cardinality
    value_type: ValueType = Field(alias="valueType")
    description: Optional[str]


class NamespaceNamespaceCounts(BaseModel):
    batches: int
    episodes: int
    entities: int
    facts: int
    predicates: int


Namespace.model_rebuild()
NamespaceNamespace.model_rebuild()
