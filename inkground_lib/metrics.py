"""Trajectory metrics (DTW, Chamfer) and character rates (AR, CR).

Conventions
-----------
Inks come in **page pixels** (origin top-left, y down), as an :class:`~inkground_lib.ink.Ink` or any
sequence of (n, 2) / (n, 3) strokes (t is ignored here). Metric values are in units of the **reference
word height** h.

Normalisation (:func:`normalise`, used by every geometric metric)
    h = height of the reference ink's bounding box. Both inks are translated by the reference bbox's
    top-left corner and divided by h, so a trace drawn in the wrong place on the page is penalised. Then
    every stroke of both inks is resampled along its arc length at ``spacing`` (in units of h; 0.05 by
    default) with :func:`inkground_lib.ink.resample`'s rule (first and last point kept, ``ceil(L /
    spacing)`` equal steps, a one-point stroke stays one point, a zero-length stroke becomes one point);
    stroke order and direction are kept and pen-ups dropped, giving one (n, 2) point sequence per ink.
    ``spacing=None`` skips the resampling.

    *Flat references* (decided here; the design leaves it open): a reference whose bbox height is 0
    (a horizontal dash, a single point) uses its bbox width instead, and 1 page pixel when the width is
    0 too (a single point). Any positive height, however small, is used as is.

DTW
    Euclidean local cost, steps (1, 0), (0, 1), (1, 1) with weight 1, accumulated cost of the best path
    from (first, first) to (last, last), divided by the number of reference points (after resampling).
    Numba kernel, O(n m) time, O(m) memory (two rows).

Chamfer
    0.5 * (mean over predicted points of the distance to the nearest reference point + the converse),
    on the same normalised, resampled points. :func:`chamfer` uses scipy's cKDTree;
    :func:`geometry_batch` gets the nearest-point distances exactly from the DTW kernel's distance
    computations (same values up to float rounding, tested).

Invalid predictions
    The design scores a missing or invalid output as a single dot at the page centre. An empty
    prediction (``None`` or no points) therefore needs the page size: :func:`dtw`, :func:`chamfer`,
    :func:`normalise` and :func:`geometry_batch` raise ``ValueError`` for an empty prediction unless
    ``page_size=(width, height)`` (page pixels) is given, in which case :func:`invalid_prediction` is
    scored instead. An empty reference always raises ``ValueError``. NaN / infinite points are refused
    when the ink is built (:class:`~inkground_lib.ink.InkError`, a ``ValueError``).

Character rates
    See :func:`edit_counts`: AR = (N - S - D - I) / N, CR = (N - S - D) / N from rapidfuzz's Levenshtein
    alignment of the normalised reference against the normalised hypothesis.
"""

from __future__ import annotations

import math
import unicodedata
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Iterable, Sequence

import numba as nb
import numpy as np
from rapidfuzz.distance import Levenshtein
from scipy.spatial import cKDTree

from .ink import Ink, InkLike, as_ink

__all__ = [
    "DEFAULT_SPACING", "EditCounts", "char_rates", "chamfer", "chamfer_points", "corpus_char_rates",
    "dtw", "dtw_points", "edit_counts", "geometry_batch", "invalid_prediction", "normalise",
    "normalise_text", "word_height",
]

DEFAULT_SPACING = 0.05
"""Resampling step along arc length, in units of the reference word height."""

PageSize = tuple[float, float]


# ----------------------------------------------------------------------------------------------------
# numba kernels (nopython, cached on disk, nogil)
# ----------------------------------------------------------------------------------------------------

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
            dx = xi - R[j, 0]
            dy = yi - R[j, 1]
            c = math.sqrt(dx * dx + dy * dy)
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


# ----------------------------------------------------------------------------------------------------
# packing inks for the kernels
# ----------------------------------------------------------------------------------------------------

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


# ----------------------------------------------------------------------------------------------------
# character rates
# ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class EditCounts:
    """Character edit counts of one word (or summed over many): substitutions S, deletions D (reference
    characters missing from the hypothesis), insertions I (extra hypothesis characters), and N = number of
    reference characters after normalisation. Hits H = N - S - D."""

    S: int
    D: int
    I: int  # noqa: E741  (the field names are the standard ones)
    N: int

    def __add__(self, other: "EditCounts") -> "EditCounts":
        if not isinstance(other, EditCounts):
            return NotImplemented
        return EditCounts(self.S + other.S, self.D + other.D, self.I + other.I, self.N + other.N)

    @property
    def hits(self) -> int:
        return self.N - self.S - self.D

    @property
    def ar(self) -> float:
        """Accuracy rate (N - S - D - I) / N; can be negative; NaN when N == 0."""
        return (self.N - self.S - self.D - self.I) / self.N if self.N else math.nan

    @property
    def cr(self) -> float:
        """Correct rate (N - S - D) / N, in [0, 1]; NaN when N == 0."""
        return (self.N - self.S - self.D) / self.N if self.N else math.nan


def normalise_text(text: str | None, *, casefold: bool = True, strip_punct: bool = True) -> str:
    """Text as compared for AR / CR: Unicode NFC; surrounding white space removed; with ``strip_punct``,
    punctuation (Unicode categories P*) and white space at either edge removed (inner punctuation kept);
    with ``casefold``, ``str.casefold`` (so 'ß' becomes 'ss') and NFC again. ``None`` counts as ''."""
    if text is None:
        return ""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string or None, got {type(text).__name__}")
    t = unicodedata.normalize("NFC", text).strip()
    if strip_punct:
        a, b = 0, len(t)
        while a < b and (t[a].isspace() or unicodedata.category(t[a]).startswith("P")):
            a += 1
        while b > a and (t[b - 1].isspace() or unicodedata.category(t[b - 1]).startswith("P")):
            b -= 1
        t = t[a:b]
    if casefold:
        t = unicodedata.normalize("NFC", t.casefold())
    return t


def edit_counts(hyp: str | None, ref: str, *, casefold: bool = True, strip_punct: bool = True) -> EditCounts:
    """S, D, I, N of a hypothesis (OCR of the rendered prediction) against the reference word.

    Both texts go through :func:`normalise_text`; ``hyp=None`` (nothing recognised) counts as ''.
    The alignment is ``rapidfuzz.distance.Levenshtein.editops(ref, hyp)`` (turn the reference into the
    hypothesis; unit costs): 'replace' = S, 'delete' = D, 'insert' = I; so S + D + I is always the
    Levenshtein distance and AR does not depend on the alignment chosen. CR does, and rapidfuzz (3.14, as
    pinned in requirements.txt) breaks ties as follows (tested against an explicit backtrace in
    tests/test_metrics.py, so a change of behaviour in an upgrade fails the tests):

    * the common prefix and suffix of the two strings are matched first;
    * the remaining middle is back-traced from the end; at each cell (i, j) (i reference characters,
      j hypothesis characters) it takes a **deletion** whenever D[i][j] = D[i-1][j] + 1; otherwise it
      takes an **insertion** when D[i-1][j-1] = D[i][j-1] + 1 (i.e. D[i][j-1] < D[i-1][j-1]); otherwise
      the diagonal (match or substitution).

    So a transposition 'ab' -> 'ba' is one deletion + one insertion + one match (CR = 0.5, AR = 0), not
    two substitutions (CR = 0).

    An empty reference after normalisation has N = 0: every hypothesis character is an insertion, and
    :func:`char_rates` gives NaN for that word (the corpus rates still count its insertions).
    """
    r = normalise_text(ref, casefold=casefold, strip_punct=strip_punct)
    h = normalise_text(hyp, casefold=casefold, strip_punct=strip_punct)
    s = d = i = 0
    for op in Levenshtein.editops(r, h):
        tag = op[0]
        if tag == "replace":
            s += 1
        elif tag == "delete":
            d += 1
        else:
            i += 1
    return EditCounts(s, d, i, len(r))


def char_rates(hyp: str | None, ref: str, *, casefold: bool = True, strip_punct: bool = True) -> tuple[float, float]:
    """(AR, CR) of one word; NaN, NaN when the normalised reference is empty. See :func:`edit_counts`."""
    c = edit_counts(hyp, ref, casefold=casefold, strip_punct=strip_punct)
    return c.ar, c.cr


def corpus_char_rates(items: Iterable, *, casefold: bool = True, strip_punct: bool = True) -> tuple[float, float]:
    """Corpus (AR, CR): S, D, I, N summed over words, then AR = (N-S-D-I)/N, CR = (N-S-D)/N (not clipped).

    ``items`` are :class:`EditCounts` or (hyp, ref) string pairs (mixing is allowed). NaN, NaN if the summed
    N is 0.
    """
    tot = EditCounts(0, 0, 0, 0)
    for n, it in enumerate(items):
        if isinstance(it, EditCounts):
            tot = tot + it
        elif isinstance(it, (tuple, list)) and len(it) == 2:
            tot = tot + edit_counts(it[0], it[1], casefold=casefold, strip_punct=strip_punct)
        else:
            raise TypeError(f"corpus_char_rates: item {n} must be EditCounts or a (hyp, ref) pair, got {it!r}")
    return tot.ar, tot.cr
