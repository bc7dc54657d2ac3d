"""Spatial queries through the unmodified azure-cosmos SDK (cosmos-sql-semantics §5.10, SP1-SP6): proximity
filters with ST_DISTANCE over real cities, ST_WITHIN and ST_INTERSECTS against stored and given polygons,
the validity checks, on one partition and across several."""

from __future__ import annotations

from typing import Any

import pytest
from azure.cosmos import PartitionKey

from emulator.rest.server import RunningEmulator
from tests.conftest import sdk_client

CITIES = {  # (longitude, latitude) of the city centres
    "paris": (2.3522, 48.8566),
    "versailles": (2.1301, 48.8049),
    "saint-denis": (2.3580, 48.9362),
    "orleans": (1.9093, 47.9030),
    "london": (-0.1276, 51.5072),
    "new-york": (-74.0060, 40.7128),
    "sydney": (151.2093, -33.8688),
    "melbourne": (144.9631, -37.8136),
}
# Commonly quoted great-circle distances from Paris, km (held to 1%; the service measures the WGS-84
# ellipsoid, which a sphere misses by up to 0.5%).
FROM_PARIS_KM = {"versailles": 17.2, "saint-denis": 8.9, "orleans": 111, "london": 344, "new-york": 5837}
ILE_DE_FRANCE = [[1.45, 48.12], [3.56, 48.12], [3.56, 49.24], [1.45, 49.24], [1.45, 48.12]]  # counter-clockwise


def point(lon: float, lat: float) -> dict[str, Any]:
    return {"type": "Point", "coordinates": [lon, lat]}


def polygon(ring: list[list[float]]) -> dict[str, Any]:
    return {"type": "Polygon", "coordinates": [ring]}


@pytest.fixture
def places(emulator: RunningEmulator) -> Any:
    """Cities (points, one country per key) and regions (polygons) on 4 physical partitions."""
    container = (
        sdk_client(emulator)
        .create_database("geo")
        .create_container("places", PartitionKey("/country"), offer_throughput=24_000)
    )
    countries = {"london": "uk", "new-york": "us", "sydney": "au", "melbourne": "au"}
    for name, (lon, lat) in CITIES.items():
        container.create_item({"id": name, "country": countries.get(name, "fr"), "loc": point(lon, lat)})
    container.create_item({"id": "idf", "country": "fr", "kind": "region", "loc": polygon(ILE_DE_FRANCE)})
    container.create_item({"id": "no-location", "country": "fr"})
    container.create_item({"id": "as-text", "country": "fr", "loc": "2.35,48.85"})
    container.create_item({"id": "bad-latitude", "country": "fr", "loc": point(2.35, 148.85)})
    return container


def _query(container: Any, sql: str, **kwargs: Any) -> list[Any]:
    kwargs.setdefault("enable_cross_partition_query", True)
    return list(container.query_items(sql, **kwargs))


def test_distances_from_paris_are_the_cities_distances(places: Any) -> None:
    sql = "SELECT c.id, ST_DISTANCE(c.loc, @paris) / 1000 AS km FROM c WHERE c.id IN ({})".format(
        ", ".join(f'"{name}"' for name in FROM_PARIS_KM)
    )
    found = {
        r["id"]: r["km"] for r in _query(places, sql, parameters=[{"name": "@paris", "value": point(2.3522, 48.8566)}])
    }
    assert found.keys() == FROM_PARIS_KM.keys()
    for name, km in FROM_PARIS_KM.items():
        assert found[name] == pytest.approx(km, rel=0.01), name


def test_a_proximity_filter_finds_the_cities_within_30_km(places: Any) -> None:
    sql = (
        'SELECT VALUE c.id FROM c WHERE ST_DISTANCE(c.loc, {"type": "Point", "coordinates": [2.3522, 48.8566]}) < 30000'
    )
    assert sorted(_query(places, sql)) == ["idf", "paris", "saint-denis", "versailles"]  # the region holds Paris: 0
    one_country = _query(places, sql.replace("WHERE", "WHERE c.country = 'fr' AND"), partition_key="fr")
    assert sorted(one_country) == ["idf", "paris", "saint-denis", "versailles"]
    far = "SELECT VALUE c.id FROM c WHERE ST_DISTANCE(c.loc, @sydney) BETWEEN 500000 AND 1000000"
    assert _query(places, far, parameters=[{"name": "@sydney", "value": point(151.2093, -33.8688)}]) == ["melbourne"]


def test_within_a_given_polygon_and_stored_polygons_holding_a_point(places: Any) -> None:
    within = "SELECT VALUE c.id FROM c WHERE ST_WITHIN(c.loc, @region)"
    found = _query(places, within, parameters=[{"name": "@region", "value": polygon(ILE_DE_FRANCE)}])
    assert sorted(found) == ["idf", "paris", "saint-denis", "versailles"]  # Orleans is south of the region
    holding = "SELECT VALUE c.id FROM c WHERE ST_WITHIN(@here, c.loc)"  # the docs' "inverse query"
    assert _query(places, holding, parameters=[{"name": "@here", "value": point(2.2, 48.6)}]) == ["idf"]
    clockwise = polygon(list(reversed(ILE_DE_FRANCE)))  # the rest of the earth
    outside = _query(places, within, parameters=[{"name": "@region", "value": clockwise}])
    assert sorted(outside) == ["london", "melbourne", "new-york", "orleans", "sydney"]


def test_intersects_a_line(places: Any) -> None:
    paris_to_orleans = {"type": "LineString", "coordinates": [[2.3522, 48.8566], [1.9093, 47.9030]]}
    sql = "SELECT VALUE c.id FROM c WHERE ST_INTERSECTS(c.loc, @line)"
    assert sorted(_query(places, sql, parameters=[{"name": "@line", "value": paris_to_orleans}])) == [
        "idf",
        "orleans",
        "paris",
    ]


def test_invalid_and_missing_locations_are_undefined_and_validity_says_why(places: Any) -> None:
    distances = _query(places, "SELECT c.id, ST_DISTANCE(c.loc, {'type': 'Point', 'coordinates': [0, 0]}) AS d FROM c")
    without = sorted(r["id"] for r in distances if "d" not in r)
    assert without == ["as-text", "bad-latitude", "no-location"]
    sql = "SELECT c.id, ST_ISVALIDDETAILED(c.loc) AS check FROM c WHERE NOT ST_ISVALID(c.loc)"
    assert _query(places, sql) == [
        {
            "id": "bad-latitude",
            "check": {"valid": False, "reason": "Latitude values must be between -90 and 90 degrees."},
        }
    ]
    area = "SELECT VALUE ROUND(ST_AREA(c.loc) / 1000000) FROM c WHERE c.id = 'idf'"
    assert _query(places, area, partition_key="fr") == [pytest.approx(19_400, rel=0.02)]  # about 155 x 125 km
