"""The dashboard on a store in Azure Blob Storage (Azurite): `ruscope dashboard --store az://...` must read it.

The loaders once turned the store's name into a `Path`, which folds `az://container/path` into
`az:/container/path`: the pages then read zero rows from a remote store and said there was no data yet.
"""

from __future__ import annotations

import pytest

from tests.azurite import RunningAzurite
from tests.dashboard.apptest import PLAN, new_app, store_rows, write_store


@pytest.fixture
def remote_store(azurite: RunningAzurite, tmp_path, monkeypatch: pytest.MonkeyPatch) -> str:
    """`az://<new container>/store` holding PLAN's two runs, which `RUSCOPE_STORE` names."""
    for name, value in {**azurite.env, "XDG_STATE_HOME": str(tmp_path / "state")}.items():
        monkeypatch.setenv(name, value)
    uri = azurite.uri_for("store")
    write_store(uri, *store_rows(PLAN))
    monkeypatch.setenv("RUSCOPE_STORE", uri)
    return uri


def test_the_query_costs_page_reads_a_store_in_azure_blob_storage(remote_store: str) -> None:
    app = new_app(timeout=60)
    app.switch_page("views/query_costs.py")
    app.run()
    assert not app.exception, [e.message for e in app.exception]
    assert app.text_input(key="frame_store").value == remote_store  # the URI as given, `//` and all
    summary = app.dataframe[0].value
    assert summary["query_name"].tolist() == ["wide", "scan", "point"]
    assert summary["executions"].tolist() == [2, 2, 3]
    assert not app.warning, [w.value for w in app.warning]


def test_a_store_whose_container_does_not_exist_says_so_rather_than_crashing(
    azurite: RunningAzurite, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {**azurite.env, "XDG_STATE_HOME": str(tmp_path / "state")}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("RUSCOPE_STORE", "az://no-such-container/store")
    app = new_app(timeout=60)
    app.switch_page("views/query_costs.py")
    app.run()
    assert not app.exception, [e.message for e in app.exception]
    assert not app.dataframe


def test_a_remote_stores_versions_are_read_as_a_local_ones_are(remote_store: str, tmp_path) -> None:
    """The caches' key (`store.table_versions`, its logs opened at once for a remote store) names every table,
    the versions of the ones written and None for the others, as for the same rows on a local disk."""
    from store import store_location, table_versions

    local = tmp_path / "local"
    write_store(local, *store_rows(PLAN))
    remote = dict(table_versions(store_location(remote_store)))
    assert remote == dict(table_versions(store_location(local)))
    assert remote["executions"] is not None and remote["metrics"] is None
