from typing import Annotated, Optional

from ostrakon._scalars import DateTime, serialize_datetime
from pydantic import Field, PlainSerializer

from .base_model import BaseModel
from .enums import (
    DecayModelKind,
    EmbeddingModeKind,
    EmbeddingModel,
    FactEmbeddingKind,
    Polarity,
    SearchKind,
    TierPolicyKind,
)


class DecayInput(BaseModel):
    """Profiles of a namespace: for every record, and per kind (a kind's own wins)."""

    default: Optional["ProfileInput"] = None
    "For every kind of record."
    episode: Optional["ProfileInput"] = None
    "For episodes."
    entity: Optional["ProfileInput"] = None
    "For entities."
    fact: Optional["ProfileInput"] = None
    "For facts (a predicate's own profile wins)."


class EmbeddingInput(BaseModel):
    """How a namespace gets its vectors, and which records the built-in embedder embeds.
    Fields left out stay as they are."""

    mode: Optional[EmbeddingModeKind] = None
    "Where vectors come from."
    dimensions: Optional[int] = None
    "Their length (CLIENT only)."
    model: Optional[EmbeddingModel] = None
    "The built-in embedder's model for this namespace (BUILTIN only; alone it means\nBUILTIN); without it, the server's default model."
    facts: Optional[FactEmbeddingKind] = None
    "Which facts are embedded (built-in mode)."
    entities: Optional[bool] = None
    "Whether entities are embedded (built-in mode)."


class EntityInput(BaseModel):
    """An entity the client extracted: created if no entity has the name, else given the
    aliases and kind as its next version."""

    name: str
    "Canonical name."
    aliases: list[str] = Field(default_factory=lambda: [])
    "Other names."
    kind: Optional[str] = None
    "Its kind."


class EntityRefInput(BaseModel):
    """An entity by id, or by canonical name or alias: exactly one of the two (`@oneOf`). In
    writes, a name nobody has creates the entity."""

    id: Optional[str] = None
    "Its id."
    name: Optional[str] = None
    "Its canonical name or an alias (case and spacing ignored)."


class EpisodeInput(BaseModel):
    """An observation."""

    text: str
    "The text, verbatim."
    occurred_at: Optional[Annotated[DateTime, PlainSerializer(serialize_datetime)]] = (
        Field(alias="occurredAt", default=None)
    )
    "When it happened; now when absent."
    thread: Optional[str] = None
    "Its conversation or session."
    source: Optional[str] = None
    "Where it came from."
    role: Optional[str] = None
    "Who spoke."
    external_id: Optional[str] = Field(alias="externalId", default=None)
    "The client's id for it, unique in the namespace."
    importance: Optional[float] = None
    "How much it matters, in [0, 1]: raises its initial strength (salience, not truth)."
    embedding: Optional[list[float]] = None
    "Its vector, in namespaces whose clients send vectors (see `configureNamespace`)."


class FactInput(BaseModel):
    """A fact to assert (or deny)."""

    subject: "EntityRefInput"
    "What it is about."
    predicate: str
    "The relation."
    object_: "ValueInput" = Field(alias="object")
    "An entity or a literal."
    valid_from: Optional[Annotated[DateTime, PlainSerializer(serialize_datetime)]] = (
        Field(alias="validFrom", default=None)
    )
    "When it starts to hold; the episode's time in `recordEpisode`, else now."
    valid_to: Optional[Annotated[DateTime, PlainSerializer(serialize_datetime)]] = (
        Field(alias="validTo", default=None)
    )
    "When it stops holding (excluded); open-ended when absent."
    confidence: Optional[float] = None
    "How sure the source is, in (0, 1]; 1 when absent."
    polarity: Polarity = Polarity.ASSERTED
    "Stated or denied."
    provenance: list[str] = Field(default_factory=lambda: [])
    "Episodes it comes from, by id."
    provenance_external_ids: list[str] = Field(
        alias="provenanceExternalIds", default_factory=lambda: []
    )
    "Episodes it comes from, by external id."
    supersedes: Optional[str] = None
    "The statement this one corrects (a fact's own id names its first statement): it is\nwithdrawn as of this write, and the fact it stated is retracted once none of its\nstatements is left."
    importance: Optional[float] = None
    "How much it matters, in [0, 1]: raises its initial strength (salience, not truth)."
    correction: bool = False
    "Whether it is the user's correction of the agent: the strongest start."


class OverlapSide(BaseModel):
    """One side of `overlaps`: facts of a predicate, of one entity or of every subject, with
    one value or any."""

    entity: Optional["EntityRefInput"] = None
    "The subject; every subject of the predicate when absent."
    predicate: str
    "The predicate."
    value: Optional["ValueInput"] = None
    "The value; any when absent."


class ProfileInput(BaseModel):
    """A forgetting profile to set."""

    model: DecayModelKind = DecayModelKind.MEMORY_BANK
    "The curve."
    unit_seconds: float = Field(alias="unitSeconds", default=86400.0)
    "The unit of strength, in seconds (one day by default)."
    initial_strength: float = Field(alias="initialStrength", default=1.0)
    "Strength when first experienced."
    increment: float = 1.0
    "What a recall adds to strength (ignored when `diminishing`)."
    diminishing: bool = False
    "Each recall adds `1 / ln(S + e)` instead: less to an already strong memory."
    threshold: float = 0.1
    "Below this retention a record is dormant."
    actr_decay: float = Field(alias="actrDecay", default=0.5)
    "ACT-R decay exponent d."
    actr_threshold: float = Field(alias="actrThreshold", default=0.0)
    "ACT-R activation at which retention is one half."
    actr_noise: float = Field(alias="actrNoise", default=0.4)
    "ACT-R logistic noise s."


class RetentionInput(BaseModel):
    """How long a namespace keeps episodes."""

    episodes_after: Optional[str] = Field(alias="episodesAfter", default=None)
    "Erase episodes recorded longer ago than this ISO 8601 duration in days, weeks,\nhours, minutes or seconds (`P90D`, `P12W`, `PT36H`; not months or years, whose\nlength varies), keeping the facts stated from them; upkeep erases them within the\nhour they fall due. Null: keep them forever (the default)."


class SearchFilter(BaseModel):
    """Filters and tuning of a search."""

    kinds: Optional[list[SearchKind]] = None
    "Kinds of result wanted (records of every kind when absent); `TOPIC` ranks the\ntopics of the topic network too (`topics`)."
    topics: Optional[int] = None
    "Topic-first: narrow to the best this many topics, then rank inside them."
    occurred_from: Optional[
        Annotated[DateTime, PlainSerializer(serialize_datetime)]
    ] = Field(alias="occurredFrom", default=None)
    "Only episodes that occurred at or after this (and facts valid then)."
    occurred_to: Optional[Annotated[DateTime, PlainSerializer(serialize_datetime)]] = (
        Field(alias="occurredTo", default=None)
    )
    "Only episodes that occurred before this (and facts valid then)."
    thread: Optional[str] = None
    "Only episodes of this thread, and facts they sourced."
    entity: Optional[str] = None
    "Only this entity, its facts and the episodes behind them."
    predicate: Optional[str] = None
    "Only facts with this predicate and the episodes behind them."
    include_not_in_force: Optional[bool] = Field(
        alias="includeNotInForce", default=None
    )
    "Keep facts not in force at (validAt, knownAt): superseded, ended, negated…"
    retention_floor: Optional[float] = Field(alias="retentionFloor", default=None)
    "Share of relevance a completely forgotten memory keeps, in [0, 1] (default 0.5)."
    diversity: Optional[float] = None
    "Relevance against diversity in [0, 1]: 1 ranks by relevance only (default 0.7)."


class SegmentationInput(BaseModel):
    """How threads are cut into segments; unset fields keep their current value."""

    threshold: Optional[float] = None
    "Cosine distance (1 − cos) from the running segment's centroid above which an\nepisode is off-topic, in (0, 2]."
    hysteresis: Optional[float] = None
    "How much less far the next episode may be and still confirm the shift."
    max_gap_seconds: Optional[int] = Field(alias="maxGapSeconds", default=None)
    "A pause longer than this (seconds) closes a segment; so does a thread idle this long."
    min_length: Optional[int] = Field(alias="minLength", default=None)
    "A shift never closes a segment shorter than this."


class TiersInput(BaseModel):
    """Tier settings to change (`configureNamespace(tiers:)`); the others stay."""

    policy: Optional[TierPolicyKind] = None
    "What upkeep does: OFF (default), PROPOSE or APPLY."
    core_share: Optional[float] = Field(alias="coreShare", default=None)
    "CORE's share of a context's budget, in [0, 1] (default 0.3)."
    active_share: Optional[float] = Field(alias="activeShare", default=None)
    "ACTIVE's share, in [0, 1] (default 0.3; with CORE's at most 1)."
    core_max_items: Optional[int] = Field(alias="coreMaxItems", default=None)
    "Most records in CORE (default 50)."
    core_max_tokens: Optional[int] = Field(alias="coreMaxTokens", default=None)
    "Most tokens of CORE (default 1000)."
    scope_max_items: Optional[int] = Field(alias="scopeMaxItems", default=None)
    "Most records in one scope (default 100)."
    scope_max_tokens: Optional[int] = Field(alias="scopeMaxTokens", default=None)
    "Most tokens of one scope (default 2000)."
    promote_after_threads: Optional[int] = Field(
        alias="promoteAfterThreads", default=None
    )
    "Threads a fact must be stated from (or days it must be recalled on) to become a\nCORE candidate (default 3)."
    release_idle_after_days: Optional[float] = Field(
        alias="releaseIdleAfterDays", default=None
    )
    "Days without a placement after which upkeep releases a scope (default 30; 0: never)."


class TriggerInput(BaseModel):
    """A trigger: exactly one of `at`, `entities` or `cue`."""

    at: Optional[Annotated[DateTime, PlainSerializer(serialize_datetime)]] = None
    "Due when this time comes."
    entities: Optional[list["EntityRefInput"]] = None
    "Due when an episode (or message) mentions one of these entities."
    cue: Optional[str] = None
    "Due when an episode (or message) is close in meaning to this cue."
    cue_vector: Optional[list[float]] = Field(alias="cueVector", default=None)
    "The cue's vector, for namespaces whose clients send vectors."
    threshold: Optional[float] = None
    "Cosine similarity at or above which a cue trigger fires, in (0, 1] (default 0.6)."


class ValueInput(BaseModel):
    """A value: exactly one field set (`@oneOf`)."""

    entity: Optional["EntityRefInput"] = None
    "An entity."
    string: Optional[str] = None
    "Text."
    integer: Optional[int] = None
    "A 64-bit integer."
    float_: Optional[float] = Field(alias="float", default=None)
    "A float."
    boolean: Optional[bool] = None
    "A boolean."
    time: Optional[Annotated[DateTime, PlainSerializer(serialize_datetime)]] = None
    "An instant."


DecayInput.model_rebuild()
FactInput.model_rebuild()
OverlapSide.model_rebuild()
TriggerInput.model_rebuild()
ValueInput.model_rebuild()
