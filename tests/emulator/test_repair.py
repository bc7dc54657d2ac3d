"""`emulator.repair`: a backup of the damaged files, every intact line salvaged, exactly the losses reported,
and a directory that starts again."""

from __future__ import annotations

import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from emulator.durability.journal import JOURNAL, SNAPSHOT
from emulator.repair import main, repair
from emulator.rest.server import open_engine
from tests.emulator.durability.test_damage import (
    EXPECTED,
    ROOT,
    _cut,
    _delete_absent,
    _drop_line,
    _edit_line,
    _flip,
    _insert,
    _put,
    ids,
    make_data_dir,
)

# (damage, the items the repaired directory holds, the lost lines as (file, line, words))
CASES: dict[str, tuple[Callable[[Path], None], list[str], list[tuple[str, int, str]]]] = {
    "flipped byte": (
        lambda d: _edit_line(d / JOURNAL, 5, _flip),
        [i for i in EXPECTED if i != "14"],
        [(JOURNAL, 5, "checksum mismatch (the line was changed or cut); it reads as the put of item '14'")],
    ),
    "cut": (
        lambda d: _cut(d / JOURNAL),  # line 5 (item 14) runs into line 6 (item 15)
        [i for i in EXPECTED if i not in ("14", "15")],
        [(JOURNAL, 5, "checksum mismatch")],
    ),
    "NUL bytes": (
        lambda d: _edit_line(d / JOURNAL, 5, lambda x: x[:30] + b"\0" * 20 + x[50:]),
        [i for i in EXPECTED if i != "14"],
        [(JOURNAL, 5, "NUL bytes in the line; unreadable")],
    ),
    "invalid JSON": (
        lambda d: _insert(d / JOURNAL, 5, b'{"seq": oops\n'),
        EXPECTED,
        [(JOURNAL, 5, "invalid JSON; unreadable (no seq missing)")],
    ),
    "empty object": (lambda d: _insert(d / JOURNAL, 5, b"{}\n"), EXPECTED, [(JOURNAL, 5, "not a journal entry: {}")]),
    "whole line removed": (
        lambda d: _drop_line(d / JOURNAL, 5),
        [i for i in EXPECTED if i != "14"],
        [(JOURNAL, 5, "whole lines were removed before this line; seq ")],
    ),
    "delete of an absent item": (
        lambda d: _delete_absent(d / JOURNAL),
        EXPECTED,
        [(JOURNAL, 12, "cannot be applied (its target does not exist); delete of item 'nope'")],
    ),
    "damaged snapshot": (
        lambda d: _edit_line(d / SNAPSHOT, 5, _flip),  # line 5: the snapshot's third item
        None,  # type: ignore[dict-item]  (one item fewer, which one depends on the snapshot's order)
        [(SNAPSHOT, 5, "checksum mismatch")],
    ),
}


@pytest.mark.parametrize("kind", list(CASES))
def test_repair_salvages_every_intact_line_and_reports_the_losses(tmp_path: Path, kind: str) -> None:
    make_data_dir(tmp_path)
    damage, expected, losses = CASES[kind]
    damage(tmp_path)
    damaged = {name: (tmp_path / name).read_bytes() for name in (SNAPSHOT, JOURNAL)}

    report = repair(tmp_path)

    assert report.repaired and report.backup is not None and report.backup.parent == tmp_path
    assert {name: (report.backup / name).read_bytes() for name in damaged} == damaged  # the backup is exact
    assert stat.S_IMODE(report.backup.stat().st_mode) == 0o700
    assert [(lost.file, lost.line) for lost in report.lost] == [(f, n) for f, n, _ in losses]
    for lost, (_, _, words) in zip(report.lost, losses, strict=True):
        assert words in str(lost)
    engine = open_engine(tmp_path, throttling=False)  # the repaired directory starts
    if expected is None:
        assert len(ids(engine)) == len(EXPECTED) - 1
    else:
        assert ids(engine) == expected
    _put(engine, ["after"])  # and takes writes that survive a restart
    engine.close()
    engine = open_engine(tmp_path, throttling=False)
    assert "after" in ids(engine)
    engine.close()


def test_an_intact_directory_is_left_alone(tmp_path: Path) -> None:
    make_data_dir(tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    report = repair(tmp_path)
    assert not report.repaired and report.lost == []
    assert "intact, nothing to repair" in str(report)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before


def test_a_damaged_history_is_moved_into_the_backup(tmp_path: Path) -> None:
    make_data_dir(tmp_path)
    history = tmp_path / "history.jsonl.gz"
    history.write_bytes(history.read_bytes()[:-12])
    report = repair(tmp_path)
    assert report.repaired and not history.exists()
    assert any("history.jsonl.gz could not be read" in note for note in report.notes)
    engine = open_engine(tmp_path, throttling=False)
    assert ids(engine) == EXPECTED
    engine.close()


def test_main_prints_the_report_and_exits_1_on_losses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_data_dir(tmp_path)
    _edit_line(tmp_path / JOURNAL, 5, _flip)
    assert main([str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"{tmp_path}: repaired; 21 entries kept, 1 lost" in out
    assert f"found: {tmp_path / JOURNAL}, line 5: checksum mismatch" in out
    assert "lost: journal.jsonl line 5: checksum mismatch" in out
    assert main([str(tmp_path)]) == 0  # now intact
    assert main([str(tmp_path / "nowhere")]) == 2


def test_python_dash_m_emulator_repair(tmp_path: Path) -> None:
    make_data_dir(tmp_path)
    _delete_absent(tmp_path / JOURNAL)
    done = subprocess.run([sys.executable, "-m", "emulator.repair", str(tmp_path)], cwd=ROOT, capture_output=True)
    assert done.returncode == 1, done.stderr.decode()
    assert "line 12: cannot be applied (its target does not exist)" in done.stdout.decode()


def test_ruscope_emulator_repair_flag(tmp_path: Path) -> None:
    make_data_dir(tmp_path)
    _edit_line(tmp_path / JOURNAL, 5, _flip)
    args = [sys.executable, "-m", "emulator", "--data-dir", str(tmp_path), "--repair"]
    done = subprocess.run(args, cwd=ROOT, capture_output=True, env={"COLUMNS": "1000", "PATH": ""})
    assert "lost: journal.jsonl line 5: checksum mismatch" in done.stdout.decode(), done.stderr.decode()
    engine = open_engine(tmp_path, throttling=False)
    assert ids(engine) == [i for i in EXPECTED if i != "14"]
    engine.close()
