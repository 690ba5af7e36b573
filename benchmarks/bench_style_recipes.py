"""The Style recipes side by side on the book's own classifiers: what each benchmark trains on top of the
writer-style backbone (a logistic head on frozen features, for several regularisations; the last stage and a new
last layer fine-tuned), against the earlier recipe (a ResNet-18 from random weights, 12 epochs; ``--random``).

For each of the book's three classifiers - the benchmark set against its pseudo-label references and against
the true inks, and the recorded set - it fits each recipe on the renders of the training split's reference inks
(75% of each page's words, the section's split) and prints the held-out top-1 accuracy and mean true-writer
probability, each with its 95% page-bootstrap interval (1000 replicates, seed 0; pages are the writers), and
the CPU seconds of features and fitting. The datasets are the book's (``make book`` builds them):

    .venv/bin/python benchmarks/bench_style_recipes.py                    # head and last stage, ~10 min
    .venv/bin/python benchmarks/bench_style_recipes.py --random           # + the from-random recipe, ~40 min more
    .venv/bin/python benchmarks/bench_style_recipes.py --cs 0.1 0.3 1 --last-stage-epochs 4
    .venv/bin/python benchmarks/bench_style_recipes.py --precision bf16 --cs 0.03 --last-stage-epochs 0  # bf16 features

``--last-stage-epochs 0`` leaves the fine-tuned recipe out; ``--precision`` is the features' arithmetic
(``StyleParams.precision``: bf16 only on a CPU with native bfloat16).

The header names the machine, its load and the backbone's sha256.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from inkground_lib.components.style import StyleParams, train_style  # noqa: E402
from inkground_lib.components.style.backbone import load_backbone  # noqa: E402
from inkground_lib.components.style.head import fit_head  # noqa: E402
from inkground_lib.components.style.inputs import inks_darkness  # noqa: E402
from inkground_lib.components.style.scoring import classifier_figures  # noqa: E402
from inkground_lib.core.dataset import load_dataset  # noqa: E402
from inkground_lib.core.layout import ROOT  # noqa: E402
from inkground_lib.evaluation.items import reference_inks, target_dataset  # noqa: E402

SETS = (("benchmark, pseudo-label references", "data/runs/synth/02_pseudo_labels/benchmark", "reference"),
        ("benchmark, true inks", "data/runs/synth/02_pseudo_labels/benchmark", "true"),
        ("recorded set", "data/datasets/recorded", "reference"))


def split_items(ds, reference):
    refs = list(reference_inks(ds, reference))
    words = [(w, p.writer) for p in ds.pages for w in p.words]
    train = [(ink, wr) for ink, (w, wr) in zip(refs, words) if w.split == "train"]
    test = [(ink, wr) for ink, (w, wr) in zip(refs, words) if w.split == "test"]
    return train, test


def figures(z, classes, test):
    y = [list(classes).index(wr) for _, wr in test]
    return classifier_figures(z, y, [wr for _, wr in test])


def line(name, fig, seconds):
    return (f"  {name:34s} top-1 {fig['top1']:.3f} [{fig['top1_ci'][0]:.3f}, {fig['top1_ci'][1]:.3f}]   "
            f"mean true-writer p {fig['mean_true_proba']:.3f} [{fig['mean_true_proba_ci'][0]:.3f}, "
            f"{fig['mean_true_proba_ci'][1]:.3f}]   {seconds:7.1f} CPU-s")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cs", type=float, nargs="+", default=[0.03, 0.1, 0.3, 1.0, 3.0])
    ap.add_argument("--last-stage-epochs", type=int, default=6)
    ap.add_argument("--random", action="store_true", help="also train the from-random recipe (12 epochs)")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16"], help="the features' arithmetic")
    a = ap.parse_args(argv)
    bb = load_backbone()
    params = StyleParams(precision=a.precision)
    print(f"# {platform.node()} {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; backbone {bb.sha256[:16]}; "
          f"features in {a.precision}; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    loaded = {}
    for name, folder, reference in SETS:
        if folder not in loaded:
            loaded[folder] = target_dataset(load_dataset(ROOT / folder))
        ds = loaded[folder]
        train, test = split_items(ds, reference)
        classes = sorted({wr for _, wr in train})
        print(f"{name}: {len(classes)} writers, {len(train)} training / {len(test)} held-out words "
              f"(chance {1 / len(classes):.4f})")
        t = time.process_time()
        ftr = bb.features(inks_darkness([k for k, _ in train], params), params)
        fte = bb.features(inks_darkness([k for k, _ in test], params), params)
        feat_s = time.process_time() - t
        print(f"  features: {len(train) + len(test)} renders, {feat_s:.1f} CPU-s")
        for c in a.cs:
            t = time.process_time()
            head = fit_head(ftr, [wr for _, wr in train], c)
            print(line(f"backbone + head (C = {c})", figures(head.logits(fte), head.classes, test),
                       time.process_time() - t))
        recipes = [(f"backbone, last stage ({a.last_stage_epochs} ep.)",
                    dataclasses.replace(params, fit="last_stage", epochs=a.last_stage_epochs))
                   ] if a.last_stage_epochs > 0 else []
        if a.random:
            recipes.append(("from random weights (12 ep.)", StyleParams(start="random", fit="all")))
        for rname, p in recipes:
            t = time.process_time()
            model = train_style(train, p, None, progress=False)
            z = model.logits([k for k, _ in test])
            print(line(rname, figures(z, model.classes, test), time.process_time() - t))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
