"""What every derenderer shares: the protocol, its error and the word crop."""

from __future__ import annotations

import math
from typing import Optional, Protocol, Sequence, runtime_checkable

import cv2
import numpy as np

from inkground_lib.core.ink import Ink

Box = tuple[float, float, float, float]


class DerenderError(ValueError):
    """Bad input to a derenderer (crop, box) or a derenderer that cannot run (missing package/weights)."""


@runtime_checkable
class Derenderer(Protocol):
    """Anything that turns a word crop into an ink in page pixels (see the module doc for conventions)."""

    name: str

    def derender(self, crop: np.ndarray, crop_box: Box, text: Optional[str] = None) -> Ink:
        ...


def check_box(box, where: str = "crop_box") -> Box:
    try:
        vals = tuple(float(v) for v in box)
    except (TypeError, ValueError):
        raise DerenderError(f"{where}: expected 4 numbers (x0, y0, x1, y1), got {box!r}") from None
    if len(vals) != 4 or not all(math.isfinite(v) for v in vals):
        raise DerenderError(f"{where}: expected 4 finite numbers (x0, y0, x1, y1), got {box!r}")
    if vals[2] <= vals[0] or vals[3] <= vals[1]:
        raise DerenderError(f"{where}: x1 > x0 and y1 > y0 required, got {vals}")
    return vals  # type: ignore[return-value]


def check_image(crop, where: str = "crop", min_side: int = 1) -> np.ndarray:
    """``crop`` as a uint8 (h, w) or (h, w, 3) array (an alpha channel dropped); DerenderError naming ``where``
    for another shape, another dtype, or a side below ``min_side`` pixels."""
    a = np.asarray(crop)
    if a.ndim == 3 and a.shape[2] == 4:
        a = a[:, :, :3]
    if not (a.ndim == 2 or (a.ndim == 3 and a.shape[2] == 3)):
        raise DerenderError(f"{where}: expected an (h, w), (h, w, 3) or (h, w, 4) image, got shape {a.shape}")
    if a.dtype != np.uint8:
        raise DerenderError(f"{where}: expected uint8 pixels, got {a.dtype}")
    if a.shape[0] < min_side or a.shape[1] < min_side:
        raise DerenderError(f"{where}: image too small ({a.shape[1]} x {a.shape[0]} px; at least {min_side} "
                            f"px a side)")
    return a


def as_gray(crop, where: str = "crop") -> np.ndarray:
    a = check_image(crop, where, min_side=2)
    if a.ndim == 3:
        a = cv2.cvtColor(np.ascontiguousarray(a), cv2.COLOR_RGB2GRAY)
    return a


def crop_word(photo: np.ndarray, box: Sequence[float], grow: float = 0.1,
              min_margin: float = 2.0) -> tuple[np.ndarray, Box]:
    """Cut a word out of a page photo, as InkSight's full-page use does.

    ``box`` (x0, y0, x1, y1, page pixels) is grown about its centre by ``grow`` (0.1: width and height
    +10%), with at least ``min_margin`` pixels added on each side (room for the pen width around a tight
    trajectory box), rounded outwards to whole pixels and clipped to the page. Returns ``(crop,
    crop_box)`` where ``crop = photo[y0:y1, x0:x1]`` (a view) and ``crop_box = (x0, y0, x1, y1)`` as
    floats with ``x1 - x0 == w`` and ``y1 - y0 == h``.
    """
    photo = np.asarray(photo)
    if photo.ndim not in (2, 3):
        raise DerenderError(f"photo: expected an (H, W) or (H, W, 3) image, got shape {photo.shape}")
    if grow < 0 or min_margin < 0:
        raise DerenderError(f"crop_word: grow and min_margin must be >= 0, got {grow}, {min_margin}")
    x0, y0, x1, y1 = check_box(box, "box")
    H, W = photo.shape[:2]
    mx = max((x1 - x0) * grow / 2, min_margin)
    my = max((y1 - y0) * grow / 2, min_margin)
    cx0 = max(int(math.floor(x0 - mx)), 0)
    cy0 = max(int(math.floor(y0 - my)), 0)
    cx1 = min(int(math.ceil(x1 + mx)), W)
    cy1 = min(int(math.ceil(y1 + my)), H)
    if cx1 - cx0 < 2 or cy1 - cy0 < 2:
        raise DerenderError(f"box {tuple(box)}: lies (almost) outside the {W} x {H} page")
    return photo[cy0:cy1, cx0:cx1], (float(cx0), float(cy0), float(cx1), float(cy1))
