"""The wire format of a transactional batch (cosmos-wire-protocol.md W22-W26): the operations the SDK posts
(a JSON array of `{"operationType", "id", "resourceBody", "ifMatch", "ifNoneMatch"}`) as the engine's
`BatchOperation`s, and its `BatchResult` as the service answers it: 200 with one result per operation, or
207 Multi-Status when one failed (its status, the others' 424)."""

from __future__ import annotations

from typing import Any

from emulator.engine import errors
from emulator.engine.batch import KINDS
from emulator.engine.results import BatchOperation, BatchResult, OperationResult
from emulator.rest.wire import Reply, session_headers

_KINDS = {kind.lower(): kind for kind in KINDS}


def batch_operations(body: Any) -> list[BatchOperation]:
    """The request body as operations; a body that is not a list of known operations is a 400."""
    if not isinstance(body, list):
        raise errors.bad_request("The batch request body must be a JSON array of operations.")
    return [_operation(index, op) for index, op in enumerate(body)]


def _operation(index: int, op: Any) -> BatchOperation:
    kind = _KINDS.get(str(op.get("operationType")).lower()) if isinstance(op, dict) else None
    if kind is None:
        raise errors.bad_request(f"Batch operation {index} needs an 'operationType' (one of {', '.join(KINDS)}).")
    body, item_id = op.get("resourceBody"), op.get("id")
    if item_id is not None and not isinstance(item_id, str):
        raise errors.bad_request(f"Batch operation {index}: 'id' must be a string.")
    preconditions = {"if_match": _text(op.get("ifMatch")), "if_none_match": _text(op.get("ifNoneMatch"))}
    if kind != "Patch":
        return BatchOperation(kind, item_id, body, **preconditions)
    patch = body if isinstance(body, dict) else {}
    return BatchOperation(kind, item_id, None, patch.get("operations"), patch.get("condition"), **preconditions)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def operation_json(result: OperationResult) -> dict[str, Any]:
    """One operation's result: `statusCode`, `requestCharge`, and `subStatusCode`, `eTag`, `resourceBody`
    when it has them (the names azure-cosmos-java's BatchResponseParser reads)."""
    out: dict[str, Any] = {"statusCode": result.status, "requestCharge": result.request_charge}
    if result.substatus:
        out["subStatusCode"] = result.substatus
    if result.doc is not None:
        out["eTag"] = result.doc.get("_etag")
        out["resourceBody"] = result.doc
    return out


def batch_reply(result: BatchResult) -> Reply:
    headers = {**session_headers(result.pkrange_id, result.lsn), "lsn": str(result.lsn)}
    body = [operation_json(r) for r in result.results]
    return Reply(200 if result.committed else 207, body, result.request_charge, result.pkrange_id, headers)
