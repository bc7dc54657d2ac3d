"""`ruscope compact`, `ruscope store check` and `ruscope store repair` on damaged stores, as real processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from store import read_table, store_location, write_frame
from tests.ruscope import test_cli
from tests.store.test_damaged import ROWS, damaged_store, delete_one_file, truncate_entry
from tests.store.test_store import T0

ROOT = Path(__file__).resolve().parents[2]
shop = test_cli.shop  # the fixture: the emulator with shop/orders and 60 items


def ruscope(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RUST_BACKTRACE": "1"}  # delta-rs' errors then carry backtraces
    command = [sys.executable, "-m", "ruscope", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def two_damaged_tables(root: Path) -> tuple[str, Path]:
    """`executions` without one data file, `requests` with a cut log entry, `partitions` intact."""
    lost = delete_one_file(damaged_store(root))
    for i in range(3):
        frame = pd.DataFrame({"time": [T0 + pd.Timedelta(minutes=i)], "seq": [i]})
        write_frame(store_location(root), "requests", frame, run_id="q", part=f"p{i}")
        frame = pd.DataFrame({"time": [T0], "pkrange_id": [str(i)]})
        write_frame(store_location(root), "partitions", frame, run_id="s", part=f"p{i}")
    return lost, truncate_entry(root / "requests", 2)


def no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    for text in (done.stdout, done.stderr):
        assert "Traceback" not in text and "<unknown>" not in text and "panicked" not in text


def test_compact_names_each_damaged_table_in_one_line_and_compacts_the_others(tmp_path: Path) -> None:
    lost, entry = two_damaged_tables(tmp_path / "s")
    done = ruscope("compact", "--store", "s", cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 1, done.stderr
    errors = sorted(done.stderr.splitlines())
    assert len(errors) == 3
    assert errors[0].startswith("ruscope: executions: not compacted: data file s/executions/" + lost)
    assert f"({ROWS} row(s))" in errors[0] and "`ruscope store repair --store s`" in errors[0]
    assert errors[1].startswith(f"ruscope: requests: not compacted: log entry s/requests/_delta_log/{entry.name}")
    # the span cells are computed from the requests: not refreshed, and the line says why without repeating it
    assert errors[2] == "ruscope: span_cells: not compacted: not refreshed: requests damaged (above)"
    assert "partitions: 3 -> 1 file(s)" in done.stdout


def test_check_repair_check(tmp_path: Path) -> None:
    lost, entry = two_damaged_tables(tmp_path / "s")
    found = ruscope("store", "check", "--store", "s", cwd=tmp_path)
    no_traceback(found)
    assert found.returncode == 1
    assert f"executions: data file s/executions/{lost} is missing ({ROWS} row(s))" in found.stdout
    assert f"requests: log entry s/requests/_delta_log/{entry.name} (version 2) is damaged" in found.stdout
    assert "partitions: clean" in found.stdout and "2 damaged table(s)" in found.stderr

    repaired = ruscope("store", "repair", "--store", "s", cwd=tmp_path)
    no_traceback(repaired)
    assert repaired.returncode == 0, repaired.stderr
    assert f"executions: dropped from the table: data file s/executions/{lost} is missing" in repaired.stdout
    assert "requests: lost with the damaged entry: data file s/requests/" in repaired.stdout
    assert "the log before the repair is kept in s/_repair/requests-" in repaired.stdout

    clean = ruscope("store", "check", "--store", "s", cwd=tmp_path)
    assert clean.returncode == 0 and clean.stderr == ""
    assert sorted(clean.stdout.splitlines()) == ["executions: clean", "partitions: clean", "requests: clean"]
    again = ruscope("store", "repair", "--store", "s", cwd=tmp_path)
    assert again.returncode == 0 and "nothing to repair" in again.stdout and "_repair" not in again.stdout
    assert ruscope("compact", "--store", "s", cwd=tmp_path).returncode == 0


def test_report_reads_the_rest_of_a_table_with_a_missing_file_and_names_it(tmp_path: Path) -> None:
    from tests.analysis.test_overview import shop_frames

    store = tmp_path / "store"
    for table, frame in shop_frames().items():
        rows = [frame.iloc[[i]] for i in range(len(frame))] if table == "executions" else [frame]
        for i, part in enumerate(rows):
            write_frame(store_location(store), table, part.drop(columns="run_id"), run_id="r1", part=f"p{i}")
    victim = next(
        p for p in (store / "executions").rglob("*.parquet") if "people" in pd.read_parquet(p)["container"].tolist()
    )
    victim.unlink()
    (tmp_path / "ruscope.toml").write_text(
        f'[cosmos]\nendpoint = "http://127.0.0.1:8081/"\ndatabase = "shop"\n[store]\nuri = "{store}"\n'
    )
    done = ruscope("report", "--config", "ruscope.toml", "--out", "report.csv", cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    [line] = done.stderr.splitlines()  # one line, once
    assert line.startswith("store: table 'executions' in ") and f"data file {victim} is missing (1 row(s))" in line
    report = (tmp_path / "report.csv").read_text()
    assert "query,127.0.0.1,shop,orders,wide,total_ru,40.0" in report  # the rows read
    assert "query,127.0.0.1,shop,people," not in report  # the one execution of the file lost


def test_rows_collected_while_a_log_entry_is_damaged_wait_pending_and_land_after_the_repair(
    shop, tmp_path: Path
) -> None:
    from tests.ruscope.test_cli import query, write_config
    from tests.ruscope.test_cli import ruscope as run

    store = tmp_path / "store"
    queries = query("all") + query("one", "SELECT * FROM c WHERE c.id = 'o1'")
    config = write_config(tmp_path / "ruscope.toml", shop, queries, extra=f'[store]\nuri = "{store}"')
    assert run("replay", "--config", str(config), key=shop.key).returncode == 0
    entry = sorted((store / "executions" / "_delta_log").glob("*.json"))[-1]
    entry.write_bytes(entry.read_bytes()[:100])  # the first run's executions commit, cut short

    blocked = run("replay", "--config", str(config), key=shop.key)
    no_traceback(blocked)
    assert blocked.returncode == 1 and len(blocked.stderr.splitlines()) == 1  # one line; the rows stay pending
    assert any((store / "_pending").iterdir())

    repaired = ruscope("store", "repair", "--store", str(store), cwd=tmp_path)
    assert repaired.returncode == 0 and "(2 row(s); left on disk, no longer in the table)" in repaired.stdout
    assert run("replay", "--config", str(config), key=shop.key).returncode == 0  # recovers the pending rows
    runs = read_table(store_location(store), "executions").groupby("run_id").size()
    assert sorted(runs.tolist()) == [2, 2]  # the blocked run's and the last one's, each once
    assert not [p for p in (store / "_pending").iterdir() if p.is_dir()]
