"""ruscope.toml validation: located errors, read-only enforcement, no secrets."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.config import ConfigError, load_config, read_only_problem

GOOD = """
[cosmos]
endpoint = "http://127.0.0.1:8081/"
database = "shop"

[replay]
budget_ru = 100

[[queries]]
name = "by-tenant"
container = "orders"
sql = "SELECT * FROM c WHERE c.tenantId = @t"
parameters = { "@t" = "t1" }
partition_key = "t1"

[[queries]]
name = "chats"
container = "chats"
sql = "SELECT VALUE COUNT(1) FROM c"
partition_key = ["t1", "u1"]
repeat = 3
mode = "as-is"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "ruscope.toml"
    path.write_text(text, encoding="utf-8")
    return path


def error_of(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    return str(info.value)


def test_a_good_config_loads_with_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, GOOD))
    assert config.cosmos.database == "shop" and config.store.dir == "ruscope-data"
    assert config.replay.budget_ru == 100
    first, second = config.queries
    assert first.parameter_list == [{"name": "@t", "value": "t1"}] and first.repeat == 1
    assert second.partition_key == ["t1", "u1"] and second.query_metrics and not second.index_metrics


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (('container = "orders"', 'contianer = "orders"'), "queries.0.contianer: Extra inputs are not permitted"),
        (("repeat = 3", 'repeat = "three"'), "queries.1.repeat: Input should be a valid integer"),
        (("repeat = 3", "repeat = 0"), "queries.1.repeat: Input should be greater than or equal to 1"),
        (('mode = "as-is"', 'mode = "sometimes"'), "queries.1.mode: Input should be 'as-is' or 'per-feed-range'"),
        (("budget_ru = 100", "budget_ru = -5"), "replay.budget_ru: Input should be greater than 0"),
        (('database = "shop"', 'databse = "shop"'), "cosmos.database: Field required"),
        (('endpoint = "http://127.0.0.1:8081/"', 'endpoint = "localhost"'), "cosmos.endpoint: must be an http(s) URL"),
        (('name = "chats"', 'name = "by-tenant"'), "query name 'by-tenant' is used twice"),
        (('"@t" = "t1"', 't = "t1"'), "queries.0.parameters: parameter names start with '@'"),
        (('mode = "as-is"', 'mode = "per-feed-range"'), "per-feed-range' replays every physical partition"),
        (('partition_key = ["t1", "u1"]', 'partition_key = ["a", "b", "c", "d"]'), "1 to 3 components"),
    ],
)
def test_each_mistake_is_reported_with_its_location(tmp_path: Path, change: tuple[str, str], expected: str) -> None:
    old, new = change
    assert old in GOOD
    message = error_of(tmp_path, GOOD.replace(old, new, 1))
    assert str(tmp_path / "ruscope.toml") in message
    assert expected in message, message


def test_toml_syntax_errors_name_the_line(tmp_path: Path) -> None:
    message = error_of(tmp_path, GOOD.replace("[replay]", "[replay"))
    assert "not valid TOML" in message and "line" in message


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "absent.toml")


@pytest.mark.parametrize(
    "sql",
    ["DELETE FROM c", "EXEC sp_cleanup", "  update c set x = 1", "SELECT * FROM c; DELETE FROM c", ""],
)
def test_anything_but_one_select_is_refused(tmp_path: Path, sql: str) -> None:
    assert read_only_problem(sql) is not None
    message = error_of(tmp_path, GOOD.replace('"SELECT VALUE COUNT(1) FROM c"', repr(sql).replace("'", '"')))
    assert "queries.1.sql" in message


@pytest.mark.parametrize(
    "sql",
    ["SELECT * FROM c", "-- note\nselect c.update FROM c WHERE c.s = 'DELETE; x'", "SELECT VALUE 1"],
)
def test_selects_pass(sql: str) -> None:
    assert read_only_problem(sql) is None


def test_credentials_do_not_belong_in_the_file(tmp_path: Path) -> None:
    message = error_of(tmp_path, GOOD.replace('database = "shop"', 'database = "shop"\nkey = "c2VjcmV0"'))
    assert "cosmos.key: Extra inputs are not permitted" in message
    assert "c2VjcmV0" not in message
