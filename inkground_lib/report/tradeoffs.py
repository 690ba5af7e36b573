"""Section 04's figures and tables as the book shows them.

Figures (:func:`fig_tradeoffs`): AR against DTW (ours and the paper's points on one axes: DTW is in word
heights on both sides) and AR against Style (one panel per writer classifier: ours and the paper's Style are
never on one axis, the classifiers choose among different numbers of writers). Colours are the Okabe-Ito
palette, each group has its own marker, labels are placed by adjustText with a fixed iteration count (no time
limit, so two builds draw the same figure) and ticks sit at round values.

Tables (``*_view``): :func:`inkground_lib.report.table_view.table_view` over the analysis' own tables
(:mod:`inkground_lib.analysis.tradeoffs`), with human column names, precision by column, the paper's rows
set apart and repeated "cannot run here" reasons folded into one footnote each.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from inkground_lib.analysis.tradeoffs import (
    REFERENCE_METRICS,
    REFERENCE_NAMES,
    RankFlip,
    other_reference,
    pareto_front,
)
from inkground_lib.analysis.ties import TIES_RULE, tied_ranks
from inkground_lib.core.metric_table import METRICS, metric_labels
from inkground_lib.report.escape import figure_text
from inkground_lib.report.format import format_interval, is_missing, missing
from inkground_lib.report.legibility import FIGURE_TEXT_PT, FIGURE_WIDTH_IN
from inkground_lib.report.palette import OKABE_ITO
from inkground_lib.report.table_view import table_view

OURS_STYLE = [(OKABE_ITO[0], "o"), (OKABE_ITO[1], "s"), (OKABE_ITO[4], "v"), (OKABE_ITO[5], "P")]
PAPER_STYLE = [(OKABE_ITO[2], "D"), (OKABE_ITO[3], "^"), (OKABE_ITO[7], "X")]
ROUND_STEPS = [1, 2, 5, 10]  # MaxNLocator steps: ticks at 1, 2 or 5 times a power of ten
SYMLOG_TICKS = [0, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]


def better_word(metric: str) -> str:
    """"lower" or "higher": which values of ``metric`` are better (its record's direction)."""
    return "lower" if METRICS[metric].lower_is_better else "higher"


def axis_label(metric: str, detail: str = "") -> str:
    """A figure axis's label for ``metric`` from its record: its label, ``detail`` and which way is better.

    >>> axis_label("dtw", "word heights"), axis_label("style")
    ('DTW (word heights, lower is better)', 'Style (higher is better)')
    """
    return f"{METRICS[metric].label} ({detail + ', ' if detail else ''}{better_word(metric)} is better)"


AR_LABEL = axis_label("ar", "OCR accurate rate of the rendered strokes")
DTW_LABEL = axis_label("dtw", METRICS["dtw"].unit)
STYLE_LABEL = axis_label("style")
FIGURE_METRICS = ("dtw", "ar", "style")
"""The metrics the trade-off figures plot (AR across, DTW or Style up): the paper's rows shown in the points
table are those with at least one of them."""
LABEL_ITERATIONS = 400  # adjustText iterations (fixed: a time limit would make the figure machine-dependent)
STYLE_COLUMNS = 1
"""Panels per row of the Style-against-AR figure: one, so that the figure keeps a phone's width
(:data:`~inkground_lib.report.legibility.FIGURE_WIDTH_IN`) and its text its size however many classifiers."""


PAPER_CLASS_IDS = {"inkGround": ("style_classes_inkground", "pages"), "IAM-OnDB": ("style_classes_iamondb", "writers")}



def metric_columns() -> dict[str, str]:
    """Column -> heading of the points table: words, valid rate, each metric under its label (metric table
    order), writer classes."""
    return {"n_words": "words", "valid_rate": "valid rate", **metric_labels(), "n_classes": "writer classes"}


# ------------------------------------------------------------------------------------------------ figures

def _round_ticks(axis, *, symlog_max: float | None = None, nbins: int = 5):
    """Major ticks at round values: MaxNLocator with steps 1, 2, 5, 10 on a linear axis; on a symlog
    axis the fixed ladder 0, 0.1, 0.2, 0.5, 1, 2, 5, ... up to ``symlog_max``. Labels print as '%g' (0.2, not
    0.2000); no minor tick labels."""
    from matplotlib.ticker import (
        FixedLocator,
        FuncFormatter,
        MaxNLocator,
        NullFormatter,
        NullLocator,
    )

    if symlog_max is not None:
        axis.set_major_locator(FixedLocator([t for t in SYMLOG_TICKS if t <= symlog_max * 1.0001]))
    else:
        axis.set_major_locator(MaxNLocator(nbins=nbins, steps=ROUND_STEPS))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{0.0 if abs(v) < 1e-12 else v:g}"))
    axis.set_minor_locator(NullLocator())
    axis.set_minor_formatter(NullFormatter())


def _groups(summary: pd.DataFrame, paper: pd.DataFrame | None, ym: str):
    """(name, frame, colour, marker, ours?) for every group with points on the (AR, ``ym``) plane."""
    out = []
    for k, (ds, g) in enumerate(summary.groupby("dataset", sort=False)):
        c, m = OURS_STYLE[k % len(OURS_STYLE)]
        out.append((f"ours (measured): {ds}", ds, g, c, m, True))
    if paper is not None and len(paper):
        for k, (ds, g) in enumerate(paper.groupby("dataset", sort=False)):
            g = g[g["ar"].notna() & g[ym].notna()]
            if len(g):
                c, m = PAPER_STYLE[k % len(PAPER_STYLE)]
                out.append((f"paper (reported): {ds}", ds, g, c, m, False))
    return out


def _merged_labels(x, y, names):
    """Points at the same place get one label ("reference = skeleton"): returns [(x, y, text)]."""
    out = {}
    for xi, yi, n in zip(x, y, names):
        if math.isnan(xi) or math.isnan(yi):
            continue
        key = (round(float(xi), 6), round(float(yi), 6))
        out.setdefault(key, []).append(str(n))
    return [(kx, ky, " = ".join(v)) for (kx, ky), v in out.items()]


def _plot_group(ax, g, ym, yb, colour, marker, ours, label, fontsize: float = FIGURE_TEXT_PT):
    """Points (ours: filled with page-bootstrap 95% intervals; the paper's: open), the group's Pareto front
    (solid for ours, dashed for the paper's) and the label texts (returned, to be placed later)."""
    x, y = g["ar"].to_numpy(float), g[ym].to_numpy(float)
    if ours:
        lo = lambda c: g[c].to_numpy(float) if c in g else np.full(len(g), np.nan)  # noqa: E731
        xerr = np.nan_to_num(np.abs(np.vstack([x - lo("ar_lo"), lo("ar_hi") - x])))
        yerr = np.nan_to_num(np.abs(np.vstack([y - lo(f"{ym}_lo"), lo(f"{ym}_hi") - y])))
        ax.errorbar(x, y, xerr=xerr, yerr=yerr, fmt=marker, color=colour, ms=7, mec="white", mew=0.6,
                    capsize=2.5, elinewidth=1, lw=1, label=label, zorder=3)
        bar_x, bar_y = [], []  # labels keep off the error bars too
        for f in np.linspace(-1, 1, 5):
            bar_x += list(x + np.where(f < 0, -xerr[0], xerr[1]) * abs(f)) + list(x)
            bar_y += list(y) + list(y + np.where(f < 0, -yerr[0], yerr[1]) * abs(f))
    else:
        ax.scatter(x, y, marker=marker, facecolors="white", edgecolors=colour, s=55, lw=1.6, label=label, zorder=3)
    m = pareto_front(x, y, "max", yb)
    line_x, line_y = (bar_x, bar_y) if ours else ([], [])
    if m.sum() >= 2:
        order = np.argsort(x[m])
        fx, fy = x[m][order], y[m][order]
        ax.plot(fx, fy, color=colour, lw=1, ls="-" if ours else "--", alpha=0.8, zorder=2,
                gid=FRONT_KEYS[ours][0])
        for (x0, y0), (x1, y1) in zip(zip(fx[:-1], fy[:-1]), zip(fx[1:], fy[1:])):  # labels keep off the line
            line_x += list(np.linspace(x0, x1, 12)[1:-1])
            line_y += list(np.linspace(y0, y1, 12)[1:-1])
    texts = []
    for xi, yi, t in _merged_labels(x, y, g["system"]):
        # start on the side with room: right of a point in the left part of the AR axis, left of it otherwise
        texts.append(ax.text(xi, yi, figure_text(t), fontsize=fontsize, color=colour, ha="left" if xi < 0.6 else "right",
                             va="bottom", zorder=4, fontweight="bold" if ours else "normal"))
    return texts, list(x) + line_x, list(y) + line_y


def _place_labels(fig, ax, texts, xs, ys):
    """adjustText with a fixed iteration count (deterministic), labels kept inside the axes, a thin line
    from a moved label to its point."""
    from adjustText import adjust_text

    if not texts:
        return
    ok = [i for i in range(len(xs)) if not (math.isnan(xs[i]) or math.isnan(ys[i]))]
    adjust_text(texts, x=[xs[i] for i in ok], y=[ys[i] for i in ok], ax=ax, time_lim=None,
                iter_lim=LABEL_ITERATIONS, ensure_inside_axes=True, expand_axes=False, expand=(1.2, 1.6),
                force_text=(0.3, 0.5), force_static=(0.3, 0.5), arrowprops=dict(arrowstyle="-", color="#555555", lw=0.5))


def _freeze_layout(fig):
    """Run the constrained layout once and freeze it: labels are placed on the final axes, and saving the
    figure does not move the axes under them."""
    fig.canvas.draw()
    fig.set_layout_engine("none")


FRONT_KEYS = {True: ("front-ours", "Pareto front, ours (solid line)", "-"),
              False: ("front-paper", "Pareto front, the paper's (dashed line)", "--")}
"""Ours (True) / the paper's: the id of a drawn Pareto-front line, its entry in the key and its line style. A
front is drawn only where it holds two or more points; the key lists only the fronts drawn."""


def fronts_drawn(fig) -> set[bool]:
    """Which Pareto fronts ``fig`` draws: True (ours), False (the paper's)."""
    ids = {line.get_gid() for ax in fig.axes for line in ax.get_lines()}
    return {ours for ours, (gid, _, _) in FRONT_KEYS.items() if gid in ids}


def _legend(fig, axes):
    from matplotlib.lines import Line2D

    seen = {}
    for ax in np.ravel(axes):
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    for ours in sorted(fronts_drawn(fig), reverse=True):
        _, lab, ls = FRONT_KEYS[ours]
        seen[lab] = Line2D([], [], color="#555555", lw=1, ls=ls)
    order = {"ours": 0, "pape": 1}
    seen = dict(sorted(seen.items(), key=lambda kv: order.get(kv[0][:4], 2)))  # ours, the paper's, fronts, chance
    if seen:
        fig.legend(list(seen.values()), list(seen.keys()), loc="outside lower center", ncol=1, frameon=False,
                   fontsize=FIGURE_TEXT_PT)


def _ar_axis(ax):
    ax.set_xlim(-0.06, 1.06)
    _round_ticks(ax.xaxis, nbins=6)  # 0, 0.2, ..., 1
    ax.grid(alpha=0.3)


def paper_classes(reported: pd.DataFrame | None) -> dict:
    """{paper dataset: (number of writer classes, what a class is)} from reported.csv (537 pages on
    inkGround, 217 writers on IAM-OnDB)."""
    if reported is None:
        return {}
    rp = reported.set_index("id") if "id" in reported.columns else reported
    return {ds: (int(float(rp.loc[i, "value"])), unit) for ds, (i, unit) in PAPER_CLASS_IDS.items() if i in rp.index}


def _fig_dtw(summary: pd.DataFrame, paper: pd.DataFrame | None, dtw_symlog_above: float):
    """:func:`fig_tradeoffs` with ``y="dtw"``: one axes, DTW against AR (see there)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(FIGURE_WIDTH_IN, 5.0), layout="constrained")
    texts, xs, ys = [], [], []
    for label, ds, g, c, m, ours in _groups(summary, paper, "dtw"):
        t, x, yy = _plot_group(ax, g, "dtw", "min", c, m, ours, label)
        texts += t
        xs += x
        ys += yy
    top = max([v for v in ys if not math.isnan(v)] + list(summary.get("dtw_hi", pd.Series(dtype=float)).dropna())
              + [0.1])
    _ar_axis(ax)
    ax.set_xlabel(AR_LABEL)
    ax.set_ylabel(DTW_LABEL)
    if top > dtw_symlog_above:
        ax.set_yscale("symlog", linthresh=1.0, linscale=1.5)
        ax.set_ylim(-0.05, top * 1.3)
        _round_ticks(ax.yaxis, symlog_max=top * 1.3)
    else:
        ax.set_ylim(-0.04 * top, top * 1.12)
        _round_ticks(ax.yaxis)
    _legend(fig, ax)
    _freeze_layout(fig)
    _place_labels(fig, ax, texts, xs, ys)
    plt.close(fig)
    return fig


def fig_tradeoffs(summary: pd.DataFrame, paper: pd.DataFrame | None = None, *, y: str = "dtw",
                  reported: pd.DataFrame | None = None, dtw_symlog_above: float = 3.0):
    """Section 04's trade-off figure, AR on the x axis:

    * ``y="dtw"``: one axes, DTW against AR. Ours (filled markers, one colour and marker per dataset, with
      page-bootstrap 95% intervals) and the paper's reported points (open markers) share the axes: DTW is
      in word heights on both sides (against different references). When some DTW exceeds
      ``dtw_symlog_above`` word heights the DTW axis is symlog (linear below 1) with ticks 0, 0.1, 0.2, 0.5,
      1, 2, 5, ...
    * ``y="style"``: one panel per writer classifier (ours: one per dataset, top row; the paper's: bottom
      row, classes from ``reported``), each with its chance level 1 / classes as a dotted line: ours and the
      paper's Style are never on one axis.

    A line joins each group's Pareto front where it holds two or more points (solid: ours; dashed: the
    paper's); the key names the kinds of front drawn (:func:`fronts_drawn`). Returns the Figure (closed
    from pyplot, so a notebook shows it once)."""
    import matplotlib.pyplot as plt

    if y not in ("dtw", "style"):
        raise ValueError(f"fig_tradeoffs: y must be 'dtw' or 'style', got {y!r}")
    if y == "dtw":
        return _fig_dtw(summary, paper, dtw_symlog_above)
    ours = list(summary.groupby("dataset", sort=False))
    classes = paper_classes(reported)
    pap = [] if paper is None else [(ds, g[g["ar"].notna() & g["style"].notna()])
                                    for ds, g in paper.groupby("dataset", sort=False)]
    pap = [(ds, g) for ds, g in pap if len(g)]
    # at most STYLE_COLUMNS panels a row, so the figure keeps its width (and its text its size) however many
    # classifiers there are: ours first, the paper's on the rows below
    ncols = STYLE_COLUMNS if max(len(ours), len(pap)) > 1 else 1
    rows_ours, rows_pap = max(1, -(-len(ours) // ncols)), -(-len(pap) // ncols)
    nrows = rows_ours + rows_pap
    fig, axes = plt.subplots(nrows, ncols, figsize=(FIGURE_WIDTH_IN, 3.2 * nrows + 0.9), layout="constrained",
                             squeeze=False, sharex=True)
    placed = []
    for first_row, n_rows, items, is_ours in ((0, rows_ours, ours, True), (rows_ours, rows_pap, pap, False)):
        for k in range(n_rows * ncols):
            ax = axes[first_row + k // ncols][k % ncols]
            if k >= len(items):
                ax.set_visible(False)
                continue
            ds, g = items[k]
            c, m = (OURS_STYLE if is_ours else PAPER_STYLE)[k % len(OURS_STYLE if is_ours else PAPER_STYLE)]
            who = "ours (measured)" if is_ours else "paper (reported)"
            t, x, yy = _plot_group(ax, g, "style", "max", c, m, is_ours, figure_text(f"{who}: {ds}"))
            if is_ours:
                n = g["n_classes"].dropna()
                n, unit = (int(n.iloc[0]) if len(n) else None), "writers"
            else:
                n, unit = classes.get(ds, (None, "writers"))
            if n:
                ax.axhline(1.0 / n, color="#555555", lw=1, ls=":", zorder=1,
                           label="chance level (1 / writer classes)")
            ax.set_title(figure_text(f"{who}: {ds}\n{n if n else 'unknown number of'} {unit} (classes)"),
                         fontsize=FIGURE_TEXT_PT + 1)
            hi = g["style_hi"].to_numpy(float) if is_ours and "style_hi" in g else np.asarray(yy, float)
            top = np.nanmax(np.concatenate([hi, np.asarray(yy, float), [0.05]]))
            # ours: up to the highest interval; the paper's: the whole probability range
            ax.set_ylim(*((-0.04 * top, top * 1.15) if is_ours else (-0.04, 1.04)))
            _ar_axis(ax)
            _round_ticks(ax.yaxis)
            ax.set_ylabel(STYLE_LABEL)
            ax.set_xlabel("AR (higher is better)")
            ax.tick_params(labelbottom=True)
            placed.append((ax, t, x, yy))
    _legend(fig, axes)
    _freeze_layout(fig)
    for ax, t, x, yy in placed:
        _place_labels(fig, ax, t, x, yy)
    plt.close(fig)
    return fig


# ------------------------------------------------------------------------------------------------- tables

def captioned(tables: dict, caption: str, **kw) -> list:
    """One :func:`table_view` per dataset, captioned ``caption.format(dataset)`` (e.g. "Table 4.4{}: ranks
    on {}" formatted with the letter a, b, ... and the dataset)."""
    out = []
    for k, (ds, t) in enumerate(tables.items()):
        out.append(table_view(t, caption.format(chr(ord("a") + k), ds), **kw))
    return out


def points_table(summary: pd.DataFrame, paper: pd.DataFrame | None = None,
                 reported: pd.DataFrame | None = None) -> tuple[pd.DataFrame, list[int]]:
    """The points of the trade-off figures as one table: ours (every system of every run, point values; the
    intervals are in the figures) then the paper's reported systems that have at least one of DTW, AR,
    Style; writer classes beside Style. Returns (table, positions of the paper's rows)."""
    cols = ["dataset", "label", "n_words", "valid_rate", *METRICS, "n_classes"]
    ours = summary.reindex(columns=cols).copy()
    ours.insert(0, "source", "ours (measured)")
    rows = [ours]
    classes = paper_classes(reported)
    if paper is not None and len(paper):
        p = paper[paper.reindex(columns=list(FIGURE_METRICS)).notna().any(axis=1)].copy()
        p = p.rename(columns={"system": "label"})
        p["n_classes"] = [classes.get(ds, (np.nan,))[0] if pd.notna(s) else np.nan for ds, s in zip(p["dataset"], p["style"])]
        p = p.reindex(columns=cols)
        p.insert(0, "source", "paper (reported)")
        rows.append(p)
    out = pd.concat(rows, ignore_index=True).rename(columns={"label": "system"})
    return out, list(range(len(ours), len(out)))


def _paper_marked(t: pd.DataFrame) -> pd.DataFrame:
    """The source column folded into the dataset column ("inkGround (paper)"): one column fewer on a narrow
    screen; the paper's rows are also shaded and set apart by a rule."""
    t = t.copy()
    paper = t["source"].astype(str).str.startswith("paper")
    t["dataset"] = [f"{ds} (paper)" if p else str(ds) for ds, p in zip(t["dataset"], paper)]
    return t.drop(columns="source")


def points_view(summary: pd.DataFrame, paper: pd.DataFrame | None, reported: pd.DataFrame | None, caption: str):
    """:func:`points_table` as the book shows it."""
    t, paper_rows = points_table(summary, paper, reported)
    dec = {"words": 0, "writer classes": 0, "valid rate": 3, **{label: 3 for label in metric_labels().values()}}
    notes = ["DTW and Chamfer: mean over words (word heights, lower is better; invalid outputs scored by the "
             "centre-dot rule); AR and CR: corpus rates over words; Style: mean true-writer probability over "
             "the classifier's held-out words. Style values are comparable only within one classifier (same "
             "dataset, same number of writer classes)."]
    if paper_rows:
        notes.append("— on the paper's rows: not given in the paper's summary.")
    return table_view(_paper_marked(t).set_index("dataset"), caption, columns=metric_columns(), decimals=dec,
                      paper_rows=paper_rows, notes=notes, fold=False)


def claims_view(claim_tab: pd.DataFrame, caption: str):
    """The paper's trade-off statements with the verdict of their machine checks."""
    t = claim_tab[["sentence", "check_ok", "check_detail"]].copy()
    t["check_ok"] = ["yes" if v is True or v == True else ("no" if v is False or v == False else  # noqa: E712
                     missing("not checkable")) for v in t["check_ok"]]
    t.index.name = "claim"
    return table_view(t, caption, columns={"sentence": "the paper's sentence", "check_ok": "holds",
                                           "check_detail": "numbers compared (from the paper's summary)"},
                      fold=False)


def style_table(chance: pd.DataFrame, decimals: int = 4) -> pd.DataFrame:
    """Section 04's Style-beside-chance table (:func:`inkground_lib.analysis.tradeoffs.style_chance_table`)
    for display: numbers rounded to ``decimals`` (writer classes as counts), and every missing value (NaN,
    None, an empty interval) an em dash with its reason: "— not reported" on the paper's rows (the paper
    gives no interval nor classifier accuracy), "— not computed" on ours."""
    out = chance.astype(object).copy()
    source = (out.index.get_level_values("source") if "source" in (out.index.names or [])
              else pd.Index(["ours (measured)"] * len(out)))
    for col in out.columns:
        vals = []
        for src, v in zip(source, out[col]):
            if is_missing(v) or (isinstance(v, str) and (not v.strip() or "nan" in v.lower())):
                vals.append(missing("not reported" if str(src).startswith("paper") else "not computed"))
            elif isinstance(v, str):
                vals.append(v)
            elif col == "writer classes":
                vals.append(int(round(float(v))))
            else:
                vals.append(round(float(v), decimals))
        out[col] = vals
    return out


def style_view(chance: pd.DataFrame, caption: str):
    """:func:`style_table` as the book shows it: Style 3 decimals, chance 4 (1/537 = 0.0019), Style / chance 1."""
    t = style_table(chance, decimals=6).reset_index()
    paper_rows = [i for i, s in enumerate(t["source"]) if str(s).startswith("paper")]
    dec = {"Style": 3, "chance": 4, "classifier top-1": 3, "Style / chance": 1, "writer classes": 0}
    return table_view(_paper_marked(t).set_index("dataset"), caption,
                      columns={"classifier top-1": "classifier top-1 accuracy"},
                      decimals={**dec, "classifier top-1 accuracy": 3}, paper_rows=paper_rows, fold=False,
                      notes=["chance: 1 / writer classes, the Style of a system that draws no writer's style; "
                             "Style / chance: how many times chance."])


def rank_view(table: pd.DataFrame, variants: list | None, caption: str):
    """One dataset's rank table (:func:`inkground_lib.analysis.tradeoffs.rank_table`) as the book shows it:
    Kendall's tau at 2 decimals and its p-value at 3. Variants that cannot run in this build have no row
    (section 04's prose lists them once: :func:`inkground_lib.analysis.tradeoffs.not_run_variants`);
    ``variants`` is kept for the callers' signature."""
    t = table.copy().astype(object)
    tau_cols = ["Kendall tau vs default", "p"]
    systems = [c for c in t.columns if c not in tau_cols]
    for c in tau_cols:
        t[c] = pd.to_numeric(t[c], errors="coerce")
    for s in systems:
        t[s] = [("—" if v == "n/a" else v) for v in t[s]]
    return table_view(t, caption, columns={"Kendall tau vs default": "Kendall's tau vs default", "p": "p-value"},
                      decimals={"Kendall's tau vs default": 2, "p-value": 3}, fold=False,
                      notes=["Ranks: 1 = best; — where a system has no value. " + TIES_RULE + " "
                             "Kendall's tau (tau-b) compares the variant's ranking with the metric's default; its "
                             "p-value is two-sided (— on the default row itself and where fewer than two "
                             "systems are ranked)."])


def short_label(label: str) -> str:
    """A system's label without its parenthesis ("Box baseline (line through the box centre)" -> "Box baseline")."""
    return str(label).split(" (", 1)[0]


def flip_sentence(f: RankFlip) -> str:
    """One ranking flip (:class:`inkground_lib.analysis.tradeoffs.RankFlip`) as a sentence with its numbers and
    95% intervals, saying against which reference the two intervals are apart and against which they overlap."""
    rec = METRICS[f.metric]
    m, word = rec.label, better_word(f.metric)
    unit = f" {rec.unit}" if rec.computed == "geometry" else ""  # a distance says its unit; a rate or probability not

    def side(ref: str, first: str, second: str) -> str:
        v1, v2 = f.values[ref][first], f.values[ref][second]
        how = "intervals apart" if f.apart[ref] else "intervals overlapping"
        return (f"against {REFERENCE_NAMES[ref]} the {short_label(f.labels[first])} has the {word} {m} "
                f"({format_interval(*v1)} against {format_interval(*v2)}{unit}, {how})")

    return (f"On {f.dataset}, the choice of reference reverses a ranking: {side(f.reference, f.ahead, f.behind)}, "
            f"but {side(f.other, f.behind, f.ahead)}.")


def flips_text(flips: list, compared: list[str]) -> str:
    """Every ranking flip the choice of reference causes (:func:`flip_sentence`), or, where none has intervals
    apart, a sentence saying so for the datasets ``compared`` (those scored against both references); where
    no dataset was, a sentence saying that."""
    if flips:
        return " ".join(flip_sentence(f) for f in flips)
    if compared:
        metrics = ", ".join(METRICS[m].label for m in REFERENCE_METRICS)
        return (f"On {', '.join(compared)}, scoring against {REFERENCE_NAMES['true']} instead of "
                f"{REFERENCE_NAMES['reference']} reverses no order of two systems on {metrics} with intervals "
                f"apart.")
    return ("No dataset here was scored against both its pseudo-labels and the writers' true trajectories, so "
            "whether the choice of reference changes a ranking is not measured here.")


def reference_table(a) -> dict[str, pd.DataFrame]:
    """Per dataset scored against both references: every system's DTW, Chamfer and Style with 95%
    page-bootstrap intervals and rank (1 = best) against the run's reference and against the other, from an
    :class:`inkground_lib.analysis.tradeoffs.Analysis`."""
    out = {}
    for ds, other in (getattr(a, "reference_summaries", None) or {}).items():
        own = a.summary[a.summary["dataset"] == ds]
        ref = next((r.reference for r in a.runs if r.dataset == ds), "reference")
        oth = other_reference(ref)
        rows = []
        for m in REFERENCE_METRICS:
            ranks = {}
            for name, t in ((ref, own), (oth, other)):
                v = t.set_index("system")[m].astype(float)
                ranks[name] = tied_ranks(v, METRICS[m].lower_is_better)
            for _, r in own.iterrows():
                o = other[other["system"] == r["system"]]
                o = o.iloc[0] if len(o) else {}
                row = {"metric": METRICS[m].label, "system": r["system"]}
                for name, src in ((ref, r), (oth, o)):
                    rk = ranks[name].get(r["system"], float("nan"))
                    val = format_interval(src.get(m) if len(src) else None, src.get(f"{m}_lo") if len(src) else None,
                                          src.get(f"{m}_hi") if len(src) else None)
                    row[f"against {REFERENCE_NAMES[name]}"] = val if is_missing(rk) else f"{val} (rank {int(rk)})"
                rows.append(row)
        out[ds] = pd.DataFrame(rows).set_index(["metric", "system"])
    return out


def reference_view(t: pd.DataFrame, caption: str):
    """One dataset's :func:`reference_table` as the book shows it."""
    return table_view(t, caption, fold=False,
                      notes=["Mean over words (DTW, Chamfer: word heights, lower is better) or true-writer "
                             "probability (Style, higher is better, each reference with its own writer "
                             "classifier), with 95% page-bootstrap intervals; rank 1 = best. " + TIES_RULE +
                             " The reference ink is the pseudo-labels themselves, so it scores 0 against them; "
                             "a system whose derenderer made the pseudo-labels is scored against its own labels "
                             "there (section 3 counts the words on which the two differ)."])


def taus_view(taus: pd.DataFrame, caption: str):
    """:func:`inkground_lib.analysis.tradeoffs.kendall_table` as the book shows it."""
    t = taus.copy()
    # "at" names the variant with the lowest tau; when that tau is 1 no variant moved the ranking
    t["at"] = ["— none: every variant gives the default ranking" if pd.notna(tau) and tau >= 1 - 1e-12 else
               (v if isinstance(v, str) and v else "—") for v, tau in zip(t["at"], t["lowest tau"])]
    return table_view(t, caption, columns={"lowest tau": "lowest Kendall's tau", "at": "at (metric: variant)",
                                           "variants with tau = 1": "variants leaving the ranking unchanged"},
                      decimals={"variants compared": 0, "lowest Kendall's tau": 2,
                                "variants leaving the ranking unchanged": 0})


def corr_view(corr: pd.DataFrame, caption: str):
    """A Spearman correlation matrix at 2 decimals, the metric as the first column."""
    return table_view(corr, caption, index_name="metric", decimals={c: 2 for c in corr.columns})


# -------------------------------------------------------------------------------------------------- prose

def classes_compare_text(ours: dict, paper: dict) -> str:
    """Our writer classifiers' class counts beside the paper's, compared from the numbers (``ours``: {dataset:
    classes}; ``paper``: {paper dataset: (classes, what a class is)}, :func:`paper_classes`): fewer than every
    one of the paper's, more than every one, or neither; and what that does to a Style value. Never "far fewer"
    typed: a paper-scale run has more writers than the paper has pages.

    >>> classes_compare_text({"synth": 107, "recorded": 36}, {"inkGround": (537, "pages"), "IAM-OnDB": (217, "writers")})
    "Our classifiers choose among fewer classes than any of the paper's (synth: 107 writers; recorded: 36 writers; \
the paper's inkGround: 537 pages; IAM-OnDB: 217 writers), so the same Style value takes less skill here, and the \
two Style scales never share an axis."
    >>> classes_compare_text({"big": 820}, {"inkGround": (537, "pages")})[:70]
    "Our classifiers choose among more classes than any of the paper's (big"
    """
    if not ours:
        return "No writer classifier ran here, so no Style of ours stands beside the paper's."
    if not paper:
        return "The paper's class counts are not read, so no Style of ours is compared with the paper's."
    lo, hi = min(n for n, _ in paper.values()), max(n for n, _ in paper.values())
    listed = ("; ".join(f"{ds}: {n} writers" for ds, n in ours.items()) + "; the paper's "
              + "; ".join(f"{ds}: {n} {unit}" for ds, (n, unit) in paper.items()))
    if all(n < lo for n in ours.values()):
        rel, skill = "fewer classes than any of the paper's", "the same Style value takes less skill here"
    elif all(n > hi for n in ours.values()):
        rel, skill = "more classes than any of the paper's", "the same Style value takes more skill here"
    else:
        rel, skill = ("class counts that do not all lie on one side of the paper's",
                      "the same Style value means something different on each")
    return f"Our classifiers choose among {rel} ({listed}), so {skill}, and the two Style scales never share an axis."


def page_numbers(a) -> dict:
    """The numbers and sentences section 04's overview and summary cite (glued with the prefix s04_), from an
    :class:`inkground_lib.analysis.tradeoffs.Analysis`: never NaN, a sentence instead."""
    s = a.summary
    taus = a.taus
    compared = int(taus["variants compared"].sum()) if len(taus) else 0
    tau = taus["lowest tau"].dropna() if len(taus) else pd.Series(dtype=float)
    if not len(tau):
        tau_text = "no definition variant could be compared with a default ranking here"
    elif (tau >= 1 - 1e-12).all():
        tau_text = (f"none of the {compared} definition variants that ran changes any metric's ranking of the "
                    f"systems (Kendall's tau 1.00 against the default for every one)")
    else:
        tau_text = (f"the lowest Kendall's tau between a metric's default ranking and a variant's, over "
                    f"{compared} variants, is {tau.min():.2f} ({a.prose.get('min_tau_at', '')})")
    classes = "; ".join(f"{ds}: {int(g['n_classes'].dropna().iloc[0])} writers (chance "
                        f"{1.0 / float(g['n_classes'].dropna().iloc[0]):.3f})"
                        for ds, g in s.groupby("dataset", sort=False) if g["n_classes"].notna().any())
    pc = paper_classes(a.reported)
    paper_cls = "; ".join(f"{ds}: {n} {unit} (chance {1.0 / n:.4f})" for ds, (n, unit) in pc.items())
    return {
        "n_systems": int(s["system"].nunique()) if len(s) else 0,
        "n_datasets": int(s["dataset"].nunique()) if len(s) else 0,
        "systems_text": ", ".join(sorted(s["label"].astype(str).unique())) or "none",
        "tau_text": tau_text,
        "flips_text": flips_text(getattr(a, "flips", None) or [], list(getattr(a, "reference_summaries", None) or {})),
        "ours_classes_text": classes or missing("no Style classifier ran"),
        "paper_classes_text": paper_cls or missing("not reported"),
        "classes_compare_text": classes_compare_text(
            {ds: int(g["n_classes"].dropna().iloc[0]) for ds, g in s.groupby("dataset", sort=False)
             if g["n_classes"].notna().any()}, pc),
    }
