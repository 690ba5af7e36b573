"""The floor of a fresh `make book` on this machine: what its two long sections must compute, at the rates
measured here, against the budget of benchmarks/bench_book.py (prints figures; not a test; issue 32).

    .venv/bin/python benchmarks/bench_book_floor.py [--root DIR] [--cores N] [--sample N]

``--root``: a checkout in which `make book` has run (default: this one; e.g. a folder kept by
``bench_book.py --keep``). The work is counted from that build's own inputs and outputs - the candidate pages
and recorded pages (section 01's datasets), the benchmark section 02 kept, and the Style classifiers section 03
saved (their number of training words and epochs) - never from a model of what the pipeline might do. Only
work that is identical by construction is counted once (a crop read once by OCR, a 160-pixel skeleton trace
shared by the tracer's text modes, a render read once per drawing); everything a stage does besides the items
listed here (page decoding, DTW, bootstraps, rendering figures, jupyter-book) is left out, so each floor is a
lower bound.

Rates are CPU-seconds per item of one process with one thread, measured here on ``--sample`` words of the
candidate pages (process time, so a busy machine disturbs them less than wall time): RapidOCR's recogniser on
a word crop and on a render, the skeleton's trace at 80 and at 160 work pixels, the tracer network's ordering
(batched), the Style classifier's training (images per CPU-second over 2 epochs of the recipe on 256 words)
and its inference. The floor of a stage is its CPU-seconds over ``--cores`` (default: this machine's): the
wall time it needs with every core busy all the time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BOOK_BUDGET = 600  # seconds, the whole first `make book` (benchmarks/bench_book.py, FIRST_TARGET)


def cpu_per_item(fn, items) -> float:
    """CPU-seconds of this process per item of ``fn(items)`` (one call over all of them)."""
    t = time.process_time()
    fn(items)
    return (time.process_time() - t) / max(1, len(items))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=ROOT, help="a checkout in which `make book` has run")
    ap.add_argument("--cores", type=int, default=os.cpu_count(), help="cores the floor divides the work by")
    ap.add_argument("--sample", type=int, default=200, help="words the per-item rates are measured on")
    a = ap.parse_args()

    import numpy as np
    import torch

    torch.set_num_threads(1)
    from bench_book import BUDGET
    from inkground_lib.components.derenderers.base import crop_word
    from inkground_lib.components.derenderers.skeleton import SkeletonDerenderer, SkeletonParams
    from inkground_lib.components.derenderers.tracer.derenderer import TRACER_GEOMETRY, TracerDerenderer
    from inkground_lib.components.ocr.rapidocr import RapidOCREngine
    from inkground_lib.components.style import META_FILE, StyleParams, load_style, style_scores, train_epochs
    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.core.defaults import CROP_GROW
    from inkground_lib.core.render import render_ink

    data = a.root / "data"
    cand = load_dataset(data / "datasets" / "synth")
    rec = load_dataset(data / "datasets" / "recorded")
    bench = load_dataset(data / "runs" / "synth" / "02_pseudo_labels" / "benchmark")
    styles = []
    for folder in sorted((data / "runs").glob("*/03_evaluation/style-*")):
        if not (folder / META_FILE).is_file():
            continue  # a training that did not finish
        meta = json.loads((folder / META_FILE).read_text())
        styles.append((folder.relative_to(data / "runs"), int(meta.get("n_items", 0)),
                       int(meta.get("params", {}).get("epochs", StyleParams().epochs)),
                       float(meta.get("train_seconds", float("nan")))))
    C, R, B = cand.n_words, rec.n_words, bench.n_words

    # samples: word crops of the candidate pages with their true inks
    crops, inks, texts, pages = [], [], [], []
    for p in cand.pages:
        photo = p.load_image()
        for w in p.words:
            crop, _ = crop_word(photo, w.box, grow=CROP_GROW)
            crops.append(np.ascontiguousarray(crop))
            inks.append(w.ink)
            texts.append(w.text)
            pages.append(p.id)
        if len(crops) >= a.sample:
            break
    crops, inks, texts = crops[:a.sample], inks[:a.sample], texts[:a.sample]
    ocr = RapidOCREngine(progress=False)
    ocr.read(crops[:3])  # the session's first run sets kernels up
    r_crop = cpu_per_item(ocr.read, crops)
    renders = [render_ink(k) for k in inks]
    r_render = cpu_per_item(lambda ks: ocr.read([render_ink(k) for k in ks]), inks)
    sk80, sk160 = SkeletonDerenderer(SkeletonParams()), SkeletonDerenderer(TRACER_GEOMETRY)
    r_sk80 = cpu_per_item(lambda cs: [sk80.trace(c) for c in cs], crops)
    traces = []
    r_sk160 = cpu_per_item(lambda cs: traces.extend(sk160.trace(c) for c in cs), crops)
    tracer = TracerDerenderer()
    r_net = cpu_per_item(lambda ts: tracer.orders(ts, texts), traces)
    params = StyleParams()
    items = [(k, pg) for k, pg in zip(inks * (256 // len(inks) + 1), pages * (256 // len(inks) + 1))][:256]
    t = time.process_time()
    train_epochs(items, params, epochs=2)
    r_train = (time.process_time() - t) / (2 * len(items))
    style_dirs = [data / "runs" / s[0] for s in styles]
    r_infer = float("nan")
    if style_dirs:
        model = load_style(style_dirs[0])
        labels = [model.classes[0]] * len(inks)
        r_infer = cpu_per_item(lambda ks: style_scores(model, ks, labels), inks)
    del renders

    print(f"# bench_book_floor: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {a.root}, "
          f"{a.cores} cores; load average {os.getloadavg()[0]:.2f} at the end of the rate measurements")
    print(f"# words: {C:,} candidate, {R:,} recorded, {B:,} in the benchmark section 02 kept")
    print("# CPU-seconds per item (one process, one thread), measured on "
          f"{len(crops)} candidate words:")
    for name, r in (("OCR of a word crop", r_crop), ("render + OCR of a drawing", r_render),
                    ("skeleton trace at 80 px", r_sk80), ("skeleton trace at 160 px (the tracer's)", r_sk160),
                    ("tracer network ordering (batched)", r_net), ("Style training, per image", r_train),
                    ("Style inference, per render", r_infer)):
        print(f"#   {name:42s} {r * 1000:8.2f} ms")

    # section 02 (module docs of pseudo.run and pseudo.derenderer_comparison): the candidates' crops are read
    # once (the tracer's "recognize" mode and the OCR filter share them), traced once at 160 px (shared by the
    # tracer's modes), ordered by the network once per text mode (recognize: the labels; text: Table 2.3),
    # rendered and read once (the filter); Table 2.3 also traces every word at 80 px (the skeleton row); the
    # recorded pages go through Table 2.3 the same way (their crops read for the recognize row)
    s02 = [("OCR of the crops (candidates + recorded)", C + R, r_crop),
           ("skeleton traces at 160 px", C + R, r_sk160),
           ("tracer orderings (2 text modes)", 2 * (C + R), r_net),
           ("OCR of the pseudo-labels' renders (filter)", C, r_render),
           ("skeleton traces at 80 px (Table 2.3)", C + R, r_sk80)]
    # section 03: every Style classifier trains epochs x words images (its BatchNorm pass: one inference per
    # word); the renders of the systems that draw what section 02 did not (font, box; the skeleton's 80-px
    # drawing) are read on the benchmark, and the recorded set's renders of its four drawing systems
    if not styles:
        sys.exit(f"\n{data / 'runs'}: no saved Style classifier (*/03_evaluation/style-*/{META_FILE}): run `make book` "
                 "there first (section 03's floor is counted from the classifiers it trained)")
    s03 = [(f"Style training {str(s[0]).split('/')[0]}/{s[0].name} ({s[1]:,} x {s[2]} epochs)", s[1] * s[2], r_train)
           for s in styles]
    s03 += [("Style BatchNorm passes", sum(s[1] for s in styles), r_infer),
            ("OCR of renders: skeleton, font, box on the benchmark", 3 * B, r_render),
            ("OCR of renders: 4 systems on the recorded pages", 4 * R, r_render)]
    total_floor = 0.0
    for section, rows in (("section 02", s02), ("section 03", s03)):
        print(f"\n{section} (budget {BUDGET[section]} s)")
        print(f"  {'work':58s} {'items':>9s} {'CPU-s':>8s}")
        cpu = 0.0
        for name, n, r in rows:
            print(f"  {name:58s} {n:9,d} {n * r:8.1f}")
            cpu += n * r
        floor = cpu / a.cores
        total_floor += floor
        print(f"  {'floor: CPU-s / ' + str(a.cores) + ' cores':58s} {'':9s} {floor:8.1f} s"
              f"{'  OVER its budget' if floor > BUDGET[section] else ''}")
    rest = sum(v for k, v in BUDGET.items() if k not in ("section 02", "section 03"))
    print(f"\nsections 02 and 03 alone: at least {total_floor:.0f} s; with the other stages at their budgets "
          f"({rest} s): at least {total_floor + rest:.0f} s against {BOOK_BUDGET} s "
          f"({'misses by at least ' + format(total_floor + rest - BOOK_BUDGET, '.0f') + ' s' if total_floor + rest > BOOK_BUDGET else 'within'})")
    for s in styles:
        print(f"  recorded by the build: {s[0]} trained {s[1]:,} words x {s[2]} epochs in {s[3]:.0f} s")


if __name__ == "__main__":
    main()
