"""Section 01's figures."""

from __future__ import annotations

import math

import pandas as pd

from inkground_lib.core.paper import paper_numbers


def fig_dataset_histograms(pages: pd.DataFrame, words: pd.DataFrame, paper: pd.DataFrame | None = None):
    """Histograms of words per page, strokes per page, points per stroke and word-box size; the paper's
    value (where it reports one) as a dashed line labelled 'paper'."""
    import matplotlib.pyplot as plt

    paper = paper_numbers() if paper is None else paper
    fig, axes = plt.subplots(1, 4, figsize=(13, 2.8), constrained_layout=True)
    pps = (pages["points"] / pages["strokes"].clip(lower=1))
    specs = [(pages["words"], "words per page", "words_per_page_mean"),
             (pages["strokes"], "strokes per page", "strokes_per_page_mean"),
             (pps, "points per stroke (page mean)", "points_per_stroke_mean"),
             (words["box_w"], "word-box width / page width", "box_width_median")]
    for ax, (vals, label, pid) in zip(axes, specs):
        ax.hist(vals, bins=20, color="#4c72b0", alpha=0.85)
        ax.set_xlabel(label)
        ax.axvline(float(paper.loc[pid, "value"]), color="#c44e52", ls="--", lw=1.5, label="paper")
        ax.legend(frameon=False, fontsize=8)
    axes[0].set_ylabel("count")
    return fig


def fig_pages_with_boxes(ds, page_ids: list[str], max_cols: int = 2):
    """Example page photos with their word boxes (page pixels) and word ids."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    n = len(page_ids)
    cols = min(max_cols, n)
    rows = int(math.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 7.5 * rows), squeeze=False, constrained_layout=True)
    for ax, pid in zip(axes.flat, page_ids):
        page = ds.page(pid)
        ax.imshow(page.load_image())
        for w in page.words:
            x0, y0, x1, y1 = w.box
            ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, ec="#dd8452", lw=1))
        ax.set_title(f"page {pid}: {len(page.words)} words, writer {page.writer}", fontsize=10)
        ax.set_axis_off()
    for ax in list(axes.flat)[n:]:
        ax.set_axis_off()
    return fig
