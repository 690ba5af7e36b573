"""Tests of the writer-style backbone (components.style.backbone*), the head a benchmark fits on its features
(components.style.head) and the feature store (evaluation.style_features)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch
from inks import hershey_ink

from inkground_lib.components import style
from inkground_lib.components.derenderers.tracer.eval_writers import read_eval_writers
from inkground_lib.components.style import backbone as B
from inkground_lib.components.style.backbone_corpus import (
    CorpusRecipe,
    evaluation_synth_styles,
    style_vector,
    synthetic_writers,
)
from inkground_lib.components.style.backbone_training import check_backbone_writers
from inkground_lib.components.style.head import fit_head
from inkground_lib.components.style.network import new_body
from inkground_lib.core.ink import drawing_digest
from inkground_lib.evaluation.style_features import append_store, read_store, style_features

ITEMS = [(hershey_ink(w, slant, sx), name) for name, slant, sx in (("lean", 0.6, 1.0), ("back", -0.6, 1.0),
                                                                   ("wide", 0.0, 1.8))
         for w in ("the", "and", "you", "that", "was", "for", "are", "with")]
HEAD = style.StyleParams()  # the default recipe: the shipped backbone and a head


def test_the_backbone_never_trained_on_an_evaluation_writer():
    """The shipped backbone's record lists its UNIPEN training writers: none is on the evaluation list."""
    record = B.load_backbone().record
    writers = record["trained_on"]["unipen"]["writers"]
    assert len(writers) == record["trained_on"]["unipen"]["train_writers_kept"] >= 250
    assert all(w.startswith("unipen-") for w in writers)
    check_backbone_writers(record)  # passes
    assert not set(writers) & read_eval_writers()
    assert record["trained_on"]["unipen"]["eval_writers_excluded"] == 82
    planted = json.loads(json.dumps(record))
    planted["trained_on"]["unipen"]["writers"].append(sorted(read_eval_writers(group="held-out"))[0])
    with pytest.raises(style.StyleError, match="trained on 1 evaluation writer"):
        check_backbone_writers(planted)


def test_the_backbone_synthetic_writers_share_no_style_with_an_evaluated_writer():
    """Recomputed from the shipped record's recipe and compared by their style parameters, not by seed."""
    record = B.load_backbone().record
    recipe = CorpusRecipe(**record["recipe"]["corpus"])
    n = recipe.synth_writers + recipe.synth_val_writers
    taken = evaluation_synth_styles()
    assert len(taken) >= 3000  # the book's 172 pages, paper scale's 2,984, the tracer check's and the tests'
    writers, skipped = synthetic_writers(n, taken)
    assert [w for w, _ in writers[:recipe.synth_writers]] == record["trained_on"]["synthetic"]["writers"]
    for _, s in writers:
        assert not np.any(np.all(np.isclose(taken, style_vector(s), rtol=0, atol=1e-9), axis=1))
    # the comparison can fail: a stream writer planted among the evaluated ones is skipped, and counted
    again, skipped2 = synthetic_writers(3, np.vstack([taken, style_vector(writers[1][1])]))
    assert skipped2 == skipped + 1 and writers[1][0] not in [w for w, _ in again]


def test_features_do_not_depend_on_batch_mates_batch_size_or_threads():
    body = new_body(0).eval()
    x = (torch.rand(70, 1, 48, 192, generator=torch.Generator().manual_seed(0)) * 255).to(torch.uint8)
    p = style.StyleParams()
    whole = B.body_features(body, x[:64], p)
    assert whole.shape == (64, B.FEATURES) and whole.dtype == np.float32
    assert np.array_equal(B.body_features(body, torch.cat([x[:1], x[64:]]), p)[0], whole[0])  # other mates
    assert np.array_equal(B.body_features(body, x[:3], p), whole[:3])  # a smaller batch
    assert np.array_equal(B.body_features(body, x[:1], p)[0], whole[0])  # a batch of one
    assert np.array_equal(B.body_features(body, x[:64], dataclasses.replace(p, threads=2)), whole)  # two threads


def test_a_damaged_or_foreign_backbone_is_refused_naming_the_file(tmp_path):
    good = B.SHIPPED_BACKBONE
    bad = tmp_path / "b.safetensors"
    data = bytearray(good.read_bytes())
    data[-10] ^= 0xFF
    bad.write_bytes(bytes(data))
    with pytest.raises(style.StyleError, match=f"{bad}: sha256 .* is not the expected"):
        B.load_backbone(bad, B.SHIPPED_SHA256)
    (tmp_path / "x.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(style.StyleError, match="x.safetensors: not a writer-style backbone"):
        B.load_backbone(tmp_path / "x.safetensors")
    with pytest.raises(style.StyleError, match="missing"):
        B.load_backbone(tmp_path / "absent.safetensors")


def test_a_saved_backbone_round_trips_in_half_precision(tmp_path):
    body = new_body(3).eval()
    sha = B.save_backbone(body, tmp_path / "b.safetensors", {"note": "test"})
    again = B.load_backbone(tmp_path / "b.safetensors", sha)
    assert again.sha256 == sha and again.record == {"note": "test"}
    for k, v in body.state_dict().items():
        if v.is_floating_point():
            assert torch.equal(again.body.state_dict()[k], v.half().float()), k
    assert B.save_backbone(body, tmp_path / "c.safetensors", {"note": "test"}) == sha  # the same bytes


def test_the_head_is_deterministic_and_its_two_class_scores_are_a_softmax():
    rng = np.random.default_rng(1)
    f = rng.normal(size=(30, 6)) + np.repeat(np.eye(3, 6) * 3, 10, axis=0)
    labels = ["a"] * 10 + ["b"] * 10 + ["c"] * 10
    h1, h2 = fit_head(f, labels, 0.5), fit_head(f, labels, 0.5)
    assert np.array_equal(h1.weight, h2.weight) and h1.classes == ("a", "b", "c")
    assert np.mean(h1.logits(f).argmax(axis=1) == np.repeat([0, 1, 2], 10)) > 0.9
    two = fit_head(f[:20], labels[:20], 1.0)
    from sklearn.linear_model import LogisticRegression

    ref = LogisticRegression(C=1.0, max_iter=2000, tol=1e-6).fit((f[:20] - two.mean) / two.scale, [0] * 10 + [1] * 10)
    p = style.softmax_rows(two.logits(f[:20]))[:, 1]
    assert np.allclose(p, ref.predict_proba((f[:20] - two.mean) / two.scale)[:, 1], atol=1e-9)
    with pytest.raises(style.StyleError, match="at least 2 writers"):
        fit_head(f[:5], ["a"] * 5)
    with pytest.raises(style.StyleError, match="NaN"):
        fit_head(np.full((4, 2), np.nan), ["a", "b", "a", "b"])


def test_a_head_classifier_is_saved_reloaded_and_reused_only_for_its_items_and_recipe(tmp_path):
    tr, te = style.split_by_writer([w for _, w in ITEMS], 0.75, seed=0)
    train = [ITEMS[i] for i in tr]
    model = style.train_style(train, HEAD, tmp_path, progress=False)
    assert model.head is not None and model.model is None and model.trained
    meta = json.loads((tmp_path / style.META_FILE).read_text())
    assert meta["backbone_sha256"] == B.SHIPPED_SHA256 and meta["params"]["fit"] == "head"
    again = style.saved_style(tmp_path, train, HEAD)
    inks = [k for k, _ in ITEMS]
    assert again is not None and not again.trained and np.array_equal(again.logits(inks), model.logits(inks))
    assert style.saved_style(tmp_path, train, dataclasses.replace(HEAD, head_c=HEAD.head_c * 3)) is None
    assert style.saved_style(tmp_path, train[:-1], HEAD) is None
    meta["backbone_sha256"] = "0" * 64  # fitted on another backbone: never reused
    (tmp_path / style.META_FILE).write_text(json.dumps(meta))
    assert style.saved_style(tmp_path, train, HEAD) is None
    with pytest.raises(style.StyleError, match="fitted on backbone 000000000000"):
        style.load_style(tmp_path)


def test_the_recipes_are_parameters_and_random_weights_stay_available():
    assert (HEAD.start, HEAD.fit) == ("backbone", "head")
    with pytest.raises(style.StyleError, match="from random weights trains the whole network"):
        style.StyleParams(start="random", fit="head")
    with pytest.raises(style.StyleError, match="fit must be one of"):
        style.StyleParams(fit="everything")
    rnd = style.StyleParams(height=32, width=64, epochs=1, batch_size=8, start="random", fit="all")
    from inkground_lib.components.style.training import init_network

    net = init_network(3, rnd)
    body = B.load_backbone().body.state_dict()
    k = "embedder.embedder.convolution.weight"
    assert not torch.equal(net.resnet.state_dict()[k], body[k])
    net_b = init_network(3, dataclasses.replace(rnd, start="backbone", fit="all"))
    assert torch.equal(net_b.resnet.state_dict()[k], body[k])


def test_fine_tuning_the_last_stage_keeps_the_rest_of_the_backbone():
    from inkground_lib.components.style.training import train_epochs

    p = style.StyleParams(height=32, width=64, epochs=1, batch_size=8, fit="last_stage", augment=False)
    state = train_epochs(ITEMS, p)
    body = B.load_backbone().body.state_dict()
    trained = {k[len("resnet."):]: v for k, v in state.model.items() if k.startswith("resnet.")}
    first = [k for k in body if not k.startswith("encoder.stages.3") and body[k].is_floating_point()]
    assert first and all(torch.equal(trained[k], body[k]) for k in first)  # weights and BatchNorm statistics
    last = [k for k in body if k.startswith("encoder.stages.3") and k.endswith("weight")]
    assert any(not torch.equal(trained[k], body[k]) for k in last)


def test_the_feature_store_reads_only_its_own_key_and_skips_a_torn_file(tmp_path):
    key, other = ("style-features", "a"), ("style-features", "b")
    rows = np.arange(12, dtype=np.float32).reshape(2, 6)
    p = append_store(tmp_path, key, ["d1", "d2"], rows)
    assert append_store(tmp_path, key, ["d1", "d2"], rows) == p  # the same content: nothing new
    append_store(tmp_path, other, ["d3"], rows[:1])
    got = read_store(tmp_path, key)
    assert set(got) == {"d1", "d2"} and np.array_equal(got["d2"], rows[1])
    assert set(read_store(tmp_path, other)) == {"d3"}
    (tmp_path / "features-torn.npz").write_bytes(p.read_bytes()[:100])
    assert set(read_store(tmp_path, key)) == {"d1", "d2"}
    assert read_store(tmp_path / "absent", key) == {}


def test_features_are_computed_once_per_drawing_stored_and_equal_on_an_executor(tmp_path, monkeypatch):
    from inkground_lib.core.parallel import LazyPool

    bb = B.load_backbone()
    p = dataclasses.replace(HEAD, eval_batch_size=2)  # jobs of 2 x STYLE_JOB_BATCHES renders
    inks = [k for k, _ in ITEMS]
    reordered = [type(inks[0])([s[::-1] for s in inks[0].strokes[::-1]])]  # the same drawing, other order
    memo: dict = {}
    here = style_features(bb, p, inks, memo, store=tmp_path / "store")
    assert here.shape == (len(inks), B.FEATURES)
    assert np.array_equal(style_features(bb, p, reordered, memo)[0], here[0])
    stored = read_store(tmp_path / "store", B.feature_key(bb.sha256, p))
    assert set(stored) == {drawing_digest(k) for k in inks}
    computed = []
    monkeypatch.setattr(B.Backbone, "features", lambda self, x, params: computed.append(len(x)) or 1 / 0)
    assert np.array_equal(style_features(bb, p, inks, {}, store=tmp_path / "store"), here)  # read, not computed
    assert computed == []
    monkeypatch.undo()
    with LazyPool(2) as pool:
        assert np.array_equal(style_features(bb, p, inks, {}, pool), here)


def test_paper_scale_takes_style_epochs_only_for_a_classifier_that_trains(tmp_path, capsys):
    """The book's recipe fits a head (no epochs): `--style-epochs` alone is refused before anything is written;
    with `--style-fit all` it is the paper's recipe (from random weights)."""
    from inkground_lib.cli import main
    from inkground_lib.cli.scale import _style

    out = tmp_path / "scale"
    assert main(["paper-scale", "--out", str(out), "--style-epochs", "3", "--quiet"]) == 2
    assert "--style-epochs needs --style-fit" in capsys.readouterr().err and not out.exists()

    class A:
        style_fit, style_epochs = "all", 3

    assert _style(A) == {"fit": "all", "start": "random", "epochs": 3}
    A.style_fit, A.style_epochs = None, None
    assert _style(A) == {}


def test_a_rerun_takes_features_and_the_classifier_from_the_books_run_never_computing_them(tmp_path, monkeypatch):
    """A rerun's Style finds the features and the fitted head that the book's run holds for the same keys (issue
    42: a rerun computes only what is new), copies them into its own folder, and computes nothing; a run of
    other settings (another head C) finds no classifier there and fits its own."""
    from inkground_lib.core.run_files import style_dir, style_features_dir
    from inkground_lib.evaluation.style_stage import _take_earlier_model

    book = tmp_path / "data" / "runs" / "synth" / "03_evaluation"
    rerun = tmp_path / "data" / "reruns" / "03_systems-x" / "synth" / "03_evaluation"
    bb = B.load_backbone()
    inks = [k for k, _ in ITEMS]
    made = style_features(bb, HEAD, inks, {}, store=style_features_dir(book))
    tr, _ = style.split_by_writer([w for _, w in ITEMS], 0.75, seed=0)
    train = [ITEMS[i] for i in tr]
    fitted = style.train_style(train, HEAD, style_dir(book, "reference"), progress=False)
    computed = []
    monkeypatch.setattr(B.Backbone, "features", lambda self, x, params: computed.append(len(x)) or 1 / 0)
    again = style_features(bb, HEAD, inks, {}, store=style_features_dir(rerun))
    assert computed == [] and np.array_equal(again, made)
    assert set(read_store(style_features_dir(rerun), B.feature_key(bb.sha256, HEAD))) == \
        {drawing_digest(k) for k in inks}  # the rerun's own store holds every row it used
    import inkground_lib.evaluation.style_features as SF

    reads, real_read = [], SF.read_store
    monkeypatch.setattr(SF, "read_store", lambda *a: reads.append(a[0]) or real_read(*a))
    memo: dict = {}
    other = tmp_path / "data" / "reruns" / "03_other" / "synth" / "03_evaluation"
    for part in (inks[:8], inks[8:]):  # a section asks for its renders system by system
        style_features(bb, HEAD, part, memo, store=style_features_dir(other))
    assert reads.count(style_features_dir(book)) == 1 and computed == []  # the book's store read once
    out = style_dir(rerun, "reference")
    taken = _take_earlier_model(rerun, "reference", out, train, HEAD)
    assert taken is not None and not taken.trained and (out / style.META_FILE).is_file()
    assert np.array_equal(taken.head.weight, fitted.head.weight)
    other = dataclasses.replace(HEAD, head_c=HEAD.head_c * 3)
    assert _take_earlier_model(rerun, "reference", style_dir(rerun, "other"), train, other) is None
    assert not style_dir(rerun, "other").exists()
