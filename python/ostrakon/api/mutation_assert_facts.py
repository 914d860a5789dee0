from typing import Optional

from pydantic import Field

from .base_model import BaseModel
from .enums import FactStatus, Polarity


class MutationAssertFacts(BaseModel):
    assert_facts: "MutationAssertFactsAssertFacts" = Field(alias="assertFacts")


class MutationAssertFactsAssertFacts(BaseModel):
    seq: int
    facts: list["MutationAssertFactsAssertFactsFacts"]
    created_entities: list["MutationAssertFactsAssertFactsCreatedEntities"] = Field(
        alias="createdEntities"
    )


class MutationAssertFactsAssertFactsFacts(BaseModel):
    id: str
    predicate: str
    polarity: Polarity
    object_: "MutationAssertFactsAssertFactsFactsObject" = Field(alias="object")
    status: FactStatus


class MutationAssertFactsAssertFactsFactsObject(BaseModel):
    entity: Optional["MutationAssertFactsAssertFactsFactsObjectEntity"]


class MutationAssertFactsAssertFactsFactsObjectEntity(BaseModel):
    name: str


class MutationAssertFactsAssertFactsCreatedEntities(BaseModel):
    id: str
    name: str


MutationAssertFacts.model_rebuild()
MutationAssertFactsAssertFacts.model_rebuild()
MutationAssertFactsAssertFactsFacts.model_rebuild()
MutationAssertFactsAssertFactsFactsObject.model_rebuild()
