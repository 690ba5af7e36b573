"""The paper's scale end to end: 2,984 candidate pages -> pseudo-labels -> benchmark -> the local systems scored
with every metric -> section tables (``inkground paper-scale --out DIR``).

Stages, each resumable (a rerun after ``kill -9`` at any point skips finished work):

* ``synth``: the candidate pages (:func:`inkground_lib.datasets.synth.generate.generate`; pages already
  written are reused);
* ``pseudo``: section 02 (:func:`inkground_lib.pseudo.run.run_pseudo_labels`: derendering and the OCR filter
  are cached page by page, then raters and the benchmark set);
* ``predict``: the local systems on the benchmark (cached per word) and the OCR of their renders;
* ``style``: the two writer classifiers (pseudo-label and true references), trained side by side in the
  executor once ``predict`` is done (so each stage's seconds are its own), one epoch per job; this process
  keeps each training's state after every epoch and saves the models (a kill loses at most an epoch);
* ``score``: the systems' runs reloaded from their caches (not kept through the Style training), every metric
  against the references and against the true inks (the Style of the renders in the executor), and the section
  tables (not logged as it goes: a kill while scoring scores again, ~9 min at the full scale).

Every page-parallel step runs on one Executor (:func:`inkground_lib.core.parallel.executor`: a local process
pool of ``workers``, or a Dask cluster given its scheduler's address); workers only compute, this process
writes every file. ``stages.json`` records each finished stage with its seconds, items, throughput and the
peak memory seen so far (this process and its children, sampled each second with psutil), as measured by the
invocation that finished it: a later invocation that only reloads a finished stage (``predict`` and ``style``
are reloaded to score) adds ``reloaded_seconds`` and keeps the measurement.

Folder ``OUT``: ``candidates/`` (dataset), ``02_pseudo_labels/`` (run; ``benchmark/`` inside),
``03_evaluation/`` (run: prediction caches, the OCR log of the renders, the classifiers), ``tables/`` (CSV and
Markdown), ``stages.json``.
"""

from __future__ import annotations

import gc
import json
import threading
import time
from concurrent.futures import Executor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Optional

from inkground_lib.core.csv_cells import write_csv
from inkground_lib.core.defaults import (
    DERENDERER,
    PAPER_CANDIDATE_PAGES,
    PAPER_SCALE_SEED,
    PAPER_SCALE_SYSTEMS,
)
from inkground_lib.core.files import atomic_write_json, atomic_write_text
from inkground_lib.core.metric_table import metric_names
from inkground_lib.core.folders import run_folder

STAGES = ("synth", "pseudo", "predict", "style", "score")
"""The stages of :func:`run_paper_scale`, in order (``style`` overlaps ``predict`` in the executor)."""

STAGES_FILE = "stages.json"
"""Stage completion record inside the output folder (written atomically after each stage)."""

SUMMARY_COLUMNS = ["system", "label", "n_words", "n_pages", "valid_rate", *metric_names()]
"""Columns of the section-03 tables written by the ``score`` stage (every metric of the table as loaded)."""


@dataclass(frozen=True)
class PaperScaleParams:
    """What a paper-scale run computes (every field goes into ``stages.json``; a rerun with other values
    recomputes the stages that depend on them, the caches keep what is still valid).

    pages: candidate pages (the paper: 2,984); seed: their seed; systems: local systems scored; style:
    StyleParams fields for both writer classifiers (empty: the book's recipe, ``StyleParams()``);
    derenderer, ocr: section 02's components by name; synth: other SynthParams fields of the candidates
    (empty: the defaults, as ``inkground synth``; tests use small pages)."""

    pages: int = PAPER_CANDIDATE_PAGES
    seed: int = PAPER_SCALE_SEED
    systems: tuple = PAPER_SCALE_SYSTEMS
    style: dict = field(default_factory=dict)
    derenderer: str = DERENDERER
    ocr: str = "rapidocr"
    synth: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["systems"] = list(self.systems)
        return d


class PeakMemory:
    """Peak memory (bytes) of this process plus all its descendants (pool workers), sampled every ``interval``
    seconds with psutil in a daemon thread, as the sum of each process's PSS (proportional set size: pages
    shared between the forked workers are counted once in all, not once per process; RSS where PSS cannot be
    read); also the peak of this process alone. A Dask cluster's workers are not our children and are not
    counted (the cluster's dashboard shows them)."""

    def __init__(self, interval: float = 1.0):
        import psutil

        self._proc = psutil.Process()
        self.interval = float(interval)
        self.peak_total = self.peak_self = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> None:
        import psutil

        def pss(p) -> int:
            try:
                return int(p.memory_full_info().pss)
            except (AttributeError, psutil.AccessDenied):
                return int(p.memory_info().rss)

        own = pss(self._proc)
        total = own
        for c in self._proc.children(recursive=True):
            try:
                total += pss(c)
            except psutil.Error:  # ended between listing and reading
                pass
        self.peak_self = max(self.peak_self, own)
        self.peak_total = max(self.peak_total, total)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def __enter__(self) -> "PeakMemory":
        self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()


def read_stages(out_dir) -> dict:
    """The stage record of ``out_dir`` ({"params": ..., "stages": {name: facts}}), empty if none."""
    path = Path(out_dir) / STAGES_FILE
    try:
        d = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {"params": None, "stages": {}}
    return d if isinstance(d, dict) and isinstance(d.get("stages"), dict) else {"params": None, "stages": {}}


def _gb(n: int) -> float:
    return round(n / 1e9, 3)


class _Record:
    """``stages.json``: which stages are finished, with their facts; written atomically after each stage."""

    def __init__(self, out: Path, params: PaperScaleParams, mem: PeakMemory, scheduler):
        self.path = out / STAGES_FILE
        self.mem = mem
        d = read_stages(out)
        self.params = params.as_dict()
        self.data = d if d.get("params") == self.params else {"params": self.params, "stages": {}}
        self.data["executor"] = "dask" if scheduler else "process pool"

    def done(self, stage: str) -> bool:
        return stage in self.data["stages"]

    def finish(self, stage: str, seconds: float, items: int, unit: str, **facts) -> dict:
        self.mem.sample()
        rec = {"seconds": round(seconds, 2), "items": int(items), "unit": unit,
               "rate_per_s": round(items / seconds, 2) if seconds > 0 else None,
               "peak_memory_gb": _gb(self.mem.peak_total), "peak_driver_gb": _gb(self.mem.peak_self),
               "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **facts}
        self.data["stages"][stage] = rec
        atomic_write_json(self.path, self.data)
        return rec

    def reloaded(self, stage: str, seconds: float) -> dict:
        """A stage finished by an earlier invocation and only reloaded by this one (``predict`` and ``style``
        are reloaded from their caches and model folders to score): its record keeps the measurement of the
        invocation that did the work, with this reload's seconds beside it as ``reloaded_seconds``."""
        rec = self.data["stages"][stage]
        rec["reloaded_seconds"] = round(seconds, 2)
        atomic_write_json(self.path, self.data)
        return rec


def run_paper_scale(out_dir, params: PaperScaleParams = PaperScaleParams(), *, workers: Optional[int] = None,
                    scheduler=None, progress: bool = True, overwrite: bool = False, log=print) -> dict:
    """Run (or resume) the paper-scale pipeline into ``out_dir`` (see the module doc) and return the stage
    record (``stages.json``'s content, with ``peak_memory_gb`` for the whole run).

    ``workers``: local processes (None: every core); ``scheduler``: a Dask scheduler address (or cluster
    object) to run the page-parallel work on instead. ``out_dir`` must be new, empty or an earlier paper-scale
    run (else FolderError unless ``overwrite``); it is locked while the run writes. ``log``: one line per
    finished stage."""
    from inkground_lib.core.parallel import executor

    t0 = time.perf_counter()
    with run_folder(out_dir, "paper-scale", legacy=(STAGES_FILE,), overwrite=overwrite) as out:
        with PeakMemory() as mem, executor(workers, scheduler) as ex:
            rec = _Record(out, params, mem, scheduler)
            _run(out, params, ex, rec, progress, log)
        # over every stage recorded (a resumed run's earlier stages included) and this invocation
        stages = rec.data["stages"].values()
        rec.data["peak_memory_gb"] = max([_gb(mem.peak_total)] + [s["peak_memory_gb"] for s in stages])
        rec.data["peak_driver_gb"] = max([_gb(mem.peak_self)] + [s["peak_driver_gb"] for s in stages])
        # wall time of this invocation (a resumed run: of the resumed part; each stage's seconds: the invocation that
        # finished it)
        rec.data["total_seconds"] = round(time.perf_counter() - t0, 2)
        atomic_write_json(rec.path, rec.data)
        return rec.data


def _log_stage(log, name: str, r: dict) -> None:
    rate = f", {r['rate_per_s']:g} {r['unit']}/s" if r.get("rate_per_s") else ""
    log(f"paper-scale: {name} done in {r['seconds']:.0f} s ({r['items']} {r['unit']}{rate}); peak memory so far "
        f"{r['peak_memory_gb']:.2f} GB")


def _log_sizes(eval_run: Path) -> dict:
    """{file: size} of the logs the predict stage appends to (prediction caches, the OCR log of the renders):
    unchanged sizes mean a rerun only reloaded them."""
    from inkground_lib.core.run_files import predictions_dir, render_ocr_logs  # (pandas: not for `inkground --help`)

    files = list(predictions_dir(eval_run).glob("*.jsonl")) + render_ocr_logs(eval_run)
    return {f.name: f.stat().st_size for f in files}


def _log_reloaded(log, name: str, r: dict) -> None:
    log(f"paper-scale: {name} already done (reloaded in {r['reloaded_seconds']:.0f} s; its record keeps the "
        f"{r['seconds']:.0f} s of the run that did it)")


def _run(out: Path, params: PaperScaleParams, ex: Optional[Executor], rec: _Record, progress: bool, log) -> None:
    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.core.run_files import benchmark_dir, pseudo_summary_json
    from inkground_lib.datasets.synth.generate import SynthParams, generate

    cand, pseudo_run, eval_run, tables = out / "candidates", out / "02_pseudo_labels", out / "03_evaluation", out / "tables"
    bench = benchmark_dir(pseudo_run)

    if rec.done("synth") and (cand / "manifest.json").is_file():
        log("paper-scale: synth already done")
    else:
        t = time.perf_counter()
        generate(cand, SynthParams.from_dict({**params.synth, "pages": params.pages, "seed": params.seed}),
                 progress=progress, executor=ex,
                 workers=1 if ex is None else None)
        ds = load_dataset(cand, check_images=False)
        _log_stage(log, "synth", rec.finish("synth", time.perf_counter() - t, len(ds.pages), "pages",
                                            words=ds.n_words))

    if rec.done("pseudo") and (bench / "manifest.json").is_file() and pseudo_summary_json(pseudo_run).is_file():
        log("paper-scale: pseudo already done")
    else:
        _pseudo(cand, pseudo_run, tables, params, ex, rec, progress, log)
        gc.collect()  # section 02's result (every candidate word's pseudo-label) is not needed from here on

    if rec.done("score") and (tables / "03_summary-true.csv").is_file():
        log("paper-scale: predict, style and score already done")
        return
    _evaluate(bench, eval_run, tables, params, ex, rec, progress, log)


def _pseudo(cand: Path, pseudo_run: Path, tables: Path, params: PaperScaleParams, ex, rec: _Record, progress: bool,
            log) -> None:
    """Section 02 on the candidates (a function of its own so that its result, ~1 GB at the paper's scale, is
    freed before the evaluation stages)."""
    from inkground_lib.pseudo.run import run_pseudo_labels

    t = time.perf_counter()
    res = run_pseudo_labels(cand, pseudo_run, derenderer=params.derenderer, ocr=params.ocr, progress=progress,
                            executor=ex, workers=1 if ex is None else None)
    n_words = len(res.words)
    tables.mkdir(parents=True, exist_ok=True)
    from inkground_lib.report.pseudo_labels import funnel_table

    ft = funnel_table(res)
    write_csv(tables / "02_funnel.csv", ft)
    atomic_write_text(tables / "02_funnel.md", ft.to_markdown(index=False) + "\n")
    tm = res.timings
    _log_stage(log, "pseudo", rec.finish(
        "pseudo", time.perf_counter() - t, len(res.pages), "pages", words=n_words,
        derender_seconds=tm.get("derender"), ocr_seconds=tm.get("ocr"),
        derender_words_per_s=round(n_words / tm["derender"], 2) if tm.get("derender") else None,
        ocr_reads_per_s=round(2 * n_words / tm["ocr"], 2) if tm.get("ocr") else None,
        benchmark_pages=int(res.pages["kept"].sum()),
        benchmark_words=int(res.pages.loc[res.pages["kept"], "words"].sum())))


def _evaluate(bench: Path, eval_run: Path, tables: Path, params: PaperScaleParams, ex, rec: _Record,
              progress: bool, log) -> None:
    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.evaluation.items import target_dataset
    from inkground_lib.evaluation.predict import eval_run_folder, run_systems
    from inkground_lib.evaluation.render_ocr import read_all_renders
    from inkground_lib.evaluation.run import evaluate_dataset
    from inkground_lib.evaluation.settings import EvalSettings
    from inkground_lib.evaluation.style_stage import start_style_classifier

    ds = target_dataset(load_dataset(bench))  # the words section 03 scores (one target, one question)
    settings = EvalSettings(style=dict(params.style))
    true_settings = replace(settings, reference="true")
    memo: dict = {}
    with eval_run_folder(eval_run, "eval"):
        t = time.perf_counter()
        logged = _log_sizes(eval_run)
        runs, unavailable = run_systems(ds, list(params.systems), eval_run, settings.grid, progress, None, ex)
        read_all_renders(ds, runs.values(), settings, memo, progress, ex, log_dir=eval_run)  # resumable
        if unavailable:
            raise RuntimeError(f"paper-scale: systems that cannot run here: {unavailable}")
        n_pred = ds.n_words * len(runs)
        # its record is the measurement of the run that predicted; a rerun that predicted or read anything (its
        # caches deleted, say) measured the stage again
        if rec.done("predict") and _log_sizes(eval_run) == logged:
            _log_reloaded(log, "predict", rec.reloaded("predict", time.perf_counter() - t))
        else:
            _log_stage(log, "predict", rec.finish("predict", time.perf_counter() - t, n_pred, "predictions",
                                                  systems=list(runs), words=ds.n_words))
        # the systems' runs (~0.8 GB at the paper's scale) are not kept through the hour of Style training:
        # scoring reloads them from the caches just written (~25 s)
        del runs
        gc.collect()
        # both classifiers: heads on the backbone's features (computed in the executor, kept in the run's feature
        # store), or networks trained side by side in the executor (or here, one after the other, without one);
        # started after predict, whose page jobs would otherwise queue behind them in a 2-worker pool
        t_style = time.perf_counter()
        # one bar of epochs per classifier, on lines 0 and 1
        style_b = start_style_classifier(ds, eval_run, settings, ex, progress, bar_position=0, resumable=True,
                                         memo=memo)
        style_t = start_style_classifier(ds, eval_run, true_settings, ex, progress, bar_position=1, resumable=True,
                                         memo=memo)
        model_b, facts_b = style_b()
        model_t, facts_t = style_t()
        n_train = facts_b["n_train"] + facts_t["n_train"]
        if rec.done("style") and not (facts_b["trained_now"] or facts_t["trained_now"]):  # both models loaded
            _log_reloaded(log, "style", rec.reloaded("style", time.perf_counter() - t_style))
        else:
            _log_stage(log, "style", rec.finish(
                "style", time.perf_counter() - t_style, n_train, "training words",
                recipe=settings.style or "book (StyleParams())", classes=facts_b["n_classes"],
                top1_reference=facts_b["top1"], top1_true=facts_t["top1"], chance=facts_b["chance"],
                trained_now=bool(facts_b["trained_now"] or facts_t["trained_now"])))
        t = time.perf_counter()
        runs, _ = run_systems(ds, list(params.systems), eval_run, settings.grid, progress, None, ex)  # cached
        read_all_renders(ds, runs.values(), settings, memo, progress, ex, log_dir=eval_run)  # from its log
        out = {}
        for st, model, facts in ((settings, model_b, facts_b), (true_settings, model_t, facts_t)):
            out[st.reference] = evaluate_dataset(ds, list(params.systems), eval_run, st, progress=progress,
                                                 runs=runs, style=lambda m=model, f=facts: (m, f), memo=memo,
                                                 executor=ex)
        tables.mkdir(parents=True, exist_ok=True)
        for ref, res in out.items():
            cols = [c for c in SUMMARY_COLUMNS if c in res.summary.columns]
            tab = res.summary[cols]
            write_csv(tables / f"03_summary-{ref}.csv", tab)
            atomic_write_text(tables / f"03_summary-{ref}.md", tab.to_markdown(index=False, floatfmt=".3f") + "\n")
        n_scored = sum(len(r.scores) for r in out.values())
        _log_stage(log, "score", rec.finish("score", time.perf_counter() - t, n_scored, "word scores"))
