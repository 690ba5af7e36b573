"""Section 01's figures and its table of statistics (Table 1.1)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from inkground_lib.core.paper import paper_numbers
from inkground_lib.report.escape import figure_text
from inkground_lib.report.format import missing
from inkground_lib.report.legibility import FIGURE_TEXT_PT, FIGURE_WIDTH_IN, wrap_to
from inkground_lib.report.tables import MEASURED, RATIO, beside_paper


def fig_dataset_histograms(pages: pd.DataFrame, words: pd.DataFrame, paper: pd.DataFrame | None = None, *,
                           rec_pages: pd.DataFrame | None = None, rec_words: pd.DataFrame | None = None,
                           names: tuple[str, str] = ("synthetic", "recorded")):
    """Distributions of the dataset statistics in two labelled columns of panels: **per page** (words per page,
    strokes per page, points per stroke as a page mean) and **per word** (word-box width / page width,
    word-box height / page height, strokes per word). Bars are shares of the pages (or words) of each set, so
    a second set (``rec_pages`` / ``rec_words``, drawn as an outline) compares at any size; the paper's
    reported value, where it gives one, is a dashed black line labelled "paper"; one key above the panels.
    Okabe-Ito colours; :data:`~inkground_lib.report.legibility.FIGURE_WIDTH_IN` wide (legible on a phone)."""
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.ticker import MaxNLocator

    from inkground_lib.report.palette import OKABE_ITO

    paper = paper_numbers() if paper is None else paper

    def per_stroke(p):
        return p["points"] / p["strokes"].clip(lower=1)

    sets = [(names[0], pages, words)] + ([(names[1], rec_pages, rec_words)] if rec_pages is not None else [])
    rows = [("Per page", [(lambda p, w: p["words"], "words per page", "words_per_page_mean"),
                          (lambda p, w: p["strokes"], "strokes per page", "strokes_per_page_mean"),
                          (lambda p, w: per_stroke(p), "points per stroke (page mean)", "points_per_stroke_mean")]),
            ("Per word", [(lambda p, w: w["box_w"], "word-box width / page width", "box_width_median"),
                          (lambda p, w: w["box_h"], "word-box height / page height", "box_height_median"),
                          (lambda p, w: w["strokes"], "strokes per word", None)])]
    fig = plt.figure(figsize=(FIGURE_WIDTH_IN, 7.6), layout="constrained")  # a phone's width (issue 45)
    subfigs = fig.subfigures(1, 2)
    handles = {}
    for sub, (row_title, specs) in zip(subfigs, rows):
        sub.suptitle(row_title, fontsize=FIGURE_TEXT_PT + 1, fontweight="bold")
        axes = sub.subplots(3, 1)
        for ax, (get, label, pid) in zip(axes, specs):
            values = [np.asarray(get(p, w), dtype=float) for _, p, w in sets]
            allv = np.concatenate([v[np.isfinite(v)] for v in values]) if values else np.zeros(0)
            bins = np.histogram_bin_edges(allv, bins=20) if len(allv) else 10
            for k, ((name, _, _), v) in enumerate(zip(sets, values)):
                v = v[np.isfinite(v)]
                if not len(v):
                    continue
                weights = np.full(len(v), 1.0 / len(v))
                if k == 0:
                    ax.hist(v, bins=bins, weights=weights, color=OKABE_ITO[0], alpha=0.85, label=name)
                else:
                    ax.hist(v, bins=bins, weights=weights, histtype="step", lw=2, color=OKABE_ITO[1], label=name)
            if pid is not None and pid in paper.index:
                ax.axvline(float(paper.loc[pid, "value"]), color="black", ls="--", lw=1.5, label="paper")
            ax.set_xlabel(figure_text(wrap_to(label, FIGURE_WIDTH_IN / 2)), fontsize=FIGURE_TEXT_PT)
            ax.set_ylabel("share of pages" if row_title == "Per page" else "share of words", fontsize=FIGURE_TEXT_PT)
            ax.tick_params(labelsize=FIGURE_TEXT_PT)
            ax.xaxis.set_major_locator(MaxNLocator(4))
            ax.spines[["top", "right"]].set_visible(False)
            for h, lab in zip(*ax.get_legend_handles_labels()):
                handles.setdefault(lab, h)
    # one key for every panel: the sets and the paper's value
    fig.legend(list(handles.values()), list(handles.keys()), loc="outside upper center", ncols=len(handles),
               frameon=False, fontsize=FIGURE_TEXT_PT)
    return fig


def fig_pages_with_boxes(ds, page_ids: list[str], max_cols: int = 1):
    """Example page photos with their word boxes (page pixels), ``max_cols`` a row (one by default: each page
    :data:`~inkground_lib.report.legibility.FIGURE_WIDTH_IN` wide, so its title stays legible on a phone)."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    from inkground_lib.report.palette import OKABE_ITO

    n = len(page_ids)
    cols = max(1, min(max_cols, n))
    rows = int(math.ceil(n / cols))
    col_in = FIGURE_WIDTH_IN / cols
    pages = [ds.page(pid) for pid in page_ids]
    aspect = max((p.height / p.width for p in pages), default=1.3)
    fig, axes = plt.subplots(rows, cols, figsize=(FIGURE_WIDTH_IN, (col_in * aspect + 0.5) * rows), squeeze=False,
                             constrained_layout=True)
    for ax, pid, page in zip(axes.flat, page_ids, pages):
        ax.imshow(page.load_image())
        for w in page.words:
            x0, y0, x1, y1 = w.box
            ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, ec=OKABE_ITO[1], lw=1.2))
        ax.set_title(figure_text(wrap_to(f"page {pid}: {len(page.words)} words, writer {page.writer}", col_in)),
                     fontsize=FIGURE_TEXT_PT)
        ax.set_axis_off()
    for ax in list(axes.flat)[n:]:
        ax.set_axis_off()
    return fig


# Section 01's table: (label, key in datasets.statistics.statistics, id in reported.csv).
STATISTICS_ROWS = [
    ("pages", "pages", "pages"),
    ("words per page (mean)", "words_per_page_mean", "words_per_page_mean"),
    ("words per page (min)", "words_per_page_min", "words_per_page_min"),
    ("words per page (max)", "words_per_page_max", "words_per_page_max"),
    ("strokes per page (mean)", "strokes_per_page_mean", "strokes_per_page_mean"),
    ("points per stroke (mean)", "points_per_stroke_mean", "points_per_stroke_mean"),
    ("median word-box width / page width", "box_width_median", "box_width_median"),
    ("median word-box height / page height", "box_height_median", "box_height_median"),
]


GENERATOR_SET = "generator's setting"
"""Table 1.1's column for the value the synthetic generator was SET to (beside the value measured on the pages
it drew, in :data:`inkground_lib.report.tables.MEASURED`)."""


@dataclass(frozen=True)
class GeneratorSetting:
    """One statistic the synthetic generator was set to: its ``value``, ``what`` the setting is (``target
    mean``, ``floor``, ...; :attr:`text` is the two together) and a ``note`` saying why the measured value is not
    divided by the paper's."""

    value: object
    what: str
    note: str

    @property
    def text(self) -> str:
        v = f"{self.value:g}" if isinstance(self.value, (int, float)) else str(self.value)
        return f"{self.what} {v}"


def generator_settings(ds, paper: pd.DataFrame | None = None) -> dict[str, GeneratorSetting]:
    """The statistics of ``ds`` that its generator was SET to (the synthetic generator's parameters, read
    from the dataset's manifest): {statistic key: :class:`GeneratorSetting`}, empty for a dataset that was not
    generated (recorded, benchmark, inkGround). Pages: the count the generator was asked for. Words per page:
    the generator's floor ``words_min``, cap ``words_max`` and target mean ``words_mean`` (defaults from the
    paper's 2-140, mean 34.89). Word-box size: the generator's letter ``size`` (1 = the default x-height, chosen
    so the median word box matches the paper's 0.100 x 0.037 of the page). Each is also measured on the pages
    drawn (:func:`statistics_table` shows both)."""
    if ds.kind != "synth":
        return {}
    paper = paper_numbers() if paper is None else paper
    m = (ds.meta or {}).get("params", {})
    out = {}

    def note(value, pid, what):
        p = float(paper.loc[pid, "value"])
        return (f"generator's {what} set to the paper's value" if math.isclose(float(value), p, rel_tol=1e-9)
                else f"generator's {what} set to {value:g} (paper {p:g})")

    if "pages" in m:
        out["pages"] = GeneratorSetting(m["pages"], "asked for", "the page count the generator was asked for")
    for key, param, pid, what in (("words_per_page_min", "words_min", "words_per_page_min", "floor"),
                                  ("words_per_page_max", "words_max", "words_per_page_max", "cap"),
                                  ("words_per_page_mean", "words_mean", "words_per_page_mean", "target mean")):
        if param in m:
            out[key] = GeneratorSetting(m[param], what, note(m[param], pid, what))
    if "size" in m:
        for key in ("box_width_median", "box_height_median"):
            out[key] = GeneratorSetting(m["size"], "letter size", "generator's letter size tuned to the paper's box")
    return out


def generator_sentence(ds, paper: pd.DataFrame | None = None) -> str:
    """One sentence for section 01's prose: which statistics the generator was set to match, with its
    settings (:func:`generator_settings`), or that none was set."""
    s = generator_settings(ds, paper)
    if not s:
        return (f"The dataset {ds.name} was not generated to match the paper, so every statistic in the table "
                f"is measured.")
    parts = []
    w = {k: s[k].value for k in ("words_per_page_min", "words_per_page_max", "words_per_page_mean") if k in s}
    if len(w) == 3:
        parts.append(f"words per page (drawn between {w['words_per_page_min']:g} and {w['words_per_page_max']:g} "
                     f"with a target mean of {w['words_per_page_mean']:g})")
    if "box_width_median" in s:
        parts.append(f"the word-box size ({s['box_width_median'].text}, the default x-height chosen so the "
                     f"median word box matches the paper's)")
    asked = f"asked for {s['pages'].value:g} pages and " if "pages" in s else ""
    return (f"The synthetic generator was {asked}SET to the paper's statistics for {' and '.join(parts)}. Those "
            f"rows show both: the generator's setting in the column \"{GENERATOR_SET}\", and the value measured "
            f"on the pages it drew in \"{MEASURED}\". They have no ratio to the paper's value: for a setting taken "
            f"from the paper's value (or a page count the generator was asked for) the ratio would measure how "
            f"closely the generator hits its own aim, not how the pages compare with the paper's. The other rows "
            f"are measured only.")


def statistics_table(ds, stats: dict, rec_stats: dict | None = None, paper: pd.DataFrame | None = None):
    """Section 01's table: the statistics of ``ds`` (``stats``, from datasets.statistics.statistics, all
    measured on the pages) beside the paper's, the recorded set's statistics (``rec_stats``) as a further
    measured column, and, for a generated dataset, the generator's setting of each statistic it was set to
    (:func:`generator_settings`) in the column :data:`GENERATOR_SET` beside its measured value; those rows
    have no ratio to the paper's (the note says why)."""
    t = beside_paper(stats, STATISTICS_ROWS, paper=paper,
                     also={"recorded set (measured)": rec_stats} if rec_stats else None)
    settings = generator_settings(ds, paper)
    if not settings:
        return t
    column = [settings[key].text if key in settings else missing("not set") for _, key, _ in STATISTICS_ROWS]
    t.insert(0, GENERATOR_SET, pd.Series(column, index=t.index, dtype=object))
    for label, key, _ in STATISTICS_ROWS:
        if key in settings:
            t.loc[label, RATIO] = missing(settings[key].note)
    return t
