"""How far an actual value is from the expected one, written for a person.

Every report that shows a distance (the terminal's diff table, report.html,
the results page) writes it with `distance_text`, so a NaN against a number
reads ``NaN vs 0.5`` (not ``-1`` or ``max 0 ULP``), a value whose sign alone
is wrong reads ``sign differs`` (not 2130706432, the ULP distance between -1
and 1 in float32), an infinity reads ``inf vs 3.4e38``, and a large count
reads ``2.1e9 ULP``.  report.json keeps the exact integer (or null where
there is none).  DESIGN.md "Comparison, verdicts and reports".
"""

from __future__ import annotations

import math

#: ULP counts below this are written in full; from here on with 2 significant digits.
EXACT_BELOW = 100_000


def _compact(text: str) -> str:
    """``2.1e+09`` -> ``2.1e9``, ``1e-05`` -> ``1e-5``: the exponent without ``+`` or leading zeros."""
    mantissa, sep, exponent = text.partition("e")
    if not sep:
        return text
    sign = "-" if exponent.startswith("-") else ""
    return f"{mantissa}e{sign}{exponent.lstrip('+-').lstrip('0') or '0'}"


def short_float(x: float) -> str:
    """``NaN``, ``inf``, ``-inf``, ``-0``, ``0.5``, ``3.4e38``: a value
    beside another in a distance, 3 significant digits (the exact values are
    in the expected and actual columns)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    return _compact(format(x, ".3g"))


def ulp_count(ulp: int) -> str:
    """``3``, ``99999``, ``1.2e7``, ``2.1e9``: a ULP count, exact below
    `EXACT_BELOW`, else rounded to 2 significant digits."""
    return str(ulp) if ulp < EXACT_BELOW else _compact(format(ulp, ".2g"))


def distance_text(expected: float, actual: float, ulp: int | None) -> str:
    """The distance from ``expected`` to ``actual`` (the ULP distance
    ``ulp`` between them, None where they are not comparable), in words:

    * ``NaN vs 0.5`` when either value is NaN (expected first): no ULP
      distance means anything there;
    * ``sign differs`` when the values differ in sign alone (+0 and -0,
      -1 and 1, inf and -inf);
    * ``inf vs 3.4e38`` when one value is infinite;
    * ``3 ULP``, ``2.1e9 ULP`` otherwise (`ulp_count`), and
      ``not comparable`` where ``ulp`` is None for no reason the values show.
    """
    if math.isnan(expected) or math.isnan(actual):
        return f"{short_float(expected)} vs {short_float(actual)}"
    if abs(expected) == abs(actual) and math.copysign(1.0, expected) != math.copysign(1.0, actual):
        return "sign differs"
    if math.isinf(expected) or math.isinf(actual):
        return f"{short_float(expected)} vs {short_float(actual)}"
    if ulp is None:
        return "not comparable"
    return f"{ulp_count(ulp)} ULP"
