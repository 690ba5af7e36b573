"""Section 03's predictions: each system run (or resumed from its append-only cache) on every word of a
dataset, in this process or page by page on an executor, and what a run would send and cost."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as _field

from inkground_lib.core.dataset import check_photos
from inkground_lib.core.defaults import GRID
from inkground_lib.core.files import append_jsonl_many
from inkground_lib.core.folders import run_folder
from inkground_lib.core.parallel import ordered_map
from inkground_lib.core.progress import bar as progress_bar
from inkground_lib.core.registry import UnknownComponent
from inkground_lib.core.run_files import EVAL_RUN_FILES, RUN_PATTERNS
from inkground_lib.evaluation.asking import ask, run_predictions
from inkground_lib.evaluation.cache import (
    EarlierCaches,
    cache_path,
    check_cache_file,
    failures_path,
    load_cache,
    make_record,
)
from inkground_lib.evaluation.items import NON_TARGETS, make_items, need_words, record_ink, target_dataset
from inkground_lib.evaluation.plan import SpendingCap, plan_predictions
from inkground_lib.evaluation.systems.base import SystemConfigError, SystemUnavailable
from inkground_lib.evaluation.systems.registry import make_system


@dataclass
class SystemRun:
    """One system's run on one dataset: its records (one per word, dataset order; the cache records without
    their ``strokes``), the inks scored (page pixels; None where the output was not usable) and their
    statuses."""

    name: str
    label: str
    kind: str
    records: list
    inks: list
    statuses: list
    ocr_texts: dict = _field(default_factory=dict)  # OCR engine name -> texts read from the renders
    left_out: int = 0  # words of the dataset the target rule left out (items.target_dataset)


def eval_run_folder(run_dir, command: str, overwrite: bool = False):
    """The run folder context of ``predict`` / ``eval`` (checked, locked, marked:
    :func:`inkground_lib.core.folders.run_folder`)."""
    return run_folder(run_dir, command, legacy=EVAL_RUN_FILES, overwrite=overwrite, writes=RUN_PATTERNS)


def predict_system(name: str, ds, run_dir, *, grid: int = GRID, progress: bool = True, registry_extra=None,
                   retry_refusals: bool = False, overwrite: bool = False, max_requests: int | None = None,
                   max_cost: float | None = None, executor=None,
                   max_deadline_failures: int | None = None, traces: Sequence = ()) -> SystemRun:
    """Run (or resume) system ``name`` on every target word of ``ds`` (:func:`~inkground_lib.evaluation.items.
    target_dataset`; DatasetError when there is none); predictions are cached append-only in
    ``run_dir/predictions/<name>.jsonl`` (``retry_refusals``: ask again the words whose cached answer is a
    refusal or empty). Returns a :class:`SystemRun`. Raises SystemConfigError / SystemUnavailable (with the
    reason) when the system cannot run here; FolderError when ``run_dir`` is not a run folder (see
    :func:`eval_run_folder`) or another command is writing it. ``max_requests`` / ``max_cost`` (USD, worst
    case): a spending cap; requests beyond it are not sent (:class:`inkground_lib.evaluation.plan.SpendingCap`;
    their records have status "not_sent"). ``max_deadline_failures``: stop after this many requests in a row
    missed the deadline (default: the entry's, else :data:`~inkground_lib.core.defaults.DEADLINE_FAILURES`).
    ``executor`` (:func:`inkground_lib.core.parallel.executor`): a local system whose derenderer can run in a
    worker (the skeleton) is run there page by page first (:func:`predict_pages`). ``traces``: trace stores
    (paths of ``traces.jsonl`` logs, :mod:`inkground_lib.components.derenderers.traces`) whose answers a
    derenderer system that keeps its answers there (the skeleton, the tracer) reads where their content keys
    match, besides those it finds itself (the same answers, bit for bit; section 03 passes section 02's)."""
    overrides = {} if max_deadline_failures is None else {"max_deadline_failures": int(max_deadline_failures)}
    system = make_system(name, extra=registry_extra, **overrides)
    if traces and hasattr(system, "trace_logs"):
        system.trace_logs = tuple(str(t) for t in traces)
    ds = target_dataset(ds)  # one target, one question (components.targets)
    need_words(ds)
    capped = max_requests is not None or max_cost is not None
    cap = SpendingCap(system, max_requests, max_cost) if capped else None  # refused before anything is written
    check_pages(ds, progress)  # a photo that cannot be decoded stops the run here, never becomes the system's error
    with eval_run_folder(run_dir, "predict", overwrite):
        items = make_items(ds, with_prompt=system.kind == "api", grid=grid)
        path = cache_path(run_dir, name)
        if executor is not None and page_parallel(system) and not capped:
            predict_pages(system, items, path, executor, progress)
        records = run_predictions(system, items, path, progress=progress, retry_refusals=retry_refusals, cap=cap)
        inks, statuses = [], []
        for i, (rec, it) in enumerate(zip(records, items)):
            ink, st = record_ink(rec, it.page_size, grid)
            inks.append(ink)
            statuses.append(st)
            # the parsed ink is kept in ``inks``; the record's strokes as nested lists of Python floats took ~4x
            # its memory (~1 GB for the paper-scale benchmark's four systems)
            records[i] = {k: v for k, v in rec.items() if k != "strokes"}
        return SystemRun(name, getattr(system, "label", name), system.kind, records, inks, statuses,
                         left_out=int(ds.meta.get(NON_TARGETS, 0)))


def plan_system(name: str, ds, run_dir, *, grid: int = GRID, registry_extra=None, retry_refusals: bool = False,
                progress: bool = False):
    """What predicting ``name`` on ``ds`` would send and cost (:class:`inkground_lib.evaluation.plan.RunPlan`);
    nothing is sent or written, no key is needed (the system is built offline) and no image is encoded unless
    its size alone cannot tell whether it fits the provider's limits. ``progress``: a bar per stage."""
    system = make_system(name, extra=registry_extra, offline=True)
    ds = target_dataset(ds)
    need_words(ds, "send")
    check_pages(ds, progress)
    items = make_items(ds, with_prompt=system.kind == "api", grid=grid)
    return plan_predictions(system, items, cache_path(run_dir, name), retry_refusals, progress=progress)


def check_pages(ds, progress: bool = True):
    """:func:`~inkground_lib.core.dataset.check_photos` page by page, with a bar (decoding every photo of a large
    benchmark takes a while); a page this Dataset object already decoded is skipped. Returns ``ds``."""
    todo = [p for p in ds.pages if not p.photo_decoded]
    for page in progress_bar(todo, desc="check page photos", unit="page", enabled=progress and len(todo) > 1):
        check_photos(dataclasses.replace(ds, pages=[page]))
    return ds


def page_parallel(system) -> bool:
    """True for a local system whose predictions may run in pool or cluster workers: one whose derenderer
    says ``parallel = True`` (the skeleton); API systems pace their own requests, replay reads a file."""
    return system.kind != "api" and bool(getattr(getattr(system, "derenderer", None), "parallel", False))


def _predict_page_job(job):
    """Worker: (system, items of one page) -> the RawOutput of each item (``asking.ask``: a failure is an
    error output, never an exception)."""
    system, items = job
    return [ask(system, it) for it in items]


def predict_pages(system, items, path, executor, progress: bool = True) -> int:
    """Answer, on ``executor``, the items of ``system`` that ``path`` (its prediction cache) does not hold
    yet, nor an earlier run's cache (:class:`~inkground_lib.evaluation.cache.EarlierCaches`: copied into it),
    one job per page; this process appends each record (:func:`inkground_lib.evaluation.cache.make_record`)
    in item order, so the cache then holds what :func:`~inkground_lib.evaluation.asking.run_predictions` would
    have written and it asks nothing. Returns the number of records written."""
    for p in (path, failures_path(path)):
        check_cache_file(p)
    have = set(load_cache(path, system=system.name, repair=True))
    earlier = EarlierCaches(path, system.name)
    todo: dict[str, object] = {}
    for it in items:
        k = system.request_key(it)
        if k in have or k in todo:
            continue
        if earlier.take(k) is not None:
            have.add(k)
        else:
            todo[k] = it
    earlier.flush()
    by_page: dict[str, list] = {}
    for k, it in todo.items():
        by_page.setdefault(it.page_id, []).append((k, it))
    jobs = list(by_page.values())
    n = 0
    with progress_bar(total=len(todo), desc=f"predict {system.name} (pages in parallel)", unit="req",
                      enabled=progress) as bar:
        for job, outs in zip(jobs, ordered_map(_predict_page_job, [(system, [it for _, it in j]) for j in jobs],
                                               executor=executor)):
            page: dict = {}  # a page's records, one write (and fsync) per file
            for (k, it), out in zip(job, outs):
                page.setdefault(path if out.is_model_output else failures_path(path), []).append(
                    make_record(system, it, k, out))
                n += 1
            for p, recs in page.items():
                append_jsonl_many(p, recs)
            bar.update(len(job))
    return n


def run_systems(ds, systems: Sequence[str], run_dir, grid: int, progress: bool = True,
                registry_extra=None, executor=None, traces: Sequence = ()) -> tuple[dict, dict]:
    """({name: SystemRun}, {name: why it cannot run here}) for ``systems`` on ``ds`` (a Dataset object)
    (:func:`predict_system` each; no key, no TensorFlow, ... is a reason, not an error; ``traces``: see there)."""
    runs, unavailable = {}, {}
    for name in systems:
        try:
            runs[name] = predict_system(name, ds, run_dir, grid=grid, progress=progress,
                                        registry_extra=registry_extra, executor=executor, traces=traces)
        except (SystemConfigError, SystemUnavailable, UnknownComponent) as e:
            unavailable[name] = str(e)
    return runs, unavailable
