from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import RecordKind


class MemoryForecast(BaseModel):
    forecast: "MemoryForecastForecast"


class MemoryForecastForecast(BaseModel):
    items: list["MemoryForecastForecastItems"]


class MemoryForecastForecastItems(BaseModel):
    kind: RecordKind
    dormant_at: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]] = Field(
        alias="dormantAt"
    )
    retention: float
    episode: Optional["MemoryForecastForecastItemsEpisode"]
    fact: Optional["MemoryForecastForecastItemsFact"]


class MemoryForecastForecastItemsEpisode(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")


class MemoryForecastForecastItemsFact(BaseModel):
    predicate: str
    object_: "MemoryForecastForecastItemsFactObject" = Field(alias="object")


class MemoryForecastForecastItemsFactObject(BaseModel):
    entity: Optional["MemoryForecastForecastItemsFactObjectEntity"]


class MemoryForecastForecastItemsFactObjectEntity(BaseModel):
    name: str


MemoryForecast.model_rebuild()
MemoryForecastForecast.model_rebuild()
MemoryForecastForecastItems.model_rebuild()
MemoryForecastForecastItemsFact.model_rebuild()
MemoryForecastForecastItemsFactObject.model_rebuild()
