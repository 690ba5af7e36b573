"""Cutting a recorded text line into words, and the core band of handwriting."""

from __future__ import annotations

from typing import Optional

import numpy as np

from inkground_lib.core.ink import Ink, InkError, as_ink


def core_band(ink: Ink, spacing: Optional[float] = None) -> tuple[float, float]:
    """(top, bottom) of the writing's core band: the 20th and 80th percentiles of y over the ink resampled
    at uniform arc length (so slow and fast pen movement weigh the same). ``bottom`` approximates the
    baseline and ``bottom - top`` is the *core height* used to scale and segment handwriting (a robust
    stand-in for the x-height, in the ink's own units)."""
    from inkground_lib.core.ink import resample

    ink = as_ink(ink)
    if ink.n_points == 0:
        raise InkError("an empty ink has no core band")
    x0, y0, x1, y1 = ink.bbox()
    ext = max(x1 - x0, y1 - y0)
    if ext <= 0:
        return (y0, y1)
    pts = resample(ink, spacing or ext / 400.0).points()
    lo, hi = np.percentile(pts[:, 1], [20, 80])
    return float(lo), float(hi)


def core_height(ink: Ink) -> float:
    """Core height (see :func:`core_band`), never below 1e-9."""
    lo, hi = core_band(ink)
    return max(hi - lo, 1e-9)


def segment_line_words(ink: Ink, n_words: int, *, gap_factor: float = 0.6) -> Optional[list[Ink]]:
    """Split a recorded text line into ``n_words`` words at pen-up gaps, or return None.

    Strokes are clustered by their horizontal extents: strokes whose x-ranges overlap or lie closer than
    ``gap_factor`` * core height (:func:`core_band`) belong to one word; so delayed strokes (i-dots,
    t-crosses written after the word) join the word they lie over. The clusters, left to right, are the
    words; each keeps its strokes in writing order. The segmentation is accepted only when it yields exactly
    ``n_words`` clusters (the transcription's word count); otherwise None (the line is skipped, never forced).
    """
    ink = as_ink(ink)
    if n_words < 1 or len(ink) == 0:
        return None
    gap = gap_factor * core_height(ink)
    ext = np.array([(s[:, 0].min(), s[:, 0].max()) for s in ink.strokes])
    order = np.argsort(ext[:, 0], kind="stable")
    clusters: list[list[int]] = []
    right = -np.inf
    for i in order:
        if clusters and ext[i, 0] - right <= gap:
            clusters[-1].append(int(i))
            right = max(right, ext[i, 1])
        else:
            clusters.append([int(i)])
            right = ext[i, 1]
    if len(clusters) != n_words:
        return None
    return [Ink(tuple(ink.strokes[i] for i in sorted(c))) for c in clusters]
