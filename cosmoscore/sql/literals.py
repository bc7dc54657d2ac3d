"""Literal decoding: string escapes (surrogate pairs included) and number literals as int64 or double."""

from __future__ import annotations

from .values import INT64_MAX

_ESCAPES = {"'": "'", '"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def decode_string(raw: str) -> str:
    """Decode a quoted string literal body per the docs' escape list (incl. surrogate pairs)."""
    body = raw[1:-1]
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt == "u":
            out.append(chr(int(body[i + 2 : i + 6], 16)))
            i += 6
        else:
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
    text = "".join(out)
    return (
        text.encode("utf-16", "surrogatepass").decode("utf-16")
        if any(0xD800 <= ord(c) <= 0xDFFF for c in text)
        else text
    )


def decode_number(raw: str) -> int | float:
    """int64 where the literal is an integer that fits, double otherwise (sample:is-integer)."""
    if raw[:2] in ("0x", "0X"):
        value = int(raw, 16)
        return value if value <= INT64_MAX else float(value)
    if any(ch in raw for ch in ".eE"):
        return float(raw)
    value = int(raw)
    return value if value <= INT64_MAX else float(value)
