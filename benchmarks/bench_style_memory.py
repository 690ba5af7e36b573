"""Memory of the paper-scale Style stage's driver: two writer classifiers trained side by side on a 2-process
pool, one epoch per job with a checkpoint after each (``start_style_classifier(..., resumable=True)``) or,
with --one-job, each training in one job (the book's way), on the first K pages of a benchmark set; the
driver's and the whole stage's peak PSS, sampled every 0.2 s.

    .venv/bin/python benchmarks/bench_style_memory.py --bench /tmp/paper_scale_full/02_pseudo_labels/benchmark

A training state (ResNet-18 weights, AdamW moments, schedule) is ~140 MB whatever the data; what the driver
holds of it per classifier does not depend on K, so a small K measures it (the full run's items add to both).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time

from inkground_lib.pipelines.paper_scale import PeakMemory
from inkground_lib.core.dataset import load_dataset
from inkground_lib.core.parallel import executor
from inkground_lib.evaluation.settings import EvalSettings
from inkground_lib.evaluation.style_stage import start_style_classifier


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True, help="a benchmark set (e.g. a paper-scale run's)")
    ap.add_argument("--pages", type=int, default=100)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--one-job", action="store_true", help="the book's way: each training in one job, no checkpoints")
    a = ap.parse_args()
    ds = load_dataset(a.bench, check_images=False)
    ds = dataclasses.replace(ds, pages=ds.pages[:a.pages])
    settings = EvalSettings(style={"epochs": a.epochs})
    with tempfile.TemporaryDirectory() as tmp, executor(2, None) as ex:
        with PeakMemory(0.2) as mem:
            mem.sample()
            base_self = mem.peak_self
            t = time.perf_counter()
            b = start_style_classifier(ds, tmp, settings, ex, False, resumable=not a.one_job)
            tr = start_style_classifier(ds, tmp, dataclasses.replace(settings, reference="true"), ex, False,
                                        resumable=not a.one_job)
            (_, fb), (_, ft) = b(), tr()
            dt = time.perf_counter() - t
    print(f"{a.pages} pages, {ds.n_words} words ({fb['n_train']} + {ft['n_train']} training words), "
          f"{a.epochs} epochs, 2 workers, {'one job per training' if a.one_job else 'one job per epoch'}: "
          f"{dt:.0f} s; load {os.getloadavg()[0]:.2f}")
    print(f"driver PSS: {base_self / 1e9:.3f} GB before, peak {mem.peak_self / 1e9:.3f} GB "
          f"(+{(mem.peak_self - base_self) / 1e9:.3f})")
    print(f"driver + workers PSS: peak {mem.peak_total / 1e9:.3f} GB")
    print(f"top-1 {fb['top1']:.3f} / {ft['top1']:.3f}")


if __name__ == "__main__":
    main()
