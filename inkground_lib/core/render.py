"""Rendering inks to images (for OCR and Style) and drawing them onto pages."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from inkground_lib.core.ink import InkLike, as_ink

_SHIFT = 4  # cv2 sub-pixel bits: coordinates are drawn at 1/16 px precision


@dataclass(frozen=True)
class RenderSpec:
    """Renderer settings: output height, pen width and padding in output pixels; maximum width."""

    height: int = 64
    pen_width: float = 3.0
    padding: int = 6
    max_width: int = 1024


DEFAULT_RENDER = RenderSpec()


def render_config(spec: RenderSpec = DEFAULT_RENDER) -> dict:
    """What identifies a render: the spec's fields and a hash of this module's source (a code change
    invalidates OCR texts cached for renders)."""
    import dataclasses
    import hashlib
    from pathlib import Path

    return {"spec": dataclasses.asdict(spec),
            "source": hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]}


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
    # centre the scaled ink in the canvas, then draw it with draw_ink (supersampled: true pen width)
    ox = (width - bw * scale) / 2 - x0 * scale
    oy = (h - bh * scale) / 2 - y0 * scale
    draw_ink(img, ink.transformed(scale, ox, oy), pen_width=float(spec.pen_width))
    return img


_AA = 4  # draw_ink supersampling factor


def _cv_thickness(width: float) -> tuple[int, float]:
    """OpenCV thickness for an anti-aliased line ``width`` px wide, and the width it really gives.

    cv2's LINE_AA lines cover about ``2 * (t // 2) + 1.43`` px for thickness t >= 2 (and 1.35 px for t = 1),
    so an even thickness is chosen; width below ~2 px is left to the caller's supersampling."""
    t = max(int(2 * round((width - 1.43) / 2)), 0)
    if t == 0:
        return 1, 1.35
    return t, t + 1.43


def draw_ink(canvas: np.ndarray, ink: InkLike, *, pen_width: float, value: int = 0,
             scale: float = 1.0) -> np.ndarray:
    """Draw ``ink`` (page pixels) onto a page ``canvas`` in place and return it.

    ``canvas`` is a uint8 (H, W) grayscale array (e.g. white paper, 255). Strokes are anti-aliased polylines
    of ``value`` (0 = black) whose cross-section covers ``pen_width`` page pixels (within ~0.25 px; pen
    widths below ~0.6 px draw as ~0.35 px); a one-point (or zero-length) stroke is a round dot of that
    diameter. Ink is composited over the canvas (coverage c: ``canvas = canvas * (1 - c) + value * c``).
    Each ink is drawn 4x supersampled in its own bounding box and area-averaged down, so widths are not
    limited to OpenCV's integer thicknesses.

    ``scale`` draws on a canvas ``scale`` times finer than the page: page coordinate x lands on canvas
    coordinate ``x * scale + (scale - 1) / 2`` (pixel centres at integer coordinates on both grids, so a
    canvas drawn at an integer ``scale`` and area-averaged down by that factor lines up with the page) and
    the pen is ``pen_width * scale`` canvas pixels wide. Strokes outside the canvas are clipped.
    """
    if not isinstance(canvas, np.ndarray) or canvas.dtype != np.uint8 or canvas.ndim != 2:
        raise ValueError(f"draw_ink: canvas must be a uint8 (H, W) array, got "
                         f"{getattr(canvas, 'dtype', type(canvas))} with shape {getattr(canvas, 'shape', None)}")
    if not (np.isfinite(pen_width) and pen_width > 0):
        raise ValueError(f"draw_ink: pen_width must be a positive number, got {pen_width!r}")
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"draw_ink: scale must be a positive number, got {scale!r}")
    if not 0 <= int(value) <= 255:
        raise ValueError(f"draw_ink: value must be in 0..255, got {value!r}")
    ink = as_ink(ink)
    if ink.n_points == 0:
        return canvas
    H, W = canvas.shape
    w = pen_width * scale                 # canvas pixels
    k = _AA
    thick, _ = _cv_thickness(w * k)
    pts_all = ink.points() * scale + (scale - 1.0) / 2.0
    pad = w / 2 + 2
    x0 = int(max(np.floor(pts_all[:, 0].min() - pad), 0))
    y0 = int(max(np.floor(pts_all[:, 1].min() - pad), 0))
    x1 = int(min(np.ceil(pts_all[:, 0].max() + pad) + 1, W))
    y1 = int(min(np.ceil(pts_all[:, 1].max() + pad) + 1, H))
    if x0 >= x1 or y0 >= y1:
        return canvas
    patch = np.zeros(((y1 - y0) * k, (x1 - x0) * k), np.uint8)   # coverage 0..255, supersampled
    off = (scale - 1.0) / 2.0
    for s in ink.strokes:
        if len(s) == 0:
            continue
        # canvas coordinate c -> patch coordinate (c - origin) * k + (k - 1) / 2
        px = ((s[:, 0] * scale + off - x0) * k + (k - 1) / 2.0)
        py = ((s[:, 1] * scale + off - y0) * k + (k - 1) / 2.0)
        fixed = np.round(np.column_stack([px, py]) * (1 << _SHIFT)).astype(np.int32)
        if len(fixed) == 1 or (fixed == fixed[0]).all():
            cx, cy = fixed[0]
            r = max(int(round((w * k - 1.0) / 2 * (1 << _SHIFT))), 1 << (_SHIFT - 1))
            cv2.circle(patch, (int(cx), int(cy)), r, 255, -1, cv2.LINE_AA, _SHIFT)
        else:
            cv2.polylines(patch, [fixed.reshape(-1, 1, 2)], False, 255, thick, cv2.LINE_AA, _SHIFT)
    cov = cv2.resize(patch, (x1 - x0, y1 - y0), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
    roi = canvas[y0:y1, x0:x1].astype(np.float32)
    canvas[y0:y1, x0:x1] = np.rint(roi + (float(value) - roi) * cov).astype(np.uint8)
    return canvas


def crop_box(box, page_size, margin: float = 0.3) -> tuple[int, int, int, int]:
    """An integer crop box around ``box`` for figures.

    ``box`` is (x0, y0, x1, y1) in page pixels, ``page_size`` is (width, height) of the page photo. The box
    grows on every side by ``margin`` times its larger side (at least 2 px), is rounded outwards and clipped
    to the page, so ``image[y0:y1, x0:x1]`` is the crop. Returns (x0, y0, x1, y1) ints with x0 < x1, y0 < y1.
    """
    x0, y0, x1, y1 = (float(v) for v in box)
    W, H = (int(v) for v in page_size)
    if W <= 0 or H <= 0:
        raise ValueError(f"crop_box: page_size must be positive (width, height), got {page_size!r}")
    if not (np.isfinite([x0, y0, x1, y1]).all() and x0 <= x1 and y0 <= y1):
        raise ValueError(f"crop_box: box must be finite (x0, y0, x1, y1) with x0 <= x1 and y0 <= y1, got {box!r}")
    m = max(margin * max(x1 - x0, y1 - y0), 2.0)
    cx0 = int(np.clip(np.floor(x0 - m), 0, W - 1))
    cy0 = int(np.clip(np.floor(y0 - m), 0, H - 1))
    cx1 = int(np.clip(np.ceil(x1 + m) + 1, cx0 + 1, W))
    cy1 = int(np.clip(np.ceil(y1 + m) + 1, cy0 + 1, H))
    return cx0, cy0, cx1, cy1
