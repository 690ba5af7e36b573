"""Stroke order and direction of an ink against the writer's true ink: where in the writer's trajectory each
stroke lies, and which way it runs.

Inks are in page pixels (y down); lengths are in units of the true word height h
(:func:`~inkground_lib.components.metrics.trajectory.word_height`). :func:`stroke_alignment` gives, per stroke,
its progress along the writer's path and whether it runs against the writer; :func:`stroke_order_check` turns
that into the two per-word verdicts section 02 reports ("order differs", "direction differs"), and the learned
tracer trains on the same per-stroke values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
from scipy.spatial import cKDTree

from inkground_lib.components.metrics.subsequence_dtw import subsequence_dtw
from inkground_lib.components.metrics.trajectory import word_height
from inkground_lib.core.defaults import DIRECTION_MIN_LENGTH, DIRECTION_TOL, ORDER_TOL, SPACING
from inkground_lib.core.ink import Ink, resample

__all__ = ["StrokeAlignment", "order_and_direction", "stroke_alignment", "stroke_order_check"]


@dataclass(frozen=True)
class StrokeAlignment:
    """Per stroke of the ink that was aligned (arrays of one value per stroke, in drawing order).

    progress: the median progress, in [0, 1], of the writer's points the stroke aligns to; gain: (cost as drawn -
    cost reversed) / its number of points (> 0: it runs against the writer); length: its arc length in word
    heights; points: its number of points after resampling."""

    progress: np.ndarray
    gain: np.ndarray
    length: np.ndarray
    points: np.ndarray


def stroke_alignment(ink: Ink, true: Ink, spacing: float = SPACING) -> StrokeAlignment:
    r"""Where each stroke of ``ink`` lies in the writer's trajectory ``true``, and which way it runs.

    1. Both inks are scaled by :math:`1/h` (:math:`h` the true word height) and resampled along each stroke every
       ``spacing`` word heights. The true points, in writing order (strokes concatenated), get a *progress*
       :math:`\pi_k = k / (N - 1)` in [0, 1].
    2. Each stroke :math:`s` of ``ink`` is matched to the true stroke whose points are nearest on average (mean
       over the points of :math:`s` of the distance to that true stroke's nearest point), and aligned to it by
       :func:`~inkground_lib.components.metrics.subsequence_dtw.subsequence_dtw` as drawn (cost :math:`f`) and
       reversed (cost :math:`r`); the alignment with the lower cost gives each of its points an aligned true
       point.

    .. math::

        \mathrm{progress}(s) = \operatorname{median}_{p \in s} \pi_{a(p)}, \qquad
        \mathrm{gain}(s) = \frac{f - r}{|s|}

    Empty inks give empty arrays.

    Examples
    --------
    A word written as a down-stroke then a dot; traced as the dot first, then the stroke drawn upwards:

    >>> from inkground_lib.core.ink import as_ink
    >>> true = as_ink([[[0, 0], [0, 10]], [[5, -4]]])
    >>> a = stroke_alignment(as_ink([[[5, -4]], [[0, 10], [0, 0]]]), true)
    >>> a.progress.round(2).tolist(), bool(a.gain[1] > 0), a.length.round(2).tolist()
    ([1.0, 0.47], True, [0.0, 0.71])
    """
    empty = np.zeros(0)
    if ink.n_points == 0 or true.n_points == 0:
        return StrokeAlignment(empty, empty, empty, np.zeros(0, dtype=int))
    h = word_height(true)
    T = [s[:, :2] for s in resample(true.transformed(1.0 / h), spacing).strokes]
    P = [s[:, :2] for s in resample(ink.transformed(1.0 / h), spacing).strokes]
    n_true = sum(len(s) for s in T)
    starts = np.cumsum([0] + [len(s) for s in T])
    prog = np.arange(n_true) / max(n_true - 1, 1)
    trees = [cKDTree(s) for s in T]
    progress, gain, length = np.zeros(len(P)), np.zeros(len(P)), np.zeros(len(P))
    for i, s in enumerate(P):
        j = int(np.argmin([t.query(s)[0].mean() for t in trees]))
        fwd, ia = subsequence_dtw(s, T[j])
        rev, ib = subsequence_dtw(s[::-1], T[j])
        progress[i] = float(np.median(prog[starts[j] + (ia if fwd <= rev else ib)]))
        gain[i] = (fwd - rev) / len(s)
        length[i] = float(np.hypot(*np.diff(s, axis=0).T).sum()) if len(s) > 1 else 0.0
    return StrokeAlignment(progress, gain, length, np.array([len(s) for s in P], dtype=int))


def stroke_order_check(ink: Ink, true: Ink, spacing: float = SPACING, min_length: float = DIRECTION_MIN_LENGTH,
                       order_tol: float = ORDER_TOL,
                       direction_tol: float = DIRECTION_TOL) -> tuple[Optional[bool], Optional[bool]]:
    r"""(order differs, direction differs) of ``ink`` (a pseudo-label, a tracer's output) against the true ink;
    None where undefined.

    With the per-stroke progress and gain of :func:`stroke_alignment`:

    .. math::

        \text{order differs} = \exists\, i > 0:\ \mathrm{progress}_i < \mathrm{progress}_{i-1} - \tau_o, \qquad
        \text{direction differs} = \exists\, i:\ \ell_i \ge \ell_{\min},\ |s_i| \ge 3,\ \mathrm{gain}_i > \tau_d

    * **Direction differs** when some stroke at least ``min_length`` long (and of at least 3 points) aligns
      better reversed by more than ``direction_tol`` per point. A retraced path (same line down and up) aligns
      equally well both ways and does not count. Undefined (None) when no stroke is that long.
    * **Order differs** when some stroke's progress is below the previous stroke's by more than ``order_tol``
      (the strokes do not visit the word in the writer's order; e.g. an i-dot placed right after its letter
      where the writer dotted at the end of the word). A single stroke never differs in order.

    Both are None for an empty ink or an empty true ink.

    Examples
    --------
    >>> from inkground_lib.core.ink import Ink, as_ink
    >>> V, DOT = [[0, 0], [0, 10]], [[5, -4]]
    >>> true = as_ink([V, DOT])
    >>> stroke_order_check(true, true), stroke_order_check(as_ink([DOT, V]), true)
    ((False, False), (True, False))
    >>> stroke_order_check(as_ink([V[::-1], DOT]), true), stroke_order_check(Ink(), true)
    ((False, True), (None, None))
    """
    if ink.n_points == 0 or true.n_points == 0:
        return None, None
    a = stroke_alignment(ink, true, spacing)
    return order_and_direction(a.progress, a.gain, (a.length >= min_length) & (a.points >= 3), order_tol,
                               direction_tol)


def order_and_direction(progress, gain, counts, order_tol: float = ORDER_TOL,
                        direction_tol: float = DIRECTION_TOL) -> tuple[bool, Optional[bool]]:
    """The verdicts of :func:`stroke_order_check` from per-stroke values in drawing order: ``progress`` and
    ``gain`` (:class:`StrokeAlignment`) and ``counts`` (bool: the stroke is long enough to count for direction).
    Reversing a stroke negates its gain and keeps its progress (the same points align), so the verdicts of a
    re-ordered, re-directed ink follow from its strokes' values without aligning again.

    >>> order_and_direction([0.1, 0.6, 0.5], [0.0, 0.3, -0.1], [True, False, True])
    (True, False)
    """
    p, g, c = np.asarray(progress, float), np.asarray(gain, float), np.asarray(counts, bool)
    order = bool(np.any(np.diff(p) < -order_tol)) if len(p) > 1 else False
    direction = bool(np.any(g[c] > direction_tol)) if c.any() else None
    return order, direction
