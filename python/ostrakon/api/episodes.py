from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel


class Episodes(BaseModel):
    thread: "EpisodesThread"
    window: "EpisodesWindow"


class EpisodesThread(BaseModel):
    nodes: list["EpisodesThreadNodes"]


class EpisodesThreadNodes(BaseModel):
    id: str
    external_id: Optional[str] = Field(alias="externalId")
    text: str
    occurred_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="occurredAt"
    )
    role: Optional[str]
    recorded_seq: int = Field(alias="recordedSeq")


class EpisodesWindow(BaseModel):
    page_info: "EpisodesWindowPageInfo" = Field(alias="pageInfo")
    nodes: list["EpisodesWindowNodes"]


class EpisodesWindowPageInfo(BaseModel):
    has_next_page: bool = Field(alias="hasNextPage")


class EpisodesWindowNodes(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")
    occurred_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="occurredAt"
    )
    thread: Optional[str]


Episodes.model_rebuild()
EpisodesThread.model_rebuild()
EpisodesWindow.model_rebuild()
