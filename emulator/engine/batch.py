"""Transactional batch (`execute_item_batch`): up to 100 point operations in one logical partition, all or
nothing (cosmos-wire-protocol.md W22-W26).

Each operation is `emulator.engine.items`' own (`Items.run_*`, the one definition of what it does and charges),
run on a `StagedWrites`: later operations see earlier ones' writes and nothing reaches the state. When every
operation succeeds the writes are committed as one journal entry (`State.apply_batch`), so no crash or replay
can keep part of a batch; when one fails, nothing is written and the others answer 424 Failed Dependency.
The batch is one request: admitted to its partition's budget and charged the sum of its operations as a whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from cosmoscore.keys import Key, key_json
from cosmoscore.limits import Limits
from emulator.engine import errors
from emulator.engine.items import Items
from emulator.engine.metering import Context, Meter, Metering
from emulator.engine.model import Container, PkRange
from emulator.engine.results import BatchOperation, BatchResult, ItemResult, OperationResult
from emulator.engine.state import State
from emulator.engine.writes import StagedWrites

FAILED_DEPENDENCY = 424
KINDS = ("Create", "Upsert", "Replace", "Read", "Delete", "Patch")


class Batches:
    def __init__(self, state: State, metering: Metering, items: Items, limits: Limits) -> None:
        self.state = state
        self.metering = metering
        self.items = items
        self.limits = limits

    def execute(
        self,
        ctx: Context,
        db_id: str,
        coll_id: str,
        key: Sequence[Any],
        operations: Sequence[BatchOperation],
        *,
        intended_rid: str | None = None,
    ) -> BatchResult:
        with self.metering.metered(ctx, "Batch", "docs", db_id, coll_id) as meter:
            coll = self.state.coll(db_id, coll_id, intended_rid)
            self._check_count(operations)
            key = self.items.checked_key(coll, key, full=True)
            epk = coll.epk(key)
            rng = coll.range_for(epk)
            meter.partition_key = key_json(key)
            self.metering.admit(coll, rng, meter)  # throttled as a whole, before any operation runs
            staged = StagedWrites(self.items.live)
            results, failed = self._run(ctx, coll, key, operations, staged)
            charge = sum(r.request_charge for r in results)
            self.metering.consume(coll, rng, meter, charge)
            if failed is not None:
                meter.status = 207
                results = _dependents_failed(results, failed, len(operations))
                return BatchResult(results, False, meter.charge, rng.id, rng.lsn)
            if staged.entries:
                rng = self._commit(staged)
                meter.changed, meter.changed_epk = (coll,), epk
            meter.status = 200
            return BatchResult(results, True, meter.charge, rng.id, rng.lsn)

    def _check_count(self, operations: Sequence[BatchOperation]) -> None:
        if not operations:
            raise errors.bad_request("Batch request has no operations.")
        if len(operations) > self.limits.max_batch_operations:
            raise errors.bad_request("Batch request has more operations than what is supported.")

    def _run(
        self, ctx: Context, coll: Container, key: Key, operations: Sequence[BatchOperation], staged: StagedWrites
    ) -> tuple[list[OperationResult], int | None]:
        """Run the operations in order until one fails: their results, and the failing one's index."""
        results: list[OperationResult] = []
        for index, op in enumerate(operations):
            meter = Meter(op.kind, "docs", coll.db_id, coll.id)
            try:
                own = replace(ctx, if_match=op.if_match, if_none_match=op.if_none_match)
                done = self._run_one(own, coll, key, op, meter, staged)
            except errors.CosmosError as exc:
                results.append(OperationResult(exc.status, None, round(meter.charge, 2), exc.substatus, exc.message))
                return results, index
            results.append(OperationResult(done.status, done.doc, round(done.request_charge, 2)))
        return results, None

    def _run_one(
        self, ctx: Context, coll: Container, key: Key, op: BatchOperation, meter: Meter, staged: StagedWrites
    ) -> ItemResult:
        items = self.items
        if op.kind in ("Create", "Upsert"):
            return items.run_create(ctx, coll, op.doc, key, meter, staged, upsert=op.kind == "Upsert")
        if op.item_id is None:
            raise errors.bad_request(f"A batch {op.kind} operation needs the item's 'id'.")
        if op.kind == "Replace":
            return items.run_replace(ctx, coll, op.item_id, op.doc, key, meter, staged)
        if op.kind == "Read":
            return items.run_read(ctx, coll, op.item_id, key, meter, staged)
        if op.kind == "Delete":
            return items.run_delete(ctx, coll, op.item_id, key, meter, staged)
        if op.kind == "Patch":
            return items.run_patch(ctx, coll, op.item_id, op.patch, key, meter, staged, condition=op.condition)
        raise errors.bad_request(f"Unknown batch operation type {op.kind!r} (one of {', '.join(KINDS)}).")

    def _commit(self, staged: StagedWrites) -> PkRange:
        """The batch's writes as one journal entry, then applied together."""
        entry = {"op": "batch", "entries": staged.entries}
        self.state.commit(entry)
        rng = self.state.apply_batch(entry)
        assert rng is not None  # there were writes
        return rng


def _dependents_failed(results: list[OperationResult], failed: int, count: int) -> list[OperationResult]:
    """Every one of `count` operations but the failing one answers 424; those that ran before it keep what
    they were charged (the batch's charge is the sum of its results'), those after it never ran."""
    ran = [
        r if i == failed else OperationResult(FAILED_DEPENDENCY, None, r.request_charge) for i, r in enumerate(results)
    ]
    return ran + [OperationResult(FAILED_DEPENDENCY, None, 0.0) for _ in range(count - len(ran))]
