"""The book's page on inkground's tracer (the learned derenderer of
:mod:`inkground_lib.components.derenderers.tracer`): its model card (``data/models/MODEL.md``, copied in as it
is, so the page names no path of the machine that built it) and its training curves as a figure, drawn from the curves file shipped with the weights
(``data/models/tracer-curves.csv``, the ``curves.csv`` the training run wrote: one row per epoch).
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from inkground_lib.components.derenderers.tracer.weights import SHIPPED_CURVES, SHIPPED_WEIGHTS
from inkground_lib.report.palette import PEN_UP, PREDICTION, REFERENCE

CURVE_COLUMNS = ("epoch", "train_loss", "val_loss", "val_dtw_median", "val_order_differs", "val_direction_differs",
                 "skeleton_val_dtw_median", "skeleton_val_order_differs", "skeleton_val_direction_differs")
"""The columns of a training run's ``curves.csv`` the figure uses."""

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
    the writer's - the tracer's as solid lines, the skeleton's (which does not learn) dashed."""
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.1))
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
    for ax in axes:
        ax.legend(fontsize=7, frameon=False)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def write_tracer_page(sections_dir: str | os.PathLike, curves_path: str | os.PathLike = SHIPPED_CURVES,
                      card_path: str | os.PathLike | None = None) -> Path:
    """Write ``sections_dir/tracer.md`` (the model card's text, then the curves figure
    ``sections_dir/tracer_curves.png``); returns the page's path."""
    out = Path(sections_dir)
    out.mkdir(parents=True, exist_ok=True)
    card = Path(card_path) if card_path else SHIPPED_WEIGHTS.with_name("MODEL.md")
    if not card.is_file():
        raise FileNotFoundError(f"{card}: the tracer's model card is missing")
    curves = read_curves(curves_path)
    fig = fig_curves(curves)
    fig.savefig(out / "tracer_curves.png", dpi=130, metadata={"Software": None})
    plt.close(fig)
    last = curves.iloc[-1]
    text = f"""({PAGE_LABEL})=
{card.read_text(encoding="utf-8").strip()}

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
