from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import FactStatus


class FactsByObjectAll(BaseModel):
    facts: "FactsByObjectAllFacts"


class FactsByObjectAllFacts(BaseModel):
    nodes: list["FactsByObjectAllFactsNodes"]


class FactsByObjectAllFactsNodes(BaseModel):
    id: str
    subject: Optional["FactsByObjectAllFactsNodesSubject"]
    predicate: str
    status: FactStatus
    reason: str
    retracted_seq: Optional[int] = Field(alias="retractedSeq")
    effective: list["FactsByObjectAllFactsNodesEffective"]


class FactsByObjectAllFactsNodesSubject(BaseModel):
    name: str


class FactsByObjectAllFactsNodesEffective(BaseModel):
    from_: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(alias="from")
    to: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]]


FactsByObjectAll.model_rebuild()
FactsByObjectAllFacts.model_rebuild()
FactsByObjectAllFactsNodes.model_rebuild()
