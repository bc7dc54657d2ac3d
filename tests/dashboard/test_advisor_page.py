"""The Advisor page through the frame (AppTest): an empty store says how to advise; a store holding advice
made by `ruscope advise` (the real command, on the guides' query-log case) shows the designs side by side:
the ranking, RU per query, the skew heatmap and the 20 GB projection, with the winner's definition."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from analysis import advice
from store import read_table, store_location
from tests.dashboard.apptest import chart, run_app, table, values
from tests.ruscope.test_advise import _write

ADVISOR = "views/advisor.py"
RUSCOPE = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "ruscope"


def open_advisor() -> AppTest:
    app = run_app(ADVISOR)
    return app


@pytest.fixture
def advised(store: Path, tmp_path: Path) -> Path:
    """The store after `ruscope advise` on 600 query logs of the chat generator (3 candidates + proposals)."""
    config = _write(tmp_path)
    done = subprocess.run(
        [str(RUSCOPE), "advise", "--config", str(config), "--store", str(store)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    return store


def test_an_empty_store_says_how_to_advise(store: Path) -> None:
    app = open_advisor()
    assert app.title[0].value == "Advisor"
    [info] = app.info
    assert "No partition-key advice" in info.value and "ruscope advise --config" in info.value


def test_the_designs_side_by_side(advised: Path) -> None:
    app = open_advisor()
    designs = read_table(store_location(advised), "advice_designs").sort_values("rank", ignore_index=True)
    winner = designs["design"].iloc[0]
    assert winner == "/tenantId,/sessionId"  # the guides' case: hierarchical fixes /tenantId's skew
    assert f"Advice: {winner}" in app.success[0].value
    shown = table(app, 0)
    assert shown["design"].tolist() == designs["design"].tolist()
    tenant = shown.set_index("design").loc["/tenantId"]
    assert "write distribution" in tenant["flags"] and tenant["hottest_partition_share"] > 40  # a percent
    ru = chart(app, "advisor_ru_chart")
    assert [t["name"] for t in ru["data"]] == designs["design"].tolist()
    assert values(ru["data"][0]["x"])[-1] == "weighted mix"
    skew = chart(app, "advisor_skew_chart")["data"][0]
    assert skew["y"] == designs["design"].tolist() and len(skew["x"]) == designs["partitions"].max()
    limits = chart(app, "advisor_limits_chart")
    assert {t["name"] for t in limits["data"]} == set(designs["design"])
    code = app.get("code")[0].proto.code_text
    assert json.loads(code)["partitionKey"] == {"paths": ["/tenantId", "/sessionId"], "kind": "MultiHash", "version": 2}
    [sample] = [e for e in app.expander if e.label == "The sample the designs were measured on"]
    assert "a file, so its bias against the container is not measured" in sample.markdown[0].value
    downloads = [b.proto.id.rsplit("-", 1)[-1] for b in app.get("download_button")]
    assert downloads == ["advisor_designs_download", "advisor_queries_download", "advisor_partitions_download"]


def test_an_older_advice_can_be_picked(advised: Path, tmp_path: Path) -> None:
    (tmp_path / "second").mkdir()
    config = _write(tmp_path / "second", docs=300)
    again = subprocess.run(
        [str(RUSCOPE), "advise", "--config", str(config), "--store", str(advised)], capture_output=True, text=True
    )
    assert again.returncode == 0, again.stderr
    app = open_advisor()
    runs = advice.advice_runs(read_table(store_location(advised), "advice_designs"))
    picker = app.selectbox(key="advisor_run")
    assert picker.options == [advice.run_label(row) for _, row in runs.iterrows()] and len(runs) == 2
    picker.set_value(runs["run_id"].iloc[1]).run()
    assert not app.exception and table(app, 0)["design"].tolist()


def test_projection_lines_end_at_the_limit_when_the_design_reaches_it() -> None:
    import pandas as pd

    designs = pd.DataFrame(
        {
            "design": ["a", "b"],
            "largest_logical_gb": [2.0, 0.5],
            "logical_limit_gb": [20.0, 20.0],
            "days_to_limit": [90.0, None],
        }
    )
    lines = advice.limit_projection(designs)
    a = lines[lines["design"] == "a"].set_index("day")["gb"]
    assert a.to_dict() == {0.0: 2.0, 90.0: pytest.approx(20.0)}  # it ends where writes to the key would fail
    b = lines[lines["design"] == "b"].set_index("day")["gb"]
    assert b.to_dict() == {0.0: 0.5, 108.0: 0.5}  # flat to the horizon, 1.2 x the slowest crossing
    far = designs.assign(days_to_limit=[90.0, 20_000.0])
    assert advice.limit_projection(far)["day"].max() == advice.MAX_HORIZON_DAYS  # not decades of flat lines
