"""What the tracer's model sees: a word's skeleton strokes as fixed-size vectors, and its text as ids.

Strokes are normalised by the skeleton ink itself (its top-left corner and its height h_s in pixels, at
least 1 px), so the features do not depend on where the word sits or on the photo's resolution.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

POINTS = 16
"""Points a stroke is resampled to (uniform in arc length, as drawn)."""
MAX_STROKES = 64
"""Strokes the model orders; a word with more keeps the skeleton's order for the rest (rare)."""
MAX_CHARS = 32
"""Characters of the text the model sees (longer texts are cut)."""
N_FEATURES = 2 * POINTS + 6
VOCAB = 97
"""Text ids: 0 = padding, 1..95 = the printable ASCII characters 32..126, 96 = any other character."""


def resample_fixed(p: np.ndarray, k: int = POINTS) -> np.ndarray:
    """``k`` points spaced uniformly along the polyline ``p`` ((n, 2), n >= 1), first and last kept.

    >>> resample_fixed(np.array([[0.0, 0.0], [4.0, 0.0]]), 3).tolist()
    [[0.0, 0.0], [2.0, 0.0], [4.0, 0.0]]
    """
    p = np.asarray(p, np.float64)[:, :2]
    if len(p) == 1:
        return np.repeat(p, k, axis=0)
    cum = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(p, axis=0).T))])
    if cum[-1] <= 0:
        return np.repeat(p[:1], k, axis=0)
    d = np.linspace(0.0, cum[-1], k)
    return np.column_stack([np.interp(d, cum, p[:, 0]), np.interp(d, cum, p[:, 1])])


def stroke_features(strokes: Sequence[np.ndarray]) -> np.ndarray:
    """(n, N_FEATURES) float32 features of a word's strokes (pixels, y down, in the skeleton's order).

    Per stroke: its :data:`POINTS` resampled points as (x - x_min) / h_s, (y - y_min) / h_s; log(1 + arc
    length / h_s); its index in the skeleton's order / max(n - 1, 1); n / 10; the word's width / h_s; the
    stroke's bounding-box width and height / h_s. (x_min, y_min) and h_s = max(height, 1 px) are those of
    all the word's points.
    """
    if not strokes:
        return np.zeros((0, N_FEATURES), np.float32)
    allp = np.concatenate([np.asarray(s)[:, :2] for s in strokes])
    x0, y0 = allp.min(axis=0)
    h = max(float(np.ptp(allp[:, 1])), 1.0)
    width = float(np.ptp(allp[:, 0])) / h
    n = len(strokes)
    out = np.zeros((n, N_FEATURES), np.float32)
    for i, s in enumerate(strokes):
        s = np.asarray(s, np.float64)[:, :2]
        q = (resample_fixed(s) - [x0, y0]) / h
        length = float(np.hypot(*np.diff(s, axis=0).T).sum()) / h if len(s) > 1 else 0.0
        out[i, :2 * POINTS] = q.reshape(-1)
        out[i, 2 * POINTS:] = (np.log1p(length), i / max(n - 1, 1), n / 10.0, width,
                               float(np.ptp(s[:, 0])) / h, float(np.ptp(s[:, 1])) / h)
    return out


def text_ids(text: Optional[str]) -> np.ndarray:
    """int64 ids of the first :data:`MAX_CHARS` characters of ``text`` (see :data:`VOCAB`; None: none).

    >>> text_ids("Hi!").tolist()
    [41, 74, 2]
    """
    if not text:
        return np.zeros(0, np.int64)
    return np.array([ord(c) - 31 if 32 <= ord(c) <= 126 else VOCAB - 1 for c in text[:MAX_CHARS]], np.int64)


def batch_inputs(feats: Sequence[np.ndarray], texts: Sequence[np.ndarray], multiple: int = 1):
    """Pad a batch: (strokes (B, S, F) float32, stroke_mask (B, S) bool, chars (B, C) int64, char_mask
    (B, C) bool), S and C the longest in the batch rounded up to a ``multiple`` (at least 1; masks True
    where real; few distinct shapes keep the CPU kernels' caches warm). Strokes past :data:`MAX_STROKES`
    are dropped."""
    B = len(feats)
    up = lambda n: -(-n // multiple) * multiple  # noqa: E731
    S = up(max([min(len(f), MAX_STROKES) for f in feats] + [1]))
    C = up(max([len(t) for t in texts] + [1]))
    x = np.zeros((B, S, N_FEATURES), np.float32)
    sm = np.zeros((B, S), bool)
    c = np.zeros((B, C), np.int64)
    cm = np.zeros((B, C), bool)
    for b, (f, t) in enumerate(zip(feats, texts)):
        k = min(len(f), MAX_STROKES)
        x[b, :k] = f[:k]
        sm[b, :k] = True
        c[b, :len(t)] = t
        cm[b, :len(t)] = True
    return x, sm, c, cm
