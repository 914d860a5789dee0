from typing import Optional

from pydantic import Field

from .base_model import BaseModel
from .enums import FactStatus


class RetractFact(BaseModel):
    retract_fact: "RetractFactRetractFact" = Field(alias="retractFact")


class RetractFactRetractFact(BaseModel):
    seq: int
    facts: list["RetractFactRetractFactFacts"]


class RetractFactRetractFactFacts(BaseModel):
    id: str
    status: FactStatus
    reason: str
    retracted_seq: Optional[int] = Field(alias="retractedSeq")


RetractFact.model_rebuild()
RetractFactRetractFact.model_rebuild()
