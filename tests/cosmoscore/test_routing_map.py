"""The routing map: it refuses a range set that does not tile ["", "FF") exactly, and its bisecting
overlap search agrees with a plain scan over every range."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cosmoscore.epk import MAX_EPK, MIN_EPK, EpkRange, epk_v1
from cosmoscore.layout import even_boundaries, midpoint
from cosmoscore.routing import RoutingMap, predict_partitions, predicted_class, tiling_faults


@dataclass(frozen=True)
class Pk:
    """A pkrange as the map sees one: an id and its bounds."""

    id: str
    min: str
    max: str


def pkranges(*bounds: tuple[str, str]) -> list[Pk]:
    return [Pk(str(i), lo, hi) for i, (lo, hi) in enumerate(bounds)]


def refusal(ranges: list[Pk] | list[EpkRange]) -> str:
    with pytest.raises(ValueError) as caught:
        RoutingMap(ranges)
    return str(caught.value)


def test_a_tiling_is_accepted_in_any_order_and_kept_sorted() -> None:
    ranges = pkranges(("80", MAX_EPK), (MIN_EPK, "40"), ("40", "80"))
    routing = RoutingMap(ranges)
    assert [r.id for r in routing.ranges] == ["1", "2", "0"]
    assert routing.range_for("7F").id == "2" and routing.range_for("").id == "1" and routing.range_for("80").id == "0"


def test_one_range_over_the_whole_space_is_a_tiling() -> None:
    assert len(RoutingMap([EpkRange(MIN_EPK, MAX_EPK)])) == 1


def test_a_gap_is_refused_naming_both_neighbours() -> None:
    message = refusal(pkranges((MIN_EPK, "40"), ("50", MAX_EPK)))
    assert "a gap ['40', '50')" in message
    assert "range '0' ['', '40')" in message and "range '1' ['50', 'FF')" in message


def test_an_overlap_is_refused_naming_both_ranges() -> None:
    message = refusal(pkranges((MIN_EPK, "50"), ("40", MAX_EPK)))
    assert "range '0' ['', '50') and range '1' ['40', 'FF') overlap" in message


def test_a_range_nested_in_another_is_an_overlap_not_a_short_end() -> None:
    message = refusal(pkranges((MIN_EPK, MAX_EPK), ("20", "30")))
    assert "range '0' ['', 'FF') and range '1' ['20', '30') overlap" in message
    assert "ends below" not in message


def test_the_same_bounds_twice_are_refused() -> None:
    message = refusal([EpkRange(MIN_EPK, "40"), EpkRange(MIN_EPK, "40"), EpkRange("40", MAX_EPK)])
    assert "['', '40') and ['', '40') are the same range" in message


def test_a_duplicate_id_is_refused_even_when_the_bounds_tile() -> None:
    message = refusal([Pk("7", MIN_EPK, "40"), Pk("7", "40", MAX_EPK)])
    assert "id '7' names 2 ranges: ['', '40'), ['40', 'FF')" in message


@pytest.mark.parametrize(("lo", "hi"), [("40", "40"), ("60", "40")])
def test_an_empty_or_inverted_range_is_refused(lo: str, hi: str) -> None:
    message = refusal(pkranges((MIN_EPK, "40"), (lo, hi), ("40", MAX_EPK)))
    assert f"range '1' [{lo!r}, {hi!r}) is empty (min >= max)" in message


def test_a_set_not_starting_at_the_bottom_is_refused() -> None:
    message = refusal(pkranges(("10", "40"), ("40", MAX_EPK)))
    assert "the first range range '0' ['10', '40') starts above \"\"" in message


def test_a_set_not_reaching_the_top_is_refused() -> None:
    message = refusal(pkranges((MIN_EPK, "40"), ("40", "80")))
    assert "the last range range '1' ['40', '80') ends below \"FF\"" in message


def test_no_ranges_are_refused() -> None:
    assert "there are no ranges" in refusal([])


def test_every_fault_is_reported_at_once() -> None:
    faults = tiling_faults(sorted(pkranges(("10", "40"), ("50", "60")), key=lambda r: r.min))
    assert len(faults) == 3  # starts above "", a gap, ends below "FF"


def test_the_layout_after_a_split_is_a_tiling() -> None:
    """What the emulator holds after a split: the parent gone, its two children covering its span."""
    ranges = pkranges(*even_boundaries(3))
    parent = ranges.pop(1)
    cut = midpoint(parent.min, parent.max)
    ranges += [Pk("3", parent.min, cut), Pk("4", cut, parent.max)]
    routing = RoutingMap(ranges)
    assert [r.id for r in routing.ranges] == ["0", "3", "4", "2"]
    assert "overlap" in refusal([*ranges, parent])  # the parent kept beside its children


def test_an_interval_is_answered_by_its_ends() -> None:
    routing = RoutingMap(pkranges((MIN_EPK, "20"), ("20", "40"), ("40", MAX_EPK)))
    assert [r.id for r in routing.overlapping(EpkRange("20", "40"))] == ["1"]  # max is exclusive
    assert [r.id for r in routing.overlapping(EpkRange("1F", "20"))] == ["0"]
    assert [r.id for r in routing.overlapping(EpkRange("1F", MAX_EPK))] == ["0", "1", "2"]
    assert [r.id for r in routing.overlapping(EpkRange.point("40"))] == ["2"]
    assert routing.overlapping(EpkRange("30", "10")) == []  # inverted: holds no EPK
    assert routing.indexes([EpkRange("25", "26"), EpkRange.point("41")]) == {1, 2}


# -- the bisecting search against a linear scan ---------------------------------------------------------
HEX = "0123456789ABCDEF"
# EPKs as the service writes them: the top two hash bits are clear, so they start with 0-3 and sort below "FF"
EPKS = st.builds(lambda head, tail: head + tail, st.sampled_from("0123"), st.text(HEX, max_size=5))
TILINGS = st.lists(EPKS, max_size=12, unique=True).map(
    lambda cuts: [Pk(str(i), lo, hi) for i, (lo, hi) in enumerate(_pairs(sorted(cuts)))]
)


def _pairs(cuts: list[str]) -> list[tuple[str, str]]:
    bounds = [MIN_EPK, *cuts, MAX_EPK]
    return list(zip(bounds[:-1], bounds[1:]))


@st.composite
def tiling_and_intervals(draw: st.DrawFn) -> tuple[list[Pk], list[EpkRange]]:
    ranges = draw(TILINGS)
    bounds = st.one_of(EPKS, st.sampled_from([MIN_EPK, MAX_EPK, *(r.min for r in ranges)]))
    intervals = []
    for lo, hi in draw(st.lists(st.tuples(bounds, bounds), min_size=1, max_size=4)):
        lo, hi = sorted((lo, hi))
        intervals.append(EpkRange.point(lo) if draw(st.booleans()) else EpkRange(lo, hi))
    return draw(st.permutations(ranges)), intervals


def linear_overlapping(ranges: list[Pk], interval: EpkRange) -> list[Pk]:
    return [r for r in sorted(ranges, key=lambda r: r.min) if EpkRange(r.min, r.max).overlaps(interval)]


@given(tiling_and_intervals())
def test_bisecting_overlap_search_equals_a_linear_scan(case: tuple[list[Pk], list[EpkRange]]) -> None:
    ranges, intervals = case
    routing = RoutingMap(ranges)
    for interval in intervals:
        assert routing.overlapping(interval) == linear_overlapping(ranges, interval), interval
    expected = {routing.ranges.index(r) for interval in intervals for r in linear_overlapping(ranges, interval)}
    assert routing.indexes(intervals) == expected


@given(TILINGS, EPKS)
def test_every_epk_has_exactly_one_owner(ranges: list[Pk], epk: str) -> None:
    owners = [r for r in ranges if EpkRange(r.min, r.max).contains(epk)]
    assert owners == [RoutingMap(ranges).range_for(epk)]


def test_a_prediction_without_ranges_is_unknown_but_an_incomplete_set_is_refused() -> None:
    """No ranges: the collector could not read the container, and records the query without a prediction."""
    definition = {"paths": ["/tenant"], "kind": "Hash", "version": 2}
    assert predict_partitions("SELECT * FROM c", {}, None, definition, []) is None
    assert predicted_class(predict_partitions("SELECT * FROM c", {}, None, definition, []), 0) == "unknown"
    with pytest.raises(ValueError, match="ends below"):
        predict_partitions("SELECT * FROM c", {}, None, definition, [EpkRange(MIN_EPK, "20")])
    assert predict_partitions("SELECT * FROM c", {}, None, definition, pkranges(*even_boundaries(3))) == {0, 1, 2}


@pytest.mark.parametrize("definition", [{"paths": ["/k"], "kind": "Hash", "version": 1}, {"paths": ["/k"]}])
def test_a_v1_container_is_predicted_with_v1_hashes(definition: dict[str, object]) -> None:
    """The replay collector predicts a V1 container's routing from V1 EPKs over V1 bounds (W60); a
    definition without a version is V1."""
    ranges = pkranges(*even_boundaries(4, version=1))
    routing = RoutingMap(ranges)
    for key in ("a", "tenant-7", 42, True):
        owner = ranges.index(routing.range_for(epk_v1([key])))
        assert predict_partitions("SELECT * FROM c", {}, key, definition, ranges) == {owner}
        where = "SELECT * FROM c WHERE c.k = @k"
        assert predict_partitions(where, {"@k": key}, None, definition, ranges) == {owner}
    owners = {ranges.index(routing.range_for(epk_v1([f"t{i}"]))) for i in range(40)}
    assert owners == {0, 1, 2, 3}
