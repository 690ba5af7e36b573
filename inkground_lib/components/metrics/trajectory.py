"""Trajectory fidelity: DTW and Chamfer distance between a predicted and a reference ink, in word heights.

Inks are strokes of x, y, t in page pixels (origin top-left, y down; t is not used here). Both inks are
put in units of the reference word height (:func:`word_height`, :func:`normalise`), resampled along arc
length, and scored by :func:`dtw` and :func:`chamfer` (one pair) or :func:`geometry_batch` (many pairs).
:func:`dtw_points` and :func:`chamfer_points` score already-normalised points
(:mod:`~inkground_lib.components.metrics.subsequence_dtw` aligns a query sequence inside a reference). Every DTW and
Chamfer here comes from one numba kernel (``_dtw_chamfer``, through ``_scores``, in
:mod:`~inkground_lib.components.metrics.trajectory_kernels`), so a pair scored alone and in a batch gets the same
bits.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Iterable, Sequence

import numba as nb
import numpy as np

from inkground_lib.components.metrics.trajectory_kernels import _batch_kernel, _pair_points, _scores
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
    "word_height",
]

PageSize = tuple[float, float]


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
    checked = _checked_pairs(items)
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
        _score_in_chunks(checked, s, chunk_size, out, bar)
    finally:
        nb.set_num_threads(old)
        if bar is not None:
            bar.close()
    return out


def _checked_pairs(items: list) -> list:
    """:func:`geometry_batch`'s items, each checked (:func:`_checked`) or refused naming its index."""
    checked = []
    for i, item in enumerate(items):
        if not isinstance(item, (tuple, list)) or len(item) not in (2, 3):
            raise ValueError(f"geometry_batch: pair {i} must be (pred, ref) or (pred, ref, page_size)")
        page_size = item[2] if len(item) == 3 else None
        checked.append(_checked(item[0], item[1], page_size, f"geometry_batch pair {i}"))
    return checked


def _score_in_chunks(checked: list, spacing, chunk_size: int, out: np.ndarray, bar) -> None:
    """Score the checked pairs into ``out``, ``chunk_size`` pairs at a time: the next chunk is packed in a helper
    thread while the kernel (nogil) scores the current one."""
    k = len(checked)
    with ThreadPoolExecutor(max_workers=1) as ex:
        starts_at = list(range(0, k, chunk_size))
        fut = ex.submit(_pack, checked[0:chunk_size])
        for n, a in enumerate(starts_at):
            xy, st, inks = fut.result()
            if n + 1 < len(starts_at):
                b = starts_at[n + 1]
                fut = ex.submit(_pack, checked[b:b + chunk_size])
            m = (len(inks) - 1) // 2
            _batch_kernel(xy, st, inks, spacing, out[a:a + m])
            if bar is not None:
                bar.update(m)

