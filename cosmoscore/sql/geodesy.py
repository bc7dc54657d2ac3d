"""Measurements on the WGS-84 earth for the spatial built-ins (cosmos-sql-semantics §5.10, SP2-SP4).

The service measures geography on the WGS-84 ellipsoid: its documented distances are Vincenty's geodesic
to 2e-8 (a sphere is off by 0.3%), and its documented area is the authalic sphere's to 1e-10. So
distances are Vincenty's inverse formula; areas, containment and crossings work on the unit sphere, at
authalic latitudes for areas (an equal-area map of the ellipsoid), edges being great-circle arcs.
Positions are (longitude, latitude) in degrees, as GeoJSON writes them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Position = tuple[float, float]
Vector = tuple[float, float, float]

A = 6_378_137.0  # WGS-84 semi-major axis, metres
F = 1 / 298.257223563  # WGS-84 flattening
B = A * (1 - F)
_E2 = F * (2 - F)
_E = math.sqrt(_E2)
MEAN_RADIUS = 6_371_008.8  # (2a + b) / 3: the fallback sphere for nearly antipodal points
ON_EDGE = 1e-9  # radians (about 6 mm): a point this close to an arc is on it


def _q(phi: float) -> float:
    """The authalic `q` function of a geodetic latitude (radians)."""
    s = math.sin(phi)
    return (1 - _E2) * (s / (1 - _E2 * s * s) - math.log((1 - _E * s) / (1 + _E * s)) / (2 * _E))


_QP = _q(math.pi / 2)
AUTHALIC_RADIUS = A * math.sqrt(_QP / 2)


def authalic_latitude(phi: float) -> float:
    """The latitude on the equal-area sphere of a geodetic latitude (radians)."""
    return math.asin(max(-1.0, min(1.0, _q(phi) / _QP)))


def vector(position: Position, *, authalic: bool = False) -> Vector:
    """The unit vector of a position (geodetic latitude as is, or mapped to the authalic sphere)."""
    lon, lat = math.radians(position[0]), math.radians(position[1])
    if authalic:
        lat = authalic_latitude(lat)
    return (math.cos(lat) * math.cos(lon), math.cos(lat) * math.sin(lon), math.sin(lat))


def position(v: Vector) -> Position:
    """The (longitude, latitude) in degrees of a unit vector."""
    return math.degrees(math.atan2(v[1], v[0])), math.degrees(math.asin(max(-1.0, min(1.0, v[2]))))


def cross(u: Vector, v: Vector) -> Vector:
    return (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])


def dot(u: Vector, v: Vector) -> float:
    return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]


def _unit(v: Vector) -> Vector | None:
    norm = math.sqrt(dot(v, v))
    return None if norm < 1e-300 else (v[0] / norm, v[1] / norm, v[2] / norm)


def distance(p: Position, q: Position) -> float:
    """The geodesic distance in metres on the WGS-84 ellipsoid (Vincenty's inverse formula); nearly
    antipodal points, where it does not converge, fall back to the great circle on the mean sphere."""
    if p == q:
        return 0.0
    solved = _vincenty(p, q)
    if solved is not None:
        return solved
    return MEAN_RADIUS * math.acos(max(-1.0, min(1.0, dot(vector(p), vector(q)))))


def _vincenty(p: Position, q: Position) -> float | None:
    u1 = math.atan((1 - F) * math.tan(math.radians(p[1])))
    u2 = math.atan((1 - F) * math.tan(math.radians(q[1])))
    s1, c1, s2, c2 = math.sin(u1), math.cos(u1), math.sin(u2), math.cos(u2)
    big_l = math.radians(q[0] - p[0])
    lam = big_l
    for _ in range(200):
        sin_lam, cos_lam = math.sin(lam), math.cos(lam)
        sin_sigma = math.hypot(c2 * sin_lam, c1 * s2 - s1 * c2 * cos_lam)
        if sin_sigma == 0:
            return 0.0  # the same point
        cos_sigma = s1 * s2 + c1 * c2 * cos_lam
        sigma = math.atan2(sin_sigma, cos_sigma)
        sin_alpha = c1 * c2 * sin_lam / sin_sigma
        cos2_alpha = 1 - sin_alpha * sin_alpha
        cos_2sm = cos_sigma - 2 * s1 * s2 / cos2_alpha if cos2_alpha else 0.0  # on the equator
        c = F / 16 * cos2_alpha * (4 + F * (4 - 3 * cos2_alpha))
        previous = lam
        lam = big_l + (1 - c) * F * sin_alpha * (
            sigma + c * sin_sigma * (cos_2sm + c * cos_sigma * (-1 + 2 * cos_2sm * cos_2sm))
        )
        if abs(lam - previous) < 1e-12:
            return _vincenty_length(cos2_alpha, sin_sigma, cos_sigma, sigma, cos_2sm)
    return None


def _vincenty_length(cos2_alpha: float, sin_sigma: float, cos_sigma: float, sigma: float, cos_2sm: float) -> float:
    u2 = cos2_alpha * (A * A - B * B) / (B * B)
    big_a = 1 + u2 / 16384 * (4096 + u2 * (-768 + u2 * (320 - 175 * u2)))
    big_b = u2 / 1024 * (256 + u2 * (-128 + u2 * (74 - 47 * u2)))
    delta = (
        big_b
        * sin_sigma
        * (
            cos_2sm
            + big_b
            / 4
            * (
                cos_sigma * (-1 + 2 * cos_2sm * cos_2sm)
                - big_b / 6 * cos_2sm * (-3 + 4 * sin_sigma * sin_sigma) * (-3 + 4 * cos_2sm * cos_2sm)
            )
        )
    )
    return B * big_a * (sigma - delta)


def signed_area(ring: Sequence[Position]) -> float:
    """The area in square metres to the left of a closed ring walked in order (negative for a clockwise
    ring: its left is everything else), on the authalic sphere, each triangle by Van Oosterom-Strackee."""
    points = [vector(p, authalic=True) for p in ring[:-1]]
    total = 0.0
    for b, c in zip(points[1:], points[2:]):
        o = points[0]
        total += 2 * math.atan2(dot(o, cross(b, c)), 1 + dot(o, b) + dot(b, c) + dot(c, o))
    return total * AUTHALIC_RADIUS * AUTHALIC_RADIUS


def left_area(ring: Sequence[Position]) -> float:
    """The area of the region left of a ring: a clockwise ring encloses the rest of the earth."""
    area = signed_area(ring)
    return area if area >= 0 else 4 * math.pi * AUTHALIC_RADIUS * AUTHALIC_RADIUS + area


@dataclass(frozen=True, slots=True)
class Ring:
    """A closed ring prepared for many point tests: each arc's plane, and a cap (centre, cosine of its
    radius) holding the ring when it is under a hemisphere wide (`reach` 0 otherwise: no cap)."""

    vertices: tuple[Vector, ...]
    planes: tuple[Vector, ...]  # a x b of each arc a-b
    centre: Vector
    reach: float


def prepare_ring(vertices: Sequence[Vector]) -> Ring:
    """A ring (first vertex repeated last) ready for `locate`."""
    planes = tuple(cross(a, b) for a, b in zip(vertices, vertices[1:]))
    total = (sum(v[0] for v in vertices[1:]), sum(v[1] for v in vertices[1:]), sum(v[2] for v in vertices[1:]))
    centre = _unit(total) or (0.0, 0.0, 1.0)
    reach = min(dot(centre, v) for v in vertices)
    return Ring(tuple(vertices), planes, centre, reach if reach > 1e-3 else 0.0)


def locate(ring: Ring, p: Vector) -> int | None:
    """None when `p` is on the ring; else 1 when it is in the ring's smaller side, 0 when not. Without a
    cap, how many times the ring turns around `p`, counter-clockwise positive seen from outside the earth
    (0 when `p` and its antipode lie on one side of it)."""
    if ring.reach and dot(p, ring.centre) < ring.reach - ON_EDGE:
        return 0  # outside the cap: neither on the ring nor inside its smaller side
    turn, vertices = 0.0, ring.vertices
    along = dot(p, vertices[0])
    for i, plane in enumerate(ring.planes):
        a, b = vertices[i], vertices[i + 1]
        onward = dot(p, b)
        side = dot(p, plane)
        if abs(side) <= ON_EDGE * math.sqrt(dot(plane, plane)) and on_arc(p, a, b):
            return None
        turn += math.atan2(side, dot(a, b) - along * onward)
        along = onward
    turns = round(turn / (2 * math.pi))
    return abs(turns) if ring.reach else turns


def on_arc(p: Vector, a: Vector, b: Vector) -> bool:
    """Whether `p` lies on the short great-circle arc from `a` to `b` (within `ON_EDGE`)."""
    normal = _unit(cross(a, b))
    if normal is None:
        return math.acos(max(-1.0, min(1.0, dot(p, a)))) <= ON_EDGE
    if abs(dot(p, normal)) > ON_EDGE:
        return False
    return dot(cross(a, p), normal) >= -ON_EDGE and dot(cross(p, b), normal) >= -ON_EDGE


def arcs_cross(a: Vector, b: Vector, c: Vector, d: Vector) -> bool:
    """Whether the short arcs a-b and c-d share a point (touching included)."""
    if on_arc(a, c, d) or on_arc(b, c, d) or on_arc(c, a, b) or on_arc(d, a, b):
        return True
    return arcs_cross_properly(a, b, c, d)


def arcs_cross_properly(a: Vector, b: Vector, c: Vector, d: Vector) -> bool:
    """Whether the short arcs a-b and c-d cross at a point inside both (not at an end, not along)."""
    n1, n2 = _unit(cross(a, b)), _unit(cross(c, d))
    if n1 is None or n2 is None:
        return False
    line = _unit(cross(n1, n2))
    if line is None:
        return False  # on one great circle
    return any(_strictly_on(x, a, b, n1) and _strictly_on(x, c, d, n2) for x in (line, _neg(line)))


def _strictly_on(x: Vector, a: Vector, b: Vector, normal: Vector) -> bool:
    return dot(cross(a, x), normal) > ON_EDGE and dot(cross(x, b), normal) > ON_EDGE


def _neg(v: Vector) -> Vector:
    return (-v[0], -v[1], -v[2])


def nearest_on_arc(p: Vector, a: Vector, b: Vector) -> Vector:
    """The point of the short arc a-b nearest `p` on the sphere: its foot on the great circle when that
    falls between the ends, else the nearer end."""
    normal = _unit(cross(a, b))
    if normal is not None:
        offset = dot(p, normal)
        foot = _unit((p[0] - offset * normal[0], p[1] - offset * normal[1], p[2] - offset * normal[2]))
        if foot is not None and dot(cross(a, foot), normal) >= 0 and dot(cross(foot, b), normal) >= 0:
            return foot
    return a if dot(p, a) >= dot(p, b) else b
