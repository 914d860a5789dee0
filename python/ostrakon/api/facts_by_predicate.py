from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import FactStatus


class FactsByPredicate(BaseModel):
    facts: "FactsByPredicateFacts"


class FactsByPredicateFacts(BaseModel):
    basis: "FactsByPredicateFactsBasis"
    page_info: "FactsByPredicateFactsPageInfo" = Field(alias="pageInfo")
    nodes: list["FactsByPredicateFactsNodes"]


class FactsByPredicateFactsBasis(BaseModel):
    seq: int
    valid_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="validAt"
    )


class FactsByPredicateFactsPageInfo(BaseModel):
    has_next_page: bool = Field(alias="hasNextPage")
    end_cursor: Optional[str] = Field(alias="endCursor")


class FactsByPredicateFactsNodes(BaseModel):
    subject: Optional["FactsByPredicateFactsNodesSubject"]
    object_: "FactsByPredicateFactsNodesObject" = Field(alias="object")
    valid: "FactsByPredicateFactsNodesValid"
    status: FactStatus


class FactsByPredicateFactsNodesSubject(BaseModel):
    name: str


class FactsByPredicateFactsNodesObject(BaseModel):
    entity: Optional["FactsByPredicateFactsNodesObjectEntity"]


class FactsByPredicateFactsNodesObjectEntity(BaseModel):
    name: str


class FactsByPredicateFactsNodesValid(BaseModel):
    from_: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(alias="from")
    to: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]]


FactsByPredicate.model_rebuild()
FactsByPredicateFacts.model_rebuild()
FactsByPredicateFactsNodes.model_rebuild()
FactsByPredicateFactsNodesObject.model_rebuild()
