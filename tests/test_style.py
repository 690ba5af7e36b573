"""Tests of inkground_lib.components.style: the ResNet-18 writer classifier and the Style score."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch
from inks import hershey_ink

from inkground_lib.components import style
from inkground_lib.components.style.storage import _meta_matches
from inkground_lib.core.ink import as_ink
from inkground_lib.core.render import RenderSpec, render_ink

WORDS = ("the and you that was for are with his they one have this from had not but what all were when your "
         "can said there use each which she how their will other about out many then them these some her would "
         "make like him into time has look two more write see number way could people than first water").split()

# three synthetic writers with clearly different styles: forward slant, backward slant, wide upright
WRITERS = {"lean": (0.6, 1.0), "back": (-0.6, 1.0), "wide": (0.0, 1.8)}

# small and quick: 32 x 128 input from a 32 px render
FAST = style.StyleParams(height=32, width=128, epochs=6, batch_size=12, augment=False, seed=3,
                         render=RenderSpec(height=32, pen_width=2.0, padding=3), start="random", fit="all")


def writer_items(n_per_writer=16, seed=0):
    """(ink, writer) items; each writer writes different words (held-out words are unseen words)."""
    rng = np.random.default_rng(seed)
    items = []
    for name, (slant, sx) in WRITERS.items():
        for text in rng.choice(WORDS, n_per_writer, replace=False):
            items.append((hershey_ink(str(text), slant, sx, rng), name))
    return items


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    items = writer_items()
    tr, te = style.split_by_writer([lab for _, lab in items], 0.75, seed=0)
    out = tmp_path_factory.mktemp("style")
    model = style.train_style([items[i] for i in tr], FAST, out, progress=False)
    return model, [items[i] for i in tr], [items[i] for i in te], out


@pytest.mark.slow  # trains a classifier for ~50 s
def test_accuracy_well_above_chance_on_held_out_words(trained):
    model, _, test, _ = trained
    assert model.trained and model.classes == ["back", "lean", "wide"]
    ev = style.evaluate_classifier(model, test)
    assert ev.n == 12 and ev.n_classes == 3 and ev.chance == pytest.approx(1 / 3)
    assert ev.top1 >= 0.75, ev
    assert ev.mean_true_proba > 0.5
    assert model.losses[-1] < model.losses[0]


def test_probabilities_and_style_scores(trained):
    model, _, test, _ = trained
    inks = [k for k, _ in test] + [as_ink([])]  # an empty ink = invalid output = blank render
    p = model.proba(inks)
    assert p.shape == (len(inks), 3) and p.dtype == np.float64
    assert np.allclose(p.sum(axis=1), 1.0) and (p >= 0).all()
    labels = [lab for _, lab in test] + ["wide"]
    s = style.style_scores(model, inks, labels)
    assert np.array_equal(s, p[np.arange(len(inks)), [model.classes.index(lab) for lab in labels]])
    assert model.predict(inks[:1]) == [model.classes[int(np.argmax(p[0]))]]
    with pytest.raises(style.StyleError, match="label 0: writer 'nobody' is not one of"):
        style.style_scores(model, inks[:1], ["nobody"])
    with pytest.raises(style.StyleError, match="1 inks but 2 labels"):
        style.style_scores(model, inks[:1], ["wide", "lean"])


def test_reuse_loads_instead_of_training(trained):
    model, train, test, out = trained
    meta = json.loads((out / style.META_FILE).read_text())
    assert meta["classes"] == model.classes and meta["input_hash"] == model.input_hash
    assert meta["params"] == json.loads(json.dumps(FAST.to_dict()))
    assert meta["n_parameters"] == style.expected_param_count(3)
    again = style.train_style(train, FAST, out, progress=False)
    assert again.trained is False
    inks = [k for k, _ in test]
    assert np.array_equal(again.proba(inks), model.proba(inks))
    assert not list(out.glob(".*.tmp"))  # atomic writes leave no temporary files


def test_changed_inputs_or_damaged_weights_retrain(trained, tmp_path):
    _, train, _, out = trained
    small = train[:4] + train[12:16]
    tiny = replace(FAST, epochs=1, batch_size=4, height=32, width=64)
    m1 = style.train_style(small, tiny, tmp_path, progress=False)
    assert m1.trained
    assert style.train_style(small, tiny, tmp_path, progress=False).trained is False
    assert style.train_style(small[::-1], tiny, tmp_path, progress=False).trained  # inputs changed
    meta = json.loads((tmp_path / style.META_FILE).read_text())
    h = style.items_hash([k for k, _ in small[::-1]], [lab for _, lab in small[::-1]])
    assert _meta_matches(meta, tiny, h) and not _meta_matches(meta, replace(tiny, seed=4), h)
    wp = tmp_path / style.WEIGHTS_FILE
    wp.write_bytes(wp.read_bytes()[:-8] + b"\0" * 8)
    with pytest.raises(style.StyleError, match="do not match the SHA-256"):
        style.load_style(tmp_path)
    assert style.train_style(small[::-1], tiny, tmp_path, progress=False).trained  # damaged: retrained
    assert style.load_style(tmp_path).trained is False


def test_training_is_deterministic(trained):
    _, train, test, _ = trained
    threads_before = torch.get_num_threads()
    tiny = replace(FAST, epochs=1, batch_size=4, height=32, width=64, augment=True, shift=2)
    small = train[:4] + train[12:16]
    a = style.train_style(small, tiny, None, progress=False)
    b = style.train_style(small, tiny, None, progress=False)
    sa, sb = a.model.state_dict(), b.model.state_dict()
    assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)
    inks = [k for k, _ in test]
    assert np.array_equal(a.proba(inks), b.proba(inks))
    c = style.train_style(small, replace(tiny, seed=tiny.seed + 1), None, progress=False)
    assert not torch.equal(sa["classifier.1.weight"], c.model.state_dict()["classifier.1.weight"])
    assert torch.get_num_threads() == threads_before  # the thread count is restored after training
    assert not torch.are_deterministic_algorithms_enabled()  # the global flag is restored after training


def test_parameter_count_matches_torchvision_resnet18(trained):
    model, _, _, _ = trained
    # torchvision resnet18: 11,689,512 with 3 channels / 1000 classes; conv1 64*3*7*7 -> 64*1*7*7;
    # fc 512*1000 + 1000 -> 512*K + K
    for k in (3, 36, 1000):
        expected = 11_689_512 - 64 * 3 * 49 + 64 * 1 * 49 - (512 * 1000 + 1000) + 512 * k + k
        assert style.expected_param_count(k) == expected
        assert sum(p.numel() for p in style.build_resnet18(k).parameters()) == expected
    assert style.expected_param_count(1000, channels=3) == 11_689_512
    assert model.n_parameters() == 11_170_240 + 513 * 3


def test_input_tensor_layout():
    p = style.StyleParams()
    blank = style.ink_tensor(as_ink([]), p)
    assert blank.shape == (1, p.height, p.width) and blank.dtype == np.float32 and not blank.any()
    for text, ink in [("a", hershey_ink("a")), ("wide", hershey_ink("understanding everything")),
                      ("long", as_ink([[[0, 0], [4000, 0], [4000, 30]]]))]:
        img = render_ink(ink, p.render)
        h, w = img.shape
        s = min(p.height / h, p.width / w)
        x = style.ink_tensor(ink, p)[0]
        assert x.shape == (p.height, p.width) and x.max() > 0.9 and x.min() == 0.0
        # the render's ink box, scaled by s and centred, is where the tensor has ink (within 2 px)
        r, c = np.nonzero(img < 128)
        rr, cc = np.nonzero(x > 0.5)
        oy, ox = (p.height - round(h * s)) / 2, (p.width - round(w * s)) / 2
        assert abs(rr.min() - (r.min() * s + oy)) <= 2 and abs(rr.max() - (r.max() * s + oy)) <= 2, text
        assert abs(cc.min() - (c.min() * s + ox)) <= 2 and abs(cc.max() - (c.max() * s + ox)) <= 2, text
    xs = style.inks_tensor([hershey_ink("a"), as_ink([])], p)
    assert tuple(xs.shape) == (2, 1, p.height, p.width)


def test_split_by_writer_is_seeded_and_per_writer():
    labels = ["a"] * 8 + ["b"] * 4 + ["c"] * 1 + ["d"] * 2
    tr, te = style.split_by_writer(labels, 0.75, seed=1)
    assert sorted(tr + te) == list(range(len(labels)))
    count = lambda idx, w: sum(labels[i] == w for i in idx)  # noqa: E731
    assert [count(tr, w) for w in "abcd"] == [6, 3, 1, 1]
    assert [count(te, w) for w in "abcd"] == [2, 1, 0, 1]
    assert style.split_by_writer(labels, 0.75, seed=1) == (tr, te)
    assert any(style.split_by_writer(labels, 0.75, seed=s) != (tr, te) for s in range(2, 6))


def test_bad_inputs_are_clear_errors():
    with pytest.raises(style.StyleError, match="item 1: the writer label must be a non-empty str"):
        style.train_style([(hershey_ink("a"), "x"), (hershey_ink("b"), 3)], FAST, None, progress=False)
    with pytest.raises(style.StyleError, match="at least 2 writers"):
        style.train_style([(hershey_ink("a"), "x"), (hershey_ink("b"), "x")], FAST, None, progress=False)
    with pytest.raises(style.StyleError, match="item 0: expected an"):
        style.train_style([hershey_ink("a")], FAST, None, progress=False)
    with pytest.raises(style.StyleError, match="at least 32 x 32"):
        style.StyleParams(height=16)
    with pytest.raises(style.StyleError, match="epochs must be >= 1"):
        style.StyleParams(epochs=0)
    with pytest.raises(style.StyleError, match="no style model here"):
        style.load_style("/nonexistent-folder")


def test_params_round_trip_and_paper_preset():
    p = style.StyleParams.paper(seed=7)
    assert p.epochs > style.StyleParams().epochs and p.height > style.StyleParams().height and p.seed == 7
    assert style.StyleParams.from_dict(json.loads(json.dumps(p.to_dict()))) == p
    with pytest.raises(style.StyleError, match="unknown fields"):
        style.StyleParams.from_dict({"epochs": 2, "colour": "red"})


@pytest.mark.parametrize("n, epochs", [(2, 1), (3, 2), (5, 5)])
def test_training_on_very_few_words_works(n, epochs):
    """Tiny benchmark sets give a handful of training steps: the schedule must not divide by zero."""
    from inkground_lib.components.style import StyleParams, train_style
    from inkground_lib.core.ink import as_ink

    items = [(as_ink([[[0, 0], [10, i % 3 + 1]]]), "a" if i % 2 else "b") for i in range(n)]
    model = train_style(items, StyleParams(epochs=epochs, start="random", fit="all"), None, progress=False)
    p = model.proba([it[0] for it in items])
    assert p.shape == (n, 2) and np.allclose(p.sum(axis=1), 1)


@pytest.mark.slow  # another process
def test_a_training_continued_from_its_state_in_another_process_is_bit_identical(trained, tmp_path):
    """train_epochs: one epoch, the state through pickle (a pool job's round trip) and a checkpoint file,
    then the rest; the weights, BatchNorm statistics and losses equal train_style's in one go."""
    import pickle

    model, train, _, _ = trained
    state = style.train_epochs(train, FAST, None, 1)
    assert state.epoch == 1 and len(state.losses) == 1
    state = pickle.loads(pickle.dumps(state))
    style.save_checkpoint(tmp_path, state, train, FAST)
    state = style.load_checkpoint(tmp_path, train, FAST)
    assert state is not None and state.epoch == 1
    state = style.train_epochs(train, FAST, state, 2)
    assert state.epoch == 3
    with pytest.raises(style.StyleError, match="epoch 3 of 6"):
        style.style_model_from_state(state, train, FAST)
    state = style.train_epochs(train, FAST, pickle.loads(pickle.dumps(state)))
    again = style.style_model_from_state(state, train, FAST)
    a, b = model.model.state_dict(), again.model.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a) and again.losses == model.losses
    assert again.input_hash == model.input_hash and again.trained and not again.model.training


def test_a_checkpoint_of_another_training_or_a_damaged_one_is_not_used(trained, tmp_path):
    _, train, _, _ = trained
    state = style.train_epochs(train, FAST, None, 1)
    style.save_checkpoint(tmp_path, state, train, FAST)
    assert style.load_checkpoint(tmp_path, train, FAST) is not None
    assert style.load_checkpoint(tmp_path, train[:-1], FAST) is None  # other items
    assert style.load_checkpoint(tmp_path, train, replace(FAST, lr=1e-3)) is None  # other params
    path = tmp_path / style.CHECKPOINT_FILE
    path.write_bytes(path.read_bytes()[:1000])  # torn
    assert style.load_checkpoint(tmp_path, train, FAST) is None
    assert style.load_checkpoint(tmp_path / "absent", train, FAST) is None


@pytest.mark.slow  # a fresh process
def test_models_are_built_from_several_threads_at_once_in_a_fresh_process():
    """The paper-scale Style stage assembles both classifiers in threads of one process: transformers' lazy
    module, resolved from two threads at once, raised AttributeError (ResNetConfig) in one of them."""
    import subprocess
    import sys

    code = ("import threading\n"
            "from inkground_lib.components.style import build_resnet18\n"
            "errs = []\n"
            "def go():\n"
            "    try:\n"
            "        build_resnet18(5, 0)\n"
            "    except Exception as e:\n"
            "        errs.append(repr(e))\n"
            "ts = [threading.Thread(target=go) for _ in range(4)]\n"
            "[t.start() for t in ts]\n"
            "[t.join() for t in ts]\n"
            "print('errors:', errs)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "errors: []", out.stdout


def test_true_writer_probability_is_the_softmax_at_the_true_writer():
    """The metric against the plain formula; a slice of rows gives the same bits as the whole (scoring assembles
    the logits of its renders from several batches and jobs); bad true classes are clear errors."""
    rng = np.random.default_rng(0)
    z = rng.normal(size=(50, 7)) * 5
    idx = rng.integers(0, 7, 50)
    p = style.true_writer_probability(z, idx)
    assert np.allclose(p, np.exp(z[np.arange(50), idx]) / np.exp(z).sum(axis=1), rtol=1e-12, atol=0)
    parts = [style.true_writer_probability(z[i:i + 3], idx[i:i + 3]) for i in range(0, 50, 3)]
    assert np.array_equal(p, np.concatenate(parts))
    assert np.array_equal(style.softmax_rows(z)[np.arange(50), idx], p)
    assert np.allclose(style.true_writer_probability(np.zeros((4, 8)), [0, 1, 2, 7]), 1 / 8)
    with pytest.raises(ValueError, match="outside 0..6"):
        style.true_writer_probability(z[:2], [0, 7])
    with pytest.raises(ValueError, match="2 rows of logits but 1 true classes"):
        style.true_writer_probability(z[:2], [0])
