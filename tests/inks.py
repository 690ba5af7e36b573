"""Synthetic inks for the tests: words written in a Hershey font.

A plain module (not a fixture) because test modules call :func:`hershey_ink` at import time and in
module-scoped fixtures, and benchmarks/bench_derender.py loads tests/test_derender.py outside pytest and
uses ``hershey_ink`` from it. Import it with ``from inks import hershey_ink`` (pytest puts ``tests/`` on
``sys.path`` because of tests/conftest.py; a module that may be loaded outside pytest adds it itself).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from inkground_lib.core.ink import Ink, as_ink


@cache
def hershey_font(name: str = "scripts", height: float = 100.0):
    """The Hershey font ``name`` scaled so that its rendering height is ``height`` font units (y up)."""
    from HersheyFonts import HersheyFonts

    font = HersheyFonts()
    font.load_default_font(name)
    font.normalize_rendering(height)
    return font


def _writer_order(strokes: list[np.ndarray]) -> list[np.ndarray]:
    """Segments that continue one another chained pen-down; small chains (dots, crosses: height < 0.3 and
    length < 0.6 word heights) moved after the chain they overlap most horizontally."""
    chains: list[list] = []
    for seg in strokes:
        seg = [tuple(p) for p in seg]
        for c in reversed(chains):
            if np.hypot(c[-1][0] - seg[0][0], c[-1][1] - seg[0][1]) < 1e-6:
                c.extend(seg[1:])
                break
        else:
            chains.append(list(seg))
    arr = [np.asarray(c, float) for c in chains]
    H = np.ptp(np.vstack(arr)[:, 1])
    mark = [np.ptp(c[:, 1]) < 0.3 * H and np.hypot(*np.diff(c, axis=0).T).sum() < 0.6 * H for c in arr]
    main = [i for i in range(len(arr)) if not mark[i]]
    after: dict[int, list[int]] = {i: [] for i in main}
    for i in range(len(arr)):
        if mark[i]:
            c = arr[i]
            after[max(main, key=lambda j: min(c[:, 0].max(), arr[j][:, 0].max())
                      - max(c[:, 0].min(), arr[j][:, 0].min()))].append(i)
    return [arr[k] for i in main for k in [i] + after[i]]


def hershey_ink(text: str, slant: float = 0.0, sx: float = 1.0, rng: np.random.Generator | None = None, *,
                noise: float = 1.0, writer_order: bool = False, font: str = "scripts",
                height: float = 100.0) -> Ink:
    """``text`` in the Hershey font ``font`` (``height`` font units tall) as an ink in font units, y down.

    ``sx`` stretches x and ``slant`` shears it (x' = x * sx - slant * y, with y pointing down, so a positive
    slant leans forward). ``writer_order`` puts the strokes in a writer's order (see :func:`_writer_order`);
    otherwise there is one stroke per font segment, in the font's order. With ``rng``, Gaussian noise of
    standard deviation ``noise`` font units is added to every point (after any reordering).
    """
    strokes = []
    for seg in hershey_font(font, height).strokes_for_text(text):
        a = np.array(seg, float)
        a[:, 1] *= -1  # the font is y up
        if slant or sx != 1.0:
            a[:, 0] = a[:, 0] * sx - slant * a[:, 1]
        strokes.append(a)
    if writer_order:
        strokes = _writer_order(strokes)
    if rng is not None:
        strokes = [a + rng.normal(0.0, noise, a.shape) for a in strokes]
    return as_ink(strokes)
