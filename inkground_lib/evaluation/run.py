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

from inkground_lib.core.dataset import check_photos, load_dataset
from inkground_lib.core.files import atomic_write_text
from inkground_lib.core.parallel import LazyPool, check_workers
from inkground_lib.core.run_files import facts_json, scores_csv, summary_csv
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


def predict_systems(dataset_dir, systems: Sequence[str], run_dir, settings: EvalSettings, memo: dict, *,
                    progress: bool = True, registry_extra=None, executor=None) -> dict:
    """{name: SystemRun} of the systems that can run here, with the OCR of their renders already read
    (:func:`~inkground_lib.evaluation.render_ocr.read_all_renders`); those that cannot run are left out
    (:func:`evaluate_dataset` lists them). ``executor``: page-parallel predictions and OCR
    (:func:`~inkground_lib.evaluation.predict.predict_system`,
    :func:`~inkground_lib.evaluation.render_ocr.read_renders`)."""
    runs, _ = run_systems(target_dataset(load_dataset(dataset_dir)), systems, run_dir, settings.grid, progress, registry_extra,
                          executor)
    read_all_renders(dataset_dir, runs.values(), settings, memo, progress, executor)
    return runs


def evaluate_dataset(dataset_dir, systems: Sequence[str], run_dir, settings: EvalSettings = EvalSettings(), *,
                     progress: bool = True, registry_extra=None, runs: dict | None = None, style=None,
                     memo: dict | None = None, overwrite: bool = False, executor=None) -> EvalResult:
    """Run every system in ``systems`` on the dataset and score it (see module section doc).

    A system that cannot run here (no API key, no TensorFlow, ...) is listed in ``unavailable`` with the
    reason, never scored. ``runs`` reuses SystemRuns already made (e.g. scoring the same predictions
    against true inks). ``style``: the function
    :func:`~inkground_lib.evaluation.style_stage.start_style_classifier` returned (None: train or reuse the
    classifier here); ``memo``: OCR texts and classifier rows to reuse
    (:func:`~inkground_lib.evaluation.render_ocr.read_renders`); ``executor`` (a pool or a Dask cluster): the
    Style of the renders is computed there (the same scores). Scores are written to
    ``run_dir/scores-<reference>.csv``. ``run_dir`` is checked and locked as in
    :func:`~inkground_lib.evaluation.predict.predict_system` (``overwrite``: write into a non-empty folder that
    is not a run folder)."""
    run_dir = Path(run_dir)
    with eval_run_folder(run_dir, "eval", overwrite):
        ds = target_dataset(load_dataset(dataset_dir))  # one target, one question (components.targets)
        need_words(ds, "evaluate")
        check_photos(ds)  # before any request: a broken photo stops the run
        runs = dict(runs or {})
        new_runs, unavailable = run_systems(ds, [n for n in systems if n not in runs], run_dir, settings.grid,
                                            progress, registry_extra)
        runs.update(new_runs)
        memo = {} if memo is None else memo
        ocr = read_all_renders(dataset_dir, runs.values(), settings, memo, progress)
        # only now wait for the classifier (trained meanwhile, with a pool), and then use it
        model, facts = (style or start_style_classifier(ds, run_dir, settings, None, progress))()
        frames = [score_run(runs[n], ds, settings, ocr, model, progress, memo, executor)
                  for n in systems if n in runs]
        scores = pd.concat(frames, ignore_index=True) if frames else empty_scores()
        res = EvalResult(ds.name, settings.reference, scores, run_summary(scores, runs, settings), runs, unavailable,
                         facts, target_facts(ds))
        _write_result(run_dir, res, dataset_dir, ds.kind, settings)
        return res


def _write_result(run_dir: Path, res: EvalResult, dataset_dir, dataset_kind: str, settings: EvalSettings) -> None:
    """The run folder's scores, summary and facts of one reference."""
    atomic_write_text(scores_csv(run_dir, settings.reference), res.scores.to_csv(index=False))
    atomic_write_text(summary_csv(run_dir, settings.reference), res.summary.to_csv(index=False))
    atomic_write_text(facts_json(run_dir, settings.reference),
                      json.dumps({"dataset": res.dataset, "dataset_dir": str(dataset_dir), "dataset_kind": dataset_kind,
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
                     progress: bool = False, registry_extra=None, executor=None) -> SectionResult:
    """Section 03: the benchmark scored against its references and against the true inks, and the recorded
    set (``recorded``: its folder, or "" / None to skip) against its recorded trajectories.

    The same as three :func:`evaluate_dataset` calls (identical files), made faster: the writer classifiers
    that are not already saved train side by side in ``workers`` processes (None: every core) while the
    systems run and are read by OCR here, and identical renders are read and classified once. ``executor``
    (:func:`inkground_lib.core.parallel.executor`: a pool or a Dask cluster) replaces that pool when given,
    and the skeleton's predictions, the OCR of renders and their Style run there too."""
    true_settings = replace(settings, reference="true")
    # one target, one question (components.targets); a broken photo stops the section before any request
    bench_ds = check_photos(target_dataset(load_dataset(benchmark)))
    rec_ds = check_photos(target_dataset(load_dataset(recorded))) if recorded else None
    # the OCR texts and classifier rows shared by the three scorings; the systems' options
    kw = {"memo": {}, "progress": progress, "registry_extra": registry_extra, "executor": executor}
    with ExitStack() as stack:
        for run in (bench_run, recorded_run) if rec_ds else (bench_run,):
            stack.enter_context(eval_run_folder(run, "eval"))
        pool = stack.enter_context(nullcontext(executor) if executor is not None
                                   else LazyPool(min(check_workers(workers), 3)))
        # the classifiers train in the pool while this process runs the systems and reads their renders
        style_b = start_style_classifier(bench_ds, bench_run, settings, pool, progress)
        style_t = start_style_classifier(bench_ds, bench_run, true_settings, pool, progress)
        style_r = start_style_classifier(rec_ds, recorded_run, settings, pool, progress) if rec_ds else None
        bench_runs = predict_systems(benchmark, systems, bench_run, settings, **kw)
        rec_runs = predict_systems(recorded, systems, recorded_run, settings, **kw) if rec_ds else None
        # the Style of renders on a given executor too (the book's own pool is busy training meanwhile)
        bench = evaluate_dataset(benchmark, systems, bench_run, settings, runs=bench_runs, style=style_b, **kw)
        bench_true = evaluate_dataset(benchmark, systems, bench_run, true_settings, runs=bench.runs, style=style_t,
                                      **kw)
        rec = (evaluate_dataset(recorded, systems, recorded_run, settings, runs=rec_runs, style=style_r, **kw)
               if rec_ds else None)
    return SectionResult(bench, bench_true, rec)
