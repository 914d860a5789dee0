from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import IntentionStatus, TriggerKind


class MutationIntentions(BaseModel):
    added: "MutationIntentionsAdded"
    fired: "MutationIntentionsFired"
    again: "MutationIntentionsAgain"
    cancelled: "MutationIntentionsCancelled"
    twice: "MutationIntentionsTwice"
    unknown: "MutationIntentionsUnknown"
    no_embedder: "MutationIntentionsNoEmbedder" = Field(alias="noEmbedder")
    two_kinds: "MutationIntentionsTwoKinds" = Field(alias="twoKinds")
    bad_threshold: "MutationIntentionsBadThreshold" = Field(alias="badThreshold")


class MutationIntentionsAdded(BaseModel):
    id: str
    trigger: TriggerKind
    status: IntentionStatus
    entities: list["MutationIntentionsAddedEntities"]
    added_seq: int = Field(alias="addedSeq")


class MutationIntentionsAddedEntities(BaseModel):
    name: str


class MutationIntentionsFired(BaseModel):
    seq: Optional[int]
    fired: list["MutationIntentionsFiredFired"]


class MutationIntentionsFiredFired(BaseModel):
    payload: str
    status: IntentionStatus
    firings: list["MutationIntentionsFiredFiredFirings"]


class MutationIntentionsFiredFiredFirings(BaseModel):
    at: Annotated[DateTime, BeforeValidator(parse_datetime)]
    episode: Optional["MutationIntentionsFiredFiredFiringsEpisode"]


class MutationIntentionsFiredFiredFiringsEpisode(BaseModel):
    text: str


class MutationIntentionsAgain(BaseModel):
    seq: Optional[int]
    fired: list["MutationIntentionsAgainFired"]


class MutationIntentionsAgainFired(BaseModel):
    payload: str


class MutationIntentionsCancelled(BaseModel):
    payload: str
    status: IntentionStatus


class MutationIntentionsTwice(BaseModel):
    status: IntentionStatus


class MutationIntentionsUnknown(BaseModel):
    status: IntentionStatus


class MutationIntentionsNoEmbedder(BaseModel):
    id: str


class MutationIntentionsTwoKinds(BaseModel):
    id: str


class MutationIntentionsBadThreshold(BaseModel):
    id: str


MutationIntentions.model_rebuild()
MutationIntentionsAdded.model_rebuild()
MutationIntentionsFired.model_rebuild()
MutationIntentionsFiredFired.model_rebuild()
MutationIntentionsFiredFiredFirings.model_rebuild()
MutationIntentionsAgain.model_rebuild()
