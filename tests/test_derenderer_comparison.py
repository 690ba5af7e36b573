"""Section 02's comparison of derenderers against the writers' true pen paths (issue 29)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from inkground_lib.core.bootstrap import weighted_medians
from inkground_lib.core.dataset import load_dataset
from inkground_lib.datasets.recorded import build_recorded
from inkground_lib.pseudo.derenderer_comparison import COMPARISON_STATS, derenderer_comparison, truth_summary
from conftest import make_tiny_dataset


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    return load_dataset(build_recorded(tmp_path_factory.mktemp("rec") / "rec", pages=3, words_per_page=(4, 6),
                                       progress=False))


def test_weighted_medians_equal_the_median_of_the_repeated_values():
    rng = np.random.default_rng(1)
    v = rng.random(9)
    w = rng.integers(0, 4, size=(20, 9))
    got = weighted_medians(v, w)
    for row, m in zip(w, got):
        rep = np.sort(np.repeat(v, row))
        assert m == (rep[(len(rep) - 1) // 2] if len(rep) else m)


def test_intervals_hold_the_value_and_a_paired_bootstrap_is_the_same_draw():
    rng = np.random.default_rng(0)
    w = pd.DataFrame({"page": np.repeat([f"p{i:02d}" for i in range(30)], 3), "dtw": rng.random(90),
                      "chamfer": rng.random(90) / 10, "order_differs": rng.integers(0, 2, 90).astype(float),
                      "direction_differs": np.tile([1.0, np.nan, 0.0], 30)})
    s = truth_summary(w, n_boot=300, seed=4)
    for k in COMPARISON_STATS:
        assert s[f"{k}_lo"] <= s[k] <= s[f"{k}_hi"], k
    assert s["direction_differs_n"] == 60 and s["direction_differs"] == 0.5
    assert truth_summary(w, n_boot=300, seed=4) == s
    assert truth_summary(w, n_boot=300, seed=5) != s


def test_every_derenderer_is_measured_on_every_set_with_true_inks_and_a_rerun_reads_its_caches(recorded, tmp_path):
    no_truth = make_tiny_dataset(tmp_path / "tiny")
    ds_tiny = load_dataset(no_truth)
    for p in ds_tiny.pages:  # a set without true inks is left out
        for w in p.words:
            w.true_ink = None
    run = tmp_path / "run"
    a = derenderer_comparison({"recorded": recorded, "none": ds_tiny}, ["skeleton", "tracer"], run, n_boot=50)
    assert list(a["set"]) == ["recorded", "recorded"] and list(a["derenderer"]) == ["skeleton", "tracer"]
    assert (a["words"] == recorded.n_words).all() and (a["pages"] == len(recorded.pages)).all()
    assert (run / "derenderers" / "recorded" / "derender-tracer.jsonl").is_file()
    assert (run / "derenderers" / "recorded" / "words-skeleton.csv").is_file()
    # the tracer traces at its own resolution (TRACER_GEOMETRY, issue 37): its Chamfer (order-free) is below
    # the skeleton's on most words and in the median
    sk = pd.read_csv(run / "derenderers" / "recorded" / "words-skeleton.csv")
    tr = pd.read_csv(run / "derenderers" / "recorded" / "words-tracer.csv")
    assert tr["chamfer"].median() < sk["chamfer"].median() and (tr["chamfer"] < sk["chamfer"]).mean() > 0.5
    before = (run / "derenderers" / "recorded" / "derender-tracer.jsonl").read_bytes()
    b = derenderer_comparison({"recorded": recorded}, ["skeleton", "tracer"], run, n_boot=50)
    pd.testing.assert_frame_equal(a, b)
    assert (run / "derenderers" / "recorded" / "derender-tracer.jsonl").read_bytes() == before
    with pytest.raises(Exception, match="nope"):
        derenderer_comparison({"recorded": recorded}, ["nope"], run, n_boot=0)


def test_ratios_come_from_paired_replicates_and_the_sentence_follows_the_interval(recorded, tmp_path):
    from inkground_lib.report.derenderer_table import closest_derenderer, comparison_sentences, derenderer_table

    cmp = derenderer_comparison({"recorded": recorded}, ["skeleton", "tracer"], tmp_path / "run", n_boot=200)
    t = cmp.iloc[1]
    assert t["dtw_median_ratio"] == pytest.approx(t["dtw_median"] / cmp.iloc[0]["dtw_median"])
    assert t["dtw_median_ratio_lo"] <= t["dtw_median_ratio"] <= t["dtw_median_ratio_hi"]
    assert "chamfer_median_ratio" not in cmp.iloc[0] or np.isnan(cmp.iloc[0].get("chamfer_median_ratio", np.nan))
    table = derenderer_table(cmp)
    assert list(table.index.get_level_values(1)) == ["skeleton (heuristic)", "tracer (learned here; given the word's true text)"]
    fake = cmp.copy()
    fake.loc[1, ["dtw_median_ratio_lo", "dtw_median_ratio_hi"]] = [0.5, 0.9]
    assert "(lower, the interval below 1)" in comparison_sentences(fake)[0].split(";")[0]
    fake.loc[1, ["dtw_median_ratio_lo", "dtw_median_ratio_hi"]] = [0.9, 1.1]
    assert "the interval holds 1" in comparison_sentences(fake)[0].split(";")[0]
    fake.loc[1, "dtw_median"] = fake.loc[0, "dtw_median"] + 1
    assert closest_derenderer(fake) in (None, "skeleton")


def test_the_pictures_show_the_largest_gain_the_median_and_the_largest_loss(recorded, tmp_path):
    from inkground_lib.report.derenderer_figures import (EXAMPLE_TAGS, derenderer_examples, derenderer_players,
                                                         fig_derenderer_examples)

    run = tmp_path / "run"
    assert derenderer_examples(recorded, "recorded", ("skeleton", "tracer"), run) == []  # nothing compared yet
    derenderer_comparison({"recorded": recorded}, ["skeleton", "tracer"], run, n_boot=0)
    ex = derenderer_examples(recorded, "recorded", ("skeleton", "tracer"), run)
    assert [e["tag"] for e in ex] == list(EXAMPLE_TAGS)
    gains = [e["dtw"]["tracer"] - e["dtw"]["skeleton"] for e in ex]
    assert gains == sorted(gains)
    sk = pd.read_csv(run / "derenderers" / "recorded" / "words-skeleton.csv", dtype={"word_id": str})
    assert ex[0]["dtw"]["skeleton"] == pytest.approx(float(sk.set_index("word_id").loc[ex[0]["word_id"], "dtw"]))
    assert fig_derenderer_examples(ex).axes and fig_derenderer_examples([]) is None
    assert derenderer_players(ex)._repr_html_().count("<svg") == 2 * len(ex)


def test_the_choice_sentence_says_whether_the_run_used_the_closest_derenderer():
    from inkground_lib.report.derenderer_table import choice_text

    cmp = pd.DataFrame({"set": ["a", "a", "b", "b"], "derenderer": ["skeleton", "tracer"] * 2,
                        "dtw_median": [0.2, 0.1, 0.3, 0.2]})
    assert "no derenderer compared here is closer to the truth than the tracer on any set" in choice_text(cmp, "tracer")
    assert ("another derenderer is closer than the skeleton on every set compared: the a (tracer 0.100 against "
            "0.200); the b (tracer 0.200 against 0.300)") in choice_text(cmp, "skeleton")
    cmp.loc[3, "dtw_median"] = 0.4  # the skeleton is closer on b
    assert "another derenderer is closer than the tracer on the b (skeleton 0.300 against 0.400)" in choice_text(cmp, "tracer")
    assert "was not among" in choice_text(cmp, "inksight-small-p")


def test_section_02_caches_its_candidates_in_its_run_folder_and_the_recorded_pages_apart(recorded, tmp_path):
    from inkground_lib.pseudo.derenderer_comparison import CANDIDATES_SET, RECORDED_SET, section_comparison
    from inkground_lib.report.derenderer_figures import section_examples

    run = tmp_path / "run"
    cmp = section_comparison(recorded, recorded.root, ["skeleton", "tracer"], run, n_boot=0, workers=1)
    assert list(dict.fromkeys(cmp["set"])) == [CANDIDATES_SET, RECORDED_SET]
    assert (run / "derender-tracer.jsonl").is_file() and (run / "derenderers" / RECORDED_SET / "derender-tracer.jsonl").is_file()
    assert not (run / "derenderers" / CANDIDATES_SET / "derender-tracer.jsonl").exists()
    a, b = (cmp[cmp["set"] == s].drop(columns="set").reset_index(drop=True) for s in (CANDIDATES_SET, RECORDED_SET))
    pd.testing.assert_frame_equal(a.drop(columns="seconds_per_word"), b.drop(columns="seconds_per_word"))
    assert len(section_examples(recorded, "", ["skeleton", "tracer"], run)) == 3
    assert section_examples(recorded, recorded.root, ["skeleton"], run) == []
