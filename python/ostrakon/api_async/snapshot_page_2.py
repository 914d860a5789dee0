from typing import Optional

from pydantic import Field

from .base_model import BaseModel


class SnapshotPage2(BaseModel):
    snapshot: "SnapshotPage2Snapshot"


class SnapshotPage2Snapshot(BaseModel):
    page_info: "SnapshotPage2SnapshotPageInfo" = Field(alias="pageInfo")
    edges: list["SnapshotPage2SnapshotEdges"]


class SnapshotPage2SnapshotPageInfo(BaseModel):
    has_next_page: bool = Field(alias="hasNextPage")
    has_previous_page: bool = Field(alias="hasPreviousPage")
    end_cursor: Optional[str] = Field(alias="endCursor")


class SnapshotPage2SnapshotEdges(BaseModel):
    cursor: str
    node: "SnapshotPage2SnapshotEdgesNode"


class SnapshotPage2SnapshotEdgesNode(BaseModel):
    subject: Optional["SnapshotPage2SnapshotEdgesNodeSubject"]
    predicate: str
    object_: "SnapshotPage2SnapshotEdgesNodeObject" = Field(alias="object")


class SnapshotPage2SnapshotEdgesNodeSubject(BaseModel):
    name: str


class SnapshotPage2SnapshotEdgesNodeObject(BaseModel):
    entity: Optional["SnapshotPage2SnapshotEdgesNodeObjectEntity"]


class SnapshotPage2SnapshotEdgesNodeObjectEntity(BaseModel):
    name: str


SnapshotPage2.model_rebuild()
SnapshotPage2Snapshot.model_rebuild()
SnapshotPage2SnapshotEdges.model_rebuild()
SnapshotPage2SnapshotEdgesNode.model_rebuild()
SnapshotPage2SnapshotEdgesNodeObject.model_rebuild()
