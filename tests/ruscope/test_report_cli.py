"""`ruscope report` through typer's CliRunner on stores written with write_frame (and on the store the real
collectors filled): the bytes written, the exit codes, one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ruscope.cli import app
from store import store_location, write_frame
from tests.analysis.capacity.test_capacity import hot_partition_frames
from tests.analysis.test_overview import GOLDEN, shop_frames

EMULATOR_KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="


def write_config(tmp_path: Path, store: Path) -> Path:
    config = tmp_path / "ruscope.toml"
    text = f'[cosmos]\nendpoint = "http://127.0.0.1:8081/"\ndatabase = "shop"\n[store]\nuri = "{store}"\n'
    config.write_text(text, encoding="utf-8")
    return config


@pytest.fixture
def shop_store(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    for table, frame in shop_frames().items():
        write_frame(store_location(store), table, frame.drop(columns="run_id"), run_id="r1", part="000")
    return store


def report(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["report", *args], env={"COSMOS_KEY": EMULATOR_KEY})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_the_report_is_the_golden_csv(shop_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.csv"
    code, stdout, stderr = report("--config", str(write_config(tmp_path, shop_store)), "--out", str(out))
    assert (code, stderr) == (0, "")
    assert stdout == f"{out}: 2 containers, 4 recommended actions\n"
    about, rest = split_about(out.read_text(encoding="utf-8"))
    assert rest == (GOLDEN / "capacity_report.csv").read_text(encoding="utf-8")
    assert [line.split(",")[5] for line in about] == [
        "window_start", "window_end", "store", "generated_at", "region", "ruscope_version"
    ]  # fmt: skip
    assert about[0].endswith(",2026-05-01T10:00:00Z (all data: the first and last row read),,,,,,,")  # the first row
    assert f",store,,,{shop_store}," in about[2] and ",region,,,all regions," in about[4]
    assert EMULATOR_KEY not in out.read_text() and not list(tmp_path.glob(".*.tmp"))


def split_about(csv: str) -> tuple[list[str], str]:
    """The report's first section (`report` rows) and the rest of the CSV with its header."""
    header, *lines = csv.splitlines(keepends=True)
    about = [line.rstrip("\n") for line in lines if line.startswith("report,")]
    return about, header + "".join(line for line in lines if not line.startswith("report,"))


def test_commands_name_the_account_and_resource_group_of_the_config_s_monitor_resource(tmp_path: Path) -> None:
    """The store keys the account by its endpoint's host (127.0.0.1); `az` needs its ARM name and resource
    group, which the config's monitor_resource holds: every command names those, none is left `<rg>`."""
    store = tmp_path / "hot"  # a hot partition in an idle container: a redistribution command
    for table, frame in hot_partition_frames(provisioned=2000.0).items():
        write_frame(store_location(store), table, frame.drop(columns="run_id"), run_id="r1", part="000")
    config = write_config(tmp_path, store)
    arm = "/subscriptions/0000/resourceGroups/rg-prod/providers/Microsoft.DocumentDB/databaseAccounts/prodacct"
    config.write_text(config.read_text().replace("[store]", f'monitor_resource = "{arm}"\n[store]'), encoding="utf-8")
    out = tmp_path / "report.csv"
    code, _, stderr = report("--config", str(config), "--out", str(out))
    assert (code, stderr) == (0, "")
    commands = [line for line in out.read_text(encoding="utf-8").splitlines() if "az cosmosdb " in line]
    assert commands and all("--account-name prodacct --resource-group rg-prod " in line for line in commands)
    assert "<rg>" not in out.read_text(encoding="utf-8")


def test_the_report_says_the_window_it_was_asked(shop_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.csv"
    code, _, stderr = report("--config", str(write_config(tmp_path, shop_store)), "--out", str(out), "--since", "3650d")
    assert (code, stderr) == (0, "")
    about, _ = split_about(out.read_text(encoding="utf-8"))
    assert "(--since 3650d)" in about[0] and about[1].split(",")[8].endswith("Z")


def test_store_option_and_xlsx(shop_store: Path, tmp_path: Path) -> None:
    config = write_config(tmp_path, tmp_path / "elsewhere")
    out = tmp_path / "report.xlsx"
    code, _, stderr = report("--config", str(config), "--out", str(out), "--store", str(shop_store), "--format", "xlsx")
    assert (code, stderr) == (0, "")
    sheets = zipfile.ZipFile(out).read("xl/workbook.xml").decode()
    assert all(f'name="{name}"' in sheets for name in ("container", "partition", "key", "query", "action"))


def test_an_empty_store_names_the_directory_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "report.csv"
    config = write_config(tmp_path, tmp_path / "nothing-here")
    code, stdout, stderr = report("--config", str(config), "--out", str(out))
    assert code == 1 and stdout == "" and not out.exists()
    assert stderr == (
        f"ruscope: {tmp_path / 'nothing-here'}: no data to report; collect some first: ruscope collect --config {config}\n"
    )


def test_since_cuts_the_time_range(shop_store: Path, tmp_path: Path) -> None:
    """The store's rows are of 2026-05-01, long before the last day."""
    config = write_config(tmp_path, shop_store)
    code, _, stderr = report("--config", str(config), "--out", str(tmp_path / "r.csv"), "--since", "1d")
    assert code == 1 and "no data to report in the last 1d" in stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "pdf"], "ruscope: --format: 'pdf' is not one of csv, xlsx\n"),
        (["--since", "soon"], "ruscope: --since: 'soon' is not an interval; use e.g. 30s, 5m, 1h or 1h30m; or days, e.g. 30d\n"),
    ],
)  # fmt: skip
def test_usage_errors_are_one_line_exit_2(shop_store: Path, tmp_path: Path, args: list[str], message: str) -> None:
    config = write_config(tmp_path, shop_store)
    code, _, stderr = report("--config", str(config), "--out", str(tmp_path / "r.csv"), *args)
    assert (code, stderr) == (2, message)


def test_a_bad_config_is_one_line_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text('[cosmos]\nendpoint = 3\ndatabase = "shop"\n', encoding="utf-8")
    code, _, stderr = report("--config", str(config), "--out", str(tmp_path / "r.csv"))
    assert code == 2 and stderr.count("\n") == 1 and stderr.startswith(f"ruscope: {config}")
    assert not (tmp_path / "r.csv").exists()


def test_a_report_of_the_collected_store(collected_store: Path, tmp_path: Path) -> None:
    """The store the real collectors filled: a hot tenant on one range, fan-out queries, throttling."""
    out = tmp_path / "report.csv"
    code, _, stderr = report("--config", str(write_config(tmp_path, collected_store)), "--out", str(out))
    assert (code, stderr) == (0, "")
    lines = out.read_text().splitlines()
    actions = {line.split(",")[5] for line in lines if line.startswith("action,")}
    assert {"skewed_key", "query_fans_out"} <= actions
    assert any(line.startswith("partition,") and ",size_gb," in line for line in lines)
    assert any(line.startswith("key,") and '""hot""' in line for line in lines)


def test_python_m_ruscope_in_a_folder_holding_store_and_analysis_folders(shop_store: Path, tmp_path: Path) -> None:
    """`python -m` puts the working directory first on sys.path: there, the store's own folder `store/` (and
    any folder named like a ruscope package) must not shadow ruscope's packages."""
    (tmp_path / "analysis").mkdir()
    write_config(tmp_path, Path("store"))
    done = subprocess.run(
        [sys.executable, "-m", "ruscope", "report", "--config", "ruscope.toml", "--out", "report.csv"],
        cwd=tmp_path,
        env={**os.environ, "COSMOS_KEY": EMULATOR_KEY},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    _, rest = split_about((tmp_path / "report.csv").read_text(encoding="utf-8"))
    assert rest == (GOLDEN / "capacity_report.csv").read_text(encoding="utf-8")


def test_a_two_region_account_in_total_or_one_region(tmp_path: Path) -> None:
    from tests.dashboard.test_regions_pages import two_region_store

    store = tmp_path / "store"
    two_region_store(store)
    config = str(write_config(tmp_path, store))
    for args, expected in (
        ((), 'provisioned_ru_s,800.0,RU/s,"manual, summed over 2 regions"'),
        (("--region", "West US"), 'provisioned_ru_s,400.0,RU/s,"manual, region West US"'),
    ):
        out = tmp_path / "report.csv"
        code, _, stderr = report("--config", config, "--out", str(out), *args)
        assert (code, stderr) == (0, "")
        [line] = [row for row in out.read_text().splitlines() if ",provisioned_ru_s," in row]
        assert expected in line, line
