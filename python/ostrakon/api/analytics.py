from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel


class Analytics(BaseModel):
    timeline: "AnalyticsTimeline"
    durations: "AnalyticsDurations"
    paris: "AnalyticsParis"
    cities: "AnalyticsCities"
    changes: "AnalyticsChanges"
    overlaps: "AnalyticsOverlaps"
    aggregate: "AnalyticsAggregate"


class AnalyticsTimeline(BaseModel):
    entity: Optional["AnalyticsTimelineEntity"]
    lanes: list["AnalyticsTimelineLanes"]


class AnalyticsTimelineEntity(BaseModel):
    name: str


class AnalyticsTimelineLanes(BaseModel):
    predicate: str
    held: list["AnalyticsTimelineLanesHeld"]


class AnalyticsTimelineLanesHeld(BaseModel):
    value: "AnalyticsTimelineLanesHeldValue"
    valid: "AnalyticsTimelineLanesHeldValid"
    fact_ids: list[str] = Field(alias="factIds")


class AnalyticsTimelineLanesHeldValue(BaseModel):
    entity: Optional["AnalyticsTimelineLanesHeldValueEntity"]


class AnalyticsTimelineLanesHeldValueEntity(BaseModel):
    name: str


class AnalyticsTimelineLanesHeldValid(BaseModel):
    from_: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(alias="from")
    to: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]]


class AnalyticsDurations(BaseModel):
    from_: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]] = Field(
        alias="from"
    )
    to: Annotated[DateTime, BeforeValidator(parse_datetime)]
    values: list["AnalyticsDurationsValues"]


class AnalyticsDurationsValues(BaseModel):
    value: "AnalyticsDurationsValuesValue"
    seconds: float
    stretches: int
    at_end: bool = Field(alias="atEnd")


class AnalyticsDurationsValuesValue(BaseModel):
    entity: Optional["AnalyticsDurationsValuesValueEntity"]


class AnalyticsDurationsValuesValueEntity(BaseModel):
    name: str


class AnalyticsParis(BaseModel):
    points: list[Annotated[DateTime, BeforeValidator(parse_datetime)]]
    groups: list["AnalyticsParisGroups"]


class AnalyticsParisGroups(BaseModel):
    counts: list[int]


class AnalyticsCities(BaseModel):
    points: list[Annotated[DateTime, BeforeValidator(parse_datetime)]]
    groups: list["AnalyticsCitiesGroups"]


class AnalyticsCitiesGroups(BaseModel):
    value: Optional["AnalyticsCitiesGroupsValue"]
    counts: list[int]


class AnalyticsCitiesGroupsValue(BaseModel):
    entity: Optional["AnalyticsCitiesGroupsValueEntity"]


class AnalyticsCitiesGroupsValueEntity(BaseModel):
    name: str


class AnalyticsChanges(BaseModel):
    points: list[Annotated[DateTime, BeforeValidator(parse_datetime)]]
    counts: list[int]
    top: list["AnalyticsChangesTop"]


class AnalyticsChangesTop(BaseModel):
    entity: Optional["AnalyticsChangesTopEntity"]
    changes: int


class AnalyticsChangesTopEntity(BaseModel):
    name: str


class AnalyticsOverlaps(BaseModel):
    truncated: bool
    pairs: list["AnalyticsOverlapsPairs"]


class AnalyticsOverlapsPairs(BaseModel):
    a: "AnalyticsOverlapsPairsA"
    b: "AnalyticsOverlapsPairsB"


class AnalyticsOverlapsPairsA(BaseModel):
    subject: Optional["AnalyticsOverlapsPairsASubject"]
    valid: "AnalyticsOverlapsPairsAValid"


class AnalyticsOverlapsPairsASubject(BaseModel):
    name: str


class AnalyticsOverlapsPairsAValid(BaseModel):
    from_: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(alias="from")
    to: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]]


class AnalyticsOverlapsPairsB(BaseModel):
    valid: "AnalyticsOverlapsPairsBValid"


class AnalyticsOverlapsPairsBValid(BaseModel):
    from_: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(alias="from")
    to: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]]


class AnalyticsAggregate(BaseModel):
    groups: list["AnalyticsAggregateGroups"]


class AnalyticsAggregateGroups(BaseModel):
    predicate: Optional[str]
    count: int


Analytics.model_rebuild()
AnalyticsTimeline.model_rebuild()
AnalyticsTimelineLanes.model_rebuild()
AnalyticsTimelineLanesHeld.model_rebuild()
AnalyticsTimelineLanesHeldValue.model_rebuild()
AnalyticsDurations.model_rebuild()
AnalyticsDurationsValues.model_rebuild()
AnalyticsDurationsValuesValue.model_rebuild()
AnalyticsParis.model_rebuild()
AnalyticsCities.model_rebuild()
AnalyticsCitiesGroups.model_rebuild()
AnalyticsCitiesGroupsValue.model_rebuild()
AnalyticsChanges.model_rebuild()
AnalyticsChangesTop.model_rebuild()
AnalyticsOverlaps.model_rebuild()
AnalyticsOverlapsPairs.model_rebuild()
AnalyticsOverlapsPairsA.model_rebuild()
AnalyticsOverlapsPairsB.model_rebuild()
AnalyticsAggregate.model_rebuild()
