"""Checking the tracer as section 02 would: ``evaluate_tracer(unipen_dir, out_dir, ...)``.

Recorded pages are built (:func:`inkground_lib.datasets.recorded.build_recorded`) from the words of the
writers of one group of the evaluation list (default ``held-out``: writers no model here trained on), and
synthetic pages are generated (:func:`inkground_lib.datasets.synth.generate.generate`). Each derenderer - the
skeleton, and the tracer in each text mode (:data:`~inkground_lib.components.derenderers.tracer.derenderer.
TEXT_MODES`: "recognize", given the OCR reading of the crop as section 02 reads it, :mod:`~inkground_lib.pseudo.
crop_readings`; "text", the word's true text; "none") - derenders every word as the pseudo-label stage does
(:func:`~inkground_lib.pseudo.derender_stage.derender_dataset`: the word's box + 10%) and is compared with the
true inks by :func:`~inkground_lib.pseudo.truth.truth_metrics` (DTW and Chamfer in word heights, stroke order and
direction against the writer's). Medians carry page-bootstrap intervals (:mod:`inkground_lib.core.bootstrap`:
pages, one writer each, are the clusters; seeded), and each tracer's median DTW and Chamfer is compared with the
skeleton's on the same replicates (paired differences). With an OCR engine, the OCR filter of section 02
(:func:`~inkground_lib.pseudo.ocr_filter.ocr_filter`) is run on each derenderer's inks: its word match rate
and page pass rate say whether the "recognize" mode makes the filter confirm its own reading.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import pandas as pd
import torch

from inkground_lib.components.derenderers.factory import make_derenderer
from inkground_lib.components.derenderers.tracer.eval_writers import read_eval_writers
from inkground_lib.core.bootstrap import page_bootstrap_counts, weighted_medians
from inkground_lib.core.dataset import load_dataset
from inkground_lib.core.defaults import OCR_THRESHOLD
from inkground_lib.core.files import atomic_write_json
from inkground_lib.core.folders import run_folder
from inkground_lib.datasets.recorded import build_recorded, unipen_dir_words
from inkground_lib.datasets.synth.generate import SynthParams, generate
from inkground_lib.pseudo.crop_readings import read_crops
from inkground_lib.pseudo.derender_stage import derender_dataset, recorded_seconds, text_mode
from inkground_lib.pseudo.truth import truth_metrics

MODES = ("recognize", "text", "none")
"""The tracer's text modes the evaluation runs by default, section 02's default first."""

N_BOOT = 1000
"""Page-bootstrap replicates of each interval."""


def tracer_spec(mode: str, weights=None) -> str:
    """The factory name of the tracer in text mode ``mode`` with ``weights`` (None: the shipped ones)."""
    name = {"recognize": "tracer-recognize", "text": "tracer", "none": "tracer-no-text"}[mode]
    return f"{name}:{weights}" if weights else name


def median_interval(values, pages, counts: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """(median, low, high): the (lower) median of ``values`` (one per word; NaN left out,
    :func:`~inkground_lib.core.bootstrap.weighted_medians` with unit weights) and its page-bootstrap interval at
    ``level``: the same statistic under each replicate of ``counts`` (replicates x pages; ``pages`` holds each
    word's page index 0..P-1), their (1-level)/2 and (1+level)/2 quantiles.

    >>> c = page_bootstrap_counts(2, 200, seed=0)
    >>> m, lo, hi = median_interval([1.0, 2.0, 3.0, 10.0], [0, 0, 1, 1], c)
    >>> m, lo <= m <= hi
    (2.0, True)
    """
    v = np.asarray(values, float)
    w = np.asarray(counts, float)[:, np.asarray(pages, int)]
    reps = weighted_medians(v, w)
    q = (1.0 - level) / 2.0
    return (float(weighted_medians(v, np.ones((1, len(v))))[0]), float(np.nanquantile(reps, q)),
            float(np.nanquantile(reps, 1.0 - q)))


def paired_median_difference(a, b, pages, counts: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """(difference, low, high) of median(a) - median(b) over the same words (a and b aligned; lower medians as
    in :func:`median_interval`), the interval from the differences of the two medians on the same page-bootstrap
    replicates ``counts``.

    >>> c = page_bootstrap_counts(3, 300, seed=1)
    >>> d, lo, hi = paired_median_difference([1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [0, 1, 2], c)
    >>> d, lo, hi
    (-1.0, -1.0, -1.0)
    """
    a, b = np.asarray(a, float), np.asarray(b, float)
    w = np.asarray(counts, float)[:, np.asarray(pages, int)]
    reps = weighted_medians(a, w) - weighted_medians(b, w)
    q = (1.0 - level) / 2.0
    one = np.ones((1, len(a)))
    return (float(weighted_medians(a, one)[0] - weighted_medians(b, one)[0]), float(np.nanquantile(reps, q)),
            float(np.nanquantile(reps, 1.0 - q)))


def _share(df, col) -> float:
    v = df[col].dropna()
    return float(v.mean()) if len(v) else math.nan


def summarise(df: pd.DataFrame, seconds: float, counts: np.ndarray, page_index: dict) -> dict:
    """One derenderer's figures on a set: words, medians of DTW and Chamfer with their intervals, order and
    direction shares, speed."""
    pages = df["page"].map(page_index).to_numpy()
    out = {"words": int(len(df))}
    for col in ("dtw", "chamfer"):
        m, lo, hi = median_interval(df[col].to_numpy(), pages, counts)
        out.update({f"{col}_median": m, f"{col}_low": lo, f"{col}_high": hi, f"{col}_mean": float(df[col].mean())})
    out.update(order_differs=_share(df, "order_differs"), direction_differs=_share(df, "direction_differs"),
               seconds=round(seconds, 2), words_per_second=round(len(df) / max(seconds, 1e-9), 1))
    return out


def ocr_pass(ds, inks, engine, run_dir: Path, readings, threshold: float = OCR_THRESHOLD) -> dict:
    """Section 02's OCR filter on ``inks``: word match rate, page pass rate (>= ``threshold`` of a page's words
    match) and pages passing; the crops' readings are those in ``readings`` (read once)."""
    from inkground_lib.pseudo.ocr_filter import ocr_filter

    res = ocr_filter(ds, inks, engine, threshold, run_dir=run_dir, progress=False, workers=1, originals=readings)
    return {"word_match_rate": float(res.words["match"].mean()) if len(res.words) else math.nan,
            "page_pass_rate": float(res.pages["ocr_pass"].mean()) if len(res.pages) else math.nan,
            "pages_passing": int(res.pages["ocr_pass"].sum()), "pages": int(len(res.pages))}


def reading_accuracy(ds, readings) -> float:
    """Share of words whose OCR reading equals their transcription after normalisation."""
    from inkground_lib.components.metrics.readability import normalise_text

    words = list(ds.words())
    return float(np.mean([normalise_text(readings.texts[w.id]) == normalise_text(w.text) for w in words]))


def report_lines(rep: dict) -> list[str]:
    """The figures of an evaluation report (:func:`evaluate_tracer`) as lines:
    per set and derenderer the median DTW and Chamfer with their page-bootstrap intervals, order and direction
    shares, the OCR filter's word match and page pass rates, and each tracer's difference from the skeleton."""
    lines = []
    for name, res in rep["sets"].items():
        head = f"== {name}: {res['pages']} pages"
        if "ocr_reads_the_word" in res:
            head += f"; the OCR ({rep['ocr']}) reads {res['ocr_reads_the_word']:.1%} of the words right"
        lines.append(head)
        lines.append(f"{'derenderer':24s} {'words':>5s}  {'DTW median [95% CI]':24s}  {'Chamfer median [95% CI]':24s}"
                     f"  order  direct.  OCR words  OCR pages")
        for der, r in res["derenderers"].items():
            o = r.get("ocr_filter")
            ocr = f"  {o['word_match_rate']:8.1%}  {o['page_pass_rate']:8.1%}" if o else ""
            lines.append(f"{der:24s} {r['words']:5d}  {r['dtw_median']:.4f} [{r['dtw_low']:.4f}, {r['dtw_high']:.4f}]"
                         f"  {r['chamfer_median']:.4f} [{r['chamfer_low']:.4f}, {r['chamfer_high']:.4f}]"
                         f"  {r['order_differs']:5.1%}  {r['direction_differs']:6.1%}{ocr}")
        for der, r in res["derenderers"].items():
            vs = r.get("vs_skeleton")
            if vs:
                lines.append(f"{der:24s} - skeleton: DTW {vs['dtw']['difference']:+.4f} [{vs['dtw']['low']:+.4f}, "
                             f"{vs['dtw']['high']:+.4f}] (x{vs['dtw']['ratio']:.3f}), Chamfer "
                             f"{vs['chamfer']['difference']:+.4f} [{vs['chamfer']['low']:+.4f}, "
                             f"{vs['chamfer']['high']:+.4f}] (x{vs['chamfer']['ratio']:.3f}), order "
                             f"x{vs['order_differs_ratio']:.3f}")
    return lines


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


def compare_derenderers(ds, derenderers: dict, run_dir: Path, progress: bool = True, readings=None,
                        ocr=None, n_boot: int = N_BOOT, seed: int = 0, baseline: str = "skeleton") -> dict:
    """{label: figures} of each derenderer (label -> name or object) on the dataset ``ds``: :func:`summarise`,
    the paired differences of its median DTW and Chamfer from the ``baseline``'s (``vs_<baseline>``), and with
    ``ocr`` (an engine name or object) the OCR filter's figures (:func:`ocr_pass`). Per-word tables are written
    as ``<label>-words.csv``; the seconds are those the derender logs record (an answer read from the run's trace
    store counted at the time it took to make). A derenderer in the "recognize" mode is given ``readings``."""
    page_index = {p.id: i for i, p in enumerate(ds.pages)}
    counts = page_bootstrap_counts(len(ds.pages), n_boot, seed)
    out, tables = {}, {}
    for label, spec in derenderers.items():
        der = make_derenderer(spec)
        inks = derender_dataset(ds, der, run_dir, progress=progress, workers=1,
                                readings=readings if text_mode(der) == "recognize" else None)
        df = truth_metrics(ds, inks)
        df.to_csv(run_dir / f"{_file_label(label)}-words.csv", index=False)
        tables[label] = df
        out[label] = {"text_mode": text_mode(der), **summarise(df, recorded_seconds(run_dir, der, ds), counts,
                                                                page_index)}
        if ocr is not None:
            out[label]["ocr_filter"] = ocr_pass(ds, inks, ocr, run_dir, readings)
    if baseline in tables:
        base = tables[baseline]
        for label, df in tables.items():
            if label == baseline:
                continue
            m = df.merge(base, on=["page", "word_id"], suffixes=("", "_base"))
            pages = m["page"].map(page_index).to_numpy()
            vs = {}
            for col in ("dtw", "chamfer"):
                d, lo, hi = paired_median_difference(m[col], m[f"{col}_base"], pages, counts)
                one = np.ones((1, len(m)))
                vs[col] = {"difference": d, "low": lo, "high": hi,
                           "ratio": float(weighted_medians(m[col].to_numpy(float), one)[0]
                                          / weighted_medians(m[f"{col}_base"].to_numpy(float), one)[0])}
            so = _share(m, "order_differs_base")
            vs["order_differs_ratio"] = _share(m, "order_differs") / so if so else math.nan
            out[label][f"vs_{baseline}"] = vs
    return out


def _file_label(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in label).strip("-")


def evaluate_tracer(unipen_dir: str | os.PathLike | None, out_dir: str | os.PathLike, *,
                    weights: str | os.PathLike | None = None, sha256: Optional[str] = None,
                    group: str = "held-out", style: Optional[str] = "CURSIVE", pages: Optional[int] = None,
                    words_per_page: tuple[int, int] = (20, 50), synth_pages: int = 20, seed: int = 0,
                    progress: bool = True, words=None, overwrite: bool = False, modes: Sequence[str] = MODES,
                    ocr: Optional[str] = "rapidocr", n_boot: int = N_BOOT, extra: Optional[dict] = None) -> dict:
    """The skeleton and the tracer in each of ``modes`` against the true inks on recorded pages of the
    ``group`` writers (skipped when ``unipen_dir`` is None) and on ``synth_pages`` synthetic pages (0: skipped);
    ``extra``: more derenderers {label: name or object} (e.g. geometry variants). ``ocr``: the OCR engine of the
    crop readings ("recognize") and of the OCR filter figures (None: no filter figures; "recognize" then not
    run). Writes into ``out_dir``: ``recorded/`` and ``synth/`` (datasets, reused when the folder is run again),
    ``runs/<set>/`` (derender caches, crop readings, per-word CSVs) and ``eval_report.json`` (returned): per set
    and derenderer the figures of :func:`compare_derenderers`, and per set the share of words the OCR reads
    right."""
    with run_folder(out_dir, "tracer-eval", overwrite=overwrite) as out:
        return _evaluate(unipen_dir, out, weights, sha256, group, style, pages, words_per_page, synth_pages, seed,
                         progress, words, modes, ocr, n_boot, extra or {})


def _evaluate(unipen_dir, out: Path, weights, sha256, group, style, pages, words_per_page, synth_pages, seed,
              progress, words, modes, ocr, n_boot, extra) -> dict:
    from inkground_lib.components.derenderers.tracer.derenderer import TracerDerenderer
    from inkground_lib.components.derenderers.tracer.weights import read_npz

    torch.set_num_threads(2)
    bad = [m for m in modes if m not in MODES]
    if bad:
        raise ValueError(f"evaluate_tracer: unknown text mode(s) {bad}; use {', '.join(MODES)}")
    if ocr is None:
        modes = [m for m in modes if m != "recognize"]
    if sha256 is not None and weights is not None:
        read_npz(weights, sha256)  # checked once here; the factory loads the file by its name
    ders: dict = {"skeleton": "skeleton"}
    ders.update({f"tracer ({m})": tracer_spec(m, weights) for m in modes})
    ders.update(extra)
    report: dict = {"weights_sha256": TracerDerenderer(weights).weights_sha256, "group": group, "seed": seed,
                    "n_boot": n_boot, "modes": list(modes), "sets": {},
                    "ocr": None if ocr is None else ocr if isinstance(ocr, str) else getattr(ocr, "name", type(ocr).__name__)}
    sets = []
    if unipen_dir is not None:
        src = out / f"{group}-words.json"
        if not (out / "recorded" / "manifest.json").is_file():
            n = write_group_words(unipen_dir, src, group, style, words, progress)
            build_recorded(out / "recorded", unipen=src, pages=pages, words_per_page=words_per_page, seed=seed,
                           progress=progress)
        else:
            n = len(json.loads(src.read_text("utf-8"))["samples"])
        sets.append(("recorded", load_dataset(out / "recorded")))
        report["recorded_source_words"] = n
    if synth_pages:
        if not (out / "synth" / "manifest.json").is_file():
            generate(out / "synth", SynthParams(pages=int(synth_pages), seed=seed + 1000), progress=progress,
                     workers=1)
        sets.append(("synth", load_dataset(out / "synth")))
    for name, ds in sets:
        run = out / "runs" / name
        run.mkdir(parents=True, exist_ok=True)
        readings = read_crops(ds, ocr, run, progress=progress, workers=1) if ocr is not None else None
        res = {"derenderers": compare_derenderers(ds, ders, run, progress, readings, ocr, n_boot, seed),
               "pages": len(ds.pages)}
        if readings is not None:
            res["ocr_reads_the_word"] = reading_accuracy(ds, readings)
        report["sets"][name] = res
    atomic_write_json(out / "eval_report.json", json.loads(json.dumps(report, default=float)))
    return report
