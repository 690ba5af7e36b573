"""The tracer (issue 29): its data rules, targets, determinism, resumption and the derenderer class."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import numpy as np
import pytest

from inkground_lib.components.derenderers.tracer import data as tdata
from inkground_lib.components.derenderers.tracer.eval_writers import EVAL_WRITERS_FILE, read_eval_writers
from inkground_lib.components.derenderers.tracer.weights import SHIPPED_SHA256
from inkground_lib.components.derenderers.tracer.features import (
    N_FEATURES,
    batch_inputs,
    stroke_features,
    text_ids,
)
from inkground_lib.components.derenderers.tracer.samples import (
    load_samples,
    save_samples,
    stroke_targets,
    synth_words,
)
from inkground_lib.components.derenderers.tracer.train import (
    TINY,
    order_direction_differs,
    train_tracer,
)
from inkground_lib.core.ink import Ink
from inkground_lib.formats.unipen import RecordedWord


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def words():
    return synth_words(100, seed=3, words_per_writer=20)


def test_the_evaluation_list_ships_and_holds_both_groups():
    assert EVAL_WRITERS_FILE.is_file()
    shipped, held = read_eval_writers(group="shipped"), read_eval_writers(group="held-out")
    assert (len(shipped), len(held)) == (36, 46)
    assert read_eval_writers() == shipped | held


def test_split_drops_and_counts_evaluation_writers_and_refuses_them(words):
    banned = sorted(read_eval_writers())[:2]
    ink = words[0].ink
    bad = [RecordedWord(f"b{i}", banned[i % 2], "word", ink) for i in range(5)]
    train, val, counts = tdata.split_words(words + bad, val_writers=1, seed=0)
    assert counts["eval_writers_excluded"] == 2 and counts["eval_words_excluded"] == 5
    assert not {w.writer for w in train + val} & set(banned)
    assert {w.writer for w in train}.isdisjoint({w.writer for w in val}) and len({w.writer for w in val}) == 1
    with pytest.raises(tdata.EvalWriterError, match="evaluation list"):
        tdata.check_no_eval_writers(bad)


def test_stroke_targets_give_progress_and_direction():
    a = np.column_stack([np.linspace(0, 50, 30), np.full(30, 10.0), np.zeros(30)])
    b = np.column_stack([np.full(30, 80.0), np.linspace(0, 40, 30), np.zeros(30)])
    true = Ink((a, b))
    # the skeleton gave them in the wrong order and the second one backwards
    skel = [b[::-1, :2].copy(), a[:, :2].copy()]
    prog, gain, length = stroke_targets(skel, true)
    assert prog[0] > 0.6 and prog[1] < 0.4
    assert gain[0] > 0.1 and gain[1] < -0.1
    assert np.allclose(length, [1.0, 1.25], atol=0.06)  # in word heights (h = 40 px)
    assert order_direction_differs(prog, gain, length, [0, 1], [False, False]) == (True, True)
    assert order_direction_differs(prog, gain, length, [1, 0], [True, False]) == (False, False)


def test_features_are_translation_and_scale_free():
    s = [np.array([[0.0, 0.0], [10.0, 20.0]]), np.array([[15.0, 5.0], [30.0, 5.0], [30.0, 30.0]])]
    f = stroke_features(s)
    g = stroke_features([q * 3 + [100, 7] for q in s])
    assert f.shape == (2, N_FEATURES) and np.allclose(f, g, atol=1e-5)
    x, sm, c, cm = batch_inputs([f, f[:1]], [text_ids("ab"), text_ids("")])
    assert x.shape == (2, 2, N_FEATURES) and sm.tolist() == [[True, True], [True, False]]
    assert c.tolist() == [[66, 67], [0, 0]] and cm.tolist() == [[True, True], [False, False]]


def test_samples_round_trip(tmp_path, words):
    from inkground_lib.components.derenderers.tracer.samples import page_jobs, page_samples

    s = page_samples(page_jobs(words[:20], 0, None)[0])
    assert s and all(len(x.skel) == len(x.progress) for x in s)
    save_samples(tmp_path / "s.npz", s)
    back = load_samples(tmp_path / "s.npz")
    assert [x.text for x in back] == [x.text for x in s]
    assert all(np.array_equal(p, q) for x, y in zip(s, back) for p, q in zip(x.skel, y.skel))
    assert all(np.array_equal(x.gain, y.gain) for x, y in zip(s, back))


def test_training_is_deterministic_and_resumes_bit_identically(tmp_path, words):
    a = train_tracer("synthetic", tmp_path / "a", TINY, progress=False, words=words)
    b = train_tracer("synthetic", tmp_path / "b", TINY, progress=False, words=words)
    assert _sha(a) == _sha(b)
    # interrupted after epoch 1 (its checkpoint written), then the same command again
    c_dir = tmp_path / "c"
    assert train_tracer("synthetic", c_dir, TINY, progress=False, words=words, stop_after_epoch=1).name \
        == "checkpoint.npz"
    assert not (c_dir / "tracer.npz").exists()
    made = {f: (c_dir / f).stat().st_mtime_ns for f in ("samples-train.npz", "samples-val.npz")}
    c = train_tracer("synthetic", c_dir, TINY, progress=False, words=words)
    assert made == {f: (c_dir / f).stat().st_mtime_ns for f in made}  # the samples were reused
    assert _sha(c) == _sha(a)
    curves = (c_dir / "curves.csv").read_text().splitlines()
    assert curves[0].startswith("epoch,train_loss") and len(curves) == 1 + TINY.epochs
    # a checkpoint of another recipe is refused
    with pytest.raises(ValueError, match="another recipe"):
        train_tracer("synthetic", c_dir, dataclasses.replace(TINY, lr=0.5), progress=False, words=words)


def test_derenderer_orders_strokes_in_page_pixels(tmp_path, words):
    from inkground_lib.components.derenderers.base import crop_word
    from inkground_lib.components.derenderers.skeleton import SkeletonDerenderer
    from inkground_lib.components.derenderers.tracer.derenderer import TracerDerenderer
    from inkground_lib.components.derenderers.tracer.weights import read_npz
    from inkground_lib.core.render import draw_ink

    w = train_tracer("synthetic", tmp_path / "a", TINY, progress=False, words=words)
    der = TracerDerenderer(w, sha256=read_npz(w)[0]["sha256"])
    with pytest.raises(Exception, match="sha256"):
        TracerDerenderer(w, sha256="0" * 64)
    ink = words[5].ink.transformed(30.0, 200.0, 300.0)
    page = np.full((500, 600), 255, np.uint8)
    draw_ink(page, ink, pen_width=3.0)
    crop, box = crop_word(page, ink.bbox())
    out = der.derender(crop, box, words[5].text)
    skel = SkeletonDerenderer(der.skeleton_params).derender(crop, box)
    # the same points as the skeleton's traced at the tracer's resolution, in page pixels, with time running on
    key = lambda k: sorted(map(tuple, np.round(k.points(), 6)))  # noqa: E731
    assert key(out) == key(skel) and len(out) == len(skel)
    t = np.concatenate([s[:, 2] for s in out.strokes])
    assert np.all(np.diff(t) >= 0) and t[0] == 0
    batch = der.derender_batch([(crop, box, words[5].text), (crop, box, None)])
    assert batch[0] == out and len(batch) == 2
    many = [(crop, box, words[5].text)] * 130  # three chunks of crops, traced in 2 processes
    assert all(k == out for k in der.derender_batch(many, workers=2))


def test_shipped_weights_load_checked_and_trace_a_shipped_recorded_word():
    """The shipped weights (sha256-checked) order the skeleton's strokes of a real recorded word from the
    shipped subset (drawn as recorded pages are) so that its DTW to the writer's trajectory is at most the
    skeleton's plus 0.02 word heights, and at most 0.2 word heights."""
    from inkground_lib.components.derenderers.base import crop_word
    from inkground_lib.components.derenderers.skeleton import SkeletonDerenderer
    from inkground_lib.components.derenderers.tracer.derenderer import TracerDerenderer
    from inkground_lib.components.derenderers.tracer.weights import SHIPPED_SHA256, SHIPPED_WEIGHTS
    from inkground_lib.components.metrics.trajectory import dtw
    from inkground_lib.core.layout import UNIPEN_SUBSET
    from inkground_lib.datasets.recorded_pages import Layout, compose_page
    from inkground_lib.datasets.segmentation import core_height
    from inkground_lib.datasets.synth.page_layout import clean_page
    from inkground_lib.formats.unipen import read_unipen_json

    assert SHIPPED_WEIGHTS.is_file() and SHIPPED_SHA256 == _sha(SHIPPED_WEIGHTS)
    assert SHIPPED_WEIGHTS.stat().st_size <= 25 * 2 ** 20
    der = TracerDerenderer()
    assert der.weights_sha256 == SHIPPED_SHA256
    from inkground_lib.components.derenderers.tracer.train import SHIPPED_RECIPE
    from inkground_lib.components.derenderers.tracer.weights import read_npz

    record = read_npz(SHIPPED_WEIGHTS)[0]
    assert record["recipe"] == {k: v for k, v in SHIPPED_RECIPE.as_dict().items() if k in record["recipe"]}
    assert record["trained_on"]["eval_writers_excluded"] == 82  # the whole list, refused and counted
    words = [w for w in read_unipen_json(UNIPEN_SUBSET) if w.text == "ceiling"][:1]
    assert words, "the shipped subset holds the word 'ceiling'"
    w = words[0]
    comp = compose_page([w], Layout().core_px / core_height(w.ink), np.random.default_rng(0))
    page = clean_page(comp.inks, (comp.width, comp.height), comp.pen_width)
    crop, box = crop_word(page, comp.inks[0].bbox())
    ours = der.derender(crop, box, w.text)
    base = SkeletonDerenderer().derender(crop, box)
    d_ours, d_base = dtw(ours, comp.inks[0]), dtw(base, comp.inks[0])
    assert d_ours <= min(d_base + 0.02, 0.2), (d_ours, d_base)


def test_feature_docstring_examples_pass():
    import doctest

    from inkground_lib.components.derenderers.tracer import features

    result = doctest.testmod(features, verbose=False, report=True)
    assert result.failed == 0 and result.attempted >= 2


def test_sample_making_resumes_after_its_last_whole_block(tmp_path, words, monkeypatch):
    from inkground_lib.components.derenderers.tracer import train as T

    monkeypatch.setattr(T, "BLOCK_PAGES", 1)
    path, key = tmp_path / "samples-train.npz", {"k": 1}
    first = T.make_samples(words[:40], 0, None, 1, False, "x", (path, key))
    parts = sorted(tmp_path.glob("samples-train.part*.npz"))
    assert len(parts) >= 2
    parts[-1].unlink()  # the run was killed in its last block
    kept = {p: p.stat().st_mtime_ns for p in parts[:-1]}
    again = T.make_samples(words[:40], 0, None, 1, False, "x", (path, key))
    assert {p: p.stat().st_mtime_ns for p in kept} == kept and parts[-1].is_file()
    assert [s.text for s in again] == [s.text for s in first]
    assert all(np.array_equal(a.gain, b.gain) for a, b in zip(first, again))
    whole = T._whole(path, key, words[:40], 0, None, TINY, False, "x")
    assert len(whole) == len(first) and path.is_file() and not list(tmp_path.glob("samples-train.part*"))


@pytest.mark.slow  # trains the tiny recipe through the command
def test_tracer_commands_train_resume_and_refuse(tmp_path, capsys):
    from inkground_lib.cli import main

    release = Path(__file__).resolve().parent / "fixtures" / "unipen_dat" / "release"
    args = ["tracer", "train", "--unipen-dir", str(release), "--out", str(tmp_path / "t"), "--recipe", "tiny", "--quiet"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert "tracer weights:" in first and "writers of the evaluation list left out" in first
    weights = tmp_path / "t" / "tracer.npz"
    digest = _sha(weights)
    assert main(args) == 0 and _sha(weights) == digest  # the same command again: nothing is retrained differently
    assert f"sha256 {digest}" in capsys.readouterr().out
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep")
    assert main(["tracer", "train", "--unipen-dir", str(release), "--out", str(foreign), "--recipe", "tiny"]) == 2
    assert "not a run folder written by inkground" in capsys.readouterr().err
    assert (foreign / "notes.txt").read_text() == "keep" and sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]
    assert main(["tracer", "eval", "--unipen-dir", str(release), "--out", str(tmp_path / "e"), "--synth-pages", "0",
                 "--quiet"]) == 2
    assert "no words of the 'held-out' evaluation writers" in capsys.readouterr().err


def test_the_tracer_is_a_derenderer_and_a_specialist_system_never_called_inksight(tmp_path):
    from inkground_lib.components.derenderers.base import DerenderError
    from inkground_lib.components.derenderers.factory import make_derenderer
    from inkground_lib.evaluation.systems.base import SystemUnavailable
    from inkground_lib.evaluation.systems.registry import make_system, load_registry

    assert make_derenderer("tracer").weights_sha256 == SHIPPED_SHA256
    with pytest.raises(DerenderError, match="tracer weights not found"):
        make_derenderer(f"tracer:{tmp_path / 'none.npz'}")
    reg = load_registry(use_env=False)
    system = make_system("tracer", registry=reg)
    assert system.kind == "specialist" and "inkground tracer" in system.label and "InkSight" not in system.label
    assert system.answer_params()["weights_sha256"] == SHIPPED_SHA256
    with pytest.raises(SystemUnavailable, match="the tracer cannot be loaded"):
        make_system("mine", registry={"mine": {"adapter": "tracer", "weights": str(tmp_path / "none.npz")}})
