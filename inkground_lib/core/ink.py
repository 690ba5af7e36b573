"""Digital ink: strokes as numpy arrays (the ``Ink`` type and ``InkError``, conversion to and from lists,
resampling, concatenation).

Conventions used everywhere: page pixels, origin top-left, y down; a stroke is a float64 (n, 3) array of
x, y, t (t in ms, NaN where unknown); NaN or infinite x / y are refused when an ink is built. The design
page of the book has the details.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence, Union

import numpy as np


class InkError(ValueError):
    """An ink that cannot be used: NaN coordinates, wrong shape, ..."""


@dataclass(frozen=True)
class Ink:
    """An immutable list of strokes, each a float64 (n, 3) array of x, y, t (page pixels, y down, ms)."""

    strokes: tuple[np.ndarray, ...] = ()

    def __post_init__(self) -> None:
        for s in self.strokes:
            s.setflags(write=False)

    def __len__(self) -> int:
        return len(self.strokes)

    def __iter__(self):
        return iter(self.strokes)

    def __getitem__(self, i):
        return self.strokes[i]

    def __eq__(self, other) -> bool:
        if not isinstance(other, Ink) or len(other) != len(self):
            return False
        return all(a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
                   for a, b in zip(self.strokes, other.strokes))

    __hash__ = None  # mutable-looking content; compare with ==

    @property
    def n_points(self) -> int:
        return int(sum(len(s) for s in self.strokes))

    def points(self) -> np.ndarray:
        """All x, y points of all strokes, concatenated: an (N, 2) array (N may be 0)."""
        if not self.strokes:
            return np.zeros((0, 2))
        return np.concatenate([s[:, :2] for s in self.strokes])

    def bbox(self) -> tuple[float, float, float, float]:
        """(x0, y0, x1, y1) of all points in page pixels; raises InkError for an empty ink."""
        p = self.points()
        if len(p) == 0:
            raise InkError("an empty ink has no bounding box")
        return (float(p[:, 0].min()), float(p[:, 1].min()), float(p[:, 0].max()), float(p[:, 1].max()))

    def transformed(self, scale: float = 1.0, dx: float = 0.0, dy: float = 0.0) -> "Ink":
        """x' = x * scale + dx, y' = y * scale + dy; t unchanged."""
        out = []
        for s in self.strokes:
            c = s.copy()
            c[:, 0] = c[:, 0] * scale + dx
            c[:, 1] = c[:, 1] * scale + dy
            out.append(c)
        return Ink(tuple(out))


InkLike = Union[Ink, Sequence[Sequence[Sequence[float]]], Sequence[np.ndarray]]


def _as_stroke(s, where: str) -> np.ndarray:
    try:
        a = np.asarray(s, dtype=np.float64)
    except (TypeError, ValueError):
        raise InkError(f"{where}: points must all be numeric [x, y] or all [x, y, t]") from None
    if a.ndim == 1 and a.size == 0:
        a = a.reshape(0, 3)
    if a.ndim != 2 or a.shape[1] not in (2, 3):
        raise InkError(f"{where}: a stroke must be an (n, 2) or (n, 3) array, got shape {a.shape}")
    if a.shape[1] == 2:
        a = np.column_stack([a, np.full(len(a), np.nan)])
    if not np.isfinite(a[:, :2]).all():
        bad = int(np.flatnonzero(~np.isfinite(a[:, :2]).all(axis=1))[0])
        raise InkError(f"{where}: point {bad} has a NaN or infinite coordinate ({a[bad, 0]}, {a[bad, 1]})")
    return np.ascontiguousarray(a)


def as_ink(obj: InkLike, where: str = "ink", keep_empty: bool = False) -> Ink:
    """Build an :class:`Ink` from an Ink or a sequence of strokes, validating every point.

    ``where`` names the ink in error messages (e.g. ``"page p001 word 3 reference"``). Empty strokes are
    dropped unless ``keep_empty``.
    """
    if isinstance(obj, Ink):
        return obj
    if obj is None:
        raise InkError(f"{where}: no ink (None)")
    strokes = []
    for i, s in enumerate(obj):
        a = _as_stroke(s, f"{where} stroke {i}")
        if len(a) or keep_empty:
            strokes.append(a)
    return Ink(tuple(strokes))


def ink_digest(ink: InkLike) -> str:
    """SHA-256 of an ink's strokes as drawn: stroke boundaries and x, y (float64), in order; t is left
    out (no renderer uses it). Two inks with equal digests render to identical images.

    >>> a = as_ink([[[0, 0, 0], [1, 1, 10]]]); b = as_ink([[[0, 0, 5], [1, 1, 99]]])
    >>> ink_digest(a) == ink_digest(b), ink_digest(a) == ink_digest(a.transformed(2.0))
    (True, False)
    """
    import hashlib

    h = hashlib.sha256()
    for s in as_ink(ink, keep_empty=True).strokes:
        xy = np.ascontiguousarray(s[:, :2], dtype="<f8")
        h.update(len(xy).to_bytes(8, "little") + xy.tobytes())
    return h.hexdigest()


def drawing_digest(ink: InkLike) -> str:
    """SHA-256 of what an ink draws, whatever the order and direction of its strokes: the set (with repeats)
    of its non-empty strokes' x, y points (float64), each stroke taken in the direction whose bytes sort first
    and the strokes sorted; t is left out, as in :func:`ink_digest`. Two inks with equal drawing digests draw
    the same lines on the same bounding box (a renderer's anti-aliasing may still differ where strokes or a
    stroke's own segments overlap, by a grey level: OCR and Style read one render per drawing).

    >>> a = as_ink([[[0, 0], [1, 1]], [[5, 5], [6, 7]]]); b = as_ink([[[6, 7], [5, 5]], [[0, 0], [1, 1]]])
    >>> drawing_digest(a) == drawing_digest(b), ink_digest(a) == ink_digest(b)
    (True, False)
    >>> drawing_digest(a) == drawing_digest(as_ink([[[0, 0], [1, 1]], [[5, 5], [6, 8]]]))
    False
    """
    import hashlib

    parts = []
    for s in as_ink(ink).strokes:
        if len(s) == 0:
            continue
        xy = np.ascontiguousarray(s[:, :2], dtype="<f8")
        fwd, rev = xy.tobytes(), np.ascontiguousarray(xy[::-1]).tobytes()
        parts.append(min(fwd, rev))
    h = hashlib.sha256(b"drawing")
    for p in sorted(parts):
        h.update((len(p) // 16).to_bytes(8, "little") + p)
    return h.hexdigest()


def ink_to_lists(ink: InkLike, decimals: int = 2) -> list:
    """JSON-ready nested lists [[[x, y, t], ...], ...]; NaN t becomes None. Rounded to ``decimals``."""
    ink = as_ink(ink)
    out = []
    for s in ink.strokes:
        r = np.round(s, decimals)
        out.append([[float(x), float(y), (None if np.isnan(t) else float(t))] for x, y, t in r])
    return out


_NUMBER_TYPES = frozenset({int, float})  # exactly: bool (a subclass of int) and str are refused


def ink_from_lists(data, where: str = "ink") -> Ink:
    """Inverse of :func:`ink_to_lists`; None t becomes NaN. Raises InkError naming ``where``."""
    if not isinstance(data, list):
        raise InkError(f"{where}: expected a list of strokes, got {type(data).__name__}")
    strokes = []
    for i, s in enumerate(data):
        if not isinstance(s, list):
            raise InkError(f"{where} stroke {i}: expected a list of points, got {type(s).__name__}")
        try:
            rows = [[(np.nan if v is None else v) for v in p] for p in s]
        except TypeError:
            raise InkError(f"{where} stroke {i}: points must be [x, y] or [x, y, t] lists") from None
        if not {type(v) for r in rows for v in r} <= _NUMBER_TYPES:  # one fast pass; find the culprit if any
            for j, r in enumerate(rows):
                for k, v in enumerate(r):
                    if type(v) not in _NUMBER_TYPES:
                        raise InkError(f"{where} stroke {i} point {j}: {'xyt'[k] if k < 3 else k} must be a number, "
                                       f"got {v!r:.30}")
        if any(len(r) not in (2, 3) for r in rows):
            raise InkError(f"{where} stroke {i}: points must be [x, y] or [x, y, t] lists")
        if any(len(r) == 2 for r in rows):
            rows = [r + [np.nan] if len(r) == 2 else r for r in rows]
        try:
            arr = np.asarray(rows, dtype=np.float64).reshape(-1, 3)
        except (TypeError, ValueError):
            raise InkError(f"{where} stroke {i}: coordinates must be numbers") from None
        if np.isinf(arr[:, 2]).any():
            raise InkError(f"{where} stroke {i} point {int(np.flatnonzero(np.isinf(arr[:, 2]))[0])}: t is infinite")
        strokes.append(arr)
    return as_ink(strokes, where)


def resample(ink: InkLike, spacing: float) -> Ink:
    """Resample every stroke along its arc length at a constant ``spacing`` (same units as the ink).

    Stroke order and direction are kept. Each stroke keeps its first and last point; a stroke shorter than
    ``spacing`` keeps its two end points (a single-point stroke stays one point). t is interpolated.
    """
    if spacing <= 0:
        raise ValueError("spacing must be positive")
    ink = as_ink(ink)
    out = []
    for s in ink.strokes:
        if len(s) < 2:
            out.append(s.copy())
            continue
        seg = np.hypot(np.diff(s[:, 0]), np.diff(s[:, 1]))
        cum = np.concatenate([[0.0], np.cumsum(seg)])
        total = cum[-1]
        if total == 0:
            out.append(s[:1].copy())
            continue
        n = max(int(np.ceil(total / spacing)), 1)
        d = np.linspace(0.0, total, n + 1)
        # np.interp needs increasing x: zero-length segments are harmless (repeated cum values)
        cols = [np.interp(d, cum, s[:, k]) for k in range(3)]
        out.append(np.column_stack(cols))
    return Ink(tuple(out))


def concat(inks: Iterable[InkLike]) -> Ink:
    """All strokes of several inks, in order."""
    strokes = []
    for k in inks:
        strokes.extend(as_ink(k).strokes)
    return Ink(tuple(strokes))
