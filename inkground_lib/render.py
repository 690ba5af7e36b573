"""The one renderer of inks to images (for OCR, Style and figures), and stroke-order overlays.

Renderer (used for every AR, CR and Style number):

* The ink is scaled uniformly so that its bounding-box height fills ``height - 2 * padding`` pixels
  (an ink flatter than a quarter of its width is scaled by a quarter of its width instead, so a dash stays a
  dash); the image is ``height`` pixels tall and as wide as the scaled ink plus ``2 * padding``, at most
  ``max_width`` (wider inks are shrunk to fit).
* Strokes are drawn as anti-aliased polylines ``pen_width`` pixels wide, black (0) on white (255); a
  one-point stroke is a round dot of the same width.
* An empty ink renders as a blank white ``height`` x ``height`` image (the design's invalid-output rule).

Returns uint8 grayscale arrays of shape (rows, cols).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from .ink import InkLike, as_ink

_SHIFT = 4  # cv2 sub-pixel bits: coordinates are drawn at 1/16 px precision


@dataclass(frozen=True)
class RenderSpec:
    """Renderer settings: output height, pen width and padding in output pixels; maximum width."""

    height: int = 64
    pen_width: float = 3.0
    padding: int = 6
    max_width: int = 1024


DEFAULT_RENDER = RenderSpec()


def render_ink(ink: InkLike, spec: RenderSpec = DEFAULT_RENDER) -> np.ndarray:
    """Render ``ink`` (page pixels) to a uint8 grayscale image, black ink on white; see module doc."""
    ink = as_ink(ink)
    h, pad = int(spec.height), int(spec.padding)
    inner = h - 2 * pad
    if inner <= 0:
        raise ValueError("RenderSpec: height must exceed 2 * padding")
    if ink.n_points == 0:
        return np.full((h, h), 255, np.uint8)
    x0, y0, x1, y1 = ink.bbox()
    bw, bh = x1 - x0, y1 - y0
    extent = max(bh, 0.25 * bw)
    scale = inner / extent if extent > 0 else 1.0
    width = int(np.ceil(bw * scale)) + 2 * pad
    if width > spec.max_width:
        scale *= (spec.max_width - 2 * pad) / max(bw * scale, 1e-9)
        width = spec.max_width
    width = max(width, h if bw == 0 else 2 * pad + 1)
    img = np.full((h, width), 255, np.uint8)
    # centre the scaled ink in the canvas
    ox = (width - bw * scale) / 2 - x0 * scale
    oy = (h - bh * scale) / 2 - y0 * scale
    thick = max(int(round(spec.pen_width)), 1)
    for s in ink.strokes:
        pts = np.column_stack([s[:, 0] * scale + ox, s[:, 1] * scale + oy])
        fixed = np.round(pts * (1 << _SHIFT)).astype(np.int32)
        if len(fixed) == 1 or (fixed == fixed[0]).all():
            cx, cy = fixed[0]
            cv2.circle(img, (int(cx), int(cy)), int(round(thick / 2 * (1 << _SHIFT))), 0, -1,
                       cv2.LINE_AA, _SHIFT)
        else:
            cv2.polylines(img, [fixed.reshape(-1, 1, 2)], False, 0, thick, cv2.LINE_AA, _SHIFT)
    return img
