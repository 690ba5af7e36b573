"""Section 03 end to end: each system's predictions on a dataset, scored with every metric."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as _field
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from inkground_lib.core.defaults import GRID, N_BOOT, SPACING
from inkground_lib.evaluation.scores import empty_scores, scores_frame, summarize


@dataclass(frozen=True)
class EvalSettings:
    """Definitions a scoring run depends on (each is a parameter of section 03 and varied in section 04).

    spacing: arc-length resampling step in word heights (None: no resampling); reference: "reference"
    (the dataset's reference inks: pseudo-labels on a benchmark set) or "true" (true / recorded
    trajectories, where the dataset has them); ocr_engine: OCR for AR / CR (inkground_lib.components.ocr); casefold:
    compare texts case-insensitively; style_words: "test" (Style over the classifier's held-out words, the
    default) or "all"; grid: the prompt's grid size; variant default of the prompt; n_boot, seed, ci: the
    page bootstrap; style: StyleParams fields as a dict (empty: defaults)."""

    spacing: float | None = SPACING
    reference: str = "reference"
    ocr_engine: str = "rapidocr"
    casefold: bool = True
    style_words: str = "test"
    grid: int = GRID
    n_boot: int = N_BOOT
    seed: int = 0
    ci: float = 0.95
    style: dict = _field(default_factory=dict)

    def __post_init__(self):
        if self.reference not in ("reference", "true"):
            raise ValueError(f"EvalSettings.reference must be 'reference' or 'true', got {self.reference!r}")
        if self.style_words not in ("test", "all"):
            raise ValueError(f"EvalSettings.style_words must be 'test' or 'all', got {self.style_words!r}")


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


@dataclass
class EvalResult:
    dataset: str
    reference: str
    scores: pd.DataFrame
    summary: pd.DataFrame
    runs: dict = _field(default_factory=dict)  # name -> SystemRun
    unavailable: dict = _field(default_factory=dict)  # name -> reason it could not run here
    style: dict = _field(default_factory=dict)  # classifier facts: classes, chance, top1, n_train, trained


def choose_examples(ds):
    """The in-context examples: the longest word (by letters) of the first page with at least 3 words, and
    of the next such page; a word on the first example's page gets the second example, so no model sees
    its own page as the example. Returns (example_a, example_b)."""
    from inkground_lib.evaluation.prompt import example_from_page

    picks = []
    for page in ds.pages:
        if len(page.words) >= 3:
            w = max(page.words, key=lambda w: (sum(c.isalpha() for c in w.text), w.id))
            picks.append(example_from_page(page, w))
        if len(picks) == 2:
            return picks[0], picks[1]
    raise ValueError(f"{ds.root}: at least two pages with 3 or more words are needed to choose the prompt's "
                     f"in-context examples")


def make_items(ds, with_prompt: bool, grid: int = GRID) -> list:
    """One systems.Item per word of ``ds`` in dataset order (requests built on demand for API systems)."""
    from inkground_lib.evaluation.systems.base import Item

    if not with_prompt:
        return [Item.from_word(p, w) for p in ds.pages for w in p.words]
    ex_a, ex_b = choose_examples(ds)
    return [Item.with_prompt(p, w, ex_b if p.id == ex_a.page_id else ex_a, grid=grid)
            for p in ds.pages for w in p.words]


def record_ink(record: dict, page_size, grid: int = GRID):
    """(ink or None, status) of one prediction record: local systems' strokes as they are; model text
    through :func:`inkground_lib.evaluation.parse.parse_strokes` (usable: ok, partial, truncated)."""
    from inkground_lib.core.ink import InkError, ink_from_lists
    from inkground_lib.evaluation.parse import parse_strokes

    status = record.get("status", "error")
    if status == "error":
        return None, "error"
    if record.get("strokes") is not None:
        try:
            ink = ink_from_lists(record["strokes"], f"prediction {record.get('word_id')}")
        except InkError:
            return None, "invalid"
        return (ink, "ok") if ink.n_points else (None, "no_strokes")
    res = parse_strokes(record.get("raw_text") or "", grid=grid, page_size=tuple(page_size))
    if res.status in ("ok", "partial", "truncated") and res.n_points:
        return res.to_ink(), res.status
    return None, (status if status in ("refusal", "empty") and res.status == "unparseable" else res.status)


EVAL_RUN_FILES = ("predictions", "scores-reference.csv", "scores-true.csv")
"""Names that mark a prediction / evaluation run folder written before run marks existed."""


def eval_run_folder(run_dir, command: str, overwrite: bool = False):
    """The run folder context of ``predict`` / ``eval`` (checked, locked, marked:
    :func:`inkground_lib.core.folders.run_folder`)."""
    from inkground_lib.core.folders import run_folder

    return run_folder(run_dir, command, legacy=EVAL_RUN_FILES, overwrite=overwrite)


def predict_system(name: str, ds, run_dir, *, grid: int = GRID, progress: bool = True, registry_extra=None,
                   retry_refusals: bool = False, overwrite: bool = False, max_requests: int | None = None,
                   max_cost: float | None = None, executor=None):
    """Run (or resume) system ``name`` on every word of ``ds``; predictions are cached append-only in
    ``run_dir/predictions/<name>.jsonl`` (``retry_refusals``: ask again the words whose cached answer is a
    refusal or empty). Returns a :class:`SystemRun`. Raises SystemConfigError / SystemUnavailable (with the
    reason) when the system cannot run here; FolderError when ``run_dir`` is not a run folder (see
    :func:`eval_run_folder`) or another command is writing it. ``max_requests`` / ``max_cost`` (USD, worst
    case): a spending cap; requests beyond it are not sent (:func:`inkground_lib.evaluation.plan.within_caps`).
    ``executor`` (:func:`inkground_lib.core.parallel.executor`): a local system whose derenderer can run in a
    worker (the skeleton) is run there page by page first (:func:`predict_pages`)."""
    from inkground_lib.evaluation.systems.registry import get_system

    system = get_system(name, extra=registry_extra)
    with eval_run_folder(run_dir, "predict", overwrite):
        return _predict_system(system, name, ds, run_dir, grid, progress, retry_refusals, max_requests, max_cost,
                               executor)


def plan_system(name: str, ds, run_dir, *, grid: int = GRID, registry_extra=None, retry_refusals: bool = False):
    """What predicting ``name`` on ``ds`` would send and cost (:class:`inkground_lib.evaluation.plan.RunPlan`);
    nothing is sent or written."""
    from inkground_lib.evaluation.cache import cache_path
    from inkground_lib.evaluation.plan import plan_predictions
    from inkground_lib.evaluation.systems.registry import get_system

    system = get_system(name, extra=registry_extra)
    items = make_items(ds, with_prompt=system.kind == "api", grid=grid)
    return plan_predictions(system, items, cache_path(run_dir, name), retry_refusals)


def page_parallel(system) -> bool:
    """True for a local system whose predictions may run in pool or cluster workers: one whose derenderer
    says ``parallel = True`` (the skeleton); API systems pace their own requests, replay reads a file."""
    return system.kind != "api" and bool(getattr(getattr(system, "derenderer", None), "parallel", False))


def _predict_page_job(job):
    """Worker: (system, items of one page) -> the RawOutput of each item (``cache.ask``: a failure is an
    error output, never an exception)."""
    from inkground_lib.evaluation.cache import ask

    system, items = job
    return [ask(system, it) for it in items]


def predict_pages(system, items, path, executor, progress: bool = True) -> int:
    """Answer, on ``executor``, the items of ``system`` that ``path`` (its prediction cache) does not hold
    yet, one job per page; this process appends each record (:func:`inkground_lib.evaluation.cache.make_record`)
    in item order, so the cache then holds what :func:`~inkground_lib.evaluation.cache.run_predictions` would
    have written and it asks nothing. Returns the number of records written."""
    from tqdm import tqdm

    from inkground_lib.evaluation.cache import (
        append_record,
        failures_path,
        load_cache,
        make_record,
    )

    cached = load_cache(path, system=system.name, repair=True)
    todo: dict[str, object] = {}
    for it in items:
        k = system.request_key(it)
        if k not in cached and k not in todo:
            todo[k] = it
    by_page: dict[str, list] = {}
    for k, it in todo.items():
        by_page.setdefault(it.page_id, []).append((k, it))
    jobs = list(by_page.values())
    from inkground_lib.core.parallel import ordered_map

    n = 0
    with tqdm(total=len(todo), desc=f"predict {system.name} (pages in parallel)", unit="req",
              disable=not progress) as bar:
        for job, outs in zip(jobs, ordered_map(_predict_page_job, [(system, [it for _, it in j]) for j in jobs],
                                               executor=executor)):
            for (k, it), out in zip(job, outs):
                append_record(path if out.is_model_output else failures_path(path), make_record(system, it, k, out))
                n += 1
            bar.update(len(job))
    return n


def _predict_system(system, name: str, ds, run_dir, grid: int, progress: bool, retry_refusals: bool,
                    max_requests=None, max_cost=None, executor=None):
    from inkground_lib.evaluation.cache import cache_path, run_predictions
    from inkground_lib.evaluation.plan import plan_predictions, within_caps

    items = make_items(ds, with_prompt=system.kind == "api", grid=grid)
    path = cache_path(run_dir, name)
    if executor is not None and page_parallel(system) and max_requests is None and max_cost is None:
        predict_pages(system, items, path, executor, progress)
    allowed = None
    if max_requests is not None or max_cost is not None:
        allowed = within_caps(plan_predictions(system, items, path, retry_refusals), max_requests, max_cost)
    records = run_predictions(system, items, path, progress=progress, retry_refusals=retry_refusals,
                              allowed=allowed)
    inks, statuses = [], []
    for i, (rec, it) in enumerate(zip(records, items)):
        ink, st = record_ink(rec, it.page_size, grid)
        inks.append(ink)
        statuses.append(st)
        # the parsed ink is kept in ``inks``; the record's strokes as nested lists of Python floats took ~4x
        # its memory (~1 GB for the paper-scale benchmark's four systems)
        records[i] = {k: v for k, v in rec.items() if k != "strokes"}
    return SystemRun(name, getattr(system, "label", name), system.kind, records, inks, statuses)


def _style_epoch_job(job):
    """Pool job: more epochs of a writer classifier's training; job = (items, params, state or None, epochs or
    None = to the end)."""
    from inkground_lib.components.style import train_epochs

    items, params, state, epochs = job
    return train_epochs(items, params, state, epochs)


def start_style_classifier(ds, run_dir, settings: EvalSettings, executor=None, progress: bool = True,
                           bar_position: int | None = None, resumable: bool = False):
    """Start (or reuse) the writer classifier of :func:`style_classifier`; returns a function of no
    arguments giving (StyleModel or None, facts).

    A model already in ``run_dir/style-<reference>`` for the same training items and settings is loaded at
    once; otherwise it is trained here when the function is called, or, with ``executor`` (a process
    pool or a Dask cluster), trained there from now on while the caller does other work (a thread of this
    process submits the jobs). With ``resumable`` (the paper-scale run: an hour of training), one epoch per
    job, and this process keeps the training's state after each in the model folder
    (:func:`~inkground_lib.components.style.save_checkpoint`, ~140 MB), so a run killed during training
    resumes at the last finished epoch; otherwise (the book's small classifiers) one job trains to the end.
    This process writes the model folder either way, and the weights are the same (one torch thread, seeded;
    a resumed training continues bit for bit). A bar of the epochs is shown when ``progress`` and
    ``bar_position`` (its tqdm line) are given (not in notebooks: the page would show it)."""
    from concurrent.futures import Future

    from tqdm import tqdm

    from inkground_lib.components.style import (
        StyleParams,
        evaluate_classifier,
        load_checkpoint,
        save_checkpoint,
        save_style,
        saved_style,
        style_model_from_state,
        train_style,
    )

    params = StyleParams.from_dict(settings.style) if settings.style else StyleParams()
    refs = list(reference_inks(ds, settings.reference))
    words = [(w, p.writer) for p in ds.pages for w in p.words]
    train = [(ink, wr) for ink, (w, wr) in zip(refs, words) if w.split == "train"]
    test = [(ink, wr) for ink, (w, wr) in zip(refs, words) if w.split == "test"]
    writers = sorted({wr for _, wr in train})
    out_dir = Path(run_dir) / f"style-{settings.reference}"

    def facts_of(model):
        ev = evaluate_classifier(model, test) if test else None
        return {"n_classes": model.n_classes, "chance": 1.0 / model.n_classes, "n_train": len(train),
                "n_test": len(test), "top1": float(ev.top1) if ev is not None else float("nan"),
                "trained_now": bool(model.trained)}

    if len(writers) < 2:  # a classifier needs two classes: Style is not computed (NaN), and the book says so
        facts = {"n_classes": len(writers), "chance": float("nan"), "n_train": len(train), "n_test": len(test),
                 "top1": float("nan"), "trained_now": False,
                 "not_computed": f"Style needs training words from at least 2 writers; this dataset has "
                                 f"{len(writers)}"}
        return lambda: (None, facts)
    saved = saved_style(out_dir, train, params)
    if saved is not None:
        return lambda: (saved, facts_of(saved))
    if executor is None or getattr(executor, "in_process", False):  # trained when asked, in the caller's thread
        def train_here():  # (a 1-worker pool's jobs showed no bar before: nor do they here)
            model = train_style(train, params, out_dir, progress=progress and executor is None)
            return model, facts_of(model)
        return train_here
    refs_name = "true inks" if settings.reference == "true" else f"{settings.reference}s"
    show = progress and bar_position is not None

    def epochs():
        state = load_checkpoint(out_dir, train, params) if resumable else None
        with tqdm(total=params.epochs, initial=0 if state is None else state.epoch, unit="epoch", leave=False,
                  desc=f"Style training (on {refs_name})", position=bar_position, disable=not show) as bar:
            while state is None or state.epoch < params.epochs:
                state = executor.submit(_style_epoch_job, (train, params, state, 1 if resumable else None)).result()
                if resumable and state.epoch < params.epochs:
                    save_checkpoint(out_dir, state, train, params)
                bar.update(state.epoch - bar.n)
        model = style_model_from_state(state, train, params)
        save_style(model, out_dir, len(train))  # removes the checkpoint
        return model

    done: Future = Future()

    def run():
        try:
            done.set_result(epochs())
        except BaseException as e:  # delivered by collect()
            done.set_exception(e)

    # a daemon thread: a driver that stops (Ctrl-C, an error elsewhere) never waits for it at exit
    threading.Thread(target=run, name=f"style-{settings.reference}", daemon=True).start()

    def collect():
        model = done.result()
        return model, facts_of(model)
    return collect


def style_classifier(ds, run_dir, settings: EvalSettings, progress: bool = True):
    """Train (or reuse, from ``run_dir/style-<reference>``) the writer classifier on renders of the
    reference inks (or true inks, with reference="true") of each page's train-split words; classes are
    the pages' writers. Returns (StyleModel, facts) where facts give n_classes, chance = 1 / n_classes
    and top-1 accuracy on the held-out test-split reference inks."""
    return start_style_classifier(ds, run_dir, settings, None, progress)()


def reference_inks(ds, reference: str = "reference"):
    """The inks each word is scored against: ``word.ink`` or, with "true", ``word.true_ink`` (an error
    naming the word when a dataset has no true ink for it)."""
    for p in ds.pages:
        for w in p.words:
            if reference == "true":
                if w.true_ink is None:
                    raise ValueError(f"{ds.root}: word {w.id} has no true ink; score against reference='reference'")
                yield w.true_ink
            else:
                yield w.ink


def _read_batch(job) -> list[str]:
    """Worker: (OCR engine name, inks) -> the OCR text of each ink's render."""
    from inkground_lib.components.ocr import get_engine
    from inkground_lib.core.render import render_ink

    name, inks = job
    return [str(t) for t in get_engine(name, progress=False).read([render_ink(ink) for ink in inks])]


def read_renders(ocr, inks, memo: dict | None = None, executor=None, progress: bool = False,
                 log=None) -> list[str]:
    """OCR of the render of each ink (an empty ink renders blank). Identical inks (:func:`ink_digest`) are
    rendered and read once; ``memo`` ({(engine name, digest): text}) carries texts between calls, e.g.
    between systems whose outputs coincide (the reference and the derenderer that made it). ``executor``
    (:func:`inkground_lib.core.parallel.executor`): an engine that can run one per worker (``parallel``)
    reads batches of :data:`~inkground_lib.core.defaults.OCR_BATCH_WORDS` renders there (same texts), with a
    tqdm bar of the renders read when ``progress``. ``log``: a render-OCR log
    (:mod:`inkground_lib.evaluation.render_ocr_log`) whose texts are reused and to which each batch read is
    appended, in the same batches with or without an executor."""
    from tqdm import tqdm

    from inkground_lib.core.defaults import OCR_BATCH_WORDS
    from inkground_lib.core.ink import ink_digest
    from inkground_lib.core.parallel import ordered_map
    from inkground_lib.core.render import render_ink
    from inkground_lib.evaluation.render_ocr_log import (
        append_render_texts,
        read_render_texts,
        render_ocr_identity,
    )

    memo = {} if memo is None else memo
    identity = None if log is None else render_ocr_identity(ocr)
    if log is not None:
        for d, text in read_render_texts(log, ocr).items():
            memo.setdefault((ocr.name, d), text)
    keys = [(ocr.name, ink_digest(k)) for k in inks]
    todo = {}
    for k, ink in zip(keys, inks):
        if k not in memo and k not in todo:
            todo[k] = ink
    ks, vs = list(todo), list(todo.values())
    jobs = [(ocr.name, vs[i:i + OCR_BATCH_WORDS]) for i in range(0, len(vs), OCR_BATCH_WORDS)]
    if todo and executor is not None and getattr(ocr, "parallel", False):
        batches = ordered_map(_read_batch, jobs, executor=executor)
    elif todo:
        texts = list(ocr.read([render_ink(ink) for ink in vs]))
        batches = (texts[i:i + OCR_BATCH_WORDS] for i in range(0, len(texts), OCR_BATCH_WORDS))
    else:
        batches = iter(())
    with tqdm(total=len(vs), desc=f"OCR of renders ({ocr.name})", unit="word",
              disable=not progress or executor is None or not todo) as bar:
        for i, batch in zip(range(0, len(vs), OCR_BATCH_WORDS), batches):
            batch = [str(t) for t in batch]
            memo.update(zip(ks[i:i + OCR_BATCH_WORDS], batch))
            if log is not None:
                append_render_texts(log, identity, [d for _, d in ks[i:i + OCR_BATCH_WORDS]], batch)
            bar.update(len(batch))
    return [memo[k] for k in keys]


_WORKER_STYLE_MODELS: dict = {}
"""In an executor's worker: the classifiers :func:`_style_rows_job` loaded, by (folder, input hash, params)."""


def _style_rows_job(job):
    """Executor job: the logits of one slice of renders under a saved classifier; job = (its folder, its
    input hash, repr of its params, inks). The worker loads the model from the folder once (it reads the
    output folder by path, as for the page photos) and checks it is the driver's."""
    from inkground_lib.components.style import StyleError, load_style

    folder, input_hash, params, inks = job
    key = (folder, input_hash, params)
    model = _WORKER_STYLE_MODELS.get(key)
    if model is None:
        model = load_style(folder)
        if model.input_hash != input_hash or repr(model.params) != params:
            raise StyleError(f"{folder}: the classifier there is not the one being scored (another training "
                             f"replaced it while this run was scoring)")
        _WORKER_STYLE_MODELS.clear()  # one classifier at a time: ~45-90 MB each
        _WORKER_STYLE_MODELS[key] = model
    return model.logits(inks)


def style_rows(model, inks, memo: dict | None = None, executor=None, progress: bool = False) -> np.ndarray:
    """The classifier's logits (n, classes) for each ink (their Style:
    :func:`~inkground_lib.components.style.metric.true_writer_probability`); identical inks are classified
    once, ``memo`` ({(model key, digest): row}) carries rows between calls.

    ``executor`` (a pool or a Dask cluster): the renders not in ``memo`` are classified there, in jobs of
    :data:`~inkground_lib.core.defaults.STYLE_JOB_BATCHES` whole inference batches, when the model is saved
    (its workers load it from ``model.out_dir``); the rows are those of this process (the same batches, one
    torch thread). A bar with its ETA when ``progress``."""
    from tqdm import tqdm

    from inkground_lib.core.defaults import STYLE_JOB_BATCHES
    from inkground_lib.core.ink import ink_digest
    from inkground_lib.core.parallel import ordered_map

    memo = {} if memo is None else memo
    mkey = ("style", model.input_hash, repr(model.params), tuple(model.classes))
    keys = [(mkey, ink_digest(k)) for k in inks]
    todo = {}
    for k, ink in zip(keys, inks):
        if k not in memo and k not in todo:
            todo[k] = ink
    ks, vs = list(todo), list(todo.values())
    step = int(model.params.eval_batch_size) * STYLE_JOB_BATCHES
    remote = (executor is not None and not getattr(executor, "in_process", False) and model.out_dir is not None
              and len(vs) > step)
    if remote:
        jobs = [(str(Path(model.out_dir).resolve()), model.input_hash, repr(model.params), vs[i:i + step])
                for i in range(0, len(vs), step)]
        chunks = ordered_map(_style_rows_job, jobs, executor=executor)
    else:
        chunks = iter([model.logits(vs, progress)] if vs else [])  # its own bar of batches
    with tqdm(total=len(vs), desc="Style of renders", unit="word", leave=False,
              disable=not (progress and remote)) as bar:
        i = 0
        for rows in chunks:
            for k, row in zip(ks[i:i + len(rows)], rows):
                memo[k] = row
            i += len(rows)
            bar.update(len(rows))
    return np.array([memo[k] for k in keys]).reshape(len(keys), model.n_classes)


def read_all_renders(dataset_dir, runs, settings: EvalSettings, memo: dict, progress: bool = True, executor=None,
                     log_dir=None):
    """OCR of the renders of every run's inks with ``settings.ocr_engine`` (kept in each run's
    ``ocr_texts``), reusing ``memo`` and the texts a benchmark carries from section 02
    (:func:`~inkground_lib.pseudo.benchmark.reference_ocr_texts`); ``executor``: see :func:`read_renders`;
    ``log_dir``: keep the texts read in a render-OCR log there (resumable). Returns the engine."""
    from inkground_lib.components.ocr import get_engine
    from inkground_lib.evaluation.render_ocr_log import render_ocr_log_path
    from inkground_lib.pseudo.benchmark import reference_ocr_texts

    ocr = get_engine(settings.ocr_engine, progress=progress)
    for digest, text in reference_ocr_texts(dataset_dir, ocr.name).items():
        memo.setdefault((ocr.name, digest), text)
    for run in runs:
        if ocr.name not in run.ocr_texts:
            run.ocr_texts[ocr.name] = read_renders(
                ocr, [ink if ink is not None else [] for ink in run.inks], memo, executor, progress,
                None if log_dir is None else render_ocr_log_path(log_dir, ocr))
    return ocr


def predict_systems(dataset_dir, systems: Sequence[str], run_dir, settings: EvalSettings, memo: dict, *,
                    progress: bool = True, registry_extra=None, executor=None) -> dict:
    """{name: SystemRun} of the systems that can run here, with the OCR of their renders already read
    (:func:`read_all_renders`); those that cannot run are left out (:func:`evaluate_dataset` lists them).
    ``executor``: page-parallel predictions and OCR (:func:`predict_system`, :func:`read_renders`)."""
    from inkground_lib.core.dataset import load_dataset

    runs, _ = run_systems(load_dataset(dataset_dir), systems, run_dir, settings.grid, progress, registry_extra,
                          executor)
    read_all_renders(dataset_dir, runs.values(), settings, memo, progress, executor)
    return runs


def run_systems(ds, systems: Sequence[str], run_dir, grid: int, progress: bool = True,
                registry_extra=None, executor=None) -> tuple[dict, dict]:
    """({name: SystemRun}, {name: why it cannot run here}) for ``systems`` on ``ds``
    (:func:`predict_system` each; no key, no TensorFlow, ... is a reason, not an error)."""
    from inkground_lib.evaluation.systems.base import (
        SystemConfigError,
        SystemUnavailable,
    )

    runs, unavailable = {}, {}
    for name in systems:
        try:
            runs[name] = predict_system(name, ds, run_dir, grid=grid, progress=progress,
                                        registry_extra=registry_extra, executor=executor)
        except (SystemConfigError, SystemUnavailable) as e:
            unavailable[name] = str(e)
    return runs, unavailable


def score_run(run: SystemRun, ds, settings: EvalSettings, ocr, style_model=None, progress: bool = True,
              memo: dict | None = None, executor=None) -> pd.DataFrame:
    """Per-word scores of one system run (see :data:`SCORE_COLUMNS`). Invalid outputs are scored by the
    design's rule: a dot at the page centre for DTW / Chamfer, a blank render for AR, CR and Style.
    ``memo``: OCR texts and classifier rows already computed (see :func:`read_renders`); ``executor``: the
    Style of the renders is computed there (:func:`style_rows`), the same rows."""
    from inkground_lib.components.metrics.readability import edit_counts
    from inkground_lib.components.metrics.trajectory import (
        geometry_batch,
        invalid_prediction,
    )
    words = [(p, w) for p in ds.pages for w in p.words]
    refs = list(reference_inks(ds, settings.reference))
    preds = [ink if ink is not None else invalid_prediction((p.width, p.height))
             for ink, (p, w) in zip(run.inks, words)]
    geo = geometry_batch([(pr, rf, (p.width, p.height)) for pr, rf, (p, w) in zip(preds, refs, words)],
                         spacing=settings.spacing, progress=progress)
    blank = [ink if ink is not None else [] for ink in run.inks]
    if ocr is None:
        texts = [None] * len(words)
    else:  # the OCR of a render does not depend on the reference: read once per run and engine
        if ocr.name not in run.ocr_texts:
            run.ocr_texts[ocr.name] = read_renders(ocr, blank, memo)
        texts = run.ocr_texts[ocr.name]
    style_any = np.full(len(words), np.nan)
    if style_model is not None and words:  # Style = probability of the true writer
        from inkground_lib.components.style.metric import true_writer_probability  # (the package loads torch)

        rows = style_rows(style_model, blank, memo, executor, progress)
        cols = [style_model.class_index(p.writer, f"word {w.id}") for p, w in words]
        style_any = true_writer_probability(rows, cols)
    rows = []
    for i, ((p, w), st) in enumerate(zip(words, run.statuses)):
        held_out = settings.style_words == "all" or w.split == "test"
        row = {"system": run.name, "dataset": ds.name, "page_id": p.id, "word_id": w.id, "text": w.text,
               "status": st, "valid": run.inks[i] is not None, "dtw": float(geo[i, 0]), "chamfer": float(geo[i, 1]),
               "style": float(style_any[i]) if held_out else float("nan"), "style_any": float(style_any[i]),
               "split": w.split, "label": run.label, "kind": run.kind}
        if texts[i] is not None:
            c = edit_counts(texts[i], w.text, casefold=settings.casefold)
            row.update(ocr_text=texts[i], S=c.S, D=c.D, I=c.I, N=c.N, ar=c.ar, cr=c.cr)
        rows.append(row)
    return scores_frame(rows)


def evaluate_dataset(dataset_dir, systems: Sequence[str], run_dir, settings: EvalSettings = EvalSettings(), *,
                     progress: bool = True, registry_extra=None, runs: dict | None = None, style=None,
                     memo: dict | None = None, overwrite: bool = False, executor=None) -> EvalResult:
    """Run every system in ``systems`` on the dataset and score it (see module section doc).

    A system that cannot run here (no API key, no TensorFlow, ...) is listed in ``unavailable`` with the
    reason, never scored. ``runs`` reuses SystemRuns already made (e.g. scoring the same predictions
    against true inks). ``style``: the function :func:`start_style_classifier` returned (None: train or
    reuse the classifier here); ``memo``: OCR texts and classifier rows to reuse (:func:`read_renders`);
    ``executor`` (a pool or a Dask cluster): the Style of the renders is computed there (the same scores).
    Scores are written to ``run_dir/scores-<reference>.csv``. ``run_dir`` is checked and locked as in
    :func:`predict_system` (``overwrite``: write into a non-empty folder that is not a run folder)."""
    from inkground_lib.core.dataset import load_dataset

    with eval_run_folder(run_dir, "eval", overwrite):
        return _evaluate_dataset(load_dataset(dataset_dir), dataset_dir, systems, Path(run_dir), settings,
                                 progress, registry_extra, runs, style, memo, executor)


def _evaluate_dataset(ds, dataset_dir, systems, run_dir: Path, settings: EvalSettings, progress, registry_extra,
                      runs, style, memo, executor=None) -> EvalResult:
    runs = dict(runs or {})
    new_runs, unavailable = run_systems(ds, [n for n in systems if n not in runs], run_dir, settings.grid,
                                        progress, registry_extra)
    runs.update(new_runs)
    memo = {} if memo is None else memo
    ocr = read_all_renders(dataset_dir, runs.values(), settings, memo, progress)
    # only now wait for the classifier (trained meanwhile, with a pool), and then use it
    model, facts = (style or start_style_classifier(ds, run_dir, settings, None, progress))()
    frames = [score_run(runs[n], ds, settings, ocr, model, progress, memo, executor) for n in systems if n in runs]
    scores = pd.concat(frames, ignore_index=True) if frames else empty_scores()
    from inkground_lib.core.files import atomic_write_text

    summary = summarize(scores, n_boot=settings.n_boot, seed=settings.seed, ci=settings.ci) if len(scores) else pd.DataFrame()
    if len(summary):
        labels = {n: r.label for n, r in runs.items()}
        summary.insert(1, "label", summary["system"].map(labels))
        summary.insert(2, "kind", summary["system"].map({n: r.kind for n, r in runs.items()}))
    import json

    atomic_write_text(run_dir / f"scores-{settings.reference}.csv", scores.to_csv(index=False))
    atomic_write_text(run_dir / f"summary-{settings.reference}.csv", summary.to_csv(index=False))
    atomic_write_text(run_dir / f"facts-{settings.reference}.json",
                      json.dumps({"dataset": ds.name, "dataset_dir": str(dataset_dir), "dataset_kind": ds.kind,
                                  "reference": settings.reference, "style": facts,
                                  "unavailable": unavailable, "settings": _settings_dict(settings)},
                                 indent=1, sort_keys=True))
    return EvalResult(ds.name, settings.reference, scores, summary, runs, unavailable, facts)


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
    from contextlib import ExitStack
    from dataclasses import replace

    from inkground_lib.core.dataset import load_dataset

    true_settings = replace(settings, reference="true")
    bench_ds = load_dataset(benchmark)
    rec_ds = load_dataset(recorded) if recorded else None
    memo: dict = {}
    kw = {"progress": progress, "registry_extra": registry_extra}
    with ExitStack() as folders:
        for run in (bench_run, recorded_run) if rec_ds else (bench_run,):
            folders.enter_context(eval_run_folder(run, "eval"))
        return _evaluate_section(benchmark, recorded, systems, bench_run, recorded_run, settings, true_settings,
                                 bench_ds, rec_ds, memo, kw, workers, progress, executor)


def _evaluate_section(benchmark, recorded, systems, bench_run, recorded_run, settings, true_settings, bench_ds,
                      rec_ds, memo, kw, workers, progress, executor=None) -> SectionResult:
    from contextlib import nullcontext

    from inkground_lib.core.parallel import LazyPool, check_workers

    with (nullcontext(executor) if executor is not None else LazyPool(min(check_workers(workers), 3))) as pool:
        # the classifiers train in the pool while this process runs the systems and reads their renders
        style_b = start_style_classifier(bench_ds, bench_run, settings, pool, progress)
        style_t = start_style_classifier(bench_ds, bench_run, true_settings, pool, progress)
        style_r = start_style_classifier(rec_ds, recorded_run, settings, pool, progress) if rec_ds else None
        bench_runs = predict_systems(benchmark, systems, bench_run, settings, memo, executor=executor, **kw)
        rec_runs = (predict_systems(recorded, systems, recorded_run, settings, memo, executor=executor, **kw)
                    if rec_ds else None)
        # the Style of renders on a given executor too (the book's own pool is busy training meanwhile)
        bench = evaluate_dataset(benchmark, systems, bench_run, settings, runs=bench_runs, style=style_b,
                                 memo=memo, executor=executor, **kw)
        bench_true = evaluate_dataset(benchmark, systems, bench_run, true_settings, runs=bench.runs, style=style_t,
                                      memo=memo, executor=executor, **kw)
        rec = (evaluate_dataset(recorded, systems, recorded_run, settings, runs=rec_runs, style=style_r, memo=memo,
                                executor=executor, **kw) if rec_ds else None)
    return SectionResult(bench, bench_true, rec)


def _settings_dict(settings: EvalSettings) -> dict:
    from dataclasses import asdict

    return asdict(settings)


def headline_numbers(bench: EvalResult, bench_true: EvalResult | None = None,
                     recorded: EvalResult | None = None) -> dict:
    """Numbers the section-03 prose cites, with keys that always exist (NaN where a system or dataset was
    not run), so a rerun with other systems still builds: n_words / n_pages per dataset, systems run and
    not run (systems_run leaves out the reference ink, a sanity check), the specialist's (skeleton derenderer's) DTW against the pseudo-labels and against the true
    trajectories, the font and box baselines' AR, and each classifier's chance level and top-1 accuracy."""
    def stat(res, system, col):
        if res is None or not len(res.summary):
            return float("nan")
        row = res.summary[res.summary["system"] == system]
        return float(row[col].iloc[0]) if len(row) else float("nan")

    out = {
        "bench_words": int(bench.scores["word_id"].nunique()) if len(bench.scores) else 0,
        "bench_pages": int(bench.scores["page_id"].nunique()) if len(bench.scores) else 0,
        "systems_run": len([n for n in bench.runs if n != "reference"]),  # the reference ink is a sanity check
        "systems_not_run": len(bench.unavailable),
        "skeleton_dtw_ref": stat(bench, "skeleton", "dtw"), "skeleton_dtw_true": stat(bench_true, "skeleton", "dtw"),
        "reference_dtw_true": stat(bench_true, "reference", "dtw"),
        "font_ar": stat(bench, "font", "ar"), "box_ar": stat(bench, "box", "ar"),
        "skeleton_ar": stat(bench, "skeleton", "ar"), "reference_ar": stat(bench, "reference", "ar"),
        "bench_style_chance": float(bench.style.get("chance", float("nan"))),
        "bench_style_top1": float(bench.style.get("top1", float("nan"))),
        "bench_style_classes": int(bench.style.get("n_classes", 0)),
    }
    rec = recorded
    out.update({
        "rec_words": int(rec.scores["word_id"].nunique()) if rec is not None and len(rec.scores) else 0,
        "rec_pages": int(rec.scores["page_id"].nunique()) if rec is not None and len(rec.scores) else 0,
        "rec_skeleton_dtw": stat(rec, "skeleton", "dtw"), "rec_font_ar": stat(rec, "font", "ar"),
        "rec_style_chance": float(rec.style.get("chance", float("nan"))) if rec is not None else float("nan"),
        "rec_style_top1": float(rec.style.get("top1", float("nan"))) if rec is not None else float("nan"),
        "rec_style_classes": int(rec.style.get("n_classes", 0)) if rec is not None else 0,
    })
    chance = out["rec_style_chance"]
    out["rec_style_text"] = (f"whose Style classifier chooses among {out['rec_style_classes']} writers (chance "
                             f"{chance:.3f})" if out["rec_style_classes"] and chance == chance else
                             "with no Style classifier (no recorded set was scored: — no chance level)")
    return out
