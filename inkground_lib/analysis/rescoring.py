"""Section 04's re-scoring of a section-03 run under another definition, from its cached predictions (never asking a
model again): another resampling spacing (:func:`rescore_geometries`), another OCR engine (:func:`reocr_counts`),
casefolding or not (:func:`casefold_counts`)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import pandas as pd

from inkground_lib.core.defaults import GRID
from inkground_lib.core.metric_table import metric_names
from inkground_lib.core.run_files import facts_json
from inkground_lib.core.run_loaders import EvalRun
from inkground_lib.evaluation.items import record_ink, reference_inks, target_dataset
from inkground_lib.evaluation.predict import predict_system


def _grid(run: EvalRun) -> int:
    return int(run.settings.get("grid", GRID))


def prediction_inks(run: EvalRun, system: str, ds, *, progress: bool = False) -> list:
    """The inks (page pixels; None where unusable) of ``system`` for every word of ``ds`` (dataset order),
    from the run's prediction cache, never asking a model again.

    Local and specialist systems go through :func:`inkground_lib.evaluation.predict.predict_system` (cache hits; a
    missing local prediction is recomputed locally). API and replay systems are read straight from the
    cache file (no client is built, so no request can be sent): the record of each word (the last one in
    the file when a word was asked more than once, e.g. after a prompt change) parsed by
    :func:`inkground_lib.evaluation.items.record_ink`; a word without a record is a missing output (None)."""
    kind = run.scores.loc[run.scores["system"] == system, "kind"]
    kind = str(kind.iloc[0]) if len(kind) and pd.notna(kind.iloc[0]) else "api"
    if kind in ("local", "specialist"):
        return predict_system(system, ds, run.run_dir, grid=_grid(run), progress=progress).inks
    from inkground_lib.evaluation.cache import cache_path, load_cache

    path = cache_path(Path(run.run_dir), system)
    by_word = {}
    for rec in load_cache(path, system=system).values():
        by_word[rec.get("word_id")] = rec
    out = []
    for p in ds.pages:
        for w in p.words:
            rec = by_word.get(w.id)
            out.append(None if rec is None else record_ink(rec, (p.width, p.height), _grid(run))[0])
    return out


def _dataset(run: EvalRun, dataset_dir):
    from inkground_lib.core.dataset import load_dataset

    d = dataset_dir or run.dataset_dir
    if d is None:
        raise FileNotFoundError(f"{run.run_dir}: {facts_json(run.run_dir, run.reference).name} names no dataset_dir; "
                                f"pass the dataset folder")
    ds = target_dataset(load_dataset(d, check_images=False))  # the words section 03 scored
    if ds.name != run.dataset:
        raise ValueError(f"{d}: dataset {ds.name!r} is not the one scored in {run.run_dir} ({run.dataset!r})")
    return ds


def rescore_geometry(run: EvalRun, spacing: float | None, dataset_dir=None, *, progress: bool = False) -> pd.DataFrame:
    """Per-word DTW and Chamfer of every system of ``run`` re-scored with resampling ``spacing`` (word
    heights) from the cached predictions; invalid outputs scored by the same rule (a dot at the page centre).
    Columns: system, word_id, valid, dtw, chamfer. (:func:`rescore_geometries` for several spacings.)"""
    return rescore_geometries(run, [spacing], dataset_dir, progress=progress)[spacing]


def rescore_geometries(run: EvalRun, spacings: Sequence[float | None], dataset_dir=None, *,
                       progress: bool = False) -> dict:
    """{spacing: :func:`rescore_geometry`'s table} for each of ``spacings``, the dataset and each system's
    predictions read once for all of them."""
    from inkground_lib.components.metrics.trajectory import (
        geometry_batch,
        geometry_columns,
        invalid_prediction,
    )

    ds = _dataset(run, dataset_dir)
    words = [(p, w) for p in ds.pages for w in p.words]
    refs = list(reference_inks(ds, run.reference))
    rows: dict = {sp: [] for sp in spacings}
    for system in run.scores["system"].unique():
        inks = prediction_inks(run, str(system), ds, progress=progress)
        preds = [ink if ink is not None else invalid_prediction((p.width, p.height)) for ink, (p, w) in zip(inks, words)]
        pairs = [(pr, rf, (p.width, p.height)) for pr, rf, (p, w) in zip(preds, refs, words)]
        for sp in spacings:
            geo = geometry_columns(geometry_batch(pairs, spacing=sp, progress=progress))
            rows[sp].append(pd.DataFrame({"system": str(system), "word_id": [w.id for p, w in words],
                                          "valid": [ink is not None for ink in inks],
                                          **{m: geo[m] for m in metric_names(computed="geometry")}}))
    return {sp: pd.concat(r, ignore_index=True) for sp, r in rows.items()}


def reocr_counts(run: EvalRun, engine, dataset_dir=None, *, casefold: bool = True, progress: bool = False) -> pd.DataFrame:
    """Edit counts of every word when the renders of the cached predictions are read by another OCR
    ``engine`` (an object with ``read(images)``). Columns: system, word_id, valid, S, D, I, N."""
    from inkground_lib.components.metrics.readability import edit_counts
    from inkground_lib.core.render import render_ink

    ds = _dataset(run, dataset_dir)
    words = [(p, w) for p in ds.pages for w in p.words]
    rows = []
    for system in run.scores["system"].unique():
        inks = prediction_inks(run, str(system), ds, progress=progress)
        texts = engine.read([render_ink(ink if ink is not None else []) for ink in inks])
        for (p, w), ink, t in zip(words, inks, texts):
            c = edit_counts(t, w.text, casefold=casefold)
            rows.append({"system": str(system), "word_id": w.id, "valid": ink is not None,
                         "S": c.S, "D": c.D, "I": c.I, "N": c.N})
    return pd.DataFrame(rows)


def casefold_counts(scores: pd.DataFrame, casefold: bool) -> pd.DataFrame:
    """The scores with S, D, I, N and the metrics computed from them (ar, cr) recomputed from the stored
    ``ocr_text`` with ``casefold`` (words without OCR keep NA)."""
    from inkground_lib.components.metrics.readability import edit_counts

    out = scores.copy()
    has = out["N"].notna()
    recs = [edit_counts("" if pd.isna(t) else str(t), str(ref), casefold=casefold)
            for t, ref in zip(out.loc[has, "ocr_text"], out.loc[has, "text"])]
    for c in ("S", "D", "I", "N", *metric_names(computed="ocr")):
        out.loc[has, c] = [getattr(r, c) for r in recs]
    return out
