"""A recorded page's layout: which words of which writer go on each page (:func:`plan_pages`) and one writer's words
laid out on a page (:func:`compose_page`), drawn and photographed by :mod:`inkground_lib.datasets.recorded` as synth
does."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from inkground_lib.core.ink import Ink, as_ink
from inkground_lib.datasets.segmentation import core_band
from inkground_lib.formats.unipen import RecordedWord


def has_extent(w: RecordedWord) -> bool:
    """A word whose ink spans some width and height (a scale can be taken from it)."""
    try:
        x0, y0, x1, y1 = w.ink.bbox()
    except ValueError:
        return False
    return x1 > x0 and y1 > y0


@dataclass(frozen=True)
class Layout:
    """Page layout parameters, in page pixels (``core_px``: the writers' common core height)."""

    core_px: float = 24.0
    page_width: int = 1000
    margin_left: tuple[float, float] = (0.06, 0.12)     # fraction of the page width
    margin_right: float = 0.05                          # fraction of the page width
    margin_top: tuple[float, float] = (0.06, 0.10)      # fraction of the page width
    word_gap: tuple[float, float] = (0.9, 1.5)          # times core_px
    line_spacing: tuple[float, float] = (3.2, 4.0)      # times core_px
    baseline_jitter: float = 0.12                       # std, times core_px
    line_gap: float = 0.4                               # least gap between lines' inks, times core_px
    pen_width: tuple[float, float] = (2.0, 3.4)         # page pixels
    min_aspect: float = 0.55                            # page height >= this * width


@dataclass
class ComposedPage:
    """A laid-out page before photographing: ``inks[i]`` = ``scale`` * source ink i + ``offsets[i]``."""

    width: int
    height: int
    pen_width: float
    scale: float
    inks: list[Ink]
    offsets: list[tuple[float, float]]


def compose_page(words: Sequence[RecordedWord], scale: float, rng: np.random.Generator,
                 layout: Layout = Layout()) -> ComposedPage:
    """Lay out one writer's ``words`` (source units, y down) on a note page in page pixels.

    Every word ink becomes ``scale * ink + (dx, dy)`` (a similarity transform, t unchanged); see the module
    doc for the layout rules. Deterministic for a given ``rng`` state.
    """
    if not words:
        raise ValueError("compose_page: no words")
    L = layout
    W = int(L.page_width)
    pen = float(rng.uniform(*L.pen_width))
    gap = float(rng.uniform(*L.word_gap)) * L.core_px
    spacing = float(rng.uniform(*L.line_spacing)) * L.core_px
    left = float(rng.uniform(*L.margin_left)) * W
    top = float(rng.uniform(*L.margin_top)) * W
    right_edge = W - L.margin_right * W
    scaled = []
    for w in words:
        ink = as_ink(w.ink)
        x0, _, x1, _ = ink.bbox()
        base = core_band(ink)[1]
        scaled.append((ink, x0 * scale, (x1 - x0) * scale, base * scale))
    widest = max(s[2] for s in scaled)
    if left + widest > right_edge:  # one word wider than a line: widen the page
        W = int(np.ceil(left + widest + L.margin_right * W))
        right_edge = W - L.margin_right * W
    # 1. words to lines, left to right; 2. lines stacked: baseline k is line_spacing below baseline k-1,
    # lower still where line k's tallest letters would come closer than line_gap to line k-1's lowest ink
    lines: list[list[int]] = [[]]
    xs, cursor = [], left
    for i, (ink, x0s, ws, bs) in enumerate(scaled):
        if cursor > left and cursor + ws > right_edge:
            lines.append([])
            cursor = left
        lines[-1].append(i)
        xs.append(cursor - x0s)
        cursor += ws + gap
    jitter = [float(rng.normal(0.0, L.baseline_jitter)) * L.core_px for _ in scaled]
    dys = [0.0] * len(scaled)
    baseline, prev_bottom = 0.0, None
    for k, idx in enumerate(lines):
        rel = [(ink.bbox()[1] * scale - bs + jitter[i], ink.bbox()[3] * scale - bs + jitter[i])
               for i in idx for (ink, _, _, bs) in [scaled[i]]]
        top_rel, bot_rel = min(r[0] for r in rel), max(r[1] for r in rel)
        if k > 0:
            baseline = max(baseline + spacing, prev_bottom + L.line_gap * L.core_px - top_rel)
        for i in idx:
            dys[i] = baseline + jitter[i] - scaled[i][3]
        prev_bottom = baseline + bot_rel
    offsets = list(zip(xs, dys))
    inks = [ink.transformed(scale, dx, dy) for (ink, *_), (dx, dy) in zip(scaled, offsets)]
    # shift so the ink's top lies at the top margin
    y_top = min(k.bbox()[1] for k in inks)
    y_bot = max(k.bbox()[3] for k in inks)
    shift = top - y_top
    inks = [k.transformed(1.0, 0.0, shift) for k in inks]
    offsets = [(dx, dy + shift) for dx, dy in offsets]
    H = int(np.ceil(max((y_bot - y_top) + 2 * top, L.min_aspect * W)))
    return ComposedPage(W, H, pen, float(scale), inks, offsets)


def plan_pages(words: Sequence[RecordedWord], pages: int | None, words_per_page: tuple[int, int],
               rng: np.random.Generator) -> list[tuple[str, list[RecordedWord]]]:
    """Which writer's which words go on each page (see the module doc); words with no letter are left out."""
    lo, hi = words_per_page
    by_writer: dict[str, list[RecordedWord]] = {}
    for w in words:
        if any(c.isalpha() for c in w.text):
            by_writer.setdefault(w.writer, []).append(w)
    writers = sorted(by_writer)
    order = [writers[i] for i in rng.permutation(len(writers))]
    pools = {wr: [by_writer[wr][i] for i in rng.permutation(len(by_writer[wr]))] for wr in order}
    plan: list[tuple[str, list[RecordedWord]]] = []
    while True:
        added = False
        for wr in order:
            if pages is not None and len(plan) >= pages:
                return plan
            pool = pools[wr]
            if len(pool) < lo:
                continue
            k = min(int(rng.integers(lo, hi + 1)), len(pool))
            plan.append((wr, pool[:k]))
            pools[wr] = pool[k:]
            added = True
        if pages is None or not added:
            return plan
