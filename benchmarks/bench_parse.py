"""Parser and prompt timings: parse time against input size for adversarial and normal answers (time per
MB should stay flat if parsing is linear), and the cost of building a request.

    .venv/bin/python benchmarks/bench_parse.py
"""

from __future__ import annotations

import time

import numpy as np

from inkground_lib.evaluation.parse import format_cell_strokes, parse_strokes
from inkground_lib.evaluation.prompt import Example, build_request, request_hash


def _best(f, repeat: int = 3) -> float:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        out.append(time.perf_counter() - t0)
    return min(out)


def main() -> None:
    rng = np.random.default_rng(0)
    cells = [rng.uniform(0.5, 50.5, size=(40, 2)) for _ in range(2000)]
    normal = "<answer>" + format_cell_strokes(cells, decimals=1) + "</answer>"
    units = {
        "normal answer": None,
        "<s1><points>x1y": "<s1><points>x1y",
        "<strokes>": "<strokes>",
        "<s1><points>x1 y": "<s1><points>x1 y",
        "x1 (no tags)": "x1",
        "<s1><points> + x9..9": "<s1><points>" + "x" + "9" * 200,
        "<<<<": "<",
    }
    print(f"{'input':28s} {'MB':>6s} {'seconds':>8s} {'s/MB':>7s}")
    for name, unit in units.items():
        for mb in (0.25, 1.0, 4.0):
            n = int(mb * 1e6)
            if unit is None:
                text = (normal * (n // len(normal) + 1))[:n]
            elif name.startswith("<s1><points> + x9"):
                text = unit + "9" * (n - len(unit))
            else:
                text = unit * (n // len(unit))
            t = _best(lambda: parse_strokes(text), repeat=1 if mb > 1 else 2)
            print(f"{name:28s} {len(text) / 1e6:6.2f} {t:8.3f} {t / (len(text) / 1e6):7.3f}")
    photo = rng.integers(150, 230, size=(1600, 1200, 3), dtype=np.uint8)
    ex = Example(photo=photo.copy(), word="dear", strokes=[rng.uniform(100, 900, size=(300, 2))])
    for variant in ("two-image", "one-image"):
        t = _best(lambda: build_request(photo, (1200, 1600), "hello", ex, variant=variant))
        req = build_request(photo, (1200, 1600), "hello", ex, variant=variant)
        th = _best(lambda: request_hash(req, "m", {"temperature": 0}))
        size = sum(len(b) for b in req.images)
        print(f"build_request {variant}: {t:.3f} s, request_hash {th:.3f} s, images {size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
