"""Cutting a recorded text line into words, and the core band of handwriting."""

from __future__ import annotations

from itertools import combinations
from math import comb, log
from typing import Optional, Sequence

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


def _gap_clusters(ink: Ink, gap_factor: float) -> list[list[int]]:
    """Stroke indices clustered by horizontal extent (see :func:`segment_line_words`), left to right."""
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
    return clusters


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
    clusters = _gap_clusters(ink, gap_factor)
    if len(clusters) != n_words:
        return None
    return [Ink(tuple(ink.strokes[i] for i in sorted(c))) for c in clusters]


def cut_line(ink: Ink, tokens: Sequence[str], *, gap_factor: float = 0.6,
             sized: Optional[Sequence[bool]] = None) -> tuple[Optional[list[Ink]], Optional[str], str]:
    """Cut a recorded line into one piece of ink per token, or say why not: (pieces, None, "") or (None, kind,
    reason), kind ``"count"`` (the pen-up gaps give another number of pieces) or ``"lengths"`` (:func:`check_cut`
    refuses the cut).

    The line is cut at pen-up gaps (:func:`segment_line_words`). Where that gives as many pieces as tokens, they
    are the cut. Where it gives fewer by exactly the number of punctuation tokens written right after a word
    (a full stop or comma put down close to its word: "Mr ." as one piece), each such mark is taken back from
    the end of its word's piece: the piece's rightmost stroke, when it starts right of the rest of the piece
    (no more than 0.3 core heights back) and is no bigger than :data:`CUT_PUNCT_EXTENT`; a piece that has no
    such stroke refuses the line. Any other count refuses it. The cut is then held to the words' lengths
    (:func:`check_cut`; ``sized`` as there): a count that matches is not enough."""
    ink = as_ink(ink)
    tokens = list(tokens)
    if not tokens or len(ink) == 0:
        return None, "count", "no words or no ink"
    core = core_height(ink)
    clusters = _gap_clusters(ink, gap_factor)
    trailing = [k for k in range(1, len(tokens)) if is_punctuation(tokens[k]) and not is_punctuation(tokens[k - 1])]
    if len(clusters) == len(tokens):
        pieces = [sorted(c) for c in clusters]
    elif len(clusters) == len(tokens) - len(trailing) and trailing:
        pieces, it = [], iter(clusters)
        for k in range(len(tokens)):
            if k not in trailing:
                pieces.append(sorted(next(it)))
                continue
            word = pieces[-1]
            mark = _trailing_mark(ink, word, core)
            if mark is None:
                return None, "count", (f"{len(clusters)} pieces of ink at pen-up gaps for {len(tokens)} words, and "
                                       f"no mark for {tokens[k]!r} at the end of {tokens[k - 1]!r}")
            pieces[-1] = [i for i in word if i != mark]
            pieces.append([mark])
    else:
        return None, "count", f"{len(clusters)} pieces of ink at pen-up gaps for {len(tokens)} words"
    parts = [Ink(tuple(ink.strokes[i] for i in p)) for p in pieces]
    why = check_cut(parts, tokens, core, sized)
    return (None, "lengths", why) if why else (parts, None, "")


def _trailing_mark(ink: Ink, word: list[int], core: float) -> Optional[int]:
    """The stroke of ``word`` that is a punctuation mark written after it (see :func:`cut_line`), or None."""
    if len(word) < 2:
        return None
    last = max(word, key=lambda i: (ink.strokes[i][:, 0].min(), i))
    rest_right = max(ink.strokes[i][:, 0].max() for i in word if i != last)
    s = ink.strokes[last]
    w, h = np.ptp(s[:, 0]) / core, np.ptp(s[:, 1]) / core
    if s[:, 0].min() < rest_right - 0.3 * core or w > CUT_PUNCT_EXTENT[0] or h > CUT_PUNCT_EXTENT[1]:
        return None
    return last


# ------------------------------------------------------------------------------------------ the cut's evidence

# Relative widths of handwritten characters, in units of a plain lower-case letter ("n"): the rule that checks a
# cut against the words' lengths. Classes, not fitted per letter: narrow strokes and marks (i l j and punctuation),
# half-width letters (f t r, I, 1, brackets, hyphen), wide letters (m w, M W), other capitals, the rest.
_NARROW, _HALF, _WIDE, _WIDE_UPPER = set("ilj.,;:!'|`\""), set("ftrI1()-"), set("mw"), set("MW")


def letter_units(text: str) -> float:
    """The expected width of ``text`` written by hand, in units of a plain lower-case letter: 0.4 for i l j and
    punctuation, 0.6 for f t r I 1 ( ) -, 1.5 for m w, 1.6 for M W, 1.2 for other capitals, 1.0 for anything
    else. On 74,213 real UNIPEN words (train_r01_v07 category 6, qualities but BAD, 424 writers with 8+ words;
    the 3 files the mirror lacks aside; measured 2026-12-02) a word's width in core heights over (its units x its
    writer's width per unit) has 1st-99th percentiles 0.43-1.97 (counting characters instead: 0.42-2.11), and
    98.1% of words lie within :data:`CUT_WIDTH_RATIO`.

    >>> letter_units("mill")
    2.7
    """
    u = 0.0
    for ch in text:
        u += (0.4 if ch in _NARROW else 0.6 if ch in _HALF else 1.5 if ch in _WIDE else 1.6 if ch in _WIDE_UPPER
              else 1.2 if ch.isupper() else 1.0)
    return round(u, 6)


#: the widths a cut word may have against its expected width (:func:`check_cut`): ratio bounds, and the largest
#: extent (in core heights) of the ink given to a punctuation token
CUT_WIDTH_RATIO = (0.45, 2.2)
CUT_PUNCT_EXTENT = (1.0, 1.6)


def is_punctuation(token: str) -> bool:
    """A token without a letter or digit (``.``, ``,``, ``"``, ``-``): written small, and never a target."""
    return not any(c.isalnum() for c in token)


def check_cut(parts: Sequence[Ink], tokens: Sequence[str], core: float,
              sized: Optional[Sequence[bool]] = None) -> Optional[str]:
    """Why a line cut into ``parts`` (one per token, left to right) does not fit the words' lengths, or None
    when it fits. The rule (the cut must be supported by more than its count):

    * a punctuation token (:func:`is_punctuation`) gets ink at most 1.0 core heights wide and 1.6 high
      (:data:`CUT_PUNCT_EXTENT`): a full stop, comma or quote, not a word;
    * a word token gets ink whose width, in core heights, over its :func:`letter_units` is within 0.45-2.2 times
      (:data:`CUT_WIDTH_RATIO`) the line's width per unit (the words' total width over their total units: each
      line is its own writer's scale), bounds that hold 98% of real words one by one (see :func:`letter_units`);
      on 3,000 lines laid out from real UNIPEN words of 418 writers the rule keeps 90.3% of right cuts and refuses
      93.2% of wrong cuts of the same count (``benchmarks/bench_line_cut.py``): the right cuts it refuses hold a
      word whose width cannot be told from a miscut's, and are skipped rather than risked;
      where the line has fewer than two sized words no scale can be taken and the cut is not checked against it.

    ``sized[k]`` False leaves token k out of the width test (struck-out, unreadable or bracketed words, whose ink
    has no length to expect). On the real IAM-OnDB line a01-000u-01 ("A MOVE to stop Mr . Gaitskell", cut at
    pen-up gaps as A | MOV | E | to | stop | Mr. | Gaitskell) the "." gets ink 2.3 core heights wide: refused."""
    if len(parts) != len(tokens):
        return f"{len(parts)} pieces of ink for {len(tokens)} words"
    sized = [True] * len(tokens) if sized is None else list(sized)
    core = max(float(core), 1e-9)
    widths, rows = [], []
    pw, ph = CUT_PUNCT_EXTENT
    for k, (ink, tok) in enumerate(zip(parts, tokens)):
        x0, y0, x1, y1 = ink.bbox()
        w, h = (x1 - x0) / core, (y1 - y0) / core
        widths.append(w)
        if not sized[k]:
            continue
        if is_punctuation(tok):
            if w > pw or h > ph:
                return (f"word {k + 1} {tok!r} (punctuation) got ink {w:.2f} x {h:.2f} core heights (at most "
                        f"{pw:g} x {ph:g})")
            continue
        rows.append((k, tok, w, letter_units(tok)))
    if len(rows) < 2:
        return None
    scale = sum(r[2] for r in rows) / sum(r[3] for r in rows)
    lo, hi = CUT_WIDTH_RATIO
    for k, tok, w, u in rows:
        r = w / (u * scale) if scale > 0 else 0.0
        if not lo <= r <= hi:
            return (f"word {k + 1} {tok!r} got ink {w:.2f} core heights wide, {r:.2f} times its expected width "
                    f"({lo:g}-{hi:g} allowed)")
    return None


#: the widths a whole line may have against its transcription line's expected width (:func:`match_lines_by_length`)
LINE_WIDTH_RATIO = (0.67, 1.5)
#: how much better than the next the best way of matching must be when more than one passes the bounds
LINE_MATCH_MARGIN = 4.0
_MAX_MATCHINGS = 2000


def match_lines_by_length(inks: Sequence[Ink], texts: Sequence[str]) -> tuple[Optional[list], str]:
    """Match a form's text lines (``inks``, in file order) to its transcription lines (``texts``, in order) by
    their lengths, when their numbers do not say which is which (a line or a file missing). Returns (for each
    ink the index of its text, or None for an ink left without one; the rule's account), or (None, why not).

    The rule: every order-keeping way of pairing the shorter list with part of the longer one is tried (at most
    2,000 ways); a way passes when every paired line's width in core heights (of that line), over its text's
    :func:`letter_units` (spaces counting 1), is within 0.67-1.5 times (:data:`LINE_WIDTH_RATIO`) the form's width
    per unit (the paired lines' total width over their total units). The match is taken only when exactly one way
    passes, or when the best passing way's cost (the sum of squared log ratios) is at most a quarter
    (:data:`LINE_MATCH_MARGIN`) of the next one's; otherwise the form's lines are not matched."""
    n, m = len(inks), len(texts)
    if n == 0 or m == 0:
        return None, f"{n} line files and {m} transcription lines"
    widths = []
    for ink in inks:
        x0, _, x1, _ = ink.bbox()
        widths.append((x1 - x0) / core_height(ink))
    units = [max(letter_units(t), 1e-9) for t in texts]
    short, long_ = (n, m) if n <= m else (m, n)
    if comb(long_, short) > _MAX_MATCHINGS:
        return None, (f"{comb(long_, short)} ways to pair {n} line files with {m} transcription lines (over "
                      f"{_MAX_MATCHINGS})")
    lo, hi = LINE_WIDTH_RATIO
    passing = []
    for pick in combinations(range(long_), short):
        pairs = list(zip(range(short), pick)) if n <= m else [(p, i) for i, p in enumerate(pick)]
        scale = sum(widths[i] for i, _ in pairs) / sum(units[j] for _, j in pairs)
        if scale <= 0:
            continue
        ratios = [widths[i] / (units[j] * scale) for i, j in pairs]
        if all(lo <= r <= hi for r in ratios):
            passing.append((sum(log(r) ** 2 for r in ratios), pairs))
    if not passing:
        return None, f"no way of pairing {n} line files with {m} transcription lines fits their lengths"
    passing.sort(key=lambda c: c[0])
    if len(passing) > 1 and passing[0][0] * LINE_MATCH_MARGIN + 1e-6 >= passing[1][0]:  # ties refused
        return None, (f"{len(passing)} ways of pairing {n} line files with {m} transcription lines fit their lengths "
                      f"about as well (costs {passing[0][0]:.3f} and {passing[1][0]:.3f})")
    out: list = [None] * n
    for i, j in passing[0][1]:
        out[i] = j
    how = ("the only way" if len(passing) == 1 else
           f"the best of {len(passing)} ways (cost {passing[0][0]:.3f} vs {passing[1][0]:.3f})")
    return out, f"matched by length: {how} of pairing {n} line files with {m} transcription lines that fits"
