"""What a query reads through the physical partitions' indexes (`emulator.engine.query.range_index`), for the query
service: a bounded ORDER BY's first rows, or a filter's candidates, and the builds still under way.

The charge never depends on it: an index-served query is charged for its matches, up to its OFFSET +
LIMIT or TOP when bounded (ru-cost-model.md §3.3), which the candidates all hold, and a bounded ORDER BY
reports the count a scan would match (the service caps it; `paging.loading_of`).
A query's first probe of a path asks for its index; the server builds it between requests (`build`, in
slices), and a page may build within `IndexSettings.build_budget_ms` (0 by default).
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from typing import Any

from cosmoscore.sql import Query
from cosmoscore.sql.probes import index_probes, ordered_scan
from emulator.engine.model import PkRange
from emulator.engine.query.range_index import IndexSettings
from emulator.engine.query.sql import guarded


class IndexReads:
    def __init__(self, settings: Callable[[], IndexSettings]) -> None:
        self.settings = settings  # read at each use: the query service holds them
        # ranges with an index still being built, by identity; weakly held, so a range gone with its container
        # or a split (or never built: an in-process engine has no builder) is not kept alive here
        self._building: weakref.WeakValueDictionary[int, PkRange] = weakref.WeakValueDictionary()

    def documents(
        self, rng: PkRange, query: Query, params: dict[str, Any]
    ) -> tuple[list[dict[str, Any]] | None, int | None]:
        """The documents an index-served query over the whole range needs to read, and, for a bounded ORDER
        BY, the count of documents it matches; (None, None): all of them (a scan)."""
        settings = self.settings()
        scan = guarded(lambda: ordered_scan(query, params))
        ordered = rng.indexes.ordered(rng.written, scan, settings) if scan is not None else None
        probes = guarded(lambda: index_probes(query, params)) if ordered is None else []
        found = rng.indexes.candidates(rng.written, probes, settings) if probes else None
        if rng.indexes.building:
            self._building[id(rng)] = rng
        if ordered is not None:
            return ordered
        return found, None

    def build(self, budget_ms: float) -> bool:
        """Advance the unfinished builds for up to `budget_ms`; True while some remain."""
        deadline = time.perf_counter() + budget_ms / 1000
        for key, rng in list(self._building.items()):
            if rng.indexes.advance(rng.written, self.settings(), deadline):
                self._building.pop(key, None)
            if time.perf_counter() >= deadline:
                break
        return bool(self._building)
