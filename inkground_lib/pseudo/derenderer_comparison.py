"""Section 02's comparison of derenderers: each one's distance to the writers' true pen paths, on every set of
pages that has them (the synthetic candidates, the recorded pages), with page-bootstrap intervals.

Every derenderer derenders every word as the pseudo-label stage does
(:func:`~inkground_lib.pseudo.derender_stage.derender_dataset`: the word's box + 10%, its text; cached per page
in ``<run_dir>/derenderers/<set>/derender-<name>.jsonl``, so a rerun only reads; every answer on a word crop is
kept by content in the run's trace store ``<run_dir>/traces.jsonl``, so the tracer reads the skeleton's traces
and the skeleton the ones the tracer made for the pseudo-labels), and each word's result is
compared with its true ink by :func:`~inkground_lib.pseudo.truth.truth_metrics` (DTW and Chamfer in units of
the true word height; stroke order and direction against the writer's,
:func:`~inkground_lib.components.metrics.order.stroke_order_check`).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from inkground_lib.components.derenderers.factory import make_derenderer
from inkground_lib.core.bootstrap import page_bootstrap_counts, weighted_medians
from inkground_lib.core.dataset import Dataset, load_dataset
from inkground_lib.core.defaults import N_BOOT
from inkground_lib.core.parallel import LazyPool
from inkground_lib.core.run_files import derenderers_dir, safe_name, traces_jsonl, truth_jsonl
from inkground_lib.pseudo.crop_readings import read_crops
from inkground_lib.pseudo.derender_stage import derender_dataset, recorded_seconds, text_mode
from inkground_lib.pseudo.keys import derenderer_config
from inkground_lib.pseudo.truth import truth_metrics

COMPARISON_STATS = ("dtw_median", "chamfer_median", "order_differs", "direction_differs")
"""The columns of :func:`derenderer_comparison` that carry ``_lo`` / ``_hi`` bootstrap bounds."""


def truth_summary(words: pd.DataFrame, *, n_boot: int = N_BOOT, seed: int = 0, ci: float = 0.95,
                  replicates: dict | None = None) -> dict:
    """One derenderer on one set, from its :func:`~inkground_lib.pseudo.truth.truth_metrics` rows: words,
    pages, the median DTW and Chamfer over words, the share of words whose stroke order (direction) differs
    from the writer's (over the words where it is defined, ``<share>_n`` of them), each with a percentile
    page-bootstrap interval at level ``ci`` (pages drawn with replacement, ``n_boot`` times, seed ``seed``:
    the same draws for every derenderer on the same pages, a paired bootstrap). ``replicates``, when given, is
    filled with each statistic's bootstrap replicates.

    >>> w = pd.DataFrame({"page": ["a", "a", "b"], "dtw": [0.1, 0.3, 0.2], "chamfer": [0.01, 0.03, 0.02],
    ...                   "order_differs": [0.0, 1.0, np.nan], "direction_differs": [1.0, 1.0, 0.0]})
    >>> s = truth_summary(w, n_boot=0)
    >>> s["words"], s["pages"], s["dtw_median"], s["order_differs"], round(s["direction_differs"], 3)
    (3, 2, 0.2, 0.5, 0.667)
    """
    codes, uniq = pd.factorize(words["page"].astype(str), sort=True)
    out: dict = {"words": int(len(words)), "pages": int(len(uniq))}
    q = _levels(ci)
    counts = page_bootstrap_counts(len(uniq), n_boot, seed).astype(float) if n_boot and len(uniq) else None
    reps_of: dict = {} if replicates is None else replicates
    for col, stat in (("dtw", "dtw_median"), ("chamfer", "chamfer_median")):
        v = words[col].to_numpy(dtype=float)
        out[stat] = float(np.median(v[~np.isnan(v)])) if (~np.isnan(v)).any() else np.nan
        reps_of[stat] = weighted_medians(v, counts[:, codes]) if counts is not None else None
        out[f"{stat}_lo"], out[f"{stat}_hi"] = _bounds(reps_of[stat], q)
    for col in ("order_differs", "direction_differs"):
        v = words[col].to_numpy(dtype=float)
        ok = ~np.isnan(v)
        num = np.bincount(codes[ok], weights=v[ok], minlength=len(uniq))
        den = np.bincount(codes[ok], minlength=len(uniq)).astype(float)
        out[col] = float(num.sum() / den.sum()) if den.sum() else np.nan
        out[f"{col}_n"] = int(den.sum())
        reps_of[col] = None
        if counts is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                reps_of[col] = (counts @ num) / (counts @ den)
        out[f"{col}_lo"], out[f"{col}_hi"] = _bounds(reps_of[col], q)
    return out


def _levels(ci: float) -> np.ndarray:
    if not 0 < ci < 1:
        raise ValueError(f"ci must be in (0, 1), got {ci!r}")
    return np.array([(1 - ci) / 2, 1 - (1 - ci) / 2])


def _bounds(reps, q) -> tuple[float, float]:
    """Percentile bounds of bootstrap replicates; NaN replicates (no value in that draw) are left out, and an
    infinite one (a ratio to a baseline of 0 in that draw) stays infinite."""
    if reps is None or np.isnan(reps).all():
        return np.nan, np.nan
    with warnings.catch_warnings():  # inf - inf while interpolating between two infinite replicates
        warnings.simplefilter("ignore", RuntimeWarning)
        lo, hi = np.nanquantile(reps, q)
    return float(lo), float(hi)


def derenderer_comparison(sets: Mapping[str, Dataset], derenderers: Sequence[str], run_dir: str | os.PathLike, *,
                          n_boot: int = N_BOOT, seed: int = 0, ci: float = 0.95, workers: int | None = 1,
                          cache_dirs: Mapping[str, str | os.PathLike] | None = None,
                          progress: bool = False, ocr="rapidocr") -> pd.DataFrame:
    """One row per (set, derenderer): ``set``, ``derenderer`` (its spec, e.g. "skeleton", "tracer"), the
    :func:`truth_summary` columns, ``seconds_per_word`` (the derendering time recorded in the cache, over the
    set's words), and for every derenderer after the first (the baseline) its ratios to the baseline on the same
    words, ``<stat>_ratio`` with ``_lo`` / ``_hi`` from the paired replicates (the same pages drawn for both).
    Sets without true inks are left out; an unknown derenderer is the factory's error. Caches go to
    ``cache_dirs[set]`` where given (section 02 passes its own run folder for the candidates, whose pseudo-label
    log it already holds), else ``<run_dir>/derenderers/<set>/``; the per-word tables
    (``words-<derenderer>.csv``, by its spec) always to the latter. A derenderer in the "recognize" text mode
    (``tracer-recognize``) is given the ``ocr`` engine's readings of the crops
    (:func:`~inkground_lib.pseudo.crop_readings.read_crops`, logged in the set's cache folder: section 02's
    candidates reuse those its pseudo-label run read)."""
    with LazyPool(workers) as pool:  # one pool for every set and derenderer, started only when there is work
        return _comparison(sets, derenderers, run_dir, n_boot, seed, ci, pool, cache_dirs, progress, ocr)


def _comparison(sets, derenderers, run_dir, n_boot, seed, ci, pool, cache_dirs, progress, ocr) -> pd.DataFrame:
    q = _levels(ci)
    rows = []
    traces = traces_jsonl(run_dir)  # one trace store for every set and derenderer: nothing is traced twice
    for set_name, ds in sets.items():
        set_dir = derenderers_dir(run_dir) / set_name
        set_dir.mkdir(parents=True, exist_ok=True)
        cache = Path((cache_dirs or {}).get(set_name, set_dir))
        base_row, base_reps = None, None
        readings = None
        for spec in derenderers:
            der = make_derenderer(spec)
            inks, readings = derender_set(ds, der, cache, ocr=ocr, readings=readings, progress=progress,
                                          executor=pool, traces=traces)
            words = truth_metrics(ds, inks, executor=pool, log=truth_jsonl(cache))
            if words.empty:
                break
            label = safe_name(spec) if isinstance(spec, str) else derenderer_config(der)["name"]
            words.to_csv(set_dir / f"words-{label}.csv", index=False)
            reps: dict = {}
            row = {"set": set_name, "derenderer": spec,
                   **truth_summary(words, n_boot=n_boot, seed=seed, ci=ci, replicates=reps)}
            row["seconds_per_word"] = recorded_seconds(cache, der, ds) / max(1, ds.n_words)
            if base_row is None:
                base_row, base_reps = row, reps
            else:
                for stat in COMPARISON_STATS:
                    with np.errstate(invalid="ignore", divide="ignore"):
                        row[f"{stat}_ratio"] = row[stat] / base_row[stat] if base_row[stat] else np.nan
                        r = None if reps[stat] is None else reps[stat] / base_reps[stat]
                    row[f"{stat}_ratio_lo"], row[f"{stat}_ratio_hi"] = _bounds(r, q)
            rows.append(row)
    return pd.DataFrame(rows)


CANDIDATES_SET = "candidate pages"
"""The name section 02 gives its own candidate pages in the comparison."""

RECORDED_SET = "recorded pages"
"""The name section 02 gives the recorded pages in the comparison."""


def comparison_sets(candidates: Dataset, recorded: str | os.PathLike | None) -> dict[str, Dataset]:
    """Section 02's sets: its candidate pages and, unless ``recorded`` is None or "", the recorded pages at
    that dataset folder."""
    sets = {CANDIDATES_SET: candidates}
    if recorded:
        sets[RECORDED_SET] = load_dataset(recorded)
    return sets


def derender_set(ds: Dataset, der, cache: str | os.PathLike, *, ocr="rapidocr", readings=None,
                 progress: bool = False, workers: int | None = None, traces=None, executor=None):
    """``der`` (a derenderer or its spec) on every word of ``ds``, cached in ``cache``; a derenderer that reads
    the word itself (text mode "recognize") is given the ``ocr`` engine's readings of the crops
    (:func:`~inkground_lib.pseudo.crop_readings.read_crops`, logged in ``cache``; ``readings`` when already
    read). Pages are derendered and read in ``workers`` processes, or on ``executor`` when given. Returns
    (word id -> Ink, the readings or None)."""
    der = make_derenderer(der) if isinstance(der, str) else der
    if text_mode(der) == "recognize" and readings is None:
        readings = read_crops(ds, ocr, cache, progress=progress, workers=workers, executor=executor)
    inks = derender_dataset(ds, der, cache, progress=progress, workers=workers, executor=executor, traces=traces,
                            readings=readings if text_mode(der) == "recognize" else None)
    return inks, readings


def section_comparison(candidates: Dataset, recorded: str | os.PathLike | None, derenderers: Sequence[str],
                       run_dir: str | os.PathLike, *, n_boot: int = N_BOOT, seed: int = 0,
                       workers: int | None = None, progress: bool = False, ocr="rapidocr") -> pd.DataFrame:
    """:func:`derenderer_comparison` as section 02 runs it: on :func:`comparison_sets`, the candidates cached in
    the run folder itself (which already holds the pseudo-label log of the run's own derenderer)."""
    return derenderer_comparison(comparison_sets(candidates, recorded), derenderers, run_dir, n_boot=n_boot,
                                 seed=seed, workers=workers, cache_dirs={CANDIDATES_SET: run_dir},
                                 progress=progress, ocr=ocr)
