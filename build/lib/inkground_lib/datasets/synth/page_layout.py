"""Laying words out on a page and drawing the clean page."""

from __future__ import annotations

import math

import cv2
import numpy as np

from inkground_lib.core.ink import Ink, InkLike
from inkground_lib.core.render import draw_ink
from inkground_lib.datasets.synth.writers import WriterStyle, write_word

_SUPERSAMPLE = 1  # draw_ink supersamples each word itself


def layout_page(words: list[tuple[str, bool]], style: WriterStyle, rng: np.random.Generator,
                page_size: tuple[int, int], sample_hz: float = 100.0) -> list[Ink]:
    """Write ``words`` on a clean page of ``page_size`` (width, height): one Ink per word in page pixels
    (before the photograph), in reading order. The writing shrinks (x-height x 0.92 per try) until it fits."""
    W, H = page_size
    inks = [write_word(w, style, rng, sample_hz) for w, _ in words]
    breaks = [b for _, b in words]
    boxes = [k.bbox() for k in inks]
    # word-level vertical offsets and line parameters are drawn once, so shrinking does not change them
    word_dy = rng.normal(0, 0.06 * style.jitter, len(inks))
    space_jit = rng.normal(0, 0.15, len(inks))
    line_slopes = rng.normal(math.tan(math.radians(style.baseline_slope_deg)), 0.006, 200)
    wander_ph = rng.uniform(0, 2 * math.pi, (200, 2))
    xh = style.x_height_px
    for _ in range(40):
        placed = _place(boxes, breaks, style, xh, W, H, word_dy, space_jit)
        if placed is not None:
            break
        xh *= 0.92
    else:
        raise ValueError(f"layout_page: {len(words)} words do not fit on a {W} x {H} page")
    out = []
    x_left = style.margin_left * W
    for ink, (line, dx, dy) in zip(inks, placed):
        strokes = []
        for s in ink.strokes:
            q = s.copy()
            q[:, 0] = s[:, 0] * xh + dx
            q[:, 1] = s[:, 1] * xh + dy
            rel = (q[:, 0] - x_left) / W
            q[:, 1] += (line_slopes[line % 200] * (q[:, 0] - x_left)
                        + style.baseline_wander * xh * (np.sin(2 * math.pi * 1.3 * rel + wander_ph[line % 200, 0])
                                                        + 0.5 * np.sin(2 * math.pi * 3.1 * rel
                                                                       + wander_ph[line % 200, 1])))
            strokes.append(q)
        out.append(Ink(tuple(strokes)))
    return out


def _place(boxes, breaks, style, xh, W, H, word_dy, space_jit):
    """(line, dx, dy) per word in page pixels, or None when the text does not fit."""
    x_left = style.margin_left * W
    x_right = W * (1 - max(style.margin_left * 0.7, 0.05))
    y = style.margin_top * H + 2.4 * xh   # first baseline
    bottom = H * (1 - 0.06) - 1.4 * xh
    line = 0
    x = x_left
    first_body = True
    placed = []
    new_line = True
    for i, (b, brk) in enumerate(zip(boxes, breaks)):
        w = (b[2] - b[0]) * xh
        if not new_line and x + w > x_right:
            line += 1
            y += style.line_spacing * xh
            x = x_left
            new_line = True
        if new_line and i > 0 and breaks[i - 1] and first_body:
            x += style.indent * W
            first_body = False
        if w > x_right - x_left or y > bottom:
            return None
        placed.append((line, x - b[0] * xh, y + word_dy[i] * xh))
        x += w + max(style.word_spacing + space_jit[i], 0.35) * xh
        new_line = False
        if brk:
            line += 1
            y += style.line_spacing * xh
            x = x_left
            new_line = True
    return placed


def clean_page(inks: list[InkLike], page_size: tuple[int, int], pen_width: float,
               supersample: int = _SUPERSAMPLE) -> np.ndarray:
    """White (255) uint8 (H, W) page with the inks drawn in black (0), anti-aliased, supersampled."""
    W, H = page_size
    s = int(supersample)
    canvas = np.full((H * s, W * s), 255, np.uint8)
    for k in inks:
        draw_ink(canvas, k, pen_width=pen_width, value=0, scale=s)
    if s == 1:
        return canvas
    return cv2.resize(canvas, (W, H), interpolation=cv2.INTER_AREA)
