"""Photographing a clean page: perspective, paper, light, blur, noise and JPEG."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

import cv2
import numpy as np

from inkground_lib.core.ink import Ink, InkLike, as_ink
from inkground_lib.datasets.synth.writers import INK_COLOUR_SHARES, INK_COLOURS


@dataclass(frozen=True)
class PhotoEffects:
    """Strengths of the photograph effects (0 turns one off; 1 is the default look).

    paper: paper tint and texture; frame: how far the sheet may sit inside the photo (background visible);
    perspective: corner displacement (1 -> up to ~2.5% of the size); rotation_deg: maximal |rotation|;
    light: uneven light (gradient, vignette, soft shadow); blur: defocus (1 -> sigma ~0.7 px);
    noise: sensor noise (1 -> std ~3 grey levels); ink_colour: 0 draws black ink, 1 the pen colour."""

    paper: float = 1.0
    frame: float = 1.0
    perspective: float = 1.0
    rotation_deg: float = 1.5
    light: float = 1.0
    blur: float = 1.0
    noise: float = 1.0
    ink_colour: float = 1.0

    @classmethod
    def none(cls) -> "PhotoEffects":
        """A clean page: identity homography, white paper, black ink, no blur, light or noise."""
        return cls(paper=0.0, frame=0.0, perspective=0.0, rotation_deg=0.0, light=0.0, blur=0.0, noise=0.0,
                   ink_colour=0.0)


def photo_homography(rng: np.random.Generator, effects: PhotoEffects, size: tuple[int, int]) -> np.ndarray:
    """The 3x3 homography H (clean page -> photo, both ``size`` = (width, height)) that :func:`photograph`
    draws first from ``rng``: the sheet shrunk into the frame, rotated slightly, corners displaced."""
    W, H = size
    src = np.array([[0, 0], [W - 1, 0], [W - 1, H - 1], [0, H - 1]], np.float64)
    shrink = 1.0 - effects.frame * rng.uniform(0.025, 0.06)
    ang = math.radians(effects.rotation_deg * rng.uniform(-1, 1))
    c = np.array([(W - 1) / 2, (H - 1) / 2]) + effects.frame * rng.uniform(-0.01, 0.01, 2) * [W, H]
    R = np.array([[math.cos(ang), -math.sin(ang)], [math.sin(ang), math.cos(ang)]])
    dst = (src - [(W - 1) / 2, (H - 1) / 2]) * shrink @ R.T + c
    dst = dst + effects.perspective * rng.uniform(-0.025, 0.025, (4, 2)) * [W, H] * 0.6
    # keep the sheet inside the photo
    lo = dst.min(axis=0)
    hi = dst.max(axis=0)
    fit = min(1.0, (W - 1) / max(hi[0] - lo[0], 1e-9), (H - 1) / max(hi[1] - lo[1], 1e-9))
    mid = (lo + hi) / 2
    dst = (dst - mid) * fit + np.clip(mid, [(hi[0] - lo[0]) * fit / 2, (hi[1] - lo[1]) * fit / 2],
                                      [W - 1 - (hi[0] - lo[0]) * fit / 2, H - 1 - (hi[1] - lo[1]) * fit / 2])
    Hm = cv2.getPerspectiveTransform(src.astype(np.float32), dst.astype(np.float32))
    return Hm / Hm[2, 2]


def _lowfreq(rng: np.random.Generator, shape: tuple[int, int], cells: int) -> np.ndarray:
    """Smooth random field of roughly unit std on ``shape`` from a ``cells``-wide grid."""
    h, w = shape
    gh, gw = max(int(round(cells * h / max(w, 1))), 2), max(cells, 2)
    g = rng.standard_normal((gh, gw)).astype(np.float32)
    return cv2.resize(g, (w, h), interpolation=cv2.INTER_CUBIC)


@lru_cache(maxsize=2)
def _noise_bank(h: int, w: int) -> np.ndarray:
    """A fixed (seeded) stack of noise planes, float32 (4, h, w) with unit std: planes 0-2 white noise, plane 3
    blurred (paper fibres). Page noise is cut from it at offsets drawn from the page's generator
    (deterministic, and much cheaper than fresh normals for every page)."""
    bank = np.empty((4, h, w), np.float32)
    bank[:3] = np.random.default_rng(20240611).standard_normal((3, h, w), dtype=np.float32)
    fib = cv2.GaussianBlur(bank[2], (0, 0), 0.8)
    bank[3] = fib / fib.std()
    bank.setflags(write=False)
    return bank


def _noise(rng: np.random.Generator, shape: tuple[int, int], fibre: bool = False) -> np.ndarray:
    """A (h, w) unit-std noise field (white, or blurred with ``fibre``): a random crop of the noise bank
    (a view with contiguous rows)."""
    h, w = shape
    bh, bw = max(2048, h + 257), max(2048, w + 257)
    bank = _noise_bank(bh, bw)
    k = 3 if fibre else int(rng.integers(3))
    oy, ox = int(rng.integers(bh - h)), int(rng.integers(bw - w))
    return bank[k, oy:oy + h, ox:ox + w]


def photograph(page_gray: np.ndarray, rng: np.random.Generator, effects: PhotoEffects = PhotoEffects(),
               ink_rgb: Optional[tuple] = None) -> tuple[np.ndarray, np.ndarray]:
    """Photograph a clean page. Returns (photo, H).

    ``page_gray`` is a uint8 (H, W) page: 255 = paper, darker = ink coverage (0 = full ink). ``photo`` is a
    uint8 (H, W, 3) RGB image of the same size; ``H`` (3x3, float64) maps clean-page coordinates (pixel
    centres at integers) to photo coordinates: move inks with :func:`apply_homography` (ink, H). The
    homography is the first thing drawn from ``rng`` (see :func:`photo_homography`). ``ink_rgb`` is the pen
    colour (RGB); None draws one (blue or black pens, mostly); ``effects.ink_colour`` = 0 gives black ink.
    Effects, in order: paper tint and texture, ink density variation (page space); the sheet warped by H
    onto a darker background with a soft shadow; uneven light (gradient, vignette, shadow blob, warm
    tint); blur; sensor noise. JPEG artefacts come from saving (see :func:`encode_jpeg`).
    """
    if not isinstance(page_gray, np.ndarray) or page_gray.dtype != np.uint8 or page_gray.ndim != 2:
        raise ValueError("photograph: page_gray must be a uint8 (H, W) array, got "
                         f"{getattr(page_gray, 'dtype', type(page_gray))} {getattr(page_gray, 'shape', None)}")
    Hh, Ww = page_gray.shape
    Hm = photo_homography(rng, effects, (Ww, Hh))
    e = effects
    ink, paper = _ink_and_paper(rng, e, ink_rgb)
    alpha = page_gray.astype(np.float32)
    alpha *= np.float32(-1.0 / 255.0)
    alpha += np.float32(1.0)                                   # ink coverage 0..1
    small = (max(Hh // 8, 2), max(Ww // 8, 2))
    shade = _paper_shade(alpha, rng, e, small)
    # colour planes (contiguous float32): sheet_c = paper_c * shade * (1 - alpha) + ink_c * alpha
    keep = shade * (1.0 - alpha)
    planes = [cv2.scaleAdd(alpha, float(ink[c]), keep * paper[c]) for c in range(3)]
    if e.frame > 0 or e.perspective > 0 or e.rotation_deg > 0:
        planes = _on_table(planes, Hm, rng, e)
    light, warm = _uneven_light(rng, e, small, (Ww, Hh))
    return _expose(planes, light, warm, rng, e), Hm


def _ink_and_paper(rng: np.random.Generator, e: PhotoEffects, ink_rgb: Optional[tuple]):
    """``(ink, paper)``: the pen's RGB (``ink_rgb``, or one drawn from :data:`INK_COLOURS` by
    :data:`INK_COLOUR_SHARES`), darkened to black as ``e.ink_colour`` goes to 0, and the paper's RGB (white,
    tinted by ``e.paper``); float32 (3,) arrays in grey levels 0-255."""
    if ink_rgb is None:
        names = list(INK_COLOURS)
        ink_rgb = INK_COLOURS[names[int(rng.choice(len(names), p=INK_COLOUR_SHARES))]]
    ink = np.asarray(ink_rgb, np.float32) * np.float32(e.ink_colour)
    paper = np.float32(255.0) - np.float32(e.paper) * np.array(
        [rng.uniform(3, 12), rng.uniform(5, 15), rng.uniform(8, 28)], np.float32)
    return ink, paper


def _paper_shade(alpha: np.ndarray, rng: np.random.Generator, e: PhotoEffects, small: tuple[int, int]) -> np.ndarray:
    """The paper's texture as a float32 (H, W) brightness factor around 1 (low-frequency blotches and fibres,
    drawn at ``small`` = (h, w) and resized); with it the ink density varies a little along the page
    (pressure, pen flow): ``alpha`` (ink coverage 0..1, page space) is scaled in place. No paper effect
    (``e.paper`` 0): all ones, and ``alpha`` is left as it is."""
    Hh, Ww = alpha.shape
    if e.paper > 0:
        # ink density varies a little along the page (pressure, pen flow)
        dens = np.clip(1.0 - 0.12 * e.paper * np.abs(_lowfreq(rng, small, 24)), 0.6, 1.0)
        alpha *= cv2.resize(dens, (Ww, Hh), interpolation=cv2.INTER_LINEAR)
        tex_small = (_lowfreq(rng, small, 6) * 0.015 + _lowfreq(rng, small, 40) * 0.005) * e.paper
        shade = cv2.resize(tex_small, (Ww, Hh), interpolation=cv2.INTER_LINEAR)
        shade = cv2.scaleAdd(_noise(rng, (Hh, Ww), fibre=True), 0.01 * e.paper, shade)
        shade += np.float32(1.0)
    else:
        shade = np.ones((Hh, Ww), np.float32)
    return shade


def _on_table(planes: list[np.ndarray], Hm: np.ndarray, rng: np.random.Generator, e: PhotoEffects) -> list:
    """The sheet's three colour planes (float32, grey levels, page space) warped by the homography ``Hm``
    onto a table: a random colour with low-frequency texture and the sheet's soft shadow, built at 1/4 size."""
    Hh, Ww = planes[0].shape
    # background (table): colour, low-frequency texture and the sheet's soft shadow, built at 1/4 size
    sm4 = (max(Hh // 4, 2), max(Ww // 4, 2))
    base = rng.uniform(60, 160)
    bg_col = np.array([base, base * rng.uniform(0.82, 0.98), base * rng.uniform(0.6, 0.9)], np.float32)
    bgs = 1 + 0.08 * _lowfreq(rng, sm4, 8)
    corners = cv2.perspectiveTransform(
        np.array([[[0, 0], [Ww - 1, 0], [Ww - 1, Hh - 1], [0, Hh - 1]]], np.float32), Hm)[0]
    off = rng.uniform(2, 8, 2)
    sh = np.zeros(sm4, np.float32)
    cv2.fillPoly(sh, [np.round((corners + off) / 4 * 16).astype(np.int32)], 1.0, cv2.LINE_AA, 4)
    sh = cv2.GaussianBlur(sh, (0, 0), 3)
    bgs = (bgs * (1 - 0.35 * sh)).astype(np.float32)
    bgs = cv2.resize(bgs, (Ww, Hh), interpolation=cv2.INTER_LINEAR)
    out = []
    for c in range(3):
        dst = bgs * bg_col[c]
        cv2.warpPerspective(planes[c], Hm, (Ww, Hh), dst=dst, flags=cv2.INTER_LINEAR,
                            borderMode=cv2.BORDER_TRANSPARENT)
        out.append(dst)
    return out


def _uneven_light(rng: np.random.Generator, e: PhotoEffects, small: tuple[int, int], size: tuple[int, int]):
    """``(light, warm)``: the photo's uneven light as a float32 brightness factor of ``size`` = (W, H) (a
    gradient, a vignette and a soft shadow blob, built at ``small`` = (h, w)), and the warm tint (per-channel
    RGB factors). No light effect (``e.light`` 0): ``(None, ones)``."""
    light = None
    warm = np.ones(3, np.float32)
    if e.light > 0:
        h8, w8 = small
        yy, xx = np.mgrid[0:h8, 0:w8].astype(np.float32)
        xn, yn = (xx + 0.5) / w8 - 0.5, (yy + 0.5) / h8 - 0.5
        th = rng.uniform(0, 2 * math.pi)
        grad = 1.0 - e.light * rng.uniform(0.05, 0.2) * (0.5 + math.cos(th) * xn + math.sin(th) * yn)
        vig = 1.0 - e.light * rng.uniform(0.05, 0.18) * (xn ** 2 + yn ** 2) * 2
        cx, cy = rng.uniform(-0.6, 0.6, 2)
        blob = 1.0 - e.light * rng.uniform(0.0, 0.12) * np.exp(-((xn - cx) ** 2 + (yn - cy) ** 2) / 0.08)
        light = cv2.resize((grad * vig * blob).astype(np.float32), size, interpolation=cv2.INTER_LINEAR)
        warm = 1 + (np.array([1.0, rng.uniform(0.97, 1.0), rng.uniform(0.9, 0.99)], np.float32) - 1) * e.light
    return light, warm


def _expose(planes: list[np.ndarray], light, warm: np.ndarray, rng: np.random.Generator,
            e: PhotoEffects) -> np.ndarray:
    """The camera: each colour plane (float32, grey levels) lit (``light`` times the ``warm`` tint), blurred
    (defocus, sigma ~0.7 px at ``e.blur`` 1) and noised (sensor noise), then clipped and rounded into a uint8
    (H, W, 3) RGB image."""
    Hh, Ww = planes[0].shape
    sigma = max(0.7 * e.blur * rng.uniform(0.7, 1.3), 0.05) if e.blur > 0 else 0.0
    # sensor noise: luminance (std 3 * noise) plus an opponent colour component (+R, -B; std 1.2 * noise)
    lum = _noise(rng, (Hh, Ww)) if e.noise > 0 else None
    chroma = _noise(rng, (Hh, Ww)) if e.noise > 0 else None
    out = []
    for c in range(3):
        p = planes[c]
        if light is not None:
            p = cv2.multiply(p, light, scale=float(warm[c]))
        if sigma > 0:
            p = cv2.GaussianBlur(p, (0, 0), sigma)
        if lum is not None:
            p = cv2.scaleAdd(lum, 3.0 * e.noise, p)
            if c != 1:
                p = cv2.scaleAdd(chroma, 1.2 * e.noise * (1 if c == 0 else -1), p)
        np.clip(p, 0, 255, out=p)
        out.append(cv2.convertScaleAbs(p))     # rounds to nearest (values are >= 0 here)
    return cv2.merge(out)


def apply_homography(ink: InkLike, H: np.ndarray, decimals: Optional[int] = None) -> Ink:
    """Map every point of ``ink`` through the 3x3 homography ``H`` (x' = (h00 x + h01 y + h02) / w ...);
    t is kept. With ``decimals`` the coordinates are rounded (the dataset stores 2 decimals)."""
    H = np.asarray(H, np.float64)
    if H.shape != (3, 3) or not np.isfinite(H).all():
        raise ValueError(f"apply_homography: H must be a finite 3x3 matrix, got shape {H.shape}")
    ink = as_ink(ink)
    out = []
    for s in ink.strokes:
        xy1 = np.column_stack([s[:, 0], s[:, 1], np.ones(len(s))]) @ H.T
        w = xy1[:, 2]
        if np.any(np.abs(w) < 1e-12):
            raise ValueError("apply_homography: a point maps to infinity (w = 0)")
        q = s.copy()
        q[:, 0] = xy1[:, 0] / w
        q[:, 1] = xy1[:, 1] / w
        if decimals is not None:
            q = np.round(q, decimals)
        out.append(q)
    return as_ink(out, "apply_homography")


def encode_jpeg(rgb: np.ndarray, quality: int) -> bytes:
    """JPEG bytes of an RGB uint8 image (OpenCV's libjpeg, 4:2:0; deterministic for equal input)."""
    ok, buf = cv2.imencode(".jpg", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise RuntimeError("encode_jpeg: OpenCV could not encode the image")
    return buf.tobytes()
