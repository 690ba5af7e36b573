"""Trajectory fidelity: DTW and Chamfer distance between inks, in word heights."""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable, Sequence

import numba as nb
import numpy as np
from scipy.spatial import cKDTree

from inkground_lib.core.defaults import SPACING as DEFAULT_SPACING
from inkground_lib.core.ink import Ink, InkLike, as_ink

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


@nb.njit(cache=True, nogil=True, parallel=True)
def _batch_kernel(xy, starts, inks, spacing, out):
    """DTW and Chamfer of every pair (see _pair_points for the layout), pairs in parallel."""
    k = out.shape[0]
    for p in nb.prange(k):
        P, R = _pair_points(xy, starts, inks, p, spacing)
        d, rs, cs = _dtw_chamfer(P, R)
        out[p, 0] = d / R.shape[0]
        out[p, 1] = 0.5 * (rs / P.shape[0] + cs / R.shape[0])


def invalid_prediction(page_size: PageSize) -> Ink:
    """The design's stand-in for a missing / invalid output: one dot at the page centre.

    ``page_size`` = (width, height) in page pixels; the dot is at (width / 2, height / 2), t = NaN.
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
    """The normalising height h of a reference ink, in page pixels (flat-reference rule in the module doc)."""
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
    """Normalised, resampled point sequences (P, R) of a prediction and its reference.

    Both are float64 (n, 2) arrays in units of the reference word height h, origin at the reference
    bbox's top-left, strokes concatenated in order (see the module docstring for the full rule, the
    flat-reference rule and the empty-prediction rule with ``page_size``).
    """
    s = _check_spacing(spacing)
    p, r = _checked(pred, ref, page_size, "normalise")
    xy, starts, inks = _pack([(p, r)])
    return _pair_points(xy, starts, inks, 0, s)


def dtw_points(P: np.ndarray, R: np.ndarray) -> float:
    """DTW of two already-normalised point sequences: accumulated Euclidean cost / len(R).

    Steps (1, 0), (0, 1), (1, 1), each cell's cost counted once. Both arrays (n, 2), non-empty.
    """
    P, R = _points(P, "P"), _points(R, "R")
    return float(_dtw_chamfer(P, R)[0] / len(R))


def chamfer_points(P: np.ndarray, R: np.ndarray) -> float:
    """Chamfer of two already-normalised point sequences (cKDTree nearest neighbours)."""
    P, R = _points(P, "P"), _points(R, "R")
    dp, _ = cKDTree(R).query(P, k=1)
    dr, _ = cKDTree(P).query(R, k=1)
    return float(0.5 * (dp.mean() + dr.mean()))


def _points(a, name: str) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.ndim != 2 or a.shape[1] != 2 or len(a) == 0:
        raise ValueError(f"{name} must be a non-empty (n, 2) array, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} has NaN or infinite coordinates")
    return a


def dtw(pred: InkLike | None, ref: InkLike, *, spacing: float | None = DEFAULT_SPACING,
        page_size: PageSize | None = None) -> float:
    """DTW between a predicted and a reference ink, in units of reference word height.

    Inks in page pixels; normalised and resampled by :func:`normalise`; see the module docstring for the
    definition and for ``page_size`` (required to score an empty prediction).
    """
    P, R = normalise(pred, ref, spacing=spacing, page_size=page_size)
    return float(_dtw_chamfer(P, R)[0] / len(R))


def chamfer(pred: InkLike | None, ref: InkLike, *, spacing: float | None = DEFAULT_SPACING,
            page_size: PageSize | None = None) -> float:
    """Chamfer distance between a predicted and a reference ink, in units of reference word height.

    0.5 * (mean nearest-reference distance of the predicted points + mean nearest-prediction distance of
    the reference points), nearest neighbours by scipy.spatial.cKDTree.
    """
    P, R = normalise(pred, ref, spacing=spacing, page_size=page_size)
    return chamfer_points(P, R)


def geometry_batch(pairs: Iterable, *, spacing: float | None = DEFAULT_SPACING, workers: int | None = None,
                   chunk_size: int = 4096, progress: bool | None = None) -> np.ndarray:
    """DTW and Chamfer of many (prediction, reference) pairs: a (k, 2) float64 array [dtw, chamfer].

    Each item is ``(pred, ref)`` or ``(pred, ref, page_size)`` (page_size is needed only for an empty
    prediction, see the module docstring). Pairs are packed in chunks of ``chunk_size`` and scored by a
    numba ``prange`` kernel on ``workers`` threads (default: all of numba's threads, i.e. all cores).
    Chamfer's nearest distances come from the DTW kernel's own distance computations (exact, no KD-tree).
    ``progress``: tqdm bar (None = only for more than 20,000 pairs).

    Cost: O(n m) per pair for n predicted and m reference points after resampling (~0.4 ms for 400 x 400
    on one core); a wild prediction that wanders across the page has a long arc length in word heights and
    so many points. Do not call it from several Python threads at once (numba's default threading layer
    is not re-entrant).
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
        from tqdm.auto import tqdm
        bar = tqdm(total=k, desc="DTW + Chamfer", unit="pair")
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
    """Open-begin, open-end DTW of a query sequence Q (n, 2) inside a reference sequence R (m, 2):
    (accumulated Euclidean cost of the best path from Q's first to Q's last point, starting and ending
    anywhere in R; steps (1, 0), (0, 1), (1, 1); a first-row horizontal run costs only its last cell),
    and for each query point the index of the reference point it is aligned to (non-decreasing)."""
    Q = np.ascontiguousarray(Q, dtype=np.float64)
    R = np.ascontiguousarray(R, dtype=np.float64)
    if Q.ndim != 2 or R.ndim != 2 or Q.shape[1] != 2 or R.shape[1] != 2 or not len(Q) or not len(R):
        raise ValueError(f"subsequence_dtw: need non-empty (n, 2) arrays, got {Q.shape} and {R.shape}")
    cost, idx = _subseq_dtw(Q, R)
    return float(cost), idx
