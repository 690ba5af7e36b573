"""Every system's Style under both recipes, side by side (issue 42; prints figures; not a test).

The book's run holds section 03 with the default recipe (a linear head on the shipped backbone). This runs
section 03 again on the same benchmark and recorded set with the paper's recipe - the whole ResNet-18 from random
weights, 12 epochs (``StyleParams(start="random", fit="all")``) - into a folder of its own (``--out``, default
a temporary folder; the book's runs are only read), and prints for each set and reference: the classifier's
held-out top-1 and mean true-writer probability, then every system's Style (mean, 95% page-bootstrap interval)
under both recipes, and each system's rank by Style under both.

The book's prediction and render-OCR stores are copied into the new folders first (content-keyed: the same
requests and renders give the same keys), so only the classifiers and the scoring are computed again: two
ResNet-18s side by side (about 12 minutes on 2 quiet cores) plus the recorded set's.

    .venv/bin/python benchmarks/bench_style_systems.py [--root CHECKOUT] [--out DIR] [--print-only]

``--root``: a checkout in which ``make book`` has run (default: this one); ``--print-only``: print the figures
of an earlier run of this benchmark in ``--out`` again, computing nothing. Systems with equal Style share the
best rank of their group.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from inkground_lib.core.run_files import PREDICTIONS_DIR  # noqa: E402

SETS = (("synth", "reference"), ("synth", "true"), ("recorded", "reference"))
RANDOM = {"start": "random", "fit": "all"}


def _summary(run: Path, reference: str) -> dict[str, dict]:
    with open(run / f"summary-{reference}.csv", newline="") as f:
        return {r["system"]: r for r in csv.DictReader(f)}


def _facts(run: Path, reference: str) -> dict:
    return json.loads((run / f"facts-{reference}.json").read_text())["style"]


def _ranks(values: dict[str, float]) -> dict[str, int]:
    """Rank by value, highest first; equal values (at the shown precision) share the best rank of their group."""
    order = sorted(values.values(), reverse=True)
    return {k: order.index(v) + 1 for k, v in values.items()}


def _seed_stores(book_run: Path, out_run: Path) -> None:
    out_run.mkdir(parents=True, exist_ok=True)
    if (book_run / PREDICTIONS_DIR).is_dir():
        shutil.copytree(book_run / PREDICTIONS_DIR, out_run / PREDICTIONS_DIR, dirs_exist_ok=True)
    for f in book_run.glob("ocr-renders-*.jsonl"):
        shutil.copy2(f, out_run / f.name)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[1]))
    ap.add_argument("--out", default=None)
    ap.add_argument("--print-only", dest="print_only", action="store_true")
    a = ap.parse_args()
    root = Path(a.root).resolve()
    os.chdir(root)
    from inkground_lib.evaluation.run import evaluate_section
    from inkground_lib.evaluation.settings import EvalSettings

    book = {"synth": root / "data/runs/synth/03_evaluation", "recorded": root / "data/runs/recorded/03_evaluation"}
    bench, rec = root / "data/runs/synth/02_pseudo_labels/benchmark", root / "data/datasets/recorded"
    systems = sorted(_summary(book["synth"], "reference"))
    out = Path(a.out or tempfile.mkdtemp(prefix="style-systems-"))
    runs = {k: out / k / "03_evaluation" for k in book}
    if not a.print_only:
        for k in book:
            _seed_stores(book[k], runs[k])
        t0, c0 = time.time(), time.process_time()
        evaluate_section(bench, rec if rec.is_dir() else "", systems, runs["synth"], runs["recorded"],
                         EvalSettings(style=RANDOM), progress=False)
        wall = time.time() - t0
        print(f"# bench_style_systems: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {root}, "
              f"load {os.getloadavg()[0]:.1f}; section 03 with the paper's recipe: {wall:.0f} s wall "
              f"(driver CPU {time.process_time() - c0:.0f} s); out {out}")
    for name, ref in SETS:
        if not (runs[name] / f"summary-{ref}.csv").is_file():
            continue
        new, old = _summary(book[name], ref), _summary(runs[name], ref)
        fn, fo = _facts(book[name], ref), _facts(runs[name], ref)
        print(f"\n{name}, against {ref}: {fn['n_classes']} writers, {fn['n_train']} training / {fn['n_test']} "
              f"held-out words")
        for label, f in (("backbone + head", fn), ("from random weights", fo)):
            what = "head fit" if f.get("fit") == "head" else "training, one thread"
            extra = f" ({f['fit_seconds']:.0f} s {what})" if f.get("fit_seconds") else ""
            print(f"  classifier, {label:20s} top-1 {f['top1']:.3f} [{f['top1_ci'][0]:.3f}, {f['top1_ci'][1]:.3f}]"
                  f"   mean true-writer p {f['mean_true_proba']:.3f}{extra}")
        rank = {lab: _ranks({s: round(float(r["style"] or 0), 3) for s, r in rows.items()})
                for lab, rows in (("new", new), ("old", old))}
        print(f"  {'system':10s} {'Style, backbone + head':>30s} {'Style, from random weights':>30s}  rank new/old")
        for s in sorted(new):
            def cell(r):
                return f"{float(r['style']):.3f} [{float(r['style_lo']):.3f}, {float(r['style_hi']):.3f}]"
            print(f"  {s:10s} {cell(new[s]):>30s} {cell(old[s]) if s in old else '-':>30s}  "
                  f"{rank['new'][s]}/{rank['old'].get(s, '-')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
