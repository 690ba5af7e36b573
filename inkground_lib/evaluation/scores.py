"""The per-system summary of a per-word scores table (:mod:`inkground_lib.core.scores_table`) with
page-bootstrap intervals."""

from __future__ import annotations

import functools
import operator
import warnings
from typing import Sequence

import numpy as np
import pandas as pd

from inkground_lib.core.bootstrap import page_bootstrap_counts
from inkground_lib.core.defaults import N_BOOT
from inkground_lib.core.metric_table import METRICS, metric_names, summary_statistics
from inkground_lib.core.scores_table import check_scores

SUMMARY_METRICS: tuple[str, ...] = summary_statistics()
"""Summary statistics (:func:`~inkground_lib.core.metric_table.summary_statistics` of the metric table as
loaded); each has ``<name>_lo`` and ``<name>_hi`` bootstrap bounds in the summary."""


def _page_sums(g: pd.DataFrame, page_codes: np.ndarray, n_pages: int) -> dict[str, np.ndarray]:
    """Per-page numerators and denominators of every summary statistic: name -> (n_pages, 2)."""
    def sums(values: np.ndarray, weight: np.ndarray) -> np.ndarray:
        ok = weight & ~np.isnan(values)
        num = np.bincount(page_codes, weights=np.where(ok, values, 0.0), minlength=n_pages)
        den = np.bincount(page_codes, weights=ok.astype(float), minlength=n_pages)
        return np.column_stack([num, den])

    valid = g["valid"].to_numpy(dtype=bool)
    every = np.ones(len(g), dtype=bool)
    out = {"valid_rate": sums(valid.astype(float), every)}
    for m in metric_names(aggregate="mean"):  # means over the words with a value (and over valid outputs)
        v = g[METRICS[m].scores_column].to_numpy(dtype=float, na_value=np.nan)
        out[m] = sums(v, every)
        if METRICS[m].valid_mean:
            out[f"{m}_valid"] = sums(v, valid)
    counts = {c: g[c].to_numpy(dtype=float, na_value=np.nan) for c in ("S", "D", "I", "N")}
    has = ~np.isnan(counts["N"])
    n_sum = np.bincount(page_codes, weights=np.where(has, counts["N"], 0.0), minlength=n_pages)
    for m in metric_names(aggregate="corpus"):  # (N - the metric's counts) / N, summed over the words
        off = functools.reduce(operator.add, (counts[c] for c in METRICS[m].counts))
        out[m] = np.column_stack([n_sum - np.bincount(page_codes, weights=np.where(has, off, 0.0), minlength=n_pages),
                                  n_sum])
    return out


def _ratio(num, den):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def summarize(scores: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = 0, ci: float = 0.95,
              by: str | Sequence[str] = "system") -> pd.DataFrame:
    """One row per system (or per ``by`` group): means, rates and page-cluster bootstrap CIs.

    Statistics (:func:`~inkground_lib.core.metric_table.summary_statistics`, from the metric table; for the
    table as shipped):

    * ``valid_rate``: share of the group's words whose prediction was valid.
    * ``dtw``, ``chamfer``, ``style``: means over **all** words (invalid ones already scored upstream by
      the invalid-output rule). NaN values (a metric not computed for a word, e.g. Style on training
      words) are left out; a statistic with no values at all is NaN.
    * ``dtw_valid``, ``chamfer_valid``, ``style_valid``: the same means over valid words only.
    * ``ar``, ``cr``: corpus rates from S, D, I, N summed over the words that have them:
      AR = (N - S - D - I) / N, CR = (N - S - D) / N.

    Each statistic X gets ``X_lo`` / ``X_hi``: a percentile bootstrap interval at level ``ci``. The
    bootstrap resamples **pages** (clusters keyed by dataset and page_id) with replacement, ``n_boot``
    times, and recomputes every statistic as a ratio of page sums (vectorised: replicate counts @ page
    sums). Every group uses the same generator seed with its pages in sorted order, so groups scored on
    the same pages are resampled identically (a paired bootstrap). Replicates where a statistic has no
    values are ignored; ``n_boot=0`` gives NaN bounds.

    Also: ``n_words``, ``n_pages``, ``n_valid``, ``n_style`` (words with a Style value) and ``n_ocr``
    (words with S, D, I, N).
    """
    if not 0 < ci < 1:
        raise ValueError(f"ci must be in (0, 1), got {ci!r}")
    if n_boot < 0:
        raise ValueError(f"n_boot must be >= 0, got {n_boot!r}")
    by = [by] if isinstance(by, str) else list(by)
    check_scores(scores)
    for c in by:
        if c not in scores.columns:
            raise ValueError(f"summarize: no column {c!r} to group by")
    q = np.array([(1 - ci) / 2, 1 - (1 - ci) / 2])
    statistics = summary_statistics()
    rows = []
    for key, g in scores.groupby(by, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        page_key = g["dataset"].astype(str) + "\x1f" + g["page_id"].astype(str)
        codes, uniq = pd.factorize(page_key, sort=True)
        n_pages = len(uniq)
        sums = _page_sums(g, codes, n_pages)
        row = dict(zip(by, key))
        row.update(n_words=len(g), n_pages=n_pages, n_valid=int(g["valid"].sum()),
                   n_style=int(g["style"].notna().sum()), n_ocr=int(g["N"].notna().sum()))
        W = page_bootstrap_counts(n_pages, n_boot, seed).astype(float) if n_boot else None
        for m in statistics:
            num, den = sums[m][:, 0], sums[m][:, 1]
            row[m] = float(_ratio(num.sum(), den.sum()))
            if W is None:
                lo = hi = np.nan
            else:
                reps = _ratio(W @ num, W @ den)
                if np.isnan(reps).all():
                    lo = hi = np.nan
                else:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", RuntimeWarning)
                        lo, hi = np.nanquantile(reps, q)
            row[f"{m}_lo"] = float(lo)
            row[f"{m}_hi"] = float(hi)
        rows.append(row)
    cols = by + ["n_words", "n_pages", "n_valid", "n_style", "n_ocr"]
    for m in statistics:
        cols += [m, f"{m}_lo", f"{m}_hi"]
    return pd.DataFrame(rows, columns=cols)
