"""Page-parallel stages: a process pool gives the same files as a serial run, and the section-03 speed-ups
(classifiers trained side by side, identical renders read once) give the same scores as plain calls."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import CountingOCR
from pool_jobs import square as _square

from inkground_lib.components import style
from inkground_lib.core.dataset import load_dataset
from inkground_lib.core.ink import as_ink, ink_digest
from inkground_lib.core.parallel import LazyPool, check_workers, ordered_map
from inkground_lib.datasets.synth.generate import SynthParams, generate
from inkground_lib.evaluation.render_ocr import read_renders, seed_texts
from inkground_lib.evaluation.run import evaluate_dataset, evaluate_section
from inkground_lib.evaluation.settings import EvalSettings
from inkground_lib.pseudo.derender_stage import derender_dataset
from inkground_lib.pseudo.ocr_filter import ocr_filter

TINY_STYLE = {"height": 32, "width": 128, "epochs": 2, "batch_size": 16, "augment": False, "seed": 1,
              "render": {"height": 32, "pen_width": 2.0, "padding": 3}, "start": "random", "fit": "all"}


@pytest.fixture(scope="module")
def cand(tmp_path_factory):
    root = tmp_path_factory.mktemp("par") / "cand"
    generate(root, SynthParams(pages=5, words_min=2, words_max=5, words_mean=3, seed=11, width=600, height=760),
             progress=False, workers=1)
    return root


def _records(path: Path) -> list[dict]:
    """The cache records without their timing field (the only field that differs between runs)."""
    out = []
    for line in path.read_text("utf-8").splitlines():
        rec = json.loads(line)
        rec.pop("seconds")
        out.append(rec)
    return out


@pytest.mark.slow  # process pool
def test_ordered_map_keeps_order_and_raises_at_the_failing_job():
    jobs = [0, 1, 2, 4, 5, 6]
    assert list(ordered_map(_square, jobs, workers=2, min_jobs=1)) == [j * j for j in jobs]
    it = ordered_map(_square, [1, 2, 3, 4], workers=2, min_jobs=1)
    assert next(it) == 1 and next(it) == 4
    with pytest.raises(ValueError, match="job 3 fails"):
        next(it)
    with pytest.raises(ValueError, match="workers"):
        check_workers(0)


@pytest.mark.slow  # process pool
def test_lazy_pool_starts_nothing_until_submit():
    with LazyPool(2) as pool:
        assert pool._ex is None
        fut = pool.submit(_square, 5)
        assert fut.result() == 25 and pool._ex is not None
    with LazyPool(1) as pool:  # one worker: runs at once, failures arrive through the future
        with pytest.raises(ValueError, match="job 3"):
            pool.submit(_square, 3).result()


@pytest.mark.slow  # process pool
def test_derender_and_ocr_filter_in_a_pool_write_the_serial_files(cand, tmp_path):
    ds = load_dataset(cand)
    serial, pooled = tmp_path / "serial", tmp_path / "pooled"
    p1 = derender_dataset(ds, "skeleton", serial, progress=False, workers=1)
    p2 = derender_dataset(ds, "skeleton", pooled, progress=False, workers=2)
    assert all(p1[k] == p2[k] for k in p1) and p1.keys() == p2.keys()
    assert _records(serial / "derender-skeleton.jsonl") == _records(pooled / "derender-skeleton.jsonl")
    o1 = ocr_filter(ds, p1, "rapidocr", run_dir=serial, progress=False, workers=1)
    o2 = ocr_filter(ds, p2, "rapidocr", run_dir=pooled, progress=False, workers=2)
    pd.testing.assert_frame_equal(o1.words, o2.words)
    pd.testing.assert_frame_equal(o1.pages, o2.pages)
    assert _records(serial / "ocr-rapidocr.jsonl") == _records(pooled / "ocr-rapidocr.jsonl")
    assert o1.words["ocr_rendered"].str.len().gt(0).any()  # the engine really read something


@pytest.mark.slow  # process pool
def test_section_02_shares_one_pool_and_a_run_with_nothing_to_do_starts_none(cand, tmp_path, monkeypatch):
    """Issue 42: the pipeline's stages (crop readings, derendering, OCR filter, truth) run in one pool, whose
    workers load the OCR engine and the derenderer once; a run that finds everything logged starts no pool."""
    from inkground_lib.core import parallel
    from inkground_lib.pseudo.run import run_pseudo_labels

    started = []
    real = parallel.process_pool
    monkeypatch.setattr(parallel, "process_pool", lambda workers: started.append(workers) or real(workers))
    assert parallel.executor_workers(LazyPool(3)) == 3
    kw = {"derenderer": "tracer-recognize", "progress": False}
    one = run_pseudo_labels(cand, tmp_path / "one", workers=1, **kw)
    assert started == []
    two = run_pseudo_labels(cand, tmp_path / "two", workers=2, **kw)
    assert started == [2]  # one pool for every stage
    pd.testing.assert_frame_equal(one.words, two.words)
    pd.testing.assert_frame_equal(one.pages, two.pages)
    for name in ("derender-tracer.jsonl", "ocr-crops-rapidocr.jsonl", "ocr-rapidocr.jsonl"):
        assert _records(tmp_path / "one" / name) == _records(tmp_path / "two" / name), name
    run_pseudo_labels(cand, tmp_path / "two", workers=2, **kw)
    assert started == [2]  # everything logged: no pool started


@pytest.mark.slow  # process pool
def test_a_classifier_trained_in_a_pool_has_the_serial_weights(cand, tmp_path):
    ds = load_dataset(cand)
    items = [(w.true_ink, p.writer) for p in ds.pages for w in p.words]
    params = style.StyleParams.from_dict(TINY_STYLE)
    style.train_style(items, params, tmp_path / "here", progress=False)
    with LazyPool(2) as pool:
        there = pool.submit(style.train_style, items, params, None, False).result()
    style.save_style(there, tmp_path / "there", len(items))
    meta_here = json.loads((tmp_path / "here" / style.META_FILE).read_text())
    meta_there = json.loads((tmp_path / "there" / style.META_FILE).read_text())
    assert meta_here["weights_sha256"] == meta_there["weights_sha256"]
    again = style.saved_style(tmp_path / "there", items, params)
    assert again is not None and again.trained is False
    assert style.saved_style(tmp_path / "there", items[::-1], params) is None  # other inputs: retrain


def test_identical_renders_are_read_once():
    a = as_ink([[[0, 0, 0], [30, 12, 10]]])
    b = as_ink([[[0, 0, 7], [30, 12, 99]]])   # the same strokes, other times: the same render
    c = as_ink([[[0, 0, 0], [30, 20, 10]]])
    ocr, memo = CountingOCR(), {}
    texts = read_renders(ocr, [a, c, b, []], memo)
    assert ocr.images == 3 and texts[0] == texts[2] and texts[0] != texts[1]
    assert read_renders(ocr, [c, a], memo) == [texts[1], texts[0]] and ocr.images == 3
    assert ink_digest(a) == ink_digest(b) != ink_digest(c)


def test_different_drawings_with_one_render_are_read_once(tmp_path):
    """Inks that draw different lines but render to the same image (a line and its scaled, shifted copy; the
    box system's outlines of wide words) are read once, in one call and across calls, with the texts of
    reading each alone; the render-OCR log still answers for every ink."""
    from inkground_lib.core.files import sha256_array
    from inkground_lib.core.render import render_ink
    from inkground_lib.evaluation.render_ocr_log import render_ocr_log_path, reused_render_texts

    a = as_ink([[[0, 0], [30, 12]]])
    b = as_ink([[[100, 50], [160, 74]]])  # a scaled, shifted: another drawing, the same render
    c = as_ink([[[0, 0], [30, 20]]])
    d = as_ink([[[5, 5], [95, 41]]])     # a again, scaled by 3
    assert sha256_array(render_ink(a)) == sha256_array(render_ink(b)) != sha256_array(render_ink(c))
    alone = [read_renders(CountingOCR(), [k])[0] for k in (a, b, c, d)]
    ocr, memo = CountingOCR(), {}
    log = render_ocr_log_path(tmp_path, ocr)
    assert read_renders(ocr, [a, b, c], memo, log=log) == alone[:3] and ocr.images == 2
    assert read_renders(ocr, [d], memo) == alone[3:] and ocr.images == 2  # the memo knows the render
    digests = {ink_digest(k) for k in (a, b, c)}
    assert set(reused_render_texts(log, ocr, digests)) == digests


def test_drawings_sharing_a_render_get_one_style_row(tmp_path):
    """Drawings the OCR of renders found to share a render are given one feature row, computed once, equal to the
    row each would get alone, and kept in the run's store for each of them."""
    from inkground_lib.components.style.backbone import load_backbone
    from inkground_lib.components.style.params import StyleParams
    from inkground_lib.evaluation.style_features import read_store, style_features

    a = as_ink([[[0, 0], [30, 12], [40, 2]]])
    b = as_ink([[[100, 50], [160, 74], [180, 54]]])  # a scaled by 2 and shifted: the same render
    c = as_ink([[[0, 0], [30, 20]]])
    bb, params = load_backbone(), StyleParams()
    alone = style_features(bb, params, [b])
    seen = []
    counting = type("Counting", (), {"sha256": bb.sha256,
                                     "features": lambda self, x, p: (seen.append(len(x)), bb.features(x, p))[1]})()
    memo = {}
    read_renders(CountingOCR(), [a, b, c], memo)
    rows = style_features(counting, params, [a, b, c], memo, store=tmp_path)
    assert sum(seen) == 2 and np.array_equal(rows[0], rows[1]) and np.array_equal(rows[1], alone[0])
    assert not np.array_equal(rows[0], rows[2])
    from inkground_lib.components.style.backbone import feature_key
    assert len(read_store(tmp_path, feature_key(bb.sha256, params))) == 3


@pytest.mark.slow  # process pool
def test_a_head_fitted_on_a_pool_equals_the_head_fitted_here(tmp_path):
    """The book's classifiers fit their heads as pool jobs, side by side: the same head, bit for bit."""
    from inks import hershey_ink

    from inkground_lib.components.style.params import StyleParams

    words = ["cat", "house", "on", "the", "hill", "sun"]
    items = [(hershey_ink(w, 0.02 * i + 0.3 * (i % 3)), f"writer{i % 3}") for i, w in enumerate(words * 3)]
    params = StyleParams()
    here = style.train_style(items, params, None, False)
    with LazyPool(2) as pool:
        there = style.train_style(items, params, None, False, executor=pool)
    for name, arr in here.head.arrays().items():
        assert np.array_equal(arr, there.head.arrays()[name]), name
    assert here.head.classes == there.head.classes


@pytest.mark.slow  # process pool
def test_evaluate_section_equals_three_plain_evaluations(cand, tmp_path):
    bench = cand  # a synth dataset: references are the true inks, so both scorings run
    settings = EvalSettings(n_boot=50, style=TINY_STYLE)
    systems = ["reference", "font", "box"]
    res = evaluate_section(bench, bench, systems, tmp_path / "a", tmp_path / "a_rec", settings, workers=2)
    plain = evaluate_dataset(bench, systems, tmp_path / "b", settings, progress=False)
    from dataclasses import replace
    plain_true = evaluate_dataset(bench, systems, tmp_path / "b", replace(settings, reference="true"),
                                  runs=plain.runs, progress=False)
    for got, want in ((res.bench, plain), (res.bench_true, plain_true), (res.rec, plain)):
        pd.testing.assert_frame_equal(got.scores, want.scores)
        pd.testing.assert_frame_equal(got.summary, want.summary)
    for ref in ("reference", "true"):
        a = (tmp_path / "a" / f"scores-{ref}.csv").read_bytes()
        assert a == (tmp_path / "b" / f"scores-{ref}.csv").read_bytes()
        sha = [json.loads((tmp_path / d / f"style-{ref}" / style.META_FILE).read_text())["weights_sha256"]
               for d in ("a", "b")]
        assert sha[0] == sha[1]
    assert np.isfinite(res.bench.scores["style_any"]).all() and res.bench.style["trained_now"]


def test_the_benchmark_carries_the_ocr_of_its_references_and_section_03_reuses_it(cand, tmp_path):
    from inkground_lib.components.ocr import make_engine
    from inkground_lib.pseudo.benchmark import reference_ocr_texts
    from inkground_lib.pseudo.run import run_pseudo_labels

    ratings = tmp_path / "ratings.csv"  # every page rated 10 by one rater, K = 1: every page the OCR filter passes
    ratings.write_text("page,rater,score\n" + "".join(f"{p.id},r1,10\n" for p in load_dataset(cand).pages))
    res = run_pseudo_labels(cand, tmp_path / "run", ocr_threshold=0.0, ratings=ratings, progress=False, workers=1,
                            raters_per_pair=1)  # is kept
    bench = load_dataset(res.benchmark)
    texts = reference_ocr_texts(res.benchmark, "rapidocr")
    assert bench.n_words > 0 and len(texts) == len({ink_digest(w.ink) for w in bench.words()})
    assert reference_ocr_texts(res.benchmark, "tesseract") == {}  # another engine: nothing to reuse
    fresh = make_engine("rapidocr", progress=False)
    inks = [w.ink for w in bench.words()]
    assert read_renders(fresh, inks) == [texts[ink_digest(k)] for k in inks]  # identical by construction

    class Refuse(CountingOCR):
        name = "rapidocr"

        def read(self, images):
            raise AssertionError(f"asked to read {len(images)} renders already read in section 02")

    memo = {}
    seed_texts(memo, "rapidocr", inks, texts)  # as read_all_renders does with what the benchmark carries
    assert read_renders(Refuse(), inks, memo) == [texts[ink_digest(k)] for k in inks]


@pytest.mark.slow  # process pool, kill -9
def test_pool_workers_end_when_the_calling_process_is_killed(tmp_path):
    """kill -9 of the calling process: its workers stop within seconds instead of finishing their jobs."""
    import os
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "driver.py"
    script.write_text(
        "import os, time\n"
        "from inkground_lib.core.parallel import LazyPool\n"
        "def sleepy(path):\n"
        "    open(path, 'w').write(str(os.getpid()))\n"
        "    time.sleep(120)\n"
        "if __name__ == '__main__':\n"
        "    with LazyPool(2) as pool:\n"
        f"        f = pool.submit(sleepy, {str(tmp_path / 'worker.pid')!r})\n"
        "        f.result()\n")
    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path)
    pid_file = tmp_path / "worker.pid"
    for _ in range(300):
        if pid_file.is_file() and pid_file.read_text():
            break
        time.sleep(0.1)
    worker = int(pid_file.read_text())
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    for _ in range(100):
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(worker, signal.SIGKILL)
        raise AssertionError("the pool worker outlived the killed calling process by 10 s")


def test_windowed_map_keeps_order_and_bounds_the_jobs_in_flight():
    from concurrent.futures import ThreadPoolExecutor

    from inkground_lib.core.parallel import executor_workers, windowed_map

    submitted = []

    def jobs():
        for j in range(10):
            submitted.append(j)
            yield j

    got = []
    with ThreadPoolExecutor(2) as ex:
        assert executor_workers(ex) == 2 and executor_workers(None) == 1
        for r in windowed_map(ex, _square_ok, jobs(), window=3):
            got.append(r)
            assert len(submitted) - len(got) <= 2  # at most 3 submitted and not yet yielded
    assert got == [j * j for j in range(10)]


def _square_ok(x):
    return x * x


@pytest.mark.slow  # process pool
def test_read_renders_on_an_executor_shows_a_bar_and_reads_what_this_process_reads(capsys):
    """The paper-scale run's OCR of renders goes through an executor in batches: same texts, and a progress
    bar of the renders read (no bar without ``progress``)."""
    from concurrent.futures import ThreadPoolExecutor

    from inks import hershey_ink

    from inkground_lib.components.ocr import make_engine
    from inkground_lib.core.defaults import OCR_BATCH_WORDS

    ocr = make_engine("rapidocr", progress=False)
    words = ["cat", "house", "on", "the", "hill"] * (OCR_BATCH_WORDS // 5 + 1)
    inks = [hershey_ink(w, 0.01 * i) for i, w in enumerate(words)]  # distinct inks, more than one batch
    here = read_renders(ocr, inks)
    capsys.readouterr()
    with ThreadPoolExecutor(2) as ex:
        assert read_renders(ocr, inks, {}, ex, progress=True) == here
        err = capsys.readouterr().err
        assert "OCR of renders (rapidocr)" in err and "100%" in err
        assert read_renders(ocr, inks, {}, ex) == here
        assert "OCR of renders" not in capsys.readouterr().err


def test_a_system_run_keeps_its_inks_as_arrays_and_its_records_without_strokes(cand, tmp_path):
    """Memory at the paper's scale: the cache file keeps every record whole, the run in memory keeps the
    parsed inks and the records without their nested-list strokes (~4x the ink's memory)."""
    from inkground_lib.core.files import read_jsonl
    from inkground_lib.evaluation.cache import cache_path
    from inkground_lib.evaluation.items import make_items, record_ink
    from inkground_lib.evaluation.predict import predict_system

    ds = load_dataset(cand)
    run = predict_system("box", ds, tmp_path, progress=False)
    on_disk = [r for _, r in read_jsonl(cache_path(tmp_path, "box"), lambda r: isinstance(r, dict))]
    assert len(run.records) == len(on_disk) == ds.n_words
    assert all("strokes" not in r for r in run.records) and all(r.get("strokes") for r in on_disk)
    by_id = {r["word_id"]: r for r in on_disk}
    for rec, ink, item in zip(run.records, run.inks, make_items(ds, with_prompt=False)):
        assert rec == {k: v for k, v in by_id[rec["word_id"]].items() if k != "strokes"}
        expected, _ = record_ink(by_id[rec["word_id"]], item.page_size)
        assert len(ink) == len(expected) and all(np.array_equal(a, b, equal_nan=True) for a, b in zip(ink, expected))


@pytest.mark.slow  # process pool
def test_a_classifier_trained_in_an_executor_draws_its_bar_only_when_given_a_line(cand, tmp_path, capsys):
    """paper-scale's Style stage: each worker draws its classifier's training bar on a line of its own; the
    notebooks' workers draw none (a kernel would print them into the page); the weights do not depend on it."""
    from concurrent.futures import ThreadPoolExecutor

    from inkground_lib.evaluation.style_stage import start_style_classifier

    ds = load_dataset(cand)
    settings = EvalSettings(style=TINY_STYLE)
    capsys.readouterr()
    with ThreadPoolExecutor(1) as ex:
        quiet, _ = start_style_classifier(ds, tmp_path / "a", settings, ex, True)()
        assert "Style training" not in capsys.readouterr().err
        shown, _ = start_style_classifier(ds, tmp_path / "b", settings, ex, True, bar_position=0)()
        assert "Style training (on references)" in capsys.readouterr().err
    a, b = quiet.model.state_dict(), shown.model.state_dict()
    assert all(torch_equal(a[k], b[k]) for k in a)


def torch_equal(a, b) -> bool:
    import torch

    return bool(torch.equal(a, b))


@pytest.mark.slow  # process pool, kill -9
def test_the_render_ocr_log_is_reused_after_a_kill_and_written_the_same_with_or_without_an_executor(tmp_path,
                                                                                                  monkeypatch):
    """paper-scale's OCR of renders is resumable: each batch is logged as it is read; a rerun reads only the
    renders not logged yet (a torn last line is dropped), and the log is the same file with or without an
    executor."""
    from concurrent.futures import ThreadPoolExecutor

    from inks import hershey_ink

    from inkground_lib.components.ocr import make_engine
    from inkground_lib.core.defaults import OCR_BATCH_WORDS
    from inkground_lib.evaluation.render_ocr_log import read_render_texts

    ocr = make_engine("rapidocr", progress=False)
    inks = [hershey_ink(w, 0.01 * i) for i, w in enumerate(["cat", "on", "hill"] * (OCR_BATCH_WORDS // 3 + 2))]
    serial, pooled = tmp_path / "serial.jsonl", tmp_path / "pooled.jsonl"
    texts = read_renders(ocr, inks, {}, log=serial)
    with ThreadPoolExecutor(2) as ex:
        assert read_renders(ocr, inks, {}, ex, log=pooled) == texts
    assert serial.read_bytes() == pooled.read_bytes() and len(serial.read_bytes().splitlines()) == 2
    assert read_render_texts(serial, ocr) == {ink_digest(k): t for k, t in zip(inks, texts)}

    first = serial.read_bytes().splitlines(keepends=True)[0]
    serial.write_bytes(first + b'{"schema": "inkground-render-ocr", "tex')  # killed during the second batch

    read, asked = ocr.read, []
    monkeypatch.setattr(ocr, "read", lambda images: asked.append(len(images)) or read(images))
    assert read_renders(ocr, inks, {}, log=serial) == texts
    assert asked == [len(inks) - OCR_BATCH_WORDS]  # only the renders of the batch not logged were read
    assert serial.read_bytes() == pooled.read_bytes()


@pytest.mark.slow  # process pool
def test_a_classifier_trained_in_an_executor_resumes_at_its_last_finished_epoch(cand, tmp_path):
    """A run killed during Style training: the epochs before the kill are kept in the model folder; the rerun
    submits only the rest, gives the weights of an uninterrupted training and removes the checkpoint."""
    from concurrent.futures import ThreadPoolExecutor

    from inkground_lib.evaluation.items import reference_inks
    from inkground_lib.evaluation.style_stage import start_style_classifier

    ds = load_dataset(cand)
    settings = EvalSettings(style=TINY_STYLE)
    params = style.StyleParams.from_dict(TINY_STYLE)
    train = [(ink, p.writer) for ink, (w, p) in zip(reference_inks(ds), [(w, p) for p in ds.pages for w in p.words])
             if w.split == "train"]
    whole = style.train_style(train, params, progress=False)
    folder = tmp_path / "run" / "style-reference"
    style.save_checkpoint(folder, style.train_epochs(train, params, None, 1), train, params)  # killed after 1

    class Counting(ThreadPoolExecutor):
        jobs = 0

        def submit(self, fn, *args, **kwargs):
            Counting.jobs += 1
            return super().submit(fn, *args, **kwargs)

    with Counting(1) as ex:
        resumed, facts = start_style_classifier(ds, tmp_path / "run", settings, ex, False, resumable=True)()
    assert Counting.jobs == params.epochs - 1 and facts["trained_now"]
    a, b = whole.model.state_dict(), resumed.model.state_dict()
    assert all(torch_equal(a[k], b[k]) for k in a) and resumed.losses == whole.losses
    assert not (folder / style.CHECKPOINT_FILE).exists() and (folder / style.META_FILE).is_file()
    # without ``resumable`` (the book's classifiers) one job trains to the end and no checkpoint is written
    Counting.jobs = 0
    with Counting(1) as ex:
        again, _ = start_style_classifier(ds, tmp_path / "book", settings, ex, False)()
    assert Counting.jobs == 1 and not (tmp_path / "book" / "style-reference" / style.CHECKPOINT_FILE).exists()
    c = again.model.state_dict()
    assert all(torch_equal(a[k], c[k]) for k in a)


class RecordingPool:
    """A 2-process pool that records the jobs it was given (what ran where is the pool's, not this test's)."""

    def __init__(self, pool):
        self.pool, self.jobs = pool, []

    def submit(self, fn, *args):
        self.jobs.append((fn.__name__, args))
        return self.pool.submit(fn, *args)


def _pid(_):
    import os

    return os.getpid()


@pytest.mark.slow  # process pool
def test_the_style_of_renders_on_an_executor_has_the_rows_of_this_process(cand, tmp_path, capsys, monkeypatch):
    """Scoring's Style of renders in a pool (the paper-scale run): the rows are those computed here, bit for
    bit (whole inference batches per job), the jobs ran in the workers from the model folder, identical
    renders were classified once; a bar only with ``progress``; a folder whose model changed is refused."""
    import os

    from inkground_lib.evaluation.style_stage import style_rows

    ds = load_dataset(cand)
    items = [(w.true_ink, p.writer) for p in ds.pages for w in p.words]
    params = style.StyleParams.from_dict({**TINY_STYLE, "eval_batch_size": 1})
    monkeypatch.chdir(tmp_path)
    model = style.train_style(items, params, Path("m"), progress=False)  # a relative folder: sent absolute
    inks = [ink for ink, _ in items] + [items[0][0]]  # a repeated ink
    here = style_rows(model, inks)
    with LazyPool(2) as pool:
        rec = RecordingPool(pool)
        assert style_rows(model, inks, {}, rec, progress=True).tobytes() == here.tobytes()
        assert "Style of renders" in capsys.readouterr().err
        jobs = [a[0] for name, a in rec.jobs if name == "_style_rows_job"]
        assert len(jobs) >= 2 and sum(len(j[3]) for j in jobs) == len(items)  # the repeat: classified once
        assert all(len(j[3]) == 8 for j in jobs[:-1]) and jobs[0][0] == str((tmp_path / "m").resolve())
        assert os.getpid() not in {pool.submit(_pid, i).result() for i in range(4)}
        memo: dict = {}
        style_rows(model, inks, memo, rec)
        n = len(rec.jobs)
        style_rows(model, inks, memo, rec)  # all in memo: nothing submitted
        assert len(rec.jobs) == n
    # another model written into the folder: fresh workers loading it refuse to score with it
    other = style.train_style(items[::-1], params, tmp_path / "m2", progress=False)
    assert other.input_hash != model.input_hash
    for name in (style.META_FILE, style.WEIGHTS_FILE):
        (tmp_path / "m" / name).write_bytes((tmp_path / "m2" / name).read_bytes())
    with LazyPool(2) as pool, pytest.raises(style.StyleError, match="not the one being scored"):
        style_rows(model, inks, {}, pool)
