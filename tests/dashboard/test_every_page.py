"""Every page of the frame on stores written by the real collectors: the golden store checked in
(tests/golden/store, a fixed day) and the session's collected store (tests/collected.py, ending about now).

On both, each page runs without an exception or a store warning, draws its figures with data, and shows no
table cell reading "None" or "nan" (a missing number is a blank cell). Pages come from `PAGES` in
dashboard/app.py, so a new page is covered without editing this file.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from tests.dashboard.apptest import APP, run_app
from tests.golden.make_store import GOLDEN_STORE

PAGES = re.findall(r'st\.Page\(\s*"([^"]+)"', APP.read_text())
FIGURELESS = {"views/reports.py": "tables and downloads only"}
PLACEHOLDERS = {"None", "nan", "NaN", "<NA>", "NaT"}


@pytest.fixture
def golden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the golden store (a page must never write into the checked-in one)."""
    path = tmp_path / "golden"
    shutil.copytree(GOLDEN_STORE, path)
    monkeypatch.setenv("RUSCOPE_STORE", str(path))
    return path


def open_page(page: str) -> AppTest:
    app = run_app(page)
    return app


def charts(app: AppTest) -> list[dict[str, Any]]:
    import json

    return [json.loads(element.proto.spec) for element in app.get("plotly_chart")]


def drawn(figure: dict[str, Any]) -> bool:
    """A trace with at least one value (x, y or z), not only an "empty" annotation."""
    return any(len(trace.get(axis) or []) > 0 for trace in figure.get("data", []) for axis in ("x", "y", "z", "values"))


def placeholder_cells(app: AppTest) -> list[str]:
    found = []
    for table in app.dataframe:
        frame: pd.DataFrame = table.value
        text = frame.select_dtypes(include=["object", "string"]).astype(str)
        found += [f"{column}: {value}" for column in text for value in text[column] if value in PLACEHOLDERS]
    return found


def check_page(page: str) -> AppTest:
    app = open_page(page)
    assert not app.warning, [w.value for w in app.warning]  # no store warning on a sound store
    assert not placeholder_cells(app), placeholder_cells(app)
    if page not in FIGURELESS:
        figures = charts(app)
        assert figures and all(drawn(figure) for figure in figures[:1]), f"{page}: main figure not drawn"
    return app


def test_the_pages_are_listed() -> None:
    assert "views/query_costs.py" in PAGES and "views/fleet.py" in PAGES and len(PAGES) == len(set(PAGES))


@pytest.mark.parametrize("page", PAGES)
def test_every_page_on_the_golden_store(page: str, golden: Path) -> None:
    check_page(page)


@pytest.mark.parametrize("page", PAGES)
def test_every_page_on_the_collected_store(
    page: str, collected_store: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    copy = tmp_path / "collected"
    shutil.copytree(collected_store, copy)
    monkeypatch.setenv("RUSCOPE_STORE", str(copy))
    app = check_page(page)
    app.selectbox(key="frame_time_range").select("Last 24 hours").run()  # the collected store ends about now
    assert not app.exception, [e.message for e in app.exception]
    if page not in FIGURELESS:
        assert drawn(charts(app)[0]), f"{page}: nothing in the last 24 hours"
