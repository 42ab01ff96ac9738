"""Numbers for people: enough decimals that a non-zero value never reads 0.000.

Metrics live in [0, 1] and differences between models are often a few
thousandths (recall on DNLP is ~0.002–0.01): a fixed three decimals prints
"by 0.000 [0.000, 0.001]".  `decimals_for` picks one number of decimals for
values shown together (a difference and its interval), so the smallest
non-zero one keeps `significant` digits; `format_number` writes one value.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

MIN_DECIMALS = 3
MAX_DECIMALS = 10


def decimals_for(values: Iterable[float], significant: int = 2, minimum: int = MIN_DECIMALS) -> int:
    """Decimals that show every finite non-zero value of `values` with at least `significant` significant digits
    (at least `minimum`, at most MAX_DECIMALS).

    >>> decimals_for([0.0031, 0.0012, 0.0050])
    4
    >>> decimals_for([0.035, 0.030, 0.040])
    3
    >>> decimals_for([0.0, 0.12])
    3
    """
    decimals = minimum
    for value in values:
        if value is None or not math.isfinite(value) or value == 0:
            continue
        decimals = max(decimals, significant - 1 - math.floor(math.log10(abs(value))))
    return min(decimals, MAX_DECIMALS)


def decimals_for_interval(value: float, low: float, high: float, significant: int = 2) -> int:
    """`decimals_for` of a value and its interval, with more decimals (up to 3 more) while the two bounds of a
    non-empty interval would read the same ("0.014 [0.014, 0.014]" becomes "0.0141 [0.0137, 0.0144]"); bounds
    equal to 3 more decimals are rounding noise and keep `decimals_for`'s.

    >>> decimals_for_interval(0.01412, 0.01371, 0.01445)
    4
    """
    places = decimals_for([value, low, high], significant)
    if not (math.isfinite(low) and math.isfinite(high)) or low == high:
        return places
    for extra in range(4):
        if f"{low:.{places + extra}f}" != f"{high:.{places + extra}f}":
            return min(places + extra, MAX_DECIMALS)
    return places  # equal to rounding noise: more digits would show only the noise


def format_number(value: float | None, decimals: int | None = None, significant: int = 2) -> str:
    """`value` with `decimals` (default: `decimals_for` of the value alone); "n/a" for None/NaN.

    >>> format_number(0.00031)
    '0.00031'
    >>> format_number(0.4408)
    '0.441'
    >>> format_number(float("nan"))
    'n/a'
    """
    if value is None or not math.isfinite(value):
        return "n/a"
    digits = decimals_for([value], significant) if decimals is None else decimals
    return f"{value:.{digits}f}"


def format_interval(low: float, high: float, decimals: int, sep: str = ", ") -> str:
    """``[low, high]`` with `decimals`; `sep` "–" gives a stakeholder's range ``low–high`` (``low to high`` when a
    bound is negative, so no minus sign sits beside the dash)."""
    if sep != ", " and (low < 0 or high < 0):
        sep = " to "
    text = f"{format_number(low, decimals)}{sep}{format_number(high, decimals)}"
    return f"[{text}]" if sep == ", " else text


def format_level(level: float) -> str:
    """A confidence level as a percentage, one decimal when it needs one: 95%, 98.3%, 99.8%.

    >>> format_level(0.95), format_level(1 - 0.05 / 3)
    ('95%', '98.3%')
    """
    if level is None or not math.isfinite(level):
        return "n/a"
    text = f"{100.0 * level:.1f}"
    return f"{text[:-2] if text.endswith('.0') else text}%"
