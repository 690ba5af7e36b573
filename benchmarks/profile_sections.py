"""Profile section 02 or 03 of a first book (issue 42; prints figures; not a test): the section's library calls as
its notebook makes them, with the default parameters, into a new folder of its own (``--out``, default a temporary
folder: nothing of the book's runs is reused or written), under cProfile, then the run's own stage timings and
the top of the profile by cumulative time (the pool's workers appear as waits in the driver).

    .venv/bin/python benchmarks/profile_sections.py 03 [--root CHECKOUT] [--out DIR] [--top 60]

Section 03 needs section 02's benchmark in the checkout (``make book`` has run); section 02 needs the datasets.
Results of 2026-12-06: ``benchmarks/results/section_profiles.txt``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _section_02(root: Path, out: Path) -> dict:
    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.pseudo.derenderer_comparison import section_comparison
    from inkground_lib.pseudo.raters import RaterModel
    from inkground_lib.pseudo.run import run_pseudo_labels
    from inkground_lib.report.derenderer_figures import section_examples

    cand, rec = root / "data/datasets/synth", root / "data/datasets/recorded"
    compare = ["skeleton", "tracer-recognize", "tracer"]
    t = {}
    t0 = time.time()
    res = run_pseudo_labels(cand, out, rater_model=RaterModel(), seed=0)
    t["run_pseudo_labels"] = time.time() - t0
    ds = load_dataset(cand)
    t0 = time.time()
    section_comparison(ds, rec if rec.is_dir() else "", compare, out, seed=0)
    t["derenderer comparison"] = time.time() - t0
    t0 = time.time()
    section_examples(ds, rec if rec.is_dir() else "", compare, out)
    t["examples"] = time.time() - t0
    t.update({f"  {k} (the run's timing)": v for k, v in res.timings.items()})
    return t


def _section_03(root: Path, out: Path) -> dict:
    from inkground_lib.evaluation.run import evaluate_section
    from inkground_lib.evaluation.settings import EvalSettings

    bench, rec = root / "data/runs/synth/02_pseudo_labels/benchmark", root / "data/datasets/recorded"
    if not bench.is_dir():
        raise SystemExit(f"{bench}: no benchmark; run make book (or section 02) first")
    systems = ["reference", "skeleton", "tracer", "font", "box"]
    t0 = time.time()
    evaluate_section(bench, rec if rec.is_dir() else "", systems, out / "synth", out / "recorded", EvalSettings())
    return {"evaluate_section": time.time() - t0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("section", choices=["02", "03"])
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[1]))
    ap.add_argument("--out", default=None)
    ap.add_argument("--top", type=int, default=60)
    a = ap.parse_args()
    root = Path(a.root).resolve()
    os.chdir(root)
    out = Path(a.out or tempfile.mkdtemp(prefix=f"profile-{a.section}-"))
    print(f"# profile_sections {a.section}: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {root}, out {out}, "
          f"load {os.getloadavg()[0]:.1f} at the start")
    prof = cProfile.Profile()
    prof.enable()
    times = (_section_02 if a.section == "02" else _section_03)(root, out)
    prof.disable()
    for k, v in times.items():
        print(f"{k:40s} {v:8.1f} s")
    print(f"# load {os.getloadavg()[0]:.1f} at the end")
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(a.top)
    print(buf.getvalue())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
