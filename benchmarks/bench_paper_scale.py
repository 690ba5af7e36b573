"""The paper's scale, per stage: run ``inkground paper-scale`` on a slice of the 2,984 candidate pages (the
first N pages of the full set: page i depends only on the seed and i), print each stage's throughput, what
limits it and the time extrapolated to 2,984 pages, with the load average seen (a shared machine).

    .venv/bin/python benchmarks/bench_paper_scale.py                     # 300-page slice, local pool
    .venv/bin/python benchmarks/bench_paper_scale.py --pages 300 --out /tmp/ps300 --style-compare 50
    .venv/bin/python benchmarks/bench_paper_scale.py --report /tmp/paper_scale_full   # a finished run's record

``--style-compare K``: the book's Style recipe against ``--style-epochs`` (the shorter recipe) on the first K
pages of the slice's benchmark set: top-1 on held-out words and training time of each.
Extrapolation: synth and section 02 scale with candidate pages; predict, Style and scoring with benchmark
words, which are a fixed share of the candidates in expectation (the slice's share is used).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

LIMITS = {
    "synth": "CPU: drawing and photographing each page (perspective warp, blur, noise, JPEG), one page per job",
    "pseudo": "CPU: RapidOCR's recogniser, two reads per word (crop and render, ~20-25 ms each on one core); "
              "the skeleton derenderer is ~1/5 of it",
    "predict": "CPU: the skeleton derenderer on every benchmark word and RapidOCR on the font and box renders "
               "(the reference's and skeleton's renders were read in section 02)",
    "style": "CPU: the shipped backbone's features of the training renders (~120-130 per CPU-s) and one "
             "logistic-regression head per classifier (pool jobs, side by side); the from-random recipe "
             "(--style-fit): ResNet-18 training, images x epochs",
    "score": "CPU: Style inference on every distinct render, DTW / Chamfer (numba), bootstrap",
}


def loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "n/a"


def report(d: dict, full_pages: int, out=print) -> float:
    """Print the stage table of a run record (``stages.json``) and return the extrapolated total seconds."""
    pages = d["params"]["pages"]
    st = d["stages"]
    f_pages = full_pages / pages
    out(f"slice: {pages} candidate pages; executor: {d.get('executor')}; extrapolated to {full_pages} pages "
        f"(x{f_pages:.2f})")
    out(f"{'stage':8s} {'seconds':>8s} {'items':>8s} {'unit':18s} {'per s':>8s} {'peak GB':>8s} {'full (min)':>10s}")
    total_full = 0.0
    for name in ("synth", "pseudo", "predict", "style", "score"):
        r = st.get(name)
        if r is None:
            out(f"{name:8s} not finished")
            continue
        full = r["seconds"] * f_pages
        if not (name == "style" and "note" in r):  # an older record: style overlapped predict (see below)
            total_full += full
        out(f"{name:8s} {r['seconds']:8.1f} {r['items']:8d} {r['unit']:18s} {r['rate_per_s'] or 0:8.2f} "
            f"{r['peak_memory_gb']:8.2f} {full / 60:10.1f}")
    if "pseudo" in st:
        p = st["pseudo"]
        out(f"  pseudo: derender {p.get('derender_words_per_s')} words/s, OCR filter {p.get('ocr_reads_per_s')} "
            f"reads/s; benchmark {p.get('benchmark_pages')} pages, {p.get('benchmark_words')} words")
    if "style" in st:
        s = st["style"]
        out(f"  style: recipe {s.get('recipe')}, {s.get('classes')} classes, top-1 {s.get('top1_reference'):.3f} "
            f"(pseudo-label refs) / {s.get('top1_true'):.3f} (true), chance {s.get('chance'):.4f}")
        if "note" in s:  # a run made before style followed predict: its predict seconds include the training
            out(f"  style: {s['note']}")
    out(f"peak memory (driver + workers, PSS): {d.get('peak_memory_gb')} GB; driver alone {d.get('peak_driver_gb')} GB")
    out(f"wall time of the slice run: {d.get('total_seconds')} s; extrapolated full run: {total_full / 60:.0f} min")
    for name, why in LIMITS.items():
        out(f"  limit of {name}: {why}")
    return total_full


def style_compare(bench_dir: Path, k: int, epochs: int, out=print) -> None:
    """Book recipe vs ``epochs`` epochs on the first ``k`` pages of ``bench_dir``: top-1 and seconds."""
    from inkground_lib.components.style import (
        StyleParams,
        evaluate_classifier,
        train_style,
    )
    from inkground_lib.core.dataset import load_dataset

    ds = load_dataset(bench_dir)
    pages = ds.pages[:k]
    train = [(w.ink, p.writer) for p in pages for w in p.words if w.split == "train"]
    test = [(w.ink, p.writer) for p in pages for w in p.words if w.split == "test"]
    out(f"Style on the first {len(pages)} benchmark pages: {len(train)} training words, {len(test)} held out, "
        f"chance {1 / len(pages):.3f}")
    for label, params in (("book recipe (StyleParams())", StyleParams()),
                          (f"{epochs} epochs (otherwise the book's)", StyleParams(epochs=epochs))):
        t = time.perf_counter()
        model = train_style(train, params, None, progress=False)
        secs = time.perf_counter() - t
        top1 = evaluate_classifier(model, test).top1
        out(f"  {label}: top-1 {top1:.3f}, {secs:.0f} s ({len(train) * params.epochs / secs:.0f} images/s); "
            f"load {loadavg()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=300)
    ap.add_argument("--out", default="/tmp/inkground_paper_scale_slice")
    ap.add_argument("--workers", type=int)
    ap.add_argument("--scheduler")
    ap.add_argument("--style-epochs", type=int, default=3, help="the shorter Style recipe compared")
    ap.add_argument("--style-compare", type=int, default=0, metavar="K", help="compare Style recipes on K pages")
    ap.add_argument("--report", help="only print the table of a run folder's stages.json")
    a = ap.parse_args()
    from inkground_lib.core.defaults import PAPER_CANDIDATE_PAGES

    print(f"bench_paper_scale: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores; "
          f"load average at start: {loadavg()}")
    if a.report:
        report(json.loads((Path(a.report) / "stages.json").read_text()), PAPER_CANDIDATE_PAGES)
        return
    from inkground_lib.pipelines.paper_scale import PaperScaleParams, run_paper_scale

    d = run_paper_scale(Path(a.out), PaperScaleParams(pages=a.pages), workers=a.workers, scheduler=a.scheduler,
                        progress=False)
    print(f"load average at end: {loadavg()}")
    report(d, PAPER_CANDIDATE_PAGES)
    if a.style_compare:
        style_compare(Path(a.out) / "02_pseudo_labels" / "benchmark", a.style_compare, a.style_epochs)


if __name__ == "__main__":
    main()
