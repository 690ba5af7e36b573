"""Formatting numbers (and text shown literally) for the book's tables, pages and prose, and gluing them into it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from inkground_lib.analysis.ties import SHOWN_DECIMALS
from inkground_lib.core.paper import paper_numbers


def count_or_rounded(v, decimals: int):
    """Integral values as int (a count reads 537, not 537.000), others rounded to ``decimals``."""
    v = float(v)
    if math.isnan(v):
        return v
    return int(v) if v.is_integer() else round(v, decimals)


def python_scalar(v):
    """numpy scalars to Python numbers (numpy 2 would glue ``np.float64(2.0)`` as text)."""
    if isinstance(v, np.generic):
        return v.item()
    return v


def glue_all(values: dict, prefix: str = "") -> None:
    """Glue every value (plain Python numbers / strings) for ``{glue:text}`` in the notebook's prose."""
    from myst_nb import glue  # (the notebook machinery: only where a notebook glues)

    for k, v in values.items():
        glue(prefix + k, python_scalar(v), display=False)


def paper_glue(ids: list[str], prefix: str = "paper_") -> None:
    """Glue the paper's reported values (by id in reported.csv) so prose cites them from the data file."""
    p = paper_numbers()
    glue_all({k: float(p.loc[k, "value"]) for k in ids}, prefix=prefix)


EM_DASH = "\u2014"


def is_missing(v) -> bool:
    """None, NaN (Python or numpy) or pandas NA."""
    if v is None:
        return True
    r = pd.isna(v)
    return bool(r) if isinstance(r, (bool, np.bool_)) else False


def missing(reason: str) -> str:
    """What a table shows instead of a missing number: an em dash with the reason beside it
    (``missing("no valid output")`` -> "— no valid output"), never a raw NaN or None."""
    return f"{EM_DASH} {reason}"


def finite(v) -> float | None:
    """``v`` as a finite float; None for None, NaN, an infinity or anything that is not a number.

    >>> finite("0.5"), finite(None), finite(float("inf")), finite("n/a")
    (0.5, None, None, None)
    """
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def fmt(v, digits: int = SHOWN_DECIMALS, reason: str = "not computed") -> str:
    """A number at ``digits`` decimals, or :func:`missing` with ``reason`` when it is not a finite number
    (:func:`finite`). Unlike :func:`fixed`, the sign of a value that rounds to zero is kept ("-0.000"), as the
    front page has always printed it.

    >>> fmt(0.12345), fmt(2, 0), fmt(None, reason="no run")
    ('0.123', '2', '— no run')
    """
    f = finite(v)
    return f"{f:.{digits}f}" if f is not None else missing(reason)


def pct(v, reason: str = "not computed") -> str:
    """A share as a whole percentage, or :func:`missing` with ``reason``.

    >>> pct(0.0624), pct(float("nan"))
    ('6%', '— not computed')
    """
    f = finite(v)
    return f"{100 * f:.0f}%" if f is not None else missing(reason)


def count(v, reason: str = "not counted") -> str:
    """A count with thousands separators, or :func:`missing` with ``reason``.

    >>> count(1234.0), count("x")
    ('1,234', '— not counted')
    """
    f = finite(v)
    return f"{int(f):,}" if f is not None else missing(reason)


def fixed(x: float, d: int) -> str:
    """``x`` at ``d`` decimals, without the sign of a negative zero ("0.000", not "-0.000")."""
    s = f"{x:.{d}f}"
    return s.lstrip("-") if float(s) == 0 else s


def interval_decimals(lo: float, hi: float, *, at_least: int = 3, at_most: int = 6) -> int:
    """Decimals at which the interval [lo, hi] prints as two different numbers: the fewest, from ``at_least``
    up to ``at_most`` (an interval narrower than 10^-at_most, or of zero width, prints at ``at_least``)."""
    if hi > lo:
        for d in range(at_least, at_most + 1):
            if fixed(lo, d) != fixed(hi, d):
                return d
    return at_least


def format_interval(v, lo, hi, *, missing_reason: str = "not measured", at_least: int = 3) -> str:
    """A point estimate with its interval, all three at the same precision (:func:`interval_decimals`), so a
    point estimate inside its interval never prints outside it: 0.018 [0.017, 0.019], not 0.018 [0.02, 0.02].
    A missing estimate prints as :func:`missing` (``missing_reason``); a missing interval as the value alone."""
    if is_missing(v):
        return missing(missing_reason)
    v = float(v)
    if is_missing(lo) or is_missing(hi):
        return fixed(v, at_least)
    lo, hi = float(lo), float(hi)
    d = interval_decimals(lo, hi, at_least=at_least)
    return f"{fixed(v, d)} [{fixed(lo, d)}, {fixed(hi, d)}]"


def value_with_interval(row, key: str, decimals: int = 3, missing_reason: str = "not measured") -> str:
    """``row[key]`` with its ``_lo`` / ``_hi`` bounds (:func:`format_interval`)."""
    return format_interval(row.get(key), row.get(f"{key}_lo"), row.get(f"{key}_hi"),
                           missing_reason=missing_reason, at_least=decimals)


def cell(v, decimals: int, missing_reason: str):
    """A table cell: :func:`count_or_rounded`, or :func:`missing` (``missing_reason``) for a missing value."""
    if is_missing(v):
        return missing(missing_reason)
    if isinstance(v, str):
        return v
    return count_or_rounded(v, decimals)


def join_names(names) -> str:
    """Names as prose: "a", "a and b", "a, b and c"; "none" for none.

    >>> join_names([]), join_names(["a"]), join_names(["a", "b", "c"])
    ('none', 'a', 'a, b and c')
    """
    names = [str(n) for n in names]
    if not names:
        return "none"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
