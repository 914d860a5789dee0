from typing import Optional

from pydantic import Field

from .base_model import BaseModel
from .enums import DecayModelKind


class MemoryProfiles(BaseModel):
    configure_namespace: "MemoryProfilesConfigureNamespace" = Field(
        alias="configureNamespace"
    )
    define_predicate: "MemoryProfilesDefinePredicate" = Field(alias="definePredicate")


class MemoryProfilesConfigureNamespace(BaseModel):
    decay: "MemoryProfilesConfigureNamespaceDecay"


class MemoryProfilesConfigureNamespaceDecay(BaseModel):
    episode: "MemoryProfilesConfigureNamespaceDecayEpisode"
    entity: "MemoryProfilesConfigureNamespaceDecayEntity"
    fact: "MemoryProfilesConfigureNamespaceDecayFact"


class MemoryProfilesConfigureNamespaceDecayEpisode(BaseModel):
    model: DecayModelKind
    threshold: float
    half_life_seconds: Optional[float] = Field(alias="halfLifeSeconds")


class MemoryProfilesConfigureNamespaceDecayEntity(BaseModel):
    model: DecayModelKind
    initial_strength: float = Field(alias="initialStrength")
    half_life_seconds: Optional[float] = Field(alias="halfLifeSeconds")


class MemoryProfilesConfigureNamespaceDecayFact(BaseModel):
    initial_strength: float = Field(alias="initialStrength")
    increment: Optional[float]


class MemoryProfilesDefinePredicate(BaseModel):
    predicate: "MemoryProfilesDefinePredicatePredicate"


class MemoryProfilesDefinePredicatePredicate(BaseModel):
    name: str
    decay: Optional["MemoryProfilesDefinePredicatePredicateDecay"]


class MemoryProfilesDefinePredicatePredicateDecay(BaseModel):
    model: DecayModelKind
    initial_strength: float = Field(alias="initialStrength")
    diminishing: bool
    half_life_seconds: Optional[float] = Field(alias="halfLifeSeconds")


MemoryProfiles.model_rebuild()
MemoryProfilesConfigureNamespace.model_rebuild()
MemoryProfilesConfigureNamespaceDecay.model_rebuild()
MemoryProfilesDefinePredicate.model_rebuild()
MemoryProfilesDefinePredicatePredicate.model_rebuild()
