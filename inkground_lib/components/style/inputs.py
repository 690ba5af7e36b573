"""The Style classifier's input images: an ink rendered and fitted into height x width pixels, as uint8
darkness or float32 in [0, 1], and the training's random shifts."""

from __future__ import annotations

from typing import Sequence

import cv2
import numpy as np
import torch

from inkground_lib.components.style.params import StyleParams
from inkground_lib.core.ink import InkLike, as_ink
from inkground_lib.core.render import render_ink


def ink_tensor(ink: InkLike, params: StyleParams = StyleParams()) -> np.ndarray:
    """The network input for one ink: float32 (1, height, width), 1 = ink, 0 = paper (the book's design page);
    equal to :func:`ink_darkness` / 255."""
    return ink_darkness(ink, params).astype(np.float32) / np.float32(255.0)


def ink_darkness(ink: InkLike, params: StyleParams = StyleParams()) -> np.ndarray:
    """The network input for one ink in bytes: uint8 (1, height, width), 255 - the render's grey level, 0 =
    paper (a quarter of :func:`ink_tensor`'s memory: training keeps every image this way)."""
    img = render_ink(as_ink(ink), params.render)
    H, W = int(params.height), int(params.width)
    h, w = img.shape
    s = min(H / h, W / w)
    if s != 1.0:
        nh, nw = max(1, min(H, int(round(h * s)))), max(1, min(W, int(round(w * s))))
        img = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR)
        h, w = img.shape
    out = np.zeros((1, H, W), np.uint8)
    y0, x0 = (H - h) // 2, (W - w) // 2
    out[0, y0:y0 + h, x0:x0 + w] = 255 - img
    return out


def inks_tensor(inks: Sequence[InkLike], params: StyleParams = StyleParams(), where: str = "ink") -> torch.Tensor:
    """Stack of :func:`ink_tensor` as a float32 tensor (n, 1, height, width)."""
    return as_float(inks_darkness(inks, params, where))


def inks_darkness(inks: Sequence[InkLike], params: StyleParams = StyleParams(), where: str = "ink") -> torch.Tensor:
    """Stack of :func:`ink_darkness` as a uint8 tensor (n, 1, height, width)."""
    arrs = [ink_darkness(as_ink(k, f"{where} {i}"), params) for i, k in enumerate(inks)]
    if not arrs:
        return torch.zeros((0, 1, params.height, params.width), dtype=torch.uint8)
    return torch.from_numpy(np.stack(arrs))


def as_float(x: torch.Tensor) -> torch.Tensor:
    """uint8 darkness (:func:`inks_darkness`) -> the float32 network input in [0, 1] (x / 255)."""
    return x.to(torch.float32) / 255.0


def random_shifts(x: torch.Tensor, shift: int, gen: torch.Generator) -> torch.Tensor:
    """Shift each image by an integer offset in [-shift, shift] (rows and cols), filling with paper (0): image i
    becomes the window at (dy_i, dx_i) of itself padded by ``shift``, the offsets drawn from ``gen`` as one
    (n, 2) tensor of integers in [0, 2 * shift]. The batch is one indexing of a view of all its windows (each
    pixel copied, never computed: the same values as a loop over the images).

    >>> x = torch.arange(1.0, 5.0).reshape(1, 1, 2, 2)
    >>> gen = torch.Generator().manual_seed(0)
    >>> torch.randint(0, 3, (1, 2), generator=torch.Generator().manual_seed(0)).tolist()  # dy, dx
    [[2, 0]]
    >>> random_shifts(x, 1, gen)[0, 0].tolist()  # one row up (dy - shift = 1), one column right
    [[0.0, 3.0], [0.0, 0.0]]
    """
    if shift <= 0:
        return x
    n, _, H, W = x.shape
    padded = torch.nn.functional.pad(x, (shift, shift, shift, shift))
    off = torch.randint(0, 2 * shift + 1, (n, 2), generator=gen)
    windows = padded.unfold(2, H, 1).unfold(3, W, 1)  # a view (n, channels, 2 shift + 1, 2 shift + 1, H, W)
    return windows[torch.arange(n), :, off[:, 0], off[:, 1]].contiguous()  # (n, channels, H, W)
