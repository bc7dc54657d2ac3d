"""GeoJSON values read into typed geometries, or the reason they are not valid (cosmos-sql-semantics SP1).

The service supports Point, LineString, Polygon and MultiPolygon in WGS-84 longitude/latitude degrees;
an invalid geometry "is equivalent to undefined" in queries, and ST_ISVALIDDETAILED says why. The
reasons the docs quote are used word for word; the others are ours, in the same style.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .geodesy import Position


@dataclass(frozen=True, slots=True)
class Point:
    at: Position


@dataclass(frozen=True, slots=True)
class LineString:
    points: tuple[Position, ...]


@dataclass(frozen=True, slots=True)
class Polygon:
    rings: tuple[tuple[Position, ...], ...]  # the first is the boundary, the others holes; each closed


@dataclass(frozen=True, slots=True)
class MultiPolygon:
    polygons: tuple[Polygon, ...]


Geometry = Point | LineString | Polygon | MultiPolygon
TYPES = ("Point", "LineString", "Polygon", "MultiPolygon")


class InvalidGeometry(ValueError):
    """A GeoJSON object the service would not index or query; the message is ST_ISVALIDDETAILED's reason."""


def read_geometry(value: dict[str, Any]) -> Geometry:
    """The geometry a GeoJSON object describes; `InvalidGeometry` naming what is wrong."""
    kind, coordinates = value.get("type"), value.get("coordinates")
    if kind not in TYPES:
        raise InvalidGeometry(f"The type {kind!r} is not a supported spatial type: {', '.join(TYPES)}.")
    if not isinstance(coordinates, list):
        raise InvalidGeometry(f"The {kind} input is not valid because its coordinates are not an array.")
    if kind == "Point":
        return Point(_position(coordinates))
    if kind == "LineString":
        return _line_string(coordinates)
    if kind == "Polygon":
        return _polygon(coordinates)
    return MultiPolygon(tuple(_polygon(_array(p, "MultiPolygon")) for p in coordinates))


def _array(value: Any, kind: str) -> list[Any]:
    if not isinstance(value, list):
        raise InvalidGeometry(f"The {kind} input is not valid because its coordinates are not nested arrays.")
    return value


def _position(raw: Any) -> Position:
    """A [longitude, latitude] pair (a third number, an altitude, is allowed and ignored)."""
    numbers = isinstance(raw, list) and all(x.__class__ in (int, float) for x in raw)
    if not numbers or not 2 <= len(raw) <= 3:
        raise InvalidGeometry("A position must be an array of two numbers, longitude then latitude.")
    lon, lat = float(raw[0]), float(raw[1])
    if not -90 <= lat <= 90:
        raise InvalidGeometry("Latitude values must be between -90 and 90 degrees.")
    if not -180 <= lon <= 180:
        raise InvalidGeometry("Longitude values must be between -180 and 180 degrees.")
    return lon, lat


def _line_string(coordinates: list[Any]) -> LineString:
    points = tuple(_position(p) for p in coordinates)
    if len(set(points)) < 2:
        raise InvalidGeometry(
            "The LineString input is not valid because it does not have enough distinct points. "
            "A LineString must have at least two distinct points."
        )
    return LineString(points)


def _polygon(coordinates: list[Any]) -> Polygon:
    if not coordinates:
        raise InvalidGeometry("The Polygon input is not valid because it has no ring.")
    rings = tuple(_ring(_array(ring, "Polygon"), number) for number, ring in enumerate(coordinates, 1))
    return Polygon(rings)


def _ring(raw: list[Any], number: int) -> tuple[Position, ...]:
    points = tuple(_position(p) for p in raw)
    if points and points[0] != points[-1]:
        raise InvalidGeometry(
            f"The Polygon input is not valid because the start and end points of the ring number {number} are "
            "not the same. Each ring of a Polygon must have the same start and end points."
        )
    if len(set(points)) < 3:
        raise InvalidGeometry(
            f"The Polygon input is not valid because the ring number {number} does not have enough points. "
            "Each ring of a Polygon must contain at least three distinct points."
        )
    return points
