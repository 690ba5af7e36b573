"""RapidOCR's recogniser on the book's words: CPU per image by batch size, and whether batching reads the same
texts (issue 42: "batched OCR recognition only where it reads the same texts"). Prints figures; not a test.

    .venv/bin/python benchmarks/bench_ocr_batch.py [--dataset DIR] [--pages 30:50] [--batches 1 4 16 64] [--widths 160 96]

Reads the word crops of some pages of ``--dataset`` (the book's candidate pages by default; as section 02's OCR filter cuts them) and
the renders of their true inks (as section 03 renders an ink), with :class:`~inkground_lib.components.ocr.
rapidocr.RapidOCREngine` on one thread. CPU-seconds of this process per image (process time: a busy machine
disturbs it less than wall time), and the texts of each batch size against batches of one.

The batch rows read at RapidOCR's own minimum input width (320 pixels at 48 high). ``--widths``: the same reads
with the recogniser's minimum width lowered (``RapidOCREngine(min_width=...)``; at 48 pixels high a word crop of
the book is ~90 wide and RapidOCR pads it to 320: most of the network's work is on the padding), with the share of
texts that change and of words read right (normalised as the OCR filter compares them): the measurement behind
:data:`~inkground_lib.components.ocr.rapidocr.RAPIDOCR_MIN_WIDTH`. ``--filter-run RUN``: for each width, section 02's OCR filter again on every candidate page of a
pseudo-label run (its pseudo-labels read from its derender log, only read), with the pages whose outcome flips.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", default="30:50", help="candidate pages read, as a Python slice (default 30:50)")
    ap.add_argument("--dataset", type=Path, default=ROOT / "data" / "datasets" / "synth",
                    help="the dataset whose pages are read (default: the book's candidate pages)")
    ap.add_argument("--batches", type=int, nargs="*", default=[1, 4, 16, 64])
    ap.add_argument("--widths", type=int, nargs="*", default=[160, 96])
    ap.add_argument("--unipen", type=Path, default=None,
                    help="a UNIPEN release folder: renders of --unipen-words of its words (any writer: read, never "
                         "trained on) read at 320 and at each --widths, with McNemar's test against 320")
    ap.add_argument("--unipen-words", type=int, default=2000)
    ap.add_argument("--filter-run", type=Path, default=None,
                    help="a pseudo-label run folder: its OCR filter again at each --widths (see the module doc)")
    a = ap.parse_args()

    import numpy as np

    from inkground_lib.components.derenderers.base import crop_word
    from inkground_lib.components.metrics.readability import normalise_text
    from inkground_lib.components.ocr.rapidocr import RapidOCREngine
    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.core.defaults import CROP_GROW
    from inkground_lib.core.render import render_ink

    ds = load_dataset(a.dataset)
    lo, hi = (int(x) if x else None for x in a.pages.split(":"))
    crops, renders, truth = [], [], []
    for p in ds.pages[lo:hi]:
        photo = p.load_image()
        for w in p.words:
            crops.append(np.ascontiguousarray(crop_word(photo, w.box, grow=CROP_GROW)[0]))
            renders.append(render_ink(w.true_ink if w.true_ink is not None else w.ink))
            truth.append(normalise_text(w.text))

    def right(texts):
        return sum(normalise_text(t) == x for t, x in zip(texts, truth))

    def cpu_read(engine, images):
        t = time.process_time()
        texts = engine.read(images)
        return texts, (time.process_time() - t) / len(images)

    print(f"# bench_ocr_batch: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, pages {a.pages} of "
          f"{ds.root}: {len(crops)} words")
    warm = RapidOCREngine(progress=False, min_width=320)
    warm.read(crops[:3])  # the session's first run sets kernels up
    for what, images in (("word crops", crops), ("renders of the true inks", renders)) if crops else ():
        print(f"\n{what}: CPU-ms per image (one thread), texts the same as batches of one, words read right")
        base = None
        for b in a.batches:
            texts, r = cpu_read(RapidOCREngine(batch_size=b, progress=False, min_width=320), images)
            base = texts if base is None else base
            same = sum(x == y for x, y in zip(texts, base))
            print(f"  batch {b:3d}: {r * 1000:6.1f} ms, same {same}/{len(texts)}, right {right(texts)}")
        for width in a.widths:
            texts, r = cpu_read(RapidOCREngine(progress=False, min_width=width), images)
            same = sum(x == y for x, y in zip(texts, base))
            print(f"  minimum width {width} (RapidOCR's: 320): {r * 1000:6.1f} ms, "
                  f"same {same}/{len(texts)}, right {right(texts)}")
    if a.filter_run is not None:
        filter_again(a.filter_run, ds, a.widths)
    if a.unipen is not None:
        real_words(a.unipen, a.unipen_words, a.widths)


def real_words(unipen, n, widths) -> None:
    """Renders of ``n`` words of the UNIPEN release at ``unipen`` (seeded sample, texts of two or more
    characters) read at RapidOCR's 320 and at each of ``widths``: words read right, and McNemar's exact test of
    each width against 320 (the words one reads right and the other not)."""
    import random

    import numpy as np
    from scipy.stats import binomtest

    from inkground_lib.components.derenderers.tracer.data import read_release_words
    from inkground_lib.components.metrics.readability import normalise_text
    from inkground_lib.components.ocr.rapidocr import RapidOCREngine
    from inkground_lib.core.render import render_ink

    words, _ = read_release_words(unipen)
    sample = random.Random(0).sample([w for w in words if w.text and len(w.text) >= 2], n)
    imgs = [render_ink(w.ink) for w in sample]
    truth = [normalise_text(w.text) for w in sample]
    print(f"\nrenders of {n} UNIPEN words of {len({w.writer for w in sample})} writers (of {len(words)} words)")
    right = {}
    for width in [320, *widths]:
        t = time.process_time()
        texts = RapidOCREngine(progress=False, min_width=width).read(imgs)
        right[width] = np.array([normalise_text(x) == y for x, y in zip(texts, truth)])
        print(f"  minimum width {width}: {(time.process_time() - t) / n * 1000:5.1f} ms, right {right[width].sum()} "
              f"({right[width].mean():.3f})")
    for width in widths:
        lost, won = int((right[320] & ~right[width]).sum()), int((~right[320] & right[width]).sum())
        print(f"  {width} against 320: {lost} words read right only at 320, {won} only at {width}; McNemar exact "
              f"p = {binomtest(min(lost, won), lost + won, 0.5).pvalue:.2g}")


def filter_again(run, ds, widths) -> None:
    """Section 02's OCR filter on every candidate page of pseudo-label run ``run`` with the recogniser's minimum
    width at each of ``widths``: pages whose outcome differs from the run's (pages.csv), words whose match does."""
    import json

    import numpy as np
    import pandas as pd

    from inkground_lib.components.metrics.readability import normalise_text
    from inkground_lib.components.ocr.rapidocr import RapidOCREngine
    from inkground_lib.core.ink import ink_from_lists
    from inkground_lib.core.render import render_ink
    from inkground_lib.core.run_files import DERENDER_SCHEMA, derender_jsonl, pages_csv, pseudo_summary_json
    from inkground_lib.pseudo.crop_readings import page_crops

    summary = json.loads(pseudo_summary_json(run).read_text())
    threshold = float(summary["params"]["ocr_threshold"])
    mode = summary["params"]["derenderer_text_mode"]
    inks = {}
    with open(derender_jsonl(run, summary["components"]["derenderer"])) as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("schema") == DERENDER_SCHEMA and rec.get("text_mode") == mode:
                inks.update(rec["words"])
    pages = pd.read_csv(pages_csv(run), dtype={"page": str}).set_index("page")
    words = pd.read_csv(run / "words.csv", dtype={"page": str, "word_id": str}).set_index("word_id")
    used = [p for p in ds.pages if p.id in pages.index]
    print(f"\nthe OCR filter of {run} again ({len(used)} pages, threshold {threshold:g}): pages whose outcome "
          f"flips, words whose match does, CPU-s of the reads")
    for width in widths:
        eng = RapidOCREngine(progress=False, min_width=width)
        t = time.process_time()
        flips, word_flips, n_words, passed = [], 0, 0, 0
        for p in used:
            a = eng.read(page_crops(p)) if p.words else []
            b = eng.read([render_ink(ink_from_lists(inks[w.id])) for w in p.words]) if p.words else []
            match = [normalise_text(x) == normalise_text(y) for x, y in zip(a, b)]
            word_flips += sum(m != bool(words.loc[w.id, "match"]) for m, w in zip(match, p.words))
            n_words += len(match)
            ok = bool(match) and np.mean(match) >= threshold
            passed += ok
            if ok != bool(pages.loc[p.id, "ocr_pass"]):
                flips.append(p.id)
        print(f"  minimum width {width}: {passed} pages pass (the run: {int(pages['ocr_pass'].sum())}), "
              f"{len(flips)} flip {flips[:8]}; {word_flips} of {n_words} words change their match; "
              f"{time.process_time() - t:.0f} CPU-s")


if __name__ == "__main__":
    main()
