"""Synthetic page generation speed: pages per second in one process and in the process pool, and the time
to generate the paper's 2,984 candidate pages at the default page size.

    .venv/bin/python benchmarks/bench_synth.py [--pages-single 20] [--pages-pool 60] [--full auto|yes|no]

--full auto (default) generates all 2,984 pages when the pool rate predicts at most --max-minutes (10),
otherwise 300 pages and extrapolates (and says so). Everything is written into a temporary folder that is
deleted afterwards. Page counts are per run; the machine's other load changes the numbers.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from inkground_lib.core.dataset import load_dataset
from inkground_lib.datasets.statistics import statistics
from inkground_lib.datasets.synth.generate import SynthParams, generate

PAPER_PAGES = 2984


def run(root: Path, params: SynthParams, workers: int) -> float:
    t = time.perf_counter()
    generate(root, params, progress=False, workers=workers, pool_min_pages=2)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages-single", type=int, default=20)
    ap.add_argument("--pages-pool", type=int, default=60)
    ap.add_argument("--full", choices=("auto", "yes", "no"), default="auto")
    ap.add_argument("--max-minutes", type=float, default=10.0)
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    a = ap.parse_args()
    base = SynthParams()
    print(f"page size {base.width} x {base.height} px, words per page {base.words_min}-{base.words_max} "
          f"(mean {base.words_mean}), cpus {os.cpu_count()}, pool workers {a.workers}")
    tmp = Path(tempfile.mkdtemp(prefix="bench_synth_"))
    try:
        p1 = replace(base, pages=a.pages_single, seed=101)
        t1 = run(tmp / "single", p1, workers=1)
        st = statistics(load_dataset(tmp / "single"))
        print(f"single process: {a.pages_single} pages in {t1:.1f} s = {a.pages_single / t1:.2f} pages/s "
              f"({st['words']} words, {st['words_per_page_mean']:.1f} per page, median box "
              f"{st['box_width_median']:.3f} x {st['box_height_median']:.3f} of the page)")
        p2 = replace(base, pages=a.pages_pool, seed=102)
        t2 = run(tmp / "pool", p2, workers=a.workers)
        rate = a.pages_pool / t2
        print(f"pool ({a.workers} workers): {a.pages_pool} pages in {t2:.1f} s = {rate:.2f} pages/s")
        predicted = PAPER_PAGES / rate
        full = a.full == "yes" or (a.full == "auto" and predicted <= a.max_minutes * 60)
        pf = replace(base, pages=PAPER_PAGES if full else 300, seed=0)
        tf = run(tmp / "paper", pf, workers=a.workers)
        size_mb = sum(f.stat().st_size for f in (tmp / "paper").rglob("*") if f.is_file()) / 1e6
        if full:
            print(f"paper scale: {PAPER_PAGES} pages generated in {tf / 60:.1f} min "
                  f"({PAPER_PAGES / tf:.2f} pages/s), {size_mb:.0f} MB on disk")
        else:
            est = tf / 300 * PAPER_PAGES
            print(f"paper scale: EXTRAPOLATED from 300 pages generated in {tf:.1f} s: {PAPER_PAGES} pages "
                  f"would take ~{est / 60:.1f} min ({300 / tf:.2f} pages/s); 300 pages use {size_mb:.0f} MB, "
                  f"so ~{size_mb * PAPER_PAGES / 300:.0f} MB at full scale")
        t = time.perf_counter()
        generate(tmp / "paper", pf, progress=False, workers=a.workers)
        print(f"rerun with identical parameters (reuse): {time.perf_counter() - t:.1f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
