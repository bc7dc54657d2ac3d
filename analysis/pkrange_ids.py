"""Lists of pkrange ids as the store writes them ("0,3,12" in `executions.pkranges`): sorted, merged, counted.

Vectorised over the distinct lists, which are a few hundred however many rows a store holds: each function
factorizes the column, works on the distinct values once and maps the results back.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from pandas.api.typing import DataFrameGroupBy

GATEWAY = ""  # pkrange_id of RU not charged by a data page (refusal, query plan, metadata)


def pkrange_sort_key(pkrange_id: str) -> tuple[int, int, str]:
    """Numeric ids in numeric order, then other ids by name, the gateway ("") last."""
    if pkrange_id == GATEWAY:
        return (2, 0, "")
    return (0, int(pkrange_id), "") if pkrange_id.isdigit() else (1, 0, pkrange_id)


def count_ids(pkranges: str) -> int:
    return len(pkranges.split(",")) if pkranges else 0


def counts(pkranges: pd.Series) -> np.ndarray:
    """`count_ids` of each list, counted once per distinct list (a few hundred however many rows)."""
    codes, lists = pd.factorize(pd.Series(pkranges, dtype=object).fillna(""))
    return np.array([count_ids(text) for text in lists] or [0], dtype=int)[codes]


def union_per_group(groups: DataFrameGroupBy[Any, Any], pkranges: pd.Series) -> list[str]:
    """Each group's comma-separated pkrange id lists merged into one, without repeats, in numeric order.

    In the groups' output order. Vectorised over the distinct lists (a few hundred however many rows): a
    group with one distinct list (every "as-is" execution) takes that list normalised; only groups of
    several lists (per-feed-range parts) are merged one by one.
    """
    codes, lists = pd.factorize(pkranges.astype(object), use_na_sentinel=True)
    normal = [_id_set(value) for value in lists]
    pairs = pd.DataFrame({"group": groups.ngroup().to_numpy(), "code": codes})
    pairs = pairs[pairs["code"] >= 0].drop_duplicates()
    merged = np.full(groups.ngroups, "", dtype=object)
    alone = ~pairs["group"].duplicated(keep=False).to_numpy()
    joined = np.array([_joined(ids) for ids in normal] or [""], dtype=object)
    merged[pairs["group"].to_numpy()[alone]] = joined[pairs["code"].to_numpy()[alone]]
    for group, group_codes in pairs[~alone].groupby("group")["code"]:
        merged[int(group)] = _joined(set().union(*(normal[c] for c in group_codes)))  # type: ignore[arg-type]
    return merged.tolist()


def _id_set(value: object) -> set[str]:
    return {part.strip() for part in value.split(",")} - {""} if isinstance(value, str) else set()


def _joined(ids: set[str]) -> str:
    return ",".join(sorted(ids, key=pkrange_sort_key))


def normalised(pkranges: pd.Series) -> np.ndarray:
    """Each comma-separated id list without repeats, in numeric order; normalised once per distinct list."""
    codes, lists = pd.factorize(pkranges.astype(object), use_na_sentinel=True)
    joined = np.array([_joined(_id_set(value)) for value in lists] + [""], dtype=object)
    return joined[codes]  # the sentinel -1 picks the trailing "" (a missing list)
