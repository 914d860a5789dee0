from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import FactStatus


class MutationEndAndRetract(BaseModel):
    end: "MutationEndAndRetractEnd"
    retract: "MutationEndAndRetractRetract"


class MutationEndAndRetractEnd(BaseModel):
    seq: int
    facts: list["MutationEndAndRetractEndFacts"]


class MutationEndAndRetractEndFacts(BaseModel):
    id: str
    valid: "MutationEndAndRetractEndFactsValid"
    status: FactStatus
    reason: str


class MutationEndAndRetractEndFactsValid(BaseModel):
    from_: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(alias="from")
    to: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]]


class MutationEndAndRetractRetract(BaseModel):
    seq: int
    facts: list["MutationEndAndRetractRetractFacts"]


class MutationEndAndRetractRetractFacts(BaseModel):
    id: str
    status: FactStatus
    reason: str
    retracted_seq: Optional[int] = Field(alias="retractedSeq")


MutationEndAndRetract.model_rebuild()
MutationEndAndRetractEnd.model_rebuild()
MutationEndAndRetractEndFacts.model_rebuild()
MutationEndAndRetractRetract.model_rebuild()
