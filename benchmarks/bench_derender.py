"""Benchmark of the skeleton derenderer: speed (words per second on one core) and fidelity (DTW to the true
trajectory, in word heights; stroke-order agreement) on clean Hershey-script words, the same words
"photographed" (tinted paper, light gradient, blur, noise, JPEG), and recorded UNIPEN words, each drawn at
36-48 px word height with a 3-4 px pen and cut with crop_word (box +10%).

    .venv/bin/python benchmarks/bench_derender.py [--repeat 3] [--seed 0]

The word inks, drawing and order-agreement helpers are shared with tests/test_derender.py.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from inkground_lib.components.derenderers.skeleton import SkeletonDerenderer  # noqa: E402


def _helpers():
    spec = importlib.util.spec_from_file_location("_derender_test_helpers", ROOT / "tests" / "test_derender.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _summary(name: str, scores: np.ndarray) -> str:
    d, rho, direction = scores.T
    return (f"{name:<22s} n={len(d):3d}  DTW median {np.median(d):.3f}  p90 {np.percentile(d, 90):.3f}  "
            f"max {d.max():.3f}  mean {d.mean():.3f} | order rho median {np.median(rho):.2f}  "
            f"p10 {np.percentile(rho, 10):.2f} | direction agreement {direction.mean():.2f}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3, help="timing passes over the Hershey crops")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    T = _helpers()
    der = SkeletonDerenderer()

    hershey = T.word_cases([T.hershey_ink(w) for w in T.WORDS], seed=args.seed)
    der.derender(*hershey[0][:2])  # warm-up (imports)
    # speed on the evaluation crops, and on bigger ones (long words drawn 52 px tall: ~60 x 250 px crops)
    long_words = [T.hershey_ink(w) for w in T.WORDS if len(w) >= 6]
    big = [T.draw_word(ink, 52, 4) for ink in long_words]
    big = [T.crop_word(img, true.bbox()) + (true,) for img, true in big]
    for label, cases in (("evaluation crops", hershey), ("long-word crops", big)):
        sizes = np.array([c.shape[:2] for c, _, _ in cases])
        t0 = time.perf_counter()
        for _ in range(args.repeat):
            for crop, box, _ in cases:
                der.derender(crop, box)
        el = time.perf_counter() - t0
        n = args.repeat * len(cases)
        print(f"speed, {label}: {n / el:.1f} words/s on one core ({1000 * el / n:.1f} ms per word; crops "
              f"{np.median(sizes[:, 0]):.0f} x {np.median(sizes[:, 1]):.0f} px median h x w, {len(cases)} words)")

    print(_summary("Hershey clean", T.evaluate(der, hershey)))
    rng = np.random.default_rng(args.seed + 1)
    photo = [(T.photograph(np.ascontiguousarray(c), rng), b, t) for c, b, t in hershey]
    print(_summary("Hershey photographed", T.evaluate(der, photo)))
    try:
        texts, inks = T.unipen_inks(50)
    except BaseException as e:  # pytest.skip outside pytest: the data is absent
        print(f"UNIPEN: skipped ({e})")
        return
    print(_summary("UNIPEN recorded", T.evaluate(der, T.word_cases(inks, seed=args.seed))))


if __name__ == "__main__":
    main()
