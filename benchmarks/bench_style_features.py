"""How fast the Style backbone's features of renders are computed, here and on the machine's cores, and whether
the numbers are the same: ``--renders`` renders of the book's benchmark words (reference inks and true inks,
then the recorded set's), their features computed (1) in this process, one torch thread, (2) on a process pool of
``--workers`` workers (one thread each, jobs of STYLE_JOB_BATCHES inference batches: what section 03 does), and
(3) again on the pool with ``--busy`` processes spinning on the cores meanwhile (a loaded machine). Prints
renders per second of each and the largest absolute difference of a feature between (1) and (2)/(3) (the
stated tolerance is 0: an image's features do not depend on its batch or on which process computed them).

    .venv/bin/python benchmarks/bench_style_features.py                       # 4,000 renders, 2 workers, 2 busy
    .venv/bin/python benchmarks/bench_style_features.py --renders 1000 --busy 0
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from inkground_lib.components.style import StyleParams  # noqa: E402
from inkground_lib.components.style.backbone import load_backbone  # noqa: E402
from inkground_lib.core.dataset import load_dataset  # noqa: E402
from inkground_lib.core.layout import ROOT  # noqa: E402
from inkground_lib.core.parallel import LazyPool  # noqa: E402
from inkground_lib.evaluation.items import reference_inks, target_dataset  # noqa: E402
from inkground_lib.evaluation.style_features import style_features  # noqa: E402


def spin(stop):
    x = 0
    while not stop.is_set():
        x += 1


def inks_of_book(n: int) -> list:
    out = []
    for folder, refs in (("data/runs/synth/02_pseudo_labels/benchmark", ("reference", "true")),
                         ("data/datasets/recorded", ("reference",))):
        ds = target_dataset(load_dataset(ROOT / folder))
        for r in refs:
            out += list(reference_inks(ds, r))
    return out[:n]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--renders", type=int, default=4000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--busy", type=int, default=2)
    a = ap.parse_args(argv)
    inks = inks_of_book(a.renders)
    bb, p = load_backbone(), StyleParams()
    print(f"# {len(inks)} renders, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at the start")
    t = time.perf_counter()
    here = style_features(bb, p, inks, {})
    t_here = time.perf_counter() - t
    print(f"this process, 1 thread: {len(inks) / t_here:7.1f} renders/s ({t_here:.1f} s)")
    with LazyPool(a.workers) as pool:
        style_features(bb, p, inks[:2 * p.eval_batch_size * 8 + 1], {}, pool)  # workers started and warm
        t = time.perf_counter()
        pooled = style_features(bb, p, inks, {}, pool)
        t_pool = time.perf_counter() - t
        print(f"pool of {a.workers}: {len(inks) / t_pool:7.1f} renders/s ({t_pool:.1f} s), largest difference "
              f"{float(np.abs(pooled - here).max()):.3g}")
        if a.busy:
            stop = mp.Event()
            spinners = [mp.Process(target=spin, args=(stop,)) for _ in range(a.busy)]
            for s in spinners:
                s.start()
            try:
                t = time.perf_counter()
                busy = style_features(bb, p, inks, {}, pool)
                t_busy = time.perf_counter() - t
            finally:
                stop.set()
                for s in spinners:
                    s.join()
            print(f"pool of {a.workers} beside {a.busy} busy loops: {len(inks) / t_busy:7.1f} renders/s "
                  f"({t_busy:.1f} s), largest difference {float(np.abs(busy - here).max()):.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
