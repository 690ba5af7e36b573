"""How the book shows tables and stroke overlays (issue 14): captioned tables that keep every column and set
the paper's rows apart, galleries without rows identical to the reference, pen paths over the page photo."""
import re
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

from inkground_lib.core.ink import Ink
from inkground_lib.report.evaluation import (
    fig_galleries,
    gallery_entries,
    identical_to_reference,
)
from inkground_lib.report.palette import PREDICTION, REFERENCE
from inkground_lib.report.player import PlayerGrid, pen_path_svg, player_figure
from inkground_lib.report.table_view import fold_repeated, number_text, table_view
from inkground_lib.report.tables import PAPER, results_view


def test_table_view_prints_every_column_and_row_with_human_names():
    df = pd.DataFrame({f"col{i}": np.arange(30) * 1.0 for i in range(40)})
    df["n_words"] = 3
    html = table_view(df, "Table X: wide", columns={"n_words": "words"}).to_html()
    assert "..." not in html and "…" not in html
    assert html.count("<th ") >= 41 and "n_words" not in html and ">words<" in html
    assert html.count("<tr>") == 31  # header + 30 rows: nothing truncated
    # the caption is outside the scroll box, so it wraps at the page's width
    assert re.search(r"<figcaption[^>]*>Table X: wide</figcaption><div class=\"ink-table-wrap\"", html)


def test_number_text_never_prints_pandas_precision():
    assert [number_text(v) for v in (1.0, 462.3570, 0.1234, 12.345, 2984.0)] == ["1", "462.4", "0.123", "12.35",
                                                                                 "2,984"]
    html = table_view(pd.DataFrame({"a": [1.0, 0.5], "b": [462.357, np.nan]}), "t").to_html()
    assert "1.000000" not in html and "462.3570" not in html and not re.search(r"\bnan\b", html, re.I)


def test_repeated_reasons_become_one_footnote():
    reason = "— torch.cuda.is_available() is False"
    df = pd.DataFrame({"a": [reason] * 8, "b": [reason] * 8, "c": ["short"] * 8})
    folded, notes = fold_repeated(df)
    assert notes == ["* torch.cuda.is\\_available() is False"]  # Markdown: the cell's text shown literally
    assert (folded[["a", "b"]] == "— *").all().all() and (folded["c"] == "short").all()
    html = table_view(df, "t").to_html()
    assert html.count("torch.cuda.is_available()") == 1


def test_results_view_sets_the_papers_rows_apart_and_footnotes_the_systems_not_run():
    summary = pd.DataFrame([{"system": "skeleton", "label": "Skeleton", "dtw": 0.2, "dtw_lo": 0.1, "dtw_hi": 0.3,
                             "n_words": 10, "n_valid": 10, "n_ocr": 10, "n_style": 4}])
    view = results_view(summary, "inkGround", "Table 1: test", not_run={"gemini-3.1-pro": "no key"})
    html = view.to_html()
    paper = [i for i, s in enumerate(view.data["source"]) if s == PAPER]
    assert paper and view.paper_rows == paper
    assert html.count("ink-first-paper-row") == len(view.data.columns)  # one rule, above the first paper row
    assert "Gemini-3.1-Pro" in html and "gemini-3.1-pro" in html  # the paper's row and the footnote
    assert "— not run" not in html


def test_identical_systems_are_left_out_of_galleries():
    scores = pd.DataFrame({"system": ["reference"] * 3 + ["skeleton"] * 3 + ["font"] * 3,
                           "dtw": [0, 0, 0, 0, 0, 0, 0.1, 0.3, 0.2]})
    assert identical_to_reference(scores, "reference") and identical_to_reference(scores, "skeleton")
    assert not identical_to_reference(scores, "font")
    assert not identical_to_reference(scores, "missing")


@pytest.fixture(scope="module")
def tiny_ds(tmp_path_factory):
    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.datasets.synth.generate import SynthParams, generate

    out = generate(tmp_path_factory.mktemp("views") / "ds", SynthParams(pages=1, words_min=3, words_max=3,
                                                                      words_mean=3, width=500, height=600),
                   progress=False)
    return load_dataset(out)


class _Run:
    def __init__(self, name, inks):
        self.name, self.label, self.inks = name, name.title(), inks


def test_gallery_entries_and_figure_show_only_systems_that_differ(tiny_ds):
    words = [w for p in tiny_ds.pages for w in p.words]
    ids = [w.id for w in words]
    shifted = [Ink([s + np.array([3.0, 1.0] + [0.0] * (s.shape[1] - 2)) for s in w.ink.strokes]) for w in words]
    scores = pd.DataFrame({"system": ["reference"] * 3 + ["font"] * 3, "word_id": ids * 2,
                           "page_id": [tiny_ds.pages[0].id] * 6, "dtw": [0, 0, 0, 0.3, 0.1, 0.2],
                           "ocr_text": ["a", "b", "c", "d", None, "f"]})
    runs = {"reference": _Run("reference", [w.ink for w in words]), "font": _Run("font", shifted)}
    entries, skipped = gallery_entries(tiny_ds, scores, runs)
    assert skipped == ["Reference"] and [e.tag for e in entries] == ["best", "median", "worst"]
    assert [round(e.dtw, 2) for e in entries] == [0.1, 0.2, 0.3]
    assert all(e.crop.shape[:2] == (e.box[3] - e.box[1], e.box[2] - e.box[0]) for e in entries)
    fig = fig_galleries(tiny_ds, scores, runs)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert len(titles) == 3 and all("DTW" in t for t in titles)
    assert [sf.get_suptitle() for sf in fig.subfigs] == ["font"]  # one row per system, headed by its name


def test_player_over_the_page_photo_is_a_captioned_figure():
    crop = np.full((40, 80, 3), 200, np.uint8)
    ink = Ink([np.array([[10.0, 110.0], [60.0, 115.0]])])
    svg = pen_path_svg([(ink, "reference", REFERENCE, True), (ink, "prediction", PREDICTION, False)],
                       photo=(crop, (5, 100)), title="t")
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    image = root.find(f"{ns}image")
    assert image is not None and image.get("href").startswith("data:image/jpeg;base64,")
    assert (float(image.get("width")), float(image.get("height"))) == (80.0, 40.0)
    x0, y0, w, h = map(float, root.get("viewBox").split())
    assert x0 <= 4.5 and y0 <= 99.5 and x0 + w >= 84.5 and y0 + h >= 139.5  # the frame covers the photo
    html = PlayerGrid([player_figure(svg, "best: 'a', DTW 0.100")], "caption")._repr_html_()
    assert html.count("<figcaption>") == 2 and "DTW 0.100" in html


@pytest.fixture(scope="module")
def pseudo_run(tiny_ds, tmp_path_factory):
    from inkground_lib.pseudo.run import run_pseudo_labels

    return run_pseudo_labels(tiny_ds.root, tmp_path_factory.mktemp("views02") / "run", progress=False, workers=1)


def test_funnel_counts_are_the_runs_and_the_papers(pseudo_run):
    from inkground_lib.core.paper import paper_numbers
    from inkground_lib.pseudo.run import summary_numbers
    from inkground_lib.report.pseudo_figures import fig_funnel, funnel_counts

    nums, paper = summary_numbers(pseudo_run), paper_numbers()
    df = funnel_counts(pseudo_run)
    assert list(df["ours"]) == [nums["candidates"], nums["ocr_pass_pages"], nums["benchmark_pages"]]
    assert list(df["paper"]) == [paper.loc[k, "value"] for k in ("candidates", "ocr_pass_pages", "benchmark_pages")]
    for side in ("ours", "paper"):
        shares = list(df[f"{side}_share"])
        assert shares[0] == 1 and shares == sorted(shares, reverse=True)
    texts = [t.get_text() for t in fig_funnel(pseudo_run).axes[0].texts]
    assert f"{paper.loc['candidates', 'value']:,.0f} pages" in texts and f"{nums['candidates']:,.0f} pages" in texts


def test_truth_examples_are_the_best_median_and_worst_by_dtw(pseudo_run, tiny_ds):
    from inkground_lib.report.pseudo_figures import (
        fig_truth_examples,
        truth_examples,
        truth_players,
    )

    ex = truth_examples(pseudo_run, tiny_ds)
    w = pseudo_run.words.dropna(subset=["dtw"])
    w = w[w["points"] > 0]
    assert [e["tag"] for e in ex] == ["best", "median", "worst"]
    assert ex[0]["dtw"] == w["dtw"].min() and ex[-1]["dtw"] == w["dtw"].max()
    assert ex[0]["dtw"] <= ex[1]["dtw"] <= ex[2]["dtw"]
    titles = [ax.get_title() for ax in fig_truth_examples(pseudo_run, tiny_ds).axes if ax.get_title()]
    assert all(f"DTW {e['dtw']:.3f}" in t for e, t in zip(ex, titles))
    assert truth_players(pseudo_run, tiny_ds)._repr_html_().count('class="ig-pen-player"') == 3
