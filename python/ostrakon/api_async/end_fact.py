from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import FactStatus


class EndFact(BaseModel):
    end_fact: "EndFactEndFact" = Field(alias="endFact")


class EndFactEndFact(BaseModel):
    seq: int
    facts: list["EndFactEndFactFacts"]


class EndFactEndFactFacts(BaseModel):
    id: str
    valid: "EndFactEndFactFactsValid"
    status: FactStatus
    reason: str


class EndFactEndFactFactsValid(BaseModel):
    from_: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(alias="from")
    to: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]]


EndFact.model_rebuild()
EndFactEndFact.model_rebuild()
EndFactEndFactFacts.model_rebuild()
