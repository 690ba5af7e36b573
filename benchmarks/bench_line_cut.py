"""How often the IAM-OnDB line-cut rule keeps right cuts and refuses wrong ones, on lines made of real words.

    .venv/bin/python benchmarks/bench_line_cut.py UNIPEN_RELEASE_ROOT [--lines 2000] [--seed 0]

IAM-OnDB may not be redistributed, so the figures are measured on lines laid out from real recorded words of a
whole UNIPEN release (category 6, one writer per line, 5-9 words, words placed left to right on one baseline
with gaps of 0.8-2.0 core heights). For each line it prints whether :func:`check_cut` keeps the right cut (the
words as written) and whether it refuses a wrong cut with the same count: one word split at its widest pen-up
gap and two later neighbours merged, so every word between is drawn with its neighbour's ink (the a01-000u-01
failure). Counts: right cuts kept, wrong cuts refused, over the lines made.
"""

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from inkground_lib.core.ink import Ink  # noqa: E402
from inkground_lib.datasets.segmentation import check_cut, core_height, segment_line_words  # noqa: E402
from inkground_lib.formats.unipen_release import read_unipen_release  # noqa: E402


def _line(words, rng):
    """The words laid out on one baseline: (strokes of each word, the line's ink)."""
    placed, x = [], 0.0
    h = float(np.median([core_height(w.ink) for w in words]))
    for w in words:
        s = core_height(w.ink)
        x0, y0, x1, y1 = w.ink.bbox()
        k = h / s
        strokes = [np.column_stack([(st[:, 0] - x0) * k + x, (st[:, 1] - y1) * k, st[:, 2]]) for st in w.ink.strokes]
        placed.append(strokes)
        x += (x1 - x0) * k + rng.uniform(0.8, 2.0) * h
    return placed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("--lines", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    words, _ = read_unipen_release(a.root, category="6", style=None, quality="!BAD")
    by = defaultdict(list)
    for w in words:
        if w.text and w.text.isalpha() and len(w.ink) >= 1:
            x0, y0, x1, y1 = w.ink.bbox()
            if x1 > x0 and y1 > y0:
                by[w.writer].append(w)
    writers = sorted(wr for wr, ws in by.items() if len(ws) >= 9)
    rng = np.random.default_rng(a.seed)
    made = kept = wrong = refused = 0
    for _ in range(a.lines):
        wr = writers[rng.integers(len(writers))]
        n = int(rng.integers(5, 10))
        ws = [by[wr][i] for i in rng.choice(len(by[wr]), n, replace=False)]
        placed = _line(ws, rng)
        line = Ink(tuple(s for p in placed for s in p))
        tokens = [w.text for w in ws]
        right = [Ink(tuple(p)) for p in placed]
        made += 1
        kept += check_cut(right, tokens, core_height(line)) is None
        # a wrong cut of the same count: split word i at its widest internal gap, merge words j, j+1 (j > i)
        splittable = [i for i in range(n - 2) if len(placed[i]) >= 2]
        if not splittable:
            continue
        i = int(rng.choice(splittable))
        j = int(rng.integers(i + 1, n - 1))
        pieces = segment_line_words(Ink(tuple(placed[i])), 2, gap_factor=0.0)
        if pieces is None:
            continue
        cut = right[:i] + pieces + right[i + 1:j] + [Ink(tuple(placed[j]) + tuple(placed[j + 1]))] + right[j + 2:]
        wrong += 1
        refused += check_cut(cut, tokens, core_height(line)) is not None
    print(f"lines made of real UNIPEN words: {made} ({len(writers)} writers)")
    print(f"right cuts kept: {kept} of {made} ({kept / made:.1%})")
    print(f"wrong cuts of the same count refused: {refused} of {wrong} ({refused / max(wrong, 1):.1%})")


if __name__ == "__main__":
    main()
