"""The "both sides" measurement: two derenderers that differ, each against its own labels, the other's and the
truth; cached; the prose follows the numbers."""

from __future__ import annotations

import pytest

from inkground_lib.components.derenderers.base import crop_word
from inkground_lib.components.derenderers.skeleton import SkeletonDerenderer
from inkground_lib.core.dataset import Page, Word, load_dataset, write_manifest
from inkground_lib.core.defaults import CROP_GROW
from inkground_lib.datasets.synth.generate import SynthParams, generate


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    """A small benchmark-like set: reference inks made by the default skeleton derenderer, true inks kept."""
    root = tmp_path_factory.mktemp("bs")
    ds = load_dataset(generate(root / "cand", SynthParams(pages=3, words_min=3, words_max=5, words_mean=4, seed=5,
                                                          width=700, height=900), progress=False, workers=1))
    der, pages = SkeletonDerenderer(), []
    for p in ds.pages:
        photo = p.load_image()
        words = []
        for w in p.words:
            crop, cbox = crop_word(photo, w.box, grow=CROP_GROW)
            words.append(Word(w.id, w.text, w.box, der.derender(crop, cbox, w.text), p.id, w.split, w.true_ink))
        pages.append(Page(p.id, p.image, p.writer, p.width, p.height, words))
    write_manifest(root / "cand", "bench", "benchmark", "pseudo-labels", {}, pages)  # photos stay where they are
    return root / "cand"


def test_each_derenderer_against_its_own_labels_the_others_and_the_truth(bench, tmp_path, monkeypatch):
    import inkground_lib.evaluation.both_sides as bs
    from inkground_lib.report.evaluation import both_sides_table

    res = bs.both_sides(bench, tmp_path, n_boot=50)
    t = res.table.set_index(["derenderer", "scored against"])
    assert t.loc[("A (made the labels)", "A's labels"), "dtw"] == 0.0  # identical by construction
    assert t.loc[("B (second derenderer)", "B's labels"), "dtw"] == 0.0
    assert res.d_ab > 0 and res.d_a_truth > 0 and res.d_b_truth > 0  # B really differs from A
    assert res.d_ab == t.loc[("B (second derenderer)", "A's labels"), "dtw"]
    assert res.differ_enough == (res.d_ab >= 0.5 * res.d_a_truth and res.d_ab >= 0.5 * res.d_b_truth)
    assert (t["dtw_lo"] <= t["dtw"]).all() and (t["dtw"] <= t["dtw_hi"]).all()
    assert res.n_words + res.n_empty == sum(len(p.words) for p in load_dataset(bench).pages)
    glue = bs.glue_values(res)
    closer = (t.loc[("A (made the labels)", "B's labels"), "dtw"] < res.d_a_truth
              and t.loc[("B (second derenderer)", "A's labels"), "dtw"] < res.d_b_truth)
    assert glue["flattered"].startswith("each looks closer") == closer
    assert (glue["a_other"], glue["b_other"]) == (t.loc[("A (made the labels)", "B's labels"), "dtw"],
                                                  t.loc[("B (second derenderer)", "A's labels"), "dtw"])
    assert len(both_sides_table(res)) == 6
    # a rerun reads B's inks from the run folder: nothing is derendered again
    monkeypatch.setattr(bs, "_derender_page", lambda job: (_ for _ in ()).throw(AssertionError("derendered")))
    again = bs.both_sides(bench, tmp_path, n_boot=50)
    assert again.table.equals(res.table)


def test_the_truth_is_required(tmp_path):
    from conftest import make_tiny_dataset

    import inkground_lib.evaluation.both_sides as bs

    ds = load_dataset(make_tiny_dataset(tmp_path / "ds"))
    pages = [Page(p.id, p.image, p.writer, p.width, p.height,
                  [Word(w.id, w.text, w.box, w.ink, p.id, w.split, None) for w in p.words]) for p in ds.pages]
    write_manifest(tmp_path / "ds", "nt", "benchmark", "pseudo-labels", {}, pages)
    with pytest.raises(ValueError, match="has no true ink"):
        bs.both_sides(tmp_path / "ds", tmp_path / "run", n_boot=10)
