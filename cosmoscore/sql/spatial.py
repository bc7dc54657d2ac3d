"""The spatial built-ins (cosmos-sql-semantics §5.10, SP1-SP6): ST_DISTANCE, ST_WITHIN, ST_INTERSECTS,
ST_AREA, ST_ISVALID, ST_ISVALIDDETAILED over GeoJSON Point, LineString, Polygon and MultiPolygon.

A non-object argument, or an object that is not a valid geometry, gives undefined ("if the location
value specified in either argument is malformed or invalid, then it evaluates to undefined"), except
for the validity checks. Each geometry is reduced to a `Shape` (its vertices, its arcs, its areas) and
the predicates are written once over shapes, on the sphere (`geodesy`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import geodesy as g
from .ast import UNDEFINED
from .geojson import Geometry, InvalidGeometry, LineString, MultiPolygon, Point, Polygon, read_geometry


@dataclass(frozen=True, slots=True)
class Area:
    """A polygon on the sphere: its boundary ring (clockwise: it encloses the rest of the earth), holes."""

    boundary: tuple[g.Vector, ...]
    clockwise: bool
    holes: tuple[tuple[g.Vector, ...], ...]


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
    boundary, *holes = ([g.vector(p) for p in ring] for ring in polygon.rings)
    clockwise = g.signed_area(polygon.rings[0]) < 0
    return Area(tuple(boundary), clockwise, tuple(tuple(h) for h in holes))


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


def _inside(area: Area, p: g.Vector) -> bool:
    """Whether `p` is in the area's interior: left of its boundary ring (counter-clockwise around it, or
    anywhere outside a clockwise ring), and in none of its holes; a point on an edge is not inside."""
    for ring in (area.boundary, *area.holes):
        if any(g.on_arc(p, a, b) for a, b in zip(ring, ring[1:])):
            return False
    turns = g.winding(area.boundary, p)
    if not (turns == 1 or (turns == 0 and area.clockwise)):
        return False
    return all(g.winding(hole, p) == 0 for hole in area.holes)


def _same(p: g.Vector, q: g.Vector) -> bool:
    """Whether two unit vectors are one point (within `ON_EDGE`)."""
    c = g.cross(p, q)
    return g.dot(p, q) > 0 and g.dot(c, c) <= g.ON_EDGE * g.ON_EDGE


def _touches(p: g.Vector, s: Shape) -> bool:
    """Whether a point belongs to a shape: one of its points, on one of its arcs, or inside an area."""
    if not s.arcs and any(_same(p, v) for _, v in s.vertices):
        return True
    return any(g.on_arc(p, a, b) for a, b in s.arcs) or any(_inside(area, p) for area in s.areas)


def intersects(s1: Shape, s2: Shape) -> bool:
    """Whether two shapes share a point: a vertex of one in the other, or two arcs crossing."""
    if any(_touches(v, s2) for _, v in s1.vertices) or any(_touches(v, s1) for _, v in s2.vertices):
        return True
    return any(g.arcs_cross(a, b, c, d) for a, b in s1.arcs for c, d in s2.arcs)


def within(s1: Shape, s2: Shape) -> bool:
    """Whether the first shape lies in the second: in an area's interior, never crossing its boundary nor
    holding a part of it; on a line or a point, lying on it."""
    if not s2.areas:
        if s1.areas:
            return False
        midpoints = [_midpoint(a, b) for a, b in s1.arcs]
        return all(_touches(v, s2) for v in [*(v for _, v in s1.vertices), *midpoints])
    if not all(any(_inside(area, v) for area in s2.areas) for _, v in s1.vertices):
        return False
    if any(g.arcs_cross(a, b, c, d) for a, b in s1.arcs for c, d in s2.arcs):
        return False
    return not any(_inside(area, v) for area in s1.areas for _, v in s2.vertices)


def _midpoint(a: g.Vector, b: g.Vector) -> g.Vector:
    mid = (a[0] + b[0], a[1] + b[1], a[2] + b[2])
    norm = g.dot(mid, mid) ** 0.5
    return (mid[0] / norm, mid[1] / norm, mid[2] / norm)


def distance(s1: Shape, s2: Shape) -> float:
    """The shortest geodesic distance in metres between two shapes; 0 when they intersect. The nearest
    point of an arc is found on the sphere, the distance to it measured on the ellipsoid."""
    if len(s1.vertices) == len(s2.vertices) == 1:  # two points: the one geodesic
        return g.distance(s1.vertices[0][0], s2.vertices[0][0])
    if intersects(s1, s2):
        return 0.0
    return min(
        min((_vertex_distance(p, v, s2) for p, v in s1.vertices), default=float("inf")),
        min((_vertex_distance(p, v, s1) for p, v in s2.vertices), default=float("inf")),
    )


def _vertex_distance(p: g.Position, v: g.Vector, s: Shape) -> float:
    to_points = (g.distance(p, q) for q, _ in s.vertices)
    to_arcs = (g.distance(p, g.position(g.nearest_on_arc(v, a, b))) for a, b in s.arcs)
    return min([*to_points, *to_arcs])


def area(geometry: Geometry) -> float:
    """Square metres: a polygon's left of its boundary less its holes; 0 for points and lines."""
    polygons = geometry.polygons if isinstance(geometry, MultiPolygon) else (geometry,)
    total = 0.0
    for polygon in polygons:
        if isinstance(polygon, Polygon):
            holes = sum(abs(g.signed_area(ring)) for ring in polygon.rings[1:])
            total += g.left_area(polygon.rings[0]) - holes
    return total


def _pair(test: Callable[[Shape, Shape], Any]) -> Callable[[Any, Any], Any]:
    """A two-geometry built-in: undefined unless both arguments are valid geometries."""

    def fn(x: Any, y: Any) -> Any:
        gx, gy = _geometry(x), _geometry(y)
        return UNDEFINED if gx is None or gy is None else test(shape(gx), shape(gy))

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


SPATIAL_FUNCTIONS: dict[str, tuple[int, int | None, Callable[..., Any]]] = {
    "ST_DISTANCE": (2, 2, _pair(distance)),
    "ST_WITHIN": (2, 2, _pair(within)),
    "ST_INTERSECTS": (2, 2, _pair(intersects)),
    "ST_AREA": (1, 1, _st_area),
    "ST_ISVALID": (1, 1, _is_valid),
    "ST_ISVALIDDETAILED": (1, 1, _validity),
}
