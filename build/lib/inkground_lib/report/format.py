"""Formatting numbers and gluing them into the book's prose."""

from __future__ import annotations

import math

import numpy as np

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
    from myst_nb import glue

    for k, v in values.items():
        glue(prefix + k, python_scalar(v), display=False)


def paper_glue(ids: list[str], prefix: str = "paper_") -> None:
    """Glue the paper's reported values (by id in reported.csv) so prose cites them from the data file."""
    p = paper_numbers()
    glue_all({k: float(p.loc[k, "value"]) for k in ids}, prefix=prefix)


def value_with_interval(row, key: str, decimals: int = 3) -> str:
    v = row.get(key, float("nan"))
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    lo, hi = row.get(f"{key}_lo", float("nan")), row.get(f"{key}_hi", float("nan"))
    if lo is None or (isinstance(lo, float) and math.isnan(lo)):
        return f"{v:.{decimals}f}"
    return f"{v:.{decimals}f} [{lo:.2f}, {hi:.2f}]"
