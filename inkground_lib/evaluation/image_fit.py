"""Encoding a prompt image to fit a provider's limits: PNG as built, else JPEG at falling quality, else
downscaled (then PNG, then JPEG again), until every limit holds.

The grid is drawn before encoding (:mod:`inkground_lib.evaluation.prompt`) and an answer is mapped to the page
through the grid and the page's own size, never through the pixels of the image sent, so a re-encoded or
downscaled image changes no coordinate: only how sharply the model sees the page.
"""

from __future__ import annotations

import base64
import hashlib
import io
import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
from PIL import Image

JPEG_QUALITIES = (90, 80, 70, 60, 50)
"""JPEG qualities tried, best first, before an image is downscaled."""

DOWNSCALE_STEP = 0.8
"""Each downscale multiplies both sides by this factor."""

MIN_SIDE = 64
"""Below this long side (pixels) an image is not shrunk further: the limits cannot be met."""


class ImageFitError(ValueError):
    """An image that cannot be made to fit (a limit below what any usable image needs)."""


@dataclass(frozen=True)
class SentImage:
    """One image as sent: ``data`` (encoded bytes), ``format`` ("png" or "jpeg"), JPEG ``quality`` (None for
    PNG), ``scale`` (sent size / built size, <= 1), ``size`` (width, height) in pixels as sent, ``b64_bytes``
    (length of its base64 text) and ``changed`` (False: the PNG as built)."""

    data: bytes
    format: str
    quality: Optional[int]
    scale: float
    size: tuple
    changed: bool

    @property
    def media_type(self) -> str:
        return "image/png" if self.format == "png" else "image/jpeg"

    @property
    def b64_bytes(self) -> int:
        return b64_len(len(self.data))

    def b64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")

    def record(self) -> dict:
        """What the cache record keeps of it (format, bytes, scale, size, quality)."""
        return {"format": self.format, "bytes": len(self.data), "b64_bytes": self.b64_bytes,
                "scale": round(float(self.scale), 6), "size": [int(self.size[0]), int(self.size[1])],
                "quality": self.quality}


def b64_len(n: int) -> int:
    """Length of the base64 text of ``n`` bytes.

    >>> b64_len(0), b64_len(1), b64_len(3), b64_len(4)
    (0, 4, 4, 8)
    """
    return 4 * math.ceil(n / 3)


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk, without decoding the image."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        with Image.open(io.BytesIO(data)) as im:
            return im.size
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def _fits(n_bytes: int, size, max_b64: Optional[int], max_side: Optional[int], max_pixels: Optional[int]) -> bool:
    w, h = size
    return ((max_b64 is None or b64_len(n_bytes) <= max_b64) and (max_side is None or max(w, h) <= max_side)
            and (max_pixels is None or w * h <= max_pixels))


def _encode(im: Image.Image, fmt: str, quality: Optional[int] = None) -> bytes:
    buf = io.BytesIO()
    if fmt == "png":
        im.save(buf, format="PNG", compress_level=6, optimize=False)
    else:  # deterministic: no optimisation pass, fixed subsampling
        im.save(buf, format="JPEG", quality=int(quality), subsampling=2, optimize=False)
    return buf.getvalue()


_CACHE: "OrderedDict[tuple, SentImage]" = OrderedDict()
_CACHE_SIZE = 16


def _fit(data: bytes, max_b64, max_side, max_pixels) -> SentImage:
    size = png_size(data)
    if _fits(len(data), size, max_b64, max_side, max_pixels):
        return SentImage(data, "png", None, 1.0, tuple(size), False)
    with Image.open(io.BytesIO(data)) as src:
        src.load()
        rgb = src.convert("RGB")
    w0, h0 = rgb.size
    scale = 1.0
    if max_side is not None and max(w0, h0) > max_side:
        scale = max_side / max(w0, h0)
    if max_pixels is not None and w0 * h0 * scale * scale > max_pixels:
        scale = min(scale, math.sqrt(max_pixels / (w0 * h0)))
    while True:
        w, h = max(1, math.floor(w0 * scale)), max(1, math.floor(h0 * scale))
        im = rgb if (w, h) == (w0, h0) else rgb.resize((w, h), Image.Resampling.LANCZOS)
        if scale < 1.0:  # the full-size PNG was tried first
            enc = _encode(im, "png")
            if _fits(len(enc), (w, h), max_b64, max_side, max_pixels):
                return SentImage(enc, "png", None, w / w0, (w, h), True)
        for q in JPEG_QUALITIES:
            enc = _encode(im, "jpeg", q)
            if _fits(len(enc), (w, h), max_b64, max_side, max_pixels):
                return SentImage(enc, "jpeg", q, w / w0, (w, h), True)
        if max(w, h) * DOWNSCALE_STEP < MIN_SIDE:
            raise ImageFitError(f"an image of {w0} x {h0} px cannot be made to fit {max_b64} bytes of base64 even "
                                f"at {w} x {h} px JPEG quality {JPEG_QUALITIES[-1]}")
        scale *= DOWNSCALE_STEP


def fit_image(data: bytes, max_b64_bytes: Optional[int] = None, max_side: Optional[int] = None,
              max_pixels: Optional[int] = None) -> SentImage:
    """``data`` (a PNG) as it is sent under the limits: the PNG itself when it fits, else JPEG at qualities
    :data:`JPEG_QUALITIES`, else downscaled by :data:`DOWNSCALE_STEP` per step (PNG, then JPEG again). Each
    limit may be None (none). Deterministic (same bytes in, same bytes out); the last 16 results are kept.

    >>> from inkground_lib.evaluation.prompt import png_bytes
    >>> small = png_bytes(np.zeros((10, 20, 3), np.uint8))
    >>> fit_image(small).changed, fit_image(small, max_side=10).size
    (False, (10, 5))
    """
    if not isinstance(data, (bytes, bytearray)):
        raise ImageFitError(f"an image part must be PNG bytes, got {type(data).__name__}")
    data = bytes(data)
    size = png_size(data)
    if _fits(len(data), size, max_b64_bytes, max_side, max_pixels):  # the common case: sent as built
        return SentImage(data, "png", None, 1.0, tuple(size), False)
    key = (hashlib.sha256(data).digest(), max_b64_bytes, max_side, max_pixels)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    out = _CACHE[key] = _fit(data, max_b64_bytes, max_side, max_pixels)
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return out


def png_bound(width: int, height: int) -> int:
    """The most bytes :func:`~inkground_lib.evaluation.prompt.png_bytes` can take for an RGB image of ``width`` x
    ``height`` pixels, whatever its content: the filtered rows (one filter byte and 3 bytes a pixel per row) under
    zlib's conservative bound on deflate's output, "sourceLen + ((sourceLen + 7) >> 3) + ((sourceLen + 63) >> 6)
    + 5" plus its 6-byte wrapper (``deflateBound`` in zlib's deflate.c, the bound for any settings), plus PNG's
    signature, IHDR and IEND, and 12 bytes of chunk header per 4,096 bytes of data (Pillow writes IDAT chunks of at
    least 65,536 bytes: ``ImageFile.MAXBLOCK``) and 256 bytes to spare. So an image whose bound fits a limit is
    known to fit it without being encoded.

    >>> png_bound(1, 1) > 0, png_bound(1000, 1000) < 3.5e6
    (True, True)
    """
    raw = int(height) * (3 * int(width) + 1)
    deflated = raw + ((raw + 7) >> 3) + ((raw + 63) >> 6) + 5 + 6
    return deflated + 12 * (deflated // 4096 + 1) + 8 + 25 + 12 + 256


def request_budget(limits, n_images: int, text_bytes: int = 0) -> Optional[int]:
    """The byte budget (base64 text) of each image of a request of ``n_images`` images and ``text_bytes`` of text
    under ``limits`` (a :class:`~inkground_lib.evaluation.systems.providers.ImageLimits`): the per-image limit
    and, where the request has a size limit, an equal share of what the text leaves of it (None: no budget).
    ImageFitError when the request has more images than the provider takes or its text leaves no room."""
    if limits.max_images is not None and n_images > limits.max_images:
        raise ImageFitError(f"the request has {n_images} images; the provider takes at most {limits.max_images}")
    budget = limits.max_image_b64_bytes
    if limits.max_request_bytes is not None and n_images:
        share = (int(limits.max_request_bytes) - int(text_bytes) - 64 * 1024) // n_images  # 64 KiB for the JSON
        if share <= 0:
            raise ImageFitError(f"the request's text leaves no room for images under {limits.max_request_bytes} bytes")
        budget = share if budget is None else min(budget, share)
    return budget


def fits_as_built(size, budget: Optional[int], limits) -> bool:
    """True when an image of ``size`` (W, H) is sure to be sent as built under ``limits`` and a byte ``budget``
    (:func:`request_budget`), known from its size alone (:func:`png_bound`); False when only encoding it can
    tell (or it does not fit)."""
    w, h = (int(v) for v in size)
    return _fits(png_bound(w, h), (w, h), budget, limits.max_side, limits.max_pixels)


def fit_request_images(images: Sequence[bytes], limits, text_bytes: int = 0) -> list[SentImage]:
    """Every image of one request fitted to ``limits`` (a :class:`~inkground_lib.evaluation.systems.providers.ImageLimits`):
    each image's own byte budget is :func:`request_budget`. ImageFitError when the request has more images than
    the provider takes."""
    budget = request_budget(limits, len(images), text_bytes)
    return [fit_image(b, budget, limits.max_side, limits.max_pixels) for b in images]


def fit_prompt_images(images: Sequence, limits, text_bytes: int = 0) -> Optional[list[SentImage]]:
    """Like :func:`fit_request_images` for images not encoded yet (objects with ``size`` (W, H) and ``png()``,
    :class:`~inkground_lib.evaluation.prompt_parts.PromptImage`): None when every image is sure to be sent as
    built (:func:`fits_as_built`: nothing is encoded), else each image as sent (its PNG encoded and fitted)."""
    budget = request_budget(limits, len(images), text_bytes)
    if all(fits_as_built(im.size, budget, limits) for im in images):
        return None
    return [fit_image(im.png(), budget, limits.max_side, limits.max_pixels) for im in images]


def image_array(sent: SentImage) -> np.ndarray:
    """The image as sent, decoded (uint8 RGB)."""
    with Image.open(io.BytesIO(sent.data)) as im:
        return np.asarray(im.convert("RGB"))
