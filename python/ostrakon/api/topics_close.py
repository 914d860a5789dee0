from pydantic import Field

from .base_model import BaseModel


class TopicsClose(BaseModel):
    close_segments: "TopicsCloseCloseSegments" = Field(alias="closeSegments")


class TopicsCloseCloseSegments(BaseModel):
    closed: list["TopicsCloseCloseSegmentsClosed"]


class TopicsCloseCloseSegmentsClosed(BaseModel):
    thread: str


TopicsClose.model_rebuild()
TopicsCloseCloseSegments.model_rebuild()
