"""Section 03 end to end: each system's predictions on a dataset (:mod:`~inkground_lib.evaluation.predict`),
the OCR of their renders (:mod:`~inkground_lib.evaluation.render_ocr`), the writer classifiers
(:mod:`~inkground_lib.evaluation.style_stage`) and the scores (:mod:`~inkground_lib.evaluation.scoring`),
written to the run folder."""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass
from dataclasses import field as _field
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from inkground_lib.core.csv_cells import write_csv
from inkground_lib.core.dataset import Dataset, check_photos, load_dataset
from inkground_lib.core.files import atomic_write_text
from inkground_lib.core.parallel import LazyPool, check_workers
from inkground_lib.core.repo_paths import portable_path
from inkground_lib.core.run_files import (
    benchmark_run_dir,
    facts_json,
    scores_csv,
    style_features_dir,
    summary_csv,
    traces_jsonl,
)
from inkground_lib.core.scores_table import empty_scores
from inkground_lib.evaluation.items import need_words, target_dataset, target_facts
from inkground_lib.evaluation.predict import eval_run_folder, run_systems
from inkground_lib.evaluation.render_ocr import read_all_renders
from inkground_lib.evaluation.scoring import run_summary, score_run
from inkground_lib.evaluation.settings import EvalSettings, settings_dict
from inkground_lib.evaluation.style_stage import start_style_classifier


@dataclass
class EvalResult:
    dataset: str
    reference: str
    scores: pd.DataFrame
    summary: pd.DataFrame
    runs: dict = _field(default_factory=dict)  # name -> SystemRun
    unavailable: dict = _field(default_factory=dict)  # name -> reason it could not run here
    style: dict = _field(default_factory=dict)  # classifier facts: classes, chance, top1, n_train, trained
    targets: dict = _field(default_factory=dict)  # the target rule and the words it left out (items.target_facts)
    ds: Dataset | None = None  # the words scored (the target_dataset of what was loaded): pages, words, inks


def section_dataset(dataset) -> Dataset:
    """The words section 03 asks and scores: ``dataset`` (a Dataset object, or its folder: loaded and validated
    here) with its target words only (:func:`~inkground_lib.evaluation.items.target_dataset`: one target, one
    question) and its page photos decoded (:func:`~inkground_lib.core.dataset.check_photos`, once per object:
    a broken photo stops the run before any request). Load a dataset once and hand the object down."""
    ds = dataset if isinstance(dataset, Dataset) else load_dataset(dataset)
    return check_photos(target_dataset(ds))


def section_traces(benchmark: Dataset) -> tuple:
    """The trace stores section 03's skeleton and tracer systems read besides their own (the same answers, bit
    for bit: :mod:`inkground_lib.components.derenderers.traces`): the store of the pseudo-label run that made
    ``benchmark`` (a benchmark set), where section 02 derendered its candidate pages and the recorded pages it
    compares derenderers on; () when there is none."""
    if benchmark.kind != "benchmark":
        return ()
    path = traces_jsonl(benchmark_run_dir(benchmark.root))
    return (path,) if path.is_file() else ()


def predict_systems(dataset, systems: Sequence[str], run_dir, settings: EvalSettings, memo: dict, *,
                    progress: bool = True, registry_extra=None, executor=None, traces: Sequence = ()) -> dict:
    """{name: SystemRun} of the systems that can run here on ``dataset`` (a Dataset or its folder:
    :func:`section_dataset`), with the OCR of their renders already read
    (:func:`~inkground_lib.evaluation.render_ocr.read_all_renders`); those that cannot run are left out
    (:func:`evaluate_dataset` lists them). ``executor``: page-parallel predictions and OCR
    (:func:`~inkground_lib.evaluation.predict.predict_system`,
    :func:`~inkground_lib.evaluation.render_ocr.read_renders`); ``traces``: trace stores the derenderer systems
    read (:func:`section_traces`)."""
    ds = section_dataset(dataset)
    runs, _ = run_systems(ds, systems, run_dir, settings.grid, progress, registry_extra, executor, traces)
    read_all_renders(ds, runs.values(), settings, memo, progress, executor, log_dir=run_dir)
    return runs


def evaluate_dataset(dataset, systems: Sequence[str], run_dir, settings: EvalSettings = EvalSettings(), *,
                     progress: bool = True, registry_extra=None, runs: dict | None = None, style=None,
                     memo: dict | None = None, overwrite: bool = False, executor=None,
                     traces: Sequence = ()) -> EvalResult:
    """Run every system in ``systems`` on the dataset and score it (see module section doc). ``dataset``: a
    Dataset object or its folder (loaded and checked here: :func:`section_dataset`).

    A system that cannot run here (no API key, no TensorFlow, ...) is listed in ``unavailable`` with the
    reason, never scored. ``runs`` reuses SystemRuns already made (e.g. scoring the same predictions
    against true inks). ``style``: the function
    :func:`~inkground_lib.evaluation.style_stage.start_style_classifier` returned (None: train or reuse the
    classifier here); ``memo``: OCR texts and classifier rows to reuse
    (:func:`~inkground_lib.evaluation.render_ocr.read_renders`); ``executor`` (a pool or a Dask cluster): the
    Style of the renders is computed there (the same scores); ``traces``: trace stores the derenderer systems
    read (:func:`section_traces`). Scores are written to ``run_dir/scores-<reference>.csv``. ``run_dir`` is
    checked and locked as in :func:`~inkground_lib.evaluation.predict.predict_system` (``overwrite``: write
    into a non-empty folder that is not a run folder)."""
    run_dir = Path(run_dir)
    ds = section_dataset(dataset)  # a dataset validate refuses is refused before the run folder is made
    need_words(ds, "evaluate")
    with eval_run_folder(run_dir, "eval", overwrite):
        runs = dict(runs or {})
        new_runs, unavailable = run_systems(ds, [n for n in systems if n not in runs], run_dir, settings.grid,
                                            progress, registry_extra, traces=traces)
        runs.update(new_runs)
        memo = {} if memo is None else memo
        ocr = read_all_renders(ds, runs.values(), settings, memo, progress, log_dir=run_dir)
        # only now wait for the classifier (trained meanwhile, with a pool), and then use it
        model, facts = (style or start_style_classifier(ds, run_dir, settings, executor, progress, memo=memo))()
        store = style_features_dir(run_dir)
        frames = [score_run(runs[n], ds, settings, ocr, model, progress, memo, executor, store)
                  for n in systems if n in runs]
        scores = pd.concat(frames, ignore_index=True) if frames else empty_scores()
        res = EvalResult(ds.name, settings.reference, scores, run_summary(scores, runs, settings), runs, unavailable,
                         facts, target_facts(ds), ds)
        _write_result(run_dir, res, ds.root, ds.kind, settings)
        return res


def _write_result(run_dir: Path, res: EvalResult, dataset_dir, dataset_kind: str, settings: EvalSettings) -> None:
    """The run folder's scores, summary and facts of one reference."""
    write_csv(scores_csv(run_dir, settings.reference), res.scores)  # texts inert in a spreadsheet
    write_csv(summary_csv(run_dir, settings.reference), res.summary)
    atomic_write_text(facts_json(run_dir, settings.reference),
                      json.dumps({"dataset": res.dataset, "dataset_dir": portable_path(dataset_dir), "dataset_kind": dataset_kind,
                                  "reference": settings.reference, "style": res.style, "targets": res.targets,
                                  "unavailable": res.unavailable, "settings": settings_dict(settings)},
                                 indent=1, sort_keys=True))


class SectionResult(NamedTuple):
    """Section 03's three scorings (see :func:`evaluate_section`); ``rec`` is None without recorded data."""

    bench: EvalResult
    bench_true: EvalResult
    rec: EvalResult | None


def evaluate_section(benchmark, recorded, systems: Sequence[str], bench_run, recorded_run,
                     settings: EvalSettings = EvalSettings(), *, workers: int | None = None,
                     progress: bool = True, registry_extra=None, executor=None, traces: Sequence | None = None
                     ) -> SectionResult:
    """Section 03: the benchmark scored against its references and against the true inks, and the recorded
    set (``recorded``: its folder, or "" / None to skip) against its recorded trajectories. ``benchmark`` and
    ``recorded`` may be Dataset objects or folders; each is loaded and validated once here
    (:func:`section_dataset`) and the objects are handed to prediction, OCR, Style and scoring.

    The same as three :func:`evaluate_dataset` calls (identical files), made faster: the writer classifiers
    that are not already saved train side by side in ``workers`` processes (None: every core) while the
    systems run and are read by OCR here, and renders of the same drawing are read and classified once, across
    systems and sets (:func:`~inkground_lib.evaluation.render_ocr.read_renders`). ``executor``
    (:func:`inkground_lib.core.parallel.executor`: a pool or a Dask cluster) replaces that pool when given,
    and the skeleton's predictions, the OCR of renders and their Style run there too. ``traces``: trace
    stores the skeleton and tracer systems read on both sets (None: :func:`section_traces`, section 02's).
    ``progress``: a bar per stage (:func:`inkground_lib.core.progress.bar`: on the terminal or the runner's
    log, never inside an executed notebook)."""
    true_settings = replace(settings, reference="true")
    # one target, one question (components.targets); a broken photo stops the section before any request
    bench_ds = section_dataset(benchmark)
    rec_ds = section_dataset(recorded) if recorded else None
    traces = section_traces(bench_ds) if traces is None else tuple(traces)
    # the OCR texts and classifier rows shared by the three scorings; the systems' options
    kw = {"memo": {}, "progress": progress, "registry_extra": registry_extra, "executor": executor,
          "traces": traces}
    with ExitStack() as stack:
        for run in (bench_run, recorded_run) if rec_ds else (bench_run,):
            stack.enter_context(eval_run_folder(run, "eval"))
        pool = stack.enter_context(nullcontext(executor) if executor is not None
                                   else LazyPool(min(check_workers(workers), 3)))
        # the classifiers' features are computed in the pool, beside the systems' page-parallel predictions
        # and the OCR of their renders (a given executor, or the section's own pool)
        memo = kw["memo"]
        kw["executor"] = pool
        style_b = start_style_classifier(bench_ds, bench_run, settings, pool, progress, memo=memo)
        style_t = start_style_classifier(bench_ds, bench_run, true_settings, pool, progress, memo=memo)
        style_r = (start_style_classifier(rec_ds, recorded_run, settings, pool, progress, memo=memo)
                   if rec_ds else None)
        bench_runs = predict_systems(bench_ds, systems, bench_run, settings, **kw)
        rec_runs = predict_systems(rec_ds, systems, recorded_run, settings, **kw) if rec_ds else None
        bench = evaluate_dataset(bench_ds, systems, bench_run, settings, runs=bench_runs, style=style_b, **kw)
        bench_true = evaluate_dataset(bench_ds, systems, bench_run, true_settings, runs=bench.runs, style=style_t,
                                      **kw)
        rec = (evaluate_dataset(rec_ds, systems, recorded_run, settings, runs=rec_runs, style=style_r, **kw)
               if rec_ds else None)
    return SectionResult(bench, bench_true, rec)
