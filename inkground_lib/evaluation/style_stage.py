"""The Style classifiers of a section-03 run: each trained (or reused) on the reference inks of a dataset's
training words, on an executor while the caller does other work, and the classifier's rows for renders."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from pathlib import Path

import numpy as np

from inkground_lib.components.style import (
    StyleError,
    StyleParams,
    check_precision,
    load_checkpoint,
    load_style,
    save_checkpoint,
    save_style,
    saved_style,
    style_model_from_state,
    train_epochs,
    train_style,
)
from inkground_lib.components.style.scoring import classifier_figures
from inkground_lib.core.defaults import STYLE_JOB_BATCHES
from inkground_lib.core.ink import drawing_digest
from inkground_lib.core.parallel import ordered_map
from inkground_lib.core.progress import bar as progress_bar
from inkground_lib.core.run_files import style_dir, style_features_dir
from inkground_lib.evaluation.items import reference_inks
from inkground_lib.evaluation.settings import EvalSettings
from inkground_lib.evaluation.style_features import style_features


def _style_epoch_job(job):
    """Pool job: more epochs of a writer classifier's training; job = (items, params, state or None, epochs or
    None = to the end)."""
    items, params, state, epochs = job
    return train_epochs(items, params, state, epochs)


def _take_earlier_model(run_dir, reference: str, out_dir: Path, train, params: StyleParams):
    """The classifier an earlier run of the same dataset and section saved for the same training items and
    settings (:func:`~inkground_lib.core.earlier_runs.earlier_runs`: the book's run, then every rerun's), copied
    into ``out_dir`` (the run keeps every file its Style came from) and loaded from there; None when none has it."""
    import shutil

    from inkground_lib.core.earlier_runs import earlier_runs

    for run in earlier_runs(run_dir):
        cand = style_dir(run, reference)
        if saved_style(cand, train, params) is None:
            continue
        tmp = out_dir.with_name(out_dir.name + ".taking")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(cand, tmp, ignore=shutil.ignore_patterns("*.lock", "*.tmp", "style_training.pt"))
        shutil.rmtree(out_dir, ignore_errors=True)
        tmp.rename(out_dir)
        return saved_style(out_dir, train, params)
    return None


def start_style_classifier(ds, run_dir, settings: EvalSettings, executor=None, progress: bool = True,
                           bar_position: int | None = None, resumable: bool = False, memo: dict | None = None):
    """Start (or reuse) the writer classifier of :func:`style_classifier`; returns a function of no
    arguments giving (StyleModel or None, facts).

    A model already in ``run_dir/style-<reference>`` for the same training items and settings (and backbone) is
    loaded at once. Otherwise, by the settings' recipe (:class:`~inkground_lib.components.style.params.
    StyleParams` ``fit``):

    * ``"head"`` (the default): when the function is called, the backbone's features of the training renders
      (:func:`~inkground_lib.evaluation.style_features.style_features`: from ``memo`` and the run's feature
      store where they are, else computed once, on ``executor`` when given) and a head fitted on them, in seconds;
    * a network (``"last_stage"``, ``"all"``): trained here when the function is called, or, with ``executor``
      (a process pool or a Dask cluster), trained there from now on while the caller does other work (a thread
      of this process submits the jobs). With ``resumable`` (the paper-scale run), one epoch per job, and this
      process keeps the training's state after each in the model folder
      (:func:`~inkground_lib.components.style.save_checkpoint`), so a run killed during training resumes at the
      last finished epoch; otherwise one job trains to the end. The weights are the same either way (one torch
      thread, seeded; a resumed training continues bit for bit). A bar of the epochs is shown when ``progress``
      and ``bar_position`` (its tqdm line) are given (not in notebooks: the page would show it).

    This process writes the model folder. The facts give the recipe, the classes, chance, the held-out top-1
    and mean true-writer probability (their rows shared with the scoring through ``memo``)."""
    params = StyleParams.from_dict(settings.style) if settings.style else StyleParams()
    check_precision(params.precision, f"Style ({settings.reference})")  # before anything trains or is written
    memo = {} if memo is None else memo
    store = style_features_dir(run_dir)
    train, test = _train_and_test(ds, settings.reference)
    writers = sorted({wr for _, wr in train})
    out_dir = style_dir(run_dir, settings.reference)

    def facts_of(model):
        return _style_facts(model, train, test, settings, memo, executor, store)

    if len(writers) < 2:  # a classifier needs two classes: Style is not computed (NaN), and the book says so
        facts = {"n_classes": len(writers), "chance": float("nan"), "n_train": len(train), "n_test": len(test),
                 "top1": float("nan"), "trained_now": False, "precision": params.precision,
                 "start": params.start, "fit": params.fit,
                 "not_computed": f"Style needs training words from at least 2 writers; this dataset has "
                                 f"{len(writers)}"}
        return lambda: (None, facts)
    saved = saved_style(out_dir, train, params)
    if saved is None:
        saved = _take_earlier_model(run_dir, settings.reference, out_dir, train, params)
    if saved is not None:
        return lambda: (saved, facts_of(saved))
    if params.fit == "head":
        return _start_head_fit(train, params, out_dir, facts_of, memo, executor, progress, store,
                               f"style-{settings.reference}")
    if executor is None or getattr(executor, "in_process", False):  # trained when asked, in the caller's thread
        def train_here():  # (a 1-worker pool's jobs showed no bar before: nor do they here)
            model = train_style(train, params, out_dir, progress=progress and executor is None)
            return model, facts_of(model)
        return train_here
    refs_name = "true inks" if settings.reference == "true" else f"{settings.reference}s"

    def trained():
        model = _train_on_pool(train, params, out_dir, executor, resumable, progress and bar_position is not None,
                               bar_position, f"Style training (on {refs_name})")
        return model, facts_of(model)
    return _in_background(trained, f"style-{settings.reference}")


def _train_and_test(ds, reference: str) -> tuple[list, list]:
    """``(train, test)``: the ``reference`` inks of the dataset's train-split and test-split words, each as
    ``(ink, writer)``, in page and word order."""
    refs = list(reference_inks(ds, reference))
    words = [(w, p.writer) for p in ds.pages for w in p.words]
    train = [(ink, wr) for ink, (w, wr) in zip(refs, words) if w.split == "train"]
    test = [(ink, wr) for ink, (w, wr) in zip(refs, words) if w.split == "test"]
    return train, test


def _style_facts(model, train: list, test: list, settings: EvalSettings, memo: dict, executor, store) -> dict:
    """A classifier's facts: classes, chance (1 / classes), training and held-out counts, the held-out top-1 and
    mean true-writer probability with their CIs (NaN without held-out words; rows shared through ``memo``), and
    its recipe (precision, start, fit, head C, backbone, seconds to fit)."""
    ev = {"top1": float("nan"), "mean_true_proba": float("nan")}
    if test:
        z = style_rows(model, [k for k, _ in test], memo, executor, store=store)
        y = [model.class_index(wr, "held-out word") for _, wr in test]
        ev = classifier_figures(z, y, [wr for _, wr in test], settings.n_boot, settings.seed, settings.ci)
        ev.pop("n")
    return {"n_classes": model.n_classes, "chance": 1.0 / model.n_classes, "n_train": len(train),
            "n_test": len(test), **ev, "trained_now": bool(model.trained), "precision": model.params.precision,
            "channels_last": bool(model.params.channels_last), "start": model.params.start,
            "fit": model.params.fit, "head_c": model.params.head_c if model.params.fit == "head" else None,
            "backbone": backbone_facts() if model.params.start == "backbone" else None,
            "fit_seconds": float(model.train_seconds)}


def _start_head_fit(train: list, params: StyleParams, out_dir: Path, facts_of, memo: dict, executor, progress: bool,
                    store, name: str):
    """The ``"head"`` recipe: a function of no arguments giving (model, facts) once the backbone's features of
    the training inks are computed and a head is fitted on them. With a pool (``executor`` not in-process) that
    work starts now in a background thread ``name``, beside the caller's; otherwise it runs when called."""
    def fit_here():
        from inkground_lib.components.style.backbone import load_backbone

        with _FEATURES_LOCK:  # one classifier's features at a time: each fills the pool by itself
            feats = style_features(load_backbone(), params, [k for k, _ in train], memo, executor,
                                   progress and not pooled, store)
        model = train_style(train, params, out_dir, progress=False, features=feats, executor=executor)
        with _FEATURES_LOCK:
            return model, facts_of(model)
    pooled = executor is not None and not getattr(executor, "in_process", False)
    # with a pool: from now on, beside the caller's work (features and the head's fit run there)
    return _in_background(fit_here, name) if pooled else fit_here


def _train_on_pool(train: list, params: StyleParams, out_dir: Path, executor, resumable: bool, show: bool,
                   bar_position: int | None, desc: str):
    """Train a network classifier on ``executor``'s workers and save it in ``out_dir``: one job to the end, or
    with ``resumable`` one epoch per job, the state kept after each (resuming from a checkpoint there). A bar of
    the epochs (``desc``, tqdm line ``bar_position``) when ``show``."""
    state = load_checkpoint(out_dir, train, params) if resumable else None
    with progress_bar(total=params.epochs, initial=0 if state is None else state.epoch, unit="epoch",
                      leave=False, desc=desc, position=bar_position, enabled=show) as bar:
        while state is None or state.epoch < params.epochs:
            state = executor.submit(_style_epoch_job, (train, params, state, 1 if resumable else None)).result()
            if resumable and state.epoch < params.epochs:
                save_checkpoint(out_dir, state, train, params)
            bar.update(state.epoch - bar.n)
    model = style_model_from_state(state, train, params)
    save_style(model, out_dir, len(train))  # removes the checkpoint
    return model


_FEATURES_LOCK = threading.Lock()
"""Held by a classifier's thread while it computes features (:func:`start_style_classifier`)."""


def _in_background(work, name: str):
    """Run ``work()`` (returning (model, facts)) in a daemon thread of this process from now on; returns the
    function of no arguments that waits for its result (and raises its error). A daemon: a driver that stops
    (Ctrl-C, an error elsewhere) never waits for it at exit."""
    done: Future = Future()

    def run():
        try:
            done.set_result(work())
        except BaseException as e:  # delivered by collect()
            done.set_exception(e)

    threading.Thread(target=run, name=name, daemon=True).start()
    return done.result


def backbone_facts() -> dict:
    """The shipped backbone as a run's facts name it: its sha256 and how many UNIPEN and synthetic writers it was
    trained on (its record)."""
    from inkground_lib.components.style.backbone import load_backbone

    bb = load_backbone()
    t = bb.record.get("trained_on", {})
    return {"sha256": bb.sha256, "unipen_writers": int(t.get("unipen", {}).get("train_writers_kept", 0)),
            "synthetic_writers": int(t.get("synthetic", {}).get("train_writers", 0))}


def style_classifier(ds, run_dir, settings: EvalSettings, progress: bool = True):
    """Train (or reuse, from ``run_dir/style-<reference>``) the writer classifier on renders of the
    reference inks (or true inks, with reference="true") of each page's train-split words; classes are
    the pages' writers. Returns (StyleModel, facts) where facts give n_classes, chance = 1 / n_classes
    and top-1 accuracy on the held-out test-split reference inks."""
    return start_style_classifier(ds, run_dir, settings, None, progress)()


_WORKER_STYLE_MODELS: dict = {}
"""In an executor's worker: the classifiers :func:`_style_rows_job` loaded, by (folder, input hash, params)."""


def _style_rows_job(job):
    """Executor job: the logits of one slice of renders under a saved classifier; job = (its folder, its
    input hash, repr of its params, inks). The worker loads the model from the folder once (it reads the
    output folder by path, as for the page photos) and checks it is the driver's."""
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


def style_rows(model, inks, memo: dict | None = None, executor=None, progress: bool = False,
               store=None) -> np.ndarray:
    """The classifier's logits (n, classes) for each ink (their Style:
    :func:`~inkground_lib.components.style.metric.true_writer_probability`). For a head on the frozen backbone,
    the head's scores of the renders' features (:func:`~inkground_lib.evaluation.style_features.style_features`:
    each drawing's features computed once, kept in ``memo`` and the run's feature store folder ``store``, and
    shared by every classifier on that backbone). For a network: inks that draw the same strokes,
    in any order and direction (:func:`~inkground_lib.core.ink.drawing_digest`), are classified once, and
    ``memo`` ({(model key, drawing digest): row}) carries rows between calls, systems and sections.

    ``executor`` (a pool or a Dask cluster): the renders not in ``memo`` are classified there, in jobs of
    :data:`~inkground_lib.core.defaults.STYLE_JOB_BATCHES` whole inference batches, when the model is saved
    (its workers load it from ``model.out_dir``); the rows are those of this process (the same batches, one
    torch thread). A bar with its ETA when ``progress``."""
    memo = {} if memo is None else memo
    if model.head is not None:
        feats = style_features(model.backbone, model.params, inks, memo, executor, progress, store)
        return model.head.logits(feats).reshape(len(inks), model.n_classes)
    mkey = ("style", model.input_hash, repr(model.params), tuple(model.classes))
    keys = [(mkey, drawing_digest(k)) for k in inks]
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
    with progress_bar(total=len(vs), desc="Style of renders", unit="word", leave=False,
                      enabled=progress and remote) as bar:
        i = 0
        for rows in chunks:
            for k, row in zip(ks[i:i + len(rows)], rows):
                memo[k] = row
            i += len(rows)
            bar.update(len(rows))
    return np.array([memo[k] for k in keys]).reshape(len(keys), model.n_classes)
