"""Trajectory fidelity: DTW and Chamfer distance between a predicted and a reference ink, in word heights.

Inks are strokes of x, y, t in page pixels (origin top-left, y down; t is not used here). Both inks are
put in units of the reference word height (:func:`word_height`, :func:`normalise`), resampled along arc
length, and scored by :func:`dtw` and :func:`chamfer` (one pair) or :func:`geometry_batch` (many pairs).
:func:`dtw_points` and :func:`chamfer_points` score already-normalised points; :func:`subsequence_dtw`
aligns a query sequence inside a reference. Every DTW and Chamfer here comes from one numba kernel
(:func:`_dtw_chamfer`, through :func:`_scores`), so a pair scored alone and in a batch gets the same bits. The
numba kernels (names starting with ``_``) are private.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable, Sequence

import numba as nb
import numpy as np

from inkground_lib.core.defaults import SPACING as DEFAULT_SPACING
from inkground_lib.core.ink import Ink, InkLike, as_ink

__all__ = [
    "chamfer",
    "chamfer_points",
    "dtw",
    "dtw_points",
    "geometry_batch",
    "invalid_prediction",
    "normalise",
    "subsequence_dtw",
    "word_height",
]

PageSize = tuple[float, float]


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


def invalid_prediction(page_size: PageSize) -> Ink:
    """The design's stand-in for a missing or invalid prediction: one dot at the page centre.

    :func:`dtw`, :func:`chamfer`, :func:`normalise` and :func:`geometry_batch` score an empty prediction
    (``None`` or an ink with no points) as this ink when they are given ``page_size``.

    Parameters
    ----------
    page_size : (float, float)
        ``(width, height)`` of the page in page pixels; both finite and positive.

    Returns
    -------
    Ink
        One stroke of one point ``(width / 2, height / 2)`` in page pixels, with t = NaN.

    Raises
    ------
    ValueError
        If ``page_size`` is not two finite positive numbers.

    Examples
    --------
    >>> from inkground_lib.components.metrics.trajectory import invalid_prediction
    >>> ink = invalid_prediction((200, 100))
    >>> len(ink), ink[0].tolist()
    (1, [[100.0, 50.0, nan]])
    """
    try:
        w, hgt = (float(v) for v in page_size)
    except (TypeError, ValueError):
        raise ValueError(f"page_size must be (width, height) in page pixels, got {page_size!r}") from None
    if not (np.isfinite(w) and np.isfinite(hgt) and w > 0 and hgt > 0):
        raise ValueError(f"page_size must be two positive numbers (width, height), got {page_size!r}")
    return Ink((np.array([[w / 2.0, hgt / 2.0, np.nan]]),))


def _checked(pred, ref, page_size, where: str) -> tuple[Ink, Ink]:
    """Validated (prediction, reference) inks, applying the invalid-prediction rule."""
    r = as_ink(ref, f"{where} reference")
    if r.n_points == 0:
        raise ValueError(f"{where}: the reference ink is empty (no points); it cannot be scored")
    p = Ink() if pred is None else as_ink(pred, f"{where} prediction")
    if p.n_points == 0:
        if page_size is None:
            raise ValueError(
                f"{where}: the prediction is empty; pass page_size=(width, height) to score it as the "
                "design's invalid output (a single dot at the page centre)")
        p = invalid_prediction(page_size)
    return p, r


def _check_spacing(spacing) -> float:
    if spacing is None:
        return 0.0
    s = float(spacing)
    if not (np.isfinite(s) and s > 0):
        raise ValueError(f"spacing must be a positive number (units of word height) or None, got {spacing!r}")
    return s


def _pack(pairs: Sequence[tuple[Ink, Ink]]):
    """Concatenate the strokes of checked pairs: xy (N, 2), stroke starts, ink stroke offsets."""
    strokes = []
    inks = [0]
    for p, r in pairs:
        strokes.extend(p.strokes)
        inks.append(len(strokes))
        strokes.extend(r.strokes)
        inks.append(len(strokes))
    lengths = np.fromiter((len(s) for s in strokes), dtype=np.int64, count=len(strokes))
    starts = np.zeros(len(strokes) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    xy = np.ascontiguousarray(np.concatenate(strokes)[:, :2]) if strokes else np.zeros((0, 2))
    return xy, starts, np.asarray(inks, dtype=np.int64)


def word_height(ref: InkLike) -> float:
    r"""The normalising height h of a reference ink, in page pixels.

    h is the height of the reference ink's bounding box (all strokes, x and y only). A flat reference
    (all points at one y) uses the bounding-box width instead, and a reference that is a single point
    (or several copies of one point) uses h = 1 pixel, so h is always positive.

    Parameters
    ----------
    ref : Ink or sequence of (n, 2) / (n, 3) array-likes
        The reference ink in page pixels (origin top-left, y down). Empty strokes are ignored.

    Returns
    -------
    float
        h in page pixels.

    Raises
    ------
    ValueError
        If the reference ink has no points (``InkError``, a ``ValueError``, for NaN or malformed points).

    Notes
    -----
    With :math:`x_{\min}, y_{\min}, x_{\max}, y_{\max}` the bounding box of the reference points:

    .. math::

        h = \begin{cases}
            y_{\max} - y_{\min} & \text{if } y_{\max} > y_{\min}, \\
            x_{\max} - x_{\min} & \text{else if } x_{\max} > x_{\min}, \\
            1 & \text{otherwise.}
        \end{cases}

    Examples
    --------
    >>> from inkground_lib.components.metrics.trajectory import word_height
    >>> word_height([[[10, 20, 0], [10, 120, 100]]])  # a vertical stroke 100 px tall
    100.0
    >>> word_height([[[0, 5], [40, 5]]])  # flat: its width
    40.0
    >>> word_height([[[3, 4]]])  # a single point
    1.0
    """
    r = as_ink(ref, "reference")
    if r.n_points == 0:
        raise ValueError("reference: the reference ink is empty (no points)")
    x0, y0, x1, y1 = r.bbox()
    h = y1 - y0
    if h <= 0:
        h = x1 - x0
    return float(h) if h > 0 else 1.0


def normalise(pred: InkLike | None, ref: InkLike, *, spacing: float | None = DEFAULT_SPACING,
              page_size: PageSize | None = None) -> tuple[np.ndarray, np.ndarray]:
    r"""Normalised, resampled point sequences (P, R) of a prediction and its reference.

    Both inks are translated by the top-left corner of the reference's bounding box and divided by the
    reference word height h (:func:`word_height`), so the reference spans [0, 1] vertically (y down) and
    both are in units of h. Each stroke is then resampled along its arc length at ``spacing`` word heights,
    keeping stroke order and direction; the strokes are concatenated (pen-ups are not marked). t is dropped.

    Parameters
    ----------
    pred : Ink, sequence of (n, 2) / (n, 3) array-likes, or None
        The predicted ink in page pixels. ``None`` or an ink with no points is an empty prediction.
    ref : Ink or sequence of (n, 2) / (n, 3) array-likes
        The reference ink in page pixels; must have at least one point.
    spacing : float or None, optional
        Resampling step in reference word heights (default ``inkground_lib.core.defaults.SPACING`` =
        0.05). ``None``: no resampling, the original points are only normalised.
    page_size : (float, float), optional
        ``(width, height)`` of the page in pixels. Needed only for an empty prediction, which is then
        replaced by :func:`invalid_prediction` (one dot at the page centre); without it an empty
        prediction raises ``ValueError``.

    Returns
    -------
    P, R : ndarray
        float64 arrays of shape (n, 2) and (m, 2): the prediction's and the reference's points, x then y.

    Raises
    ------
    ValueError
        For an empty reference, an empty prediction without ``page_size``, a non-positive ``spacing``, or
        NaN / malformed points.

    Notes
    -----
    With :math:`(x_{\min}, y_{\min})` the top-left of the reference bounding box, every point becomes

    .. math::

        (x', y') = \left( \frac{x - x_{\min}}{h}, \frac{y - y_{\min}}{h} \right).

    A stroke of arc length :math:`L > 0` (in word heights) becomes the
    :math:`k + 1` points at arc lengths :math:`d_q = q L / k`, :math:`q = 0, \dots, k`, with
    :math:`k = \max(\lceil L / s \rceil, 1)` for spacing :math:`s`, by linear interpolation between
    the original points (so its first and last points are kept). A one-point stroke is kept as is; a
    stroke of zero length (all points equal) becomes its first point.

    Examples
    --------
    A vertical stroke 100 px tall and the same stroke shifted right by 50 px (half a word height):

    >>> from inkground_lib.components.metrics.trajectory import normalise
    >>> ref = [[[10, 20, 0], [10, 120, 100]]]
    >>> pred = [[[60, 20, 0], [60, 120, 100]]]
    >>> P, R = normalise(pred, ref)  # 1 / 0.05 = 20 steps: 21 points each
    >>> P.shape, R.shape
    ((21, 2), (21, 2))
    >>> P[0].tolist(), P[-1].tolist(), R[10].tolist()
    ([0.5, 0.0], [0.5, 1.0], [0.0, 0.5])
    >>> normalise(pred, ref, spacing=None)[0].tolist()
    [[0.5, 0.0], [0.5, 1.0]]
    """
    s = _check_spacing(spacing)
    p, r = _checked(pred, ref, page_size, "normalise")
    xy, starts, inks = _pack([(p, r)])
    return _pair_points(xy, starts, inks, 0, s)


def dtw_points(P: np.ndarray, R: np.ndarray) -> float:
    r"""Dynamic time warping distance of two point sequences, divided by the length of the reference.

    The points are used as given (no normalisation or resampling; :func:`dtw` does both first), so the
    result is in the units of the points. Not symmetric: the divisor is the number of reference points.

    Parameters
    ----------
    P : (n, 2) array_like
        The predicted points, x then y; non-empty and finite.
    R : (m, 2) array_like
        The reference points, x then y; non-empty and finite.

    Returns
    -------
    float
        The accumulated cost of the cheapest warping path divided by m.

    Raises
    ------
    ValueError
        If an array is empty, not of shape (k, 2), or has NaN / infinite values.

    Notes
    -----
    With the Euclidean local cost :math:`c_{ij} = \lVert p_i - r_j \rVert_2` (:math:`i = 1, \dots, n`,
    :math:`j = 1, \dots, m`), steps (1, 0), (0, 1), (1, 1) and every cell on the path counted once
    (no step weights):

    .. math::

        D_{0,0} = 0, \qquad D_{i,0} = D_{0,j} = \infty \quad (i, j \ge 1),

        D_{i,j} = c_{ij} + \min(D_{i-1,j-1}, D_{i-1,j}, D_{i,j-1}),

        \mathrm{DTW}(P, R) = \frac{D_{n,m}}{m}.

    Examples
    --------
    >>> from inkground_lib.components.metrics.trajectory import dtw_points
    >>> P = [[0, 0], [1, 0], [2, 0]]
    >>> R = [[0, 0], [2, 0]]
    >>> round(dtw_points(P, R), 4)  # best path (0,0) (1,0 or 1,1) (2,1): cost 0 + 1 + 0, divided by m = 2
    0.5
    >>> round(dtw_points(R, P), 4)  # the same path cost, divided by m = 3
    0.3333
    """
    P, R = _points(P, "P"), _points(R, "R")
    return float(_scores(P, R)[0])


def chamfer_points(P: np.ndarray, R: np.ndarray) -> float:
    r"""Chamfer distance of two point sequences: the mean of the two mean nearest-neighbour distances.

    The points are used as given (no normalisation or resampling; :func:`chamfer` does both first), so the
    result is in the units of the points. Symmetric in P and R; the point order does not matter. Nearest
    neighbours are found exactly, by comparing every pair of points (O(n m)) in the numba kernel that also
    computes DTW, the one implementation :func:`geometry_batch` (scoring) uses.

    Parameters
    ----------
    P : (n, 2) array_like
        The predicted points, x then y; non-empty and finite.
    R : (m, 2) array_like
        The reference points, x then y; non-empty and finite.

    Returns
    -------
    float
        The Chamfer distance.

    Raises
    ------
    ValueError
        If an array is empty, not of shape (k, 2), or has NaN / infinite values.

    Notes
    -----
    .. math::

        \mathrm{CD}(P, R) = \frac{1}{2} \left(
            \frac{1}{n} \sum_{i=1}^{n} \min_{j} \lVert p_i - r_j \rVert_2
            + \frac{1}{m} \sum_{j=1}^{m} \min_{i} \lVert p_i - r_j \rVert_2 \right)

    Examples
    --------
    >>> from inkground_lib.components.metrics.trajectory import chamfer_points
    >>> P = [[0, 0], [1, 0], [2, 0]]
    >>> R = [[0, 0], [2, 0]]
    >>> round(chamfer_points(P, R), 4)  # 0.5 * ((0 + 1 + 0) / 3 + (0 + 0) / 2)
    0.1667
    """
    P, R = _points(P, "P"), _points(R, "R")
    return float(_scores(P, R)[1])


def _points(a, name: str) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.ndim != 2 or a.shape[1] != 2 or len(a) == 0:
        raise ValueError(f"{name} must be a non-empty (n, 2) array, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} has NaN or infinite coordinates")
    return a


def dtw(pred: InkLike | None, ref: InkLike, *, spacing: float | None = DEFAULT_SPACING,
        page_size: PageSize | None = None) -> float:
    r"""DTW distance between a predicted and a reference ink, in reference word heights.

    Both inks (page pixels, origin top-left, y down) are normalised and resampled by :func:`normalise`
    (translated by the reference bounding box's top-left, divided by the reference word height h,
    resampled along arc length within each stroke, stroke order kept); the point sequences P (n points)
    and R (m points) are then scored by :func:`dtw_points`. Not symmetric: the divisor is m. Stroke
    direction and order matter (compare :func:`chamfer`).

    Parameters
    ----------
    pred : Ink, sequence of (n, 2) / (n, 3) array-likes, or None
        The predicted ink in page pixels; ``None`` or no points is an empty prediction (see ``page_size``).
    ref : Ink or sequence of (n, 2) / (n, 3) array-likes
        The reference ink in page pixels; must have at least one point.
    spacing : float or None, optional
        Resampling step in word heights (default 0.05); ``None`` = no resampling.
    page_size : (float, float), optional
        ``(width, height)`` in page pixels; needed only to score an empty prediction, which is then
        replaced by :func:`invalid_prediction`. Without it an empty prediction raises ``ValueError``.

    Returns
    -------
    float
        The DTW distance in reference word heights (0 for identical inks).

    Notes
    -----
    With :math:`c_{ij} = \lVert p_i - r_j \rVert_2` between the normalised points and steps (1, 0), (0, 1),
    (1, 1):

    .. math::

        D_{i,j} = c_{ij} + \min(D_{i-1,j-1}, D_{i-1,j}, D_{i,j-1}), \quad D_{0,0} = 0, \quad
        D_{i,0} = D_{0,j} = \infty, \qquad
        \mathrm{DTW} = \frac{D_{n,m}}{m}.

    Examples
    --------
    A vertical stroke 100 px tall (h = 100 px) and the same stroke shifted by half a word height: all
    21 resampled points pair up diagonally at distance 0.5, so DTW = 21 * 0.5 / 21.

    >>> from inkground_lib.components.metrics.trajectory import dtw
    >>> ref = [[[10, 20, 0], [10, 120, 100]]]
    >>> round(dtw([[[60, 20, 0], [60, 120, 100]]], ref), 4)
    0.5
    >>> round(dtw(ref, ref), 4)
    0.0
    >>> round(dtw([[[10, 120, 0], [10, 20, 100]]], ref), 4)  # the same stroke drawn backwards: 11 / 21
    0.5238
    """
    P, R = normalise(pred, ref, spacing=spacing, page_size=page_size)
    return float(_scores(P, R)[0])


def chamfer(pred: InkLike | None, ref: InkLike, *, spacing: float | None = DEFAULT_SPACING,
            page_size: PageSize | None = None) -> float:
    r"""Chamfer distance between a predicted and a reference ink, in reference word heights.

    Both inks (page pixels, origin top-left, y down) are normalised and resampled by :func:`normalise`
    (as for :func:`dtw`); the point sets P (n points) and R (m points) are then scored by
    :func:`chamfer_points`. Unlike DTW it ignores stroke order and direction.

    Parameters
    ----------
    pred, ref, spacing, page_size
        As for :func:`dtw`: the predicted and the reference ink in page pixels (``None`` or no points is an
        empty prediction, scored as :func:`invalid_prediction` when ``page_size`` is given), the resampling
        step in word heights (default 0.05; ``None`` = no resampling) and the page ``(width, height)``.

    Returns
    -------
    float
        The Chamfer distance in reference word heights (0 for identical inks).

    Notes
    -----
    .. math::

        \mathrm{CD}(P, R) = \frac{1}{2} \left(
            \frac{1}{n} \sum_{i=1}^{n} \min_{j} \lVert p_i - r_j \rVert_2
            + \frac{1}{m} \sum_{j=1}^{m} \min_{i} \lVert p_i - r_j \rVert_2 \right)

    Examples
    --------
    >>> from inkground_lib.components.metrics.trajectory import chamfer
    >>> ref = [[[10, 20, 0], [10, 120, 100]]]
    >>> round(chamfer([[[60, 20, 0], [60, 120, 100]]], ref), 4)  # shifted by half a word height
    0.5
    >>> round(chamfer([[[10, 120, 0], [10, 20, 100]]], ref), 4)  # drawn backwards: the same points
    0.0
    """
    P, R = normalise(pred, ref, spacing=spacing, page_size=page_size)
    return float(_scores(P, R)[1])


GEOMETRY_COLUMNS = ("dtw", "chamfer")
"""The columns of :func:`geometry_batch`'s result, in order, each named as its metric
(:data:`inkground_lib.core.metric_table.METRICS`, computed "geometry"): readers take them by name
(:func:`geometry_columns`), never by position."""


def geometry_columns(geo: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`geometry_batch`'s result by metric name (:data:`GEOMETRY_COLUMNS`): name -> the k values (views of
    ``geo``, no copy).

    >>> g = geometry_columns(np.array([[0.5, 0.25]]))
    >>> g["dtw"].tolist(), g["chamfer"].tolist()
    ([0.5], [0.25])
    """
    geo = np.asarray(geo)
    if geo.ndim != 2 or geo.shape[1] != len(GEOMETRY_COLUMNS):
        raise ValueError(f"geometry_columns: expected a (k, {len(GEOMETRY_COLUMNS)}) array, got shape {geo.shape}")
    return {name: geo[:, i] for i, name in enumerate(GEOMETRY_COLUMNS)}


def geometry_batch(pairs: Iterable, *, spacing: float | None = DEFAULT_SPACING, workers: int | None = None,
                   chunk_size: int = 4096, progress: bool | None = None) -> np.ndarray:
    r"""DTW and Chamfer of many (prediction, reference) pairs: a (k, 2) float64 array [dtw, chamfer].

    Row p equals ``[dtw(pred, ref), chamfer(pred, ref)]`` for pair p, bit for bit (the same normalisation,
    resampling and kernel, in reference word heights): Chamfer's nearest distances come from the DTW
    kernel's own distance computations (exact).

    Parameters
    ----------
    pairs : iterable
        Items ``(pred, ref)`` or ``(pred, ref, page_size)``, inks in page pixels. ``page_size`` =
        ``(width, height)`` is needed only for an empty prediction, which is then scored as
        :func:`invalid_prediction`.
    spacing : float or None, optional
        Resampling step in word heights (default 0.05); ``None`` = no resampling.
    workers : int, optional
        numba threads (default: all of numba's threads, i.e. all cores).
    chunk_size : int, optional
        Pairs are packed and scored in chunks of this many pairs by a numba ``prange`` kernel.
    progress : bool, optional
        Show a tqdm bar; ``None`` (default) = only for more than 20,000 pairs.

    Returns
    -------
    ndarray
        float64 array of shape (k, 2): column 0 DTW, column 1 Chamfer (k = 0 gives shape (0, 2)).

    Raises
    ------
    ValueError
        For a malformed item, an empty reference, an empty prediction without ``page_size``, a
        non-positive ``spacing`` or ``workers`` out of range.

    Notes
    -----
    Cost: O(n m) per pair for n predicted and m reference points after resampling (~0.4 ms for 400 x 400
    on one core); a wild prediction that wanders across the page has a long arc length in word heights
    and so many points. Do not call it from several Python threads at once (numba's default threading
    layer is not re-entrant).

    Examples
    --------
    >>> from inkground_lib.components.metrics.trajectory import geometry_batch
    >>> ref = [[[10, 20, 0], [10, 120, 100]]]
    >>> shifted = [[[60, 20, 0], [60, 120, 100]]]
    >>> backwards = [[[10, 120, 0], [10, 20, 100]]]
    >>> out = geometry_batch([(shifted, ref), (backwards, ref), (ref, ref)])
    >>> out.shape
    (3, 2)
    >>> out.round(4).tolist()
    [[0.5, 0.5], [0.5238, 0.0], [0.0, 0.0]]
    """
    s = _check_spacing(spacing)
    items = list(pairs)
    k = len(items)
    out = np.empty((k, 2))
    if k == 0:
        return out
    checked = []
    for i, item in enumerate(items):
        if not isinstance(item, (tuple, list)) or len(item) not in (2, 3):
            raise ValueError(f"geometry_batch: pair {i} must be (pred, ref) or (pred, ref, page_size)")
        page_size = item[2] if len(item) == 3 else None
        checked.append(_checked(item[0], item[1], page_size, f"geometry_batch pair {i}"))
    n_threads = nb.config.NUMBA_NUM_THREADS if workers is None else int(workers)
    if not 1 <= n_threads <= nb.config.NUMBA_NUM_THREADS:
        raise ValueError(f"workers must be between 1 and {nb.config.NUMBA_NUM_THREADS}, got {workers!r}")
    show = k > 20_000 if progress is None else bool(progress)
    bar = None
    if show:
        from inkground_lib.core.progress import bar as progress_bar

        bar = progress_bar(total=k, desc="DTW + Chamfer", unit="pair")
    old = nb.get_num_threads()
    nb.set_num_threads(n_threads)
    try:
        # pack the next chunk in a helper thread while the kernel (nogil) scores the current one
        with ThreadPoolExecutor(max_workers=1) as ex:
            starts_at = list(range(0, k, chunk_size))
            fut = ex.submit(_pack, checked[0:chunk_size])
            for n, a in enumerate(starts_at):
                xy, st, inks = fut.result()
                if n + 1 < len(starts_at):
                    b = starts_at[n + 1]
                    fut = ex.submit(_pack, checked[b:b + chunk_size])
                m = (len(inks) - 1) // 2
                _batch_kernel(xy, st, inks, s, out[a:a + m])
                if bar is not None:
                    bar.update(m)
    finally:
        nb.set_num_threads(old)
        if bar is not None:
            bar.close()
    return out


# ---------------------------------------------------------------------------- subsequence DTW
# The same local cost and steps as dtw(), with an open begin and end in the reference: used by section 02
# to align each derendered stroke inside the writer's true trajectory.

@nb.njit(cache=True)
def _subseq_dtw(Q, R):
    n, m = Q.shape[0], R.shape[0]
    D = np.empty((n, m))
    for i in range(n):
        for j in range(m):
            c = _local_cost(Q[i, 0], Q[i, 1], R[j, 0], R[j, 1])
            if i == 0:
                best = 0.0  # open begin: the query may start anywhere in R
            elif j == 0:
                best = D[i - 1, 0]
            else:
                best = min(D[i - 1, j - 1], D[i - 1, j], D[i, j - 1])
            D[i, j] = c + best
    jend = 0
    for j in range(1, m):
        if D[n - 1, j] < D[n - 1, jend]:
            jend = j
    idx = np.empty(n, np.int64)
    i, j = n - 1, jend
    idx[i] = j
    while i > 0:
        if j > 0:
            a, b, c = D[i - 1, j - 1], D[i - 1, j], D[i, j - 1]
            if a <= b and a <= c:
                i -= 1
                j -= 1
            elif b <= c:
                i -= 1
            else:
                j -= 1
        else:
            i -= 1
        idx[i] = j
    return D[n - 1, jend], idx


def subsequence_dtw(Q: np.ndarray, R: np.ndarray) -> tuple[float, np.ndarray]:
    r"""Subsequence DTW: the best alignment of a whole query Q inside any stretch of a reference R.

    Open begin and open end in the reference: the path runs from Q's first to Q's last point but may
    start and end at any point of R. Same Euclidean local cost and steps (1, 0), (0, 1), (1, 1) as
    :func:`dtw_points`, but the cost is not divided by anything. The points are used as given (no
    normalisation), so the cost is in their units.

    Parameters
    ----------
    Q : (n, 2) array_like
        The query points, x then y; non-empty.
    R : (m, 2) array_like
        The reference points, x then y; non-empty.

    Returns
    -------
    cost : float
        The accumulated cost of the best path, :math:`\min_j D_{n,j}`.
    idx : ndarray of int64, shape (n,)
        For each query point, the index in R of the point it is aligned to (non-decreasing). Where the
        path stays on one query point over several reference points, the first of them.

    Raises
    ------
    ValueError
        If an array is empty or not of shape (k, 2).

    Notes
    -----
    With :math:`c_{ij} = \lVert q_i - r_j \rVert_2` (:math:`i = 1, \dots, n`, :math:`j = 1, \dots, m`):

    .. math::

        D_{1,j} = c_{1j}, \qquad D_{i,1} = c_{i1} + D_{i-1,1} \quad (i > 1),

        D_{i,j} = c_{ij} + \min(D_{i-1,j-1}, D_{i-1,j}, D_{i,j-1}) \quad (i, j > 1),

        \mathrm{cost} = \min_{j} D_{n,j}.

    So a horizontal run in the first row costs only its last cell. The path ends at the first j that
    attains the minimum and is traced back preferring the diagonal, then (i - 1, j), then (i, j - 1).

    Examples
    --------
    A two-point query half a unit above the middle of a four-point reference:

    >>> import numpy as np
    >>> from inkground_lib.components.metrics.trajectory import subsequence_dtw
    >>> Q = np.array([[1.0, 0.5], [2.0, 0.5]])
    >>> R = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [3.0, 0.0]])
    >>> cost, idx = subsequence_dtw(Q, R)
    >>> round(cost, 4), idx.tolist()
    (1.0, [1, 2])
    """
    Q = np.ascontiguousarray(Q, dtype=np.float64)
    R = np.ascontiguousarray(R, dtype=np.float64)
    if Q.ndim != 2 or R.ndim != 2 or Q.shape[1] != 2 or R.shape[1] != 2 or not len(Q) or not len(R):
        raise ValueError(f"subsequence_dtw: need non-empty (n, 2) arrays, got {Q.shape} and {R.shape}")
    cost, idx = _subseq_dtw(Q, R)
    return float(cost), idx
