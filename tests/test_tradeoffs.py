"""Section 4 logic: Pareto front, rank tables, Kendall tau, definition variants re-scored from the cache."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from inkground_lib.analysis.rescoring import casefold_counts, rescore_geometry
from inkground_lib.analysis.tradeoffs import (
    Variant,
    definition_variants,
    kendall_table,
    median_gap,
    metric_correlations,
    not_run_variants,
    other_reference_run,
    paper_points,
    pareto_front,
    point_values,
    rank_table,
    reference_flips,
    style_chance_table,
)
from inkground_lib.core.run_loaders import load_eval_run
from inkground_lib.core.scores_table import scores_frame
from inkground_lib.datasets.synth.generate import SynthParams, generate
from inkground_lib.evaluation.predict import predict_system
from inkground_lib.evaluation.scoring import score_run
from inkground_lib.evaluation.settings import EvalSettings

# ------------------------------------------------------------------------------------------------ Pareto

def test_pareto_front_hand_made_points():
    # (AR, Style), both higher is better
    x = [0.9, 0.5, 0.4, 0.9, 0.1, np.nan, 0.95]
    y = [0.2, 0.8, 0.7, 0.2, 0.9, 1.0, 0.1]
    m = pareto_front(x, y, "max", "max")
    # 0.4/0.7 is dominated by 0.5/0.8; the two equal points (0.9, 0.2) both stay; NaN is never on the front
    assert m.tolist() == [True, True, False, True, True, False, True]


def test_pareto_front_min_direction_and_errors():
    # (AR higher better, DTW lower better)
    ar = [0.8, 0.8, 0.2, 0.9]
    dtw = [0.1, 0.3, 0.05, 0.5]
    assert pareto_front(ar, dtw, "max", "min").tolist() == [True, False, True, True]
    # flipping the DTW direction changes the answer: now (0.9, 0.5) dominates everything
    assert pareto_front(ar, dtw, "max", "max").tolist() == [False, False, False, True]
    with pytest.raises(ValueError, match="better"):
        pareto_front(ar, dtw, "up", "min")
    with pytest.raises(ValueError, match="same length"):
        pareto_front([1, 2], [1], "max", "max")


# ------------------------------------------------------------------------------------------- rank tables

def _scores():
    rows = []
    # three systems, two pages x two words; system c is invalid on one word
    vals = {"a": (0.1, 0.05, 0.9), "b": (0.3, 0.2, 0.5), "c": (0.2, 0.1, 0.7)}
    for s, (d, c, st) in vals.items():
        for p in ("p1", "p2"):
            for w in ("w1", "w2"):
                valid = not (s == "c" and p == "p1" and w == "w1")
                rows.append({"system": s, "dataset": "toy", "page_id": p, "word_id": f"{p}-{w}", "text": "Ab",
                             "valid": valid, "dtw": d if valid else 5.0, "chamfer": c if valid else 3.0,
                             "style": st if valid else 0.0, "style_any": st,
                             "ocr_text": ("ab" if s != "b" else "AB") if valid else "",
                             "S": 0, "D": 0 if valid else 2, "I": 0, "N": 2, "label": s, "kind": "local"})
    return scores_frame(rows)


def test_point_values_all_words_vs_valid_only():
    s = _scores()
    dtw = point_values(s, "dtw")
    assert dtw["c"] == pytest.approx((3 * 0.2 + 5.0) / 4)  # centre-dot rule: the invalid word counts
    assert point_values(s, "dtw", valid_only=True)["c"] == pytest.approx(0.2)
    ar = point_values(s, "ar")
    assert ar["c"] == pytest.approx((8 - 2) / 8) and ar["a"] == 1.0
    assert point_values(s, "style", style_column="style_any")["c"] == pytest.approx(0.7)
    with pytest.raises(ValueError, match="unknown metric"):
        point_values(s, "bleu")


def test_rank_table_ranks_tau_and_unavailable_reason():
    s = _scores()
    d = Variant("dtw", "default", point_values(s, "dtw"), default=True)
    v = Variant("dtw", "valid only", point_values(s, "dtw", valid_only=True))
    rev = Variant("dtw", "reversed", -point_values(s, "dtw"))
    na = Variant("ar", "OCR foo", reason="not available here: foo is not installed; more detail")
    t = rank_table([d, v, rev, na])
    # default: a (0.1) < b (0.3) < c (1.4): ranks 1, 2, 3 (lower DTW is better)
    assert [t.loc[("DTW", "default"), k] for k in "abc"] == [1, 2, 3]
    # valid only: c moves to 2nd
    assert [t.loc[("DTW", "valid only"), k] for k in "abc"] == [1, 3, 2]
    assert t.loc[("DTW", "valid only"), "Kendall tau vs default"] == pytest.approx(1 / 3)
    assert t.loc[("DTW", "reversed"), "Kendall tau vs default"] == pytest.approx(-1.0)
    assert t.loc[("DTW", "default"), "Kendall tau vs default"] == 1.0
    # a variant that cannot run has no row of dashes: it is listed once, with what it needs
    assert ("AR", "OCR foo") not in t.index and list(t.columns)[:3] == ["a", "b", "c"]
    na_cr = Variant("cr", "OCR foo", reason="not available here: foo is not installed; more detail")
    assert not_run_variants({"toy": [d, na, na_cr], "other": [na]}) == {"OCR foo": "foo is not installed"}
    assert not_run_variants([d, v]) == {}
    k = kendall_table({"toy": t})
    assert k.loc["toy", "lowest tau"] == pytest.approx(-1.0) and k.loc["toy", "at"] == "DTW: reversed"


def test_higher_is_better_metrics_rank_descending_and_ties_share():
    vals = pd.Series({"a": 0.5, "b": 0.9, "c": 0.5})
    t = rank_table([Variant("ar", "default", vals, default=True)])
    assert [t.loc[("AR", "default"), k] for k in "abc"] == [2, 1, 2]


def test_casefold_counts_recomputes_from_ocr_text():
    s = _scores()
    cs = casefold_counts(s, casefold=False)
    # system b's OCR read "AB" for "Ab": one substitution case-sensitively, none casefolded
    b = cs[cs["system"] == "b"]
    assert (b["S"] == 1).all() and (b["ar"] == 0.5).all()
    assert (casefold_counts(s, casefold=True)["S"][s["system"] == "b"] == 0).all()
    assert point_values(cs, "ar")["b"] == pytest.approx(0.5)


def test_metric_correlations_are_spearman():
    s = _scores()
    c = metric_correlations(s)
    assert c.loc["DTW", "Chamfer"] == pytest.approx(s["dtw"].rank().corr(s["chamfer"].rank()))
    assert c.loc["DTW", "DTW"] == 1.0


def test_paper_points_and_style_chance_from_reported():
    from inkground_lib.core.paper import paper_numbers

    rep = paper_numbers()
    pts = paper_points(rep).set_index(["dataset", "system"])
    assert pts.loc[("inkGround", "Kimi-K3"), "style"] == float(rep.loc["kimi_ink_style", "value"])
    assert math.isnan(pts.loc[("inkGround", "Qwen3-VL-32B"), "dtw"])  # not in the summary
    summ = pd.DataFrame([{"dataset": "toy", "system": "a", "style": 0.5, "style_lo": 0.4, "style_hi": 0.6,
                          "n_classes": 4, "chance": 0.25, "style_top1": 0.7}])
    ch = style_chance_table(summ, rep)
    assert ch.loc[("ours (measured)", "toy", "a"), "Style / chance"] == pytest.approx(2.0)
    k = ch.loc[("paper (reported)", "inkGround", "Kimi-K3")]
    assert k["chance"] == pytest.approx(1 / float(rep.loc["style_classes_inkground", "value"]))


# ------------------------------------------------------------------------- re-scoring on a tiny dataset

@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A 3-page synthetic dataset; reference and box predictions cached; scores written like section 03
    (geometry only: no OCR, no style classifier, to stay fast)."""
    from inkground_lib.core.dataset import load_dataset

    root = tmp_path_factory.mktemp("tiny")
    ds_dir = generate(root / "ds", SynthParams(pages=3, words_max=6, words_mean=4), progress=False)
    ds = load_dataset(ds_dir)
    run_dir = root / "run"
    settings = EvalSettings(n_boot=0)
    frames = []
    for name in ("reference", "box"):
        r = predict_system(name, ds, run_dir, progress=False)
        frames.append(score_run(r, ds, settings, ocr=None, style_model=None, progress=False))
    scores = pd.concat(frames, ignore_index=True)
    scores.to_csv(run_dir / "scores-reference.csv", index=False)
    (run_dir / "facts-reference.json").write_text(json.dumps({
        "dataset": ds.name, "reference": "reference", "dataset_dir": str(ds_dir),
        "style": {"n_classes": 3, "chance": 1 / 3, "top1": float("nan"), "n_train": 0, "n_test": 0},
        "unavailable": {}, "settings": {"spacing": 0.05, "ocr_engine": "rapidocr", "casefold": True, "grid": 50}}))
    return run_dir, ds_dir, scores


def test_rescore_at_the_runs_spacing_reproduces_its_scores(tiny_run):
    run_dir, ds_dir, scores = tiny_run
    run = load_eval_run(run_dir)
    assert run.dataset_dir == ds_dir
    g = rescore_geometry(run, 0.05).merge(scores[["system", "word_id", "dtw", "chamfer"]], on=["system", "word_id"])
    assert len(g) == len(scores)
    np.testing.assert_allclose(g["dtw_x"], g["dtw_y"], atol=1e-12)
    np.testing.assert_allclose(g["chamfer_x"], g["chamfer_y"], atol=1e-12)
    coarse = rescore_geometry(run, 0.5)
    box = coarse[coarse["system"] == "box"].set_index("word_id")["dtw"]
    orig = scores[scores["system"] == "box"].set_index("word_id")["dtw"]
    assert not np.allclose(box.loc[orig.index], orig)  # the spacing matters for a non-trivial prediction
    assert (coarse.loc[coarse["system"] == "reference", "dtw"] == 0).all()  # and not for the reference itself


def test_several_spacings_read_each_systems_predictions_once_and_equal_one_at_a_time(tiny_run, monkeypatch):
    """Section 04's spacing variants (issue 43: a run-04 rerun spent most of its time re-reading predictions)."""
    from inkground_lib.analysis import rescoring

    run = load_eval_run(tiny_run[0])
    one = {sp: rescore_geometry(run, sp) for sp in (0.02, 0.5)}
    reads = []
    real = rescoring.prediction_inks
    monkeypatch.setattr(rescoring, "prediction_inks", lambda r, system, *a, **k: reads.append(system) or
                        real(r, system, *a, **k))
    both = rescoring.rescore_geometries(run, [0.02, 0.5])
    assert sorted(reads) == sorted(set(reads)) == sorted(run.scores["system"].unique())
    for sp in (0.02, 0.5):
        pd.testing.assert_frame_equal(both[sp], one[sp])


def test_definition_variants_on_tiny_run(tiny_run):
    run_dir, ds_dir, scores = tiny_run
    run = load_eval_run(run_dir)
    vs = definition_variants(run, spacings=(0.05, 0.1), ocr_engines=("rapidocr", "deepseek-ocr"))
    names = {(v.metric, v.name) for v in vs}
    assert ("dtw", "spacing 0.1") in names and ("dtw", "spacing 0.05") not in names  # the run's own is the default
    sp = next(v for v in vs if v.metric == "dtw" and v.name == "spacing 0.1")
    assert sp.available and sp.values["reference"] == 0 and sp.values["box"] > 0
    t = rank_table(vs)
    assert t.loc[("DTW", "spacing 0.1"), "reference"] == 1 and t.loc[("DTW", "spacing 0.1"), "box"] == 2
    # no OCR ran in this run: the AR variants have no values (n/a), never invented numbers
    assert t.loc[("AR", "case-sensitive"), "box"] == "n/a"
    assert ("ar", "OCR rapidocr") not in names  # the run's own engine is the default, not a variant
    ds_ocr = next(v for v in vs if v.metric == "ar" and v.name == "OCR deepseek-ocr")
    assert ds_ocr.available or ds_ocr.reason.startswith("not available here: ")
    # a run that does not name its dataset: the spacing variant says why it is missing
    facts = json.loads((run_dir / "facts-reference.json").read_text())
    run.facts = {k: v for k, v in facts.items() if k != "dataset_dir"}
    vs2 = definition_variants(run, spacings=(0.1,), ocr_engines=())
    miss = next(v for v in vs2 if v.metric == "dtw" and v.name == "spacing 0.1")
    assert not miss.available and miss.reason.startswith("not available here") and "dataset_dir" in miss.reason


def test_the_other_reference_is_a_variant_where_section_03_scored_both(tiny_run, tmp_path):
    import shutil

    run_dir, ds_dir, scores = tiny_run
    assert other_reference_run(load_eval_run(run_dir)) is None  # one reference only: no variant, no row
    vs = definition_variants(load_eval_run(run_dir), spacings=(), ocr_engines=())
    assert not any(v.name.startswith("against") for v in vs)
    d = shutil.copytree(run_dir, tmp_path / "run")
    true = scores.copy()
    true.loc[true["system"] == "reference", "dtw"] += 9.0  # the references now trace worse than the box
    true.to_csv(d / "scores-true.csv", index=False)
    facts = json.loads((d / "facts-reference.json").read_text())
    (d / "facts-true.json").write_text(json.dumps({**facts, "reference": "true"}))
    run = load_eval_run(d)
    other = other_reference_run(run)
    assert other is not None and other.reference == "true"
    vs = definition_variants(run, spacings=(), ocr_engines=(), other=other)
    names = {(v.metric, v.name) for v in vs}
    assert {("dtw", "against the writers' true trajectories"), ("chamfer", "against the writers' true trajectories"),
            ("style", "against the writers' true trajectories")} <= names
    assert ("ar", "against the writers' true trajectories") not in names  # AR compares with the text
    t = rank_table(vs)
    row = t.loc[("DTW", "against the writers' true trajectories")]
    assert row["box"] == 1 and row["reference"] == 2 and row["Kendall tau vs default"] == pytest.approx(-1.0)


def _two_references(box_true=(0.255, 0.251, 0.258), font_true=(0.227, 0.221, 0.232)):
    cham = {"reference": 0.0, "skeleton": 0.0, "box": 0.17, "font": 0.10}  # the same order against both
    def frame(vals):
        rows = []
        for sys_, (v, lo, hi) in vals.items():
            rows.append({"dataset": "toy", "system": sys_, "label": f"{sys_.title()} baseline (a note)",
                         "dtw": v, "dtw_lo": lo, "dtw_hi": hi, "chamfer": cham[sys_], "chamfer_lo": cham[sys_] - 0.01,
                         "chamfer_hi": cham[sys_] + 0.01})
        return pd.DataFrame(rows)

    pseudo = frame({"reference": (0.0, 0.0, 0.0), "skeleton": (0.0, 0.0, 0.0), "box": (0.287, 0.282, 0.291),
                    "font": (0.299, 0.289, 0.307)})
    truth = frame({"reference": (0.137, 0.129, 0.144), "skeleton": (0.137, 0.129, 0.144), "box": box_true,
                   "font": font_true})
    return pseudo, truth


def test_reference_flips_are_found_only_where_intervals_are_apart():
    from inkground_lib.report.tradeoffs import flips_text

    pseudo, truth = _two_references()
    flips = reference_flips(pseudo, truth, "reference")
    # box < font against the pseudo-labels, font < box against the truth; the references themselves (DTW 0
    # against the pseudo-labels) are never part of a flip; Chamfer keeps its order
    assert [(f.metric, f.ahead, f.behind) for f in flips] == [("dtw", "box", "font")]
    f = flips[0]
    assert f.apart == {"reference": False, "true": True} and f.values["true"]["font"] == (0.227, 0.221, 0.232)
    text = flips_text(flips, ["toy"])
    assert ("against the pseudo-labels the Box baseline has the lower DTW (0.287 [0.282, 0.291] against 0.299 "
            "[0.289, 0.307] word heights, intervals overlapping)") in text
    assert ("against the writers' true trajectories the Font baseline has the lower DTW (0.227 [0.221, 0.232] "
            "against 0.255 [0.251, 0.258] word heights, intervals apart)") in text
    # the same reversal with overlapping intervals on both sides is not stated as a flip
    pseudo, truth = _two_references(box_true=(0.255, 0.22, 0.26), font_true=(0.25, 0.21, 0.27))
    assert reference_flips(pseudo, truth, "reference") == []
    text = flips_text([], ["toy"])
    assert "reverses no order of two systems" in text and "Box" not in text
    # the converse direction: read against the truth, the other reference is the pseudo-labels
    pseudo, truth = _two_references()
    g = reference_flips(truth, pseudo, "true")[0]
    assert (g.ahead, g.behind, g.other) == ("font", "box", "reference")


def test_section_03_summary_states_the_flip_only_where_intervals_are_apart():
    from types import SimpleNamespace

    from inkground_lib.report.evaluation import summary_text

    def res(summary, reference):
        return SimpleNamespace(summary=summary, runs={s: SimpleNamespace(label=s) for s in summary["system"]},
                               unavailable={}, dataset="toy", reference=reference)

    pseudo, truth = _two_references()
    for t in (pseudo, truth):
        t["ar"] = 0.5
    text = summary_text(res(pseudo, "reference"), res(truth, "true"))
    assert "the choice of reference reverses a ranking" in text and "0.227 [0.221, 0.232]" in text
    pseudo, truth = _two_references(box_true=(0.255, 0.22, 0.26), font_true=(0.25, 0.21, 0.27))
    for t in (pseudo, truth):
        t["ar"] = 0.5
    text = summary_text(res(pseudo, "reference"), res(truth, "true"))
    assert "reverses a ranking" not in text and "reverses no order of two systems" in text


def test_median_gap_interval():
    d, lo, hi = median_gap([1.0, 1.1, 0.9, 1.0] * 10, [2.0, 2.1, 1.9, 2.0] * 10, n_boot=500)
    assert d == pytest.approx(-1.0) and hi < 0  # apart: the first group is clearly lower
    d, lo, hi = median_gap([1.0, 2.0, 3.0] * 10, [1.0, 2.0, 3.0] * 10, n_boot=500)
    assert d == 0 and lo < 0 < hi
    assert median_gap([1.0, 2.0], [1.0], n_boot=50, seed=3) == median_gap([1.0, 2.0], [1.0], n_boot=50, seed=3)
    assert all(math.isnan(x) for x in median_gap([], [1.0]))


def test_analyse_lists_a_variant_that_cannot_run_once_and_has_no_second_reference(tiny_run, monkeypatch):
    from inkground_lib.analysis.tradeoffs import analyse
    from inkground_lib.report.tradeoffs import page_numbers

    monkeypatch.delenv("DEEPSEEK_OCR_BASE_URL", raising=False)
    a = analyse([tiny_run[0]], n_boot=20, spacings=(), ocr_engines=("deepseek-ocr",))
    assert a.prose["not_run_text"] == ("Variants not in the tables: OCR deepseek-ocr, not run here "
                                       "(needs DEEPSEEK_OCR_BASE_URL set to its server's address).")
    t = next(iter(a.rank_tables.values()))
    assert not any(v == "OCR deepseek-ocr" for _, v in t.index)
    assert a.reference_summaries == {} and a.flips == []  # one reference only: nothing to compare
    assert "not measured here" in page_numbers(a)["flips_text"]


def test_unknown_ocr_engine_is_an_error_not_a_silent_skip(tiny_run):
    run = load_eval_run(tiny_run[0])
    with pytest.raises(ValueError, match="unknown OCR engine"):
        definition_variants(run, spacings=(), ocr_engines=("no-such-engine-here",))


def test_load_run_names_the_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="scores-reference.csv.*section 03"):
        load_eval_run(tmp_path)


# ------------------------------------------------------------------------- the page: figures and tables
# (section 04 as the book shows it: inkground_lib.report.tradeoffs; issue 14, 2026-11-30)

def _summary_like_section_03():
    """A summary shaped like section 03's: two datasets, four systems each, with the coincident points
    (reference and skeleton identical) and the axis extremes (AR 0 and 1) that clipped and stacked labels."""
    rows = []
    vals = {"synth-benchmark": {"box": (0.287, 0.0, 0.046), "font": (0.299, 0.996, 0.028),
                                "reference": (0.0, 0.989, 0.170), "skeleton": (0.0, 0.989, 0.170)},
            "recorded": {"box": (0.219, 0.0, 0.031), "font": (0.229, 1.0, 0.029),
                         "reference": (0.0, 0.851, 0.115), "skeleton": (0.118, 0.768, 0.083)}}
    for ds, systems in vals.items():
        for s, (dtw, ar, st) in systems.items():
            r = {"dataset": ds, "system": s, "label": f"{s.title()} baseline", "kind": "local", "n_words": 228,
                 "valid_rate": 1.0, "dtw": dtw, "chamfer": dtw / 2, "ar": ar, "cr": ar, "style": st,
                 "n_classes": 41 if ds == "synth-benchmark" else 36}
            for m, w in (("valid_rate", 0), ("dtw", 0.01), ("chamfer", 0.005), ("ar", 0.02), ("cr", 0.02),
                         ("style", 0.05)):
                r[f"{m}_lo"], r[f"{m}_hi"] = max(0.0, r[m] - w), r[m] + w
            r["chance"] = 1 / r["n_classes"]
            rows.append(r)
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def page_figures():
    from inkground_lib.core.paper import paper_numbers
    from inkground_lib.report.tradeoffs import fig_tradeoffs

    rep = paper_numbers()
    summ = _summary_like_section_03()
    return {"dtw": fig_tradeoffs(summ, paper_points(rep), y="dtw"),
            "style": fig_tradeoffs(summ, paper_points(rep), y="style", reported=rep)}


def _drawn(fig):
    """The figure drawn by Agg, as a notebook's PNG is (a figure closed from pyplot keeps a bare canvas)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def _visible_ticks(axis, lo, hi):
    return [t for t in axis.get_majorticklocs() if lo - 1e-9 <= t <= hi + 1e-9]


@pytest.mark.parametrize("which", ["dtw", "style"])
def test_trade_off_axes_tick_at_round_values(page_figures, which):
    fig = page_figures[which]
    _drawn(fig)
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for axis, (lo, hi) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            ticks = _visible_ticks(axis, min(lo, hi), max(lo, hi))
            assert len(ticks) >= 3, (which, ticks)
            for t in ticks:
                # a round value: at most 2 significant decimals (0.05, 0.2, 1), never 0.3322 or -0.0158
                assert abs(round(t, 2) - t) < 1e-9, (which, t)
            if axis.get_scale() == "linear":  # evenly spaced at 1, 2 or 5 times a power of ten
                step = ticks[1] - ticks[0]
                mant = step / 10 ** math.floor(math.log10(step))
                assert any(math.isclose(mant, m) for m in (1, 2, 5)), (which, ticks)
                assert np.allclose(np.diff(ticks), step), (which, ticks)
            labels = [lab.get_text() for lab in axis.get_ticklabels() if lab.get_text()]
            assert all(len(s.lstrip("−-").replace(".", "")) <= 4 for s in labels), labels


def test_dtw_axis_is_symlog_with_round_ticks_when_traces_go_wild():
    from inkground_lib.report.tradeoffs import fig_tradeoffs

    summ = _summary_like_section_03()
    summ.loc[0, ["dtw", "dtw_lo", "dtw_hi"]] = [7.7, 6.0, 9.5]  # a wild trace: several word heights
    fig = fig_tradeoffs(summ, None, y="dtw")
    ax = fig.axes[0]
    assert ax.get_yscale() == "symlog"
    lo, hi = ax.get_ylim()
    assert _visible_ticks(ax.yaxis, lo, hi) == [0, 0.1, 0.2, 0.5, 1, 2, 5, 10]


def test_ours_and_the_papers_style_never_share_an_axes(page_figures):
    fig = page_figures["style"]
    seen = 0
    for ax in fig.axes:
        labels = {h.get_label() for h in ax.collections + ax.lines + ax.containers}
        ours = any(lab.startswith("ours") for lab in labels)
        paper = any(lab.startswith("paper") for lab in labels)
        assert not (ours and paper), labels
        seen += ours + paper
        if ours or paper:  # every Style panel names its classifier's number of classes and draws its chance
            assert "(classes)" in ax.get_title()
            assert any(lab.startswith("chance") for lab in labels)
    assert seen == 4  # two datasets of ours, two of the paper's
    # the DTW figure does put both on one axes (same unit, word heights), and says which is which
    labels = {c.get_label() for c in page_figures["dtw"].axes[0].containers + page_figures["dtw"].axes[0].collections}
    assert any(lab.startswith("ours") for lab in labels) and any(lab.startswith("paper") for lab in labels)


@pytest.mark.parametrize("which", ["dtw", "style"])
def test_point_labels_do_not_overlap_and_stay_inside(page_figures, which):
    fig = page_figures[which]
    r = _drawn(fig)
    fb = fig.bbox
    for ax in fig.axes:
        texts = [t for t in ax.texts if t.get_text()]
        boxes = [t.get_window_extent(r) for t in texts]
        ab = ax.get_window_extent(r)
        for t, b in zip(texts, boxes):
            assert fb.x0 <= b.x0 and b.x1 <= fb.x1 and fb.y0 <= b.y0 and b.y1 <= fb.y1, t.get_text()
            assert ab.x0 - 1 <= b.x0 and b.x1 <= ab.x1 + 1 and ab.y0 - 1 <= b.y0 and b.y1 <= ab.y1 + 1, t.get_text()
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                assert not boxes[i].overlaps(boxes[j]), (texts[i].get_text(), texts[j].get_text())
    if which == "dtw":
        names = [t.get_text() for t in fig.axes[0].texts]
        # coincident points get one label, not one printed over the other
        assert "reference = skeleton" in names and "skeleton" in names


def test_trade_off_figure_is_deterministic():
    import io

    from inkground_lib.core.paper import paper_numbers
    from inkground_lib.report.tradeoffs import fig_tradeoffs

    rep = paper_numbers()

    def positions():
        fig = fig_tradeoffs(_summary_like_section_03(), paper_points(rep), y="dtw")
        fig.savefig(io.BytesIO(), format="png")
        return [tuple(np.round(t.get_position(), 9)) for t in fig.axes[0].texts]

    assert positions() == positions()


def test_fig_tradeoffs_rejects_an_unknown_axis():
    from inkground_lib.report.tradeoffs import fig_tradeoffs

    with pytest.raises(ValueError, match="dtw' or 'style"):
        fig_tradeoffs(_summary_like_section_03(), None, y="chamfer")


PANDAS_NAMES = ["n_words", "valid_rate", "dtw_lo", "style_hi", "check_ok", "check_detail", "n_classes",
                "Kendall tau vs default", "level_0", "Unnamed", "NaN", "nan", "None"]


def _html_ok(view):
    import re

    html = view.to_html()
    text = re.sub(r"<[^>]+>", " ", html)
    assert "..." not in text and "…" not in text, text
    for name in PANDAS_NAMES:
        assert not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text), (name, text[:2000])
    assert not re.search(r"\d\.\d{5,}", text), re.findall(r"\d\.\d{5,}", text)  # 1.000000, 462.3570
    return html, text


def test_section_04_tables_are_human():
    from inkground_lib.analysis.claims import check_claims, load_claims
    from inkground_lib.core.paper import paper_numbers
    from inkground_lib.report.table_view import PAPER_ROW_CLASS
    from inkground_lib.report.tradeoffs import (
        claims_view,
        corr_view,
        points_view,
        rank_view,
        style_view,
        taus_view,
    )

    rep = paper_numbers()
    summ = _summary_like_section_03()
    html, text = _html_ok(points_view(summ, paper_points(rep), rep, "Table 4.1: scores"))
    assert "Table 4.1: scores" in text and PAPER_ROW_CLASS in html
    assert "0.287" in text and "228" in text and "228.000" not in text
    html, text = _html_ok(style_view(style_chance_table(summ, rep), "Table 4.3: Style"))
    assert "462.4" in text and "0.0019" in text  # Style / chance at 1 decimal, chance 1/537 at 4
    claims = check_claims(load_claims(reported=rep), rep).set_index("claim_id").iloc[:3]
    _html_ok(claims_view(claims, "Table 4.2: claims"))
    s = _scores()
    cuda = "not available here: deepseek-ocr: torch.cuda.is_available() is False; install a GPU build"
    vs = [Variant("dtw", "default (spacing 0.05, all words)", point_values(s, "dtw"), default=True),
          Variant("dtw", "valid outputs only", point_values(s, "dtw", valid_only=True)),
          Variant("chamfer", "default (spacing 0.05, all words)", point_values(s, "chamfer"), default=True),
          Variant("ar", "default", point_values(s, "ar"), default=True),
          Variant("ar", "OCR deepseek-ocr", reason=cuda), Variant("cr", "default", point_values(s, "cr"), default=True),
          Variant("cr", "OCR deepseek-ocr", reason=cuda)]
    t = rank_table(vs)
    view = rank_view(t, vs, "Table 4.4a: ranks on toy")
    html, text = _html_ok(view)
    # a variant that cannot run has no row (no dashes, no footnote): the prose lists it once
    assert "OCR deepseek-ocr" not in text and "torch.cuda" not in text and "\u2014 *" not in text
    assert not_run_variants(vs) == {"OCR deepseek-ocr": "deepseek-ocr: torch.cuda.is_available() is False"}
    assert text.count("default (spacing 0.05, all words)") == 2
    _html_ok(taus_view(kendall_table({"toy": t}), "Table 4.5: taus"))
    html, text = _html_ok(corr_view(metric_correlations(s), "Table 4.6a: Spearman, toy"))
    assert "1.00" in text


def test_page_numbers_never_print_nan():
    from types import SimpleNamespace

    from inkground_lib.core.paper import paper_numbers
    from inkground_lib.report.tradeoffs import page_numbers

    summ = _summary_like_section_03()
    taus = pd.DataFrame([{"dataset": "toy", "variants compared": 0, "lowest tau": np.nan, "at": "",
                          "variants with tau = 1": 0}]).set_index("dataset")
    a = SimpleNamespace(summary=summ, taus=taus, reported=paper_numbers(), variants={}, prose={})
    nums = page_numbers(a)
    assert "no definition variant could be compared" in nums["tau_text"]
    assert "not measured here" in nums["flips_text"]  # no dataset scored against both references
    assert nums["n_systems"] == 4 and nums["n_datasets"] == 2
    assert "41 writers" in nums["ours_classes_text"] and "537 pages" in nums["paper_classes_text"]
    for v in nums.values():
        assert "nan" not in str(v).lower() and "None" not in str(v)


def test_trade_off_figures_survive_missing_values():
    """One dataset, no OCR (AR missing), one system without Style, no paper points: figures still draw,
    with no label for a point that cannot be placed and round ticks."""
    from inkground_lib.report.tradeoffs import fig_tradeoffs

    summ = _summary_like_section_03()
    summ = summ[summ["dataset"] == "recorded"].copy()
    summ[["ar", "ar_lo", "ar_hi"]] = np.nan
    summ.loc[summ["system"] == "box", ["style", "style_lo", "style_hi"]] = np.nan
    for y in ("dtw", "style"):
        fig = fig_tradeoffs(summ, None, y=y)
        _drawn(fig)
        assert [t.get_text() for ax in fig.axes for t in ax.texts] == []
        ax = fig.axes[0]
        assert all(abs(round(t, 2) - t) < 1e-9 for t in _visible_ticks(ax.yaxis, *sorted(ax.get_ylim())))
    summ["ar"] = [0.0, 1.0, 0.85, 0.77]
    fig = fig_tradeoffs(summ, None, y="style")
    assert sorted(t.get_text() for t in fig.axes[0].texts) == ["font", "reference", "skeleton"]
    assert len(fig.axes) == 1 and "36 writers" in fig.axes[0].get_title()
