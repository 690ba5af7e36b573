"""Issue 34: figure text is readable - at least 9 CSS px where the page shows a figure at 1400 px, and at least
9 CSS px once a figure is opened full size on a phone (book/_static/inkground.js links each figure to itself).

The figures are PNGs at 100 dpi (the notebooks' inline backend, bbox_inches="tight"); the page shows one at its
own width up to the article's content width. That width was measured in headless Chromium on this book's theme
(2026-12-02, a built book's sections 01 and 04): 768 CSS px at a 1400 px window, 372 px at 420 px."""
import io
import sys
from pathlib import Path

import pytest
from PIL import Image

sys.path.insert(0, str(Path(__file__).parent))
from test_tradeoffs import _summary_like_section_03  # noqa: E402

from inkground_lib.report.legibility import DESKTOP_CONTENT_PX as CONTENT_PX_AT_1400  # noqa: E402
from inkground_lib.report.legibility import FIGURE_DPI as DPI  # noqa: E402
from inkground_lib.report.legibility import MIN_CSS_PX  # noqa: E402


def text_px(fig) -> tuple[float, float]:
    """(smallest visible text in CSS px where the page shows the figure at 1400 px, the same full size)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight")
    width = Image.open(io.BytesIO(buf.getvalue())).size[0]
    sizes = [t.get_fontsize() for t in fig.findobj(lambda a: hasattr(a, "get_text") and hasattr(a, "get_fontsize"))
             if t.get_visible() and t.get_text().strip() and (t.axes is None or t.axes.get_visible())]
    full = min(sizes) * DPI / 72
    return full * min(1.0, CONTENT_PX_AT_1400 / width), full


def _figures():
    from inkground_lib.core.paper import paper_numbers
    from inkground_lib.analysis.tradeoffs import paper_points
    from inkground_lib.report.tradeoffs import fig_tradeoffs

    rep = paper_numbers()
    summ = _summary_like_section_03()
    extra = summ[summ["dataset"] == "recorded"].assign(dataset="recorded-2")
    three = __import__("pandas").concat([summ, extra], ignore_index=True)
    yield "Fig. 13: DTW against AR", fig_tradeoffs(summ, paper_points(rep), y="dtw")
    yield "Fig. 14: Style against AR", fig_tradeoffs(summ, paper_points(rep), y="style", reported=rep)
    yield "Fig. 14 with three classifiers of ours", fig_tradeoffs(three, paper_points(rep), y="style", reported=rep)


def _histograms():
    import numpy as np
    import pandas as pd

    from inkground_lib.report.dataset_stats import fig_dataset_histograms

    rng = np.random.default_rng(0)
    pages = pd.DataFrame({"words": rng.integers(5, 60, 40), "strokes": rng.integers(20, 200, 40),
                          "points": rng.integers(500, 5000, 40)})
    words = pd.DataFrame({"box_w": rng.random(300) * 0.2, "box_h": rng.random(300) * 0.05,
                          "strokes": rng.integers(1, 6, 300)})
    return fig_dataset_histograms(pages, words, rec_pages=pages, rec_words=words)


@pytest.mark.parametrize("which", ["tradeoffs", "histograms", "tracer"])
def test_figure_text_is_at_least_9_css_px(which):
    if which == "tradeoffs":
        figs = list(_figures())
    elif which == "histograms":
        figs = [("Fig. 1: the dataset histograms", _histograms())]
    else:
        from inkground_lib.report.tracer_page import fig_curves, read_curves

        figs = [("the tracer's training curves", fig_curves(read_curves()))]
    for name, fig in figs:
        desktop, full = text_px(fig)
        assert desktop >= MIN_CSS_PX, f"{name}: smallest text {desktop:.1f} CSS px at 1400 px"
        assert full >= MIN_CSS_PX, f"{name}: smallest text {full:.1f} CSS px full size"


def test_the_measure_catches_small_text():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(14, 4))
    ax.set_title("tiny", fontsize=8)
    desktop, full = text_px(fig)
    plt.close(fig)
    assert desktop < MIN_CSS_PX <= full  # 8 pt on a 1,400 px figure shown at 768 px: about 6 px
