"""Issue 13: tables that say what was measured (precision, missing values, set parameters). Nothing heavy runs."""

from __future__ import annotations

import math
import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from inkground_lib.core.paper import paper_numbers
from inkground_lib.report.dataset_stats import (
    generator_sentence,
    generator_settings,
    statistics_table,
)
from inkground_lib.report.format import (
    EM_DASH,
    format_interval,
    interval_decimals,
    missing,
    value_with_interval,
)
from inkground_lib.report.pseudo_labels import funnel_parameters
from inkground_lib.report.tables import (
    MEASURED,
    PAPER,
    RATIO,
    SET,
    SET_TO_PAPER,
    beside_paper,
    results_table,
)

RAW_MISSING = re.compile(r"\b(nan|NaN|None|NA|<NA>)\b")


def _no_raw_missing(df: pd.DataFrame):
    text = df.to_string() + df.to_html()
    assert not RAW_MISSING.search(text), RAW_MISSING.search(text)


def _parse(s: str):
    m = re.fullmatch(r"(-?\d+\.(\d+)) \[(-?\d+\.(\d+)), (-?\d+\.(\d+))\]", s)
    assert m, s
    return m


def test_the_issue_example_prints_its_interval_at_the_point_estimates_precision():
    assert format_interval(0.018, 0.0172, 0.0188) == "0.018 [0.017, 0.019]"
    assert format_interval(0.0183, 0.0181, 0.0184) == "0.0183 [0.0181, 0.0184]"  # distinct only at 4 decimals
    assert format_interval(0.0, 0.0, 0.0) == "0.000 [0.000, 0.000]"
    assert interval_decimals(0.5, 0.5) == 3
    assert format_interval(1e-5, -2e-5, 3e-5) == "0.00001 [-0.00002, 0.00003]"


def test_a_point_estimate_never_prints_outside_its_rounded_interval():
    rng = np.random.default_rng(13)
    for _ in range(20000):
        scale = 10 ** rng.uniform(-6, 1)
        lo, hi = np.sort(rng.uniform(0, 1, 2) * scale)
        if rng.random() < 0.2:  # narrow intervals around round numbers
            c = round(float(rng.uniform(0, 1)), int(rng.integers(1, 4)))
            lo, hi = c - rng.uniform(0, 1e-3) * scale, c + rng.uniform(0, 1e-3) * scale
        v = float(rng.uniform(lo, hi))
        m = _parse(format_interval(v, lo, hi))
        d = {len(m.group(2)), len(m.group(4)), len(m.group(6))}
        assert len(d) == 1, "point and bounds at the same precision"
        pv, plo, phi = float(m.group(1)), float(m.group(3)), float(m.group(5))
        assert plo <= pv <= phi, (v, lo, hi, m.group(0))
        if hi - lo > 2e-6:
            assert plo < phi, ("interval visibly distinct", v, lo, hi, m.group(0))


def test_missing_values_are_an_em_dash_with_their_reason():
    assert missing("no valid output") == f"{EM_DASH} no valid output"
    assert format_interval(float("nan"), 0.1, 0.2, missing_reason="no valid output") == "— no valid output"
    assert format_interval(None, None, None, missing_reason="not run") == "— not run"
    assert format_interval(0.25, float("nan"), float("nan")) == "0.250"
    assert value_with_interval({"dtw": np.float64(np.nan)}, "dtw") == "— not measured"


def _summary_row(system, **kw):
    r = {"system": system, "label": system, "n_words": 10, "n_pages": 2, "n_valid": 10, "n_style": 4, "n_ocr": 10}
    for k in ("valid_rate", "dtw", "chamfer", "style", "dtw_valid", "chamfer_valid", "style_valid", "ar", "cr"):
        r[k], r[k + "_lo"], r[k + "_hi"] = 0.5, 0.4, 0.6
    r.update(kw)
    return r


def test_results_table_shows_valid_only_means_beside_all_words_and_no_raw_nan():
    nan = float("nan")
    summary = pd.DataFrame([
        _summary_row("good", dtw=0.018, dtw_lo=0.0172, dtw_hi=0.0188, dtw_valid=0.0123, dtw_valid_lo=0.011,
                     dtw_valid_hi=0.013, valid_rate=0.9, valid_rate_lo=0.85, valid_rate_hi=0.95),
        _summary_row("broken", n_valid=0, valid_rate=0.0, valid_rate_lo=0.0, valid_rate_hi=0.0,
                     dtw_valid=nan, dtw_valid_lo=nan, dtw_valid_hi=nan, chamfer_valid=nan, chamfer_valid_lo=nan,
                     chamfer_valid_hi=nan, style_valid=nan, style_valid_lo=nan, style_valid_hi=nan),
        _summary_row("no-style", n_style=0, style=nan, style_lo=nan, style_hi=nan, style_valid=nan,
                     style_valid_lo=nan, style_valid_hi=nan, n_ocr=0, ar=nan, ar_lo=nan, ar_hi=nan),
    ])
    t = results_table(summary, "inkGround", not_run={"gemini-3.1-pro": "no key"})
    cols = list(t.columns)
    assert cols[:4] == ["source", "DTW", "DTW (valid only)", "Chamfer"]
    assert cols.index("Style (valid only)") == cols.index("Style") + 1 and cols[-1] == "valid rate"
    assert t.loc["good", "DTW"] == "0.018 [0.017, 0.019]"
    assert t.loc["good", "DTW (valid only)"] == "0.012 [0.011, 0.013]"
    assert t.loc["good", "valid rate"] == "0.900 [0.850, 0.950]"
    assert t.loc["broken", "DTW (valid only)"] == "— no valid output"
    assert t.loc["broken", "DTW"] == "0.500 [0.400, 0.600]"
    assert t.loc["no-style", "Style"].startswith("— no Style value")
    assert t.loc["no-style", "AR"] == "— no OCR reading"
    assert t.loc["gemini-3.1-pro", "DTW"] == "— not run"
    paper = t[t["source"] == PAPER]
    assert paper.loc["Gemini-3.1-Pro", "DTW"] == f"{float(paper_numbers().loc['gemini_ink_dtw', 'value']):.3f}"
    assert (paper["DTW (valid only)"] == "— not reported").all() and (paper["valid rate"] == "— not reported").all()
    _no_raw_missing(t)


def test_set_rows_are_flagged_as_set_never_measured_nor_divided_by_the_papers():
    rep = paper_numbers()
    ours = {"candidates": 158, "ocr_threshold": 0.85, "rater_pool": 85, "benchmark_rate": float("nan")}
    t = beside_paper(ours, [("candidates", "candidates", "candidates"), ("threshold", "ocr_threshold", "ocr_threshold"),
                            ("raters", "rater_pool", "n_raters"), ("kept share", "benchmark_rate", None, "none passed")],
                     paper=rep, set_values={"ocr_threshold": (0.85, SET_TO_PAPER), "rater_pool": (85, SET_TO_PAPER)})
    assert list(t.columns) == [MEASURED, SET, PAPER, RATIO]
    for q in ("threshold", "raters"):
        assert t.loc[q, MEASURED] == "— set, not measured"
        assert t.loc[q, RATIO] == f"— {SET_TO_PAPER}"
    assert t.loc["threshold", SET] == 0.85 and t.loc["raters", SET] == 85
    assert t.loc["candidates", SET] == "— measured" and t.loc["candidates", RATIO] == round(158 / 2984, 2)
    assert t.loc["kept share", MEASURED] == "— none passed" and t.loc["kept share", RATIO] == "— not reported"
    assert not any(isinstance(v, float) and v == 1.0 for v in t[RATIO])
    _no_raw_missing(t)


def test_funnel_parameters_are_set_with_simulated_raters_and_measured_with_a_ratings_file():
    sim = SimpleNamespace(params={"ocr_threshold": 0.85, "n_raters": 85, "raters_per_pair": [2, 3]})
    p = funnel_parameters(sim)
    assert {k: v for k, (v, _) in p.items()} == {"ocr_threshold": 0.85, "keep_score": 10, "rater_pool": 85,
                                                  "raters_per_pair_min": 2}
    assert all(note == SET_TO_PAPER for _, note in p.values())
    other = funnel_parameters(SimpleNamespace(params={"ocr_threshold": 0.9, "n_raters": 10, "raters_per_pair": [2, 2]}))
    assert other["ocr_threshold"][1] != SET_TO_PAPER and other["rater_pool"][1] != SET_TO_PAPER
    from_file = funnel_parameters(SimpleNamespace(params={"ocr_threshold": 0.85, "n_raters": None,
                                                          "raters_per_pair": None}))
    assert set(from_file) == {"ocr_threshold", "keep_score"}  # the raters were counted, not set


def test_section_01_rows_the_generator_was_set_to_show_the_setting_and_the_measured_value():
    """Issue 27: a statistic the generator was set to is also measured on the pages it drew; Table 1.1 shows
    both (the setting, and the measurement), never "set, not measured", and no ratio to the paper's for it."""
    from inkground_lib.report.dataset_stats import GENERATOR_SET

    params = {"pages": 158, "words_min": 2, "words_max": 140, "words_mean": 35.0, "size": 1.0}
    synth = SimpleNamespace(kind="synth", name="synth", meta={"generator": "synth-1", "params": params})
    s = generator_settings(synth)
    assert set(s) == {"pages", "words_per_page_min", "words_per_page_max", "words_per_page_mean",
                      "box_width_median", "box_height_median"}
    assert (s["words_per_page_max"].value, s["words_per_page_max"].note) == (140, "generator's cap set to the "
                                                                                 "paper's value")
    assert "35" in s["words_per_page_mean"].note and "34.89" in s["words_per_page_mean"].note
    stats = {"pages": 158, "words_per_page_mean": 33.146, "words_per_page_min": 2, "words_per_page_max": 128,
             "strokes_per_page_mean": 60.9, "points_per_stroke_mean": 44.7, "box_width_median": 0.1,
             "box_height_median": 0.035}
    t = statistics_table(synth, stats, {"pages": 36, "words_per_page_mean": 6.3})
    assert list(t.columns[:2]) == [GENERATOR_SET, MEASURED] and SET not in t.columns
    expect = {"pages": ("asked for 158", 158), "words per page (mean)": ("target mean 35", 33.146),
              "words per page (min)": ("floor 2", 2), "words per page (max)": ("cap 140", 128),
              "median word-box width / page width": ("letter size 1", 0.1),
              "median word-box height / page height": ("letter size 1", 0.035)}
    for q, (setting, measured) in expect.items():
        assert t.loc[q, GENERATOR_SET] == setting and t.loc[q, MEASURED] == measured, q
        assert str(t.loc[q, RATIO]).startswith(EM_DASH), q  # a measured value is not divided by the value aimed at
    assert "set, not measured" not in t.to_string()
    assert t.loc["strokes per page (mean)", GENERATOR_SET] == "— not set"
    assert t.loc["strokes per page (mean)", MEASURED] == 60.9
    assert t.loc["strokes per page (mean)", RATIO] == round(60.9 / 304.3, 2)
    assert t.loc["words per page (mean)", "recorded set (measured)"] == 6.3
    _no_raw_missing(t)
    sentence = generator_sentence(synth)
    assert "between 2 and 140" in sentence and "target mean of 35" in sentence and "word-box size" in sentence
    assert "asked for 158 pages" in sentence and "show both" in sentence
    # a different setting is named as this dataset's, not the paper's
    other = SimpleNamespace(kind="synth", name="s", meta={"params": {**params, "words_max": 60}})
    assert generator_settings(other)["words_per_page_max"].note == "generator's cap set to 60 (paper 140)"
    rec = SimpleNamespace(kind="recorded", name="recorded", meta={})
    assert generator_settings(rec) == {}
    assert "every statistic in the table is measured" in generator_sentence(rec)
    t = statistics_table(rec, stats)
    assert GENERATOR_SET not in t.columns and t.loc["words per page (mean)", MEASURED] == 33.146
    assert t.loc["words per page (mean)", RATIO] == round(33.146 / 34.89, 2)


def test_section_04_style_table_has_no_raw_nan():
    from inkground_lib.analysis.tradeoffs import style_chance_table
    from inkground_lib.report.tradeoffs import style_table

    summ = pd.DataFrame([{"dataset": "toy", "system": "a", "style": 0.5, "style_lo": 0.4, "style_hi": 0.6,
                          "n_classes": 4, "chance": 0.25, "style_top1": 0.7},
                         {"dataset": "toy", "system": "b", "style": 0.3, "style_lo": math.nan, "style_hi": math.nan,
                          "n_classes": 4, "chance": 0.25, "style_top1": math.nan}])
    t = style_table(style_chance_table(summ, paper_numbers()))
    assert t.loc[("paper (reported)", "inkGround", "Kimi-K3"), "classifier top-1"] == "— not reported"
    assert t.loc[("paper (reported)", "inkGround", "Kimi-K3"), "Style 95% CI"] == "— not reported"
    assert t.loc[("ours (measured)", "toy", "b"), "Style 95% CI"] == "— not computed"
    assert t.loc[("ours (measured)", "toy", "a"), "writer classes"] == 4
    _no_raw_missing(t)


@pytest.mark.parametrize("bad", [None, float("nan"), np.float32("nan"), pd.NA])
def test_every_kind_of_missing_value_becomes_a_dash(bad):
    assert format_interval(bad, 0.1, 0.2, missing_reason="not run") == "— not run"


def test_the_paper_comparisons_say_the_target_rule_is_ours():
    """Issue 26, case 8: where our numbers stand beside the paper's, the target rule is named as ours."""
    import pandas as pd

    from inkground_lib.report.reviewers import _targets_note
    from inkground_lib.report.tables import results_view

    note = _targets_note({"rule": "...", "left_out": 2, "left_out_by_builder": 3})
    assert "only words whose text occurs once on their page (our rule, not the paper's), 5 words left out" in note
    assert _targets_note(None) == ""
    summary = pd.DataFrame([{"system": "box", "label": "Box", "kind": "local", "n_words": 3, "valid_rate": 1.0,
                             "dtw": 0.3, "chamfer": 0.2, "ar": 0.0, "cr": 0.0, "style": 0.1}])
    assert any("our target rule" in n for n in results_view(summary, "inkGround", "T").notes)
    assert not any("target rule" in n for n in results_view(summary, None, "T").notes)  # no paper rows: no note


# --- issue 27: columns and rows that repeat others, the centre-dot rule, Markdown captions ----------------------

def _all_valid_row(system, dtw, **kw):
    """A system whose every output was valid: its valid-only means are its all-words means."""
    r = _summary_row(system, valid_rate=1.0, valid_rate_lo=1.0, valid_rate_hi=1.0, **kw)
    for k in ("dtw", "chamfer", "style"):
        v = dtw if k == "dtw" else r[k]
        r[k], r[k + "_valid"] = v, v
        r[k + "_lo"], r[k + "_hi"] = r[k + "_valid_lo"], r[k + "_valid_hi"] = v - 0.01, v + 0.01
    return r


def _view_text(view):
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", view.to_html()))


def test_valid_only_columns_are_dropped_with_a_note_when_they_repeat_the_all_words_columns():
    from inkground_lib.report.tables import VALID_ONLY, results_view

    summary = pd.DataFrame([_all_valid_row("box", 0.287), _all_valid_row("font", 0.299)])
    view = results_view(summary, "inkGround", "Table 1: all valid")
    assert not [c for c in view.data.columns if c.endswith(VALID_ONLY)] and "valid rate" not in view.data.columns
    assert ["DTW", "Chamfer", "AR", "CR", "Style"] == [c for c in view.data.columns if c in METRICS]
    assert any("valid rate 1.000" in n and "not shown" in n for n in view.notes), view.notes
    # the computation's own table keeps every column (tests and CSVs)
    assert "DTW (valid only)" in results_table(summary, "inkGround").columns
    # one system with an invalid output: the valid-only means differ, so every column stays and no note says so
    mixed = pd.DataFrame([_all_valid_row("box", 0.287),
                          _summary_row("vlm", valid_rate=0.9, dtw=0.4, dtw_valid=0.3)])
    kept = results_view(mixed, "inkGround", "Table 1: mixed")
    assert "DTW (valid only)" in kept.data.columns and "valid rate" in kept.data.columns
    assert not any("not shown" in n for n in kept.notes)


METRICS = {"DTW", "Chamfer", "AR", "CR", "Style"}


def test_rows_equal_in_every_column_are_shown_once_with_a_note_and_the_paper_rows_stay_shaded():
    from inkground_lib.report.table_view import PAPER_ROW_CLASS
    from inkground_lib.report.tables import results_view

    summary = pd.DataFrame([_all_valid_row("Box baseline", 0.287), _all_valid_row("Reference ink", 0.0),
                            _all_valid_row("Skeleton derenderer", 0.0), _all_valid_row("Font baseline", 0.299)])
    view = results_view(summary, "inkGround", "Table 1: merged")
    systems = list(view.data["system"])
    assert systems[:3] == ["Box baseline", "Reference ink / Skeleton derenderer *", "Font baseline"], systems
    assert "* Reference ink and Skeleton derenderer: the same in every column, shown once." in view.notes
    # the paper's rows are not merged with ours, and their shading follows them to their new positions
    paper_rows = [i for i, s in enumerate(view.data["source"]) if s == PAPER]
    assert view.paper_rows == paper_rows and len(paper_rows) == 4
    html = view.to_html()
    assert html.count(PAPER_ROW_CLASS) >= 4 * len(view.data.columns) and "Reference ink / Skeleton derenderer *" in html
    # a system that differs in one column keeps its own row
    summary.loc[2, "ar"] = 0.25
    assert "Skeleton derenderer" in list(results_view(summary, "inkGround", "Table 1: apart").data["system"])


def test_the_centre_dot_rule_is_marked_as_this_books_choice():
    from inkground_lib.report.tables import results_view

    view = results_view(pd.DataFrame([_all_valid_row("box", 0.287)]), "inkGround", "Table 1: rule")
    note = [n for n in view.notes if "centre-dot rule" in n]
    assert len(note) == 1 and "this book's choice" in note[0] and "paper" in note[0]
    assert "this book's choice" in _view_text(view)


def test_captions_and_notes_render_markdown_and_stay_plain_in_the_aria_label():
    from inkground_lib.report.table_view import table_view

    view = table_view(pd.DataFrame({"a": [1]}), "Table 3.1: the systems named in `systems` <b>now</b>",
                      notes=["Set `n_boot` to *more*."])
    html = view.to_html()
    caption = re.search(r"<figcaption[^>]*>(.*?)</figcaption>", html).group(1)
    assert caption == "Table 3.1: the systems named in <code>systems</code> &lt;b&gt;now&lt;/b&gt;"
    assert "`" not in _view_text(view)
    assert 'aria-label="Table 3.1: the systems named in systems &lt;b&gt;now&lt;/b&gt;"' in html
    assert "<p>Set <code>n_boot</code> to <em>more</em>.</p>" in html
    assert view.table_id == "table-3-1-the-systems-named-in-systems-b-now-b"
