"""Long IN lists of constants, read without the grammar.

The LALR parser reduces each list item through the whole precedence cascade (expression down to literal,
about 20 reductions): 50 us an item, 3.5 s for a 70,000-number list, during which the single-threaded
server answers no one. A list of literal constants is read here by one regex pass instead:
its items are replaced by a placeholder parameter padded to the same length (every other position in the
text is unchanged), and the parser puts the decoded literals back in place of the placeholder. String
literals are skipped, so `'... IN (1, 2)'` inside a string is never touched.
"""

from __future__ import annotations

import re
from typing import Any

from . import ast as a
from .literals import decode_number, decode_string

MIN_ITEMS = 64  # shorter lists go through the grammar as written
PLACEHOLDER = "@__ruscope_in_list_"

_SCAN = re.compile(r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\bIN\s*\(""", re.IGNORECASE)
_NUMBER = r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_ITEM = re.compile(
    rf"""[ \t\r\n]*(?:(?P<neg>-[ \t\r\n]*)?(?P<num>{_NUMBER})|(?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
    r"""|(?P<kw>true|false|null)(?![A-Za-z_0-9]))[ \t\r\n]*(?P<sep>[,)])""",
    re.IGNORECASE,
)
_KEYWORDS = {"true": True, "false": False, "null": None}

Lists = dict[str, tuple[a.Literal, ...]]


def _literal(m: re.Match[str]) -> a.Literal:
    if m.group("num") is not None:
        value: Any = decode_number(m.group("num"))
        span = (m.start("neg") if m.group("neg") else m.start("num"), m.end("num"))
        return a.Literal(-value if m.group("neg") else value, span)
    if m.group("str") is not None:
        return a.Literal(decode_string(m.group("str")), (m.start("str"), m.end("str")))
    return a.Literal(_KEYWORDS[m.group("kw").lower()], (m.start("kw"), m.end("kw")))


def _read_items(text: str, pos: int) -> tuple[list[a.Literal], int] | None:
    """The literals of a list starting at pos (after `(`) and the index of its `)`; None if not all literals."""
    items: list[a.Literal] = []
    while True:
        m = _ITEM.match(text, pos)
        if m is None:
            return None
        items.append(_literal(m))
        pos = m.end()
        if m.group("sep") == ")":
            return items, pos - 1


def extract_lists(text: str) -> tuple[str, Lists]:
    """The text with each long literal IN list replaced by a same-length placeholder, and the lists."""
    lists: Lists = {}
    pieces: list[str] = []
    pos = last = 0
    while (m := _SCAN.search(text, pos)) is not None:
        pos = m.end()
        if m.group(0)[0] in "'\"":
            continue
        found = _read_items(text, pos)
        if found is None or len(found[0]) < MIN_ITEMS:
            continue
        items, close = found
        name = f"{PLACEHOLDER}{len(lists)}"
        pieces += [text[last:pos], name.ljust(close - pos)]
        lists[name] = tuple(items)
        last = pos = close
    if not lists:
        return text, lists
    pieces.append(text[last:])
    return "".join(pieces), lists
