"""Tests of the per-word scores schema (inkground_lib.core.scores_table) and the per-system summary (inkground_lib.evaluation.scores)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from inkground_lib.components.metrics.readability import corpus_char_rates, edit_counts
from inkground_lib.core.scores_table import SCORE_COLUMNS, empty_scores, scores_frame
from inkground_lib.core.bootstrap import page_bootstrap_counts
from inkground_lib.evaluation.scores import SUMMARY_METRICS, summarize


def make_scores(seed=0, systems=("alpha", "beta"), n_pages=12, style=True) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    words = ["the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog"]
    rows = []
    for si, sysname in enumerate(systems):
        for p in range(n_pages):
            for w in range(int(rng.integers(1, 6))):
                text = words[int(rng.integers(len(words)))]
                valid = bool(rng.random() > 0.2 + 0.1 * si)
                hyp = text if rng.random() < 0.5 else text[::-1] + "x" * int(rng.integers(0, 3))
                if not valid:
                    hyp = ""
                c = edit_counts(hyp, text)
                rows.append(dict(system=sysname, dataset="synth", page_id=f"p{p:03d}", word_id=f"w{w}", text=text,
                                 status="ok" if valid else "no_strokes", valid=valid,
                                 dtw=float(rng.gamma(2, 0.2 + si * 0.1) + (0 if valid else 3)),
                                 chamfer=float(rng.gamma(2, 0.1)), ocr_text=hyp, S=c.S, D=c.D, I=c.I, N=c.N,
                                 ar=c.ar, cr=c.cr,
                                 style=float(rng.random()) if style and w % 2 == 0 else np.nan))
    return scores_frame(rows)


def test_schema_columns_and_dtypes():
    assert SCORE_COLUMNS == ("system", "dataset", "page_id", "word_id", "text", "status", "valid", "dtw",
                               "chamfer", "ocr_text", "S", "D", "I", "N", "ar", "cr", "style")
    df = make_scores()
    assert tuple(df.columns) == SCORE_COLUMNS
    assert df["valid"].dtype == bool and df["N"].dtype == "Int64" and df["dtw"].dtype == np.float64
    empty = empty_scores()
    assert tuple(empty.columns) == SCORE_COLUMNS and len(empty) == 0
    assert len(summarize(empty)) == 0


def test_scores_frame_fills_optional_columns_and_rejects_bad_tables():
    df = scores_frame([dict(system="s", dataset="d", page_id="p", word_id="w", valid=True, dtw=0.1, chamfer=0.2)])
    assert tuple(df.columns) == SCORE_COLUMNS
    assert pd.isna(df.loc[0, "N"]) and math.isnan(df.loc[0, "style"])
    base = dict(system="s", dataset="d", page_id="p", word_id="w", valid=True, dtw=0.1, chamfer=0.2)
    with pytest.raises(ValueError, match="missing required column.*chamfer"):
        scores_frame([{k: v for k, v in base.items() if k != "chamfer"}])
    with pytest.raises(ValueError, match="duplicate row.*page 'p'"):
        scores_frame([base, base])
    with pytest.raises(ValueError, match="'valid'"):
        scores_frame([dict(base, valid="yes")])
    with pytest.raises(ValueError, match="some of S, D, I, N"):
        scores_frame([dict(base, S=1, D=0, I=0)])
    with pytest.raises(ValueError, match="negative D"):
        scores_frame([dict(base, S=0, D=-1, I=0, N=3)])
    with pytest.raises(ValueError, match="'dtw'"):
        scores_frame([dict(base, dtw="far")])


def slow_summary(g: pd.DataFrame) -> dict:
    """Point estimates computed the plain way."""
    v = g[g["valid"]]
    S, D, I, N = (int(g[c].sum()) for c in ("S", "D", "I", "N"))
    return dict(n_words=len(g), valid_rate=g["valid"].mean(), dtw=g["dtw"].mean(), chamfer=g["chamfer"].mean(),
                style=g["style"].dropna().mean(), dtw_valid=v["dtw"].mean(), chamfer_valid=v["chamfer"].mean(),
                style_valid=v["style"].dropna().mean(), ar=(N - S - D - I) / N, cr=(N - S - D) / N)


def test_point_estimates_match_plain_computation():
    df = make_scores()
    out = summarize(df, n_boot=50)
    assert list(out["system"]) == ["alpha", "beta"]
    for _, row in out.iterrows():
        g = df[df["system"] == row["system"]]
        want = slow_summary(g)
        for k, v in want.items():
            assert row[k] == pytest.approx(v, rel=1e-12), k
        pairs = list(zip(g["ocr_text"], g["text"]))
        assert (row["ar"], row["cr"]) == pytest.approx(corpus_char_rates(pairs))
        assert row["n_pages"] == g["page_id"].nunique()
        assert row["n_style"] == g["style"].notna().sum() and row["n_ocr"] == len(g)


def test_ci_contains_estimate_and_is_deterministic():
    df = make_scores(seed=3, n_pages=30)
    a = summarize(df, n_boot=400, seed=7)
    b = summarize(df, n_boot=400, seed=7)
    c = summarize(df, n_boot=400, seed=8)
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["dtw_lo"], c["dtw_lo"])
    for m in SUMMARY_METRICS:
        assert (a[f"{m}_lo"] <= a[m]).all() and (a[m] <= a[f"{m}_hi"]).all(), m
        assert (a[f"{m}_lo"] < a[f"{m}_hi"]).all(), m
    # a wider level gives a wider interval
    w = summarize(df, n_boot=400, seed=7, ci=0.99)
    assert (w["dtw_lo"] <= a["dtw_lo"]).all() and (w["dtw_hi"] >= a["dtw_hi"]).all()


def test_bootstrap_resamples_pages_not_words():
    # page A: 100 words with DTW 1; ten other pages: one word each with DTW 0. Resampling words would give
    # an interval tight around 100/110; resampling the 11 pages leaves page A out of a replicate with
    # probability (10/11)^11 = 0.35, so the lower bound is exactly 0.
    rows = [dict(system="s", dataset="d", page_id="A", word_id=f"a{i}", valid=True, dtw=1.0, chamfer=1.0)
            for i in range(100)]
    rows += [dict(system="s", dataset="d", page_id=f"B{i}", word_id="b", valid=True, dtw=0.0, chamfer=0.0)
             for i in range(10)]
    out = summarize(scores_frame(rows), n_boot=2000, seed=0).iloc[0]
    assert out["dtw"] == pytest.approx(100 / 110)
    assert out["dtw_lo"] == 0.0
    assert out["dtw_hi"] >= 200 / 209 - 1e-12  # page A drawn at least twice in >= 2.5% of replicates
    assert out["n_pages"] == 11


def test_vectorised_bootstrap_equals_explicit_resampling_of_pages():
    df = make_scores(seed=5, systems=("solo",), n_pages=9)
    n_boot, seed, ci = 60, 11, 0.9
    out = summarize(df, n_boot=n_boot, seed=seed, ci=ci).iloc[0]
    pages = sorted(df["page_id"].unique())  # one dataset: clusters in sorted page order
    counts = page_bootstrap_counts(len(pages), n_boot, seed)
    assert counts.shape == (n_boot, len(pages)) and (counts.sum(axis=1) == len(pages)).all()
    reps = {m: [] for m in SUMMARY_METRICS}
    by_page = {p: g for p, g in df.groupby("page_id")}
    for b in range(n_boot):
        parts = [by_page[p] for p, k in zip(pages, counts[b]) for _ in range(k)]
        stats = slow_summary(pd.concat(parts))
        for m in reps:
            reps[m].append(stats[m])
    for m, v in reps.items():
        lo, hi = np.nanquantile(np.array(v, dtype=float), [(1 - ci) / 2, 1 - (1 - ci) / 2])
        assert out[f"{m}_lo"] == pytest.approx(lo, rel=1e-12), m
        assert out[f"{m}_hi"] == pytest.approx(hi, rel=1e-12), m


def test_same_page_ids_in_different_datasets_are_different_clusters():
    rows = [dict(system="s", dataset=ds, page_id="p1", word_id="w", valid=True, dtw=x, chamfer=x)
            for ds, x in (("a", 0.0), ("b", 1.0))]
    out = summarize(scores_frame(rows), n_boot=200).iloc[0]
    assert out["n_pages"] == 2 and out["dtw"] == 0.5
    by = summarize(scores_frame(rows), n_boot=10, by=["dataset", "system"])
    assert list(by["dataset"]) == ["a", "b"] and list(by["dtw"]) == [0.0, 1.0]


def test_missing_style_and_ocr_give_nan_not_errors():
    df = make_scores(style=False)
    df["S"] = df["D"] = df["I"] = df["N"] = pd.NA
    df["S"] = df["S"].astype("Int64")
    df["D"] = df["D"].astype("Int64")
    df["I"] = df["I"].astype("Int64")
    df["N"] = df["N"].astype("Int64")
    out = summarize(df, n_boot=100)
    for m in ("style", "style_valid", "ar", "cr"):
        assert out[m].isna().all() and out[f"{m}_lo"].isna().all() and out[f"{m}_hi"].isna().all(), m
    assert out["dtw"].notna().all() and (out["n_style"] == 0).all() and (out["n_ocr"] == 0).all()


def test_all_invalid_system_has_nan_valid_only_means():
    rows = [dict(system="s", dataset="d", page_id=f"p{i}", word_id="w", valid=False, dtw=5.0, chamfer=4.0)
            for i in range(4)]
    out = summarize(scores_frame(rows), n_boot=50).iloc[0]
    assert out["valid_rate"] == 0.0 and out["dtw"] == 5.0
    assert math.isnan(out["dtw_valid"]) and math.isnan(out["dtw_valid_lo"])


def test_summarize_argument_checks():
    df = make_scores()
    with pytest.raises(ValueError, match="ci"):
        summarize(df, ci=95)
    with pytest.raises(ValueError, match="n_boot"):
        summarize(df, n_boot=-1)
    with pytest.raises(ValueError, match="group by"):
        summarize(df, by="model")
    out = summarize(df, n_boot=0)
    assert out["dtw_lo"].isna().all() and out["dtw"].notna().all()
