"""Issue 42: a rerun computes only what is new. Every content-keyed store (predictions, OCR readings of renders
and crops, derender logs, traces, truth comparisons) finds what the book's run or an earlier rerun holds under
the same key (core.earlier_runs), only reads those runs, and keeps what it took in its own folder."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import CountingOCR, make_tiny_dataset
from inkground_lib.components.derenderers import skeleton as skeleton_mod
from inkground_lib.components.derenderers.base import DerenderError
from inkground_lib.components.derenderers.traces import TraceStore, run_store, strokes_entry
from inkground_lib.core.dataset import load_dataset
from inkground_lib.core.earlier_runs import earlier_files, earlier_runs, run_home
from inkground_lib.core.ink import as_ink
from inkground_lib.core.run_files import derender_jsonl, ocr_jsonl, predictions_jsonl, traces_jsonl, truth_jsonl
from inkground_lib.datasets.synth.generate import SynthParams, generate
from inkground_lib.evaluation import render_ocr
from inkground_lib.evaluation.predict import plan_system, predict_system
from inkground_lib.evaluation.render_ocr_log import render_ocr_log_path
from inkground_lib.evaluation.systems.local import FontSystem
from inkground_lib.pseudo import truth
from inkground_lib.pseudo.run import run_pseudo_labels


def _tree(folder: Path) -> dict:
    """{relative path: sha256} of every file under ``folder`` (what must not change in the book's runs)."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_earlier_runs_are_the_books_then_every_reruns_by_name(tmp_path):
    below = Path("synth") / "03_evaluation"
    book = tmp_path / "data" / "runs" / below
    re_b, re_a = (tmp_path / "data" / "reruns" / n / below for n in ("b", "a"))
    for d in (book, re_b, re_a, tmp_path / "data" / "reruns" / "c" / "synth" / "02_pseudo_labels"):
        d.mkdir(parents=True)
    assert earlier_runs(re_b) == [book, re_a]  # the book's first, then the reruns by name, never itself
    assert earlier_runs(book) == [re_a, re_b]
    assert run_home(re_a / "predictions") == (tmp_path, below / "predictions")
    (book / "predictions").mkdir()
    (book / "predictions" / "font.jsonl").write_text("")
    assert earlier_files(re_a / "predictions" / "font.jsonl") == [book / "predictions" / "font.jsonl"]
    assert earlier_files(re_a / "predictions" / "box.jsonl") == []
    assert earlier_runs(tmp_path / "elsewhere" / "03_evaluation") == []  # not under data/runs or data/reruns


@pytest.fixture(scope="module")
def cand(tmp_path_factory):
    root = tmp_path_factory.mktemp("cand") / "synth"
    generate(root, SynthParams(pages=3, words_min=3, words_max=5, words_mean=4, seed=11, width=700, height=900),
             progress=False)
    return root


def _counting_skeleton(monkeypatch) -> list:
    traced = []
    trace = skeleton_mod.SkeletonDerenderer.trace
    monkeypatch.setattr(skeleton_mod.SkeletonDerenderer, "trace",
                        lambda self, *a, **k: traced.append(1) or trace(self, *a, **k))
    return traced


def test_a_rerun_of_section_02_reads_the_books_logs_and_writes_only_its_own(cand, tmp_path, monkeypatch):
    book = tmp_path / "data" / "runs" / "synth" / "02_pseudo_labels"
    rerun = tmp_path / "data" / "reruns" / "02_ocr_threshold-0.9" / "synth" / "02_pseudo_labels"
    traced = _counting_skeleton(monkeypatch)
    compared = []
    check = truth.stroke_order_check
    monkeypatch.setattr(truth, "stroke_order_check", lambda *a, **k: compared.append(1) or check(*a, **k))
    ocr = CountingOCR()
    kw = {"derenderer": "skeleton", "ocr": ocr, "workers": 1, "progress": False}
    first = run_pseudo_labels(cand, book, **kw)
    made = (len(traced), ocr.images, len(compared))
    assert made[0] > 0 and made[1] > 0 and made[2] > 0
    before = _tree(book)
    again = run_pseudo_labels(cand, rerun, ocr_threshold=0.9, **kw)
    assert (len(traced), ocr.images, len(compared)) == made  # nothing traced, read or compared again
    assert _tree(book) == before  # the book's run only read
    pd.testing.assert_frame_equal(first.words, again.words)
    for f in (derender_jsonl(rerun, "skeleton"), ocr_jsonl(rerun, "counting"), truth_jsonl(rerun)):
        assert f.is_file(), f  # what the rerun took is kept in its own folder
    # ... and it reads its own logs from then on: the book's run gone, still nothing is made
    for p in book.iterdir():
        if p.is_file():
            p.unlink()
    run_pseudo_labels(cand, rerun, ocr_threshold=0.9, **kw)
    assert (len(traced), ocr.images, len(compared)) == made


def test_records_of_another_dataset_never_match(cand, tmp_path, monkeypatch):
    book = tmp_path / "data" / "runs" / "synth" / "02_pseudo_labels"
    rerun = tmp_path / "data" / "reruns" / "02_candidates-other" / "synth" / "02_pseudo_labels"
    other = tmp_path / "other"
    generate(other, SynthParams(pages=3, words_min=3, words_max=5, words_mean=4, seed=12, width=700, height=900),
             progress=False)
    traced = _counting_skeleton(monkeypatch)
    ocr = CountingOCR()
    kw = {"derenderer": "skeleton", "ocr": ocr, "workers": 1, "progress": False}
    run_pseudo_labels(cand, book, **kw)
    n_traced, n_read = len(traced), ocr.images
    run_pseudo_labels(other, rerun, **kw)
    assert len(traced) > n_traced and ocr.images > n_read  # the same page ids, other photos: all made anew


def test_a_rerun_of_section_03_asks_nothing_the_books_run_answered(tmp_path, monkeypatch):
    ds = load_dataset(make_tiny_dataset(tmp_path / "tiny", pages=2, words=3, unique_texts=True))
    book = tmp_path / "data" / "runs" / "synth" / "03_evaluation"
    rerun = tmp_path / "data" / "reruns" / "03_systems-font" / "synth" / "03_evaluation"
    asked = []
    predict = FontSystem.predict
    monkeypatch.setattr(FontSystem, "predict", lambda self, it: asked.append(it.word_id) or predict(self, it))
    a = predict_system("font", ds, book, progress=False)
    assert len(asked) == 6
    before = _tree(book)
    assert plan_system("font", ds, rerun).cached == 6  # a dry run counts them as answered
    b = predict_system("font", ds, rerun, progress=False)
    assert len(asked) == 6 and _tree(book) == before  # nothing asked; the book's run only read
    assert [r["request_hash"] for r in a.records] == [r["request_hash"] for r in b.records]
    assert [k.n_points for k in a.inks] == [k.n_points for k in b.inks]
    lines = predictions_jsonl(rerun, "font").read_text().splitlines()
    assert len(lines) == 6  # copied into the rerun's own cache, in one write
    # another box (another dataset's word): another request key, asked
    for w in ds.pages[0].words:
        w.box = (w.box[0] + 1, *w.box[1:])
    predict_system("font", ds, rerun, progress=False)
    assert len(asked) == 9


def test_render_texts_are_read_once_across_runs(tmp_path):
    book = tmp_path / "data" / "runs" / "recorded" / "03_evaluation"
    rerun = tmp_path / "data" / "reruns" / "03_n_boot-9" / "recorded" / "03_evaluation"
    inks = [as_ink([[[0, 0], [10 * i + 5, 8]]]) for i in range(5)]
    reordered = [as_ink([[[10 * 2 + 5, 8], [0, 0]]])]  # the third ink's drawing, drawn the other way
    ocr = CountingOCR()
    texts = render_ocr.read_renders(ocr, inks, {}, log=render_ocr_log_path(book, ocr))
    assert ocr.images == 5
    assert render_ocr.read_renders(ocr, inks[1:] + reordered, {}, log=render_ocr_log_path(rerun, ocr)) \
        == texts[1:] + [texts[2]]
    assert ocr.images == 5  # the book's log answers
    # the rerun's log now holds the text of the drawing under its other order too (found in the memo): a run
    # asking for that ink alone reads nothing
    assert render_ocr.read_renders(ocr, reordered, {}, log=render_ocr_log_path(rerun, ocr)) == [texts[2]]
    assert ocr.images == 5
    other = OtherOCR()  # the same name, another engine (its class's source): its texts are never the book's
    render_ocr.read_renders(other, inks, {}, log=render_ocr_log_path(rerun, other))
    assert other.images == 5


class OtherOCR(CountingOCR):
    """CountingOCR defined in another file: another engine config (:func:`inkground_lib.pseudo.keys.engine_config`)."""


def test_a_runs_trace_store_reads_on_in_the_earlier_runs_and_never_writes_there(tmp_path):
    book = traces_jsonl(tmp_path / "data" / "runs" / "synth" / "02_pseudo_labels")
    mine = traces_jsonl(tmp_path / "data" / "reruns" / "x" / "synth" / "02_pseudo_labels")
    st = TraceStore(book)
    st.append([strokes_entry("k1", [np.array([[1.0, 2.0], [3.0, 4.0]])], 0.5)], "photo1")
    with open(book, "ab") as f:
        f.write(b'{"schema": "inkground-traces", "ph')  # another run writing its next line
    before = book.read_bytes()
    store = run_store(mine)
    assert store.get("k1")["key"] == "k1" and "k1" in store and store.reused_seconds == 0.5
    assert [e["key"] for e in store.for_photo("photo1")] == ["k1"]
    store.append([strokes_entry("k2", [np.array([[0.0, 0.0]])], 0.1)], "photo1")
    assert book.read_bytes() == before  # read, never repaired or appended to
    assert [json.loads(x)["entries"][0]["key"] for x in mine.read_text().splitlines()] == ["k2"]
    with pytest.raises(DerenderError, match="read-only"):
        store.earlier[0].append([strokes_entry("k3", [np.array([[0.0, 0.0]])], 0.1)], "photo1")


def test_both_sides_reads_the_books_second_derenderer(tmp_path, monkeypatch):
    from inkground_lib.evaluation import both_sides as bs

    root = generate(tmp_path / "bench", SynthParams(pages=2, words_min=2, words_max=3, words_mean=2, seed=5,
                                                    width=600, height=760), progress=False, workers=1)
    book = tmp_path / "data" / "runs" / "synth" / "03_evaluation"
    rerun = tmp_path / "data" / "reruns" / "03_n_boot-10" / "synth" / "03_evaluation"
    pages = []
    derender = bs._derender_page
    monkeypatch.setattr(bs, "_derender_page", lambda job: pages.append(job[0].id) or derender(job))
    a = bs.both_sides(root, book, n_boot=10, workers=1)
    assert len(pages) == 2
    before = _tree(book)
    b = bs.both_sides(root, rerun, n_boot=10, workers=1)
    assert len(pages) == 2 and _tree(book) == before  # read from the book's run, which is left as it was
    pd.testing.assert_frame_equal(a.table, b.table)
    assert (rerun / "both_sides.json").is_file()
    bs.both_sides(root, rerun, n_boot=10, workers=1, second=bs.SkeletonParams(threshold="otsu"))
    assert len(pages) == 4  # other settings: another key, derendered


def test_an_earlier_log_that_cannot_be_read_is_skipped_with_a_warning(tmp_path):
    from inkground_lib.core.files import append_jsonl
    from inkground_lib.pseudo.keys import reused_records

    book = tmp_path / "data" / "runs" / "synth" / "02_pseudo_labels" / "ocr-x.jsonl"
    other = tmp_path / "data" / "reruns" / "a" / "synth" / "02_pseudo_labels" / "ocr-x.jsonl"
    mine = tmp_path / "data" / "reruns" / "b" / "synth" / "02_pseudo_labels" / "ocr-x.jsonl"
    append_jsonl(book, {"schema": "s", "key": "k1", "v": 1})
    with open(book, "a") as f:
        f.write("not json\n")
    append_jsonl(book, {"schema": "s", "key": "k2", "v": 2})
    append_jsonl(other, {"schema": "s", "key": "k2", "v": 2})
    before = book.read_bytes()
    with pytest.warns(UserWarning, match="not read for results to reuse"):
        got = list(reused_records(mine, "s", {"k1", "k2", "k3"}))
    assert [r["key"] for r in got] == ["k1", "k2"]  # k1 before the bad line, k2 from the next run; k3 nowhere
    assert book.read_bytes() == before
    assert [json.loads(x)["key"] for x in mine.read_text().splitlines()] == ["k1", "k2"]
    assert [r["key"] for r in reused_records(mine, "s", {"k1", "k2"})] == ["k1", "k2"]  # now its own
