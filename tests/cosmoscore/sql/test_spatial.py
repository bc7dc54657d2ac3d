"""The spatial built-ins (cosmos-sql-semantics §5.10, SP1-SP6) on the engine: the docs' validated samples,
published geodesics, containment and crossing on the sphere, and undefined for what is not GeoJSON."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from cosmoscore.sql import execute, parse_query
from cosmoscore.sql.geodesy import AUTHALIC_RADIUS, distance

HQ = [-122.12826822304672, 47.63980239335718]
REFERENCE = [-122.11758113953535, 47.66901087006131]
RND = [-96.84368664765994, 46.81297794314663]
CAMPUS = [
    [-122.13236581015025, 47.64606476313813],
    [-122.13221982500913, 47.633757091363975],
    [-122.11840598103835, 47.641749416109235],
    [-122.12061400629656, 47.64589264786028],
    [-122.13236581015025, 47.64606476313813],
]


def point(lon: float, lat: float) -> dict[str, Any]:
    return {"type": "Point", "coordinates": [lon, lat]}


def polygon(*rings: list[list[float]]) -> dict[str, Any]:
    return {"type": "Polygon", "coordinates": list(rings)}


def box(west: float, south: float, east: float, north: float) -> list[list[float]]:
    """A counter-clockwise rectangle ring (its interior on the left, as the service wants it)."""
    return [[west, south], [east, south], [east, north], [west, north], [west, south]]


def line(*points: list[float]) -> dict[str, Any]:
    return {"type": "LineString", "coordinates": list(points)}


def value(call: str, *args: Any) -> Any:
    """One built-in call on constant GeoJSON arguments; [] when it is undefined."""
    text = f"SELECT VALUE {call}({', '.join(json.dumps(a) for a in args)})"
    return execute(parse_query(text), [{}], {}).rows


def one(call: str, *args: Any) -> Any:
    rows = value(call, *args)
    assert len(rows) == 1, (call, args, rows)
    return rows[0]


# -- the docs' samples (Azure-Samples/cosmos-db-nosql-query-samples, validated against the emulator) ----
def test_st_distance_sample_is_the_wgs84_geodesic() -> None:  # sample:st-distance, SP2
    assert one("ST_DISTANCE", point(*HQ), point(*REFERENCE)) / 1000 == pytest.approx(3.345269817267368, rel=1e-7)
    assert one("ST_DISTANCE", point(*RND), point(*REFERENCE)) / 1000 == pytest.approx(1907.438421299902, rel=1e-7)


def test_st_within_sample() -> None:  # sample:st-within
    assert one("ST_WITHIN", point(-122.12824857332558, 47.6395516675712), polygon(CAMPUS)) is True


def test_st_intersects_sample() -> None:  # sample:st-intersect
    highway = [
        [-122.13693695285855, 47.64996065621003],
        [-122.1351662656516, 47.64627863318731],
        [-122.13488295569863, 47.646326350048696],
        [-122.1366182291613, 47.650016321952904],
        [-122.13693695285855, 47.64996065621003],
    ]
    campus = [
        [-122.14034847687708, 47.6494835188378],
        [-122.14014779899375, 47.64625477474044],
        [-122.13256925774829, 47.646207057813655],
        [-122.13254564858545, 47.64941990019193],
        [-122.14034847687708, 47.6494835188378],
    ]
    assert one("ST_INTERSECTS", polygon(highway), polygon(campus)) is True


def test_st_area_sample_is_the_ellipsoids_area() -> None:  # sample:st-area, SP4
    assert one("ST_AREA", polygon(box(31.8, -5, 32, -4.7))) == pytest.approx(735970283.0522614, rel=1e-9)


def test_st_isvalid_and_detailed_samples() -> None:  # sample:st-isvalid, sample:st-isvaliddetailed
    good, bad = point(-84.38876194345323, 33.75682784306348), point(133.75682784306348, -184.38876194345323)
    assert (one("ST_ISVALID", good), one("ST_ISVALID", bad)) == (True, False)
    assert one("ST_ISVALIDDETAILED", good) == {"valid": True}
    assert one("ST_ISVALIDDETAILED", bad) == {
        "valid": False,
        "reason": "Latitude values must be between -90 and 90 degrees.",
    }
    unclosed = polygon([[31.8, -5], [31.8, -4.7], [32, -4.7], [32, -5]])  # the docs' query example
    assert one("ST_ISVALIDDETAILED", unclosed)["reason"] == (
        "The Polygon input is not valid because the start and end points of the ring number 1 are not the same. "
        "Each ring of a Polygon must have the same start and end points."
    )


# -- distances -------------------------------------------------------------------------------------
def _dms(degrees: float, minutes: float, seconds: float) -> float:
    return degrees + minutes / 60 + seconds / 3600


@pytest.mark.parametrize(
    ("p", "q", "metres", "tolerance"),
    [
        # Vincenty (1975) / Geoscience Australia: Flinders Peak to Buninyong, 54,972.271 m
        (
            (_dms(144, 25, 29.5244), -_dms(37, 57, 3.7203)),
            (_dms(143, 55, 35.3839), -_dms(37, 39, 10.1561)),
            54_972.271,
            1e-3,
        ),
        ((-73.8, 40.6), (-0.5, 51.6), 5_551_759.400, 1e-3),  # GeographicLib's JFK-LHR example
        ((0, 0), (179.5, 0.5), 19_936_288.579, 1e-3),  # Karney (2013), a nearly antipodal pair
        ((0, 0), (0, 1), 110_574.389, 1e-3),  # one degree of latitude at the equator
    ],
)
def test_published_geodesics(p: tuple[float, float], q: tuple[float, float], metres: float, tolerance: float) -> None:
    assert distance(p, q) == pytest.approx(metres, abs=tolerance)
    assert one("ST_DISTANCE", point(*p), point(*q)) == pytest.approx(metres, abs=tolerance)


def test_antipodes_fall_back_to_the_mean_sphere_within_a_tenth_of_a_percent() -> None:
    """Vincenty does not converge for exact antipodes; the true geodesic over a pole is 20,003,931.46 m."""
    assert distance((0, 0), (180, 0)) == pytest.approx(20_003_931.46, rel=1e-3)


@pytest.mark.parametrize(
    ("a", "b", "km"),
    [  # city-centre coordinates and their commonly quoted great-circle distances, to 1%
        ((-0.1276, 51.5072), (2.3522, 48.8566), 344),  # London - Paris
        ((-74.0060, 40.7128), (-0.1276, 51.5072), 5570),  # New York - London
        ((151.2093, -33.8688), (144.9631, -37.8136), 714),  # Sydney - Melbourne
        ((139.6917, 35.6895), (135.5023, 34.6937), 397),  # Tokyo - Osaka
    ],
)
def test_distances_between_cities(a: tuple[float, float], b: tuple[float, float], km: float) -> None:
    assert one("ST_DISTANCE", point(*a), point(*b)) / 1000 == pytest.approx(km, rel=0.01)


def test_distance_to_a_line_and_a_polygon_is_to_their_nearest_point() -> None:
    equator = line([-1, 0], [1, 0])
    assert one("ST_DISTANCE", point(0, 1), equator) == pytest.approx(110_574.389, rel=1e-6)  # the foot: (0, 0)
    assert one("ST_DISTANCE", point(3, 0), equator) == pytest.approx(distance((3, 0), (1, 0)), rel=1e-9)
    square = polygon(box(0, 0, 1, 1))
    assert one("ST_DISTANCE", point(0.5, 0.5), square) == 0  # inside
    gap = distance((1, 1), (2, 1))  # meridians converge: the squares are nearest at their north corners
    assert one("ST_DISTANCE", polygon(box(2, 0, 3, 1)), square) == pytest.approx(gap, rel=1e-9)
    assert one("ST_DISTANCE", line([0.5, -1], [0.5, 2]), square) == 0  # crossing


# -- containment and crossing ------------------------------------------------------------------------
def test_within_a_polygon_its_holes_and_a_multipolygon() -> None:
    holed = polygon(box(0, 0, 10, 10), list(reversed(box(4, 4, 6, 6))))
    assert one("ST_WITHIN", point(2, 2), holed) is True
    assert one("ST_WITHIN", point(5, 5), holed) is False  # in the hole
    assert one("ST_WITHIN", point(11, 5), holed) is False
    multi = {"type": "MultiPolygon", "coordinates": [[box(52, 12, 53, 13)], [box(50, 0, 51, 5)]]}  # the docs'
    assert [one("ST_WITHIN", point(*p), multi) for p in ([52.5, 12.5], [50.5, 4], [51.5, 6])] == [True, True, False]


def test_a_clockwise_polygon_is_the_rest_of_the_earth() -> None:
    """ "A Polygon specified in clockwise order represents the inverse of the region within it" (SP3)."""
    clockwise = polygon(list(reversed(box(0, 0, 1, 1))))
    assert one("ST_WITHIN", point(0.5, 0.5), clockwise) is False
    assert one("ST_WITHIN", point(100, -40), clockwise) is True
    earth = 4 * math.pi * AUTHALIC_RADIUS**2
    assert one("ST_AREA", clockwise) == pytest.approx(earth - one("ST_AREA", polygon(box(0, 0, 1, 1))), rel=1e-12)


def test_polygons_and_lines_within_polygons() -> None:
    outer = polygon(box(0, 0, 10, 10))
    assert one("ST_WITHIN", polygon(box(1, 1, 2, 2)), outer) is True
    assert one("ST_WITHIN", outer, outer) is True  # a geometry is within itself (OGC)
    assert one("ST_WITHIN", polygon(box(0, 0, 5, 5)), outer) is True  # touching the boundary from inside
    assert one("ST_WITHIN", point(0, 5), outer) is False  # on the boundary, not in the interior
    assert one("ST_WITHIN", line([0, 0], [0, 10]), outer) is False  # only on the boundary (OGC)
    assert one("ST_WITHIN", line([0, 0], [5, 5]), outer) is True  # from the boundary inwards
    assert one("ST_WITHIN", outer, polygon(list(reversed(box(0, 0, 10, 10))))) is False  # not in its complement
    assert one("ST_WITHIN", polygon(box(8, 8, 12, 12)), outer) is False  # crosses the boundary
    assert one("ST_WITHIN", outer, polygon(box(1, 1, 2, 2))) is False
    assert one("ST_WITHIN", outer, polygon(box(-1, -1, 11, 11), list(reversed(box(4, 4, 5, 5))))) is False  # a hole
    assert one("ST_WITHIN", line([1, 1], [9, 9]), outer) is True
    assert one("ST_WITHIN", line([1, 1], [19, 9]), outer) is False
    assert one("ST_WITHIN", point(0.5, 0), line([0, 0], [1, 0])) is True  # on the line
    assert one("ST_WITHIN", point(3, 3), point(3, 3)) is True
    assert one("ST_WITHIN", point(3, 3), point(3, 4)) is False


def test_edges_are_great_circle_arcs_not_straight_lines_on_the_map() -> None:
    """The arc from (0, 60) to (40, 60) bulges north of latitude 60 by about 3.4 degrees at 20 E."""
    wide = polygon([[0, 50], [40, 50], [40, 60], [0, 60], [0, 50]])
    assert one("ST_WITHIN", point(20, 61), wide) is True
    assert one("ST_WITHIN", point(20, 64), wide) is False


def test_intersections() -> None:
    square = polygon(box(0, 0, 1, 1))
    assert one("ST_INTERSECTS", line([-1, 0.5], [2, 0.5]), square) is True  # no vertex inside, edges cross
    assert one("ST_INTERSECTS", line([-1, 2], [2, 2]), square) is False
    assert one("ST_INTERSECTS", point(0.5, 0.5), square) is True
    assert one("ST_INTERSECTS", polygon(box(2, 2, 3, 3)), square) is False
    assert one("ST_INTERSECTS", line([0, -1], [0, 1]), line([-1, 0], [1, 0])) is True
    across = polygon([[179, -1], [-179, -1], [-179, 1], [179, 1], [179, -1]])  # across the antimeridian
    assert one("ST_INTERSECTS", point(180, 0), across) is True
    assert one("ST_WITHIN", point(-179.5, 0.5), across) is True
    assert one("ST_WITHIN", point(0, 0), across) is False


# -- areas, validity, and undefined ------------------------------------------------------------------
def test_area_of_points_lines_holes_and_multipolygons() -> None:
    assert one("ST_AREA", point(1, 1)) == 0 and one("ST_AREA", line([0, 0], [1, 1])) == 0  # SP4
    whole = one("ST_AREA", polygon(box(0, 0, 10, 10)))
    hole = one("ST_AREA", polygon(box(4, 4, 6, 6)))
    assert one("ST_AREA", polygon(box(0, 0, 10, 10), list(reversed(box(4, 4, 6, 6))))) == pytest.approx(whole - hole)
    multi = {"type": "MultiPolygon", "coordinates": [[box(0, 0, 10, 10)], [box(4, 4, 6, 6)]]}
    assert one("ST_AREA", multi) == pytest.approx(whole + hole)


@pytest.mark.parametrize(
    ("geometry", "reason"),
    [
        ({"type": "Point", "coordinates": [200, 10]}, "Longitude values must be between -180 and 180 degrees."),
        ({"type": "Point", "coordinates": ["a", 1]}, "A position must be an array of two numbers"),
        ({"type": "Point"}, "its coordinates are not an array"),
        ({"type": "Circle", "coordinates": [0, 0]}, "not a supported spatial type"),
        (line([0, 0], [0, 0]), "A LineString must have at least two distinct points."),
        (polygon([[0, 0], [1, 0], [0, 0]]), "ring number 1 does not have enough points"),
        (polygon(box(0, 0, 9, 9), [[1, 1], [2, 1], [2, 2]]), "ring number 2 are not the same"),
    ],
)
def test_invalid_geometries_say_why(geometry: dict[str, Any], reason: str) -> None:
    detailed = one("ST_ISVALIDDETAILED", geometry)
    assert detailed["valid"] is False and reason in detailed["reason"]
    assert one("ST_ISVALID", geometry) is False
    assert value("ST_DISTANCE", geometry, point(0, 0)) == []  # "equivalent to undefined" (SP1)
    assert value("ST_WITHIN", point(0, 0), geometry) == []


@pytest.mark.parametrize("not_geojson", [5, "Point", [1, 2], None, True])
def test_non_objects_are_undefined(not_geojson: Any) -> None:
    for call in ("ST_DISTANCE", "ST_WITHIN", "ST_INTERSECTS"):
        assert value(call, not_geojson, point(0, 0)) == []
        assert value(call, point(0, 0), not_geojson) == []
    for call in ("ST_AREA", "ST_ISVALID", "ST_ISVALIDDETAILED"):
        assert value(call, not_geojson) == []


def test_a_filter_skips_documents_without_a_valid_location() -> None:
    docs = [
        {"id": "near", "loc": point(31.9, -4.8)},
        {"id": "far", "loc": point(40, 10)},
        {"id": "text", "loc": "31.9,-4.8"},
        {"id": "broken", "loc": {"type": "Point", "coordinates": [31.9, -95]}},
        {"id": "none"},
    ]
    query = "SELECT VALUE c.id FROM c WHERE ST_DISTANCE(c.loc, @p) < 30000"  # the docs' proximity query
    assert execute(parse_query(query), docs, {"@p": point(31.91, -4.81)}).rows == ["near"]
    query = "SELECT VALUE c.id FROM c WHERE NOT ST_ISVALID(c.loc)"
    assert execute(parse_query(query), docs, {}).rows == ["broken"]


def test_a_constant_geometry_read_once_answers_as_one_read_per_row() -> None:
    """The compiler reads a constant or parameter geometry once (`Builtin.prepare`); a document's is read
    on each row. Both paths give the same answers."""
    region = polygon(box(0, 0, 10, 10), list(reversed(box(4, 4, 6, 6))))
    docs = [{"id": str(i), "loc": point(i % 12, i % 7), "region": region} for i in range(40)]
    for call in ("ST_WITHIN(c.loc, {})", "ST_INTERSECTS({}, c.loc)", "ST_DISTANCE(c.loc, {})"):
        per_row = execute(parse_query(f"SELECT VALUE {call.format('c.region')} FROM c"), docs, {}).rows
        literal = execute(parse_query(f"SELECT VALUE {call.format(json.dumps(region))} FROM c"), docs, {}).rows
        parameter = execute(parse_query(f"SELECT VALUE {call.format('@r')} FROM c"), docs, {"@r": region}).rows
        assert per_row == literal == parameter and len(per_row) == 40
    invalid = execute(parse_query("SELECT VALUE ST_WITHIN(c.loc, @r) FROM c"), docs, {"@r": point(0, 95)}).rows
    assert invalid == []
