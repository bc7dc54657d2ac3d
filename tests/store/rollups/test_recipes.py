"""docs/fleet.md's recipes for the rollup cells run as written (the store's path aside) on a local store, and
give the figures of the points they summarise: DuckDB and Polars read the same `metric_cells` table."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from store import rollup, store_location, write_frame
from tests.store.rollups.test_increment import points

DOC = Path(__file__).resolve().parents[3] / "docs" / "fleet.md"


def recipes() -> list[str]:
    section = DOC.read_text().split("## Reading the rollup cells", 1)[1]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


@pytest.fixture
def rolled_up(tmp_path: Path) -> Path:
    location = store_location(tmp_path / "ruscope-data")
    write_frame(location, "metrics", points(0, 2 * 1440), run_id="r1", part="m")
    rollup(location)
    return tmp_path / "ruscope-data"


def run(recipe: str, store: Path) -> dict[str, object]:
    names: dict[str, object] = {}
    exec(recipe.replace('"ruscope-data/', f'"{store}/'), names)  # noqa: S102 - the doc's own code
    return names


def test_the_duckdb_recipe_reads_each_days_peak_and_mean(rolled_up: Path) -> None:
    duck, _ = recipes()
    daily = run(duck, rolled_up)["daily"]
    assert isinstance(daily, pd.DataFrame) and len(daily) == 2 * 2  # two days, two pkranges
    raw = points(0, 2 * 1440).assign(day=lambda f: f["time"].dt.floor("1D"))
    want = raw.groupby(["day", "pkrange_id"])["value"].agg(["max", "mean"]).reset_index()
    got = daily.assign(day=pd.to_datetime(daily["day"], utc=True)).merge(want, on=["day", "pkrange_id"])
    assert len(got) == 4
    assert (got["peak_normalized_ru"] == got["max"]).all()
    assert ((got["mean_normalized_ru"] - got["mean"]).abs() < 1e-9).all()


def test_the_polars_recipe_reads_each_ranges_peak_and_mean(rolled_up: Path) -> None:
    _, polars_recipe = recipes()
    hourly = run(polars_recipe, rolled_up)["hourly"]
    shown = hourly.to_pandas().set_index("pkrange_id")  # type: ignore[attr-defined]
    raw = points(0, 2 * 1440).groupby("pkrange_id")["value"].agg(["max", "mean"])
    assert sorted(shown.index) == ["0", "1"]
    for pkrange in ("0", "1"):
        assert shown.loc[pkrange, "peak"] == raw.loc[pkrange, "max"]
        assert abs(shown.loc[pkrange, "mean"] - raw.loc[pkrange, "mean"]) < 1e-9
