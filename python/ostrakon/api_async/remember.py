from typing import Optional

from pydantic import Field

from .base_model import BaseModel


class Remember(BaseModel):
    remember: "RememberRemember"


class RememberRemember(BaseModel):
    seq: Optional[int]
    result: "RememberRememberResult"


class RememberRememberResult(BaseModel):
    hits: list["RememberRememberResultHits"]


class RememberRememberResultHits(BaseModel):
    episode: Optional["RememberRememberResultHitsEpisode"]
    explain: "RememberRememberResultHitsExplain"


class RememberRememberResultHitsEpisode(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")
    recall_count: int = Field(alias="recallCount")


class RememberRememberResultHitsExplain(BaseModel):
    retention: float


Remember.model_rebuild()
RememberRemember.model_rebuild()
RememberRememberResult.model_rebuild()
RememberRememberResultHits.model_rebuild()
