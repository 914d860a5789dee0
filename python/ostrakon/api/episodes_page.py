from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel


class EpisodesPage(BaseModel):
    episodes: "EpisodesPageEpisodes"


class EpisodesPageEpisodes(BaseModel):
    page_info: "EpisodesPageEpisodesPageInfo" = Field(alias="pageInfo")
    nodes: list["EpisodesPageEpisodesNodes"]


class EpisodesPageEpisodesPageInfo(BaseModel):
    has_next_page: bool = Field(alias="hasNextPage")
    end_cursor: Optional[str] = Field(alias="endCursor")


class EpisodesPageEpisodesNodes(BaseModel):
    id: str
    external_id: Optional[str] = Field(alias="externalId")
    text: str
    occurred_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="occurredAt"
    )
    thread: Optional[str]
    role: Optional[str]


EpisodesPage.model_rebuild()
EpisodesPageEpisodes.model_rebuild()
