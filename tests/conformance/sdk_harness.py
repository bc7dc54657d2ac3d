"""Shared pieces for driving the conformance datasets through the real azure-cosmos SDK.

- `Harness.start()`: one emulator, one SDK client with a client-level `raw_response_hook`, and the
  datasets loaded into 4-partition containers (`{dataset}_pk` keyed on `/pk`, `main_hier` keyed on
  `/tenant`,`/user` MultiHash) and, on request, one-partition containers (`{dataset}_one`). The "main"
  containers carry the composite index (user ASC, n DESC) a real account needs for case order_by_two_keys.
- `Recorder`: what the hook saw, query bodies included; `data_pages()` are the query pages that returned
  data (POST .../docs with `x-ms-documentdb-isquery`, status 200, not the query-plan request).
- `classify_routing()`: a deliberately simple, regex-level reading of which partition keys a query's
  WHERE clause pins. It is independent of the emulator's code on purpose: a top-level AND-conjunction
  of `<alias>.<key> = <literal|@param>` or `<alias>.<key> IN (...)`; anything it cannot read is
  "undecided", and a WHERE clause that never mentions the first key path fans out to all ranges.
- `needs_single_partition()`: the class of queries the SDK cannot run cross-partition (GROUP BY, or
  an aggregate that is not the whole `SELECT VALUE <AGG>(...)` expression).
- EPK arithmetic uses the SDK's own `PartitionKey._get_epk_range_for_partition_key`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from azure.cosmos import ContainerProxy, CosmosClient, PartitionKey, exceptions

from emulator.rest.server import RunningEmulator, open_engine, start_in_thread
from tests import rawhttp
from tests.conformance.compare import normalize
from tests.conformance.dataset import DATASETS

THROUGHPUT = 24_000  # 4 physical partitions (P6: ceil(24,000 / 6,000))
ONE_RANGE_THROUGHPUT = 400  # 1 physical partition
# A multi-key ORDER BY needs a composite index in the service (case order_by_two_keys), as on a real account.
MAIN_INDEXING_POLICY = {
    "indexingMode": "consistent",
    "automatic": True,
    "includedPaths": [{"path": "/*"}],
    "excludedPaths": [{"path": '/"_etag"/?'}],
    "compositeIndexes": [[{"path": "/user", "order": "ascending"}, {"path": "/n", "order": "descending"}]],
}
HASH_PATHS = ["pk"]
HIER_PATHS = ["tenant", "user"]


# -- what the SDK sent and got -------------------------------------------------------------------
@dataclass
class Call:
    method: str
    path: str
    status: int
    request_headers: dict[str, str]
    response_headers: dict[str, str]
    body: bytes = b""

    @property
    def documents(self) -> list:
        """The rows of a query page as the emulator sent them (before the SDK's client-side operators)."""
        return json.loads(self.body)["Documents"]

    @property
    def is_query(self) -> bool:
        h = self.request_headers
        return (
            self.method == "POST"
            and self.path.rstrip("/").endswith("/docs")
            and h.get("x-ms-documentdb-isquery", "").lower() == "true"
            and h.get("x-ms-cosmos-is-query-plan-request", "").lower() != "true"
        )

    @property
    def is_plan(self) -> bool:
        return self.request_headers.get("x-ms-cosmos-is-query-plan-request", "").lower() == "true"

    @property
    def range_id(self) -> str | None:
        return self.response_headers.get("x-ms-documentdb-partitionkeyrangeid")

    @property
    def charge(self) -> float:
        return float(self.response_headers.get("x-ms-request-charge", "nan"))


class Recorder:
    """A client-level raw_response_hook: sees every HTTP response of the client."""

    def __init__(self) -> None:
        self.calls: list[Call] = []

    def __call__(self, pipeline_response: Any) -> None:
        req, resp = pipeline_response.http_request, pipeline_response.http_response
        path = "/" + req.url.split("://", 1)[-1].split("/", 1)[-1].split("?", 1)[0]
        body = resp.body() if req.method == "POST" and path.rstrip("/").endswith("/docs") else b""
        self.calls.append(
            Call(
                req.method,
                path,
                resp.status_code,
                {k.lower(): v for k, v in req.headers.items()},
                {k.lower(): v for k, v in resp.headers.items()},
                body,
            )
        )

    def clear(self) -> None:
        self.calls.clear()

    def for_container(self, name: str) -> list[Call]:
        return [c for c in self.calls if f"/colls/{name}/" in c.path + "/"]

    def data_pages(self, name: str) -> list[Call]:
        return [c for c in self.for_container(name) if c.is_query and c.status == 200]

    def ranges_called(self, name: str) -> set[str]:
        """The pkranges that served this container's query pages (the response header), checked
        against the request header where the SDK routed the page itself."""
        pages = self.data_pages(name)
        for c in pages:
            assert c.range_id is not None, f"query page without x-ms-documentdb-partitionkeyrangeid: {c}"
            sent = c.request_headers.get("x-ms-documentdb-partitionkeyrangeid")
            assert sent is None or sent == c.range_id, f"page routed to range {sent} answered as {c.range_id}"
        return {c.range_id for c in pages}  # type: ignore[misc]


# -- containers and their routing maps -----------------------------------------------------------
@dataclass
class Target:
    """One container of the harness: its dataset, key paths, SDK proxy and routing map."""

    name: str
    dataset: str
    paths: list[str]
    container: ContainerProxy
    ranges: list[dict] = field(default_factory=list)  # id, minInclusive, maxExclusive

    @property
    def docs(self) -> list[dict]:
        return DATASETS[self.dataset]

    @property
    def hierarchical(self) -> bool:
        return len(self.paths) > 1

    @property
    def partition_key(self) -> PartitionKey:
        if self.hierarchical:
            return PartitionKey(path=[f"/{p}" for p in self.paths], kind="MultiHash")
        return PartitionKey(path=f"/{self.paths[0]}")

    @property
    def all_ranges(self) -> set[str]:
        return {r["id"] for r in self.ranges}

    def key_of(self, doc: dict) -> Any:
        """The document's partition-key value as the SDK takes it (a list for hierarchical keys)."""
        values = [doc.get(p) for p in self.paths]
        return values if self.hierarchical else values[0]

    def epk_range(self, key: Any) -> tuple[str, str, bool]:
        """(min, max, is_point) of a key or hierarchical prefix, computed by the SDK's own code."""
        rng = self.partition_key._get_epk_range_for_partition_key(key)
        return str(rng.min).upper(), str(rng.max).upper(), rng.min == rng.max

    def ranges_for(self, key: Any) -> set[str]:
        """The pkranges owning a full key (one) or overlapping a hierarchical prefix (one or more)."""
        lo, hi, point = self.epk_range(key)
        out = set()
        for r in self.ranges:
            rmin, rmax = r["minInclusive"].upper(), r["maxExclusive"].upper()
            if point:
                if rmin <= lo < rmax:
                    out.add(r["id"])
            elif rmin < hi and lo < rmax:
                out.add(r["id"])
        assert out, f"no range for {key!r}"
        return out

    def range_of_doc(self, doc: dict) -> str:
        (rid,) = self.ranges_for(self.key_of(doc))
        return rid


class Harness:
    """One emulator, one recording client, the datasets loaded into 4-partition containers."""

    def __init__(self, emu: RunningEmulator) -> None:
        self.emu = emu
        self.recorder = Recorder()
        self.client = CosmosClient(emu.url, credential=emu.key, raw_response_hook=self.recorder)
        self.db = self.client.create_database("conformance")
        self.targets: dict[str, Target] = {}

    @classmethod
    def start(
        cls, *, datasets: Iterable[str] = tuple(DATASETS), hierarchical: bool = True, one_range: Iterable[str] = ()
    ) -> Harness:
        """`{dataset}_pk` per dataset, `main_hier` and `{dataset}_one` (one physical partition) as asked."""
        h = cls(start_in_thread(open_engine()))
        for dataset in datasets:
            h.add(f"{dataset}_pk", dataset, HASH_PATHS)
        if hierarchical:
            h.add("main_hier", "main", HIER_PATHS)
        for dataset in one_range:
            h.add(f"{dataset}_one", dataset, HASH_PATHS, throughput=ONE_RANGE_THROUGHPUT)
        return h

    def add(self, name: str, dataset: str, paths: list[str], throughput: int = THROUGHPUT) -> Target:
        probe = Target(name, dataset, paths, None)  # type: ignore[arg-type]
        policy = MAIN_INDEXING_POLICY if dataset == "main" else None
        container = self.db.create_container(
            name, probe.partition_key, offer_throughput=throughput, indexing_policy=policy
        )
        for doc in DATASETS[dataset]:
            container.create_item(doc)
        _, _, body = rawhttp.request(self.emu.url, self.emu.key, "GET", f"/dbs/conformance/colls/{name}/pkranges/")
        target = Target(name, dataset, paths, container, body["PartitionKeyRanges"])  # type: ignore[index]
        self.targets[name] = target
        return target

    def stop(self) -> None:
        self.emu.stop()

    def query(self, target: Target, sql: str, params: dict | None = None, **kwargs: Any) -> list:
        """Run a query through the SDK and drain it; the recorder holds only this query's calls."""
        self.recorder.clear()
        parameters = [{"name": k, "value": v} for k, v in (params or {}).items()]
        if "partition_key" not in kwargs and "feed_range" not in kwargs:
            kwargs["enable_cross_partition_query"] = True
        return list(target.container.query_items(sql, parameters=parameters or None, **kwargs))


# -- comparing rows ---------------------------------------------------------------------------------
SYSTEM_PROPERTIES = ("_rid", "_self", "_etag", "_attachments", "_ts")


def strip_system(row: Any) -> Any:
    """Whole documents come back with the service's system properties; the datasets have none."""
    if isinstance(row, dict) and "_rid" in row:
        return {k: v for k, v in row.items() if k not in SYSTEM_PROPERTIES}
    return row


def canonical(rows: Iterable) -> list:
    return normalize(json.loads(json.dumps([strip_system(r) for r in rows])))


def assert_rows(actual: list, expected: list, ordered: bool, context: str = "") -> None:
    a, e = canonical(actual), canonical(expected)
    if not ordered:
        key = lambda v: json.dumps(v, sort_keys=True)  # noqa: E731
        a, e = sorted(a, key=key), sorted(e, key=key)
    assert a == e, f"{context}\nexpected {json.dumps(e)}\n  actual {json.dumps(a)}"


def error_texts(err: exceptions.CosmosHttpResponseError) -> str:
    """The error's text with JSON string escapes undone once (the body nests JSON in a string)."""
    text = str(err)
    return text + "\n" + text.replace('\\"', '"').replace("\\\\", "\\")


def syntax_errors(err: exceptions.CosmosHttpResponseError) -> list[dict]:
    """The `{"errors":[...]}` list embedded in a query-compiler error message."""
    text = error_texts(err)
    start = text.find('{"errors":')
    assert start >= 0, f"no errors list in {text!r}"
    decoded, _ = json.JSONDecoder().raw_decode(text[start:])
    return decoded["errors"]


# -- the deliberately simple routing classifier --------------------------------------------------
CLAUSE_WORDS = {"WHERE", "JOIN", "ORDER", "GROUP", "OFFSET", "IN"}
AGGREGATES = r"\b(COUNT|SUM|MIN|MAX|AVG)\s*\("


@dataclass(frozen=True)
class Routing:
    """What a query's WHERE clause pins: "all" ranges, full "keys", hierarchical "prefix"es, or "undecided"."""

    kind: str
    values: tuple = ()

    def expected_ranges(self, target: Target) -> set[str] | None:
        if self.kind == "all":
            return target.all_ranges
        if self.kind in ("keys", "prefix"):
            return set().union(*(target.ranges_for(list(v) if isinstance(v, tuple) else v) for v in self.values))
        return None


def strip_subqueries(sql: str) -> str:
    """The SQL with every parenthesised group that starts with SELECT replaced by `(…)`."""
    out, i = [], 0
    while i < len(sql):
        m = re.compile(r"\(\s*SELECT\b", re.I).search(sql, i)
        if not m:
            out.append(sql[i:])
            break
        out.append(sql[i : m.start()])
        depth, j = 0, m.start()
        while j < len(sql):
            depth += {"(": 1, ")": -1}.get(sql[j], 0)
            j += 1
            if depth == 0:
                break
        out.append("(…)")
        i = j
    return "".join(out)


def needs_single_partition(sql: str) -> bool:
    """GROUP BY, or an aggregate that is not the whole `SELECT [DISTINCT] [TOP n] VALUE AGG(...)`."""
    top = strip_subqueries(sql)
    if re.search(r"\bGROUP\s+BY\b", top, re.I):
        return True
    m = re.match(r"\s*SELECT\s+(.*?)(\bFROM\b|$)", top, re.I | re.S)
    select_list = m.group(1) if m else top
    if not re.search(AGGREGATES, select_list, re.I):
        return False
    v = re.match(r"\s*(DISTINCT\s+)?(TOP\s+\S+\s+)?VALUE\s+" + AGGREGATES + r"(.*)$", select_list, re.I | re.S)
    if not v:
        return True
    rest, depth = "(" + v.group(4), 0  # the aggregate call must close at the end of the select list
    for pos, ch in enumerate(rest):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0:
            return rest[pos + 1 :].strip() != ""
    return True


def root_alias(sql: str) -> str | None:
    if len(re.findall(r"\bSELECT\b", sql, re.I)) != 1:
        return None  # subqueries: undecided
    m = re.search(r"\bFROM\s+(\w+)", sql, re.I)
    if not m or sql[m.end() : m.end() + 1] in (".", "["):
        return None  # no FROM, or FROM over a subroot
    after = re.match(r"\s+(?:AS\s+)?(\w+)", sql[m.end() :], re.I)
    if after and after.group(1).upper() == "IN":
        return None  # FROM x IN c.arr
    if after and after.group(1).upper() not in CLAUSE_WORDS:
        return after.group(1)
    return m.group(1)


def group_by_expressions(sql: str) -> list[str]:
    m = re.search(r"\bGROUP\s+BY\b(.*?)(?=\bORDER\s+BY\b|\bOFFSET\b|$)", strip_subqueries(sql), re.I | re.S)
    return [e.lower() for e in _split_top(m.group(1), ",")] if m else []


def _where(sql: str) -> str:
    m = re.search(r"\bWHERE\b(.*?)(?=\bORDER\s+BY\b|\bGROUP\s+BY\b|\bOFFSET\b|$)", sql, re.I | re.S)
    return m.group(1).strip() if m else ""


def _split_top(expr: str, sep: str) -> list[str]:
    """Split on a keyword at paren depth 0 outside string literals (BETWEEN's AND is not a split)."""
    parts, depth, quote, start, i, between = [], 0, "", 0, 0, False
    while i < len(expr):
        ch = expr[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and re.match(r"\bBETWEEN\b", expr[i:], re.I) and (i == 0 or not expr[i - 1].isalnum()):
            between = True
        elif depth == 0 and (
            ch == sep if sep == "," else re.match(rf"{sep}\b", expr[i:], re.I) and (i == 0 or not expr[i - 1].isalnum())
        ):
            if between:
                between = False
            else:
                parts.append(expr[start:i])
                start = i + len(sep)
        i += 1
    parts.append(expr[start:])
    return [p.strip() for p in parts]


def _unwrap(expr: str) -> str:
    while expr.startswith("(") and expr.endswith(")"):
        depth = 0
        for pos, ch in enumerate(expr):
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth == 0 and pos < len(expr) - 1:
                return expr  # "(a) AND (b)": the first paren closes early
        expr = expr[1:-1].strip()
    return expr


def _conjuncts(expr: str) -> list[str]:
    out = []
    for part in _split_top(_unwrap(expr), "AND"):
        inner = _unwrap(part)
        out.extend(_conjuncts(inner) if inner != part else [part])
    return out


_NO_VALUE = object()


def _literal(token: str, params: dict) -> Any:
    token = token.strip()
    if re.fullmatch(r"'[^'\\]*'|\"[^\"\\]*\"", token):
        return token[1:-1]
    if token.startswith("@"):
        return params.get(token, _NO_VALUE)
    if re.fullmatch(r"-?\d+(\.\d+)?", token):
        return json.loads(token)
    return {"true": True, "false": False, "null": None}.get(token.lower(), _NO_VALUE)


def _pins(conjunct: str, alias: str, path: str, params: dict) -> set | None:
    """The key values one conjunct pins the path to, or None when it pins nothing."""
    ref = rf"{re.escape(alias)}\.{re.escape(path)}"
    m = re.fullmatch(rf"{ref}\s*=\s*(.+)|(.+?)\s*=\s*{ref}", conjunct, re.I | re.S)
    if m:
        value = _literal(m.group(1) or m.group(2), params)
        return None if value is _NO_VALUE or isinstance(value, list | dict) else {json.dumps(value)}
    m = re.fullmatch(rf"{ref}\s+IN\s*\((.*)\)", conjunct, re.I | re.S)
    if m:
        values = [_literal(t, params) for t in _split_top(m.group(1), ",")]
        if any(v is _NO_VALUE or isinstance(v, list | dict) for v in values):
            return None
        return {json.dumps(v) for v in values}
    return None


def classify_routing(sql: str, params: dict | None, paths: list[str]) -> Routing:
    """Which partition keys the query pins (see the module docstring)."""
    params = params or {}
    alias = root_alias(sql)
    if alias is None:
        return Routing("undecided")
    where = _where(sql)
    conj = _conjuncts(where) if where else []
    pinned: list[set | None] = []
    for path in paths:
        sets = [s for s in (_pins(c, alias, path, params) for c in conj) if s is not None]
        pinned.append(set.intersection(*sets) if sets else None)
    first = pinned[0]
    if first is None:
        mentioned = re.search(rf"\b{re.escape(alias)}\s*(\.\s*{re.escape(paths[0])}\b|\[)", where, re.I)
        return Routing("undecided") if mentioned else Routing("all")
    if not first:
        return Routing("undecided")  # contradictory pins
    firsts = sorted(json.loads(v) for v in first)
    if len(paths) == 1:
        return Routing("keys", tuple(firsts))
    second = pinned[1]
    if second:
        seconds = sorted(json.loads(v) for v in second)
        return Routing("keys", tuple((a, b) for a in firsts for b in seconds))
    return Routing("prefix", tuple((a,) for a in firsts))


def doc_ids_in_rows(rows: list, docs: list[dict]) -> set[str]:
    """Documents the expected rows name: `SELECT VALUE c.id` strings or rows with an `id` field."""
    known = {d["id"] for d in docs}
    found = set()
    for row in rows:
        if isinstance(row, str) and row in known:
            found.add(row)
        elif isinstance(row, dict) and row.get("id") in known:
            found.add(row["id"])
    return found
