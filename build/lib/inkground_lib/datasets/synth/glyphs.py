"""Letter shapes: the Hershey ``scripts`` font's glyphs as strokes in font units."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

FONT = "scripts"


BASE = 9.0          # font baseline (font units, y down)


XH = 9.0            # font x-height in font units (baseline 9, x-height line 0)


# strokes that are marks (written after the word body): char -> stroke indices in the Hershey glyph
MARKS = {"i": (0,), "j": (0,), "t": (2,), "x": (1,), "F": (2,)}


# lower-case letters whose font stroke starts inside the bowl: the connection goes over the bowl's top
OVER_TOP = set("acdgq")


PUNCTUATION = ",.!?"


CAP_JOIN = 8.0 / XH    # a capital joins the next piece when the gap is below this (x-heights)


@dataclass(frozen=True)
class _Glyph:
    width: float                # advance in x-height units
    pieces: tuple               # tuple of (n, 2) arrays in x-height units, baseline y = 0, y down


@lru_cache(maxsize=1)
def glyphs() -> dict:
    """Hershey ``scripts`` glyphs in x-height units (baseline at y = 0, x-height line at y = -1, y down)."""
    from HersheyFonts import HersheyFonts

    f = HersheyFonts()
    f.load_default_font(FONT)
    out = {}
    for ch, g in f.all_glyphs.items():
        pieces = tuple(np.asarray([(x - g.left_offset, y - BASE) for x, y in s], float) / XH
                       for s in g.strokes if len(s))
        out[ch] = _Glyph(float(g.char_width) / XH, pieces)
    return out


def supported_text(text: str) -> bool:
    """True when every character of ``text`` is an ASCII letter or one of ``PUNCTUATION``."""
    return bool(text) and all(c.isascii() and (c.isalpha() or c in PUNCTUATION) for c in text)
