"""The throughput planner's arithmetic, pure and over plain numbers: what each physical partition needs by
Microsoft's redistribution formula, the calls that give it those RU/s within the service's limits, and
whether burst capacity's bank would have served a partition's 429s. `analysis.capacity.rules` turns these
into findings and commands; `analysis.capacity.evidence` reads their inputs from the store.

**A partition's need** (`partition_needs`, azure-monitor.md R95): "Total consumed RU/s of the physical
partition + (Number of 429 responses per second * Average RU charge per request to the partition)", the
consumed RU/s measured as the page measures it, NormalizedRUConsumption x the RU/s per partition.

**The plan** (`redistribution_plan`, R95): the partitions that need more than their share are the targets;
the others give RU/s down to their own need, the most idle first; one source per call, so what it gives is
exactly what its call's targets gain (the CLI takes source ids, not amounts); at most 20 targets a call, at
most 5 calls a minute (the FAQ); the total raised first (evenly) when the sources cannot cover the targets.

**Burst capacity** (`burst_absorbs`, R97): a partition under 3,000 RU/s banks up to 300 s of its idle RU/s
and spends them at up to 3,000 RU/s; per-minute metrics bound the bank from below (each second used at most
the minute's peak share), and cannot show seconds: a burst's rate is a minute's average.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

RU_STEP = {False: 100, True: 1000}  # concepts-limits: manual RU/s in steps of 100, autoscale max of 1,000
PARTITION_MAX_RU_S = 10_000  # P2, R92: a physical partition serves at most 10,000 RU/s (above: a split)
# Redistribution (R95): a partition's need is its consumed RU/s + 429/s x the average charge per request; a
# partition at 100% whose 429s are not counted gets the page's other rule (R92): "Double the RU/s or increase
# them to the maximum of 10,000 RU/s, whichever is lower".
SATURATED_NEED_FACTOR = 2.0
PARTITION_MIN_RU_S = 100  # R95: "Azure Cosmos DB will ensure that each physical partition has at least 100 RU/s"
REDISTRIBUTE_MAX_TARGETS = 20  # R95, the FAQ: "source and physical partitions ... in a single request is 20 each"
REDISTRIBUTE_PER_MINUTE = 5  # R95, the FAQ: "a maximum of five requests per minute"
# Burst capacity (R97, burst-capacity.md): "each physical partition can accumulate up to 5 minutes of idle
# capacity, which can be consumed at a rate up to 3000 RU/s"; only partitions "with less than 3000 RU/s".
BURST_SECONDS = 300.0
BURST_RATE_RU_S = 3000.0


def partition_needs(
    peaks: Mapping[str, float],
    share_ru_s: float,
    throttled_per_s: Mapping[str, float],
    ru_per_request: float,
) -> dict[str, float]:
    """Per pkrange, the RU/s it needs (R95, Microsoft's formula): its consumed RU/s (its peak per-minute
    NormalizedRUConsumption, %, x the `share_ru_s` each partition has now) + its 429 responses per second x
    the average RU charge per request, the RU/s it would have used had its requests not been rate limited.
    A range at 100% whose 429s are not known (no figure, or no average charge) gets the page's other rule:
    `SATURATED_NEED_FACTOR` x its share. Up to the RU step, at least `PARTITION_MIN_RU_S`, at most
    `PARTITION_MAX_RU_S` (R92)."""
    step = RU_STEP[False]
    known = bool(throttled_per_s) and ru_per_request >= 0
    out: dict[str, float] = {}
    for pk, peak in peaks.items():
        if peak >= 100 and not known:
            wanted = share_ru_s * SATURATED_NEED_FACTOR
        else:
            throttled = throttled_per_s.get(pk, 0.0) * ru_per_request if known else 0.0
            wanted = share_ru_s * max(peak, 0.0) / 100 + throttled
        out[pk] = float(min(PARTITION_MAX_RU_S, max(PARTITION_MIN_RU_S, math.ceil(wanted / step - 1e-9) * step)))
    return out


@dataclass(frozen=True, slots=True)
class RedistributeRequest:
    """One `redistribute-partition-throughput` call: the RU/s each target partition has after it, and the
    one source partition the service takes them from (so what the source gives is exact: the targets' gain)."""

    targets: tuple[tuple[str, float], ...]
    source: str


@dataclass(frozen=True, slots=True)
class RedistributionPlan:
    """What a redistribution sets (R92, R95): the RU/s per pkrange after it (`partitions`), the total to set
    first when the other partitions cannot give what the targets need (`raise_to`, an even split), and the
    calls in order (`requests`), each within the service's limits."""

    partitions: tuple[tuple[str, float], ...]
    requests: tuple[RedistributeRequest, ...]
    raise_to: float | None = None
    autoscale: bool = False


def redistribution_plan(needs: Mapping[str, float], ru_s: float, autoscale: bool = False) -> RedistributionPlan | None:
    """The plan that gives every partition its need (`partition_needs`) from the RU/s in force in one region
    (`ru_s`, split evenly today, P4): the targets are the partitions that need more than their share; the
    sources give RU/s down to their own need, the most idle first (the old page's "taking RU/s from the least
    active partition(s)"), one source per call so each gives exactly what its call's targets gain, at most
    `REDISTRIBUTE_MAX_TARGETS` targets per call (the FAQ's limit: 20 source and 20 target partitions a
    request). When the sources' spare RU/s cannot cover the targets, the total is raised first to the sum of
    the needs (the FAQ: "increase your overall RU/s first before redistributing"), up to the RU step. None
    without needs or RU/s, or when no partition needs more than its share."""
    if not needs or not ru_s > 0:
        return None
    step = RU_STEP[autoscale]
    order = sorted(needs, key=_pkrange_order)
    share = ru_s / len(needs)
    raise_to = None
    if sum(needs.values()) > ru_s:
        raise_to = float(math.ceil(sum(needs.values()) / step) * step)
        share = raise_to / len(needs)
    targets = [pk for pk in order if needs[pk] > share]
    if not targets:
        return None
    value = dict.fromkeys(order, share)
    spare = {pk: share - needs[pk] for pk in order if pk not in targets}
    sources = sorted(spare, key=lambda pk: (-spare[pk], _pkrange_order(pk)))
    requests: list[RedistributeRequest] = []
    pending = list(targets)
    for source in sources:
        call: list[tuple[str, float]] = []
        while pending and spare[source] > 1e-9:
            target = pending[0]
            new = min(needs[target], value[target] + spare[source])
            spare[source] -= new - value[target]
            value[source] -= new - value[target]
            value[target] = new
            call.append((target, new))
            if new >= needs[target]:
                pending.pop(0)
            if len(call) == REDISTRIBUTE_MAX_TARGETS:
                requests.append(RedistributeRequest(tuple(call), source))
                call = []
        if call:
            requests.append(RedistributeRequest(tuple(call), source))
        if not pending:
            break
    partitions = tuple((pk, round(value[pk], 2)) for pk in order)
    return RedistributionPlan(partitions, tuple(requests), raise_to, autoscale)


def _pkrange_order(pkrange: str) -> tuple[int, str]:
    return (int(pkrange), "") if pkrange.isdigit() else (1 << 62, pkrange)


def redistribution_commands(plan: RedistributionPlan, sql: str, names: str) -> list[str]:
    """The calls of `plan` in order (R95): the raise first when it has one (`throughput update`), then one
    `redistribute-partition-throughput` per request: `--target-partition-info` the targets' RU/s after it as
    space-separated id=RU/s arguments and `--source-partition-info` its source's id (the CLI extension takes
    each as separate arguments, `nargs='+'`: "eg: 0=1200 1=1200", source ids "eg: 1 2"), with `sleep 60`
    after every `REDISTRIBUTE_PER_MINUTE` calls. `sql`: the `az` command group; `names`: its name arguments."""
    out = []
    if plan.raise_to:
        flag = "--max-throughput" if plan.autoscale else "--throughput"
        out.append(f"{sql} throughput update {names} {flag} {plan.raise_to:.0f}")
    for n, request in enumerate(plan.requests):
        if n and n % REDISTRIBUTE_PER_MINUTE == 0:
            out.append("sleep 60")
        targets = " ".join(shlex.quote(f"{pk}={ru:.0f}") for pk, ru in request.targets)
        out.append(
            f"{sql} redistribute-partition-throughput {names} --target-partition-info {targets}"
            f" --source-partition-info {shlex.quote(request.source)}"
        )
    return out


def burst_absorbs(share_ru_s: float, minutes: Sequence[tuple[float, float]], grain_s: float = 60.0) -> tuple[bool, int]:
    """Whether burst capacity (R97) would have served every throttled interval of one partition with
    `share_ru_s` RU/s, and how many were throttled. `minutes`, in time order: (its NormalizedRUConsumption %,
    the RU its 429s asked for in the interval). The bank starts empty and grows by the interval's idle RU (a
    lower bound: every second used at most the interval's peak share, so (1 - peak) x RU/s was idle each
    second), up to `BURST_SECONDS` x RU/s; a throttled interval is served when the bank holds its RU and its
    rate (RU/s + those RU over the interval) is within `BURST_RATE_RU_S`. A partition at `BURST_RATE_RU_S`
    or more never bursts (False)."""
    if not 0 < share_ru_s < BURST_RATE_RU_S:
        return False, 0
    bank, throttled = 0.0, 0
    for normalized, asked_ru in minutes:
        if asked_ru > 0:
            throttled += 1
            if asked_ru > bank or share_ru_s + asked_ru / grain_s > BURST_RATE_RU_S:
                return False, throttled
            bank -= asked_ru
        else:
            idle = grain_s * max(0.0, 1 - normalized / 100) * share_ru_s
            bank = min(BURST_SECONDS * share_ru_s, bank + idle)
    return throttled > 0, throttled
