"""How numbers read, per unit: the precision a report keeps, a size in the unit that fits, a small percentage.

**Precision per unit** (`PRECISION`, used by `analysis.capacity.review` for the report's `value` column): RU and
RU/s to 0.1 (a tenth of an RU is below what a request is charged in steps of), GB to 3 decimals (a MB; the
row's detail says the size in the unit that fits), counts whole, ratios to 2 decimals, money (a currency code:
`is_currency`) to the cent, percentages to 2
decimals, or 2 significant digits below 1% (0.0048% is not 0) but never more than `MOST_DECIMALS`. With at
most 4 decimals the smallest number written is 0.0001, so the CSV (Python's shortest repr, which switches
to scientific notation below 1e-4) always holds plain decimals: 0.0048, never 4.8e-03.

**Changes** between two periods read by one rule (`change_text`): a rate or a share (a percentage, or a
fraction of 1 such as a 429 rate) changes in percentage points ("+5.82 pts": 1% to 6.82%), never in percent
of itself; a quantity in its own unit ("+1,050 RU", "+10.0 RU/s", "+36 KB"). Every card and table says which.

**Sizes** read in the unit that fits (`analysis.storage.size_unit`: KB, MB or GB, the storage page's rule):
361 KB reads "361 KB", not "0.00 GB".
"""

from __future__ import annotations

import math

import pandas as pd
from pandas.api.typing import NAType

from analysis.storage import KB, in_unit, size_unit
from cosmoscore.limits import GB

MOST_DECIMALS = 4
Number = float | NAType | None  # a numeric cell of a frame: a number, NaN, pd.NA (nullable columns) or None
PRECISION = {"RU": 1, "RU/s": 1, "GB": 3, "count": 0, "ratio": 2, "%": 2}  # decimals (a % may keep more)
CURRENCY_DECIMALS = 2  # money, in any ISO 4217 currency: to the cent, as a bill is


def round_to_unit(value: float, unit: str) -> float:
    """`value` rounded to its unit's precision (module docstring); a unit not listed keeps 4 decimals."""
    if value is None or pd.isna(value):
        return math.nan
    decimals = PRECISION.get(unit, CURRENCY_DECIMALS if is_currency(unit) else MOST_DECIMALS)
    if unit == "%" and 0 < abs(value) < 1:
        decimals = significant_decimals(value, digits=2)
    return round(float(value), decimals) + 0.0  # + 0.0: no "-0.0"


def is_currency(unit: str) -> bool:
    """A money unit: an ISO 4217 code ("USD", "EUR"), as `[pricing] currency` is written."""
    return len(unit) == 3 and unit.isalpha() and unit.isupper()


def significant_decimals(value: float, *, digits: int) -> int:
    """The decimals that keep `digits` significant digits of a number below 1 (at most MOST_DECIMALS)."""
    return min(MOST_DECIMALS, max(digits, digits - 1 - math.floor(math.log10(abs(value)))))


def size_text(size_gb: Number) -> str:
    """A size given in GB in the unit that fits (KB, MB or GB: `analysis.storage.size_unit`), 3 significant
    digits ("" when missing): 0.000034 GB reads "36 KB"."""
    if size_gb is None or pd.isna(size_gb):
        return ""
    kb = pd.Series([float(size_gb) * GB / KB])
    unit = size_unit(kb)
    shown = float(in_unit(kb, unit).iloc[0])
    return f"{shown:,.3g} {unit.name}" if shown < 1000 else f"{shown:,.0f} {unit.name}"


COMPACT_FROM = 100_000  # a card's number from here on is written to 3 significant digits with a suffix
_SUFFIXES = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k"))  # as Azure Monitor's charts write them


def compact_text(value: Number, *, decimals: int = 0) -> str:
    """A number as a headline card shows it ("" when missing): with thousands separators and `decimals` below
    `COMPACT_FROM` ("99,999"), else to 3 significant digits and a suffix ("235k", "5.23M"): a row of seven
    cards cuts "5,234,567" to "5,234…", which no one can read."""
    if value is None or pd.isna(value):
        return ""
    number = float(value)
    if abs(number) < COMPACT_FROM:
        return f"{number:,.{decimals}f}"
    scale, suffix = next((s, x) for s, x in _SUFFIXES if abs(number) >= s)
    return f"{number / scale:.3g}{suffix}"


def reads_unchanged(change: str | None) -> bool:
    """Whether a `change_text` says no change ("+0 pts", "+0.0 RU/s", "+0 KB"): a card shows it without an
    arrow or colour, not as a rise."""
    if not change:
        return False
    number = change.split()[0].lstrip("+-").replace(",", "")
    try:
        return float(number) == 0
    except ValueError:  # a size's text ("+36 KB") always starts with its number; anything else is a change
        return False


def percent_text(percent: Number) -> str:
    """A percentage with 2 significant digits below 1 ("0.0012%"), 1 decimal below 10, whole above ("" when
    missing): a bar's text that says what a nearly invisible bar holds."""
    if percent is None or pd.isna(percent):
        return ""
    value = float(percent)
    if value == 0:
        return "0%"
    if abs(value) < 1:
        return f"{value:.{significant_decimals(value, digits=2)}f}%"
    return f"{value:.1f}%" if abs(value) < 10 else f"{value:,.0f}%"


POINTS = "pts"  # percentage points: the change of a rate or share
CHANGE_RULE = (
    "Changes against the period before: a rate or share in percentage points (pts; 1% to 3% is +2 pts), "
    "a quantity in its own unit (RU, RU/s, KB/MB/GB)."
)


def change_text(change: Number, unit: str, *, decimals: int = 1) -> str | None:
    """A change between two periods with its unit (module docstring), signed; None when missing. `unit`:
    "%" (a percentage: its change in points), "share" (a fraction of 1: x 100, in points), "GB" (a size: in
    the unit that fits), else a quantity's own unit ("RU", "RU/s")."""
    if change is None or pd.isna(change):
        return None
    value = float(change)
    if unit == "GB":
        return ("+" if value >= 0 else "-") + size_text(abs(value))
    if unit in ("%", "share"):
        value, unit = (value * 100 if unit == "share" else value), POINTS
    text = f"{value:+,.{decimals}f}"
    return f"{'+' + text[1:] if float(text.replace(',', '')) == 0 else text} {unit}"  # a tiny fall is not "-0"


def rates_in_percent(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """`frame` with `columns` (fractions of 1, and their changes) x 100: a table's 429 rate in % and its
    change in points, as the cards read (the CSV keeps the fractions)."""
    present = [name for name in columns if name in frame.columns]
    return frame.assign(**{name: frame[name].astype(float) * 100 for name in present})


def gb_in_fitting_unit(frame: pd.DataFrame, columns: list[str]) -> tuple[pd.DataFrame, str]:
    """`frame` with `columns` (sizes in GB) in the one unit that fits the largest of them (KB, MB or GB), and
    that unit's name: a table of 36 KB partitions reads 36, not 0.000 (the CSV keeps GB)."""
    present = [name for name in columns if name in frame.columns]
    kb = {name: frame[name].astype(float) * GB / KB for name in present}
    largest = pd.concat([values.abs() for values in kb.values()]) if kb else pd.Series(dtype=float)
    unit = size_unit(largest)
    return frame.assign(**{name: in_unit(values, unit) for name, values in kb.items()}), unit.name
