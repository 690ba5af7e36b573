"""Section 04's figures and captioned tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from inkground_lib.analysis.tradeoffs import pareto_front
from inkground_lib.report.format import is_missing, missing


def _front_line(ax, x, y, xb, yb, **kw):
    m = pareto_front(x, y, xb, yb)
    if m.sum() >= 1:
        order = np.argsort(np.asarray(x)[m])
        ax.plot(np.asarray(x)[m][order], np.asarray(y)[m][order], **kw)
    return m


def fig_tradeoffs(summary: pd.DataFrame, paper: pd.DataFrame | None = None, *, dtw_linthresh: float = 1.0):
    """Two panels: Style against AR and DTW against AR. Ours (measured): one colour per dataset, filled
    circles with page-bootstrap CIs as error bars; the paper's reported points: open diamonds, one colour
    per paper dataset. The Pareto front (non-dominated systems: high AR and high Style; high AR and low DTW)
    of each group is drawn as a line (solid: ours, dashed: paper). Style is beside each dataset's chance
    level only in the table: the classifiers have different numbers of writers, so Style does not compare
    across datasets."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), constrained_layout=True)
    ours_colors = ["#4c72b0", "#55a868", "#8172b3", "#937860", "#da8bc3"]
    paper_colors = ["#c44e52", "#dd8452", "#8c8c8c"]
    specs = [(axes[0], "style", "max", "Style (probability of the true writer)"),
             (axes[1], "dtw", "min", "DTW (word heights, lower is better)")]
    for ax, ym, yb, ylabel in specs:
        for k, (ds, g) in enumerate(summary.groupby("dataset", sort=False)):
            c = ours_colors[k % len(ours_colors)]
            x, y = g["ar"].to_numpy(float), g[ym].to_numpy(float)
            xerr = np.abs(np.vstack([x - g["ar_lo"].to_numpy(float), g["ar_hi"].to_numpy(float) - x]))
            yerr = np.abs(np.vstack([y - g[f"{ym}_lo"].to_numpy(float), g[f"{ym}_hi"].to_numpy(float) - y]))
            ax.errorbar(x, y, xerr=np.nan_to_num(xerr), yerr=np.nan_to_num(yerr), fmt="o", color=c, ms=6,
                        capsize=3, lw=1, label=f"ours (measured, {ds})")
            _front_line(ax, x, y, "max", yb, color=c, lw=1, alpha=0.7)
            for xi, yi, name in zip(x, y, g["system"]):
                if not (math.isnan(xi) or math.isnan(yi)):
                    ax.annotate(str(name), (xi, yi), textcoords="offset points", xytext=(4, 4), fontsize=7, color=c)
        if paper is not None and len(paper):
            for k, (ds, g) in enumerate(paper.groupby("dataset", sort=False)):
                g = g[g["ar"].notna() & g[ym].notna()]
                if not len(g):
                    continue
                c = paper_colors[k % len(paper_colors)]
                x, y = g["ar"].to_numpy(float), g[ym].to_numpy(float)
                ax.scatter(x, y, marker="D", facecolors="none", edgecolors=c, s=48, lw=1.5,
                           label=f"paper (reported, {ds})")
                _front_line(ax, x, y, "max", yb, color=c, lw=1, ls="--", alpha=0.7)
                for xi, yi, name in zip(x, y, g["system"]):
                    ax.annotate(str(name), (xi, yi), textcoords="offset points", xytext=(4, -9), fontsize=7, color=c)
        ax.set_xlabel("AR (accurate rate of OCR on the rendered strokes)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    ys = list(summary["dtw_hi"].dropna()) + ([] if paper is None else list(paper["dtw"].dropna()))
    if dtw_linthresh and ys and max(ys) > 3 * dtw_linthresh:
        # wild traces (DTW of several word heights): linear up to the threshold (DTW 0 still shows),
        # logarithmic above
        from matplotlib.ticker import ScalarFormatter

        axes[1].set_yscale("symlog", linthresh=dtw_linthresh, linscale=2.0)
        axes[1].yaxis.set_major_formatter(ScalarFormatter())
    handles, labels = axes[0].get_legend_handles_labels()
    h2, l2 = axes[1].get_legend_handles_labels()
    seen = dict(zip(labels, handles))
    for h, l in zip(h2, l2):
        seen.setdefault(l, h)
    fig.legend(list(seen.values()), list(seen.keys()), loc="outside lower center", ncol=min(4, len(seen)),
               frameon=False, fontsize=8)
    return fig


def captioned(tables: dict, caption: str) -> list:
    """Styled tables for display, one per dataset, captioned ``caption.format(dataset)``."""
    return [t.style.set_caption(caption.format(ds)).format(precision=2, na_rep="n/a") for ds, t in tables.items()]


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
