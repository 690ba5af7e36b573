"""Pseudo-labels against the true trajectories, where the candidates have them."""

from __future__ import annotations

from typing import Mapping, Optional

import numpy as np
import pandas as pd

from inkground_lib.components.metrics.trajectory import subsequence_dtw
from inkground_lib.core.dataset import Dataset
from inkground_lib.core.ink import Ink


def stroke_order_check(pseudo: Ink, true: Ink, spacing: float = 0.05, min_length: float = 0.2,
                       order_tol: float = 0.02, direction_tol: float = 0.02) -> tuple[Optional[bool], Optional[bool]]:
    """(order differs, direction differs) of a pseudo-label against the true ink; None where undefined.

    Definition (inks in page pixels; lengths in units of the true word height h, :func:`~inkground_lib.
    metrics.word_height`):

    1. Both inks are scaled by 1 / h and resampled along each stroke every ``spacing``. The true points,
       in writing order (strokes concatenated), get a *progress* pi = index / (N - 1) in [0, 1].
    2. Each pseudo stroke is matched to the true stroke whose points are nearest on average (mean over the
       pseudo stroke's points of the distance to that true stroke's nearest point), and aligned to it by
       :func:`subsequence_dtw`, both as drawn and reversed; the alignment with the lower cost gives each of
       its points an aligned true point.
    3. **Direction differs** when some pseudo stroke at least ``min_length`` long (and of at least 3
       points) aligns better reversed: (forward cost - reversed cost) / its number of points >
       ``direction_tol``. A retraced path (same line down and up) aligns equally well both ways and does
       not count. Undefined (None) when no stroke is that long.
    4. **Order differs** when the median progress of some pseudo stroke's aligned points is below that of
       the previous pseudo stroke by more than ``order_tol`` (the pseudo strokes do not visit the word in
       the writer's order; e.g. an i-dot placed right after its letter where the writer dotted at the
       end of the word).

    Both are None for an empty pseudo-label or an empty true ink.
    """
    from scipy.spatial import cKDTree

    from inkground_lib.components.metrics.trajectory import word_height
    from inkground_lib.core.ink import resample

    if pseudo.n_points == 0 or true.n_points == 0:
        return None, None
    h = word_height(true)
    T = [s[:, :2] for s in resample(true.transformed(1.0 / h), spacing).strokes]
    P = [s[:, :2] for s in resample(pseudo.transformed(1.0 / h), spacing).strokes]
    n_true = sum(len(s) for s in T)
    starts = np.cumsum([0] + [len(s) for s in T])
    prog = np.arange(n_true) / max(n_true - 1, 1)
    trees = [cKDTree(s) for s in T]
    medians, backwards = [], []
    for s in P:
        j = int(np.argmin([t.query(s)[0].mean() for t in trees]))
        fwd, ia = subsequence_dtw(s, T[j])
        rev, ib = subsequence_dtw(s[::-1], T[j])
        aligned = ia if fwd <= rev else ib
        medians.append(float(np.median(prog[starts[j] + aligned])))
        length = float(np.hypot(*np.diff(s, axis=0).T).sum()) if len(s) > 1 else 0.0
        if length >= min_length and len(s) >= 3:
            backwards.append(bool((fwd - rev) / len(s) > direction_tol))
    order = bool(np.any(np.diff(medians) < -order_tol)) if len(medians) > 1 else False
    direction = bool(any(backwards)) if backwards else None
    return order, direction


def truth_metrics(ds: Dataset, pseudo: Mapping[str, Ink], spacing: float = 0.05) -> pd.DataFrame:
    """Per word with a true ink: page, word_id, dtw, chamfer (pseudo-label vs true ink, units of the true
    word height; an empty pseudo-label is scored as the design's invalid output, a dot at the page centre),
    order_differs, direction_differs (:func:`stroke_order_check`; NaN where undefined)."""
    from inkground_lib.components.metrics.trajectory import geometry_batch

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
