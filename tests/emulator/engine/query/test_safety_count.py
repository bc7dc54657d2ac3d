"""An index-served single-partition COUNT: reported as the service reports it
(retrievedDocumentCount 0, counted from the index), charged for the index entries it scans."""

from __future__ import annotations

from azure.cosmos import CosmosClient, PartitionKey

from emulator.engine.facade import Context


class Last:
    """The query metrics and charge of the last query page."""

    def __init__(self) -> None:
        self.metrics: dict[str, str] = {}
        self.charge = 0.0

    def __call__(self, response) -> None:
        headers = response.http_response.headers
        if "x-ms-documentdb-query-metrics" in headers:
            self.metrics = dict(kv.split("=") for kv in headers["x-ms-documentdb-query-metrics"].split(";"))
            self.charge = float(headers["x-ms-request-charge"])


def test_an_index_served_count_reports_no_documents_but_charges_for_its_matches(emulator) -> None:
    last = Last()
    client = CosmosClient(emulator.url, credential=emulator.key, raw_response_hook=last)
    coll = client.create_database_if_not_exists("count").create_container("c", PartitionKey("/pk"))
    engine = emulator.engine
    engine.throttle.enabled = False
    for i in range(600):
        engine.create_item(Context(), "count", "c", {"id": f"d{i}", "pk": "p", "n": i, "pad": "x" * 200}, ["p"])
    engine.throttle.enabled = True

    def count(where: str) -> tuple[int, dict[str, str], float]:
        sql = f"SELECT VALUE COUNT(1) FROM c WHERE {where}"
        rows = list(coll.query_items(sql, partition_key="p", populate_query_metrics=True))
        return rows[0], last.metrics, last.charge

    few, few_metrics, few_charge = count("c.n < 25")
    many, many_metrics, many_charge = count("c.n < 500")
    assert (few, many) == (25, 500)
    assert few_metrics["retrievedDocumentCount"] == "0" and many_metrics["retrievedDocumentCount"] == "0"
    assert many_charge > few_charge * 5  # scales with the index entries scanned, not a flat figure
    list(
        coll.query_items(
            "SELECT * FROM c WHERE c.n < 500", partition_key="p", populate_query_metrics=True, max_item_count=1000
        )
    )
    assert last.metrics["retrievedDocumentCount"] == "500"  # listing the matches reports them
    assert many_charge >= last.charge - 0.01  # and costs no more than the COUNT of them
    _, scan_metrics, _ = count("LOWER(c.pad) = 'y'")  # not index-served: a scan reports what it loads
    assert scan_metrics["retrievedDocumentCount"] == "600"
