"""The whole Style stage of a book, alone: features, heads and held-out accuracy (issue 42: "<= 60 s of wall time").
Prints figures; not a test.

Section 03 runs twice on the book's benchmark and recorded set, into a folder of its own (``--out``, default a
temporary folder; the book's runs are only read): first with the book's predictions and render-OCR logs copied in
(content-keyed: the same requests and renders give the same keys) but none of its Style stores or classifiers, so
only the Style stage (every distinct render's backbone features, the three heads, their held-out figures) and the
scoring are computed; then once more in the same folders, where everything is found. The Style stage's wall time
is the difference. The scores of the first run are checked to equal the book's (the same Style, computed again).

    .venv/bin/python benchmarks/bench_style_stage.py [--root CHECKOUT] [--out DIR] [--workers N]

``--root``: a checkout in which ``make book`` has run (default: this one). The features of renders that the OCR
of renders found to share a render (the box system's outlines) are computed once only when this process read
those renders; with the OCR logs copied in, it reads none, so every drawing's features are computed (an upper
bound of the book's stage).
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_style_systems import _seed_stores  # noqa: E402  (the book run's predictions and OCR logs, no Style)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[1]))
    ap.add_argument("--out", default=None)
    ap.add_argument("--workers", type=int, default=None, help="the section's pool (default: every core)")
    a = ap.parse_args()
    root = Path(a.root).resolve()
    os.chdir(root)
    from inkground_lib.evaluation.run import evaluate_section
    from inkground_lib.evaluation.settings import EvalSettings

    book = {"synth": root / "data/runs/synth/03_evaluation", "recorded": root / "data/runs/recorded/03_evaluation"}
    bench, rec = root / "data/runs/synth/02_pseudo_labels/benchmark", root / "data/datasets/recorded"
    with open(book["synth"] / "summary-reference.csv", newline="") as f:
        systems = [r["system"] for r in csv.DictReader(f)]  # the book's systems
    out = Path(a.out or tempfile.mkdtemp(prefix="style-stage-"))
    runs = {k: out / k / "03_evaluation" for k in book}
    for k in book:
        _seed_stores(book[k], runs[k])
    print(f"# bench_style_stage: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {root}, systems "
          f"{', '.join(systems)}; load {os.getloadavg()[0]:.1f} at the start; out {out}")
    walls = []
    for label in ("Style computed", "everything found"):
        t0, c0 = time.time(), time.process_time()
        evaluate_section(bench, rec if rec.is_dir() else "", systems, runs["synth"], runs["recorded"],
                         EvalSettings(), progress=False, workers=a.workers)
        walls.append(time.time() - t0)
        print(f"section 03, {label:17s}: {walls[-1]:6.1f} s wall, CPU {time.process_time() - c0:6.1f} s in this "
              f"process (the pool's workers not counted); load {os.getloadavg()[0]:.1f}")
    print(f"Style stage (the difference): {walls[0] - walls[1]:.1f} s wall")
    for name, ref in (("synth", "reference"), ("synth", "true"), ("recorded", "reference")):
        mine, theirs = runs[name] / f"scores-{ref}.csv", book[name] / f"scores-{ref}.csv"
        if theirs.is_file():
            same = sorted(mine.read_text().splitlines()) == sorted(theirs.read_text().splitlines())
            print(f"  {name} against {ref}: scores {'identical to' if same else 'DIFFER from'} the book's "
                  f"(rows compared in any order)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
