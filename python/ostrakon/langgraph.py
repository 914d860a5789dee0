"""A LangGraph store (`langgraph.store.base.BaseStore`) kept in Ostrakon: `pip install
"ostrakon[langgraph]"`, then `OstrakonStore(ostrakon.open("memory"))` wherever LangGraph
takes a store (`create_react_agent(..., store=store)`, `graph.compile(store=store)`).

How items are kept — all of one store in one Ostrakon namespace (`namespace=`, default
`langgraph`), so that GraphiQL, the timeline and SPARQL see them too:

- an item `(namespace tuple, key)` is an entity named `lg:` + the hex of the JSON array
  `[*namespace, key]` (Ostrakon matches names without case; hex keeps keys exact);
- its value is the fact `lg.value` (cardinality ONE, a JSON string): each `put` asserts a
  new value, which supersedes the last from then on; a delete asserts `null`; a `ttl`
  is the value's end of validity, so an expired item is simply no longer in force;
- the text of its `index` fields is the fact `lg.text`, which search ranks;
- when it was first put is the fact `lg.created`.

Nothing is overwritten: `store.as_of(known_at=...)` is a read-only store answering as
the memory knew it then, and `store.history(namespace, key)` lists every value an item
had. A batch reads first (all its gets, searches and listings see the state before its
writes), then writes every put in one atomic Ostrakon batch.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import json
from typing import Any, Iterable

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)
from langgraph.store.base.embed import get_text_at_path

from ._client import AsyncClient, Client
from .errors import OstrakonError
from ._scalars import parse_datetime

VALUE, TEXT, CREATED = "lg.value", "lg.text", "lg.created"
PAGE = 1000  # the server's largest page
GETS_PER_REQUEST = 30  # each get is three aliases; the server takes 100 per request


def entity_name(namespace: tuple[str, ...], key: str) -> str:
    """The entity an item is kept on."""
    return "lg:" + json.dumps([*namespace, key], ensure_ascii=False).encode().hex()


def item_path(name: str) -> tuple[tuple[str, ...], str] | None:
    """The item an entity name keeps, or None for an entity that is not an item."""
    if not name.startswith("lg:"):
        return None
    try:
        path = json.loads(bytes.fromhex(name[3:]).decode())
    except ValueError:
        return None
    return tuple(path[:-1]), path[-1]


class OstrakonStore(BaseStore):
    """LangGraph's `BaseStore` over an Ostrakon client (in-process or HTTP)."""

    supports_ttl = True

    def __init__(
        self,
        client: Client,
        *,
        namespace: str = "langgraph",
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        known_at: _dt.datetime | None = None,
    ) -> None:
        self.client = client
        self.namespace = namespace
        self.index_config = index
        # Reading does not extend an item's life here: a ttl is its end of validity.
        self.ttl_config = TTLConfig(**{**(ttl or {}), "refresh_on_read": False})  # type: ignore[typeddict-item]
        self._known_at = known_at
        self._declared = False

    # -- what Ostrakon adds -------------------------------------------------------------

    def as_of(self, known_at: _dt.datetime) -> "OstrakonStore":
        """A read-only store that answers as the memory knew it at `known_at` (aware)."""
        if known_at.tzinfo is None:
            raise ValueError("known_at must be an aware datetime")
        return OstrakonStore(self.client, namespace=self.namespace, index=self.index_config, known_at=known_at)

    def history(self, namespace: tuple[str, ...], key: str) -> list[Item | None]:
        """Every value the item had, oldest first (None where it was deleted)."""
        data = self.client.execute(
            "query LgHistory($ns: String!, $name: String!, $knownAt: DateTime) { entity(namespace: $ns, name: $name, knownAt: $knownAt) "
            f'{{ history(predicate: "{VALUE}", first: {PAGE}) {{ object {{ string }} valid {{ from }} }} }} }}',
            {"ns": self.namespace, "name": entity_name(namespace, key), "knownAt": self._known_at},
        )
        versions = (data["entity"] or {}).get("history") or []
        created = versions[0]["valid"]["from"] if versions else None
        out: list[Item | None] = []
        for v in versions:
            value = json.loads(v["object"]["string"])
            out.append(None if value is None else Item(value=value, key=key, namespace=namespace,
                                                       created_at=parse_datetime(created), updated_at=parse_datetime(v["valid"]["from"])))
        return out

    # -- BaseStore ------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        results: list[Result] = [None] * len(ops)
        gets = [(i, op) for i, op in enumerate(ops) if isinstance(op, GetOp)]
        for start in range(0, len(gets), GETS_PER_REQUEST):
            chunk = gets[start:start + GETS_PER_REQUEST]
            for (i, _), item in zip(chunk, self._get_many([(op.namespace, op.key) for _, op in chunk])):
                results[i] = item
        every: list[Item] | None = None
        for i, op in enumerate(ops):
            if isinstance(op, SearchOp):
                if every is None:
                    every = self._all_items()
                results[i] = self._search(op, every)
            elif isinstance(op, ListNamespacesOp):
                if every is None:
                    every = self._all_items()
                results[i] = _list_namespaces(op, every)
        puts = [op for op in ops if isinstance(op, PutOp)]
        if puts:
            self._put_many(puts)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    # -- reads ------------------------------------------------------------------------------

    def _read_point(self) -> dict[str, Any]:
        return {"knownAt": self._known_at}

    def _get_many(self, paths: list[tuple[tuple[str, ...], str]]) -> list[Item | None]:
        fields = []
        variables: dict[str, Any] = {"ns": self.namespace, **self._read_point()}
        for n, (namespace, key) in enumerate(paths):
            variables[f"n{n}"] = entity_name(namespace, key)
            fields.append(
                f"g{n}: entity(namespace: $ns, name: $n{n}, knownAt: $knownAt) {{ "
                f'v: facts(predicate: "{VALUE}") {{ object {{ string }} valid {{ from }} }} '
                f'c: facts(predicate: "{CREATED}") {{ object {{ string }} valid {{ from }} }} }}'
            )
        declared = "".join(f", $n{n}: String!" for n in range(len(paths)))
        data = self.client.execute(f"query LgGet($ns: String!, $knownAt: DateTime{declared}) {{ {' '.join(fields)} }}", variables)
        out: list[Item | None] = []
        for n, (namespace, key) in enumerate(paths):
            found = data[f"g{n}"]
            out.append(_item(namespace, key, found["v"], found["c"]) if found else None)
        return out

    def _all_items(self) -> list[Item]:
        """Every item in force at the read point (a scan of the store's namespace)."""
        values = self._scan(VALUE, "object { string } valid { from }")
        created = {f["subject"]["name"]: f for f in self._scan(CREATED, "object { string } valid { from }")}
        by_item: dict[str, list[dict[str, Any]]] = {}
        for fact in values:
            by_item.setdefault(fact["subject"]["name"], []).append(fact)
        items = []
        for name, facts in by_item.items():
            path = item_path(name)
            if path is None:
                continue
            item = _item(path[0], path[1], facts, [created[name]] if name in created else [])
            if item is not None:
                items.append(item)
        return items

    def _scan(self, predicate: str, fields: str) -> list[dict[str, Any]]:
        out, after = [], None
        query = (
            "query LgScan($ns: String!, $p: String!, $after: String, $knownAt: DateTime) { "
            f"facts(namespace: $ns, predicate: $p, first: {PAGE}, after: $after, knownAt: $knownAt) "
            f"{{ pageInfo {{ hasNextPage endCursor }} nodes {{ subject {{ name }} {fields} }} }} }}"
        )
        while True:
            try:
                page = self.client.execute(query, {"ns": self.namespace, "p": predicate, "after": after, **self._read_point()})["facts"]
            except OstrakonError as e:  # a namespace this store never wrote to
                if e.code == "UNKNOWN_PREDICATE":
                    return []
                raise
            out.extend(page["nodes"])
            if not page["pageInfo"]["hasNextPage"]:
                return out
            after = page["pageInfo"]["endCursor"]

    def _search(self, op: SearchOp, every: list[Item]) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)  # BaseStore.search passes a list as given
        candidates = [i for i in every if i.namespace[: len(prefix)] == prefix and _matches(i.value, op.filter or {})]
        scores: dict[tuple[tuple[str, ...], str], float] = {}
        if op.query:
            for hit in self._ranked(op.query):
                scores.setdefault(hit[0], hit[1])
            ranked = sorted((c for c in candidates if (c.namespace, c.key) in scores),
                            key=lambda c: -scores[(c.namespace, c.key)])
            # What search did not rank comes after, as in LangGraph's stores.
            rest = sorted((c for c in candidates if (c.namespace, c.key) not in scores), key=lambda c: c.updated_at, reverse=True)
            ordered = ranked + rest
        else:
            ordered = sorted(candidates, key=lambda c: c.updated_at, reverse=True)
        page = ordered[op.offset: op.offset + op.limit]
        return [SearchItem(i.namespace, i.key, i.value, i.created_at, i.updated_at, scores.get((i.namespace, i.key))) for i in page]

    def _ranked(self, text: str) -> list[tuple[tuple[tuple[str, ...], str], float]]:
        data = self.client.execute(
            "query LgSearch($ns: String!, $text: String!, $knownAt: DateTime) { search(namespace: $ns, text: $text, limit: 200, "
            f'knownAt: $knownAt, filter: {{ kinds: [FACT], predicate: "{TEXT}" }}) '
            "{ hits { score fact { subject { name } object { string } } } } }",
            {"ns": self.namespace, "text": text, **self._read_point()},
        )
        out = []
        for hit in data["search"]["hits"]:
            fact = hit.get("fact") or {}
            path = item_path((fact.get("subject") or {}).get("name", ""))
            # A fact is searched as a sentence, subject and predicate too: an item without
            # text (put with index=False) would be found by the word "text".
            if path is not None and (fact.get("object") or {}).get("string"):
                out.append((path, float(hit["score"])))
        return out

    # -- writes -----------------------------------------------------------------------------

    def _put_many(self, puts: list[PutOp]) -> None:
        if self._known_at is not None:
            raise PermissionError("a store read as of a past time is read-only")
        last: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in puts:  # within a batch the last put of a key wins
            _check_namespace(op.namespace)
            last[(op.namespace, op.key)] = op
        self._declare()
        existing = {}
        paths = list(last)
        for start in range(0, len(paths), GETS_PER_REQUEST):
            chunk = paths[start:start + GETS_PER_REQUEST]
            existing.update(zip(chunk, self._get_many(chunk)))
        now = _dt.datetime.now(_dt.timezone.utc)
        facts: list[dict[str, Any]] = []
        for (namespace, key), op in last.items():
            subject = {"name": entity_name(namespace, key)}
            fact: dict[str, Any] = {"subject": subject, "predicate": VALUE, "object": {"string": json.dumps(op.value)}}
            if op.value is not None and op.ttl is not None:
                fact["validTo"] = (now + _dt.timedelta(minutes=op.ttl)).isoformat()
            facts.append(fact)
            if op.value is not None and existing.get((namespace, key)) is None:
                facts.append({"subject": subject, "predicate": CREATED, "object": {"string": "1"}})
            text = self._text(op)
            if text is not None:
                facts.append({"subject": subject, "predicate": TEXT, "object": {"string": text}})
        self.client.execute(
            "mutation LgPut($ns: String!, $facts: [FactInput!]!) { assertFacts(namespace: $ns, facts: $facts) { seq } }",
            {"ns": self.namespace, "facts": facts},
        )

    def _text(self, op: PutOp) -> str | None:
        """The text search ranks the item by; "" when it has none, None to leave it."""
        if op.value is None or op.index is False:
            return ""
        # Without an index config the whole value is indexed: Ostrakon embeds and ranks
        # text itself, so every store can search.
        paths = op.index if isinstance(op.index, list) else list((self.index_config or {}).get("fields") or ["$"])
        texts = [t for p in paths for t in (get_text_at_path(op.value, p) if p != "$" else [json.dumps(op.value, ensure_ascii=False)])]
        return "\n".join(texts)

    def _declare(self) -> None:
        if self._declared:
            return
        preds = self.client.execute("query LgDeclared($ns: String!) { namespace(name: $ns) { predicates { name } } }", {"ns": self.namespace})
        have = {p["name"] for p in preds["namespace"]["predicates"]}
        missing = [p for p in (VALUE, TEXT, CREATED) if p not in have]
        if missing:
            fields = " ".join(
                f'd{n}: definePredicate(namespace: $ns, name: "{p}", cardinality: ONE, valueType: STRING) {{ seq }}'
                for n, p in enumerate(missing)
            )
            self.client.execute(f"mutation LgDefine($ns: String!) {{ {fields} }}", {"ns": self.namespace})
        self._declared = True


class AsyncOstrakonStore(OstrakonStore):
    """`OstrakonStore` over an `AsyncClient` (`ostrakon.open_async`, `connect_async`): its
    calls run the synchronous client in a worker thread."""

    def __init__(self, client: AsyncClient, **kwargs: Any) -> None:
        super().__init__(client._client, **kwargs)


def _item(namespace: tuple[str, ...], key: str, values: list[dict[str, Any]], created: list[dict[str, Any]]) -> Item | None:
    if not values:
        return None
    # Putting the same value again states it again from a later time: the two facts do
    # not compete (one value at a time still holds), and both are in force; the item is
    # the latest statement.
    latest = max(values, key=lambda v: parse_datetime(v["valid"]["from"]))
    value = json.loads(latest["object"]["string"])
    if value is None:
        return None
    updated = parse_datetime(latest["valid"]["from"])
    first = min(updated, parse_datetime(created[0]["valid"]["from"])) if created else updated
    return Item(value=value, key=key, namespace=namespace, created_at=first, updated_at=updated)


def _check_namespace(namespace: tuple[str, ...]) -> None:
    from langgraph.store.base import InvalidNamespaceError

    if not namespace:
        raise InvalidNamespaceError("Namespace cannot be empty.")
    for label in namespace:
        if not isinstance(label, str) or not label or "." in label:
            raise InvalidNamespaceError(f"Invalid namespace label {label!r}: labels are non-empty strings without periods.")


def _matches(value: dict[str, Any], filter: dict[str, Any]) -> bool:
    """LangGraph's filter: top-level keys, equality or `$eq $ne $gt $gte $lt $lte`."""
    for key, wanted in filter.items():
        have = value.get(key)
        if isinstance(wanted, dict) and wanted and all(k.startswith("$") for k in wanted):
            for operator, operand in wanted.items():
                if not _compare(have, operator, operand):
                    return False
        elif have != wanted:
            return False
    return True


def _compare(have: Any, operator: str, operand: Any) -> bool:
    if operator == "$eq":
        return have == operand
    if operator == "$ne":
        return have != operand
    if have is None:
        return False
    try:
        if operator == "$gt":
            return have > operand
        if operator == "$gte":
            return have >= operand
        if operator == "$lt":
            return have < operand
        if operator == "$lte":
            return have <= operand
    except TypeError:
        return False
    raise ValueError(f"unsupported filter operator {operator!r}: $eq, $ne, $gt, $gte, $lt, $lte")


def _list_namespaces(op: ListNamespacesOp, every: list[Item]) -> list[tuple[str, ...]]:
    found = {i.namespace for i in every}

    def fits(namespace: tuple[str, ...], path: tuple[str, ...], suffix: bool) -> bool:
        if len(namespace) < len(path):
            return False
        part = namespace[len(namespace) - len(path):] if suffix else namespace[: len(path)]
        return all(p == "*" or p == n for p, n in zip(path, part))

    kept = [n for n in found if all(fits(n, c.path, c.match_type == "suffix") for c in (op.match_conditions or ()))]
    if op.max_depth is not None:
        kept = list({n[: op.max_depth] for n in kept})
    kept.sort()
    return kept[op.offset: op.offset + op.limit]
