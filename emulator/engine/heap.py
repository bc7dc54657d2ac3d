"""The server process's heap and the garbage collector (the target: no pause over 150 ms).

A loaded engine is millions of long-lived objects (documents are dicts) that every full collection
traverses: 2.3-2.8 s at 500,000 documents, 0.67 s at 200,000, and the one event loop serves nobody
meanwhile. `settle` freezes everything alive (`gc.freeze`): frozen objects are never traversed again, and
are still freed by reference counting. Cycles that are garbage already would stay for ever once frozen, so
one full collection runs first.

The per-partition indexes (`emulator.engine.query.range_index`) are the other large long-lived structure: millions of
references in sorted lists, built while serving (three indexed paths at 500,000 documents took a full
collection from about 60 ms to 160 ms). A process that settled its heap settles it again, without the full
collection, when an index is complete (`settle_again`). Test processes, which make and drop many engines,
never settle: what they freeze would never be collected.
"""

from __future__ import annotations

import gc

GC_FULL_EVERY = 100  # gen-2 threshold: full collections after this many gen-1 ones (CPython's default is 10)

_settled = False


def settle() -> None:
    """Freeze everything alive now and space out full collections. Process-wide; call it once a large state
    is loaded."""
    global _settled
    gc.collect()
    gc.freeze()
    gen0, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(gen0, gen1, max(gen2, GC_FULL_EVERY))
    _settled = True


def settle_again() -> None:
    """After a large long-lived structure was built: freeze it too, if this process settles its heap."""
    if _settled:
        gc.freeze()
