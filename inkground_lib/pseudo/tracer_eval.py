"""Checking the tracer as section 02 would: ``evaluate_tracer(unipen_dir, out_dir, ...)``.

Recorded pages are built (:func:`inkground_lib.datasets.recorded.build_recorded`) from the words of the
writers of one group of the evaluation list (default ``held-out``: writers no model here trained on), and
synthetic pages are generated (:func:`inkground_lib.datasets.synth.generate.generate`); each derenderer
(the tracer, the skeleton) derenders every word as the pseudo-label stage does
(:func:`~inkground_lib.pseudo.derender_stage.derender_dataset`: the word's box + 10%, its text) and is
compared with the true inks by :func:`~inkground_lib.pseudo.truth.truth_metrics` (DTW and Chamfer in word
heights, stroke order and direction against the writer's).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Optional

import torch

from inkground_lib.components.derenderers.skeleton import SkeletonDerenderer
from inkground_lib.components.derenderers.tracer.derenderer import TracerDerenderer
from inkground_lib.components.derenderers.tracer.eval_writers import read_eval_writers
from inkground_lib.core.dataset import load_dataset
from inkground_lib.core.files import atomic_write_json
from inkground_lib.core.folders import run_folder
from inkground_lib.datasets.recorded import build_recorded, unipen_dir_words
from inkground_lib.datasets.synth.generate import SynthParams, generate
from inkground_lib.pseudo.derender_stage import derender_dataset, recorded_seconds
from inkground_lib.pseudo.truth import truth_metrics


def _summary(df, seconds: float) -> dict:
    def share(col):
        v = df[col].dropna()
        return float(v.mean()) if len(v) else math.nan

    return {"words": int(len(df)), "dtw_median": float(df["dtw"].median()),
            "dtw_mean": float(df["dtw"].mean()), "chamfer_median": float(df["chamfer"].median()),
            "order_differs": share("order_differs"), "direction_differs": share("direction_differs"),
            "seconds": round(seconds, 2), "words_per_second": round(len(df) / max(seconds, 1e-9), 1)}


def write_group_words(unipen_dir, path: Path, group: str = "held-out", style: Optional[str] = "CURSIVE",
                      words=None, progress: bool = True) -> int:
    """Write the category-6 words (``style``, quality not BAD) of the evaluation writers in ``group`` as a
    UNIPEN-format JSON file at ``path``; returns the number of words."""

    keep = read_eval_writers(group=group)
    if words is None:
        words, _ = unipen_dir_words(unipen_dir, category="6", style=style, quality="!BAD", progress=progress)
    samples = []
    for w in words:
        if w.writer in keep:
            samples.append({"id": w.id, "writer_id": w.writer, "text": w.text,
                            "strokes": [[[float(x), float(y), None if not math.isfinite(t) else float(t)]
                                         for x, y, t in s] for s in w.ink.strokes]})
    if not samples:
        raise ValueError(f"{unipen_dir}: no words of the {group!r} evaluation writers")
    atomic_write_json(path, {"meta": {"source": str(unipen_dir), "group": group, "style": style},
                             "samples": samples})
    return len(samples)


def compare_derenderers(ds, derenderers: dict, run_dir: Path, progress: bool = True) -> dict:
    """{name: summary} of each derenderer on the dataset ``ds`` (per-word tables as ``<name>-words.csv``; the
    seconds as the derender logs record them, an answer one derenderer read from the run's trace store counted at
    the time it took to make)."""

    out = {}
    for name, der in derenderers.items():
        inks = derender_dataset(ds, der, run_dir, progress=progress, workers=1)
        secs = recorded_seconds(run_dir, der, ds)
        df = truth_metrics(ds, inks)
        df.to_csv(run_dir / f"{name}-words.csv", index=False)
        out[name] = _summary(df, secs)
    return out


def evaluate_tracer(unipen_dir: str | os.PathLike | None, out_dir: str | os.PathLike, *,
                    weights: str | os.PathLike | None = None, sha256: Optional[str] = None,
                    group: str = "held-out", style: Optional[str] = "CURSIVE", pages: Optional[int] = None,
                    words_per_page: tuple[int, int] = (20, 50), synth_pages: int = 20, seed: int = 0,
                    progress: bool = True, words=None, overwrite: bool = False) -> dict:
    """Tracer and skeleton against the true inks on recorded pages of the ``group`` writers (skipped when
    ``unipen_dir`` is None) and on ``synth_pages`` synthetic pages (0: skipped). Writes into ``out_dir``:
    ``recorded/`` and ``synth/`` (datasets), ``runs/<set>/`` (derender caches, per-word CSVs) and
    ``eval_report.json`` (returned): per set and derenderer {words, dtw_median, order_differs,
    direction_differs, chamfer_median, words_per_second}, and the tracer / skeleton ratios."""
    with run_folder(out_dir, "tracer-eval", overwrite=overwrite) as out:
        return _evaluate(unipen_dir, out, weights, sha256, group, style, pages, words_per_page, synth_pages, seed,
                         progress, words)


def _evaluate(unipen_dir, out: Path, weights, sha256, group, style, pages, words_per_page, synth_pages, seed,
              progress, words) -> dict:
    torch.set_num_threads(2)
    ders = {"tracer": TracerDerenderer(weights, sha256), "skeleton": SkeletonDerenderer()}
    report: dict = {"weights_sha256": ders["tracer"].weights_sha256, "group": group, "seed": seed, "sets": {}}
    sets = []
    if unipen_dir is not None:
        src = out / f"{group}-words.json"
        n = write_group_words(unipen_dir, src, group, style, words, progress)
        rec = build_recorded(out / "recorded", unipen=src, pages=pages, words_per_page=words_per_page,
                             seed=seed, progress=progress)
        sets.append(("recorded", load_dataset(rec)))
        report["recorded_source_words"] = n
    if synth_pages:
        syn = generate(out / "synth", SynthParams(pages=int(synth_pages), seed=seed + 1000), progress=progress,
                       workers=1)
        sets.append(("synth", load_dataset(syn)))
    for name, ds in sets:
        run = out / "runs" / name
        run.mkdir(parents=True, exist_ok=True)
        res = compare_derenderers(ds, ders, run, progress)
        t, s = res["tracer"], res["skeleton"]
        res["ratio"] = {"dtw_median": t["dtw_median"] / s["dtw_median"],
                        "order_differs": t["order_differs"] / s["order_differs"] if s["order_differs"] else math.nan}
        report["sets"][name] = res
    atomic_write_json(out / "eval_report.json", json.loads(json.dumps(report, default=float)))
    return report
