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
    assert config.cosmos.database == "shop" and config.store.uri == "ruscope-data"
    assert config.replay.budget_ru == 100
    first, second = config.queries
    assert first.parameter_list == [{"name": "@t", "value": "t1"}] and first.repeat == 1
    assert second.partition_key == ["t1", "u1"] and second.query_metrics and not second.index_metrics


RESOURCE = "/subscriptions/0/resourceGroups/rg/providers/Microsoft.DocumentDB/databaseAccounts/shop"


def test_the_one_account_shorthand_takes_its_monitor_resource(tmp_path: Path) -> None:
    text = GOOD.replace('database = "shop"', f'database = "shop"\nmonitor_resource = "{RESOURCE}"', 1)
    assert load_config(write(tmp_path, text)).account().monitor_resource == RESOURCE
    message = error_of(tmp_path, text.replace(RESOURCE, "shop"))
    assert "cosmos.monitor_resource: must be an ARM resource id" in message, message


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            ('container = "orders"', 'contianer = "orders"'),
            "queries.0 (by-tenant).contianer: Extra inputs are not permitted; did you mean 'container'?",
        ),
        (("repeat = 3", 'repeat = "three"'), "queries.1 (chats).repeat: Input should be a valid integer"),
        (("repeat = 3", "repeat = 0"), "queries.1 (chats).repeat: Input should be greater than or equal to 1"),
        (
            ('mode = "as-is"', 'mode = "sometimes"'),
            "queries.1 (chats).mode: Input should be 'as-is' or 'per-feed-range'",
        ),
        (("budget_ru = 100", "budget_ru = -5"), "replay.budget_ru: Input should be greater than 0"),
        (('database = "shop"', 'databse = "shop"'), "cosmos.database: Field required"),
        (('endpoint = "http://127.0.0.1:8081/"', 'endpoint = "localhost"'), "cosmos.endpoint: must be an http(s) URL"),
        (('name = "chats"', 'name = "by-tenant"'), "query name 'by-tenant' is used twice"),
        (('"@t" = "t1"', 't = "t1"'), "queries.0 (by-tenant).parameters: parameter names start with '@'"),
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


@pytest.mark.parametrize(
    ("change", "line"),
    [
        (
            ('partition_key = "t1"', "partition_key = { tenant = 1 }"),
            "queries.0 (by-tenant).partition_key: a partition key value is a string, number or boolean, or a list "
            "of 1 to 3 of them for a hierarchical key (got a table)",
        ),
        (
            ('partition_key = ["t1", "u1"]', 'partition_key = ["t1", ["u1"]]'),
            "queries.1 (chats).partition_key: a partition key value is a string, number or boolean, or a list "
            "of 1 to 3 of them for a hierarchical key (got an array in the list)",
        ),
        (("[replay]", "[replya]"), "replya: Extra inputs are not permitted; did you mean 'replay'?"),
        (("budget_ru = 100", "budget_ru = 100\ncolour = 1"), "replay.colour: Extra inputs are not permitted"),
    ],
)
def test_a_wrong_type_or_a_typo_is_one_line_with_a_hint(tmp_path: Path, change: tuple[str, str], line: str) -> None:
    """A union (partition_key) is one line, not one per member type; a typo names the closest key."""
    old, new = change
    assert old in GOOD
    message = error_of(tmp_path, GOOD.replace(old, new, 1))
    lines = [text.split(": ", 1)[1] for text in message.splitlines()]
    assert line in lines, message
    assert len([text for text in lines if text.startswith(line.split(":")[0] + ":")]) == 1, message


def test_a_fleet_account_and_its_own_query_are_named_too(tmp_path: Path) -> None:
    text = """
[[accounts]]
name = "eu-1"
endpoint = "http://127.0.0.1:8081/"
database = "shop"
[[accounts.own_queries]]
name = "mine"
container = "orders"
sql = "SELECT * FROM c"
partion_key = "t1"
"""
    message = error_of(tmp_path, text)
    assert message.endswith(
        "accounts.0 (eu-1).own_queries.0 (mine).partion_key: Extra inputs are not permitted; "
        "did you mean 'partition_key'?"
    ), message


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
    assert "queries.1 (chats).sql" in message


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


# -- the fleet: [[accounts]] ------------------------------------------------------------------------

FLEET = """
[store]
uri = "abfss://ruscope@lake.dfs.core.windows.net/prod"
compact_after_collect = true

[fleet]
parallelism = 2

[[accounts]]
name = "eu-1"
endpoint = "https://eu-1.documents.azure.com:443/"
database = "shop"
key_env = "EU1_KEY"
monitor_resource = "/subscriptions/0000/resourceGroups/rg/providers/Microsoft.DocumentDB/databaseAccounts/eu-1"

[[accounts]]
name = "eu-2"
endpoint = "https://eu-2.documents.azure.com:443/"
databases = ["shop", "audit"]
queries = ["by-tenant"]
max_retry_attempts = 2

[[accounts.own_queries]]
name = "audit-tail"
container = "events"
database = "audit"
sql = "SELECT TOP 10 * FROM c"

[[queries]]
name = "by-tenant"
container = "orders"
sql = "SELECT * FROM c WHERE c.tenantId = 't1'"

[[queries]]
name = "count"
container = "orders"
sql = "SELECT VALUE COUNT(1) FROM c"
"""


def test_a_fleet_resolves_to_accounts_with_their_queries_and_keys(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, FLEET))
    assert config.store.uri.startswith("abfss://") and config.store.compact_after_collect
    assert config.store.vacuum_retention_hours == 168 and config.fleet.parallelism == 2
    eu1, eu2 = config.all_accounts()
    assert (eu1.name, eu1.databases, [q.name for q in eu1.queries]) == ("eu-1", ("shop",), ["by-tenant", "count"])
    assert (eu1.key_env, eu1.key_optional) == ("EU1_KEY", False)
    assert eu1.monitor_resource is not None and eu1.monitor_resource.endswith("/databaseAccounts/eu-1")
    assert [q.name for q in eu2.queries] == ["by-tenant", "audit-tail"] and eu2.databases == ("shop", "audit")
    assert [eu2.database_of(q) for q in eu2.queries] == ["shop", "audit"]
    assert eu2.key_env is None  # several accounts: DefaultAzureCredential unless key_env names a variable
    assert (eu2.connection.max_retry_attempts, eu1.connection.max_retry_attempts) == (2, 9)
    assert config.account("eu-2") == eu2 and config.account() == eu1
    with pytest.raises(LookupError, match="known: eu-1, eu-2"):
        config.account("eu-3")


def test_the_cosmos_shorthand_is_one_account_named_after_its_host(tmp_path: Path) -> None:
    (account,) = load_config(write(tmp_path, GOOD)).all_accounts()
    assert account.name == "127.0.0.1" and account.databases == ("shop",) and len(account.queries) == 2
    assert (account.key_env, account.key_optional) == ("COSMOS_KEY", True)  # COSMOS_KEY if set, as before


def test_a_lone_account_reads_cosmos_key_by_default(tmp_path: Path) -> None:
    alone = FLEET[: FLEET.index('[[accounts]]\nname = "eu-2"')].replace('key_env = "EU1_KEY"\n', "")
    (account,) = load_config(
        write(tmp_path, alone + "\n[[queries]]\nname = 'q'\ncontainer = 'c'\nsql = 'SELECT 1'")
    ).all_accounts()
    assert (account.key_env, account.key_optional) == ("COSMOS_KEY", True)


def test_store_dir_is_the_older_name_of_uri(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, GOOD + '\n[store]\ndir = "old-data"\n'))
    assert config.store.uri == "old-data"
    message = error_of(tmp_path, GOOD + '\n[store]\ndir = "a"\nuri = "b"\n')
    assert "store: give uri or its older name dir, not both" in message


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            ('[[queries]]\nname = "by-tenant"', '[cosmos]\ndatabase = "x"\n\n[[queries]]\nname = "by-tenant"'),
            "accounts: [cosmos] is the one-account shorthand; with [[accounts]], make it one of the list",
        ),
        (
            ('endpoint = "https://eu-2.documents.azure.com:443/"', 'endpoint = "eu-2"'),
            "accounts.1 (eu-2).endpoint: must be an http(s) URL",
        ),
        (
            ('queries = ["by-tenant"]', 'queries = ["by-tenant", "nope"]'),
            "accounts.1 (eu-2).queries.1: no shared [[queries]] named 'nope' (known: by-tenant, count)",
        ),
        (('name = "eu-2"', 'name = "eu-1"'), "accounts.1 (eu-1).name: account name 'eu-1' is used twice"),
        (('name = "eu-2"', 'name = "eu 2"'), "accounts.1 (eu 2).name: String should match pattern"),
        (
            ('databases = ["shop", "audit"]', 'databases = ["shop", "audit"]\ndatabase = "shop"'),
            "accounts.1 (eu-2): give database (one) or databases (a list), exactly one of them",
        ),
        (('database = "shop"\nkey_env', "key_env"), "accounts.0 (eu-1): give database (one) or databases"),
        (
            ('databases = ["shop", "audit"]', "databases = []"),
            "accounts.1 (eu-2).databases: List should have at least 1 item",
        ),
        (('key_env = "EU1_KEY"', 'key_env = "EU1 KEY"'), "accounts.0 (eu-1).key_env: String should match pattern"),
        (
            ('key_env = "EU1_KEY"', 'key = "c2VjcmV0"'),
            "accounts.0 (eu-1).key: Extra inputs are not permitted; did you mean 'key_env'?",
        ),
        (("/databaseAccounts/eu-1", "/sites/eu-1"), "accounts.0 (eu-1).monitor_resource: must be an ARM resource id"),
        (
            ('name = "audit-tail"', 'name = "by-tenant"'),
            "accounts.1 (eu-2).own_queries.0 (by-tenant).name: query name 'by-tenant' is used twice in account 'eu-2'",
        ),
        (
            ('database = "audit"', 'database = "audti"'),
            "accounts.1 (eu-2).own_queries.0 (audit-tail).database: 'audti' is not a database of account 'eu-2' (shop, audit)",
        ),
        (
            ('name = "count"\ncontainer = "orders"', 'name = "count"\ndatabase = "audit"\ncontainer = "orders"'),
            "queries.1 (count).database: 'audit' is not a database of account 'eu-1' (shop); pick the shared queries it runs in accounts.0.queries",
        ),
        (("parallelism = 2", "parallelism = 0"), "fleet.parallelism: Input should be greater than or equal to 1"),
        (
            ("compact_after_collect = true", "vacuum_retention_hours = -1"),
            "store.vacuum_retention_hours: Input should be greater than or equal to 0",
        ),
        (('name = "count"', 'name = "by-tenant"'), "queries.1 (by-tenant).name: query name 'by-tenant' is used twice"),
    ],
)
def test_each_fleet_mistake_is_reported_with_its_location(
    tmp_path: Path, change: tuple[str, str], expected: str
) -> None:
    old, new = change
    assert old in FLEET
    message = error_of(tmp_path, FLEET.replace(old, new, 1))
    assert f"{tmp_path / 'ruscope.toml'}: {expected}" in message, message


def test_several_mistakes_are_each_one_located_line(tmp_path: Path) -> None:
    text = FLEET.replace('queries = ["by-tenant"]', 'queries = ["x", "y"]').replace('name = "eu-2"', 'name = "eu-1"')
    lines = error_of(tmp_path, text).splitlines()
    assert [line.split(": ")[1] for line in lines] == [
        "accounts.1 (eu-1).name",
        "accounts.1 (eu-1).queries.0",
        "accounts.1 (eu-1).queries.1",
    ]


def test_no_account_at_all_and_an_empty_list(tmp_path: Path) -> None:
    assert "cosmos: no account: add [cosmos] for one account or [[accounts]] for several" in error_of(
        tmp_path, "[[queries]]\nname = 'q'\ncontainer = 'c'\nsql = 'SELECT 1'\n"
    )
    assert "accounts: at least one account is needed" in error_of(tmp_path, "accounts = []\n")


def test_a_query_naming_another_database_needs_the_accounts_form(tmp_path: Path) -> None:
    message = error_of(tmp_path, GOOD.replace('name = "chats"', 'name = "chats"\ndatabase = "logs"'))
    assert (
        "queries.1 (chats).database: 'logs' is not cosmos.database ('shop'); for several databases use [[accounts]]"
        in message
    )


def test_pricing_defaults_to_microsoft_s_example_and_takes_the_user_s_prices(tmp_path: Path) -> None:
    prices = load_config(write(tmp_path, GOOD)).pricing.prices()
    assert (prices.currency, prices.manual_per_100_ru_s_hour, prices.list_example) == ("USD", 0.008, True)
    mine = GOOD + (
        '\n[pricing]\ncurrency = "EUR"\nmanual_per_100_ru_s_hour = 0.0075\nmulti_write_per_100_ru_s_hour = 0.015\n'
        "serverless_per_million_ru = 0.23\nstorage_per_gb_month = 0.23\ndiscount = 0.1\n"
        'reservation_plan_discount = 0.3\nmulti_write_accounts = ["prod"]\n'
        "[[pricing.reservations]]\nru_s = 10000\ndiscount = 0.2\n"
    )
    pricing = load_config(write(tmp_path, mine)).pricing
    assert pricing.prices().list_example is False and pricing.prices().discount == 0.1
    assert [(r.ru_s, r.discount) for r in pricing.held()] == [(10_000.0, 0.2)]
    assert pricing.reservation_plan_discount == 0.3 and pricing.multi_write_accounts == ["prod"]


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ('[pricing]\ncurrency = "EUR"\n', "currency EUR needs its own prices: set manual_per_100_ru_s_hour"),
        ("[pricing]\ndiscount = 1.5\n", "pricing.discount: Input should be less than 1"),
        ("[[pricing.reservations]]\nru_s = 150\ndiscount = 0.2\n", "must be a multiple of 100 RU/s"),
    ],
)
def test_a_wrong_price_is_a_located_line(tmp_path: Path, section: str, expected: str) -> None:
    assert expected in error_of(tmp_path, GOOD + "\n" + section)
