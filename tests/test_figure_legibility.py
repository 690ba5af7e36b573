"""Issue 45: every figure of the book (Figs. 1-14) is legible at a 420 px phone window and at 1400 px: its
smallest text shows at >= 9 CSS px once the page scales the saved PNG to the article's content width (widths
measured in Chromium: :mod:`inkground_lib.report.legibility`), its titles, labels and keys do not overlap, the
prompt grid's numbers read in Fig. 9's enlarged corners, and Fig. 12's key and caption name only the lines it
draws. Each figure is made by the book's own function on small fixtures."""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_report_views import pseudo_run, tiny_ds  # noqa: E402,F401  (module fixtures reused)
from test_tradeoffs import _summary_like_section_03  # noqa: E402

from inkground_lib.report.legibility import (  # noqa: E402
    DESKTOP_CONTENT_PX,
    FIGURE_DPI,
    MIN_CSS_PX,
    PHONE_CONTENT_PX,
    overlapping_texts,
    shown_css_px,
    text_css_px,
)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.datasets.recorded import build_recorded

    return load_dataset(build_recorded(tmp_path_factory.mktemp("rec45") / "rec", pages=2, words_per_page=(4, 5),
                                       progress=False))


def _section_01(ds):
    from inkground_lib.datasets.statistics import page_table, word_table
    from inkground_lib.report.dataset_stats import fig_dataset_histograms, fig_pages_with_boxes

    pages, words = page_table(ds), word_table(ds)
    yield "Fig. 1 (dataset histograms)", fig_dataset_histograms(pages, words, rec_pages=pages, rec_words=words)
    yield "Fig. 2 (pages with boxes)", fig_pages_with_boxes(ds, [p.id for p in ds.pages[:2]] * 2)
    yield "Fig. 3 (a recorded page)", fig_pages_with_boxes(ds, [ds.pages[0].id])


def _section_02(res, ds, recorded, tmp_path):
    from inkground_lib.pseudo.derenderer_comparison import derenderer_comparison
    from inkground_lib.report.derenderer_figures import derenderer_examples, fig_derenderer_examples
    from inkground_lib.report.pseudo_figures import (fig_example_pairs, fig_funnel, fig_truth_by_stage,
                                                     fig_truth_examples)

    yield "Fig. 4 (funnel)", fig_funnel(res)
    yield "Fig. 5 (example pairs)", fig_example_pairs(res, ds, n_per_row=3)
    yield "Fig. 6 (truth by stage)", fig_truth_by_stage(res)
    yield "Fig. 7 (truth examples)", fig_truth_examples(res, ds)
    derenderer_comparison({"recorded": recorded}, ["skeleton", "tracer"], tmp_path, n_boot=0)
    yield "Fig. 8 (derenderers)", fig_derenderer_examples(derenderer_examples(recorded, "recorded",
                                                                              ("skeleton", "tracer"), tmp_path))


def _section_03(ds, recorded):
    import numpy as np
    import pandas as pd

    from inkground_lib.core.ink import Ink
    from inkground_lib.report.evaluation import fig_galleries, fig_images, prompt_example

    _, images = prompt_example(recorded)  # two pages with three words or more: the in-context examples
    yield "Fig. 9 (prompt images)", fig_images(images, ["image 1: the in-context example",
                                                        "image 2: the page to trace on"])
    words = [w for p in ds.pages for w in p.words]

    class Run:
        def __init__(self, name, inks):
            self.name, self.label, self.inks = name, name.title(), inks

    shifted = [Ink([s + np.array([3.0, 1.0] + [0.0] * (s.shape[1] - 2)) for s in w.ink.strokes]) for w in words]
    runs = {"reference": Run("reference", [w.ink for w in words])}
    rows = []
    for k, name in enumerate(("font", "gemini-3.1-pro (a long system name)", "box")):
        runs[name] = Run(name, shifted)
        rows += [{"system": name, "word_id": w.id, "page_id": p.id,
                  "dtw": 0.1 * (i + 1) + k, "ocr_text": f"read{i}"} for p in ds.pages for i, w in enumerate(p.words)]
    rows += [{"system": "reference", "word_id": w.id, "page_id": p.id, "dtw": 0.0, "ocr_text": w.text}
             for p in ds.pages for w in p.words]
    yield "Figs. 10-11 (galleries)", fig_galleries(ds, pd.DataFrame(rows), runs)


def _section_04():
    import pandas as pd

    from inkground_lib.analysis.tradeoffs import paper_points
    from inkground_lib.core.paper import paper_numbers
    from inkground_lib.report.tradeoffs import fig_tradeoffs

    rep = paper_numbers()
    summ = _summary_like_section_03()
    yield "Fig. 12 (DTW against AR)", fig_tradeoffs(summ, paper_points(rep), y="dtw")
    yield "Fig. 13 (Style against AR)", fig_tradeoffs(summ, paper_points(rep), y="style", reported=rep)
    three = pd.concat([summ, summ[summ["dataset"] == "recorded"].assign(dataset="recorded-2")], ignore_index=True)
    yield "Fig. 13 with three classifiers of ours", fig_tradeoffs(three, paper_points(rep), y="style", reported=rep)


def _tracer():
    from inkground_lib.report.tracer_page import fig_curves, read_curves

    yield "Fig. 14 (the tracer's curves)", fig_curves(read_curves())


@pytest.fixture(scope="module")
def book_figures(tiny_ds, pseudo_run, recorded, tmp_path_factory):  # noqa: F811
    import matplotlib.pyplot as plt

    figs = [*_section_01(tiny_ds), *_section_02(pseudo_run, tiny_ds, recorded, tmp_path_factory.mktemp("cmp45")),
            *_section_03(tiny_ds, recorded), *_section_04(), *_tracer()]
    yield figs
    for _, f in figs:
        plt.close(f)


def test_every_figure_s_text_is_at_least_9_css_px_on_a_phone_and_a_desktop(book_figures):
    assert len(book_figures) == 14 and all(f is not None for _, f in book_figures)
    small = []
    for name, fig in book_figures:
        m = text_css_px(fig)
        if min(m["phone"], m["desktop"]) < MIN_CSS_PX:
            small.append(f"{name}: {m['pt']} pt text in a {m['width_px']} px image shows at {m['phone']:.1f} CSS px "
                         f"at 420 px, {m['desktop']:.1f} at 1400 px")
    assert not small, small


def test_no_figure_s_titles_labels_or_keys_overlap(book_figures):
    hits = {name: overlapping_texts(fig) for name, fig in book_figures}
    assert not {k: v for k, v in hits.items() if v}, hits


def test_the_measure_and_the_overlap_check_can_fail():
    import matplotlib.pyplot as plt

    from inkground_lib.report.escape import figure_text

    fig, ax = plt.subplots(figsize=(9, 3))  # Fig. 8 before issue 45: 9 pt text, 900 px wide
    ax.set_title("tiny", fontsize=9)
    m = text_css_px(fig)
    assert m["desktop"] >= MIN_CSS_PX > m["phone"]  # legible at 1400 px, about 5 px on a phone
    fig, axes = plt.subplots(1, 2, figsize=(5, 2))
    for ax in axes:  # two long titles side by side, as Fig. 8's were
        ax.set_title(figure_text("largest gain: 'two', tracer-recognize (learned here; given the OCR reading)"))
    assert overlapping_texts(fig)
    plt.close("all")


def test_the_prompt_grid_s_numbers_read_in_fig_9_s_enlarged_corners(book_figures):
    from inkground_lib.evaluation.prompt import DEFAULT_FONT_SIZE
    from inkground_lib.report.evaluation import CORNER_PX

    fig = dict(book_figures)["Fig. 9 (prompt images)"]
    width = text_css_px(fig)["width_px"]
    fig.canvas.draw()
    corners = [ax for ax in fig.axes if "corner" in ax.get_title()]
    assert len(corners) == 2
    for ax in corners:
        per_image_px = ax.get_window_extent().width * FIGURE_DPI / fig.dpi / CORNER_PX  # figure px per image px
        for content in (PHONE_CONTENT_PX, DESKTOP_CONTENT_PX):
            # the grid's numbers, DEFAULT_FONT_SIZE image px high, as the page shows them
            shown = DEFAULT_FONT_SIZE * per_image_px * min(1.0, content / width)
            assert shown >= MIN_CSS_PX, (content, shown)


def test_fig_12_s_key_and_caption_name_only_the_lines_drawn(book_figures):
    from inkground_lib.report.tradeoffs import FRONT_KEYS, fronts_drawn

    fig = dict(book_figures)["Fig. 12 (DTW against AR)"]
    drawn = fronts_drawn(fig)
    keyed = {t.get_text() for leg in fig.legends for t in leg.get_texts()}
    for ours, (_, label, _) in FRONT_KEYS.items():
        assert (label in keyed) == (ours in drawn), (label, drawn)
    # the paper's inkGround and IAM-OnDB points each have one system that dominates the others: no dashed front,
    # so the caption may not promise one unconditionally
    assert drawn == {True}
    nb = json.loads((ROOT / "notebooks" / "04_tradeoffs.ipynb").read_text("utf-8"))
    caps = [c["metadata"]["mystnb"]["figure"]["caption"] for c in nb["cells"]
            if c["metadata"].get("mystnb", {}).get("figure", {}).get("name") == "fig-04-dtw"]
    assert caps and "key" in caps[0] and "two or more points" in caps[0], caps


def test_shown_size_follows_the_page_s_scaling():
    assert shown_css_px(10, 500, PHONE_CONTENT_PX) == pytest.approx(10 * FIGURE_DPI / 72 * PHONE_CONTENT_PX / 500)
    assert shown_css_px(10, 500, DESKTOP_CONTENT_PX) == pytest.approx(10 * FIGURE_DPI / 72)  # not enlarged
