"""The Cosmos DB wire format of the engine's answers: REST bodies, headers, continuation and session
tokens, query plans and metrics, and the gateway's refusals (cosmos-wire-protocol.md,
cosmos-errors-and-stats.md). Pure functions; `emulator.rest.app` calls them, the engine never does.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import orjson

from cosmoscore.indexing import Composite
from cosmoscore.keys import Key, key_from_json, key_to_json
from cosmoscore.sql.utilization import SingleIndex, Utilization
from emulator.engine import errors
from emulator.engine.model import PkRange
from emulator.engine.query.plan import QueryPlan
from emulator.engine.query.service import QueryRoute, Refusal
from emulator.engine.results import (
    ChangePage,
    FeedPage,
    ItemResult,
    PageMetrics,
    QueryPage,
    RangeStatistics,
    Resource,
    StorageUsage,
)
from emulator.rest.tokens import feed_cursor as feed_cursor  # re-exported: the REST layer decodes through wire
from emulator.rest.tokens import feed_token, query_token
from emulator.rest.tokens import query_cursor as query_cursor

CROSS_PARTITION_DISABLED = (
    "Cross partition query is required but disabled. Please set x-ms-documentdb-query-enablecrosspartition "
    "to true, specify x-ms-documentdb-partitionkey, or revise your query to avoid this exception."
)
INVALID_CONTINUATION = "Invalid Continuation Token"  # the gateway's text, azure-sdk-for-python#37230
NOT_SERVABLE = (  # cosmos-errors-and-stats.md §1.4, substatus 1004
    "The provided cross partition query can not be directly served by the gateway. This is a first chance "
    "(internal) exception that all newer clients will know how to handle gracefully. This exception is traced, "
    "but unless you see it bubble up as an exception (which only happens on older SDK clients), then you can "
    "safely ignore this message."
)

# -- headers --------------------------------------------------------------------------------------


def common_headers(activity_id: str, charge: float) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "x-ms-activity-id": activity_id,
        "x-ms-request-charge": f"{charge:.2f}",
        "x-ms-gatewayversion": "version=2.14.0",
        "x-ms-schemaversion": "1.18",
    }


def error_headers(exc: errors.CosmosError, activity_id: str) -> dict[str, str]:
    headers = common_headers(activity_id, 0.0)
    if exc.substatus:
        headers["x-ms-substatus"] = str(exc.substatus)
    if exc.retry_after_ms is not None:
        headers["x-ms-retry-after-ms"] = str(int(exc.retry_after_ms))
    return headers


def session_headers(pkrange_id: str, lsn: int) -> dict[str, str]:
    """`x-ms-session-token` (`<pkrange>:-1#<lsn>`, wire §1.4) for an answer a range served."""
    return {"x-ms-session-token": f"{pkrange_id}:-1#{lsn}"}


def quota_headers(usage: StorageUsage) -> dict[str, str]:
    """x-ms-resource-quota/-usage in the service's `key=value;` form (cosmos-errors-and-stats.md §2.3)."""
    size_kb = math.ceil(usage.size_bytes / 1024)
    quota_kb = usage.quota_bytes // 1024
    quota = (
        f"functions=25;storedProcedures=100;triggers=25;documentSize={quota_kb // 1024};"
        f"documentsSize={quota_kb};documentsCount=-1;collectionSize={quota_kb};"
    )
    used = (
        f"functions=0;storedProcedures=0;triggers=0;documentSize={math.ceil(size_kb / 1024)};"
        f"documentsSize={size_kb};documentsCount={usage.documents};collectionSize={size_kb};"
    )
    return {"x-ms-resource-quota": quota, "x-ms-resource-usage": used}


def partition_key(value: Any) -> Key | None:
    """The `x-ms-documentdb-partitionkey` header, already JSON-decoded, as a key (None when absent)."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise errors.bad_request("The partition key header must be a JSON array of the key's components.")
    return key_from_json(value)


# -- bodies ---------------------------------------------------------------------------------------


def feed_body(kind: str, items: list[Any], rid: str = "") -> dict[str, Any]:
    """A list answer: `{"_rid", "<kind>": [...], "_count"}` (Documents, Databases, Offers, ...)."""
    return {"_rid": rid, kind: items, "_count": len(items)}


def account_body(name: str, consistency: str, endpoint: str) -> dict[str, Any]:
    locations = [{"name": "South Central US", "databaseAccountEndpoint": endpoint}]
    return {
        "_self": "",
        "id": name,
        "_rid": name,
        "media": "//media/",
        "addresses": "//addresses/",
        "_dbs": "//dbs/",
        "writableLocations": locations,
        "readableLocations": locations,
        "enableMultipleWriteLocations": False,
        "enablePerPartitionFailoverBehavior": False,
        "userReplicationPolicy": {"asyncReplication": False, "minReplicaSetSize": 1, "maxReplicasetSize": 4},
        "userConsistencyPolicy": {"defaultConsistencyLevel": consistency},
        "systemReplicationPolicy": {"minReplicaSetSize": 1, "maxReplicasetSize": 4},
        "readPolicy": {"primaryReadCoefficient": 1, "secondaryReadCoefficient": 1},
        "queryEngineConfiguration": "{}",
    }


def pkrange_json(rng: PkRange, throughput_fraction: float) -> dict[str, Any]:
    return {
        "_rid": "",
        "id": rng.id,
        "minInclusive": rng.min,
        "maxExclusive": rng.max,
        "ridPrefix": int(rng.id),
        "throughputFraction": throughput_fraction,
        "status": "online",
        "parents": list(rng.parents),
        "_etag": f'"{rng.id}-{rng.lsn}"',
    }


def layout_version(etag: str | None) -> int | None:
    """The layout version an `If-None-Match` on /pkranges names (the etag is `"<version>"`)."""
    if not etag:
        return None
    try:
        return int(etag.strip('"'))
    except ValueError:
        return None


def statistics_json(stats: RangeStatistics) -> dict[str, Any]:
    """One `statistics` entry of a container read (cosmos-errors-and-stats.md §2.2)."""
    return {
        "id": stats.pkrange_id,
        "sizeInKB": math.ceil(stats.size_bytes / 1024),
        "documentCount": stats.documents,
        "sampledDistinctPartitionKeyCount": stats.distinct_keys,
        "partitionKeys": [
            {"partitionKey": key_to_json(key), "sizeInKB": math.ceil(size / 1024)} for key, size in stats.top_keys
        ],
    }


# -- queries --------------------------------------------------------------------------------------


def query_text_and_parameters(body: Any) -> tuple[str, dict[str, Any]]:
    """The body `{"query": ..., "parameters": [{"name", "value"}]}` as text and a name -> value map."""
    if isinstance(body, str):
        return body, {}
    if not isinstance(body, dict) or not isinstance(body.get("query"), str):
        raise errors.bad_request("The query body must be a JSON object with a 'query' string.")
    params: dict[str, Any] = {}
    raw = body.get("parameters") or []
    if not isinstance(raw, list):
        raise errors.bad_request('Invalid query: \'parameters\' must be an array of {"name", "value"} objects.')
    for param in raw:
        name = param.get("name") if isinstance(param, dict) else None
        if not isinstance(name, str) or not name.startswith("@"):
            raise errors.bad_request(f"Invalid query parameter {param!r}: each needs a 'name' starting with '@'.")
        if name in params:
            raise errors.bad_request(f"Invalid query. Specified duplicate parameter name '{name}'.")
        if "value" in param:  # a parameter without a value stays unresolved (SC2001 where it is used)
            params[name] = param["value"]
    return body["query"], params


def plan_json(plan: QueryPlan) -> dict[str, Any]:
    """The plan body; its `queryRanges` EPK points are inclusive on both ends (wire §1.7)."""
    ranges = [
        {"min": r.min, "max": r.max, "isMinInclusive": True, "isMaxInclusive": r.is_point} for r in plan.intervals
    ]
    return {
        "partitionedQueryExecutionInfoVersion": 2,
        "queryInfo": plan.shape.query_info(plan.rewritten),
        "queryRanges": ranges,
        "hybridSearchQueryInfo": None,
    }


def gateway_refusal(
    route: QueryRoute, *, cross_partition: bool, refused_ru: float, continued: bool = False
) -> Refusal | None:
    """What the gateway refuses of a query the client did not pin to a partition: several partitions
    without cross-partition enabled (400), one it cannot serve page by page (400/1004 carrying the plan, so
    the SDK fans out itself), or such a one sent with a continuation: the token of one of its ranges, which
    azure-cosmos hands back as the query's (W77)."""
    if route.partitions > 1 and not cross_partition:
        return Refusal(errors.bad_request(CROSS_PARTITION_DISABLED))
    if route.needs_plan and continued:
        return Refusal(errors.CosmosError(400, INVALID_CONTINUATION), refused_ru)
    if route.needs_plan:
        refused = errors.bad_request(NOT_SERVABLE, 1004)
        refused.additional_info = orjson.dumps(plan_json(route.plan())).decode()
        return Refusal(refused, refused_ru)
    return None


def query_metrics_header(m: PageMetrics) -> str:
    """`x-ms-documentdb-query-metrics`: the service's semicolon-separated name=value list."""
    fields = {
        "totalExecutionTimeInMs": f"{m.execution_ms:.2f}",
        "queryCompileTimeInMs": "0.00",
        "queryLogicalPlanBuildTimeInMs": "0.00",
        "queryPhysicalPlanBuildTimeInMs": "0.00",
        "queryOptimizationTimeInMs": "0.00",
        "VMExecutionTimeInMs": f"{m.execution_ms:.2f}",
        "indexLookupTimeInMs": "0.00",
        "instructionCount": "0",
        "documentLoadTimeInMs": "0.00",
        "systemFunctionExecuteTimeInMs": "0.00",
        "userFunctionExecuteTimeInMs": "0.00",
        "retrievedDocumentCount": str(m.retrieved_docs),
        "retrievedDocumentSize": str(m.retrieved_bytes),
        "outputDocumentCount": str(m.output_docs),
        "outputDocumentSize": str(m.output_bytes),
        "writeOutputTimeInMs": "0.00",
        "indexUtilizationRatio": f"{m.index_hit_ratio:.2f}",
    }
    return ";".join(f"{k}={v}" for k, v in fields.items())


def index_utilization_header(use: Utilization) -> str:
    """`x-ms-cosmos-index-utilization`: base64 JSON of the indexes used and the ones that would help, in the
    service's v2 layout (W71): single indexes with their filter expression, composites as lists of specs."""
    info = {
        "UtilizedSingleIndexes": [_single_index(s) for s in use.utilized_single],
        "PotentialSingleIndexes": [_single_index(s) for s in use.potential_single],
        "UtilizedCompositeIndexes": [_composite_index(c, utilized=True) for c in use.utilized_composite],
        "PotentialCompositeIndexes": [_composite_index(c, utilized=False) for c in use.potential_composite],
    }
    return base64.b64encode(orjson.dumps(info)).decode()


def _single_index(index: SingleIndex) -> dict[str, Any]:
    return {
        "FilterExpression": index.filter_expression,
        "IndexSpec": "/" + "/".join(index.path) + "/?",
        "FilterPreciseSet": True,
        "IndexPreciseSet": True,
        "IndexImpactScore": "High",
    }


def _composite_index(composite: Composite, *, utilized: bool) -> dict[str, Any]:
    """A composite as the service lists it; a potential one is not a precise index plan (W71)."""
    return {
        "IndexSpecs": ["/" + "/".join(p) + (" DESC" if desc else " ASC") for p, desc in composite],
        "IndexPreciseSet": utilized,
        "IndexImpactScore": "High",
    }


# -- replies --------------------------------------------------------------------------------------


@dataclass
class Reply:
    """A success before it is rendered: status, JSON body and the headers that belong to it."""

    status: int
    body: Any = None
    charge: float = 0.0
    pkrange_id: str = ""
    headers: dict[str, str] = field(default_factory=dict)


def resource_reply(result: Resource) -> Reply:
    return Reply(result.status, result.value, result.request_charge)


def listing_reply(kind: str, result: Resource) -> Reply:
    return Reply(result.status, feed_body(kind, result.value, result.owner_rid), result.request_charge)


def item_reply(result: ItemResult) -> Reply:
    headers = {**session_headers(result.pkrange_id, result.lsn), "lsn": str(result.lsn)}
    if result.doc is not None and "_etag" in result.doc:
        headers["etag"] = result.doc["_etag"]
    return Reply(result.status, result.doc, result.request_charge, result.pkrange_id, headers)


def feed_reply(page: FeedPage) -> Reply:
    headers = {"x-ms-item-count": str(len(page.docs))}
    if page.next is not None:
        headers["x-ms-continuation"] = feed_token(page.next)
    if page.lsn is not None:
        headers.update(session_headers(page.pkrange_id, page.lsn))
    body = feed_body("Documents", page.docs, page.container_rid)
    return Reply(200, body, page.request_charge, page.pkrange_id, headers)


def change_reply(page: ChangePage) -> Reply:
    """A change feed page: its position as the `etag` (the SDK's continuation), 304 with no body when
    nothing changed (cosmos-wire-protocol.md §1.7, W29)."""
    headers = {"etag": f'"{page.etag}"', "x-ms-item-count": str(len(page.docs))}
    if page.lsn is not None:
        headers.update(session_headers(page.pkrange_id, page.lsn))
    if not page.docs:
        return Reply(304, None, page.request_charge, page.pkrange_id, headers)
    body = feed_body("Documents", page.docs, page.container_rid)
    return Reply(200, body, page.request_charge, page.pkrange_id, headers)


def query_reply(page: QueryPage) -> Reply:
    headers = {"x-ms-item-count": str(len(page.rows))}
    if page.lsn is not None:
        headers.update(session_headers(page.pkrange_id, page.lsn))
    if page.next is not None:
        headers["x-ms-continuation"] = query_token(page.next)
    if page.metrics is not None:
        headers["x-ms-documentdb-query-metrics"] = query_metrics_header(page.metrics)
    if page.index_utilization is not None:
        headers["x-ms-cosmos-index-utilization"] = index_utilization_header(page.index_utilization)
    body = feed_body("Documents", page.rows, page.container_rid)
    return Reply(200, body, page.request_charge, page.pkrange_id, headers)


def alt_content_path(db: str, coll: str) -> str:
    """`x-ms-alt-content-path` with the names percent-encoded as in request paths (cosmos-wire-protocol.md §1;
    the SDK joins it with `quote(id)`), so a name in any script or with control characters stays one value."""
    return f"dbs/{quote(db, safe='')}/colls/{quote(coll, safe='')}"


def success_headers(reply: Reply, activity_id: str, segments: list[str]) -> dict[str, str]:
    headers = common_headers(activity_id, reply.charge)
    if reply.pkrange_id:
        headers["x-ms-documentdb-partitionkeyrangeid"] = reply.pkrange_id
        headers["x-ms-cosmos-physical-partition-id"] = reply.pkrange_id
    seg = segments
    if len(seg) >= 4 and seg[0] == "dbs":
        headers["x-ms-alt-content-path"] = alt_content_path(seg[1], seg[3])
    headers.update(reply.headers)
    return headers
