from enum import Enum


class AggregateGroupBy(str, Enum):
    NOTHING = "NOTHING"
    SUBJECT = "SUBJECT"
    PREDICATE = "PREDICATE"
    VALUE = "VALUE"


class AllenRelation(str, Enum):
    BEFORE = "BEFORE"
    AFTER = "AFTER"
    MEETS = "MEETS"
    MET_BY = "MET_BY"
    OVERLAPS = "OVERLAPS"
    OVERLAPPED_BY = "OVERLAPPED_BY"
    STARTS = "STARTS"
    STARTED_BY = "STARTED_BY"
    DURING = "DURING"
    CONTAINS = "CONTAINS"
    FINISHES = "FINISHES"
    FINISHED_BY = "FINISHED_BY"
    EQUALS = "EQUALS"
    INTERSECTS = "INTERSECTS"


class Cardinality(str, Enum):
    ONE = "ONE"
    MANY = "MANY"


class DecayModelKind(str, Enum):
    MEMORY_BANK = "MEMORY_BANK"
    ACT_R = "ACT_R"
    NONE = "NONE"


class DueReason(str, Enum):
    TIME = "TIME"
    MENTION = "MENTION"
    CUE = "CUE"


class EmbeddingModeKind(str, Enum):
    BUILTIN = "BUILTIN"
    CLIENT = "CLIENT"
    OFF = "OFF"


class EmbeddingModel(str, Enum):
    E5 = "E5"
    MINILM = "MINILM"


class FactEmbeddingKind(str, Enum):
    NONE = "NONE"
    DECLARED = "DECLARED"
    ALL = "ALL"


class FactStatus(str, Enum):
    CURRENT = "CURRENT"
    NOT_YET_VALID = "NOT_YET_VALID"
    ENDED = "ENDED"
    SUPERSEDED = "SUPERSEDED"
    NEGATED = "NEGATED"
    CONTRADICTED = "CONTRADICTED"
    RETRACTED = "RETRACTED"


class IntentionStatus(str, Enum):
    PENDING = "PENDING"
    FIRED = "FIRED"
    CANCELLED = "CANCELLED"
    EXPIRED = "EXPIRED"


class MentionSource(str, Enum):
    CLIENT = "CLIENT"
    NAME_MATCH = "NAME_MATCH"


class PlacedByKind(str, Enum):
    CLIENT = "CLIENT"
    STORE = "STORE"


class Polarity(str, Enum):
    ASSERTED = "ASSERTED"
    NEGATED = "NEGATED"


class RdfView(str, Enum):
    IN_FORCE = "IN_FORCE"
    HISTORY = "HISTORY"


class RecordKind(str, Enum):
    FACT = "FACT"
    ENTITY = "ENTITY"
    EPISODE = "EPISODE"


class Reification(str, Enum):
    TRIPLE_TERM = "TRIPLE_TERM"
    STANDARD = "STANDARD"


class SearchComponent(str, Enum):
    TEXT = "TEXT"
    TEXT_IN_CONTEXT = "TEXT_IN_CONTEXT"
    VECTOR = "VECTOR"
    VECTOR_IN_CONTEXT = "VECTOR_IN_CONTEXT"
    GRAPH = "GRAPH"
    TIME = "TIME"
    VECTOR_IN_TIME = "VECTOR_IN_TIME"
    NEIGHBOUR = "NEIGHBOUR"
    SEGMENT = "SEGMENT"


class SearchKind(str, Enum):
    FACT = "FACT"
    ENTITY = "ENTITY"
    EPISODE = "EPISODE"
    TOPIC = "TOPIC"


class SegmentEndKind(str, Enum):
    SHIFT = "SHIFT"
    GAP = "GAP"
    IDLE = "IDLE"
    FORCED = "FORCED"


class SeriesGroupBy(str, Enum):
    NOTHING = "NOTHING"
    VALUE = "VALUE"


class SparqlForm(str, Enum):
    SOLUTIONS = "SOLUTIONS"
    BOOLEAN = "BOOLEAN"
    GRAPH = "GRAPH"


class TierKind(str, Enum):
    CORE = "CORE"
    ACTIVE = "ACTIVE"
    ARCHIVE = "ARCHIVE"


class TierPolicyKind(str, Enum):
    OFF = "OFF"
    PROPOSE = "PROPOSE"
    APPLY = "APPLY"


class TriggerKind(str, Enum):
    AT = "AT"
    MENTIONS = "MENTIONS"
    CUE = "CUE"


class ValueType(str, Enum):
    ANY = "ANY"
    ENTITY = "ENTITY"
    STRING = "STRING"
    INTEGER = "INTEGER"
    FLOAT = "FLOAT"
    BOOLEAN = "BOOLEAN"
    TIME = "TIME"
