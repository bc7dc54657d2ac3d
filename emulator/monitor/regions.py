"""An account's regions in the stand-in's metrics answers (azure-monitor.md §7b R1, R14).

Every Cosmos DB metric but AutoscaleMaxThroughput has a `Region` dimension. Each region of an account holds a
copy of the data and reserves the provisioned throughput, so the storage and throughput metrics are the same
in every region (`copied`); the engine serves its requests in one place, so the request metrics are the
first region's and none of the others'. A Region split keys each series by its region; without one, the
regions' samples are combined as any unsplit dimension's are (Total: the sum, Maximum: the maximum).

`regional_minutes` wraps `MetricsApp._minutes`, which knows nothing of regions: to serve another per-region
quantity, say here which metrics are copied per region.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

from cosmoscore.monitor.metrics import REGION
from emulator.monitor.query import Filter

Group = tuple[str, ...]
Minutes = dict[Group, dict[int, list[float]]]  # per split group and minute: the cell `_minutes` builds


def account_regions(region: str, regions: Sequence[str] | None) -> tuple[str, ...]:
    """The account's regions, the first the one serving requests (default: `region` alone)."""
    out = tuple(regions) if regions else (region,)
    if len(set(out)) != len(out) or not all(r.strip() for r in out):
        raise ValueError(f"regions must be distinct names: {out}")
    return out


def regional_minutes(
    minutes: Callable[[Filter, list[str]], Minutes],
    filt: Filter,
    split: list[str],
    regions: tuple[str, ...] | None,
    *,
    copied: bool,
) -> Minutes:
    """`minutes(filter, split)` per region the filter keeps (`regions` None: a metric with no Region),
    its groups keyed by region where the split names Region. `copied`: the metric is the same in every
    region (storage, throughput); else only the first region has it."""
    if regions is None:
        return minutes(filt, split)
    rest = Filter({d: v for d, v in filt.values.items() if d != REGION})
    inner = [d for d in split if d != REGION]
    at = split.index(REGION) if REGION in split else None
    out: Minutes = defaultdict(dict)
    for region in (r for r in (regions if copied else regions[:1]) if filt.matches({REGION: r}, (REGION,))):
        for group, cells in minutes(rest, inner).items():
            merged = out[group if at is None else (*group[:at], region, *group[at:])]
            for minute, cell in cells.items():
                merged.setdefault(minute, []).extend(cell)  # only copied samples meet another region's
    return out
