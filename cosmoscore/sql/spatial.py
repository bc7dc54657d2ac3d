"""The spatial built-ins (cosmos-sql-semantics §5.10, SP1-SP6): ST_DISTANCE, ST_WITHIN, ST_INTERSECTS,
ST_AREA, ST_ISVALID, ST_ISVALIDDETAILED over GeoJSON Point, LineString, Polygon and MultiPolygon.

A non-object argument, or an object that is not a valid geometry, gives undefined ("if the location
value specified in either argument is malformed or invalid, then it evaluates to undefined"), except
for the validity checks. Each geometry is reduced to a `Shape` (its vertices, its arcs, its areas) and
the predicates are written once over shapes, on the sphere (`geodesy`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import geodesy as g
from .ast import UNDEFINED
from .geojson import Geometry, InvalidGeometry, LineString, MultiPolygon, Point, Polygon, read_geometry


@dataclass(frozen=True, slots=True)
class Area:
    """A polygon on the sphere: its boundary ring (clockwise: it encloses the rest of the earth), holes."""

    boundary: g.Ring
    clockwise: bool
    holes: tuple[g.Ring, ...]


@dataclass(frozen=True, slots=True)
class Shape:
    """What the predicates need of a geometry: its vertices (position and vector), arcs and areas."""

    vertices: tuple[tuple[g.Position, g.Vector], ...]
    arcs: tuple[tuple[g.Vector, g.Vector], ...]
    areas: tuple[Area, ...]


def _geometry(value: Any) -> Geometry | None:
    """The geometry of a value, None when it is not a valid GeoJSON object."""
    if value.__class__ is not dict:
        return None
    try:
        return read_geometry(value)
    except InvalidGeometry:
        return None


def _rings(geometry: Geometry) -> list[tuple[g.Position, ...]]:
    if isinstance(geometry, Point):
        return [(geometry.at,)]
    if isinstance(geometry, LineString):
        return [geometry.points]
    polygons = geometry.polygons if isinstance(geometry, MultiPolygon) else (geometry,)
    return [ring for polygon in polygons for ring in polygon.rings]


def _area(polygon: Polygon) -> Area:
    boundary, *holes = (g.prepare_ring([g.vector(p) for p in ring]) for ring in polygon.rings)
    clockwise = g.signed_area(polygon.rings[0]) < 0
    return Area(boundary, clockwise, tuple(holes))


def shape(geometry: Geometry) -> Shape:
    """The vertices, arcs and areas of a geometry."""
    vertices: list[tuple[g.Position, g.Vector]] = []
    arcs: list[tuple[g.Vector, g.Vector]] = []
    for ring in _rings(geometry):
        vectors = [g.vector(p) for p in ring]
        vertices += zip(ring, vectors)
        arcs += [(a, b) for a, b in zip(vectors, vectors[1:]) if a != b]
    polygons = geometry.polygons if isinstance(geometry, MultiPolygon) else (geometry,)
    areas = tuple(_area(p) for p in polygons if isinstance(p, Polygon))
    return Shape(tuple(vertices), tuple(arcs), areas)


INSIDE, ON_EDGE, OUTSIDE = 1, 0, -1


def _place(area: Area, p: g.Vector) -> int:
    """Where `p` is in an area: INSIDE (left of its boundary ring: inside a counter-clockwise ring,
    anywhere outside a clockwise one; and in none of its holes), ON_EDGE, or OUTSIDE."""
    where = g.locate(area.boundary, p)
    if where is None:
        return ON_EDGE
    if not _left_of(area, where):
        return OUTSIDE
    for hole in area.holes:
        in_hole = g.locate(hole, p)
        if in_hole != 0:
            return ON_EDGE if in_hole is None else OUTSIDE
    return INSIDE


def _left_of(area: Area, where: int) -> bool:
    """Whether a point `locate` placed at `where` (not on the ring) is left of the area's boundary."""
    if area.boundary.reach:  # 1: in the ring's smaller side
        return (where == 1) != area.clockwise
    return where == 1 or (where == 0 and area.clockwise)  # past a hemisphere: the winding's sign says


def _inside(area: Area, p: g.Vector) -> bool:
    return _place(area, p) == INSIDE


def _same(p: g.Vector, q: g.Vector) -> bool:
    """Whether two unit vectors are one point (within `ON_EDGE`)."""
    c = g.cross(p, q)
    return g.dot(p, q) > 0 and g.dot(c, c) <= g.ON_EDGE * g.ON_EDGE


def _touches(p: g.Vector, s: Shape) -> bool:
    """Whether a point belongs to a shape: in or on one of its areas, on one of its lines, or its point."""
    if s.areas:
        return any(_place(area, p) != OUTSIDE for area in s.areas)
    if s.arcs:
        return any(g.on_arc(p, a, b) for a, b in s.arcs)
    return any(_same(p, v) for _, v in s.vertices)


def intersects(s1: Shape, s2: Shape) -> bool:
    """Whether two shapes share a point: a vertex of one in the other, or two arcs crossing."""
    if any(_touches(v, s2) for _, v in s1.vertices) or any(_touches(v, s1) for _, v in s2.vertices):
        return True
    return any(g.arcs_cross(a, b, c, d) for a, b in s1.arcs for c, d in s2.arcs)


def within(s1: Shape, s2: Shape) -> bool:
    """Whether the first shape lies in the second (OGC: every point of it is in the second, and it is not
    only on the second's boundary). A point must be in an area's interior; a line or polygon may touch the
    boundary but not cross it, nor hold a part of the second (a hole); on a line or a point, lie on it."""
    midpoints = [_midpoint(a, b) for a, b in s1.arcs]
    points = [*(v for _, v in s1.vertices), *midpoints]
    if not s2.areas:
        return not s1.areas and all(_touches(v, s2) for v in points)
    inside = [any(_inside(area, v) for area in s2.areas) for v in (_probes(s1) if s1.areas else points)]
    if not s1.arcs or s1.areas:  # a point, or an area: its interior inside the second's
        if not all(inside):
            return False
    elif not any(inside):  # a line along the boundary only
        return False
    if not all(_touches(v, s2) for v in points):
        return False
    if any(g.arcs_cross_properly(a, b, c, d) for a, b in s1.arcs for c, d in s2.arcs):
        return False
    return not any(_inside(area, v) for area in s1.areas for _, v in s2.vertices)


def _probes(s: Shape) -> list[g.Vector]:
    """Points just inside a shape's areas: each boundary arc's middle, nudged to its left (the interior)."""
    probes = []
    for area in s.areas:
        for ring in (area.boundary, *area.holes):
            for a, b in zip(ring.vertices, ring.vertices[1:]):
                left, mid = g.cross(a, b), _midpoint(a, b)
                length = g.dot(left, left) ** 0.5
                if length > 0:
                    nudge = min(1e-7, length * 1e-3) / length  # well under a metre
                    probes.append(_normalized(tuple(m + x * nudge for m, x in zip(mid, left))))
    return probes


def _normalized(v: tuple[float, ...]) -> g.Vector:
    norm = sum(x * x for x in v) ** 0.5
    return (v[0] / norm, v[1] / norm, v[2] / norm)


def _midpoint(a: g.Vector, b: g.Vector) -> g.Vector:
    total = (a[0] + b[0], a[1] + b[1], a[2] + b[2])
    return a if g.dot(total, total) < 1e-24 else _normalized(total)  # antipodal ends: no one middle


def distance(s1: Shape, s2: Shape) -> float:
    """The shortest geodesic distance in metres between two shapes; 0 when they intersect. Nearest points
    are found on the sphere (a vertex of one to a vertex or arc of the other), and those within 2% of the
    nearest (the ellipsoid differs from the sphere by under 0.6%) are measured on the ellipsoid."""
    if len(s1.vertices) == len(s2.vertices) == 1:  # two points: the one geodesic
        return g.distance(s1.vertices[0][0], s2.vertices[0][0])
    if intersects(s1, s2):
        return 0.0
    pairs = [*_nearest_pairs(s1, s2), *_nearest_pairs(s2, s1)]
    best = min(angle for angle, _, _ in pairs)
    return min(g.distance(p, q) for angle, p, q in pairs if angle <= best * 1.02 + 1e-15)


def _nearest_pairs(s1: Shape, s2: Shape) -> list[tuple[float, g.Position, g.Position]]:
    """(angle on the sphere, a vertex of s1, the nearest point of s2 to it) for each vertex of s1."""
    pairs = []
    for p, v in s1.vertices:
        candidates = [(_angle(v, w), q) for q, w in s2.vertices]
        for a, b in s2.arcs:
            foot = g.nearest_on_arc(v, a, b)
            if foot is not a and foot is not b:  # an arc's ends are among the vertices
                candidates.append((_angle(v, foot), g.position(foot)))
        angle, q = min(candidates)
        pairs.append((angle, p, q))
    return pairs


def _angle(v: g.Vector, w: g.Vector) -> float:
    return math.acos(max(-1.0, min(1.0, g.dot(v, w))))


def area(geometry: Geometry) -> float:
    """Square metres: a polygon's left of its boundary less its holes; 0 for points and lines."""
    polygons = geometry.polygons if isinstance(geometry, MultiPolygon) else (geometry,)
    total = 0.0
    for polygon in polygons:
        if isinstance(polygon, Polygon):
            holes = sum(abs(g.signed_area(ring)) for ring in polygon.rings[1:])
            total += g.left_area(polygon.rings[0]) - holes
    return total


def _shape_of(value: Any) -> Shape | None:
    """The shape of a value (a query's constant arrives already read), None when it is not a geometry."""
    if isinstance(value, Shape):
        return value
    geometry = _geometry(value)
    return None if geometry is None else shape(geometry)


def prepare_geometry(value: Any) -> Any:
    """A constant argument of a two-geometry built-in, read at compile time: its shape, or undefined."""
    found = _shape_of(value)
    return UNDEFINED if found is None else found


def _pair(test: Callable[[Shape, Shape], Any]) -> Callable[[Any, Any], Any]:
    """A two-geometry built-in: undefined unless both arguments are valid geometries."""

    def fn(x: Any, y: Any) -> Any:
        sx, sy = _shape_of(x), _shape_of(y)
        return UNDEFINED if sx is None or sy is None else test(sx, sy)

    return fn


def _st_area(x: Any) -> Any:
    geometry = _geometry(x)
    return UNDEFINED if geometry is None else area(geometry)


def _validity(x: Any) -> Any:
    """ST_ISVALIDDETAILED: `{"valid": true}`, or false with the reason; undefined for a non-object."""
    if x.__class__ is not dict:
        return UNDEFINED
    try:
        read_geometry(x)
    except InvalidGeometry as exc:
        return {"valid": False, "reason": str(exc)}
    return {"valid": True}


def _is_valid(x: Any) -> Any:
    detailed = _validity(x)
    return UNDEFINED if detailed is UNDEFINED else detailed["valid"]


# the built-ins whose constant arguments the compiler reads once (`functions.Builtin.prepare`)
PREPARED_ARGUMENTS: dict[str, Callable[[Any], Any]] = {
    name: prepare_geometry for name in ("ST_DISTANCE", "ST_WITHIN", "ST_INTERSECTS")
}
SPATIAL_FUNCTIONS: dict[str, tuple[int, int | None, Callable[..., Any]]] = {
    "ST_DISTANCE": (2, 2, _pair(distance)),
    "ST_WITHIN": (2, 2, _pair(within)),
    "ST_INTERSECTS": (2, 2, _pair(intersects)),
    "ST_AREA": (1, 1, _st_area),
    "ST_ISVALID": (1, 1, _is_valid),
    "ST_ISVALIDDETAILED": (1, 1, _validity),
}
