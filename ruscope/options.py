"""What the commands share: the defaults and help of their common options, the config loaded (a problem
is exit 2 with its location), the store and accounts they act on, and the one-line failure.

Exit codes (DESIGN.md): 0 all good; 1 some items or an account failed (or a `--fail-on-error` cycle); 2 bad
config or usage; 3 ran, and alerts fired. The collectors' modules are imported lazily, so `ruscope --help`
and the commands that need few of them start fast.

Every line a command prints goes through `echo`: names and keys come from the account (a container named
with ESC sequences could clear the screen, retitle the terminal or, with CR, overwrite the line before it),
so control characters are shown escaped (`\\x1b`, `\\r`), as Python's repr shows them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import typer

if TYPE_CHECKING:
    from collectors.config import Account, Config
    from store import StoreLocation

DEFAULT_CONFIG = Path("ruscope.toml")
EXAMPLE_CONFIG = "workloads/chat/ruscope.toml"
EXIT_OK, EXIT_PARTIAL, EXIT_USAGE = 0, 1, 2

STORE_HELP = "Store: a directory or an az:// / abfss:// URI (default: the config's store uri)."
CONFIG_HELP = "The ruscope.toml to use (default: ./ruscope.toml)."
ACCOUNT_HELP = "Collect only the account with this name (default: every account)."


# C0 controls but tab and newline, DEL, C1 controls; line and paragraph separators, bidirectional overrides
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def terminal_text(text: str) -> str:
    """`text` with every character that drives a terminal written as its escape (ESC as `\\x1b`)."""
    return _CONTROL.sub(_escape, text)


def _escape(found: re.Match[str]) -> str:
    code = ord(found.group())
    if code == 0x0D:
        return "\\r"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def echo(text: str, *, err: bool = False) -> None:
    """Print one line (or several) of a command, its control characters escaped (`terminal_text`)."""
    typer.echo(terminal_text(text), err=err)


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    echo(f"ruscope: {message}", err=True)
    raise typer.Exit(code)


def error_line(line: str) -> None:
    echo(f"ruscope: {line}", err=True)


def load(config_path: Path) -> Config:
    """The validated config; a problem exits 2 with its location. A missing file is one line naming it
    and how to start one."""
    from collectors.config import ConfigError, load_config

    if not config_path.exists():
        given = "" if config_path == DEFAULT_CONFIG else " (--config)"
        fail(
            f"{config_path}: no such file{given}; pass --config FILE, or start from the commented example: "
            f"cp {EXAMPLE_CONFIG} {config_path}"
        )
    try:
        return load_config(config_path)
    except ConfigError as exc:
        fail(str(exc))


def store_dir(store: str | None, config: Config | None) -> StoreLocation:
    """`--store`, else `[store] uri`, else `ruscope-data`, as the one location type every store function takes
    (exit 2 for a URI that cannot be a store, or a remote one whose credentials the environment lacks)."""
    from store import store_location

    uri = store if store is not None else config.store.uri if config is not None else None
    try:
        return store_location(uri)
    except ValueError as exc:
        fail(str(exc))


def accounts_of(config_path: Path, config: Config, account: str | None) -> list[Account]:
    """Every account of the config, or only the one `--account` names (exit 2 if none is called so)."""
    try:
        return [config.account(account)] if account is not None else config.all_accounts()
    except LookupError as exc:
        fail(f"{config_path}: --account: {exc.args[0]}")
