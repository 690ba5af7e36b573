"""Section 02's figures: the funnel beside the paper's, example pairs at a readable size, and the
pseudo-labels over the writers' true pen paths (static and playable)."""

from __future__ import annotations

import re
from typing import Optional

import numpy as np
import pandas as pd

from inkground_lib.core.dataset import Dataset, load_dataset
from inkground_lib.pseudo.run import PipelineResult
from inkground_lib.report.escape import figure_text
from inkground_lib.report.legibility import FIGURE_TEXT_PT, FIGURE_WIDTH_IN, wrap_to
from inkground_lib.report.palette import OKABE_ITO, PREDICTION, TRUTH

FUNNEL_STAGES = (("candidate pages", "candidates", "candidates"),
                 ("passed the OCR filter", "ocr_pass_pages", "ocr_pass_pages"),
                 ("kept by the raters", "benchmark_pages", "benchmark_pages"))


def funnel_counts(res: PipelineResult, paper: Optional[pd.DataFrame] = None) -> pd.DataFrame:
    """Pages at each stage of the funnel, ours (measured) and the paper's (reported): columns stage, ours,
    paper, ours_share, paper_share (shares of each side's candidate pages)."""
    from inkground_lib.core.paper import paper_numbers
    from inkground_lib.pseudo.run import summary_numbers

    paper = paper_numbers() if paper is None else paper
    nums = summary_numbers(res)
    rows = []
    for label, key, pid in FUNNEL_STAGES:
        p = float(paper.loc[pid, "value"]) if pid in paper.index else float("nan")
        rows.append({"stage": label, "ours": float(nums.get(key, float("nan"))), "paper": p})
    df = pd.DataFrame(rows)
    for side in ("ours", "paper"):
        first = df[side].iloc[0]
        df[f"{side}_share"] = df[side] / first if first and first == first else float("nan")
    return df


def fig_funnel(res: PipelineResult, paper: Optional[pd.DataFrame] = None):
    """The funnel as horizontal bars: the share of each side's candidate pages that reaches each stage,
    ours (measured here) beside the paper's (reported), each bar labelled with its page count. Shares make
    the two comparable although the paper starts from far more pages."""
    import matplotlib.pyplot as plt

    df = funnel_counts(res, paper)
    fig, ax = plt.subplots(figsize=(FIGURE_WIDTH_IN, 3.2), constrained_layout=True)
    y = np.arange(len(df))[::-1]
    h = 0.38
    for k, (side, colour, hatch, label) in enumerate((("ours", OKABE_ITO[0], None, "ours (measured)"),
                                                      ("paper", OKABE_ITO[4], "//", "paper (reported)"))):
        vals = df[f"{side}_share"].fillna(0).to_numpy()
        bars = ax.barh(y + (h / 2 if k == 0 else -h / 2), vals, height=h, color=colour, hatch=hatch,
                       edgecolor="white", label=label)
        for b, n in zip(bars, df[side]):
            text = "not reported" if n != n else f"{n:,.0f} pages"
            ax.text(b.get_width() + 0.01, b.get_y() + b.get_height() / 2, text, va="center", fontsize=FIGURE_TEXT_PT)
    ax.set_yticks(y, [wrap_to(t, 1.4) for t in df["stage"]], fontsize=FIGURE_TEXT_PT)
    ax.set_xlim(0, 1.45)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0], ["0%", "25%", "50%", "75%", "100%"])
    ax.set_xlabel("share of the candidate pages")
    ax.spines[["top", "right"]].set_visible(False)
    fig.legend(loc="outside upper center", ncols=2, fontsize=FIGURE_TEXT_PT, frameon=False)
    return fig


def truth_examples(res: PipelineResult, ds: Optional[Dataset] = None) -> list[dict]:
    """The best, median and worst word by DTW between its pseudo-label and the writer's true pen path
    (words with a true ink and a pseudo-label): dicts with tag, word, dtw, chamfer (word heights), pseudo,
    truth (Inks, page pixels), box and crop (the page photo inside the box)."""
    from inkground_lib.core.render import crop_box

    ds = ds or load_dataset(res.candidates)
    w = res.words
    if "dtw" not in w.columns:
        return []
    w = w[w["dtw"].notna() & (w["points"] > 0)].sort_values(["dtw", "word_id"], kind="stable").reset_index(drop=True)
    if not len(w):
        return []
    out = []
    for tag, i in (("best", 0), ("median", len(w) // 2), ("worst", len(w) - 1)):
        r = w.iloc[i]
        page = ds.page(r["page"])
        word = next(x for x in page.words if x.id == r["word_id"])
        box = crop_box(word.box, (page.width, page.height), margin=0.3)
        out.append({"tag": tag, "word": word.text, "word_id": word.id, "dtw": float(r["dtw"]),
                    "chamfer": float(r["chamfer"]), "pseudo": res.pseudo[word.id], "truth": word.true_ink,
                    "box": tuple(box), "crop": page.load_image()[box[1]:box[3], box[0]:box[2]]})
    return out


TRUTH_EXAMPLE_WIDTH_IN = 4.4
"""Width (inches) of the truth examples' figure, one word a row: a word crop this wide reads on a desktop and,
scaled to a phone, keeps its titles legible."""


def fig_truth_examples(res: PipelineResult, ds: Optional[Dataset] = None):
    """:func:`truth_examples` drawn, one word a row: the pseudo-label solid vermillion over the writer's true pen path
    dashed green, dots at stroke starts, arrowheads in the pen's direction; titles give DTW and Chamfer in
    word heights. None when no word has a true pen path."""
    import matplotlib.pyplot as plt

    from inkground_lib.report.overlay import plot_comparison

    ex = truth_examples(res, ds)
    if not ex:
        return None
    fig, axes = plt.subplots(len(ex), 1, figsize=(TRUTH_EXAMPLE_WIDTH_IN, 2.3 * len(ex) + 0.4),
                             constrained_layout=True, squeeze=False)
    handles = []
    for ax, e in zip(axes[:, 0], ex):
        handles = plot_comparison(ax, e["pseudo"], e["truth"], image=e["crop"], extent_box=e["box"],
                                  prediction_label="pseudo-label", reference_label="writer's true pen path",
                                  reference_colour=TRUTH, legend=False) or handles
        ax.set_title(figure_text(f"{e['tag']}: '{e['word']}', DTW {e['dtw']:.3f}, Chamfer {e['chamfer']:.3f}"),
                     fontsize=FIGURE_TEXT_PT)
        ax.set_axis_off()
    fig.legend(handles=handles, loc="outside upper center", ncols=2, fontsize=FIGURE_TEXT_PT, frameon=False)
    return fig


def truth_players(res: PipelineResult, ds: Optional[Dataset] = None, width_px: float = 300):
    """:func:`truth_examples` as pen paths that play (pseudo-label solid, true pen path dashed, in pen order);
    a :class:`~inkground_lib.report.player.PlayerGrid`, or None."""
    from inkground_lib.report.player import PLAY_HINT, PlayerGrid, pen_path_svg, player_figure

    ex = truth_examples(res, ds)
    if not ex:
        return None
    figs = []
    for e in ex:
        title = f"{e['tag']} word '{e['word']}': pseudo-label and the writer's true pen path, in pen order"
        svg = pen_path_svg([(e["truth"], "writer's true pen path", TRUTH, True),
                            (e["pseudo"], "pseudo-label", PREDICTION, False)], width_px=width_px, title=title,
                           photo=(e["crop"], e["box"][:2]),
                           fig_id=re.sub(r"[^A-Za-z0-9_-]", "-", f"pt-{e['tag']}-{e['word_id']}"))
        figs.append(player_figure(svg, f"{e['tag']}: '{e['word']}', DTW {e['dtw']:.3f} word heights"))
    return PlayerGrid(figs, "The pseudo-labels of the best, median and worst word (DTW to the truth) drawn as the "
                            "writer and the derenderer moved the pen: true pen path dashed green, pseudo-label "
                            f"solid vermillion. {PLAY_HINT}")


def pick_examples(res: PipelineResult, n_per_row: int):
    """Up to ``n_per_row`` words per stage outcome (failed the OCR filter, rejected by the raters, kept),
    spread evenly over the stage's words, preferring words whose OCR outcome is typical of the stage (no
    match where the page failed, a match where it was kept); words with a drawn pseudo-label first."""
    w, p = res.words, res.pages.set_index("page")
    w = w.assign(stage=w["page"].map(p["stage"]))
    rows = []
    for st, want_match in (("failed OCR filter", False), ("rejected by raters", None), ("kept", True)):
        d = w[w["stage"] == st]
        if want_match is not None:
            d = pd.concat([d[d["match"] == want_match], d[d["match"] != want_match]])
        else:
            d = pd.concat([d[~d["match"]], d[d["match"]]])
        d = d[d["points"] > 0] if (d["points"] > 0).any() else d
        if len(d):
            idx = np.unique(np.linspace(0, len(d) - 1, min(n_per_row, len(d))).round().astype(int))
            rows.append((st, d.iloc[idx]))
    return rows



NUMBER_GAP_IN = 0.2
"""The least distance (inches as drawn) between two stroke numbers of the example pairs: about two digits of
:data:`~inkground_lib.report.legibility.FIGURE_TEXT_PT` text, so no number covers another."""


def numbers_that_fit(starts: list[tuple], gap: float) -> list[tuple]:
    """The stroke numbers ``starts`` ((number, x, y), in stroke order) that are drawn: each at least ``gap``
    (same units as x, y) from every number drawn before it.

    >>> numbers_that_fit([(1, 0, 0), (2, 1, 0), (3, 5, 0)], gap=2)
    [(1, 0, 0), (3, 5, 0)]
    """
    kept: list[tuple] = []
    for k, x, y in starts:
        if all((x - a) ** 2 + (y - b) ** 2 >= gap ** 2 for _, a, b in kept):
            kept.append((k, x, y))
    return kept


PAIR_COLUMNS = 2
"""Words a row in the example pairs' figure (a stage with more words continues on the next row): two fit a
phone's width with their titles legible."""


def fig_example_pairs(res: PipelineResult, ds: Optional[Dataset] = None, n_per_row: int = 3):
    """Example pairs for each stage outcome (the page failed the OCR filter / was rejected by the raters / was
    kept; ``n_per_row`` words each, :data:`PAIR_COLUMNS` a row): the photo crop above, the pseudo-label drawn
    over a faded copy below (solid vermillion, dots at stroke starts, numbers giving the stroke order where
    they do not cover one another: :func:`numbers_that_fit`, arrowheads the direction), titled with what OCR read from each and whether they match.
    :data:`~inkground_lib.report.legibility.FIGURE_WIDTH_IN` wide, text at
    :data:`~inkground_lib.report.legibility.FIGURE_TEXT_PT`."""
    import matplotlib.pyplot as plt

    from inkground_lib.core.render import crop_box
    from inkground_lib.report.overlay import plot_comparison

    ds = ds or load_dataset(res.candidates)
    rows = pick_examples(res, n_per_row)
    if not rows:
        return None
    cols = max(1, min(PAIR_COLUMNS, max(len(d) for _, d in rows)))
    col_in = FIGURE_WIDTH_IN / cols
    blocks = [(st, d.iloc[k:k + cols]) for st, d in rows for k in range(0, len(d), cols)]  # one per grid row
    fig, axes = plt.subplots(2 * len(blocks), cols, figsize=(FIGURE_WIDTH_IN, 3.0 * len(blocks)), squeeze=False,
                             constrained_layout=True)
    photos: dict[str, np.ndarray] = {}
    for r, (st, d) in enumerate(blocks):
        for c, (_, wr) in enumerate(d.iterrows()):
            page = ds.page(wr["page"])
            if page.id not in photos:
                photos[page.id] = page.load_image()
            word = next(x for x in page.words if x.id == wr["word_id"])
            cb = crop_box(word.box, (page.width, page.height), margin=0.15)
            img = photos[page.id][cb[1]:cb[3], cb[0]:cb[2]]
            a0, a1 = axes[2 * r, c], axes[2 * r + 1, c]
            a0.imshow(img, extent=(cb[0] - 0.5, cb[2] - 0.5, cb[3] - 0.5, cb[1] - 0.5))
            a0.set_title(figure_text(wrap_to(f"{st}\nphoto, OCR read {wr['ocr_original']!r}", col_in)),
                         fontsize=FIGURE_TEXT_PT)
            faded = (255 - (255 - img.astype(np.float32)) * 0.35).astype(np.uint8)
            plot_comparison(a1, res.pseudo[word.id], None, image=faded, extent_box=cb, legend=False,
                            prediction_label="pseudo-label")
            starts = [(k + 1, s[0, 0], s[0, 1]) for k, s in enumerate(res.pseudo[word.id].strokes) if len(s)]
            # a number that would cover one already drawn is left out (the players show every stroke in order)
            gap = NUMBER_GAP_IN * (cb[2] - cb[0]) / (col_in * 0.9)  # page px that the gap spans in this panel
            for k, x, y in numbers_that_fit(starts, gap):
                a1.annotate(str(k), (x, y), xytext=(3, 3), textcoords="offset points", fontsize=FIGURE_TEXT_PT,
                            zorder=6, bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.8))
            mark = "match" if wr["match"] else "no match"
            a1.set_title(figure_text(wrap_to(f"pseudo-label, OCR read {wr['ocr_rendered']!r} ({mark})", col_in)),
                         fontsize=FIGURE_TEXT_PT)
            for a in (a0, a1):
                a.set_axis_off()
        for c in range(len(d), cols):
            axes[2 * r, c].set_axis_off()
            axes[2 * r + 1, c].set_axis_off()
    return fig


def fig_truth_by_stage(res: PipelineResult):
    """Per-page distributions (page means over words) of DTW and Chamfer (word heights) and of the shares of
    words with a different stroke order / direction, for each stage outcome (failed the OCR filter, rejected
    by the raters, kept); points jittered (seeded), medians as black bars; Okabe-Ito colours."""
    import matplotlib.pyplot as plt

    from inkground_lib.pseudo.run import STAGES
    from inkground_lib.report.pseudo_labels import TRUTH_METRICS

    p = res.pages
    fig, axes = plt.subplots(2, 2, figsize=(FIGURE_WIDTH_IN, 5.6), constrained_layout=True)
    axes = axes.ravel()
    colours = dict(zip(STAGES, (OKABE_ITO[1], OKABE_ITO[4], OKABE_ITO[2])))
    rng = np.random.default_rng(0)
    for ax, (m, label) in zip(axes, TRUTH_METRICS):
        for i, st in enumerate(STAGES):
            v = p.loc[p["stage"] == st, m].dropna().to_numpy()
            if len(v):
                ax.scatter(i + rng.uniform(-0.15, 0.15, len(v)), v, s=14, alpha=0.75, color=colours[st])
                ax.hlines(np.median(v), i - 0.3, i + 0.3, color="black", lw=2)
        ax.set_xticks(range(len(STAGES)), ["failed\nOCR", "rejected\nby raters", "kept"], fontsize=FIGURE_TEXT_PT)
        ax.set_xlim(-0.6, len(STAGES) - 0.4)
        ax.set_title(wrap_to(label, FIGURE_WIDTH_IN / 2 - 0.3), fontsize=FIGURE_TEXT_PT)
        ax.spines[["top", "right"]].set_visible(False)
    for ax in axes[::2]:
        ax.set_ylabel("page mean", fontsize=FIGURE_TEXT_PT)
    return fig
