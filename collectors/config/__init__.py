"""`ruscope.toml`: validated configuration, no secrets.

Pydantic models with `extra="forbid"`, so a typo is a located error (`queries.0.contianer: Extra inputs
are not permitted`) and the run does not start; rules across sections (an unknown query name in
`accounts.0.queries`, a name used twice) are located the same way. Credentials come from the environment
only: an account's `key_env` names the variable holding its key (`COSMOS_KEY` by default for one
account), else azure-identity's `DefaultAzureCredential`.

One account (`[cosmos]`, the shorthand, named after its endpoint's host) or a fleet (`[[accounts]]`, each
with its name, endpoint, database(s), optional `key_env`, `monitor_resource`, a pick of the shared
`[[queries]]` and its `[[accounts.own_queries]]`): README.md shows the first, docs/fleet.md the second. Whichever
it is, the collectors see `Config.all_accounts()`: `Account` values with the queries each runs.

To add a setting: add a typed field with a default to the model it belongs to, and document it in
README.md's configuration example (and docs/fleet.md for the fleet's).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from collectors.config.advisor import AdvisorSettings as AdvisorSettings
from collectors.config.alerts import AlertSettings as AlertSettings
from collectors.config.check import CheckSettings as CheckSettings
from collectors.config.check import QueryBudget as QueryBudget
from collectors.config.errors import format_validation_error, toml_type
from collectors.config.monitor import MonitorSettings as MonitorSettings  # re-exported: its home before
from collectors.config.pricing import PricingSettings as PricingSettings

KeyComponent = str | int | float | bool
JSONValue = Any
DEFAULT_KEY_ENV = "COSMOS_KEY"
Token = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=100)]
EnvName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=200)]
Name = Annotated[str, Field(min_length=1)]
_MONITOR_RESOURCE = re.compile(
    r"/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.DocumentDB/databaseAccounts/[^/]+",
    re.IGNORECASE,
)


class ConfigError(Exception):
    """A configuration that cannot be used; the message names the file and the location."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ConnectionSettings(_Model):
    """How to reach one account; `[cosmos]` and every `[[accounts]]` entry have these."""

    endpoint: str = "http://127.0.0.1:8081/"
    connection_timeout_s: Annotated[int, Field(ge=1)] = 10
    # how hard the SDK retries throttled requests before a query is recorded as failed (SDK defaults)
    max_retry_attempts: Annotated[int, Field(ge=0)] = 9
    max_retry_wait_s: Annotated[int, Field(ge=0)] = 30
    monitor_resource: str | None = None  # the account's ARM id, for the Azure Monitor collectors

    @field_validator("endpoint")
    @classmethod
    def _url(cls, value: str) -> str:
        parsed = urlparse(value)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError("must be an http(s) URL such as https://myaccount.documents.azure.com:443/")
        if parsed.username or parsed.password or parsed.query:
            raise ValueError("must not carry credentials or query parameters (keys belong in the environment)")
        return value

    @field_validator("monitor_resource")
    @classmethod
    def _arm_id(cls, value: str | None) -> str | None:
        if value is not None and not _MONITOR_RESOURCE.fullmatch(value):
            raise ValueError(
                "must be an ARM resource id: /subscriptions/<id>/resourceGroups/<group>"
                "/providers/Microsoft.DocumentDB/databaseAccounts/<name>"
            )
        return value


class CosmosSettings(ConnectionSettings):
    """`[cosmos]`: the one-account shorthand, named after its endpoint's host."""

    database: Name


class StoreSettings(_Model):
    uri: Name = "ruscope-data"  # a local directory, or az://container/path, abfss://container@host/path
    vacuum_retention_hours: Annotated[float, Field(ge=0)] = 168  # what vacuum keeps for readers in flight
    compact_after_collect: bool = False  # `ruscope collect` compacts the store after each pass
    rollup_after_collect: bool = True  # `collect` rolls new metrics up into `metric_cells` (compact does too)
    rollup_every_minutes: Annotated[float, Field(ge=0)] = 60  # ...when the last rollup is this old (0: each pass)
    older_names: ClassVar[tuple[str, ...]] = ("dir",)  # still accepted (a typo's suggestion knows them)

    @model_validator(mode="before")
    @classmethod
    def _dir_is_uri(cls, data: Any) -> Any:
        """`dir` is the older name of `uri` (configs written before the store could be remote)."""
        if isinstance(data, dict) and "dir" in data:
            if "uri" in data:
                raise ValueError("give uri or its older name dir, not both")
            data = {("uri" if name == "dir" else name): value for name, value in data.items()}
        return data


# The replay's default RU/s ceiling per account: a quarter of the smallest throughput a container or a shared
# database can be given (400 RU/s manual) and a tenth of the smallest autoscale maximum (1,000 RU/s), so a paced
# replay alone never takes more than a quarter of any offer (docs/reference/azure-monitor.md R76).
DEFAULT_REPLAY_RU_PER_S = 100.0


class ReplaySettings(_Model):
    budget_ru: Annotated[float | None, Field(gt=0)] = None  # stop before a run spends more than this
    # what each account's replay may spend per second (a token bucket fed by the RU charged); inf: unpaced
    max_ru_per_s: Annotated[float, Field(gt=0)] = DEFAULT_REPLAY_RU_PER_S


class FleetSettings(_Model):
    parallelism: Annotated[int, Field(ge=1, le=64)] = 4  # accounts collected at the same time


class QuerySpec(_Model):
    name: Token
    container: Name
    sql: Name
    database: Annotated[str | None, Field(min_length=1)] = None  # default: the account's first database
    parameters: dict[str, JSONValue] = {}
    partition_key: KeyComponent | list[KeyComponent] | None = None
    mode: Literal["as-is", "per-feed-range"] = "as-is"
    repeat: Annotated[int, Field(ge=1, le=10_000)] = 1
    max_item_count: Annotated[int | None, Field(ge=-1)] = None
    query_metrics: bool = True
    index_metrics: bool = False
    # how often production runs this query (executions/s): weights the replay's RU per partition into RU/s
    rate_per_s: Annotated[float | None, Field(ge=0)] = None
    budget: QueryBudget | None = None  # what `ruscope check` holds one execution to (collectors.config.check)

    @field_validator("sql")
    @classmethod
    def _read_only(cls, value: str) -> str:
        problem = read_only_problem(value)
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("parameters")
    @classmethod
    def _parameter_names(cls, value: dict[str, JSONValue]) -> dict[str, JSONValue]:
        bad = [name for name in value if not re.fullmatch(r"@[A-Za-z_][A-Za-z0-9_]*", name)]
        if bad:
            raise ValueError(f"parameter names start with '@' (got {', '.join(map(repr, bad))})")
        return value

    @field_validator("partition_key", mode="before")
    @classmethod
    def _key_type(cls, value: Any) -> Any:
        """One message for a value of the wrong type (the union would say it once per member)."""
        parts = value if isinstance(value, list) else [value]
        bad = [part for part in parts if not isinstance(part, KeyComponent)]
        if value is not None and bad:
            inside = " in the list" if isinstance(value, list) else ""
            raise ValueError(
                "a partition key value is a string, number or boolean, or a list of 1 to 3 of them for a "
                f"hierarchical key (got {toml_type(bad[0])}{inside})"
            )
        return value

    @field_validator("partition_key")
    @classmethod
    def _key_shape(cls, value: Any) -> Any:
        if isinstance(value, list) and not 1 <= len(value) <= 3:
            raise ValueError("a hierarchical key or prefix has 1 to 3 components")
        return value

    @model_validator(mode="after")
    def _mode_and_key(self) -> QuerySpec:
        if self.mode == "per-feed-range" and self.partition_key is not None:
            raise ValueError("mode 'per-feed-range' replays every physical partition; drop partition_key")
        if self.budget is not None and self.budget.max_ru_per_s is not None and not self.rate_per_s:
            raise ValueError("budget.max_ru_per_s is RU per execution x rate_per_s: give the query its rate_per_s")
        return self

    @property
    def parameter_list(self) -> list[dict[str, JSONValue]]:
        """The SDK's `parameters=` shape."""
        return [{"name": name, "value": value} for name, value in self.parameters.items()]


class AccountSettings(ConnectionSettings):
    """One `[[accounts]]` entry. Its own queries are `own_queries`: TOML cannot hold both a list of names
    (`queries = [...]`) and tables (`[[accounts.queries]]`) under one key."""

    name: Token
    endpoint: str
    database: Annotated[str | None, Field(min_length=1)] = None
    databases: Annotated[list[Name] | None, Field(min_length=1)] = None
    key_env: EnvName | None = None  # the NAME of the variable holding the key, never the key
    queries: list[Token] | None = None  # shared queries run here; None: all of them
    own_queries: list[QuerySpec] = []
    replay_max_ru_per_s: Annotated[float | None, Field(gt=0)] = None  # this account's; None: [replay]'s

    @model_validator(mode="after")
    def _one_database_field(self) -> AccountSettings:
        if (self.database is None) == (self.databases is None):
            raise ValueError("give database (one) or databases (a list), exactly one of them")
        return self

    @property
    def database_list(self) -> list[str]:
        return [self.database] if self.database is not None else list(self.databases or [])


@dataclass(frozen=True)
class Account:
    """One account as the collectors see it, whichever way the config declared it: its connection, its
    databases (the first is the default), the queries it runs, and where its key comes from."""

    name: str
    connection: ConnectionSettings
    databases: tuple[str, ...]
    queries: tuple[QuerySpec, ...]
    key_env: str | None  # None: DefaultAzureCredential
    key_optional: bool  # an unset key_env means DefaultAzureCredential (the implicit COSMOS_KEY), not an error
    monitor_resource: str | None = None
    replay_max_ru_per_s: float = DEFAULT_REPLAY_RU_PER_S  # the replay's pacing (`[replay] max_ru_per_s`)

    @property
    def endpoint(self) -> str:
        return self.connection.endpoint

    def database_of(self, query: QuerySpec) -> str:
        return query.database or self.databases[0]


class Config(_Model):
    cosmos: CosmosSettings | None = None  # one account; or [[accounts]], not both
    accounts: list[AccountSettings] | None = None
    store: StoreSettings = StoreSettings()
    replay: ReplaySettings = ReplaySettings()
    fleet: FleetSettings = FleetSettings()
    monitor: MonitorSettings | None = None  # None: `ruscope metrics` and `ruscope logs` have nothing to do
    alerts: AlertSettings | None = None  # None: `ruscope collect` evaluates no alerts
    advisor: AdvisorSettings | None = None  # None: `ruscope advise` has nothing to compare
    pricing: PricingSettings = PricingSettings()  # what costs are priced at (Microsoft's example by default)
    check: CheckSettings = CheckSettings()  # what `ruscope check` compares (collectors.config.check)
    queries: list[QuerySpec] = []  # shared by every account (each [[accounts]] entry may pick some)

    @model_validator(mode="after")
    def _consistent(self) -> Config:
        """Rules across sections, each message starting with its location (several: one per line)."""
        problems = _account_problems(self) or [
            *_duplicates(self),
            *_selection_problems(self),
            *_check_problems(self),
        ]
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def all_accounts(self) -> list[Account]:
        """Every account to collect, `[cosmos]` or `[[accounts]]`, with the queries it runs."""
        if self.cosmos is not None:
            name = urlparse(self.cosmos.endpoint).hostname or "cosmos"
            cosmos = self.cosmos
            resource, pacing = cosmos.monitor_resource, self.replay.max_ru_per_s
            return [
                Account(name, cosmos, (cosmos.database,), tuple(self.queries), DEFAULT_KEY_ENV, True, resource, pacing)
            ]
        entries = self.accounts or []
        return [_account(entry, self, alone=len(entries) == 1) for entry in entries]

    def account(self, name: str | None = None) -> Account:
        """The account called `name` (None: the first); LookupError naming the known ones."""
        found = self.all_accounts()
        for account in found:
            if name is None or account.name == name:
                return account
        raise LookupError(f"no account named {name!r} (known: {', '.join(a.name for a in found)})")


def _account(entry: AccountSettings, config: Config, *, alone: bool) -> Account:
    """An `[[accounts]]` entry resolved: its queries, its pacing, and COSMOS_KEY by default only when alone."""
    picked = [q for q in config.queries if entry.queries is None or q.name in entry.queries]
    key_env = entry.key_env or (DEFAULT_KEY_ENV if alone else None)
    return Account(
        entry.name,
        entry,
        tuple(entry.database_list),
        (*picked, *entry.own_queries),
        key_env,
        key_optional=entry.key_env is None,
        monitor_resource=entry.monitor_resource,
        replay_max_ru_per_s=entry.replay_max_ru_per_s or config.replay.max_ru_per_s,
    )


def _account_problems(config: Config) -> list[str]:
    """One account section, the right way: `[cosmos]` or a non-empty `[[accounts]]`."""
    if config.cosmos is not None and config.accounts is not None:
        return ["accounts: [cosmos] is the one-account shorthand; with [[accounts]], make it one of the list"]
    if config.cosmos is None and config.accounts is None:
        return ["cosmos: no account: add [cosmos] for one account or [[accounts]] for several"]
    if config.accounts == []:
        return ["accounts: at least one account is needed"]
    return []


def _repeated(names: list[str]) -> list[tuple[int, str]]:
    """(index, name) of every name seen before."""
    return [(i, name) for i, name in enumerate(names) if name in names[:i]]


def _duplicates(config: Config) -> list[str]:
    """Names identify queries and label accounts in the store: each is used once."""
    problems = [
        f"queries.{i}.name: query name {name!r} is used twice; names identify queries in the store"
        for i, name in _repeated([q.name for q in config.queries])
    ]
    problems += [
        f"accounts.{i}.name: account name {name!r} is used twice; names label the rows in the store"
        for i, name in _repeated([a.name for a in config.accounts or []])
    ]
    return problems


def _check_problems(config: Config) -> list[str]:
    """`[check]` names queries that exist, and each of its containers once."""
    known = [q.name for q in config.queries] + [q.name for a in config.accounts or [] for q in a.own_queries]
    problems = [
        f"check.queries.{i}: no query named {name!r} (known: {', '.join(known) or 'none'})"
        for i, name in enumerate(config.check.queries or [])
        if name not in known
    ]
    problems += [
        f"check.containers.{i}.id: container {name!r} is declared twice"
        for i, name in _repeated([c.id for c in config.check.containers])
    ]
    return problems


def _selection_problems(config: Config) -> list[str]:
    """Per account: the shared queries it names exist, its own do not reuse a name, every query's
    database is one of the account's."""
    if config.cosmos is not None:
        return [
            f"queries.{i}.database: {q.database!r} is not cosmos.database ({config.cosmos.database!r}); "
            "for several databases use [[accounts]] with databases = [...]"
            for i, q in enumerate(config.queries)
            if q.database not in (None, config.cosmos.database)
        ]
    shared = {q.name: i for i, q in enumerate(config.queries)}
    problems: list[str] = []
    for n, entry in enumerate(config.accounts or []):
        where = f"accounts.{n}"
        problems += [
            f"{where}.queries.{j}: no shared [[queries]] named {name!r} (known: {', '.join(shared) or 'none'})"
            for j, name in enumerate(entry.queries or [])
            if name not in shared
        ]
        picked = [name for name in shared if entry.queries is None or name in entry.queries]
        problems += [
            f"{where}.own_queries.{j - len(picked)}.name: query name {name!r} is used twice in account {entry.name!r}"
            for j, name in _repeated([*picked, *(q.name for q in entry.own_queries)])
        ]
        problems += _database_problems(
            entry, where, [(f"queries.{shared[p]}", config.queries[shared[p]]) for p in picked]
        )
    return problems


def _database_problems(entry: AccountSettings, where: str, shared: list[tuple[str, QuerySpec]]) -> list[str]:
    """Every query's database is one the account declares (a typo would fail every run)."""
    known = entry.database_list
    own = [(f"{where}.own_queries.{j}", q) for j, q in enumerate(entry.own_queries)]
    return [
        f"{at}.database: {q.database!r} is not a database of account {entry.name!r} ({', '.join(known)})"
        + ("" if at.startswith(where) else f"; pick the shared queries it runs in {where}.queries")
        for at, q in [*shared, *own]
        if q.database is not None and q.database not in known
    ]


# -- read-only enforcement -------------------------------------------------------------------------

_STRING_OR_COMMENT = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|--[^\n]*")


def read_only_problem(sql: str) -> str | None:
    """Why a query could change data, or None. Replays must never write: only a single SELECT statement
    passes. The NoSQL query language has no DML, so a SELECT cannot write; anything else (an `EXEC` of a
    stored procedure, SQL from another database) is refused before a request is sent."""
    code = _STRING_OR_COMMENT.sub(" ", sql).strip()
    if not re.match(r"SELECT\b", code, re.IGNORECASE):
        first = code.split(None, 1)[0] if code else "(nothing)"
        return f"only SELECT queries are replayed (read-only); this one starts with {first!r}"
    if ";" in code.rstrip().rstrip(";"):
        return "only one statement is allowed (found ';')"
    return None


# -- loading ---------------------------------------------------------------------------------------


def parse_config(data: dict[str, Any], path: Path) -> Config:
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(path, exc, data, root=Config)) from None


def load_config(path: Path) -> Config:
    """Read and validate a config file; every problem is a ConfigError naming where it is."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it ({exc})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    return parse_config(data, path)
