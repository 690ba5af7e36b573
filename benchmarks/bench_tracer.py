"""Benchmark of the tracer derenderer: words per second on recorded-page word crops (the shipped UNIPEN
subset drawn as recorded pages, cut as section 02 cuts them), one word at a time and batched, next to the
skeleton derenderer it builds on.

    .venv/bin/python benchmarks/bench_tracer.py [--threads 2] [--repeat 2] [--weights PATH]
    .venv/bin/python benchmarks/bench_tracer.py --unipen-dir /tmp/unipen --out /tmp/tracer_eval \
        [--save benchmarks/results/tracer_eval.txt]

The issue's floor is 40 words/s on 2 cores; the book's pseudo-labels want 150+. With ``--unipen-dir`` (a UNIPEN
train_r01_v07 release, see data/models/MODEL.md for where it comes from) it then checks the tracer against the
held-out writers' true pen paths (:func:`inkground_lib.pseudo.tracer_eval.evaluate_tracer`): median DTW and
Chamfer with page-bootstrap intervals for the skeleton and the tracer in each text mode (recognize: given the
OCR reading of the crop; text: the true text; none), each against the skeleton, and the OCR filter's rates.
``--save`` writes what it prints to a results file.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2, help="torch threads")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--weights", default=None, help="weights file (default: the shipped ones)")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--unipen-dir", dest="unipen_dir", help="a UNIPEN release: also check against held-out writers")
    ap.add_argument("--out", help="the evaluation's folder (reused when run again: caches)")
    ap.add_argument("--synth-pages", dest="synth_pages", type=int, default=0)
    ap.add_argument("--skip-speed", action="store_true", help="only the evaluation")
    ap.add_argument("--save", help="also write what is printed to this file")
    args = ap.parse_args(argv)
    if args.unipen_dir and not args.out:
        ap.error("--unipen-dir needs --out")
    lines: list[str] = []

    def say(line: str = "") -> None:
        print(line, flush=True)
        lines.append(line)

    import os
    import platform

    say(f"# .venv/bin/python benchmarks/bench_tracer.py {' '.join(argv if argv is not None else sys.argv[1:])}")
    say(f"date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {platform.machine()} {os.cpu_count()} cores; "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if not args.skip_speed:
        speed(args, say)
    if args.unipen_dir:
        from inkground_lib.pseudo.tracer_eval import evaluate_tracer, report_lines

        t0 = time.perf_counter()
        rep = evaluate_tracer(args.unipen_dir, args.out, weights=args.weights, synth_pages=args.synth_pages,
                              progress=False, overwrite=True)
        for line in report_lines(rep):
            say(line)
        say(f"evaluation: {time.perf_counter() - t0:.0f} s (derender and OCR logs in {args.out} reused when there); "
            f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.save:
        Path(args.save).write_text("\n".join(lines) + "\n", "utf-8")


def speed(args, say) -> None:
    """Words per second of the skeleton and the tracer on the shipped subset's recorded-page crops."""
    import cv2
    import torch

    from inkground_lib.components.derenderers.base import crop_word
    from inkground_lib.components.derenderers.skeleton import SkeletonDerenderer
    from inkground_lib.components.derenderers.tracer.derenderer import TracerDerenderer
    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.core.defaults import CROP_GROW
    from inkground_lib.datasets.recorded import build_recorded

    cv2.setNumThreads(1)
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        ds = load_dataset(build_recorded(Path(tmp) / "recorded", progress=False))
        items = []
        for p in ds.pages:
            photo = p.load_image()
            for w in p.words:
                crop, box = crop_word(photo, w.box, grow=CROP_GROW)
                items.append((crop.copy(), box, w.text))
    tracer = TracerDerenderer(args.weights, batch_size=args.batch_size)
    skel = SkeletonDerenderer()
    tracer.derender_batch(items[:4])  # warm-up
    n = len(items) * args.repeat

    def timed(label, fn):
        t0 = time.perf_counter()
        for _ in range(args.repeat):
            fn()
        el = time.perf_counter() - t0
        say(f"{label:<44s} {n / el:7.1f} words/s ({1000 * el / n:.1f} ms a word)")
        return el

    say(f"{len(items)} word crops of {len(ds.pages)} recorded pages; torch threads {args.threads}")
    t_skel = timed("skeleton, one word at a time (1 process)", lambda: [skel.derender(c, b) for c, b, _ in items])
    timed("tracer, one word at a time (1 process)", lambda: [tracer.derender(c, b, t) for c, b, t in items])
    t_batch = timed("tracer, derender_batch (1 process)", lambda: tracer.derender_batch(items))
    if len(items) >= 128:
        timed("tracer, derender_batch, skeleton in 2 processes", lambda: tracer.derender_batch(items, workers=2))
    feats = [skel.trace(c) for c, _, _ in items]
    t0 = time.perf_counter()
    for _ in range(args.repeat):
        tracer.arrange(feats, [t for _, _, t in items])
    el = time.perf_counter() - t0
    say(f"{'  of which the network (order + direction)':<44s} {n / el:7.1f} words/s ({1000 * el / n:.2f} ms a word)")
    say(f"tracer / skeleton time: {t_batch / t_skel:.2f}")


if __name__ == "__main__":
    main()
