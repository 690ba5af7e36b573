"""Synthetic dataset: photographed pages of cursive greeting-card messages and notes, with exact trajectories.

Pipeline for page ``i`` (everything drawn from ``np.random.default_rng([seed, i])`` and its spawned children,
so page i depends only on (seed, i) and two runs write byte-identical files):

1. **Text** (:func:`message_words`): a short greeting-card message or personal note ("Dear Anna, thank you so
   much for the lovely flowers ...") from a small built-in vocabulary, cut to the page's word count. Words
   are letters only, optionally with punctuation attached (``SynthParams.punctuation``: a comma after the
   greeting and closing, a full stop or "!" after a sentence); no apostrophes or digits.
2. **Writer** (:class:`WriterStyle`, :func:`sample_writer`): slant (shear), width / ascender / descender
   proportions, letter and word spacing, per-letter jitter, baseline slope and wander, x-height, line spacing,
   pen width, ink colour, writing speed. One writer per page by default (``SynthParams.writers``).
3. **Words as trajectories** (:func:`write_word`): glyphs of the Hershey ``scripts`` font (single-line
   connected script). Consecutive pieces that share an end point become one stroke; retrace gaps inside a
   letter (the stem of t, d, p ...) and the connections between lower-case letters are joined pen-down, the
   connection into a, c, d, g, q going over the top of the bowl as a writer's pen does; i/j dots, t and F
   bars, the second stroke of x and punctuation are separate strokes written AFTER the word's body, in letter
   order. Capitals join the next letter only when the font's gap is small (B, P, T, I ... lift the pen).
   Each letter gets a small smooth random displacement (offset, scale, rotation) and the polyline is
   smoothed; points carry t in ms from a speed profile (slower in curves, 2/3 power law) sampled at
   ``sample_hz``; t starts at 0 for every word; a pen-up pause separates strokes.
4. **Layout** (:func:`layout_page`): lines from a left margin, greeting and closing on lines of their own,
   baseline slope and wander across each line; the writer shrinks the writing until the message fits.
5. **Clean page**: ink drawn with :func:`inkground_lib.render.draw_ink` (2x supersampled) on white.
6. **Photograph** (:func:`photograph`): paper colour and texture, slight rotation and perspective (the sheet
   lies inside the frame on a darker background), uneven light, blur, sensor noise; saved as JPEG (the
   compression artefacts). The returned homography H maps clean-page coordinates to photo coordinates and
   :func:`apply_homography` moves the inks with it, so the stored inks and boxes are exact in the photo.

Coordinates: page pixels of the photo, origin top-left, y down; t in ms. A word's ``box`` is the bounding box
of its true ink (rounded to 0.01 px like the stored ink, so the box contains the stored ink exactly); the
reference ink is the true ink (dataset reference "true ink"). Word ``split``: 75/25 seeded split of each
page's words (one word -> train; at least one test word when a page has >= 2 words).

Statistics (paper: 34.89 words per page, range 2-140; median word box 0.100 of page width, 0.037 of page
height): the default word-count distribution has mean ~35 over 2-140; x-height defaults to ~1.9% of page width.
Strokes per word are those of connected cursive (body + dots/bars/punctuation, ~1.5 per word), not
InkSight's fragmented pseudo-label strokes (paper: 304.3 strokes per page).

:func:`generate` writes a dataset folder (see :mod:`inkground_lib.dataset`); it reuses an existing complete
dataset with identical parameters, resumes an interrupted one (pages whose image and inks exist), and runs
pages in a process pool when there are many.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Optional

import cv2
import numpy as np
from scipy.ndimage import gaussian_filter1d

from .dataset import DatasetError, Page, Word, write_manifest, write_page_inks
from .files import atomic_write_bytes, atomic_write_json
from .ink import Ink, InkLike, as_ink
from .render import draw_ink

GENERATOR_VERSION = "synth-1"
_SUPERSAMPLE = 1  # draw_ink supersamples each word itself

# ============================================================================================ font

_FONT = "scripts"
_BASE = 9.0          # font baseline (font units, y down)
_XH = 9.0            # font x-height in font units (baseline 9, x-height line 0)
# strokes that are marks (written after the word body): char -> stroke indices in the Hershey glyph
_MARKS = {"i": (0,), "j": (0,), "t": (2,), "x": (1,), "F": (2,)}
# lower-case letters whose font stroke starts inside the bowl: the connection goes over the bowl's top
_OVER_TOP = set("acdgq")
PUNCTUATION = ",.!?"
_CAP_JOIN = 8.0 / _XH    # a capital joins the next piece when the gap is below this (x-heights)


@dataclass(frozen=True)
class _Glyph:
    width: float                # advance in x-height units
    pieces: tuple               # tuple of (n, 2) arrays in x-height units, baseline y = 0, y down


@lru_cache(maxsize=1)
def _glyphs() -> dict:
    """Hershey ``scripts`` glyphs in x-height units (baseline at y = 0, x-height line at y = -1, y down)."""
    from HersheyFonts import HersheyFonts

    f = HersheyFonts()
    f.load_default_font(_FONT)
    out = {}
    for ch, g in f.all_glyphs.items():
        pieces = tuple(np.asarray([(x - g.left_offset, y - _BASE) for x, y in s], float) / _XH
                       for s in g.strokes if len(s))
        out[ch] = _Glyph(float(g.char_width) / _XH, pieces)
    return out


def supported_text(text: str) -> bool:
    """True when every character of ``text`` is an ASCII letter or one of ``PUNCTUATION``."""
    return bool(text) and all(c.isascii() and (c.isalpha() or c in PUNCTUATION) for c in text)


# ============================================================================================ writer

INK_COLOURS = {  # RGB of common pens
    "blue ballpoint": (28, 42, 120), "black ballpoint": (30, 30, 36), "black gel": (12, 12, 16),
    "blue gel": (20, 50, 160), "navy": (25, 30, 80), "purple": (70, 35, 100), "green": (20, 80, 50),
}
_INK_P = np.array([0.32, 0.26, 0.14, 0.12, 0.08, 0.04, 0.04])


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
    ink = INK_COLOURS[names[int(rng.choice(len(names), p=_INK_P))]]
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


# ============================================================================================ words

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
    (i/j dots, t/F bars, x crosses) and punctuation in letter order."""
    if not supported_text(text):
        raise ValueError(f"write_word: {text!r} has characters other than ASCII letters and {PUNCTUATION!r}")
    G = _glyphs()
    jit = style.jitter
    shear = math.tan(math.radians(style.slant_deg))
    # smooth word-level displacement (low-frequency), in x-heights
    ph = rng.uniform(0, 2 * math.pi, 2)
    fr = rng.uniform(0.35, 0.8, 2)
    amp = rng.normal(0, 0.035 * jit, 2)

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
        is_mark = set(_MARKS.get(ch, ()))
        for j, q in pieces:
            if ch in PUNCTUATION:
                punct.append(q)
            elif j in is_mark:
                marks.append(q)
            else:
                body.append((q, ch.islower(), ch in _OVER_TOP and j == 0))
    # join the body: pieces sharing an end point, retrace gaps and lower-case connections pen-down
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
            if (lower and prev_lower) or gap < _CAP_JOIN:
                strokes[-1] = np.vstack([strokes[-1], _connector(end, q[0], over and lower), q])
                prev_lower = lower
                continue
        strokes.append(q.copy())
        prev_lower = lower

    def finish(p: np.ndarray) -> np.ndarray:
        # proportions, word-level wave, slant
        p = p.copy()
        y = p[:, 1]
        y = np.where(y < -1.0, -1.0 + (y + 1.0) * style.ascender, y)
        y = np.where(y > 0.0, y * style.descender, y)
        y = y + amp[0] * np.sin(fr[0] * p[:, 0] + ph[0])
        x = p[:, 0] + amp[1] * np.sin(fr[1] * p[:, 0] + ph[1])
        x = x - y * shear
        return np.column_stack([x, y])

    def as_dot_or_path(p: np.ndarray) -> np.ndarray:
        ext = np.ptp(p, axis=0)
        if max(ext) < 0.3:  # a dot drawn as a tiny square in the font
            return _tick(p.mean(axis=0), rng)
        return p

    body_paths = [_smooth_resample(finish(s)) for s in strokes]
    mark_paths = [_smooth_resample(finish(as_dot_or_path(_join([m])[0]))) for m in marks]
    for s in _join(punct):
        mark_paths.append(_smooth_resample(finish(as_dot_or_path(s))))
    # time: calibrate ms per unit of arc so that the body takes ms_per_letter per letter
    n_letters = sum(c.isalpha() for c in text)
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
    return Ink(tuple(out))


# ============================================================================================ text

NAMES = ("Anna Ben Clara David Emma Frank Grace Henry Isla Jack Kate Leo Lucy Mark Nina Oliver Paul Rosa Sam "
         "Tom Uma Vera Will Zoe Alice Beth Carl Dora Ella Finn Greg Hannah Ivy Jane Karen Lily Mia Noah Owen "
         "Peter Ruth Sarah Tina Victor Wendy Mum Dad Grandma Grandpa").split()
_OCCASION = ("birthday", "anniversary", "wedding day", "retirement", "new home", "holiday", "graduation",
             "new job", "big day", "special day")
_GIFT = ("flowers", "card", "gift", "book", "scarf", "chocolates", "plant", "letter", "photos", "dinner",
         "tea set", "candle", "painting", "basket")
_WHEN = ("soon", "next week", "this summer", "at Christmas", "in the spring", "again", "very soon",
         "next month", "on Sunday", "after the holidays")
_REL = ("friend", "sister", "brother", "mother", "father", "neighbour", "teacher", "aunt", "uncle", "cousin")
_FEEL = ("happy", "grateful", "proud", "lucky", "touched", "delighted", "thankful")
_THING = ("hugs", "kisses", "good wishes", "warm thoughts", "sunshine", "happy thoughts")
_ADJ = ("lovely", "beautiful", "wonderful", "thoughtful", "kind", "generous", "sweet", "perfect")
_MEAL = ("lunch", "dinner", "coffee", "tea", "a walk", "a picnic")
_SENTENCES = (
    "thank you so much for the {adj} {gift}",
    "I hope you have a {adj} {occasion}",
    "wishing you all the best on your {occasion}",
    "it was so good to see you last week",
    "we are all so proud of you",
    "thinking of you and your family at this time",
    "I can not wait to see you {when}",
    "congratulations on your {occasion}",
    "happy birthday to the best {rel} in the world",
    "sending you lots of love and {thing}",
    "you always make my day brighter",
    "I am sorry I missed your call",
    "please come and visit us {when}",
    "the children loved the {gift} and they say thank you",
    "let us meet for {meal} {when}",
    "may your {occasion} be filled with joy and laughter",
    "I am so {feel} to have you in my life",
    "your {gift} made me smile all day",
    "it was so {adj} of you to think of me",
    "we had such a {adj} time with you",
    "I will always remember the day we met",
    "the garden looks {adj} this year",
    "we miss you and hope you are well",
    "take good care of yourself and rest",
    "I hope the new house is everything you wanted",
    "we are thinking of you and sending our love",
    "thank you for being such a {adj} {rel}",
    "enjoy every moment of your {occasion}",
    "here is a little something for your {occasion}",
    "I still laugh when I think of our trip",
    "give my love to everyone at home",
    "with all our love on your {occasion}",
    "you are the most {adj} {rel} anyone could wish for",
    "I hope this card finds you well and happy",
    "we should do this again {when}",
    "call me when you are back from your trip",
    "the weather here has been {adj} all week",
    "thank you for the {adj} evening and the good food",
)
_FILLERS = ("Thanks", "Enjoy", "Cheers", "Miss you", "Have fun", "Talk soon", "Stay well", "See you soon",
            "Love you lots", "Hope you are well", "Much love to all", "Hope to see you soon",
            "Give everyone a hug")
_GREETINGS = ("Dear {name}", "Hi {name}", "Hello {name}", "My dear {name}", "Dearest {name}", "To {name}")
_CLOSINGS = ("Love", "With love", "Best wishes", "All my love", "Warm regards", "Yours truly", "Hugs",
             "Take care", "Much love", "Lots of love", "Fondly")


def message_words(rng: np.random.Generator, n_words: int, punctuation: bool = True) -> list[tuple[str, bool]]:
    """A greeting-card message or note of exactly ``n_words`` words, as (word, line_break_after) pairs.

    Structure: greeting ("Dear Anna,") on its own line, sentences, closing ("With love,") and signature on
    lines of their own; a short page keeps the greeting and the first words of the body. Words are ASCII
    letters; with ``punctuation`` a comma follows the greeting and the closing and sentences end with "." or
    "!" (attached to the word)."""
    if n_words < 1:
        raise ValueError(f"message_words: n_words must be >= 1, got {n_words}")

    def fill(t: str) -> str:
        return t.format(adj=_pick(rng, _ADJ), gift=_pick(rng, _GIFT), occasion=_pick(rng, _OCCASION),
                        when=_pick(rng, _WHEN), rel=_pick(rng, _REL), feel=_pick(rng, _FEEL),
                        thing=_pick(rng, _THING), meal=_pick(rng, _MEAL), name=_pick(rng, NAMES))

    greet = fill(_pick(rng, _GREETINGS)).split()
    closing = _pick(rng, _CLOSINGS).split() + [_pick(rng, NAMES)]
    if punctuation:
        greet[-1] += ","
        closing[-2] += ","
    room = n_words - len(greet) - (len(closing) if n_words >= len(greet) + len(closing) + 3 else 0)
    body: list[str] = []
    used: set = set()
    while len(body) < room:
        left = room - len(body)
        s = None
        for _ in range(8):  # whole sentences while one fits, then a short one of exactly the words left
            tpl = _pick(rng, _SENTENCES)
            cand = fill(tpl).split()
            if len(cand) <= left and (tpl not in used or len(used) >= len(_SENTENCES) // 2):
                s = cand
                used.add(tpl)
                break
        if s is None:
            s = _pick(rng, [f for f in _FILLERS if len(f.split()) == min(left, 5)]).split()
        s[0] = s[0][0].upper() + s[0][1:]
        if punctuation:
            s[-1] += "!" if rng.random() < 0.2 else "."
        body.extend(s)
    body = body[:max(room, 0)]
    words = [(w, i == len(greet) - 1) for i, w in enumerate(greet)] + [(w, False) for w in body]
    if room == n_words - len(greet) - len(closing):
        if words:
            words[-1] = (words[-1][0], True)
        words += [(w, i >= len(closing) - 2) for i, w in enumerate(closing)]
    words = words[:n_words]
    return words


def _pick(rng: np.random.Generator, seq):
    return seq[int(rng.integers(len(seq)))]


def sample_word_count(rng: np.random.Generator, lo: int, hi: int, mean: float) -> int:
    """Words on a page: lo + Gamma(shape 2, mean - lo), redrawn while above hi (right-skewed, as the paper's
    2-140 range with mean 34.89)."""
    if lo == hi:
        return lo
    m = max(mean - lo, 0.5)
    for _ in range(1000):
        n = lo + int(round(rng.gamma(2.0, m / 2.0)))
        if n <= hi:
            return n
    return hi


# ============================================================================================ layout

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


# ============================================================================================ photograph

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
    if ink_rgb is None:
        names = list(INK_COLOURS)
        ink_rgb = INK_COLOURS[names[int(rng.choice(len(names), p=_INK_P))]]
    ink = np.asarray(ink_rgb, np.float32) * np.float32(e.ink_colour)
    paper = np.float32(255.0) - np.float32(e.paper) * np.array(
        [rng.uniform(3, 12), rng.uniform(5, 15), rng.uniform(8, 28)], np.float32)
    alpha = page_gray.astype(np.float32)
    alpha *= np.float32(-1.0 / 255.0)
    alpha += np.float32(1.0)                                   # ink coverage 0..1
    small = (max(Hh // 8, 2), max(Ww // 8, 2))
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
    # colour planes (contiguous float32): sheet_c = paper_c * shade * (1 - alpha) + ink_c * alpha
    keep = shade * (1.0 - alpha)
    planes = [cv2.scaleAdd(alpha, float(ink[c]), keep * paper[c]) for c in range(3)]
    warp = e.frame > 0 or e.perspective > 0 or e.rotation_deg > 0
    if warp:
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
        planes = out
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
        light = cv2.resize((grad * vig * blob).astype(np.float32), (Ww, Hh), interpolation=cv2.INTER_LINEAR)
        warm = 1 + (np.array([1.0, rng.uniform(0.97, 1.0), rng.uniform(0.9, 0.99)], np.float32) - 1) * e.light
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
    return cv2.merge(out), Hm


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


# ============================================================================================ dataset

@dataclass(frozen=True)
class SynthParams:
    """Parameters of a synthetic dataset (all of them go into the manifest's meta).

    pages: number of pages; seed: page i is drawn from default_rng([seed, i]); words_min / words_max /
    words_mean: words per page (right-skewed distribution, see :func:`sample_word_count`); width / height:
    photo size in px; writers: distinct writers (None = one per page; page i uses writer i mod writers);
    effects: :class:`PhotoEffects`; jpeg_quality: 1-100; punctuation: attach , . ! to words; jitter: scale of
    the per-letter jitter (1 = default, 0 = the font's shapes); size: scale of the x-height (default ~1.9% of
    the page width); sample_hz: pen samples per second (t step 1000 / sample_hz ms)."""

    pages: int = 16
    seed: int = 0
    words_min: int = 2
    words_max: int = 140
    words_mean: float = 35.0
    width: int = 1000
    height: int = 1300
    writers: Optional[int] = None
    effects: PhotoEffects = field(default_factory=PhotoEffects)
    jpeg_quality: int = 88
    punctuation: bool = True
    jitter: float = 1.0
    size: float = 1.0
    sample_hz: float = 100.0

    def validate(self) -> "SynthParams":
        def bad(name, why):
            raise ValueError(f"SynthParams.{name}: {why}, got {getattr(self, name)!r}")
        for k in ("pages", "seed", "words_min", "words_max", "width", "height", "jpeg_quality"):
            v = getattr(self, k)
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
                bad(k, "must be an integer")
        if self.pages < 1:
            bad("pages", "must be >= 1")
        if self.seed < 0:
            bad("seed", "must be >= 0")
        if not 1 <= self.words_min <= self.words_max <= 999:
            bad("words_min", "need 1 <= words_min <= words_max <= 999")
        if not self.words_min <= self.words_mean <= self.words_max:
            bad("words_mean", "must lie in [words_min, words_max]")
        if self.width < 200 or self.height < 200:
            bad("width", "page must be at least 200 x 200 px")
        if not 1 <= self.jpeg_quality <= 100:
            bad("jpeg_quality", "must be in 1..100")
        if self.writers is not None and not (isinstance(self.writers, int) and self.writers >= 1):
            bad("writers", "must be None or an integer >= 1")
        if not (0 <= self.jitter <= 5 and 0.2 <= self.size <= 5 and 10 <= self.sample_hz <= 1000):
            bad("jitter", "jitter in [0, 5], size in [0.2, 5], sample_hz in [10, 1000] required")
        if not isinstance(self.effects, PhotoEffects):
            bad("effects", "must be a PhotoEffects")
        return self

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["effects"] = dataclasses.asdict(self.effects)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "SynthParams":
        d = dict(d)
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"SynthParams: unknown parameters {sorted(unknown)}")
        if isinstance(d.get("effects"), dict):
            d["effects"] = PhotoEffects(**d["effects"])
        return cls(**d).validate()


def page_id(i: int, pages: int) -> str:
    return f"p{i:0{max(4, len(str(pages - 1)))}d}"


def _streams(seed: int, i: int):
    """(text, writer-hand, photo) generators of page i: children of default_rng([seed, i])."""
    return tuple(np.random.default_rng([seed, i]).spawn(3))


def split_words(rng: np.random.Generator, n: int) -> list[str]:
    """75/25 split: n == 1 -> ["train"]; n >= 2 -> max(1, round(n / 4)) "test" words chosen by ``rng``."""
    if n <= 1:
        return ["train"] * n
    n_test = max(1, int(round(0.25 * n)))
    test = set(rng.choice(n, n_test, replace=False).tolist())
    return ["test" if j in test else "train" for j in range(n)]


def _page_text(params: SynthParams, i: int):
    t_rng, _, _ = _streams(params.seed, i)
    n = sample_word_count(t_rng, params.words_min, params.words_max, params.words_mean)
    words = message_words(t_rng, n, params.punctuation)
    splits = split_words(t_rng, len(words))
    return words, splits


def _writer(params: SynthParams, i: int) -> tuple[str, WriterStyle]:
    if params.writers is None:
        w = i
        rng = _streams(params.seed, i)[1].spawn(1)[0]
        nw = params.pages
    else:
        w = i % params.writers
        rng = np.random.default_rng([params.seed, w, 7])
        nw = params.writers
    return f"w{w:0{max(4, len(str(nw - 1)))}d}", sample_writer(rng, params.width, params.jitter, params.size)


def make_page(params: SynthParams, i: int) -> tuple[Page, np.ndarray]:
    """Page ``i`` of the dataset described by ``params``: (Page with words and exact inks, photo RGB uint8).
    The page's image path is ``pages/<id>.jpg`` (relative; :func:`generate` writes it)."""
    pid = page_id(i, params.pages)
    words, splits = _page_text(params, i)
    writer, style = _writer(params, i)
    _, hand_rng, photo_rng = _streams(params.seed, i)
    size = (params.width, params.height)
    inks = layout_page(words, style, hand_rng, size, params.sample_hz)
    gray = clean_page(inks, size, style.pen_width_px)
    photo, Hm = photograph(gray, photo_rng, params.effects, ink_rgb=style.ink_rgb)
    out_words = []
    for j, ((text, _), ink, split) in enumerate(zip(words, inks, splits)):
        true = apply_homography(ink, Hm, decimals=2)
        x0, y0, x1, y1 = true.bbox()
        if x0 < 0 or y0 < 0 or x1 > params.width - 1 or y1 > params.height - 1:
            raise ValueError(f"make_page: page {pid} word {j} ({text!r}) leaves the {params.width} x "
                             f"{params.height} page (box {x0:.1f}, {y0:.1f}, {x1:.1f}, {y1:.1f}); use a smaller "
                             f"SynthParams.size")
        out_words.append(Word(f"{pid}-w{j:03d}", text, (x0, y0, x1, y1), true, pid, split, true))
    page = Page(pid, Path("pages") / f"{pid}.jpg", writer, params.width, params.height, out_words)
    return page, photo


def _page_job(args) -> Page:
    """Worker: make page i, write its image and inks, return the page without inks (cheap to send back)."""
    params_d, root, i = args
    params = SynthParams.from_dict(params_d)
    root = Path(root)
    page, photo = make_page(params, i)
    atomic_write_bytes(root / page.image, encode_jpeg(photo, params.jpeg_quality))
    page.image = root / page.image
    write_page_inks(root, page)
    return _light(page)


def _worker_init() -> None:
    """Pool worker: one OpenCV thread per process (the pool already uses every core)."""
    cv2.setNumThreads(1)


def _light(page: Page) -> Page:
    return Page(page.id, page.image, page.writer, page.width, page.height,
                [dataclasses.replace(w, ink=Ink(), true_ink=None) for w in page.words])


def _resume_page(params: SynthParams, root: Path, i: int) -> Optional[Page]:
    """Rebuild the record of a page already written (image + inks present), or None."""
    pid = page_id(i, params.pages)
    img, inks_path = root / "pages" / f"{pid}.jpg", root / "inks" / f"{pid}.json"
    if not (img.is_file() and inks_path.is_file()):
        return None
    try:
        data = json.loads(inks_path.read_text("utf-8"))
        words, splits = _page_text(params, i)
        writer, _ = _writer(params, i)
        recs = data["words"]
        out = []
        for j, ((text, _), split) in enumerate(zip(words, splits)):
            wid = f"{pid}-w{j:03d}"
            pts = np.array([p[:2] for s in recs[wid]["true"] for p in s], float)
            box = (float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()), float(pts[:, 1].max()))
            out.append(Word(wid, text, box, Ink(), pid, split, None))
        if len(recs) != len(out):
            return None
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    return Page(pid, img, writer, params.width, params.height, out)


def _is_synth_manifest(mpath: Path) -> bool:
    try:
        return json.loads(mpath.read_text("utf-8")).get("kind") == "synth"
    except (OSError, ValueError, AttributeError):
        return False


def _meta(params: SynthParams) -> dict:
    return {"generator": GENERATOR_VERSION, "params": params.as_dict()}


def generate(out_dir: str | os.PathLike, params: SynthParams = SynthParams(), progress: bool = True,
             workers: Optional[int] = None, pool_min_pages: int = 8, name: str = "synth") -> Path:
    """Write the synthetic dataset ``params`` describes into ``out_dir`` and return the folder.

    Files: ``pages/<id>.jpg`` (photo), ``inks/<id>.json`` (true = reference inks), ``manifest.json`` (kind
    "synth", reference "true ink", meta = {"generator": version, "params": params}), written last.
    * If a synth manifest with identical meta exists and every file it names is present, the folder is
      returned untouched at once (files are not re-validated: :func:`load_dataset` does that).
    * Otherwise ``generator.json`` records the meta first; pages already complete under the same meta (an
      interrupted run) are reused, all others are (re)written, and page files of ours (``p<digits>``) not in
      the new dataset are removed.
    * ``workers`` processes (default min(2, cpu count)) when there are >= ``pool_min_pages`` pages.
    * A non-empty folder that is not a synthetic dataset (no ``generator.json``, no synth manifest) is
      refused with DatasetError, so nothing else is overwritten.
    Deterministic: the same params give byte-identical files.
    """
    params.validate()
    root = Path(out_dir)
    meta = _meta(params)
    mpath = root / "manifest.json"
    if mpath.is_file():
        try:
            m = json.loads(mpath.read_text("utf-8"))
            if (m.get("meta") == json.loads(json.dumps(meta)) and m.get("kind") == "synth"
                    and all((root / pr[k]).is_file() for pr in m["pages"] for k in ("image", "inks"))):
                return root
        except (json.JSONDecodeError, OSError, KeyError, TypeError):
            pass
    gpath = root / "generator.json"
    if root.is_dir() and any(root.iterdir()) and not gpath.is_file() and not _is_synth_manifest(mpath):
        raise DatasetError(f"{root}: not empty and not a synthetic dataset folder (no generator.json or synth "
                           f"manifest); refusing to write pages into it")
    root.mkdir(parents=True, exist_ok=True)
    same = False
    if gpath.is_file():
        try:
            same = json.loads(gpath.read_text("utf-8")) == json.loads(json.dumps(meta))
        except (json.JSONDecodeError, OSError):
            same = False
    if mpath.exists():
        mpath.unlink()  # a stale manifest must not describe the pages being rewritten
    atomic_write_json(gpath, meta)
    ids = {page_id(i, params.pages) for i in range(params.pages)}
    for sub, ext in (("pages", ".jpg"), ("inks", ".json")):
        d = root / sub
        if d.is_dir():
            for f in d.iterdir():
                if re.fullmatch(r"p\d+", f.stem) and f.suffix == ext and (f.stem not in ids or not same):
                    f.unlink()
    pages: dict[int, Page] = {}
    todo = []
    for i in range(params.pages):
        p = _resume_page(params, root, i) if same else None
        if p is None:
            todo.append(i)
        else:
            pages[i] = p
    pd_ = params.as_dict()
    jobs = [(pd_, str(root), i) for i in todo]
    nw = workers if workers is not None else min(2, os.cpu_count() or 1)
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(jobs), desc="synth pages", unit="page")
    try:
        if nw > 1 and len(jobs) >= pool_min_pages:
            import multiprocessing as mp
            ctx = mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")
            with ProcessPoolExecutor(max_workers=nw, mp_context=ctx, initializer=_worker_init) as ex:
                for i, page in zip(todo, ex.map(_page_job, jobs, chunksize=1)):
                    pages[i] = page
                    if bar:
                        bar.update(1)
        else:
            for i, job in zip(todo, jobs):
                pages[i] = _page_job(job)
                if bar:
                    bar.update(1)
    finally:
        if bar:
            bar.close()
    ordered = [pages[i] for i in range(params.pages)]
    for p in ordered:
        p.image = root / "pages" / f"{p.id}.jpg"
    write_manifest(root, name, "synth", "true ink", meta, ordered, write_inks=False)
    return root
