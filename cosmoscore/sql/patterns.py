"""LIKE and RegexMatch without exponential backtracking.

LIKE (cosmos-sql-semantics §2): `%` any run, `_` one character, `[set]` / `[^set]` one character of a set,
an optional ESCAPE character. Every element but `%` matches exactly one character, so the pattern splits
at `%` into fixed-length segments: the first is anchored at the start, the last at the end, and each
middle one is found leftmost after the previous (greedy leftmost is exact for fixed-length segments).
Each segment is a quantifier-free regex, so a match costs O(len(text) x len(pattern)) at worst.

RegexMatch runs Python's backtracking `re` (no linear-time engine is installed), so patterns that
backtrack exponentially (a quantified group holding a quantifier or an alternation, backreferences) are
refused with a 400, and the text it runs on is capped (`bounds.SqlLimits.max_regex_input_chars`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import bounds
from .cache import BoundedCache, cached
from .errors import UNVERIFIED, SqlError


@dataclass(frozen=True)
class LikePattern:
    """A LIKE pattern split at `%`: `segments[0]` anchored at the start, `segments[-1]` at the end."""

    segments: tuple[re.Pattern[str], ...]
    lengths: tuple[int, ...]
    star: bool  # at least one `%`

    def matches(self, text: str) -> bool:
        segs, lens = self.segments, self.lengths
        if not self.star:
            return len(text) == lens[0] and segs[0].fullmatch(text) is not None
        end = len(text) - lens[-1]
        if end < lens[0] or (lens[0] and segs[0].match(text) is None):
            return False
        pos = lens[0]
        for seg, n in zip(segs[1:-1], lens[1:-1]):
            if n:
                found = seg.search(text, pos, end)
                if found is None:
                    return False
                pos = found.end()
        return pos <= end and (not lens[-1] or segs[-1].fullmatch(text, end) is not None)


def invalid_like(pattern: str, reason: str) -> SqlError:
    return SqlError(UNVERIFIED, f"The LIKE pattern '{pattern}' is invalid: {reason}.")


def _set_token(pattern: str, i: int) -> tuple[str, int] | None:
    """`[set]` or `[^set]` at i as a one-character regex class, and the index after it; None: a literal `[`."""
    close = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] == "^" else i + 1)
    if close == -1:
        return None
    body = pattern[i + 1 : close]
    negated = body.startswith("^")
    body = body[1:] if negated else body
    chars = "".join("\\" + c if c in "\\]^[" else c for c in body)
    token = f"[{'^' if negated else ''}{chars}]"
    try:
        re.compile(token)
    except re.error as exc:
        raise invalid_like(pattern, str(exc.msg)) from None
    return token, close + 1


def _tokens(pattern: str, escape: str | None) -> list[str | None]:
    """One regex per one-character element; None for `%`."""
    out: list[str | None] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if escape and ch == escape and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if ch == "[":
            found = _set_token(pattern, i)
            if found is not None:
                out.append(found[0])
                i = found[1]
                continue
        out.append(None if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return out


_LIKE: BoundedCache[LikePattern] = BoundedCache(max_entries=512, max_bytes=4 * 1024 * 1024)


def like_pattern(pattern: str, escape: str | None) -> LikePattern:
    """Compile a LIKE pattern (cached, bounded by bytes); an invalid set (`[z-a]`) is the 400 SqlError."""
    return cached(_LIKE, (pattern, escape), lambda: _like_pattern(pattern, escape), lambda _: 64 * len(pattern) + 512)


def _like_pattern(pattern: str, escape: str | None) -> LikePattern:
    segments: list[list[str]] = [[]]
    for token in _tokens(pattern, escape):
        if token is None:
            segments.append([])
        else:
            segments[-1].append(token)
    compiled = tuple(re.compile("".join(seg), re.DOTALL) for seg in segments)
    return LikePattern(compiled, tuple(len(seg) for seg in segments), len(segments) > 1)


# -- RegexMatch ----------------------------------------------------------------------------------

_BACKREF = re.compile(r"\\[1-9]|\\k<|\(\?P=")
_COUNT = re.compile(r"\{(\d*)(,?)(\d*)\}")
_SMALL_COUNT = 16  # `(a|b){2}` backtracks at most 2^16 ways: bounded, allowed


def _skip_class(pattern: str, i: int) -> int:
    """Index after the character class starting at i (`[` ... `]`, a leading `]` or `^]` is literal)."""
    j = i + 1
    if pattern[j : j + 1] == "^":
        j += 1
    if pattern[j : j + 1] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1


def _group_head(pattern: str, i: int) -> int:
    """Index after `(` and any `?...` group syntax (non-capturing, named, lookaround, inline flags)."""
    j = i + 1
    if pattern[j : j + 1] != "?":
        return j
    rest = pattern[j + 1 :]
    if rest.startswith("P<"):
        close = pattern.find(">", j)
        return close + 1 if close != -1 else len(pattern)
    if rest[:2] in ("<=", "<!"):
        return j + 3
    if rest[:1] in (":", "=", "!"):
        return j + 2
    while j + 1 < len(pattern) and pattern[j + 1].isalpha():
        j += 1
    return j + 2 if pattern[j + 1 : j + 2] == ":" else j + 1


def _quantifier(pattern: str, i: int) -> tuple[bool, int]:
    """(repeats without a small bound, index after) for a quantifier at i; (False, i) when there is none."""
    ch = pattern[i : i + 1]
    if ch in ("*", "+"):
        return True, i + 1
    if ch == "?":
        return False, i + 1
    if ch == "{":
        found = _COUNT.match(pattern, i)
        if found:
            low, comma, high = found.groups()
            bound = int(high or low or 0) if not comma or high else None
            return bound is None or bound > _SMALL_COUNT, found.end()
    return False, i


def _nested_repetition(pattern: str) -> bool:
    """Whether a repeated group holds a quantifier or an alternation (`(a+)+`, `(a|aa)*`)."""
    stack: list[list[bool]] = [[False, False]]  # per open group: [holds a quantifier, holds `|`]
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            i += 2
        elif ch == "[":
            i = _skip_class(pattern, i)
        elif ch == "(":
            stack.append([False, False])
            i = _group_head(pattern, i)
            continue
        elif ch == ")" and len(stack) > 1:
            inner = stack.pop()
            many, after = _quantifier(pattern, i + 1)
            if many and (inner[0] or inner[1]):
                return True
            stack[-1][0] = stack[-1][0] or inner[0] or after > i + 1
            i = after
            continue
        elif ch == "|":
            stack[-1][1] = True
            i += 1
        else:
            i += 1
        _, after = _quantifier(pattern, i)
        if after > i:
            stack[-1][0] = True
            i = after
    return False


_REGEX: BoundedCache[tuple[re.Pattern[str] | None]] = BoundedCache(max_entries=256, max_bytes=4 * 1024 * 1024)


def safe_regex(pattern: str, flags: int) -> re.Pattern[str] | None:
    """`_safe_regex`, cached and bounded by bytes."""
    return cached(_REGEX, (pattern, flags), lambda: (_safe_regex(pattern, flags),), lambda _: 64 * len(pattern) + 512)[
        0
    ]


def _safe_regex(pattern: str, flags: int) -> re.Pattern[str] | None:
    """The compiled RegexMatch pattern; None when `re` rejects it (undefined, as before); a 400 SqlError
    when it could backtrack exponentially."""
    if _BACKREF.search(pattern) or _nested_repetition(pattern):
        raise SqlError(
            UNVERIFIED,
            f"The RegexMatch pattern '{pattern}' is not supported by the emulator: nested or alternated "
            "repetition and backreferences can backtrack exponentially.",
        )
    try:
        return re.compile(pattern, flags)
    except re.error:
        return None


def regex_search(pattern: str, flags: int, text: str) -> bool | None:
    compiled = safe_regex(pattern, flags)
    if compiled is None:
        return None
    cap = bounds.LIMITS.max_regex_input_chars
    if len(text) > cap:
        raise SqlError(
            UNVERIFIED,
            f"RegexMatch input of {len(text)} characters exceeds the emulator's limit of {cap} characters.",
        )
    return compiled.search(text) is not None
