"""SqlError: a located compile error, printable in the service's own wire layout."""

from __future__ import annotations

import json
from typing import Any

UNVERIFIED = "SC2999"  # placeholder code: the reference documents the rule but not the service's code


class SqlError(Exception):
    """A query the service would reject with 400 BadRequest.

    `code` is the service code ("SC1001", ...); a numeric code (2206) is an int; None means the
    legacy `{"Errors":["..."]}` form. `start`/`end` are 0-based, end-exclusive character offsets,
    or None where the service gives no location.
    """

    def __init__(self, code: str | int | None, message: str, start: int | None = None, end: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"SqlError({self.code!r}, {self.message!r}, {self.start!r}, {self.end!r})"

    def to_service_message(self) -> str:
        """The JSON error list the service embeds after `Message: ` in a 400 body."""
        if self.code is None:
            return json.dumps({"Errors": [self.message]}, separators=(",", ":"))
        error: dict[str, Any] = {"severity": "Error"}
        if self.start is not None:
            error["location"] = {"start": self.start, "end": self.end}
        error["code"] = self.code
        error["message"] = self.message
        return json.dumps({"errors": [error]}, separators=(",", ":"))


def syntax_error(near: str, start: int, end: int) -> SqlError:
    return SqlError("SC1001", f"Syntax error, incorrect syntax near '{near}'.", start, end)


def unresolved(name: str, start: int, end: int) -> SqlError:
    return SqlError("SC2001", f"Identifier '{name}' could not be resolved.", start, end)
