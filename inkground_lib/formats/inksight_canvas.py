"""InkSight's 224 x 224 canvas: where a word crop sits on it, and the mapping of canvas points back to a box.

InkSight's coordinates (the model's ink tokens and the InkML files of its published derenderings) are pixels of
its square input canvas. The public notebook (google-research/inksight colab.ipynb, checked 2026-11-30; line
numbers of the .ipynb at commit 4c5a66e) places a crop of w x h pixels on it with ``rotate_crop_scale_and_pad``,
lines 764-790: ratio = min(224 / w, 224 / h), the crop resized to ``int(w * ratio) x int(h * ratio)`` and pasted
at dx = (224 - new w) // 2, dy = (224 - new h) // 2 (black padding); ``unpad_unscale_unrotate_uncrop``, lines
996-1010, maps a canvas point back: u = (x224 - dx) / ratio (crop pixels), x = crop x0 + u. Conventions: pixels,
origin top-left, y down, on the canvas and on the page alike.

This module holds the pure geometry, below every user of it: the InkSight derenderer
(:mod:`inkground_lib.components.derenderers.inksight`) and the InkML reader's InkSight dialect
(:mod:`inkground_lib.formats.inkml`) both import it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

INKSIGHT_SIZE = 224
"""Side of InkSight's square input canvas and of its coordinate space (pixels)."""


@dataclass(frozen=True)
class CanvasPlacement:
    """Where a crop of ``crop_size`` = (w, h) pixels sits on the 224 canvas: scaled by ``ratio`` to
    ``new_size`` = (int(w * ratio), int(h * ratio)) pixels, its top-left corner at (``dx``, ``dy``); a crop
    pixel (u, v) lands on x224 = u * ratio + dx, y224 = v * ratio + dy."""

    ratio: float
    dx: int
    dy: int
    crop_size: tuple[int, int]
    new_size: tuple[int, int]


def canvas_placement(crop_size: Sequence[int]) -> CanvasPlacement:
    """The notebook's placement of a crop of (w, h) pixels (positive whole numbers) on the 224 canvas.

    >>> p = canvas_placement((448, 112))
    >>> (p.ratio, p.new_size, p.dx, p.dy)
    (0.5, (224, 56), 0, 84)
    """
    w, h = (int(v) for v in crop_size)
    if w < 1 or h < 1:
        raise ValueError(f"canvas_placement: crop size must be positive whole pixels, got {tuple(crop_size)}")
    ratio = min(INKSIGHT_SIZE / w, INKSIGHT_SIZE / h)
    nw, nh = int(w * ratio), int(h * ratio)
    return CanvasPlacement(float(ratio), (INKSIGHT_SIZE - nw) // 2, (INKSIGHT_SIZE - nh) // 2, (w, h), (nw, nh))


def canvas_to_box(strokes224: Sequence[np.ndarray], placement: CanvasPlacement,
                  box: Sequence[float]) -> list[np.ndarray]:
    """Canvas strokes ((n, 2) or (n, 3) arrays, 224-canvas pixels) mapped into ``box`` = (x0, y0, x1, y1), the
    crop's place in page pixels, as the notebook maps them: u = (x224 - dx) / ratio (crop pixels), x = x0 + u
    (a box of another size than the crop scales u by (x1 - x0) / w); likewise y. Returns (n, 2) arrays (the
    caller keeps any third column).

    >>> p = canvas_placement((448, 112))
    >>> canvas_to_box([np.array([[0.0, 84.0], [224.0, 140.0]])], p, (10, 20, 458, 132))[0].tolist()
    [[10.0, 20.0], [458.0, 132.0]]
    """
    x0, y0, x1, y1 = (float(v) for v in box)
    if not all(math.isfinite(v) for v in (x0, y0, x1, y1)) or not (x1 > x0 and y1 > y0):
        raise ValueError(f"canvas_to_box: box must be 4 finite numbers with x1 > x0 and y1 > y0, got {tuple(box)}")
    w, h = placement.crop_size
    out = []
    for s in strokes224:
        s = np.asarray(s, np.float64)
        s = s.reshape(-1, s.shape[-1] if s.ndim == 2 else 2)
        u = (s[:, 0] - placement.dx) / placement.ratio
        v = (s[:, 1] - placement.dy) / placement.ratio
        out.append(np.column_stack([x0 + u * ((x1 - x0) / w), y0 + v * ((y1 - y0) / h)]))
    return out
