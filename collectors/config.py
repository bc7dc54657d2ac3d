"""`ruscope.toml`: validated configuration, no secrets.

Pydantic models with `extra="forbid"`, so a typo is a located error (`queries.0.contianer: Extra inputs
are not permitted`) and the run does not start. Credentials come from the environment only
(`COSMOS_KEY`, else azure-identity's `DefaultAzureCredential`).

To add a setting: add a typed field with a default to the model it belongs to, and document it in
README.md's configuration example.

    [cosmos]
    endpoint = "http://127.0.0.1:8081/"
    database = "shop"

    [store]
    dir = "ruscope-data"

    [replay]
    budget_ru = 5000

    [[queries]]
    name = "orders-of-a-tenant"
    container = "orders"
    sql = "SELECT * FROM c WHERE c.tenantId = @t"
    parameters = { "@t" = "t1" }
    partition_key = "t1"          # a value, a list for hierarchical keys, or a prefix of one
    mode = "as-is"                # or "per-feed-range": once per physical partition
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

KeyComponent = str | int | float | bool
JSONValue = Any


class ConfigError(Exception):
    """A configuration that cannot be used; the message names the file and the location."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CosmosSettings(_Model):
    endpoint: str = "http://127.0.0.1:8081/"
    database: Annotated[str, Field(min_length=1)]
    connection_timeout_s: Annotated[int, Field(ge=1)] = 10
    # how hard the SDK retries throttled requests before a query is recorded as failed (SDK defaults)
    max_retry_attempts: Annotated[int, Field(ge=0)] = 9
    max_retry_wait_s: Annotated[int, Field(ge=0)] = 30

    @field_validator("endpoint")
    @classmethod
    def _url(cls, value: str) -> str:
        parsed = urlparse(value)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError("must be an http(s) URL such as https://myaccount.documents.azure.com:443/")
        if parsed.username or parsed.password or parsed.query:
            raise ValueError("must not carry credentials or query parameters (keys belong in COSMOS_KEY)")
        return value


class StoreSettings(_Model):
    dir: str = "ruscope-data"


class ReplaySettings(_Model):
    budget_ru: Annotated[float | None, Field(gt=0)] = None  # stop before a run spends more than this


class QuerySpec(_Model):
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=100)]
    container: Annotated[str, Field(min_length=1)]
    sql: Annotated[str, Field(min_length=1)]
    parameters: dict[str, JSONValue] = {}
    partition_key: KeyComponent | list[KeyComponent] | None = None
    mode: Literal["as-is", "per-feed-range"] = "as-is"
    repeat: Annotated[int, Field(ge=1, le=10_000)] = 1
    max_item_count: Annotated[int | None, Field(ge=-1)] = None
    query_metrics: bool = True
    index_metrics: bool = False

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
        return self

    @property
    def parameter_list(self) -> list[dict[str, JSONValue]]:
        """The SDK's `parameters=` shape."""
        return [{"name": name, "value": value} for name, value in self.parameters.items()]


class Config(_Model):
    cosmos: CosmosSettings
    store: StoreSettings = StoreSettings()
    replay: ReplaySettings = ReplaySettings()
    queries: list[QuerySpec] = []

    @model_validator(mode="after")
    def _unique_names(self) -> Config:
        seen: set[str] = set()
        for query in self.queries:
            if query.name in seen:
                raise ValueError(f"query name {query.name!r} is used twice; names identify queries in the store")
            seen.add(query.name)
        return self


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


def _location(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(top level)"


def format_validation_error(path: Path, exc: ValidationError) -> str:
    """One line per problem: `file: queries.0.contianer: Extra inputs are not permitted`."""
    lines = []
    for error in exc.errors(include_url=False):
        message = error["msg"].removeprefix("Value error, ")
        lines.append(f"{path}: {_location(error['loc'])}: {message}")
    return "\n".join(lines)


def parse_config(data: dict[str, Any], path: Path) -> Config:
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(path, exc)) from None


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
