"""Pseudo-labels against the true trajectories, where the candidates have them."""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from inkground_lib.components.metrics.order import stroke_order_check
from inkground_lib.components.metrics.trajectory import geometry_batch
from inkground_lib.core.dataset import Dataset
from inkground_lib.core.defaults import SPACING
from inkground_lib.core.ink import Ink


def truth_metrics(ds: Dataset, pseudo: Mapping[str, Ink], spacing: float = SPACING) -> pd.DataFrame:
    """Per word with a true ink: page, word_id, dtw, chamfer (pseudo-label vs true ink, units of the true
    word height; an empty pseudo-label is scored as the design's invalid output, a dot at the page centre),
    order_differs, direction_differs (:func:`stroke_order_check`; NaN where undefined)."""
    cols = ["page", "word_id", "dtw", "chamfer", "order_differs", "direction_differs"]
    items = [(p, w) for p in ds.pages for w in p.words if w.true_ink is not None and w.true_ink.n_points]
    if not items:
        return pd.DataFrame(columns=cols)
    geo = geometry_batch([(pseudo[w.id], w.true_ink, (p.width, p.height)) for p, w in items], spacing=spacing,
                         progress=False)
    rows = []
    for (p, w), (d, c) in zip(items, geo):
        o, r = stroke_order_check(pseudo[w.id], w.true_ink, spacing=spacing)
        rows.append({"page": p.id, "word_id": w.id, "dtw": float(d), "chamfer": float(c),
                     "order_differs": np.nan if o is None else float(o),
                     "direction_differs": np.nan if r is None else float(r)})
    return pd.DataFrame(rows, columns=cols)
