"""Section 02's comparison of derenderers: each one's distance to the writers' true pen paths, on every set of
pages that has them (the synthetic candidates, the recorded pages), with page-bootstrap intervals.

Every derenderer derenders every word as the pseudo-label stage does
(:func:`~inkground_lib.pseudo.derender_stage.derender_dataset`: the word's box + 10%, its text; cached per page
in ``<run_dir>/derenderers/<set>/derender-<name>.jsonl``, so a rerun only reads), and each word's result is
compared with its true ink by :func:`~inkground_lib.pseudo.truth.truth_metrics` (DTW and Chamfer in units of
the true word height; stroke order and direction against the writer's,
:func:`~inkground_lib.components.metrics.order.stroke_order_check`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from inkground_lib.components.derenderers.factory import make_derenderer
from inkground_lib.core.bootstrap import page_bootstrap_counts, weighted_medians
from inkground_lib.core.dataset import Dataset
from inkground_lib.core.defaults import N_BOOT
from inkground_lib.core.run_files import DERENDER_SCHEMA, derender_jsonl, derenderers_dir
from inkground_lib.pseudo.derender_stage import derender_dataset
from inkground_lib.pseudo.keys import derenderer_config, iter_records
from inkground_lib.pseudo.truth import truth_metrics

COMPARISON_STATS = ("dtw_median", "chamfer_median", "order_differs", "direction_differs")
"""The columns of :func:`derenderer_comparison` that carry ``_lo`` / ``_hi`` bootstrap bounds."""


def truth_summary(words: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = 0, ci: float = 0.95) -> dict:
    """One derenderer on one set, from its :func:`~inkground_lib.pseudo.truth.truth_metrics` rows: words,
    pages, the median DTW and Chamfer over words, the share of words whose stroke order (direction) differs
    from the writer's (over the words where it is defined), each with a percentile page-bootstrap interval at
    level ``ci`` (pages drawn with replacement, ``n_boot`` times, seed ``seed``: the same draws for every
    derenderer on the same pages, a paired bootstrap).

    >>> w = pd.DataFrame({"page": ["a", "a", "b"], "dtw": [0.1, 0.3, 0.2], "chamfer": [0.01, 0.03, 0.02],
    ...                   "order_differs": [0.0, 1.0, np.nan], "direction_differs": [1.0, 1.0, 0.0]})
    >>> s = truth_summary(w, n_boot=0)
    >>> s["words"], s["pages"], s["dtw_median"], s["order_differs"], round(s["direction_differs"], 3)
    (3, 2, 0.2, 0.5, 0.667)
    """
    codes, uniq = pd.factorize(words["page"].astype(str), sort=True)
    out: dict = {"words": int(len(words)), "pages": int(len(uniq))}
    q = np.array([(1 - ci) / 2, 1 - (1 - ci) / 2])
    counts = page_bootstrap_counts(len(uniq), n_boot, seed).astype(float) if n_boot and len(uniq) else None
    for col, stat in (("dtw", "dtw_median"), ("chamfer", "chamfer_median")):
        v = words[col].to_numpy(dtype=float)
        out[stat] = float(np.median(v[~np.isnan(v)])) if (~np.isnan(v)).any() else np.nan
        reps = weighted_medians(v, counts[:, codes]) if counts is not None else None
        out[f"{stat}_lo"], out[f"{stat}_hi"] = _bounds(reps, q)
    for col in ("order_differs", "direction_differs"):
        v = words[col].to_numpy(dtype=float)
        ok = ~np.isnan(v)
        num = np.bincount(codes[ok], weights=v[ok], minlength=len(uniq))
        den = np.bincount(codes[ok], minlength=len(uniq)).astype(float)
        out[col] = float(num.sum() / den.sum()) if den.sum() else np.nan
        out[f"{col}_n"] = int(den.sum())
        reps = None
        if counts is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                reps = (counts @ num) / (counts @ den)
        out[f"{col}_lo"], out[f"{col}_hi"] = _bounds(reps, q)
    return out


def _bounds(reps, q) -> tuple[float, float]:
    if reps is None or np.isnan(reps).all():
        return np.nan, np.nan
    lo, hi = np.nanquantile(reps, q)
    return float(lo), float(hi)


def _seconds(set_dir: Path, der) -> float:
    """Derendering time of the pages in a comparison cache (seconds, summed over its records)."""
    return float(sum(r.get("seconds", 0.0) for r in iter_records(derender_jsonl(set_dir, derenderer_config(der)["name"]),
                                                                  DERENDER_SCHEMA)))


def derenderer_comparison(sets: Mapping[str, Dataset], derenderers: Sequence[str], run_dir: str | os.PathLike, *,
                          n_boot: int = N_BOOT, seed: int = 0, workers: int | None = 1,
                          progress: bool = False) -> pd.DataFrame:
    """One row per (set, derenderer): ``set``, ``derenderer`` (its spec, e.g. "skeleton", "tracer"), the
    :func:`truth_summary` columns, and ``seconds_per_word`` (the derendering time recorded in the cache, over
    the set's words). Sets without true inks are left out; an unknown derenderer is the factory's error.
    Caches and the per-word tables (``words-<derenderer>.csv``) go to
    ``<run_dir>/derenderers/<set>/``."""
    rows = []
    for set_name, ds in sets.items():
        set_dir = derenderers_dir(run_dir) / set_name
        set_dir.mkdir(parents=True, exist_ok=True)
        for spec in derenderers:
            der = make_derenderer(spec)
            inks = derender_dataset(ds, der, set_dir, progress=progress, workers=workers)
            words = truth_metrics(ds, inks)
            if words.empty:
                break
            words.to_csv(set_dir / f"words-{derenderer_config(der)['name']}.csv", index=False)
            row = {"set": set_name, "derenderer": spec, **truth_summary(words, n_boot=n_boot, seed=seed)}
            row["seconds_per_word"] = _seconds(set_dir, der) / max(1, ds.n_words)
            rows.append(row)
    return pd.DataFrame(rows)
