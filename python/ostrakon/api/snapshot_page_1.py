from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel


class SnapshotPage1(BaseModel):
    snapshot: "SnapshotPage1Snapshot"


class SnapshotPage1Snapshot(BaseModel):
    basis: "SnapshotPage1SnapshotBasis"
    page_info: "SnapshotPage1SnapshotPageInfo" = Field(alias="pageInfo")
    edges: list["SnapshotPage1SnapshotEdges"]


class SnapshotPage1SnapshotBasis(BaseModel):
    seq: int
    valid_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="validAt"
    )


class SnapshotPage1SnapshotPageInfo(BaseModel):
    has_next_page: bool = Field(alias="hasNextPage")
    has_previous_page: bool = Field(alias="hasPreviousPage")
    end_cursor: Optional[str] = Field(alias="endCursor")


class SnapshotPage1SnapshotEdges(BaseModel):
    cursor: str
    node: "SnapshotPage1SnapshotEdgesNode"


class SnapshotPage1SnapshotEdgesNode(BaseModel):
    subject: Optional["SnapshotPage1SnapshotEdgesNodeSubject"]
    predicate: str
    object_: "SnapshotPage1SnapshotEdgesNodeObject" = Field(alias="object")


class SnapshotPage1SnapshotEdgesNodeSubject(BaseModel):
    name: str


class SnapshotPage1SnapshotEdgesNodeObject(BaseModel):
    entity: Optional["SnapshotPage1SnapshotEdgesNodeObjectEntity"]


class SnapshotPage1SnapshotEdgesNodeObjectEntity(BaseModel):
    name: str


SnapshotPage1.model_rebuild()
SnapshotPage1Snapshot.model_rebuild()
SnapshotPage1SnapshotEdges.model_rebuild()
SnapshotPage1SnapshotEdgesNode.model_rebuild()
SnapshotPage1SnapshotEdgesNodeObject.model_rebuild()
