"""Synthetic writers: a sampled style per writer and the timed pen path of a word in that style."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.ndimage import gaussian_filter1d

from inkground_lib.core.ink import Ink
from inkground_lib.datasets.synth.glyphs import (
    CAP_JOIN,
    MARKS,
    OVER_TOP,
    PUNCTUATION,
    glyphs,
    supported_text,
)

INK_COLOURS = {  # RGB of common pens
    "blue ballpoint": (28, 42, 120), "black ballpoint": (30, 30, 36), "black gel": (12, 12, 16),
    "blue gel": (20, 50, 160), "navy": (25, 30, 80), "purple": (70, 35, 100), "green": (20, 80, 50),
}


INK_COLOUR_SHARES = np.array([0.32, 0.26, 0.14, 0.12, 0.08, 0.04, 0.04])


@dataclass(frozen=True)
class WriterStyle:
    """One synthetic writer. Lengths in x-heights unless noted; angles in degrees."""

    slant_deg: float = 0.0        # extra shear on top of the font's own slant (+ = more to the right)
    x_stretch: float = 1.0        # horizontal scale of letters
    ascender: float = 1.0         # scale of the parts above the x-height line
    descender: float = 1.0        # scale of the parts below the baseline
    letter_spacing: float = 0.0   # extra advance after each letter
    word_spacing: float = 1.4     # gap between words
    jitter: float = 1.0           # strength of per-letter random displacement (1 = default)
    baseline_slope_deg: float = 0.0   # mean slope of the lines (+ = baseline falls to the right, y down)
    baseline_wander: float = 0.08     # amplitude of the smooth baseline wander along a line
    x_height_px: float = 18.0     # size in page pixels
    line_spacing: float = 4.0     # baseline-to-baseline
    pen_width_px: float = 2.2     # page pixels
    ink_rgb: tuple = (28, 42, 120)
    ms_per_letter: float = 250.0  # writing speed
    margin_left: float = 0.08     # fraction of page width
    margin_top: float = 0.07      # fraction of page height
    indent: float = 0.0           # fraction of page width for the body's first line


def sample_writer(rng: np.random.Generator, page_width: int = 1000, jitter: float = 1.0,
                  size: float = 1.0) -> WriterStyle:
    """Draw a writer's style. ``jitter`` scales the per-letter jitter; ``size`` the x-height (default 1.9% of
    the page width times a random factor)."""
    names = list(INK_COLOURS)
    ink = INK_COLOURS[names[int(rng.choice(len(names), p=INK_COLOUR_SHARES))]]
    ink = tuple(int(np.clip(c + rng.normal(0, 6), 0, 255)) for c in ink)
    xh = page_width * 0.019 * size * float(np.clip(rng.lognormal(0.0, 0.13), 0.75, 1.35))
    return WriterStyle(
        slant_deg=float(np.clip(rng.normal(-5.0, 7.0), -22.0, 10.0)),
        x_stretch=float(np.clip(rng.normal(0.96, 0.08), 0.8, 1.2)),
        ascender=float(np.clip(rng.normal(1.12, 0.1), 0.85, 1.4)),
        descender=float(np.clip(rng.normal(1.1, 0.1), 0.85, 1.4)),
        letter_spacing=float(np.clip(rng.normal(0.05, 0.07), -0.08, 0.25)),
        word_spacing=float(np.clip(rng.normal(1.4, 0.25), 0.9, 2.2)),
        jitter=float(jitter * np.clip(rng.lognormal(0.0, 0.25), 0.5, 1.8)),
        baseline_slope_deg=float(rng.normal(0.0, 0.7)),
        baseline_wander=float(np.clip(rng.normal(0.08, 0.04), 0.0, 0.2)),
        x_height_px=float(xh),
        line_spacing=float(np.clip(rng.normal(4.1, 0.3), 3.5, 5.0)),
        pen_width_px=float(np.clip(xh * rng.normal(0.15, 0.03), 1.4, 5.0)),
        ink_rgb=ink,
        ms_per_letter=float(np.clip(rng.normal(250.0, 45.0), 150.0, 400.0)),
        margin_left=float(np.clip(rng.normal(0.08, 0.02), 0.04, 0.14)),
        margin_top=float(np.clip(rng.normal(0.07, 0.02), 0.04, 0.14)),
        indent=float(np.clip(rng.normal(0.04, 0.04), 0.0, 0.12)) if rng.random() < 0.5 else 0.0,
    )


def _join(strokes: list, tol: float = 0.06) -> list:
    """Merge consecutive pieces that share an end point (reversing a piece stored backwards)."""
    out = []
    for p in strokes:
        if out:
            end = out[-1][-1]
            if np.hypot(*(p[0] - end)) <= tol:
                out[-1] = np.vstack([out[-1], p[1:]])
                continue
            if np.hypot(*(p[-1] - end)) <= tol:
                out[-1] = np.vstack([out[-1], p[::-1][1:]])
                continue
        out.append(p.copy())
    return out


def _connector(a: np.ndarray, b: np.ndarray, over_top: bool) -> np.ndarray:
    """Pen-down path from point a to point b (excluding both ends); over_top bends it up to the x-height."""
    d = float(np.hypot(*(b - a)))
    n = max(int(d / 0.08), 1)
    s = np.linspace(0, 1, n + 1)[1:-1, None]
    if over_top:
        ctrl = np.array([(a[0] + b[0]) / 2, 2 * -1.02 - (a[1] + b[1]) / 2])  # peak of the curve at y = -1
        return (1 - s) ** 2 * a + 2 * s * (1 - s) * ctrl + s ** 2 * b
    return a + s * (b - a)


def _tick(c: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A dot as a writer makes it: a very short tick around ``c``."""
    ang = rng.uniform(0.6, 2.2)  # mostly downwards (y down)
    L = rng.uniform(0.04, 0.12)
    v = np.array([math.cos(ang), math.sin(ang)]) * L / 2
    return np.array([c - v, c, c + v])


def _smooth_resample(p: np.ndarray, step: float = 0.04, sigma: float = 1.6) -> np.ndarray:
    """Resample a polyline every ``step`` along its length and smooth it (ends kept)."""
    seg = np.hypot(*np.diff(p, axis=0).T)
    cum = np.concatenate([[0.0], np.cumsum(seg)])
    if cum[-1] < step * 2:
        return p
    n = int(np.ceil(cum[-1] / step)) + 1
    d = np.linspace(0, cum[-1], n)
    q = np.column_stack([np.interp(d, cum, p[:, 0]), np.interp(d, cum, p[:, 1])])
    sm = gaussian_filter1d(q, sigma, axis=0, mode="nearest")
    w = np.minimum(np.arange(n), np.arange(n)[::-1]) / (3 * sigma)
    w = np.clip(w, 0, 1)[:, None]
    return w * sm + (1 - w) * q


def _timed(p: np.ndarray, t0: float, ms_per_unit: float, hz: float) -> np.ndarray:
    """Timestamps for a smooth path: speed ~ curvature^(-1/3) (bounded), sampled every 1000/hz ms."""
    if len(p) == 1:
        return np.array([[p[0, 0], p[0, 1], t0]])
    seg = np.hypot(*np.diff(p, axis=0).T)
    d1 = np.gradient(p, axis=0)
    d2 = np.gradient(d1, axis=0)
    sp = np.hypot(*d1.T) + 1e-9
    kappa = np.abs(d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]) / sp ** 3
    v = np.clip((kappa + 0.3) ** (-1.0 / 3.0), 0.35, 1.5)
    v = (v[:-1] + v[1:]) / 2
    dt = seg / v * ms_per_unit
    tt = t0 + np.concatenate([[0.0], np.cumsum(dt)])
    step = 1000.0 / hz
    ts = np.arange(t0, tt[-1], step)
    if len(ts) == 0 or tt[-1] - ts[-1] > 1e-6:
        ts = np.append(ts, tt[-1])
    return np.column_stack([np.interp(ts, tt, p[:, 0]), np.interp(ts, tt, p[:, 1]), ts])


def write_word(text: str, style: WriterStyle, rng: np.random.Generator, sample_hz: float = 100.0) -> Ink:
    """The trajectory of ``text`` written by ``style``: an Ink in x-height units, baseline at y = 0, y down,
    starting near x = 0; t in ms from the first point. Strokes: the pen-down body stroke(s), then marks
    (i/j dots, t/F bars, x crosses) and punctuation in letter order.

    ``rng`` is drawn from in a fixed order (the word's wave, then each letter's jitter, then the dots, then
    the pen-up pauses), so a seeded generator gives the same word every time."""
    if not supported_text(text):
        raise ValueError(f"write_word: {text!r} has characters other than ASCII letters and {PUNCTUATION!r}")
    # smooth word-level displacement (low-frequency), in x-heights
    wave = (rng.uniform(0, 2 * math.pi, 2), rng.uniform(0.35, 0.8, 2), rng.normal(0, 0.035 * style.jitter, 2))
    body, marks, punct = _place_letters(text, style, rng)
    body_paths = [_smooth_resample(_finish(s, style, wave)) for s in _join_body(body)]
    mark_paths = [_smooth_resample(_finish(_as_dot_or_path(_join([m])[0], rng), style, wave)) for m in marks]
    for s in _join(punct):
        mark_paths.append(_smooth_resample(_finish(_as_dot_or_path(s, rng), style, wave)))
    n_letters = sum(c.isalpha() for c in text)
    return Ink(tuple(_timed_strokes(body_paths, mark_paths, n_letters, style, rng, sample_hz)))


def _place_letters(text: str, style: WriterStyle, rng: np.random.Generator):
    """The letters of ``text`` laid out one after another (x-heights, baseline y = 0, y down), each jittered
    (offset, scale, rotation about its baseline centre) and stretched by ``style``, sorted into
    ``(body, marks, punct)``: body pieces as ``(piece, is_lower, over_top_entry)``, marks (i/j dots, t/F bars,
    x crosses) and punctuation pieces. Draws four jitters per letter from ``rng``, in letter order."""
    G = glyphs()
    jit = style.jitter
    body: list[tuple[np.ndarray, bool, bool]] = []   # (piece, is_lower, over_top_entry)
    marks: list[np.ndarray] = []
    punct: list[np.ndarray] = []
    cursor = 0.0
    for k, ch in enumerate(text):
        g = G[ch]
        # per-letter jitter: offset, scale, rotation about the letter's baseline centre
        off = rng.normal(0, [0.035 * jit, 0.04 * jit])
        sc = 1.0 + rng.normal(0, 0.035 * jit)
        rot = rng.normal(0, 0.035 * jit)
        cr, sr = math.cos(rot), math.sin(rot)
        cx = g.width / 2
        pieces = []
        for j, p in enumerate(g.pieces):
            q = p.copy()
            q[:, 0] -= cx
            q = q * sc
            q = q @ np.array([[cr, sr], [-sr, cr]])
            q[:, 0] += cx
            q = q + off
            q[:, 0] = q[:, 0] * style.x_stretch + cursor
            pieces.append((j, q))
        cursor += g.width * style.x_stretch + style.letter_spacing + rng.normal(0, 0.02 * jit)
        is_mark = set(MARKS.get(ch, ()))
        for j, q in pieces:
            if ch in PUNCTUATION:
                punct.append(q)
            elif j in is_mark:
                marks.append(q)
            else:
                body.append((q, ch.islower(), ch in OVER_TOP and j == 0))
    return body, marks, punct


def _join_body(body: list[tuple[np.ndarray, bool, bool]]) -> list[np.ndarray]:
    """The body pieces ``(piece, is_lower, over_top_entry)`` joined into pen-down strokes: a piece that
    starts (or, reversed, ends) within 0.06 x-heights of the stroke's end continues it; lower-case letters
    and gaps under :data:`CAP_JOIN` are joined by a connector; anything else starts a new stroke."""
    strokes: list[np.ndarray] = []
    prev_lower = False
    for q, lower, over in body:
        if strokes:
            end = strokes[-1][-1]
            gap = float(np.hypot(*(q[0] - end)))
            rgap = float(np.hypot(*(q[-1] - end)))
            if rgap <= 0.06 < gap:
                q = q[::-1]
                gap = rgap
            if gap <= 0.06:
                strokes[-1] = np.vstack([strokes[-1], q[1:]])
                prev_lower = lower
                continue
            if (lower and prev_lower) or gap < CAP_JOIN:
                strokes[-1] = np.vstack([strokes[-1], _connector(end, q[0], over and lower), q])
                prev_lower = lower
                continue
        strokes.append(q.copy())
        prev_lower = lower
    return strokes


def _finish(p: np.ndarray, style: WriterStyle, wave) -> np.ndarray:
    """A path (x-heights, baseline y = 0, y down) in the writer's proportions (ascenders above y = -1 and
    descenders below y = 0 scaled), moved by the word's low-frequency ``wave`` = (phases, frequencies,
    amplitudes), each a (y, x) pair, and sheared by the writer's slant."""
    ph, fr, amp = wave
    shear = math.tan(math.radians(style.slant_deg))
    p = p.copy()
    y = p[:, 1]
    y = np.where(y < -1.0, -1.0 + (y + 1.0) * style.ascender, y)
    y = np.where(y > 0.0, y * style.descender, y)
    y = y + amp[0] * np.sin(fr[0] * p[:, 0] + ph[0])
    x = p[:, 0] + amp[1] * np.sin(fr[1] * p[:, 0] + ph[1])
    x = x - y * shear
    return np.column_stack([x, y])


def _as_dot_or_path(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A mark as drawn: one under 0.3 x-heights each way is a dot (drawn as a tiny square in the font) and
    becomes a pen tick at its centre (:func:`_tick`, which draws from ``rng``); a longer one stays as it is."""
    ext = np.ptp(p, axis=0)
    if max(ext) < 0.3:  # a dot drawn as a tiny square in the font
        return _tick(p.mean(axis=0), rng)
    return p


def _timed_strokes(body_paths: list, mark_paths: list, n_letters: int, style: WriterStyle,
                   rng: np.random.Generator, sample_hz: float) -> list[np.ndarray]:
    """The body paths then the mark paths as timed strokes (x, y, t in ms from 0), sampled at ``sample_hz``.
    The pen's speed is calibrated so that the body takes about ``style.ms_per_letter`` per letter; each pen-up
    move takes 90 ms plus its travel at 0.6 of the writing time per unit plus a random 0-40 ms from ``rng``."""
    body_len = sum(float(np.hypot(*np.diff(p, axis=0).T).sum()) for p in body_paths)
    ms_per_unit = style.ms_per_letter * max(n_letters, 1) / max(body_len, 1e-6) * 0.72
    out = []
    t = 0.0
    last = None
    for p in body_paths + mark_paths:
        if last is not None:
            travel = float(np.hypot(*(p[0] - last)))
            t += 90.0 + travel * ms_per_unit * 0.6 + float(rng.uniform(0, 40))
        s = _timed(p, t, ms_per_unit, sample_hz)
        out.append(s)
        t = float(s[-1, 2])
        last = p[-1]
    return out
