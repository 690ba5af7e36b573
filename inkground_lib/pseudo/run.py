"""Section 02 end to end: candidates -> pseudo-labels -> OCR filter -> raters -> benchmark set."""

from __future__ import annotations

import dataclasses
import math
import time
from concurrent.futures import Executor
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd

from inkground_lib.core.csv_cells import write_csv
from inkground_lib.core.dataset import dataset_hash, load_dataset
from inkground_lib.core.defaults import DERENDERER, N_RATERS, OCR_THRESHOLD, RATERS_PER_PAIR
from inkground_lib.core.files import atomic_write_json
from inkground_lib.core.folders import run_folder
from inkground_lib.core.parallel import LazyPool
from inkground_lib.core.repo_paths import portable_path
from inkground_lib.core.run_files import (
    PSEUDO_RUN_FILES,
    RUN_PATTERNS,
    benchmark_dir,
    funnel_csv,
    pages_csv,
    pseudo_summary_json,
    ratings_csv,
    truth_jsonl,
    words_csv,
)
from inkground_lib.pseudo.benchmark import build_benchmark, write_reference_ocr
from inkground_lib.pseudo.crop_readings import read_crops
from inkground_lib.pseudo.derender_stage import (
    TEXT_SOURCES,
    derender_dataset,
    derender_errors,
    make_derenderer,
    text_mode,
)
from inkground_lib.pseudo.keys import (
    PseudoError,
    derenderer_config,
    engine_config,
)
from inkground_lib.pseudo.ocr_filter import make_engine, ocr_filter
from inkground_lib.pseudo.raters import (
    AWAITING,
    KEEP_SCORE,
    RaterModel,
    RaterOutcome,
    RatingsFile,
    check_enough_ratings,
    check_rating_pages,
    load_ratings,
    pair_defect,
    per_pair_range,
    rater_outcome,
    simulate_ratings,
    write_ratings,
)
from inkground_lib.pseudo.truth import truth_metrics

PAGE_COLUMNS = ["page", "words", "matched", "match_rate", "ocr_pass", "n_ratings", "all_ten", "kept",
                "mean_score", "defect", "dtw", "chamfer", "order_differs", "direction_differs", "stage"]


STAGES = ("failed OCR filter", "rejected by raters", "kept")
"""The outcomes of a page rated in full; a page with fewer than K standing ratings is at the stage
:data:`inkground_lib.pseudo.raters.AWAITING` (neither kept nor rejected)."""


@dataclass
class PipelineResult:
    """What :func:`run_pseudo_labels` produced.

    * ``funnel``: one row per stage (candidates, OCR filter, rater filter): pages, share of candidates,
      share of the previous stage.
    * ``pages``: one row per candidate page: page, words, matched, match_rate, ocr_pass, n_ratings,
      all_ten (rated and every score 10), kept (benchmark page), mean_score, defect (visible defect used
      by simulated raters; NaN with real ratings), and where true inks exist the page means of dtw,
      chamfer, order_differs, direction_differs (shares of words), and stage (failed OCR filter /
      awaiting ratings (fewer than K standing ratings) / rejected by raters / kept).
    * ``words``: one row per word: the OCR texts and match, the pseudo-label's strokes and points, any
      derender error, and the truth comparison where known.
    * ``ratings``: the standing ratings of the pages that passed the OCR filter, the ones the rater filter
      used (source column "simulated", "real" or "file: <name>"); ``raters``: the rater filter's outcome
      (:class:`inkground_lib.pseudo.raters.RaterOutcome`: K, kept, rejected, awaiting);
      ``ratings_file``: the file read (None: simulated), ``agreement``
      (:func:`~inkground_lib.pseudo.raters.agreement`), ``benchmark`` (the benchmark dataset folder),
      ``params``, ``components`` (which derenderer, OCR engine and ratings produced the numbers), ``timings``
      (seconds per stage), ``has_truth``.
    """

    funnel: pd.DataFrame
    pages: pd.DataFrame
    words: pd.DataFrame
    ratings: pd.DataFrame
    agreement: dict
    benchmark: Path
    run_dir: Path
    candidates: Path
    params: dict
    components: dict
    timings: dict
    has_truth: bool
    pseudo: dict = field(default_factory=dict, repr=False)
    raters: Optional[RaterOutcome] = field(default=None, repr=False)
    ratings_file: Optional[RatingsFile] = field(default=None, repr=False)


def run_pseudo_labels(candidates_dir, run_dir, *, derenderer=DERENDERER, ocr="rapidocr", ocr_threshold: float = OCR_THRESHOLD,
                 ratings=None, n_raters: int = N_RATERS, raters_per_pair=RATERS_PER_PAIR, rater_model: Optional[RaterModel] = None,
                 n_candidates: Optional[int] = None, seed: int = 0, progress: bool = True,
                 workers: Optional[int] = None, overwrite: bool = False,
                 executor: Optional[Executor] = None, allow_partial_ratings: bool = False) -> PipelineResult:
    """Candidate pages -> pseudo-labels -> OCR filter -> rater filter -> benchmark set (``run_dir/benchmark``).

    ``derenderer``: a name (:func:`make_derenderer`) or object; ``ocr``: an engine name
    (:func:`~inkground_lib.components.ocr.make_engine`) or object; ``ratings``: a CSV path
    (:func:`~inkground_lib.pseudo.raters.load_ratings`) or None = simulated raters (:func:`simulate_ratings`
    with ``n_raters``, ``raters_per_pair`` (int or (min, max)), ``rater_model`` and ``seed``) over the pages
    that passed the OCR filter. A page counts as rated once it has K standing ratings: K is the file's
    (``inkground rate`` records it), else the minimum of ``raters_per_pair``; a page with fewer is not rated
    yet (neither kept nor rejected), and when more than half of the pages that passed the OCR filter are not
    rated yet the run stops with a RatingsError before it writes its tables, unless ``allow_partial_ratings``;
    ``n_candidates``: use the first N pages only; ``workers``: processes for derendering and OCR (None:
    every core; the files written do not depend on it); ``executor``: a pool or a Dask cluster
    (:func:`inkground_lib.core.parallel.executor`) used instead of ``workers`` when given. Writes to ``run_dir``: the derender and OCR caches,
    ratings.csv (the ratings used, simulated or the file's, with their source), pages.csv, words.csv,
    funnel.csv, summary.json (with the ratings file's path, sha256 and K) and the benchmark dataset. A rerun with the
    same inputs reuses every derendered and OCR'd page (nothing expensive is recomputed). ``run_dir`` must be
    new, empty or a run folder of inkground's (else FolderError, unless ``overwrite``); it is locked while
    the pipeline writes (:func:`inkground_lib.core.folders.run_folder`).
    """
    rfile = load_ratings(ratings) if ratings is not None else None  # a bad file fails before the run folder is touched
    per_pair_range(raters_per_pair)
    with run_folder(run_dir, "pseudo", legacy=PSEUDO_RUN_FILES, overwrite=overwrite, writes=RUN_PATTERNS), \
            (nullcontext(executor) if executor is not None else LazyPool(workers)) as pool:
        # one pool for every stage: its workers load the OCR engine and the derenderer once, and start only when
        # a stage has work (a rerun that finds everything in its logs, or an earlier run's, starts none)
        return _run_pseudo_labels(candidates_dir, run_dir, derenderer, ocr, ocr_threshold, rfile, n_raters,
                                  raters_per_pair, rater_model, n_candidates, seed, progress, workers, pool,
                                  bool(allow_partial_ratings))


def _run_pseudo_labels(candidates_dir, run_dir, derenderer, ocr, ocr_threshold, rfile, n_raters, raters_per_pair,
                       rater_model, n_candidates, seed, progress, workers, executor=None,
                       allow_partial_ratings=False) -> PipelineResult:
    """:func:`run_pseudo_labels` inside its run folder and pool: each stage in turn, timed (seconds)."""
    timings: dict[str, float] = {}
    t = time.perf_counter()
    cand = Path(candidates_dir)
    run = Path(run_dir)
    ds = _candidate_pages(cand, rfile, n_candidates)
    model = rater_model or RaterModel()
    der = make_derenderer(derenderer)
    timings["load"] = time.perf_counter() - t

    eng = make_engine(ocr)
    pseudo, o = _derender_and_filter(ds, der, ocr, eng, ocr_threshold, run, progress, workers, executor, timings)
    t = time.perf_counter()
    words, has_truth = _word_table(ds, pseudo, o, run, der, workers, executor)
    timings["truth"] = time.perf_counter() - t

    pages = o.pages.copy()
    passed = pages.loc[pages["ocr_pass"], "page"].tolist()
    defect = pair_defect(words, model.chamfer_tol)
    lo, hi = per_pair_range(raters_per_pair)
    if rfile is None:
        rt = simulate_ratings(passed, defect, n_raters=n_raters, per_pair=(lo, hi), seed=seed, model=model)
        ratings_source, k = "simulated", lo
    else:
        rt = rfile.ratings
        ratings_source, k = f"file: {rfile.name}", rfile.k or lo
    outcome = rater_outcome(rt, passed, k)
    if rfile is not None:  # before any table of this run is written: the folder keeps its last consistent state
        check_enough_ratings(outcome, f"ratings file {rfile.path}", allow_partial_ratings)
    ag = _agreement(outcome, rt, set(pages["page"]), passed)
    kept = outcome.kept
    pages = _page_table(pages, words, outcome, defect if rfile is None else None)
    write_ratings(outcome.ratings, ratings_csv(run))  # the ratings used, simulated or the file's, never stale

    n0 = len(pages)
    funnel = _funnel(pages, ocr_threshold)
    dcfg, ecfg = derenderer_config(der), engine_config(eng)
    # what the derenderer was given as each word's text: only for one that reads it (the tracer's text modes)
    components = {"derenderer": dcfg["name"],
                  "derenderer_text": TEXT_SOURCES[text_mode(der)] if hasattr(der, "text_mode") else None,
                  "ocr_engine": ecfg["name"], "ratings_source": ratings_source}
    sim = rfile is None
    params = {"candidates": portable_path(cand), "run_dir": portable_path(run), "derenderer": dcfg["name"],
              "derenderer_text_mode": text_mode(der), "ocr": ecfg["name"],
              "ocr_threshold": float(ocr_threshold), "ratings": None if sim else portable_path(rfile.path),
              "n_raters": int(n_raters) if sim else None,
              "raters_per_pair": [lo, hi] if sim else None,
              "rater_model": dataclasses.asdict(model) if sim else None,
              "raters_per_page": int(k), "allow_partial_ratings": bool(allow_partial_ratings),
              "n_candidates": n_candidates, "seed": int(seed)}
    ratings_info = None if sim else {
        "path": portable_path(rfile.path), "name": rfile.name, "sha256": rfile.sha256, "rows": rfile.rows,
        "standing_ratings": int(len(rt)), "raters_per_page": int(k),
        "k_from": "file" if rfile.k is not None else "raters_per_pair (the file does not record K)"}
    t = time.perf_counter()
    cand_hash = dataset_hash(cand)
    bench = build_benchmark(ds, pseudo, kept, benchmark_dir(run), meta={
        "candidates": {"name": ds.name, "path": portable_path(cand), "hash": cand_hash, "pages_used": n0},
        "ocr_threshold": float(ocr_threshold), "derenderer": dcfg["name"], "derenderer_config": dcfg,
        "ocr_engine": ecfg["name"], "ratings_source": ratings_source, "params": params})
    write_reference_ocr(bench, dict(zip(o.words["word_id"], o.words["ocr_rendered"])), pseudo, ecfg["name"])
    timings["benchmark"] = time.perf_counter() - t

    for table, path in ((pages, pages_csv(run)), (words, words_csv(run)), (funnel, funnel_csv(run))):
        write_csv(path, table)  # texts and OCR readings inert in a spreadsheet (an archive's reviewer opens them)
    res = PipelineResult(funnel, pages, words, outcome.ratings, ag, bench, run, cand, params, components,
                         {name: round(v, 3) for name, v in timings.items()}, has_truth, pseudo, outcome, rfile)
    atomic_write_json(pseudo_summary_json(run), _json_safe({
        "numbers": summary_numbers(res), "components": components, "params": params, "timings": res.timings,
        "agreement": ag, "candidates_hash": cand_hash, "ratings_file": ratings_info}))
    return res


def _candidate_pages(cand: Path, rfile: Optional[RatingsFile], n_candidates: Optional[int]):
    """The candidate dataset at ``cand``, cut to its first ``n_candidates`` pages (None: all); a ratings file
    that rates a page which is not a candidate is refused here, before anything is written."""
    ds = load_dataset(cand)
    if rfile is not None:  # a rating of a page that is not a candidate is refused before anything is written
        check_rating_pages(rfile, [p.id for p in ds.pages])
    if n_candidates is not None:
        if int(n_candidates) < 1:
            raise PseudoError(f"n_candidates: must be >= 1 or None, got {n_candidates!r}")
        ds.pages = ds.pages[: int(n_candidates)]
    return ds


def _derender_and_filter(ds, der, ocr, eng, ocr_threshold, run: Path, progress, workers, executor,
                         timings: dict[str, float]):
    """Derender every word of ``ds`` and OCR-filter the pseudo-labels: ``(pseudo, ocr filter result)``. For a
    derenderer that reads each word's text first (text mode "recognize"), the crops are read before it runs
    and the filter compares with those readings. ``ocr`` goes to the workers by name when it is one, else the
    engine ``eng``. Adds each stage's seconds to ``timings`` (read_crops, derender, ocr)."""
    readings = None
    if text_mode(der) == "recognize":  # recognize and derender: the filter's reading of each crop, read first
        t = time.perf_counter()
        readings = read_crops(ds, ocr if isinstance(ocr, str) else eng, run, progress=progress, workers=workers,
                              executor=executor)
        timings["read_crops"] = time.perf_counter() - t
    t = time.perf_counter()
    pseudo = derender_dataset(ds, der, run, progress=progress, workers=workers, executor=executor,
                              readings=readings)
    timings["derender"] = time.perf_counter() - t
    t = time.perf_counter()
    o = ocr_filter(ds, pseudo, ocr if isinstance(ocr, str) else eng, ocr_threshold, run_dir=run, progress=progress,
                   workers=workers, executor=executor, originals=readings)
    timings["ocr"] = time.perf_counter() - t
    return pseudo, o


def _word_table(ds, pseudo, o, run: Path, der, workers, executor) -> tuple[pd.DataFrame, bool]:
    """``(words, has_truth)``: one row per word with the OCR filter's columns, the pseudo-label's strokes and
    points, its derender error ("" for none) and, where true inks exist, the truth comparison (dtw, chamfer,
    order_differs, direction_differs as floats); ``has_truth``: whether any word had a true ink."""
    truth = truth_metrics(ds, pseudo, workers=workers, executor=executor, log=truth_jsonl(run))
    errors = derender_errors(run, der)
    words = o.words.copy()
    words["strokes"] = [len(pseudo[w]) for w in words["word_id"]]
    words["points"] = [pseudo[w].n_points for w in words["word_id"]]
    words["derender_error"] = [errors.get(w, "") for w in words["word_id"]]
    words = words.merge(truth.drop(columns="page"), on="word_id", how="left")
    for c in ("dtw", "chamfer", "order_differs", "direction_differs"):
        words[c] = words[c].astype(float)
    return words, len(truth) > 0


def _agreement(outcome: RaterOutcome, rt: pd.DataFrame, all_ids: set, passed: list) -> dict:
    """The raters' agreement, with the count of ratings of pages that are not candidates and of pages that
    failed the OCR filter (both unused)."""
    ag = dict(outcome.agreement)
    ag["ratings_outside_candidates"] = int((~rt["page"].isin(all_ids)).sum())
    ag["ratings_of_failed_pages"] = int((rt["page"].isin(all_ids) & ~rt["page"].isin(set(passed))).sum())
    return ag


def _page_table(pages: pd.DataFrame, words: pd.DataFrame, outcome: RaterOutcome, defect) -> pd.DataFrame:
    """The OCR filter's page table with the rater filter's columns (n_ratings, all_ten, kept, mean_score; the
    simulated raters' ``defect`` per page, NaN with real ratings: ``defect`` None), the page means of the
    truth comparison and each page's stage, in :data:`PAGE_COLUMNS` order."""
    g = outcome.ratings.groupby("page")["score"]
    pages["n_ratings"] = pages["page"].map(g.size()).fillna(0).astype(int)
    pages["all_ten"] = pages["page"].map(g.min() == KEEP_SCORE).eq(True)
    pages["kept"] = pages["page"].isin(set(outcome.kept))
    pages["mean_score"] = pages["page"].map(g.mean()).astype(float)
    pages["defect"] = pages["page"].map(defect).astype(float) if defect is not None else np.nan
    wt = words.groupby("page")[["dtw", "chamfer", "order_differs", "direction_differs"]].mean()
    for c in wt.columns:
        pages[c] = pages["page"].map(wt[c]).astype(float)
    awaiting = pages["page"].isin(set(outcome.awaiting))
    pages["stage"] = np.where(~pages["ocr_pass"], STAGES[0], np.where(
        pages["kept"], STAGES[2], np.where(awaiting, AWAITING, STAGES[1])))
    return pages[PAGE_COLUMNS]


def _funnel(pages: pd.DataFrame, ocr_threshold: float) -> pd.DataFrame:
    """The funnel: candidate pages, pages past the OCR filter, pages kept by the raters, each with its share
    of the candidates and of the previous stage (NaN where that is empty)."""
    n0, n1, n2 = len(pages), int(pages["ocr_pass"].sum()), int(pages["kept"].sum())
    return pd.DataFrame([
        {"stage": "candidate pages", "pages": n0, "share of candidates": 1.0 if n0 else np.nan,
         "share of previous stage": np.nan},
        {"stage": f"OCR filter (>= {ocr_threshold:g} of words match)", "pages": n1,
         "share of candidates": n1 / n0 if n0 else np.nan, "share of previous stage": n1 / n0 if n0 else np.nan},
        {"stage": "rater filter (every score 10)", "pages": n2, "share of candidates": n2 / n0 if n0 else np.nan,
         "share of previous stage": n2 / n1 if n1 else np.nan},
    ])


def _json_safe(obj):
    if isinstance(obj, dict):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def summary_numbers(res: PipelineResult) -> dict:
    """The section's headline numbers (plain Python numbers; keys match data/paper/reported.csv ids where
    the paper reports the same quantity): candidates, ocr_pass_pages, ocr_pass_rate, ocr_threshold,
    benchmark_pages, benchmark_rate (of OCR-passed pages), benchmark_share (of candidates), n_raters
    (raters who gave at least one rating), rater_pool (the simulated pool, else n_raters), raters_per_pair_min / _max / _mean, ratings, rater_agreement,
    rater_alpha, raters_per_page (K: the ratings a page needs before it counts as rated), pages_rated (K or
    more), pages_rejected, pages_awaiting_ratings (fewer than K: neither kept nor rejected),
    partial_ratings_allowed (1 when more than half await ratings and the run was told to build anyway),
    words, word_match_rate, and where the truth is known the medians (over pages) of dtw,
    chamfer and the shares of words with a different stroke order / direction, per stage."""
    p = res.pages
    n0, n1, n2 = len(p), int(p["ocr_pass"].sum()), int(p["kept"].sum())
    rated = p.loc[p["ocr_pass"], "n_ratings"]
    rt = res.ratings[res.ratings["page"].isin(set(p.loc[p["ocr_pass"], "page"]))]
    n_wait = int((p["stage"] == AWAITING).sum())
    k = int(res.params.get("raters_per_page") or (res.params.get("raters_per_pair") or [0])[0])
    out = {
        "candidates": n0, "ocr_pass_pages": n1, "ocr_pass_rate": n1 / n0 if n0 else float("nan"),
        "ocr_threshold": float(res.params["ocr_threshold"]), "benchmark_pages": n2,
        "benchmark_rate": n2 / n1 if n1 else float("nan"), "benchmark_share": n2 / n0 if n0 else float("nan"),
        "n_raters": int(rt["rater"].nunique()),
        "rater_pool": int(res.params["n_raters"]) if res.params.get("n_raters") else int(rt["rater"].nunique()),
        "raters_per_pair_min": int(rated.min()) if len(rated) else 0,
        "raters_per_pair_max": int(rated.max()) if len(rated) else 0,
        "raters_per_pair_mean": float(rated.mean()) if len(rated) else float("nan"),
        "ratings": int(len(rt)), "rater_agreement": float(res.agreement["agreement"]),
        "rater_alpha": float(res.agreement["alpha"]), "raters_per_page": k,
        "pages_rated": n1 - n_wait, "pages_rejected": int((p["stage"] == STAGES[1]).sum()),
        "pages_awaiting_ratings": n_wait, "partial_ratings_allowed": int(2 * n_wait > n1),
        "words": int(len(res.words)),
        "word_match_rate": float(res.words["match"].mean()) if len(res.words) else float("nan"),
        "words_per_page_mean": float(p["words"].mean()) if n0 else float("nan"),
    }
    if res.has_truth:
        w = res.words
        out.update({"word_dtw_median": float(w["dtw"].median()), "word_chamfer_median": float(w["chamfer"].median()),
                    "word_order_differs_share": float(w["order_differs"].mean()),
                    "word_direction_differs_share": float(w["direction_differs"].mean())})
        groups = {"ocr_fail": p[~p["ocr_pass"]], "ocr_pass": p[p["ocr_pass"]],
                  "rejected": p[p["stage"] == STAGES[1]], "kept": p[p["kept"]]}
        for g, d in groups.items():
            for m in ("dtw", "chamfer", "order_differs", "direction_differs"):
                out[f"{g}_{m}_median"] = float(d[m].median()) if len(d) else float("nan")
    return {k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in out.items()}
