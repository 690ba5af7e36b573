"""A metric is one record (issue 47): the table of core.metric_table is what scoring, the summary and its bootstrap,
section 04's variants, ranks and fronts, the CLI and paper scale read. The shipped table gives the columns and
orders the outputs had before it existed; a toy metric registered in a test only appears in section 03's scores,
its summary and section 04's ranks."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import make_tiny_dataset  # noqa: E402

from inkground_lib.core.metric_table import (  # noqa: E402
    METRICS,
    Metric,
    metric,
    metric_labels,
    metric_names,
    summary_statistics,
)


def test_the_shipped_table_gives_the_columns_and_orders_of_before():
    from inkground_lib.analysis.tradeoffs import REFERENCE_METRICS
    from inkground_lib.core.scores_table import SCORE_COLUMNS
    from inkground_lib.evaluation.scores import SUMMARY_METRICS
    from inkground_lib.pipelines.paper_scale import SUMMARY_COLUMNS

    assert metric_names() == ("dtw", "chamfer", "ar", "cr", "style")
    assert SCORE_COLUMNS == ("system", "dataset", "page_id", "word_id", "text", "status", "valid", "dtw", "chamfer",
                             "ocr_text", "S", "D", "I", "N", "ar", "cr", "style")
    assert SUMMARY_METRICS == ("valid_rate", "dtw", "chamfer", "style", "dtw_valid", "chamfer_valid", "style_valid",
                               "ar", "cr")
    assert SUMMARY_COLUMNS == ["system", "label", "n_words", "n_pages", "valid_rate", "dtw", "chamfer", "ar", "cr",
                               "style"]
    assert REFERENCE_METRICS == ("dtw", "chamfer", "style")
    assert metric_labels() == {"dtw": "DTW", "chamfer": "Chamfer", "ar": "AR", "cr": "CR", "style": "Style"}
    assert {m.name: m.better for m in METRICS.values()} == {"dtw": "min", "chamfer": "min", "ar": "max", "cr": "max",
                                                            "style": "max"}


def test_geometry_is_read_by_name_and_the_names_are_the_table_s():
    from inkground_lib.components.metrics.trajectory import GEOMETRY_COLUMNS, dtw, chamfer, geometry_batch, geometry_columns

    assert GEOMETRY_COLUMNS == metric_names(computed="geometry")
    ref = [[[10, 20, 0], [10, 120, 100]]]
    pred = [[[60, 20, 0], [70, 120, 100]]]
    g = geometry_columns(geometry_batch([(pred, ref)]))
    assert g["dtw"][0] == dtw(pred, ref) and g["chamfer"][0] == chamfer(pred, ref)
    with pytest.raises(ValueError, match="expected a"):
        geometry_columns(np.zeros((2, 3)))


def test_corpus_rates_follow_their_counts():
    from inkground_lib.components.metrics.readability import edit_counts

    c = edit_counts("hallo", "hello!x")
    for m in metric_names(aggregate="corpus"):
        assert getattr(c, m) == pytest.approx((c.N - sum(getattr(c, k) for k in metric(m).counts)) / c.N)


def test_a_record_is_checked():
    with pytest.raises(ValueError, match="better"):
        Metric("x", "X", "up", "u", "geometry")
    with pytest.raises(ValueError, match="counts"):
        Metric("x", "X", "max", "u", "ocr", "corpus")
    with pytest.raises(ValueError, match="word_value"):
        Metric("x", "X", "max", "u", "word")
    with pytest.raises(ValueError, match="unknown metric 'nope'; known: dtw, chamfer"):
        metric("nope")


def _points(pred, ref, page_size, word) -> float:
    """The toy metric: how many points the prediction has (0 for an invalid output)."""
    return 0.0 if pred is None else float(pred.n_points)


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(METRICS, "toy", Metric("toy", "Toy", "max", "points", "word", word_value=_points))
    return METRICS["toy"]


def test_a_toy_metric_registered_here_reaches_scores_summary_and_ranks(toy, tmp_path):
    from inkground_lib.analysis.tradeoffs import definition_variants, point_values, rank_table
    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.core.run_loaders import load_eval_run
    from inkground_lib.evaluation.predict import predict_system
    from inkground_lib.evaluation.scores import summarize
    from inkground_lib.evaluation.scoring import score_run
    from inkground_lib.evaluation.settings import EvalSettings

    assert metric_names()[-1] == "toy"
    assert summary_statistics() == ("valid_rate", "dtw", "chamfer", "style", "toy", "dtw_valid", "chamfer_valid",
                                    "style_valid", "toy_valid", "ar", "cr")
    ds_dir = make_tiny_dataset(tmp_path / "ds", pages=3, words=3, unique_texts=True)
    ds = load_dataset(ds_dir)
    run_dir = tmp_path / "run"
    runs = {n: predict_system(n, ds, run_dir, progress=False) for n in ("reference", "box")}
    scores = pd.concat([score_run(r, ds, EvalSettings(n_boot=0), ocr=None, style_model=None, progress=False)
                        for r in runs.values()], ignore_index=True)
    # section 03's scores: the record's function of each word's prediction
    want = [0.0 if ink is None else float(ink.n_points) for r in runs.values() for ink in r.inks]
    assert scores["toy"].tolist() == want
    # its summary, with its interval and its mean over valid outputs
    summ = summarize(scores, n_boot=50, seed=0).set_index("system")
    means = scores.groupby("system")["toy"].mean()
    for s in runs:
        assert summ.loc[s, "toy"] == pytest.approx(means[s]) and summ.loc[s, "toy_lo"] <= summ.loc[s, "toy"] \
            <= summ.loc[s, "toy_hi"]
        assert summ.loc[s, "toy_valid"] == pytest.approx(means[s])
    # section 04: its variants and its ranks (higher is better, as its record says)
    scores.to_csv(run_dir / "scores-reference.csv", index=False)
    (run_dir / "facts-reference.json").write_text(json.dumps({
        "dataset": ds.name, "reference": "reference", "dataset_dir": str(ds_dir),
        "style": {"n_classes": 3, "chance": 1 / 3, "top1": float("nan"), "n_train": 0, "n_test": 0},
        "unavailable": {}, "settings": {"spacing": 0.05, "ocr_engine": "rapidocr", "casefold": True, "grid": 50}}))
    run = load_eval_run(run_dir)
    assert run.scores["toy"].tolist() == want
    vs = [v for v in definition_variants(run, spacings=(), ocr_engines=()) if v.metric == "toy"]
    assert [v.name for v in vs] == ["default (all words)", "valid outputs only"]
    t = rank_table(vs)
    v = point_values(run.scores, "toy")
    best, worst = v.idxmax(), v.idxmin()
    assert best != worst
    assert t.loc[("Toy", "default (all words)"), best] == 1 and t.loc[("Toy", "default (all words)"), worst] == 2

    # the book's tables and sentences (report/) read the record too: the results table, the leader sentence,
    # section 04's points table and a reference flip's sentence
    from inkground_lib.analysis.tradeoffs import RankFlip
    from inkground_lib.report.evaluation import leader_phrase
    from inkground_lib.report.tables import results_table
    from inkground_lib.report.tradeoffs import flip_sentence, points_table

    s = summ.reset_index().assign(label=lambda d: d["system"], dataset=ds.name)
    table = results_table(s, None)
    assert {"Toy", "Toy (valid only)"} <= set(table.columns)
    assert not table["Toy"].str.startswith("—").any()
    assert leader_phrase(s, "toy", "highest Toy").startswith(f"{best} has the highest Toy")
    pts, _ = points_table(s)
    assert pts.set_index("system")["toy"].to_dict() == pytest.approx(means.to_dict())
    flip = RankFlip(ds.name, "toy", "reference", "true", "box", "reference", {"box": "Box", "reference": "Ref"},
                    {"reference": {"box": (2.0, 1.0, 3.0), "reference": (1.0, 0.5, 1.5)},
                     "true": {"box": (1.0, 0.5, 1.5), "reference": (2.0, 1.0, 3.0)}},
                    {"reference": False, "true": False})
    assert "the Box has the higher Toy (2.0" in flip_sentence(flip)
