"""Ties that stay ties: every order the book states (ranks, Pareto fronts, Kendall's tau, a section's leader, a
ranking the choice of reference reverses) is decided on the values *as the book shows them*, rounded to
:data:`SHOWN_DECIMALS`. Two systems whose values print the same ("0.000" and "0.000") share a rank, both stay on a
Pareto front, and a rank correlation sees them tied; a difference of floating-point noise (2e-17 against 0, or
6e-7 between two identical renders) never orders them.

One constant, one function: the tables' default precision (:mod:`inkground_lib.report.format`) is this constant,
so what is shown and what is ranked cannot drift apart."""

from __future__ import annotations

import numpy as np
import pandas as pd

SHOWN_DECIMALS = 3
"""Decimals at which the book shows a metric's value (DTW and Chamfer in word heights; AR, CR and Style as
shares); values equal at this precision are ties everywhere an order is computed."""

TIES_RULE = (f"Values are compared as shown, rounded to {SHOWN_DECIMALS} decimals: systems whose values are equal "
             f"at that precision are tied (they share the better rank, both stay on a Pareto front, and Kendall's "
             f"tau counts them as tied).")
"""How ties are treated, in words (the book's notes under the rank tables and section 04's prose)."""


def shown(values, decimals: int = SHOWN_DECIMALS):
    """``values`` rounded to the precision the book shows (NaN stays NaN; -0.0 becomes 0.0); a Series stays a
    Series with its index, anything else becomes a float array (a scalar: a float).

    >>> shown(pd.Series([2.16e-17, 0.0, 0.0004999, 0.1234])).tolist()
    [0.0, 0.0, 0.0, 0.123]
    >>> shown(-1e-9)
    0.0
    """
    if isinstance(values, pd.Series):
        return values.astype(float).round(decimals) + 0.0
    arr = np.round(np.asarray(values, dtype=float), decimals) + 0.0
    return float(arr) if arr.ndim == 0 else arr


def tied_ranks(values: pd.Series, lower_is_better: bool) -> pd.Series:
    """Ranks (1 = best) of ``values`` as shown (:func:`shown`): equal shown values share the lower rank
    (``method="min"``); NaN has no rank.

    >>> tied_ranks(pd.Series([2.16e-17, 0.0, 0.2], index=["skeleton", "reference", "font"]), True).tolist()
    [1.0, 1.0, 3.0]
    """
    return shown(values).rank(ascending=lower_is_better, method="min", na_option="keep")


def leaders(values: pd.Series, lower_is_better: bool) -> list:
    """The index labels of every value tied for best, as shown (:func:`shown`), in the Series' order; empty
    when every value is NaN.

    >>> leaders(pd.Series([0.5004, 0.5001, 0.4], index=["a", "b", "c"]), False)
    ['a', 'b']
    """
    r = tied_ranks(values, lower_is_better)
    return [k for k in r.index if r[k] == 1]
