from typing import Annotated, Optional

from ostrakon._scalars import DateTime, parse_datetime
from pydantic import BeforeValidator, Field

from .base_model import BaseModel
from .enums import FactStatus


class MutationRecordEpisode(BaseModel):
    record_episode: "MutationRecordEpisodeRecordEpisode" = Field(alias="recordEpisode")


class MutationRecordEpisodeRecordEpisode(BaseModel):
    seq: int
    system_time: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="systemTime"
    )
    episode: Optional["MutationRecordEpisodeRecordEpisodeEpisode"]
    entities: list["MutationRecordEpisodeRecordEpisodeEntities"]
    facts: list["MutationRecordEpisodeRecordEpisodeFacts"]
    created_entities: list["MutationRecordEpisodeRecordEpisodeCreatedEntities"] = Field(
        alias="createdEntities"
    )
    basis: "MutationRecordEpisodeRecordEpisodeBasis"


class MutationRecordEpisodeRecordEpisodeEpisode(BaseModel):
    id: str
    external_id: Optional[str] = Field(alias="externalId")
    occurred_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="occurredAt"
    )


class MutationRecordEpisodeRecordEpisodeEntities(BaseModel):
    id: str
    name: str
    aliases: list[str]
    kind: Optional[str]


class MutationRecordEpisodeRecordEpisodeFacts(BaseModel):
    id: str
    subject: Optional["MutationRecordEpisodeRecordEpisodeFactsSubject"]
    object_: "MutationRecordEpisodeRecordEpisodeFactsObject" = Field(alias="object")
    valid: "MutationRecordEpisodeRecordEpisodeFactsValid"
    status: FactStatus
    provenance: list["MutationRecordEpisodeRecordEpisodeFactsProvenance"]


class MutationRecordEpisodeRecordEpisodeFactsSubject(BaseModel):
    name: str


class MutationRecordEpisodeRecordEpisodeFactsObject(BaseModel):
    entity: Optional["MutationRecordEpisodeRecordEpisodeFactsObjectEntity"]


class MutationRecordEpisodeRecordEpisodeFactsObjectEntity(BaseModel):
    name: str


class MutationRecordEpisodeRecordEpisodeFactsValid(BaseModel):
    from_: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(alias="from")
    to: Optional[Annotated[DateTime, BeforeValidator(parse_datetime)]]


class MutationRecordEpisodeRecordEpisodeFactsProvenance(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")


class MutationRecordEpisodeRecordEpisodeCreatedEntities(BaseModel):
    name: str


class MutationRecordEpisodeRecordEpisodeBasis(BaseModel):
    seq: int
    valid_at: Annotated[DateTime, BeforeValidator(parse_datetime)] = Field(
        alias="validAt"
    )


MutationRecordEpisode.model_rebuild()
MutationRecordEpisodeRecordEpisode.model_rebuild()
MutationRecordEpisodeRecordEpisodeFacts.model_rebuild()
MutationRecordEpisodeRecordEpisodeFactsObject.model_rebuild()
