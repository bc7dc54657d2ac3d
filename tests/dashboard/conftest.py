"""Fixtures of the dashboard tests: a fresh Streamlit cache for every test, and a temp store the app reads."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st

from tests.dashboard.apptest import PLAN, store_rows, write_store


@pytest.fixture(autouse=True)
def clear_cache() -> None:
    st.cache_data.clear()
    st.cache_resource.clear()  # the loaders' store locations, one per URI


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty store that `RUSCOPE_STORE` points at, as `ruscope dashboard --store` sets it."""
    path = tmp_path / "store"
    monkeypatch.setenv("RUSCOPE_STORE", str(path))
    return path


@pytest.fixture
def two_runs(store: Path) -> Path:
    """r1 and r2 on 2026-05-01 (see PLAN): "point", "scan" (per feed range) and "wide" in shop/orders."""
    write_store(store, *store_rows(PLAN))
    return store
