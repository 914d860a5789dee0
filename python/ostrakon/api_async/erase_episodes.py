from pydantic import Field

from .base_model import BaseModel


class EraseEpisodes(BaseModel):
    erase_episodes: "EraseEpisodesEraseEpisodes" = Field(alias="eraseEpisodes")


class EraseEpisodesEraseEpisodes(BaseModel):
    records: list["EraseEpisodesEraseEpisodesRecords"]


class EraseEpisodesEraseEpisodesRecords(BaseModel):
    kind: str
    id: str


EraseEpisodes.model_rebuild()
EraseEpisodesEraseEpisodes.model_rebuild()
