from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import DueReason, IntentionStatus, TriggerKind


class Intentions(BaseModel):
    all: list["IntentionsAll"]
    pending: list["IntentionsPending"]
    due_now: list["IntentionsDueNow"] = Field(alias="dueNow")
    after_expiry: list["IntentionsAfterExpiry"] = Field(alias="afterExpiry")
    context: "IntentionsContext"


class IntentionsAll(BaseModel):
    id: str
    payload: str
    trigger: TriggerKind
    at: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]]
    cue: Optional[str]
    priority: int
    repeat: bool
    status: IntentionStatus
    expires_at: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]] = Field(
        alias="expiresAt"
    )
    entities: list["IntentionsAllEntities"]
    firings: list["IntentionsAllFirings"]


class IntentionsAllEntities(BaseModel):
    name: str


class IntentionsAllFirings(BaseModel):
    at: Annotated[DateTime, BeforeValidator(parse_datetime)]
    episode: Optional["IntentionsAllFiringsEpisode"]


class IntentionsAllFiringsEpisode(BaseModel):
    text: str


class IntentionsPending(BaseModel):
    id: str


class IntentionsDueNow(BaseModel):
    reason: DueReason
    entity: Optional["IntentionsDueNowEntity"]
    intention: "IntentionsDueNowIntention"


class IntentionsDueNowEntity(BaseModel):
    name: str


class IntentionsDueNowIntention(BaseModel):
    payload: str
    priority: int


class IntentionsAfterExpiry(BaseModel):
    intention: "IntentionsAfterExpiryIntention"


class IntentionsAfterExpiryIntention(BaseModel):
    payload: str


class IntentionsContext(BaseModel):
    text: str
    intentions: list["IntentionsContextIntentions"]


class IntentionsContextIntentions(BaseModel):
    reason: DueReason
    intention: "IntentionsContextIntentionsIntention"


class IntentionsContextIntentionsIntention(BaseModel):
    payload: str


Intentions.model_rebuild()
IntentionsAll.model_rebuild()
IntentionsAllFirings.model_rebuild()
IntentionsDueNow.model_rebuild()
IntentionsAfterExpiry.model_rebuild()
IntentionsContext.model_rebuild()
IntentionsContextIntentions.model_rebuild()
