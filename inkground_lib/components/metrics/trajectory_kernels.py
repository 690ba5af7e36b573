"""The numba kernels under every DTW and Chamfer of :mod:`inkground_lib.components.metrics.trajectory`: the
word-height frame, arc-length resampling, the DTW recurrence and Chamfer sums in one pass (:func:`_dtw_chamfer`,
reported by :func:`_scores`) and the parallel batch. One kernel for a pair scored alone and in a batch, so both get
the same bits; the names start with ``_`` as the package's private kernels."""

from __future__ import annotations

import math

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def _frame(xy, s0, s1):
    """Origin (x0, y0) and height h of the points xy[s0:s1] (at least one point), flat-reference rule."""
    x0 = xy[s0, 0]
    y0 = xy[s0, 1]
    x1 = x0
    y1 = y0
    for k in range(s0 + 1, s1):
        x = xy[k, 0]
        y = xy[k, 1]
        if x < x0:
            x0 = x
        if x > x1:
            x1 = x
        if y < y0:
            y0 = y
        if y > y1:
            y1 = y
    h = y1 - y0
    if h <= 0.0:
        h = x1 - x0
        if h <= 0.0:
            h = 1.0
    return x0, y0, h


@nb.njit(cache=True, nogil=True)
def _stroke_count(xy, a, b, x0, y0, h, spacing):
    """Number of points stroke xy[a:b] has after normalisation and resampling (spacing <= 0: none)."""
    n = b - a
    if n < 2 or spacing <= 0.0:
        return n
    total = 0.0
    for k in range(a + 1, b):
        dx = (xy[k, 0] - xy[k - 1, 0]) / h
        dy = (xy[k, 1] - xy[k - 1, 1]) / h
        total += math.sqrt(dx * dx + dy * dy)
    if total == 0.0:
        return 1
    return max(int(math.ceil(total / spacing)), 1) + 1


@nb.njit(cache=True, nogil=True)
def _stroke_fill(xy, a, b, x0, y0, h, spacing, out, o, cum):
    """Write the normalised, resampled stroke xy[a:b] into out[o:]; return the next free row.

    Same rule as ``ink.resample`` (np.linspace targets, np.interp's linear interpolation).
    """
    n = b - a
    if n < 2 or spacing <= 0.0:
        for k in range(n):
            out[o + k, 0] = (xy[a + k, 0] - x0) / h
            out[o + k, 1] = (xy[a + k, 1] - y0) / h
        return o + n
    cum[0] = 0.0
    for k in range(1, n):
        dx = (xy[a + k, 0] - xy[a + k - 1, 0]) / h
        dy = (xy[a + k, 1] - xy[a + k - 1, 1]) / h
        cum[k] = cum[k - 1] + math.sqrt(dx * dx + dy * dy)
    total = cum[n - 1]
    if total == 0.0:
        out[o, 0] = (xy[a, 0] - x0) / h
        out[o, 1] = (xy[a, 1] - y0) / h
        return o + 1
    steps = max(int(math.ceil(total / spacing)), 1)
    step = total / steps
    seg = 0
    for q in range(steps + 1):
        d = q * step if q < steps else total
        while seg < n - 2 and cum[seg + 1] <= d:
            seg += 1
        if d >= total:
            px = xy[a + n - 1, 0]
            py = xy[a + n - 1, 1]
        else:
            w = cum[seg + 1] - cum[seg]
            xa = xy[a + seg, 0]
            ya = xy[a + seg, 1]
            px = (xy[a + seg + 1, 0] - xa) / w * (d - cum[seg]) + xa
            py = (xy[a + seg + 1, 1] - ya) / w * (d - cum[seg]) + ya
        out[o + q, 0] = (px - x0) / h
        out[o + q, 1] = (py - y0) / h
    return o + steps + 1


@nb.njit(cache=True, nogil=True)
def _ink_points(xy, starts, k0, k1, x0, y0, h, spacing):
    """Normalised, resampled points of the strokes k0..k1-1 (stroke k = xy[starts[k]:starts[k+1]])."""
    total = 0
    longest = 1
    for k in range(k0, k1):
        total += _stroke_count(xy, starts[k], starts[k + 1], x0, y0, h, spacing)
        longest = max(longest, starts[k + 1] - starts[k])
    out = np.empty((total, 2))
    cum = np.empty(longest)
    o = 0
    for k in range(k0, k1):
        o = _stroke_fill(xy, starts[k], starts[k + 1], x0, y0, h, spacing, out, o, cum)
    return out


@nb.njit(cache=True, nogil=True)
def _pair_points(xy, starts, inks, p, spacing):
    """Normalised points of pair p: prediction = ink 2p, reference = ink 2p + 1 (strokes inks[i]:inks[i+1])."""
    r0 = inks[2 * p + 1]
    r1 = inks[2 * p + 2]
    x0, y0, h = _frame(xy, starts[r0], starts[r1])
    P = _ink_points(xy, starts, inks[2 * p], r0, x0, y0, h, spacing)
    R = _ink_points(xy, starts, r0, r1, x0, y0, h, spacing)
    return P, R


@nb.njit(cache=True, nogil=True, inline="always")
def _local_cost(ax, ay, bx, by):
    """The local cost of both DTWs: the Euclidean distance between two points."""
    dx = ax - bx
    dy = ay - by
    return math.sqrt(dx * dx + dy * dy)


@nb.njit(cache=True, nogil=True)
def _dtw_chamfer(P, R):
    """(DTW accumulated cost, sum of P->R nearest distances, sum of R->P nearest distances).

    Rows = P (n points), columns = R (m points); two rows of the cost matrix are kept. The nearest-point
    distances come for free from the same Euclidean distances (a running row minimum and a column-minimum
    array), so Chamfer costs no extra pass.
    """
    n = P.shape[0]
    m = R.shape[0]
    inf = np.inf
    prev = np.empty(m + 1)
    cur = np.empty(m + 1)
    colmin = np.full(m, inf)
    prev[0] = 0.0
    for j in range(1, m + 1):
        prev[j] = inf
    rsum = 0.0
    for i in range(n):
        cur[0] = inf
        xi = P[i, 0]
        yi = P[i, 1]
        left = inf
        rmin = inf
        for j in range(m):
            c = _local_cost(xi, yi, R[j, 0], R[j, 1])
            if c < rmin:
                rmin = c
            cm = colmin[j]
            colmin[j] = c if c < cm else cm
            d = prev[j]
            u = prev[j + 1]
            b = d if d < u else u
            b = b if b < left else left
            left = b + c
            cur[j + 1] = left
        rsum += rmin
        prev, cur = cur, prev
    csum = 0.0
    for j in range(m):
        csum += colmin[j]
    return prev[m], rsum, csum


@nb.njit(cache=True, nogil=True)
def _scores(P, R):
    """(DTW, Chamfer) of two point sequences: the formulas of :func:`dtw_points` and :func:`chamfer_points`
    over :func:`_dtw_chamfer`'s sums, the one place they are computed."""
    d, rs, cs = _dtw_chamfer(P, R)
    return d / R.shape[0], 0.5 * (rs / P.shape[0] + cs / R.shape[0])


@nb.njit(cache=True, nogil=True, parallel=True)
def _batch_kernel(xy, starts, inks, spacing, out):
    """DTW and Chamfer of every pair (see _pair_points for the layout), pairs in parallel."""
    k = out.shape[0]
    for p in nb.prange(k):
        P, R = _pair_points(xy, starts, inks, p, spacing)
        out[p, 0], out[p, 1] = _scores(P, R)
