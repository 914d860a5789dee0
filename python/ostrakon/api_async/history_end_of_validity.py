from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import FactStatus


class HistoryEndOfValidity(BaseModel):
    before: "HistoryEndOfValidityBefore"
    after: "HistoryEndOfValidityAfter"


class HistoryEndOfValidityBefore(BaseModel):
    nodes: list["HistoryEndOfValidityBeforeNodes"]


class HistoryEndOfValidityBeforeNodes(BaseModel):
    valid: "HistoryEndOfValidityBeforeNodesValid"
    status: FactStatus


class HistoryEndOfValidityBeforeNodesValid(BaseModel):
    from_: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(alias="from")
    to: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]]


class HistoryEndOfValidityAfter(BaseModel):
    nodes: list["HistoryEndOfValidityAfterNodes"]


class HistoryEndOfValidityAfterNodes(BaseModel):
    valid: "HistoryEndOfValidityAfterNodesValid"
    status: FactStatus
    reason: str


class HistoryEndOfValidityAfterNodesValid(BaseModel):
    from_: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(alias="from")
    to: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]]


HistoryEndOfValidity.model_rebuild()
HistoryEndOfValidityBefore.model_rebuild()
HistoryEndOfValidityBeforeNodes.model_rebuild()
HistoryEndOfValidityAfter.model_rebuild()
HistoryEndOfValidityAfterNodes.model_rebuild()
