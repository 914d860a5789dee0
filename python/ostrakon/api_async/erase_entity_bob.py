from typing import Optional

from .base_model import BaseModel


class EraseEntityBob(BaseModel):
    entity: Optional["EraseEntityBobEntity"]


class EraseEntityBobEntity(BaseModel):
    name: str


EraseEntityBob.model_rebuild()
