from typing import Optional

from pydantic import Field

from .base_model import BaseModel
from .enums import SegmentEndKind


class MutationSegmentation(BaseModel):
    configure_namespace: "MutationSegmentationConfigureNamespace" = Field(
        alias="configureNamespace"
    )
    first: "MutationSegmentationFirst"
    again: "MutationSegmentationAgain"
    bad: "MutationSegmentationBad"


class MutationSegmentationConfigureNamespace(BaseModel):
    segmentation: "MutationSegmentationConfigureNamespaceSegmentation"


class MutationSegmentationConfigureNamespaceSegmentation(BaseModel):
    threshold: float
    hysteresis: float
    max_gap_seconds: int = Field(alias="maxGapSeconds")
    min_length: int = Field(alias="minLength")


class MutationSegmentationFirst(BaseModel):
    seq: Optional[int]
    closed: list["MutationSegmentationFirstClosed"]


class MutationSegmentationFirstClosed(BaseModel):
    thread: str
    end: SegmentEndKind
    distance: Optional[float]
    episodes: list["MutationSegmentationFirstClosedEpisodes"]


class MutationSegmentationFirstClosedEpisodes(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")


class MutationSegmentationAgain(BaseModel):
    seq: Optional[int]
    closed: list["MutationSegmentationAgainClosed"]


class MutationSegmentationAgainClosed(BaseModel):
    thread: str


class MutationSegmentationBad(BaseModel):
    segmentation: "MutationSegmentationBadSegmentation"


class MutationSegmentationBadSegmentation(BaseModel):
    threshold: float


MutationSegmentation.model_rebuild()
MutationSegmentationConfigureNamespace.model_rebuild()
MutationSegmentationFirst.model_rebuild()
MutationSegmentationFirstClosed.model_rebuild()
MutationSegmentationAgain.model_rebuild()
MutationSegmentationBad.model_rebuild()
