from typing import Any, Optional, Union

from ostrakon._scalars import DateTime, serialize_datetime

from .analytics import Analytics
from .base_model import UNSET, UnsetType
from .context import Context
from .context_block import ContextBlock
from .contradiction import Contradiction
from .define_predicate import DefinePredicate
from .end_fact import EndFact
from .entities import Entities
from .entities_paginated import EntitiesPaginated
from .entity import Entity
from .entity_as_of_system_time import EntityAsOfSystemTime
from .entity_as_of_valid_time import EntityAsOfValidTime
from .entity_now import EntityNow
from .enums import Cardinality, ValueType
from .episodes import Episodes
from .episodes_page import EpisodesPage
from .erase_entity import EraseEntity
from .erase_entity_alice import EraseEntityAlice
from .erase_entity_bob import EraseEntityBob
from .erase_episodes import EraseEpisodes
from .erase_episodes_facts import EraseEpisodesFacts
from .event_graph import EventGraph
from .facts_by_object_all import FactsByObjectAll
from .facts_by_predicate import FactsByPredicate
from .history_correction import HistoryCorrection
from .history_end_of_validity import HistoryEndOfValidity
from .history_supersession import HistorySupersession
from .input_types import EntityInput, EpisodeInput, FactInput, SearchFilter
from .intentions import Intentions
from .known_at_system_time import KnownAtSystemTime
from .memory_consolidate import MemoryConsolidate
from .memory_consolidate_merge import MemoryConsolidateMerge
from .memory_forecast import MemoryForecast
from .memory_profiles import MemoryProfiles
from .memory_recall import MemoryRecall
from .memory_recallable import MemoryRecallable
from .memory_trace_fields import MemoryTraceFields
from .mutation_assert_facts import MutationAssertFacts
from .mutation_define_and_configure import MutationDefineAndConfigure
from .mutation_end_and_retract import MutationEndAndRetract
from .mutation_intentions import MutationIntentions
from .mutation_record_episode import MutationRecordEpisode
from .mutation_segmentation import MutationSegmentation
from .namespace import Namespace
from .neighbors import Neighbors
from .nested_at_parent_point import NestedAtParentPoint
from .remember import Remember
from .retention_keep import RetentionKeep
from .retention_months import RetentionMonths
from .retract_fact import RetractFact
from .retrieve import Retrieve
from .search import Search
from .search_explain import SearchExplain
from .snapshot_page_1 import SnapshotPage1
from .snapshot_page_2 import SnapshotPage2
from .sparql import Sparql
from .topics_close import TopicsClose
from .topics_read import TopicsRead
from .typed_base import TypedBase


def gql(q: str) -> str:
    return q


class Api(TypedBase):
    def analytics(self, **kwargs: Any) -> Analytics:
        query = gql("""
            query Analytics {
              timeline(
                namespace: "demo"
                entity: {name: "Alice"}
                predicates: ["livesIn", "worksAt"]
              ) {
                entity {
                  name
                }
                lanes {
                  predicate
                  held {
                    value {
                      entity {
                        name
                      }
                    }
                    valid {
                      from
                      to
                    }
                    factIds
                  }
                }
              }
              durations(
                namespace: "demo"
                entity: {name: "Alice"}
                predicate: "livesIn"
                to: "2025"
              ) {
                from
                to
                values {
                  value {
                    entity {
                      name
                    }
                  }
                  seconds
                  stretches
                  atEnd
                }
              }
              paris: inForceSeries(
                namespace: "demo"
                predicate: "livesIn"
                value: {entity: {name: "Paris"}}
                from: "2009"
                to: "2017"
                step: "P1Y"
              ) {
                points
                groups {
                  counts
                }
              }
              cities: inForceSeries(
                namespace: "demo"
                predicate: "livesIn"
                from: "2009"
                to: "2017"
                step: "P2Y"
                groupBy: VALUE
              ) {
                points
                groups {
                  value {
                    entity {
                      name
                    }
                  }
                  counts
                }
              }
              changes(
                namespace: "demo"
                predicate: "livesIn"
                from: "2009"
                to: "2017"
                step: "P2Y"
              ) {
                points
                counts
                top {
                  entity {
                    name
                  }
                  changes
                }
              }
              overlaps(
                namespace: "demo"
                a: {predicate: "knows", value: {entity: {name: "Bob"}}}
                b: {entity: {name: "Alice"}, predicate: "livesIn", value: {entity: {name: "Paris"}}}
                relation: INTERSECTS
              ) {
                truncated
                pairs {
                  a {
                    subject {
                      name
                    }
                    valid {
                      from
                      to
                    }
                  }
                  b {
                    valid {
                      from
                      to
                    }
                  }
                }
              }
              aggregate(namespace: "demo", groupBy: PREDICATE, validAt: "2016") {
                groups {
                  predicate
                  count
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query, operation_name="Analytics", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Analytics.model_validate(data)

    def context(
        self,
        namespace: str,
        message: str,
        budget: Union[Optional[int], UnsetType] = UNSET,
        valid_at: Union[Optional[DateTime], UnsetType] = UNSET,
        known_at: Union[Optional[DateTime], UnsetType] = UNSET,
        at: Union[Optional[DateTime], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> Context:
        query = gql("""
            query Context($namespace: String!, $message: String!, $budget: Int, $validAt: DateTime, $knownAt: DateTime, $at: DateTime) {
              context(
                namespace: $namespace
                message: $message
                budget: $budget
                validAt: $validAt
                knownAt: $knownAt
                at: $at
              ) {
                text
                tokens
                truncated
                facts {
                  id
                  subject {
                    name
                  }
                  predicate
                  object {
                    type
                    entity {
                      name
                    }
                    string
                    integer
                  }
                  valid {
                    from
                    to
                  }
                }
                episodes {
                  id
                  externalId
                  text
                  occurredAt
                }
              }
            }
            """)
        variables: dict[str, object] = {
            "namespace": namespace,
            "message": message,
            "budget": budget,
            "validAt": serialize_datetime(valid_at),
            "knownAt": serialize_datetime(known_at),
            "at": serialize_datetime(at),
        }
        response = self.execute(
            query=query, operation_name="Context", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Context.model_validate(data)

    def context_block(self, **kwargs: Any) -> ContextBlock:
        query = gql("""
            query ContextBlock {
              full: context(
                namespace: "demo"
                message: "Where does Alice live and work?"
                budget: 400
                at: "2030-01-01"
              ) {
                text
                tokens
                truncated
                facts {
                  predicate
                  object {
                    entity {
                      name
                    }
                  }
                }
                episodes {
                  externalId
                }
                entities {
                  name
                }
              }
              small: context(
                namespace: "demo"
                message: "Where does Alice live and work?"
                budget: 25
                at: "2030-01-01"
              ) {
                text
                tokens
                truncated
              }
              inThePast: context(
                namespace: "demo"
                message: "Where does Alice live?"
                validAt: "2012-06-01"
                budget: 400
                at: "2030-01-01"
              ) {
                text
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query, operation_name="ContextBlock", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return ContextBlock.model_validate(data)

    def contradiction(self, **kwargs: Any) -> Contradiction:
        query = gql("""
            query Contradiction {
              history(
                namespace: "demo"
                subject: {name: "Carol"}
                predicate: "bornIn"
                validAt: "2000"
              ) {
                nodes {
                  object {
                    entity {
                      name
                    }
                  }
                  confidence
                  status
                  reason
                  contradicts {
                    object {
                      entity {
                        name
                      }
                    }
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query, operation_name="Contradiction", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Contradiction.model_validate(data)

    def define_predicate(
        self,
        namespace: str,
        name: str,
        cardinality: Cardinality,
        value_type: ValueType,
        description: Union[Optional[str], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> DefinePredicate:
        query = gql("""
            mutation DefinePredicate($namespace: String!, $name: String!, $cardinality: Cardinality!, $valueType: ValueType!, $description: String) {
              definePredicate(
                namespace: $namespace
                name: $name
                cardinality: $cardinality
                valueType: $valueType
                description: $description
              ) {
                seq
                predicate {
                  name
                  cardinality
                  valueType
                  description
                }
              }
            }
            """)
        variables: dict[str, object] = {
            "namespace": namespace,
            "name": name,
            "cardinality": cardinality,
            "valueType": value_type,
            "description": description,
        }
        response = self.execute(
            query=query, operation_name="DefinePredicate", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return DefinePredicate.model_validate(data)

    def end_fact(
        self, namespace: str, fact: str, valid_to: DateTime, **kwargs: Any
    ) -> EndFact:
        query = gql("""
            mutation EndFact($namespace: String!, $fact: ID!, $validTo: DateTime!) {
              endFact(namespace: $namespace, fact: $fact, validTo: $validTo) {
                seq
                facts {
                  id
                  valid {
                    from
                    to
                  }
                  status
                  reason
                }
              }
            }
            """)
        variables: dict[str, object] = {
            "namespace": namespace,
            "fact": fact,
            "validTo": serialize_datetime(valid_to),
        }
        response = self.execute(
            query=query, operation_name="EndFact", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return EndFact.model_validate(data)

    def entities(
        self,
        namespace: str,
        name: Union[Optional[str], UnsetType] = UNSET,
        kind: Union[Optional[str], UnsetType] = UNSET,
        first: Union[Optional[int], UnsetType] = UNSET,
        after: Union[Optional[str], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> Entities:
        query = gql("""
            query Entities($namespace: String!, $name: String, $kind: String, $first: Int, $after: String) {
              entities(
                namespace: $namespace
                name: $name
                kind: $kind
                first: $first
                after: $after
              ) {
                pageInfo {
                  hasNextPage
                  endCursor
                }
                nodes {
                  id
                  name
                  kind
                  aliases
                }
              }
            }
            """)
        variables: dict[str, object] = {
            "namespace": namespace,
            "name": name,
            "kind": kind,
            "first": first,
            "after": after,
        }
        response = self.execute(
            query=query, operation_name="Entities", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Entities.model_validate(data)

    def entities_paginated(self, **kwargs: Any) -> EntitiesPaginated:
        query = gql("""
            query EntitiesPaginated {
              first: entities(namespace: "demo", first: 3) {
                pageInfo {
                  hasNextPage
                  endCursor
                }
                nodes {
                  id
                  name
                }
              }
              next: entities(namespace: "demo", first: 3, after: "3") {
                pageInfo {
                  hasNextPage
                  hasPreviousPage
                }
                nodes {
                  id
                  name
                }
              }
              cities: entities(namespace: "demo", kind: "city") {
                nodes {
                  name
                  aliases
                }
              }
              alias: entities(namespace: "demo", name: "THE BIG SMOKE") {
                nodes {
                  name
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query,
            operation_name="EntitiesPaginated",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return EntitiesPaginated.model_validate(data)

    def entity(
        self,
        namespace: str,
        id: Union[Optional[str], UnsetType] = UNSET,
        name: Union[Optional[str], UnsetType] = UNSET,
        valid_at: Union[Optional[DateTime], UnsetType] = UNSET,
        known_at: Union[Optional[DateTime], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> Entity:
        query = gql("""
            query Entity($namespace: String!, $id: ID, $name: String, $validAt: DateTime, $knownAt: DateTime) {
              entity(
                namespace: $namespace
                id: $id
                name: $name
                validAt: $validAt
                knownAt: $knownAt
              ) {
                id
                name
                kind
                aliases
                facts {
                  id
                  predicate
                  object {
                    type
                    entity {
                      id
                      name
                    }
                    string
                    integer
                    float
                    boolean
                  }
                  valid {
                    from
                    to
                  }
                  status
                }
                basis {
                  seq
                  validAt
                }
              }
            }
            """)
        variables: dict[str, object] = {
            "namespace": namespace,
            "id": id,
            "name": name,
            "validAt": serialize_datetime(valid_at),
            "knownAt": serialize_datetime(known_at),
        }
        response = self.execute(
            query=query, operation_name="Entity", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Entity.model_validate(data)

    def entity_as_of_system_time(self, **kwargs: Any) -> EntityAsOfSystemTime:
        query = gql("""
            query EntityAsOfSystemTime {
              entity(namespace: "demo", name: "Alice", validAt: "2013", knownAtSeq: 7) {
                facts {
                  predicate
                  object {
                    entity {
                      name
                    }
                  }
                  status
                }
                basis {
                  seq
                  systemTime
                  validAt
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query,
            operation_name="EntityAsOfSystemTime",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return EntityAsOfSystemTime.model_validate(data)

    def entity_as_of_valid_time(
        self,
        namespace: str,
        name: str,
        valid_at: Union[Optional[DateTime], UnsetType] = UNSET,
        known_at: Union[Optional[DateTime], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> EntityAsOfValidTime:
        query = gql("""
            query EntityAsOfValidTime($namespace: String!, $name: String!, $validAt: DateTime, $knownAt: DateTime) {
              entity(namespace: $namespace, name: $name, validAt: $validAt, knownAt: $knownAt) {
                name
                facts {
                  predicate
                  object {
                    entity {
                      name
                    }
                  }
                  status
                }
                basis {
                  seq
                  validAt
                }
              }
            }
            """)
        variables: dict[str, object] = {
            "namespace": namespace,
            "name": name,
            "validAt": serialize_datetime(valid_at),
            "knownAt": serialize_datetime(known_at),
        }
        response = self.execute(
            query=query,
            operation_name="EntityAsOfValidTime",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return EntityAsOfValidTime.model_validate(data)

    def entity_now(self, **kwargs: Any) -> EntityNow:
        query = gql("""
            query EntityNow {
              entity(namespace: "demo", name: "alice") {
                id
                name
                kind
                aliases
                facts {
                  id
                  predicate
                  object {
                    type
                    entity {
                      name
                    }
                    integer
                  }
                  valid {
                    from
                    to
                  }
                  status
                  reason
                }
                basis {
                  seq
                  systemTime
                  validAt
                  clock
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query, operation_name="EntityNow", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return EntityNow.model_validate(data)

    def episodes(self, **kwargs: Any) -> Episodes:
        query = gql("""
            query Episodes {
              thread: episodes(namespace: "demo", thread: "chat-1") {
                nodes {
                  id
                  externalId
                  text
                  occurredAt
                  role
                  recordedSeq
                }
              }
              window: episodes(namespace: "demo", from: "2012", to: "2016") {
                pageInfo {
                  hasNextPage
                }
                nodes {
                  externalId
                  occurredAt
                  thread
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query, operation_name="Episodes", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Episodes.model_validate(data)

    def episodes_page(
        self,
        namespace: str,
        thread: Union[Optional[str], UnsetType] = UNSET,
        from_: Union[Optional[DateTime], UnsetType] = UNSET,
        to: Union[Optional[DateTime], UnsetType] = UNSET,
        first: Union[Optional[int], UnsetType] = UNSET,
        after: Union[Optional[str], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> EpisodesPage:
        query = gql("""
            query EpisodesPage($namespace: String!, $thread: String, $from: DateTime, $to: DateTime, $first: Int, $after: String) {
              episodes(
                namespace: $namespace
                thread: $thread
                from: $from
                to: $to
                first: $first
                after: $after
              ) {
                pageInfo {
                  hasNextPage
                  endCursor
                }
                nodes {
                  id
                  externalId
                  text
                  occurredAt
                  thread
                  role
                }
              }
            }
            """)
        variables: dict[str, object] = {
            "namespace": namespace,
            "thread": thread,
            "from": serialize_datetime(from_),
            "to": serialize_datetime(to),
            "first": first,
            "after": after,
        }
        response = self.execute(
            query=query, operation_name="EpisodesPage", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return EpisodesPage.model_validate(data)

    def event_graph(self, **kwargs: Any) -> EventGraph:
        query = gql("""
            query EventGraph {
              thread(namespace: "demo", thread: "chat-1") {
                nodes {
                  externalId
                  text
                  previous {
                    externalId
                  }
                  next {
                    externalId
                  }
                  mentions {
                    entity {
                      name
                    }
                    source
                  }
                  facts {
                    subject {
                      name
                    }
                    predicate
                    object {
                      entity {
                        name
                      }
                    }
                    status
                  }
                }
              }
              alice: entity(namespace: "demo", name: "Alice") {
                mentions {
                  nodes {
                    externalId
                    occurredAt
                    thread
                  }
                }
              }
              acme: entity(namespace: "demo", name: "Acme") {
                mentions {
                  nodes {
                    externalId
                  }
                }
              }
              london: entity(namespace: "demo", name: "The Big Smoke") {
                name
                mentions {
                  nodes {
                    externalId
                    next {
                      externalId
                    }
                    previous {
                      externalId
                    }
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query, operation_name="EventGraph", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return EventGraph.model_validate(data)

    def facts_by_object_all(self, **kwargs: Any) -> FactsByObjectAll:
        query = gql("""
            query FactsByObjectAll {
              facts(
                namespace: "demo"
                object: {entity: {name: "Paris"}}
                includeAll: true
                validAt: "2016"
              ) {
                nodes {
                  id
                  subject {
                    name
                  }
                  predicate
                  status
                  reason
                  retractedSeq
                  effective {
                    from
                    to
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query,
            operation_name="FactsByObjectAll",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return FactsByObjectAll.model_validate(data)

    def facts_by_predicate(
        self,
        namespace: str,
        predicate: Union[Optional[str], UnsetType] = UNSET,
        valid_at: Union[Optional[DateTime], UnsetType] = UNSET,
        known_at: Union[Optional[DateTime], UnsetType] = UNSET,
        first: Union[Optional[int], UnsetType] = UNSET,
        after: Union[Optional[str], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> FactsByPredicate:
        query = gql("""
            query FactsByPredicate($namespace: String!, $predicate: String, $validAt: DateTime, $knownAt: DateTime, $first: Int, $after: String) {
              facts(
                namespace: $namespace
                predicate: $predicate
                validAt: $validAt
                knownAt: $knownAt
                first: $first
                after: $after
              ) {
                basis {
                  seq
                  validAt
                }
                pageInfo {
                  hasNextPage
                  endCursor
                }
                nodes {
                  subject {
                    name
                  }
                  object {
                    entity {
                      name
                    }
                  }
                  valid {
                    from
                    to
                  }
                  status
                }
              }
            }
            """)
        variables: dict[str, object] = {
            "namespace": namespace,
            "predicate": predicate,
            "validAt": serialize_datetime(valid_at),
            "knownAt": serialize_datetime(known_at),
            "first": first,
            "after": after,
        }
        response = self.execute(
            query=query,
            operation_name="FactsByPredicate",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return FactsByPredicate.model_validate(data)

    def history_correction(self, **kwargs: Any) -> HistoryCorrection:
        query = gql("""
            query HistoryCorrection {
              history(
                namespace: "demo"
                subject: {name: "Alice"}
                predicate: "worksAt"
                validAt: "2013"
              ) {
                nodes {
                  id
                  object {
                    entity {
                      name
                    }
                  }
                  status
                  reason
                  retractedSeq
                  supersededBy {
                    id
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query,
            operation_name="HistoryCorrection",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return HistoryCorrection.model_validate(data)

    def history_end_of_validity(self, **kwargs: Any) -> HistoryEndOfValidity:
        query = gql("""
            query HistoryEndOfValidity {
              before: history(
                namespace: "demo"
                subject: {name: "Alice"}
                predicate: "knows"
                validAt: "2021"
                knownAtSeq: 8
              ) {
                nodes {
                  valid {
                    from
                    to
                  }
                  status
                }
              }
              after: history(
                namespace: "demo"
                subject: {name: "Alice"}
                predicate: "knows"
                validAt: "2021"
              ) {
                nodes {
                  valid {
                    from
                    to
                  }
                  status
                  reason
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query,
            operation_name="HistoryEndOfValidity",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return HistoryEndOfValidity.model_validate(data)

    def history_supersession(
        self,
        namespace: str,
        subject: str,
        predicate: str,
        valid_at: Union[Optional[DateTime], UnsetType] = UNSET,
        known_at: Union[Optional[DateTime], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> HistorySupersession:
        query = gql("""
            query HistorySupersession($namespace: String!, $subject: String!, $predicate: String!, $validAt: DateTime, $knownAt: DateTime) {
              history(
                namespace: $namespace
                subject: {name: $subject}
                predicate: $predicate
                validAt: $validAt
                knownAt: $knownAt
              ) {
                nodes {
                  id
                  object {
                    entity {
                      name
                    }
                  }
                  status
                  reason
                  valid {
                    from
                    to
                  }
                  effective {
                    from
                    to
                  }
                  supersededBy {
                    id
                    object {
                      entity {
                        name
                      }
                    }
                  }
                  provenance {
                    externalId
                    text
                    occurredAt
                    thread
                  }
                  confidence
                  corroborations
                  assertedSeq
                }
              }
            }
            """)
        variables: dict[str, object] = {
            "namespace": namespace,
            "subject": subject,
            "predicate": predicate,
            "validAt": serialize_datetime(valid_at),
            "knownAt": serialize_datetime(known_at),
        }
        response = self.execute(
            query=query,
            operation_name="HistorySupersession",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return HistorySupersession.model_validate(data)

    def intentions(self, **kwargs: Any) -> Intentions:
        query = gql("""
            query Intentions {
              all: intentions(namespace: "plans", includeInactive: true) {
                id
                payload
                trigger
                at
                cue
                priority
                repeat
                status
                expiresAt
                entities {
                  name
                }
                firings {
                  at
                  episode {
                    text
                  }
                }
              }
              pending: intentions(namespace: "plans") {
                id
              }
              dueNow: dueIntentions(namespace: "plans", message: "Any news from Lisbon?") {
                reason
                entity {
                  name
                }
                intention {
                  payload
                  priority
                }
              }
              afterExpiry: dueIntentions(namespace: "plans", at: "2030-07-01") {
                intention {
                  payload
                }
              }
              context(
                namespace: "plans"
                message: "Shall we plan the Lisbon visit?"
                budget: 200
              ) {
                text
                intentions {
                  reason
                  intention {
                    payload
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query, operation_name="Intentions", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Intentions.model_validate(data)

    def known_at_system_time(self, **kwargs: Any) -> KnownAtSystemTime:
        query = gql("""
            query KnownAtSystemTime {
              history(
                namespace: "demo"
                subject: {name: "Alice"}
                predicate: "worksAt"
                validAt: "2013"
                knownAt: "2030-01-01T00:00:00.000006Z"
              ) {
                basis {
                  seq
                  systemTime
                }
                nodes {
                  object {
                    entity {
                      name
                    }
                  }
                  status
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query,
            operation_name="KnownAtSystemTime",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return KnownAtSystemTime.model_validate(data)

    def memory_consolidate(self, **kwargs: Any) -> MemoryConsolidate:
        query = gql("""
            mutation MemoryConsolidate {
              consolidate(
                namespace: "demo"
                at: "2030-03-31T23:59:59Z"
                dormantSince: "2030-03-31"
              ) {
                seq
                merged {
                  from {
                    name
                  }
                  into {
                    name
                  }
                }
                corroborated {
                  statements
                }
                dormant {
                  kind
                  dormantAt
                  fact {
                    predicate
                  }
                  entity {
                    name
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query,
            operation_name="MemoryConsolidate",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return MemoryConsolidate.model_validate(data)

    def memory_consolidate_merge(self, **kwargs: Any) -> MemoryConsolidateMerge:
        query = gql("""
            mutation MemoryConsolidateMerge {
              extracted: recordEpisode(
                namespace: "demo"
                episode: {text: "Lisa, that is Alice, knows Bob", occurredAt: "2016-02-01", externalId: "m9"}
                entities: [{name: "Lisa", aliases: ["Alice"], kind: "person"}]
                facts: [{subject: {name: "Lisa"}, predicate: "knows", object: {entity: {name: "Bob"}}, validFrom: "2011", validTo: "2020"}]
              ) {
                entities {
                  id
                  name
                }
              }
              consolidate(namespace: "demo", at: "2030-01-02") {
                seq
                merged {
                  from {
                    id
                    name
                  }
                  into {
                    id
                    name
                    aliases
                  }
                }
                corroborated {
                  statements
                  fact {
                    id
                    subject {
                      name
                    }
                    predicate
                    object {
                      entity {
                        name
                      }
                    }
                    corroborations
                    provenance {
                      externalId
                    }
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query,
            operation_name="MemoryConsolidateMerge",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return MemoryConsolidateMerge.model_validate(data)

    def memory_forecast(self, **kwargs: Any) -> MemoryForecast:
        query = gql("""
            query MemoryForecast {
              forecast(
                namespace: "demo"
                from: "2030-01-02"
                to: "2031-01-01"
                kinds: [FACT, ENTITY]
                validAt: "2016"
              ) {
                items {
                  kind
                  dormantAt
                  retention
                  episode {
                    externalId
                  }
                  fact {
                    predicate
                    object {
                      entity {
                        name
                      }
                    }
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query, operation_name="MemoryForecast", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return MemoryForecast.model_validate(data)

    def memory_profiles(self, **kwargs: Any) -> MemoryProfiles:
        query = gql("""
            mutation MemoryProfiles {
              configureNamespace(
                namespace: "demo"
                decay: {default: {initialStrength: 14, increment: 7, threshold: 0.05}, episode: {model: ACT_R, actrDecay: 0.5, threshold: 0.2}}
              ) {
                decay {
                  episode {
                    model
                    threshold
                    halfLifeSeconds
                  }
                  entity {
                    model
                    initialStrength
                    halfLifeSeconds
                  }
                  fact {
                    initialStrength
                    increment
                  }
                }
              }
              definePredicate(
                namespace: "demo"
                name: "chitchat"
                cardinality: MANY
                decay: {initialStrength: 1, diminishing: true}
              ) {
                predicate {
                  name
                  decay {
                    model
                    initialStrength
                    diminishing
                    halfLifeSeconds
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query, operation_name="MemoryProfiles", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return MemoryProfiles.model_validate(data)

    def memory_recall(self, **kwargs: Any) -> MemoryRecall:
        query = gql("""
            mutation MemoryRecall {
              recall(namespace: "demo", facts: ["1"], episodes: ["1"], at: "2010-03-20") {
                seq
                at
                records {
                  kind
                  retention
                  fact {
                    id
                    strength
                    recallCount
                    lastRecalledAt
                    recalledAt
                    retention(at: "2010-04-20")
                  }
                  episode {
                    externalId
                    strength
                    recallCount
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query, operation_name="MemoryRecall", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return MemoryRecall.model_validate(data)

    def memory_recallable(self, **kwargs: Any) -> MemoryRecallable:
        query = gql("""
            query MemoryRecallable {
              recallable(namespace: "demo", validAt: "2016", at: "2030-02-15", first: 6) {
                basis {
                  validAt
                  at
                }
                items {
                  kind
                  retention
                  fact {
                    subject {
                      name
                    }
                    predicate
                  }
                  entity {
                    name
                  }
                  episode {
                    externalId
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query,
            operation_name="MemoryRecallable",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return MemoryRecallable.model_validate(data)

    def memory_trace_fields(self, **kwargs: Any) -> MemoryTraceFields:
        query = gql("""
            query MemoryTraceFields {
              entity(namespace: "demo", name: "Alice", validAt: "2013", at: "2030-02-15") {
                basis {
                  validAt
                  at
                }
                facts {
                  predicate
                  object {
                    entity {
                      name
                    }
                  }
                  strength
                  retention
                  halfLife
                  recallCount
                  lastRecalledAt
                  dormant
                  laterRetention: retention(at: "2030-06-01")
                  provenance {
                    externalId
                    strength
                    retention
                    dormant
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query,
            operation_name="MemoryTraceFields",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return MemoryTraceFields.model_validate(data)

    def mutation_assert_facts(
        self, namespace: str, facts: list[FactInput], **kwargs: Any
    ) -> MutationAssertFacts:
        query = gql("""
            mutation MutationAssertFacts($namespace: String!, $facts: [FactInput!]!) {
              assertFacts(namespace: $namespace, facts: $facts) {
                seq
                facts {
                  id
                  predicate
                  polarity
                  object {
                    entity {
                      name
                    }
                  }
                  status
                }
                createdEntities {
                  id
                  name
                }
              }
            }
            """)
        variables: dict[str, object] = {"namespace": namespace, "facts": facts}
        response = self.execute(
            query=query,
            operation_name="MutationAssertFacts",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return MutationAssertFacts.model_validate(data)

    def mutation_define_and_configure(
        self, **kwargs: Any
    ) -> MutationDefineAndConfigure:
        query = gql("""
            mutation MutationDefineAndConfigure {
              definePredicate(
                namespace: "demo"
                name: "email"
                cardinality: MANY
                valueType: STRING
                description: "Addresses"
              ) {
                seq
                predicate {
                  name
                  cardinality
                  valueType
                  description
                }
              }
              configureNamespace(namespace: "demo", timeZone: "Europe/Paris") {
                name
                timeZone
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query,
            operation_name="MutationDefineAndConfigure",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return MutationDefineAndConfigure.model_validate(data)

    def mutation_end_and_retract(self, **kwargs: Any) -> MutationEndAndRetract:
        query = gql("""
            mutation MutationEndAndRetract {
              end: endFact(namespace: "demo", fact: "6", validTo: "2021-01-01") {
                seq
                facts {
                  id
                  valid {
                    from
                    to
                  }
                  status
                  reason
                }
              }
              retract: retractFact(namespace: "demo", fact: "10", reason: "wrong Carol") {
                seq
                facts {
                  id
                  status
                  reason
                  retractedSeq
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query,
            operation_name="MutationEndAndRetract",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return MutationEndAndRetract.model_validate(data)

    def erase_entity(
        self,
        namespace: str,
        id: str,
        reason: Union[Optional[str], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> EraseEntity:
        query = gql("""
            mutation EraseEntity($namespace: String!, $id: ID!, $reason: String) {
              eraseEntity(namespace: $namespace, id: $id, reason: $reason) {
                seq
                records {
                  kind
                  id
                  contentHash
                }
                batchesRewritten
              }
            }
            """)
        variables: dict[str, object] = {
            "namespace": namespace,
            "id": id,
            "reason": reason,
        }
        response = self.execute(
            query=query, operation_name="EraseEntity", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return EraseEntity.model_validate(data)

    def erase_entity_alice(self, **kwargs: Any) -> EraseEntityAlice:
        query = gql("""
            query EraseEntityAlice {
              facts(namespace: "demo", subject: {name: "Alice"}, includeAll: true) {
                edges {
                  node {
                    predicate
                    object {
                      entity {
                        name
                      }
                    }
                  }
                }
              }
              entities(namespace: "demo", knownAtSeq: 7) {
                edges {
                  node {
                    name
                  }
                }
              }
              erasures(namespace: "demo") {
                reason
                by
                records {
                  kind
                  id
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query,
            operation_name="EraseEntityAlice",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return EraseEntityAlice.model_validate(data)

    def erase_entity_bob(self, **kwargs: Any) -> EraseEntityBob:
        query = gql("""
            query EraseEntityBob {
              entity(namespace: "demo", id: "5") {
                name
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query, operation_name="EraseEntityBob", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return EraseEntityBob.model_validate(data)

    def erase_episodes(self, **kwargs: Any) -> EraseEpisodes:
        query = gql("""
            mutation EraseEpisodes {
              eraseEpisodes(namespace: "demo", ids: ["2"], reason: "retention") {
                records {
                  kind
                  id
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query, operation_name="EraseEpisodes", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return EraseEpisodes.model_validate(data)

    def erase_episodes_facts(self, **kwargs: Any) -> EraseEpisodesFacts:
        query = gql("""
            query EraseEpisodesFacts {
              facts(namespace: "demo", predicate: "worksAt") {
                edges {
                  node {
                    subject {
                      name
                    }
                    object {
                      entity {
                        name
                      }
                    }
                    provenance {
                      text
                    }
                    erasedProvenance {
                      kind
                      id
                      recordSeq
                      erasedInSeq
                    }
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query,
            operation_name="EraseEpisodesFacts",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return EraseEpisodesFacts.model_validate(data)

    def mutation_intentions(self, **kwargs: Any) -> MutationIntentions:
        query = gql("""
            mutation MutationIntentions {
              added: addIntention(
                namespace: "plans"
                payload: "Send Dana the photos"
                trigger: {entities: [{name: "Dana"}]}
                expiresAt: "2031"
              ) {
                id
                trigger
                status
                entities {
                  name
                }
                addedSeq
              }
              fired: fireDueIntentions(namespace: "plans") {
                seq
                fired {
                  payload
                  status
                  firings {
                    at
                    episode {
                      text
                    }
                  }
                }
              }
              again: fireDueIntentions(namespace: "plans") {
                seq
                fired {
                  payload
                }
              }
              cancelled: cancelIntention(namespace: "plans", id: "3", reason: "moved already") {
                payload
                status
              }
              twice: cancelIntention(namespace: "plans", id: "3") {
                status
              }
              unknown: cancelIntention(namespace: "plans", id: "99") {
                status
              }
              noEmbedder: addIntention(
                namespace: "plans"
                payload: "x"
                trigger: {cue: "cooking"}
              ) {
                id
              }
              twoKinds: addIntention(
                namespace: "plans"
                payload: "x"
                trigger: {at: "2031", cue: "cooking"}
              ) {
                id
              }
              badThreshold: addIntention(
                namespace: "plans"
                payload: "x"
                trigger: {cue: "c", cueVector: [1, 0], threshold: 1.5}
              ) {
                id
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query,
            operation_name="MutationIntentions",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return MutationIntentions.model_validate(data)

    def mutation_record_episode(
        self,
        namespace: str,
        episode: EpisodeInput,
        entities: Union[Optional[list[EntityInput]], UnsetType] = UNSET,
        facts: Union[Optional[list[FactInput]], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> MutationRecordEpisode:
        query = gql("""
            mutation MutationRecordEpisode($namespace: String!, $episode: EpisodeInput!, $entities: [EntityInput!] = [], $facts: [FactInput!] = []) {
              recordEpisode(
                namespace: $namespace
                episode: $episode
                entities: $entities
                facts: $facts
              ) {
                seq
                systemTime
                episode {
                  id
                  externalId
                  occurredAt
                }
                entities {
                  id
                  name
                  aliases
                  kind
                }
                facts {
                  id
                  subject {
                    name
                  }
                  object {
                    entity {
                      name
                    }
                  }
                  valid {
                    from
                    to
                  }
                  status
                  provenance {
                    externalId
                  }
                }
                createdEntities {
                  name
                }
                basis {
                  seq
                  validAt
                }
              }
            }
            """)
        variables: dict[str, object] = {
            "namespace": namespace,
            "episode": episode,
            "entities": entities,
            "facts": facts,
        }
        response = self.execute(
            query=query,
            operation_name="MutationRecordEpisode",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return MutationRecordEpisode.model_validate(data)

    def retention_keep(self, **kwargs: Any) -> RetentionKeep:
        query = gql("""
            mutation RetentionKeep {
              configureNamespace(namespace: "demo", retention: {episodesAfter: "P90D"}) {
                retention {
                  episodesAfter
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query, operation_name="RetentionKeep", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return RetentionKeep.model_validate(data)

    def retention_months(self, **kwargs: Any) -> RetentionMonths:
        query = gql("""
            mutation RetentionMonths {
              configureNamespace(namespace: "demo", retention: {episodesAfter: "P3M"}) {
                retention {
                  episodesAfter
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query, operation_name="RetentionMonths", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return RetentionMonths.model_validate(data)

    def mutation_segmentation(self, **kwargs: Any) -> MutationSegmentation:
        query = gql("""
            mutation MutationSegmentation {
              configureNamespace(
                namespace: "demo"
                segmentation: {threshold: 0.5, maxGapSeconds: 3600}
              ) {
                segmentation {
                  threshold
                  hysteresis
                  maxGapSeconds
                  minLength
                }
              }
              first: closeSegments(namespace: "demo") {
                seq
                closed {
                  thread
                  end
                  distance
                  episodes {
                    externalId
                  }
                }
              }
              again: closeSegments(namespace: "demo") {
                seq
                closed {
                  thread
                }
              }
              bad: configureNamespace(
                namespace: "demo"
                segmentation: {threshold: 0.5, hysteresis: 0.7}
              ) {
                segmentation {
                  threshold
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query,
            operation_name="MutationSegmentation",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return MutationSegmentation.model_validate(data)

    def namespace(self, name: str, **kwargs: Any) -> Namespace:
        query = gql("""
            query Namespace($name: String!) {
              namespace(name: $name) {
                name
                timeZone
                predicates {
                  name
                  cardinality
                  valueType
                  description
                }
                counts {
                  batches
                  episodes
                  entities
                  facts
                  predicates
                }
              }
            }
            """)
        variables: dict[str, object] = {"name": name}
        response = self.execute(
            query=query, operation_name="Namespace", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Namespace.model_validate(data)

    def neighbors(self, **kwargs: Any) -> Neighbors:
        query = gql("""
            query Neighbors {
              neighbors(namespace: "demo", entity: {name: "Alice"}, depth: 2, validAt: "2014") {
                basis {
                  seq
                  validAt
                }
                nodes {
                  entity {
                    name
                  }
                  distance
                }
                edges {
                  subject {
                    name
                  }
                  predicate
                  object {
                    entity {
                      name
                    }
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query, operation_name="Neighbors", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Neighbors.model_validate(data)

    def nested_at_parent_point(self, **kwargs: Any) -> NestedAtParentPoint:
        query = gql("""
            query NestedAtParentPoint {
              entity(namespace: "demo", name: "Alice", validAt: "2013", knownAtSeq: 7) {
                facts(predicate: "worksAt") {
                  object {
                    entity {
                      name
                      basis {
                        seq
                        validAt
                      }
                      incoming {
                        subject {
                          name
                        }
                        predicate
                        status
                      }
                    }
                  }
                  basis {
                    seq
                    validAt
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query,
            operation_name="NestedAtParentPoint",
            variables=variables,
            **kwargs,
        )
        data = self.get_data(response)
        return NestedAtParentPoint.model_validate(data)

    def remember(
        self,
        namespace: str,
        text: str,
        limit: Union[Optional[int], UnsetType] = UNSET,
        filter_: Union[Optional[SearchFilter], UnsetType] = UNSET,
        at: Union[Optional[DateTime], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> Remember:
        query = gql("""
            mutation Remember($namespace: String!, $text: String!, $limit: Int, $filter: SearchFilter, $at: DateTime) {
              remember(
                namespace: $namespace
                text: $text
                limit: $limit
                filter: $filter
                at: $at
              ) {
                seq
                result {
                  hits {
                    episode {
                      externalId
                      recallCount
                    }
                    explain {
                      retention
                    }
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {
            "namespace": namespace,
            "text": text,
            "limit": limit,
            "filter": filter_,
            "at": serialize_datetime(at),
        }
        response = self.execute(
            query=query, operation_name="Remember", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Remember.model_validate(data)

    def retract_fact(
        self,
        namespace: str,
        fact: str,
        reason: Union[Optional[str], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> RetractFact:
        query = gql("""
            mutation RetractFact($namespace: String!, $fact: ID!, $reason: String) {
              retractFact(namespace: $namespace, fact: $fact, reason: $reason) {
                seq
                facts {
                  id
                  status
                  reason
                  retractedSeq
                }
              }
            }
            """)
        variables: dict[str, object] = {
            "namespace": namespace,
            "fact": fact,
            "reason": reason,
        }
        response = self.execute(
            query=query, operation_name="RetractFact", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return RetractFact.model_validate(data)

    def retrieve(
        self,
        namespace: str,
        text: str,
        limit: Union[Optional[int], UnsetType] = UNSET,
        filter_: Union[Optional[SearchFilter], UnsetType] = UNSET,
        valid_at: Union[Optional[DateTime], UnsetType] = UNSET,
        known_at: Union[Optional[DateTime], UnsetType] = UNSET,
        at: Union[Optional[DateTime], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> Retrieve:
        query = gql("""
            query Retrieve($namespace: String!, $text: String!, $limit: Int, $filter: SearchFilter, $validAt: DateTime, $knownAt: DateTime, $at: DateTime) {
              search(
                namespace: $namespace
                text: $text
                limit: $limit
                filter: $filter
                validAt: $validAt
                knownAt: $knownAt
                at: $at
              ) {
                basis {
                  seq
                  validAt
                }
                hits {
                  kind
                  score
                  explain {
                    components {
                      component
                      rank
                      score
                    }
                    fused
                    relevance
                    retention
                    status
                  }
                  episode {
                    id
                    externalId
                    text
                    occurredAt
                    recordedAt
                    thread
                    role
                  }
                  fact {
                    id
                    subject {
                      name
                    }
                    predicate
                    object {
                      type
                      entity {
                        name
                      }
                      string
                      integer
                      float
                      boolean
                      time
                    }
                    valid {
                      from
                      to
                    }
                    status
                    reason
                    assertedAt
                    supersededBy {
                      id
                      predicate
                      object {
                        entity {
                          name
                        }
                        string
                        integer
                        float
                        boolean
                        time
                      }
                    }
                  }
                  entity {
                    id
                    name
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {
            "namespace": namespace,
            "text": text,
            "limit": limit,
            "filter": filter_,
            "validAt": serialize_datetime(valid_at),
            "knownAt": serialize_datetime(known_at),
            "at": serialize_datetime(at),
        }
        response = self.execute(
            query=query, operation_name="Retrieve", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Retrieve.model_validate(data)

    def search(
        self,
        namespace: str,
        text: str,
        limit: Union[Optional[int], UnsetType] = UNSET,
        filter_: Union[Optional[SearchFilter], UnsetType] = UNSET,
        valid_at: Union[Optional[DateTime], UnsetType] = UNSET,
        known_at: Union[Optional[DateTime], UnsetType] = UNSET,
        at: Union[Optional[DateTime], UnsetType] = UNSET,
        **kwargs: Any,
    ) -> Search:
        query = gql("""
            query Search($namespace: String!, $text: String!, $limit: Int, $filter: SearchFilter, $validAt: DateTime, $knownAt: DateTime, $at: DateTime) {
              search(
                namespace: $namespace
                text: $text
                limit: $limit
                filter: $filter
                validAt: $validAt
                knownAt: $knownAt
                at: $at
              ) {
                basis {
                  seq
                  validAt
                }
                hits {
                  kind
                  score
                  episode {
                    id
                    externalId
                    text
                    occurredAt
                  }
                  fact {
                    id
                    subject {
                      name
                    }
                    predicate
                    object {
                      type
                      entity {
                        name
                      }
                      string
                      integer
                    }
                    valid {
                      from
                      to
                    }
                    status
                  }
                  entity {
                    id
                    name
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {
            "namespace": namespace,
            "text": text,
            "limit": limit,
            "filter": filter_,
            "validAt": serialize_datetime(valid_at),
            "knownAt": serialize_datetime(known_at),
            "at": serialize_datetime(at),
        }
        response = self.execute(
            query=query, operation_name="Search", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Search.model_validate(data)

    def search_explain(self, **kwargs: Any) -> SearchExplain:
        query = gql("""
            query SearchExplain {
              now: search(
                namespace: "demo"
                text: "Where did Alice move?"
                limit: 6
                at: "2030-01-01"
              ) {
                basis {
                  seq
                  validAt
                  at
                }
                matchedEntities {
                  name
                }
                indexedSeq
                warnings
                hits {
                  kind
                  score
                  episode {
                    externalId
                    text
                  }
                  fact {
                    subject {
                      name
                    }
                    predicate
                    object {
                      entity {
                        name
                      }
                    }
                    status
                  }
                  entity {
                    name
                  }
                  explain {
                    components {
                      component
                      rank
                      score
                    }
                    fused
                    cue
                    retention
                    weight
                    relevance
                    mmr
                    status
                    dormant
                  }
                }
              }
              history: search(
                namespace: "demo"
                text: "Alice lives"
                filter: {kinds: [FACT], includeNotInForce: true}
              ) {
                hits {
                  fact {
                    object {
                      entity {
                        name
                      }
                    }
                    status
                  }
                  explain {
                    status
                  }
                }
              }
              episodesOfThread: search(
                namespace: "demo"
                text: "moved"
                filter: {kinds: [EPISODE], thread: "chat-2"}
              ) {
                hits {
                  episode {
                    externalId
                    thread
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query, operation_name="SearchExplain", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return SearchExplain.model_validate(data)

    def snapshot_page_1(self, **kwargs: Any) -> SnapshotPage1:
        query = gql("""
            query SnapshotPage1 {
              snapshot(namespace: "demo", validAt: "2016", first: 2) {
                basis {
                  seq
                  validAt
                }
                pageInfo {
                  hasNextPage
                  hasPreviousPage
                  endCursor
                }
                edges {
                  cursor
                  node {
                    subject {
                      name
                    }
                    predicate
                    object {
                      entity {
                        name
                      }
                    }
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query, operation_name="SnapshotPage1", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return SnapshotPage1.model_validate(data)

    def snapshot_page_2(self, **kwargs: Any) -> SnapshotPage2:
        query = gql("""
            query SnapshotPage2 {
              snapshot(
                namespace: "demo"
                validAt: "2016"
                knownAtSeq: 12
                first: 2
                after: "1.1.8"
              ) {
                pageInfo {
                  hasNextPage
                  hasPreviousPage
                  endCursor
                }
                edges {
                  cursor
                  node {
                    subject {
                      name
                    }
                    predicate
                    object {
                      entity {
                        name
                      }
                    }
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query, operation_name="SnapshotPage2", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return SnapshotPage2.model_validate(data)

    def sparql(self, **kwargs: Any) -> Sparql:
        query = gql("""
            query Sparql {
              livesWhere: sparql(
                namespace: "demo"
                validAt: "2016"
                query: "SELECT ?who ?city WHERE { ?p p:livesIn ?c . ?p rdfs:label ?who . ?c rdfs:label ?city } ORDER BY ?who"
              ) {
                form
                results
                basis {
                  seq
                  validAt
                }
              }
              alice: sparql(
                namespace: "demo"
                view: HISTORY
                validAt: "2016"
                query: "SELECT ?fact ?city ?status ?from ?to WHERE { ?fact rdf:reifies <<( ?a p:livesIn ?c )>> ; mn:status ?status ; mn:validFrom ?from . OPTIONAL { ?fact mn:validTo ?to } ?a rdfs:label \\"Alice\\" . ?c rdfs:label ?city } ORDER BY ?from"
              ) {
                form
                results
              }
              contradicted: sparql(
                namespace: "demo"
                view: HISTORY
                query: "ASK { ?f mn:status \\"CONTRADICTED\\" ; mn:beatenBy ?winner }"
              ) {
                form
                results
              }
              homes: sparql(
                namespace: "demo"
                validAt: "2016"
                query: "CONSTRUCT { ?p <urn:example:home> ?c } WHERE { ?p p:livesIn ?c }"
              ) {
                form
                graph
                statements
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query, operation_name="Sparql", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return Sparql.model_validate(data)

    def topics_close(self, **kwargs: Any) -> TopicsClose:
        query = gql("""
            mutation TopicsClose {
              closeSegments(namespace: "demo") {
                closed {
                  thread
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query, operation_name="TopicsClose", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return TopicsClose.model_validate(data)

    def topics_read(self, **kwargs: Any) -> TopicsRead:
        query = gql("""
            query TopicsRead {
              topics(namespace: "demo", at: "2030-01-01") {
                id
                label
                terms
                segmentCount
                members {
                  entity {
                    name
                  }
                  centrality
                }
                episodes {
                  externalId
                }
              }
              alice: entity(namespace: "demo", name: "Alice") {
                related {
                  entity {
                    name
                  }
                  weight
                  segments
                  similarity
                  retention
                }
                topic {
                  id
                }
              }
              london: entity(namespace: "demo", name: "London") {
                related {
                  entity {
                    name
                  }
                }
                topic {
                  id
                }
              }
              namespace(name: "demo") {
                segmentation {
                  threshold
                  hysteresis
                  maxGapSeconds
                  minLength
                }
              }
              topicSearch: search(
                namespace: "demo"
                text: "Where does Alice live?"
                filter: {kinds: [TOPIC]}
                at: "2030-01-01"
              ) {
                hits {
                  kind
                }
                topics {
                  score
                  topic {
                    id
                    label
                  }
                }
              }
              inside: search(
                namespace: "demo"
                text: "Alice moved"
                filter: {topics: 1, kinds: [EPISODE, ENTITY]}
                at: "2030-01-01"
              ) {
                hits {
                  kind
                  episode {
                    externalId
                  }
                  entity {
                    name
                  }
                }
                topics {
                  topic {
                    id
                  }
                }
              }
              everywhere: search(
                namespace: "demo"
                text: "Alice moved"
                filter: {kinds: [EPISODE, ENTITY]}
                at: "2030-01-01"
              ) {
                hits {
                  kind
                  episode {
                    externalId
                  }
                  entity {
                    name
                  }
                }
              }
            }
            """)
        variables: dict[str, object] = {}
        response = self.execute(
            query=query, operation_name="TopicsRead", variables=variables, **kwargs
        )
        data = self.get_data(response)
        return TopicsRead.model_validate(data)
