"""Property tests: the engine against a deliberately naive, separate reference of §3.3/§3.6 rules."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cosmoscore.sql import execute, parse_query

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.sampled_from([-1.5, 0.5, 2.0]),
    st.sampled_from(["a", "B", "b"]),
)
values = st.one_of(scalars, st.lists(st.integers(0, 2), max_size=2), st.just({"k": 1}))
MISSING = object()


def type_rank(v: object) -> int:
    """Reference type order: undefined < null < boolean < number < string < array < object."""
    if v is MISSING:
        return 0
    if v is None:
        return 1
    if isinstance(v, bool):
        return 2
    if isinstance(v, (int, float)):
        return 3
    if isinstance(v, str):
        return 4
    return 5 if isinstance(v, list) else 6


def docs_of(vs: list) -> list[dict]:
    return [{"i": i} if v is MISSING else {"i": i, "v": v} for i, v in enumerate(vs)]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(values, st.just(MISSING)), max_size=12), scalars)
def test_equality_filter_is_type_strict(vs: list, k: object) -> None:
    docs = docs_of(vs)
    got = execute(parse_query("SELECT VALUE c.i FROM c WHERE c.v = @k"), docs, {"@k": k}).rows
    want = [i for i, v in enumerate(vs) if type_rank(v) == type_rank(k) and v == k]
    assert got == want


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(scalars, st.just(MISSING)), max_size=12))
def test_order_by_follows_type_order_then_value(vs: list) -> None:
    got = execute(parse_query("SELECT VALUE c.i FROM c ORDER BY c.v"), docs_of(vs)).rows
    keys = [(type_rank(vs[i]), 0 if vs[i] is MISSING or vs[i] is None else vs[i]) for i in got]
    assert keys == sorted(keys)
    assert sorted(got) == list(range(len(vs)))


@settings(max_examples=100, deadline=None)
@given(st.lists(values, max_size=12))
def test_distinct_matches_a_json_set(vs: list) -> None:
    got = execute(parse_query("SELECT DISTINCT VALUE c.v FROM c"), docs_of(vs)).rows
    assert got == _dedupe_numbers(vs)


def _dedupe_numbers(vs: list) -> list:
    """Distinct by type and value, 2 and 2.0 being one number."""
    out: list = []
    for v in vs:
        if not any(type_rank(v) == type_rank(w) and v == w for w in out):
            out.append(v)
    return out


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.one_of(values, st.just(MISSING)), st.one_of(scalars, st.just(MISSING))), max_size=30),
    st.booleans(),
    st.booleans(),
    st.integers(0, 8),
    st.integers(1, 12),
)
def test_a_bounded_multi_key_order_is_the_head_of_the_full_sort(
    pairs: list, desc_a: bool, desc_b: bool, offset: int, limit: int
) -> None:
    """OFFSET/LIMIT and TOP over a multi-key ORDER BY take the top k without sorting everything;
    ties and every type order exactly as the full stable sort does."""
    docs = [
        {"i": i, **({} if a is MISSING else {"a": a}), **({} if b is MISSING else {"b": b})}
        for i, (a, b) in enumerate(pairs)
    ]
    order = f"ORDER BY c.a{' DESC' if desc_a else ''}, c.b{' DESC' if desc_b else ''}"
    full = [d["i"] for d in execute(parse_query(f"SELECT * FROM c {order}"), docs).rows]
    paged = execute(parse_query(f"SELECT * FROM c {order} OFFSET {offset} LIMIT {limit}"), docs).rows
    top = execute(parse_query(f"SELECT TOP {limit} * FROM c {order}"), docs).rows
    assert [d["i"] for d in paged] == full[offset : offset + limit]
    assert [d["i"] for d in top] == full[:limit]
