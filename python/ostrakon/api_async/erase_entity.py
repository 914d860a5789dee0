from typing import Optional

from pydantic import Field

from .base_model import BaseModel


class EraseEntity(BaseModel):
    erase_entity: "EraseEntityEraseEntity" = Field(alias="eraseEntity")


class EraseEntityEraseEntity(BaseModel):
    seq: int
    records: list["EraseEntityEraseEntityRecords"]
    batches_rewritten: int = Field(alias="batchesRewritten")


class EraseEntityEraseEntityRecords(BaseModel):
    kind: str
    id: str
    content_hash: Optional[str] = Field(alias="contentHash")


EraseEntity.model_rebuild()
EraseEntityEraseEntity.model_rebuild()
