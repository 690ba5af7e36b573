"""Scoring a system run with every metric: per-word DTW, Chamfer, AR / CR and Style (invalid outputs by the
design's rule), and the per-system summary of a run's scores."""

from __future__ import annotations

import numpy as np
import pandas as pd

from inkground_lib.components.metrics.readability import edit_counts
from inkground_lib.components.metrics.trajectory import geometry_batch, geometry_columns, invalid_prediction
from inkground_lib.components.style.metric import true_writer_probability
from inkground_lib.core.metric_table import METRICS, metric_names
from inkground_lib.core.scores_table import scores_frame
from inkground_lib.evaluation.items import reference_inks
from inkground_lib.evaluation.predict import SystemRun
from inkground_lib.evaluation.render_ocr import read_renders
from inkground_lib.evaluation.scores import summarize
from inkground_lib.evaluation.settings import EvalSettings
from inkground_lib.evaluation.style_stage import style_rows


def score_run(run: SystemRun, ds, settings: EvalSettings, ocr, style_model=None, progress: bool = True,
              memo: dict | None = None, executor=None, style_store=None) -> pd.DataFrame:
    """Per-word scores of one system run (see :data:`~inkground_lib.core.scores_table.SCORE_COLUMNS`). Invalid
    outputs are scored by the design's rule: a dot at the page centre for DTW / Chamfer, a blank render for AR,
    CR and Style. ``memo``: OCR texts and classifier rows already computed (see
    :func:`~inkground_lib.evaluation.render_ocr.read_renders`); ``executor``: the Style of the renders is
    computed there (:func:`~inkground_lib.evaluation.style_stage.style_rows`), the same rows; ``style_store``: the
    run's Style feature store (:mod:`~inkground_lib.evaluation.style_features`)."""
    words = [(p, w) for p in ds.pages for w in p.words]
    refs = list(reference_inks(ds, settings.reference))
    preds = [ink if ink is not None else invalid_prediction((p.width, p.height))
             for ink, (p, w) in zip(run.inks, words)]
    pairs = [(pr, rf, (p.width, p.height)) for pr, rf, (p, w) in zip(preds, refs, words)]
    geo = geometry_columns(geometry_batch(pairs, spacing=settings.spacing, progress=progress))
    blank = [ink if ink is not None else [] for ink in run.inks]
    if ocr is None:
        texts = [None] * len(words)
    else:  # the OCR of a render does not depend on the reference: read once per run and engine
        if ocr.name not in run.ocr_texts:
            run.ocr_texts[ocr.name] = read_renders(ocr, blank, memo)
        texts = run.ocr_texts[ocr.name]
    style_any = np.full(len(words), np.nan)
    if style_model is not None and words:  # Style = probability of the true writer
        rows = style_rows(style_model, blank, memo, executor, progress, style_store)
        cols = [style_model.class_index(p.writer, f"word {w.id}") for p, w in words]
        style_any = true_writer_probability(rows, cols)
    # each metric of the table (core.metric_table) by how it is computed
    geometric, read, per_word = (metric_names(computed=c) for c in ("geometry", "ocr", "word"))
    rows = []
    for i, ((p, w), st) in enumerate(zip(words, run.statuses)):
        held_out = settings.style_words == "all" or w.split == "test"
        row = {"system": run.name, "dataset": ds.name, "page_id": p.id, "word_id": w.id, "text": w.text,
               "status": st, "valid": run.inks[i] is not None, **{m: float(geo[m][i]) for m in geometric},
               "style": float(style_any[i]) if held_out else float("nan"), "style_any": float(style_any[i]),
               "split": w.split, "label": run.label, "kind": run.kind}
        for m in per_word:
            row[m] = float(METRICS[m].word_value(run.inks[i], refs[i], (p.width, p.height), w))
        if texts[i] is not None:
            c = edit_counts(texts[i], w.text, casefold=settings.casefold)
            row.update(ocr_text=texts[i], S=c.S, D=c.D, I=c.I, N=c.N, **{m: getattr(c, m) for m in read})
        rows.append(row)
    return scores_frame(rows)


def run_summary(scores: pd.DataFrame, runs: dict, settings: EvalSettings) -> pd.DataFrame:
    """The per-system summary of a run's scores (:func:`~inkground_lib.evaluation.scores.summarize` with the
    settings' bootstrap) with each system's label and kind from ``runs`` ({name: SystemRun}) in columns 1 and
    2; an empty frame for empty scores."""
    summary = summarize(scores, n_boot=settings.n_boot, seed=settings.seed, ci=settings.ci) if len(scores) \
        else pd.DataFrame()
    if len(summary):
        summary.insert(1, "label", summary["system"].map({n: r.label for n, r in runs.items()}))
        summary.insert(2, "kind", summary["system"].map({n: r.kind for n, r in runs.items()}))
    return summary
