"""Aggregate accumulators (cosmos-sql-semantics §4.1): undefined inputs are skipped everywhere;
a value of the wrong type poisons SUM/AVG/MIN/MAX into undefined."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from .ast import UNDEFINED
from .values import RANK_ARRAY, hash_key, rank, sort_key

U = UNDEFINED


class Accumulator(Protocol):
    """What every accumulator does: take one input value, give the aggregate."""

    def add(self, v: Any) -> None: ...

    def result(self) -> Any: ...


class Count:
    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0

    def add(self, v: Any) -> None:
        if v is not U:
            self.n += 1

    def result(self) -> Any:
        return self.n


class Sum:
    """Starts at 0, so SUM over no defined input is 0; a non-number makes it undefined."""

    __slots__ = ("total", "bad")

    def __init__(self) -> None:
        self.total: Any = 0
        self.bad = False

    def add(self, v: Any) -> None:
        cls = v.__class__
        if cls is int or cls is float:
            self.total += v
        elif v is not U:
            self.bad = True

    def result(self) -> Any:
        return U if self.bad else self.total


class Avg:
    """Undefined over no numbers (unlike SUM)."""

    __slots__ = ("total", "n", "bad")

    def __init__(self) -> None:
        self.total: Any = 0
        self.n = 0
        self.bad = False

    def add(self, v: Any) -> None:
        cls = v.__class__
        if cls is int or cls is float:
            self.total += v
            self.n += 1
        elif v is not U:
            self.bad = True

    def result(self) -> Any:
        return U if self.bad or not self.n else self.total / self.n


class _Extreme:
    """MIN/MAX over primitives in type order null < boolean < number < string."""

    __slots__ = ("best", "key", "bad")
    sign = 1

    def __init__(self) -> None:
        self.best: Any = U
        self.key: Any = None
        self.bad = False

    def add(self, v: Any) -> None:
        if v is U:
            return
        if rank(v) >= RANK_ARRAY:
            self.bad = True
            return
        k = sort_key(v)
        if self.key is None or (k < self.key if self.sign > 0 else k > self.key):
            self.best, self.key = v, k

    def result(self) -> Any:
        return U if self.bad else self.best


class Min(_Extreme):
    __slots__ = ()
    sign = 1


class Max(_Extreme):
    __slots__ = ()
    sign = -1


class MakeList:
    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: list[Any] = []

    def add(self, v: Any) -> None:
        if v is not U:
            self.items.append(v)

    def result(self) -> Any:
        return self.items


class MakeSet(MakeList):
    __slots__ = ("seen",)

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[Any] = set()

    def add(self, v: Any) -> None:
        if v is not U:
            key = hash_key(v)
            if key not in self.seen:
                self.seen.add(key)
                self.items.append(v)


ACCUMULATORS: dict[str, Callable[[], Accumulator]] = {
    "COUNT": Count,
    "SUM": Sum,
    "AVG": Avg,
    "MIN": Min,
    "MAX": Max,
    "MAKELIST": MakeList,
    "MAKESET": MakeSet,
}
