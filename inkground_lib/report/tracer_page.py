"""The book's page on inkground's tracer (the learned derenderer of
:mod:`inkground_lib.components.derenderers.tracer`), generated like every other generated page: what the tracer
is and is not (:data:`WHAT_IT_IS`, text no run changes), then every number from the record the training run wrote
into the weights (``tracer.npz``: the data it was trained on, the recipe, the network, the final validation
figures) and its training curves as a figure, drawn from the curves file shipped with the weights
(``data/models/tracer-curves.csv``, the ``curves.csv`` the training run wrote: one row per epoch). The page
names no path of the machine that built it.
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from inkground_lib.components.derenderers.tracer.weights import SHIPPED_CURVES, SHIPPED_WEIGHTS, read_npz
from inkground_lib.report.palette import PEN_UP, PREDICTION, REFERENCE

CURVE_COLUMNS = ("epoch", "train_loss", "val_loss", "val_dtw_median", "val_order_differs", "val_direction_differs",
                 "skeleton_val_dtw_median", "skeleton_val_order_differs", "skeleton_val_direction_differs")
"""The columns of a training run's ``curves.csv`` the figure uses."""

WHAT_IT_IS = """**What it is.** inkground's own learned derenderer: a word crop of a page photo (and the word's
text) in, the pen trajectory in page pixels out, in pen order with direction. It is a *hybrid*: the geometry
comes from the skeleton derenderer (`inkground_lib/components/derenderers/skeleton.py`: binarise, skeletonise,
trace); a small transformer (`inkground_lib/components/derenderers/tracer/`) reads the skeleton's strokes and the
word's characters and gives every stroke a progress score (sorted: the writer's order) and a reverse logit (the
writer's direction).

**What it is not.** Not InkSight or a port of it, and not a handwriting recogniser: it never changes the
skeleton's points, only their order, direction and grouping into strokes, so where the skeleton misses ink or
adds noise, so does the tracer. It was trained on isolated words from digitising tablets drawn on synthetic
"photographed" pages; it has not seen real photographs.

**How it measures in this book.** Section 02 runs it beside the skeleton on the same words and compares both
with the writers' true pen paths (its derenderer table); the numbers below are the training run's own."""
"""The tracer in words: what no training run changes (every number on the page comes from the weights' record)."""

PAGE_LABEL = "tracer-model"
"""The page's MyST label: sections 02 and 03 link to it with {ref}`tracer-model`."""


def read_curves(path: str | os.PathLike = SHIPPED_CURVES) -> pd.DataFrame:
    """A training run's curves (one row per epoch); ValueError naming the file and the missing columns."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the tracer's training curves are missing (they ship with the weights)")
    df = pd.read_csv(path)
    missing = [c for c in CURVE_COLUMNS if c not in df.columns]
    if missing or df.empty:
        raise ValueError(f"{path}: not a tracer curves file (missing columns {missing} or no rows)")
    return df


def fig_curves(curves: pd.DataFrame):
    """Three panels over epochs: the training and validation losses; the validation writers' median DTW to
    their true pen paths (word heights); the share of their words whose stroke order or direction differs from
    the writer's - the tracer's as solid lines, the skeleton's (which does not learn) dashed. One panel a row,
    :data:`~inkground_lib.report.legibility.FIGURE_WIDTH_IN` wide: its text stays legible on a phone."""
    from inkground_lib.report.legibility import FIGURE_TEXT_PT, FIGURE_WIDTH_IN

    fig, axes = plt.subplots(3, 1, figsize=(FIGURE_WIDTH_IN, 7.8))
    e = curves["epoch"]
    axes[0].plot(e, curves["train_loss"], "o-", color=PREDICTION, label="training")
    axes[0].plot(e, curves["val_loss"], "s--", color=REFERENCE, label="validation writers")
    axes[0].set(title="loss", xlabel="epoch")
    axes[1].plot(e, curves["val_dtw_median"], "o-", color=PREDICTION, label="tracer")
    axes[1].plot(e, curves["skeleton_val_dtw_median"], "--", color=PEN_UP, label="skeleton")
    axes[1].set(title="median DTW to the truth (word heights)", xlabel="epoch", ylim=(0, None))
    for col, marker, name in (("order_differs", "o", "order"), ("direction_differs", "s", "direction")):
        axes[2].plot(e, curves[f"val_{col}"], marker + "-", color=PREDICTION, label=f"tracer: {name}")
        axes[2].plot(e, curves[f"skeleton_val_{col}"], marker + "--", color=PEN_UP, mfc="none",
                     label=f"skeleton: {name}")
    axes[2].set(title="share of words that differ", xlabel="epoch", ylim=(0, 1))
    # keys where the lines are not: the DTWs' below them (the axis starts at 0), the shares' in two columns
    # above them (they stay below about 0.7)
    where = [{}, {"loc": "lower right"}, {"ncols": 2, "loc": "upper center"}]
    for ax, kw in zip(axes, where):
        ax.legend(fontsize=FIGURE_TEXT_PT, frameon=False, **kw)
        ax.title.set_fontsize(FIGURE_TEXT_PT)
        ax.tick_params(labelsize=FIGURE_TEXT_PT)
        ax.xaxis.label.set_fontsize(FIGURE_TEXT_PT)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def _pct(x) -> str:
    return f"{100 * float(x):.1f}%"


def eval_writer_groups(path=None) -> dict[str, int]:
    """How many writers each group of the list of writers no model trains on holds
    (:data:`~inkground_lib.components.derenderers.tracer.eval_writers.EVAL_WRITERS_FILE`: "shipped", the
    writers of the book's recorded pages; "held-out", kept for checking models on writers they never saw)."""
    from inkground_lib.components.derenderers.tracer.eval_writers import read_eval_writers

    return {g: len(read_eval_writers(path, group=g)) for g in ("shipped", "held-out")}


def left_out_text(writers, words, groups: dict[str, int] | None) -> str:
    """The training data's left-out writers in words: how many the record says were left out, split by the list's
    groups (``groups``: :func:`eval_writer_groups`) only where the groups add up to the record's count, so the
    sentence never calls every left-out writer one this book evaluates on.

    >>> left_out_text(82, 1234, {"shipped": 36, "held-out": 46})  # doctest: +NORMALIZE_WHITESPACE
    'the 82 writers of the list no model trains on were left out (1,234 words): the 36 writers of the recorded
    pages this book evaluates on and 46 writers held out for checking models on writers they never saw, so the
    tracer never saw any of them.'
    >>> left_out_text(80, 10, {"shipped": 36, "held-out": 46})[:75]
    'the 80 writers of the list no model trains on were left out (10 words); the'
    """
    n = f"{writers}" if writers is not None else "?"
    w = f"{words:,}" if isinstance(words, int) else "?"
    head = f"the {n} writers of the list no model trains on were left out ({w} words)"
    g = groups or {}
    if writers is not None and g and sum(g.values()) == writers:
        return (f"{head}: the {g.get('shipped', 0)} writers of the recorded pages this book evaluates on and "
                f"{g.get('held-out', 0)} writers held out for checking models on writers they never saw, so the "
                f"tracer never saw any of them.")
    split = (f"; the list holds {g.get('shipped', 0)} writers of the recorded pages this book evaluates on and "
             f"{g.get('held-out', 0)} held-out writers" if g else "")
    return f"{head}{split}, and the tracer was trained on none of them."


def record_text(record: dict, sha256: str = "", groups: dict[str, int] | None = None) -> str:
    """The model card's numbers, from the weights' record (``read_npz``): the data it was trained on (release,
    words and writers, the evaluation writers it never saw, split by ``groups``: :func:`eval_writer_groups`),
    the network and the recipe, and the final validation figures beside the skeleton's. Sections missing from
    the record are said to be missing."""
    t = record.get("trained_on") or {}
    r = record.get("recipe") or {}
    net = record.get("net") or r.get("net") or {}
    f = record.get("final") or {}
    L = ["## Training data", ""]
    if t:
        L.append(f"{t.get('release', 'the recorded release')}: {t.get('train_words_used', '?'):,} training words of "
                 f"{t.get('train_writers_used', '?')} writers ({t.get('train_samples', '?'):,} gave a sample) and "
                 f"{t.get('val_words', '?'):,} words of {t.get('val_writers', '?')} validation writers; "
                 f"{left_out_text(t.get('eval_writers_excluded'), t.get('eval_words_excluded'), groups)} Source "
                 f"sha256 `{str(t.get('source_sha256', '?'))[:16]}…`.")
    else:
        L.append("The weights' record does not say what they were trained on.")
    L += ["", "## Network and recipe", ""]
    if net or r:
        L.append(f"{record.get('parameters', '?'):,} parameters (d_model {net.get('d_model', '?')}, "
                 f"{net.get('layers', '?')} layers, {net.get('heads', '?')} heads); {r.get('epochs', '?')} epochs, "
                 f"AdamW at {r.get('lr', '?')} with {r.get('warmup_steps', '?')} warm-up steps, batch "
                 f"{r.get('batch_size', '?')}, weight decay {r.get('weight_decay', '?')}, "
                 f"{r.get('threads', '?')} torch thread(s), seed {r.get('seed', '?')}."
                 + (f" Weights sha256 `{sha256[:16]}…`, checked at load." if sha256 else ""))
    else:
        L.append("The weights' record does not give the network or the recipe.")
    L += ["", "## Final validation figures", ""]
    if f:
        L += ["Medians over the validation writers' words (DTW in word heights; shares of words whose stroke order "
              "or direction differs from the writer's), after the last epoch:", "",
              "| derenderer | DTW | order differs | direction differs |", "| --- | --- | --- | --- |",
              f"| tracer | {f.get('val_dtw_median', float('nan')):.3f} | {_pct(f.get('val_order_differs', 'nan'))} | "
              f"{_pct(f.get('val_direction_differs', 'nan'))} |",
              f"| skeleton | {f.get('skeleton_val_dtw_median', float('nan')):.3f} | "
              f"{_pct(f.get('skeleton_val_order_differs', 'nan'))} | "
              f"{_pct(f.get('skeleton_val_direction_differs', 'nan'))} |"]
    else:
        L.append("The weights' record holds no validation figures.")
    return "\n".join(L)


def write_tracer_page(sections_dir: str | os.PathLike, curves_path: str | os.PathLike = SHIPPED_CURVES,
                      weights_path: str | os.PathLike | None = None) -> Path:
    """Write ``sections_dir/tracer.md`` (:data:`WHAT_IT_IS`, then :func:`record_text` of the weights' record, then
    the curves figure ``sections_dir/tracer_curves.png``); returns the page's path."""
    out = Path(sections_dir)
    weights = Path(weights_path) if weights_path else SHIPPED_WEIGHTS
    record, _ = read_npz(weights)  # raises, naming the file, when the weights are missing or unreadable
    curves = read_curves(curves_path)
    out.mkdir(parents=True, exist_ok=True)
    fig = fig_curves(curves)
    fig.savefig(out / "tracer_curves.png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    last = curves.iloc[-1]
    try:
        groups = eval_writer_groups()
    except (OSError, ValueError):  # the list ships with the repository; without it the sentence gives no split
        groups = None
    text = f"""<!-- generated by inkground_lib.report.tracer_page (make book); do not edit -->

({PAGE_LABEL})=
# The tracer: inkground's learned derenderer

{WHAT_IT_IS}

{record_text(record, str(record.get("sha256", "")), groups)}

## Training curves

```{{figure}} tracer_curves.png
:alt: the tracer's losses, median DTW and order and direction shares over the training epochs
:width: 100%

The shipped weights' training run (`{Path(curves_path).name}`), one point per epoch, measured on the
validation writers (writers neither trained on nor among the book's evaluation writers): after epoch
{int(last['epoch'])} the tracer's median DTW to the writers' true pen paths is {last['val_dtw_median']:.3f} word
heights (skeleton {last['skeleton_val_dtw_median']:.3f}), and {last['val_order_differs']:.3f} of the words
differ from the writer's stroke order (skeleton {last['skeleton_val_order_differs']:.3f}),
{last['val_direction_differs']:.3f} in some stroke's direction (skeleton
{last['skeleton_val_direction_differs']:.3f}). The skeleton does not learn: its values are one measurement,
drawn as a line.
```
"""
    page = out / "tracer.md"
    page.write_text(text, encoding="utf-8")
    return page
