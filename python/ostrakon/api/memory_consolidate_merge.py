from typing import Optional

from pydantic import Field

from .base_model import BaseModel


class MemoryConsolidateMerge(BaseModel):
    extracted: "MemoryConsolidateMergeExtracted"
    consolidate: "MemoryConsolidateMergeConsolidate"


class MemoryConsolidateMergeExtracted(BaseModel):
    entities: list["MemoryConsolidateMergeExtractedEntities"]


class MemoryConsolidateMergeExtractedEntities(BaseModel):
    id: str
    name: str


class MemoryConsolidateMergeConsolidate(BaseModel):
    seq: Optional[int]
    merged: list["MemoryConsolidateMergeConsolidateMerged"]
    corroborated: list["MemoryConsolidateMergeConsolidateCorroborated"]


class MemoryConsolidateMergeConsolidateMerged(BaseModel):
    from_: "MemoryConsolidateMergeConsolidateMergedFrom" = Field(alias="from")
    into: "MemoryConsolidateMergeConsolidateMergedInto"


class MemoryConsolidateMergeConsolidateMergedFrom(BaseModel):
    id: str
    name: str


class MemoryConsolidateMergeConsolidateMergedInto(BaseModel):
    id: str
    name: str
    aliases: list[str]


class MemoryConsolidateMergeConsolidateCorroborated(BaseModel):
    statements: int
    fact: "MemoryConsolidateMergeConsolidateCorroboratedFact"


class MemoryConsolidateMergeConsolidateCorroboratedFact(BaseModel):
    id: str
    subject: Optional["MemoryConsolidateMergeConsolidateCorroboratedFactSubject"]
    predicate: str
    object_: "MemoryConsolidateMergeConsolidateCorroboratedFactObject" = Field(
        alias="object"
    )
    corroborations: int
    provenance: list["MemoryConsolidateMergeConsolidateCorroboratedFactProvenance"]


class MemoryConsolidateMergeConsolidateCorroboratedFactSubject(BaseModel):
    name: str


class MemoryConsolidateMergeConsolidateCorroboratedFactObject(BaseModel):
    entity: Optional["MemoryConsolidateMergeConsolidateCorroboratedFactObjectEntity"]


class MemoryConsolidateMergeConsolidateCorroboratedFactObjectEntity(BaseModel):
    name: str


class MemoryConsolidateMergeConsolidateCorroboratedFactProvenance(BaseModel):
    external_id: Optional[str] = Field(alias="externalId")


MemoryConsolidateMerge.model_rebuild()
MemoryConsolidateMergeExtracted.model_rebuild()
MemoryConsolidateMergeConsolidate.model_rebuild()
MemoryConsolidateMergeConsolidateMerged.model_rebuild()
MemoryConsolidateMergeConsolidateCorroborated.model_rebuild()
MemoryConsolidateMergeConsolidateCorroboratedFact.model_rebuild()
MemoryConsolidateMergeConsolidateCorroboratedFactObject.model_rebuild()
