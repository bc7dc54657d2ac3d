"""The data directory is private: created 0700, its files 0600 whatever the umask (they hold the documents)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from emulator.durability.journal import JOURNAL, SNAPSHOT
from emulator.engine.facade import Context, ThroughputSpec
from emulator.rest.server import HISTORY_FILE, open_engine


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The loosest umask, so only the emulator's own modes can keep the files private."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def _use(data_dir: Path) -> None:
    engine = open_engine(data_dir, throttling=False)
    engine.create_database(Context(), {"id": "d"})
    body = {"id": "c", "partitionKey": {"paths": ["/k"], "kind": "Hash", "version": 2}}
    engine.create_container(Context(), "d", body, ThroughputSpec(400))
    engine.create_item(Context(), "d", "c", {"id": "1", "k": "a"}, ["a"])
    engine.close()


@pytest.mark.usefixtures("open_umask")
def test_a_new_data_dir_is_0700_and_its_files_0600(tmp_path: Path) -> None:
    data_dir = tmp_path / "new" / "data"
    _use(data_dir)
    assert _mode(data_dir) == 0o700
    for name in (JOURNAL, SNAPSHOT, HISTORY_FILE):
        assert _mode(data_dir / name) == 0o600, name


@pytest.mark.usefixtures("open_umask")
def test_files_written_before_the_rule_are_tightened(tmp_path: Path) -> None:
    _use(tmp_path)
    for name in (JOURNAL, SNAPSHOT, HISTORY_FILE):
        os.chmod(tmp_path / name, 0o644)
    engine = open_engine(tmp_path, throttling=False)
    engine.create_item(Context(), "d", "c", {"id": "2", "k": "a"}, ["a"])
    engine.close()
    for name in (JOURNAL, SNAPSHOT, HISTORY_FILE):
        assert _mode(tmp_path / name) == 0o600, name
