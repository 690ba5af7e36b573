"""The skeleton's tracing (``SkeletonDerenderer.trace``) against its code at another commit: CPU time per crop and
whether every trace is the same to the last bit, on the book's candidate crops at the skeleton derenderer's 80 work
pixels and the tracer's 160 (``TRACER_GEOMETRY``). Runs the two versions in turns, several rounds, and prints the
fastest round of each (CPU time of this process: one core).

    .venv/bin/python benchmarks/bench_skeleton_trace.py --dataset data/datasets/synth --against HEAD~1 [--pages 12]
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from inkground_lib.components.derenderers import skeleton as current  # noqa: E402
from inkground_lib.core.dataset import load_dataset  # noqa: E402
from inkground_lib.pseudo.crop_readings import page_crops  # noqa: E402

MODULE = "inkground_lib/components/derenderers/skeleton.py"


def module_at(commit: str):
    """The skeleton module as it is at ``commit`` (read with git show, imported from a temporary file)."""
    text = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{MODULE}"], check=True, capture_output=True,
                          text=True).stdout
    path = Path(tempfile.mkdtemp()) / "skeleton_then.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("skeleton_then", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["skeleton_then"] = mod
    spec.loader.exec_module(mod)
    return mod


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default=str(ROOT / "data" / "datasets" / "synth"))
    ap.add_argument("--against", default="HEAD~1")
    ap.add_argument("--pages", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    then = module_at(a.against)
    crops = [c for p in load_dataset(a.dataset).pages[:a.pages] for c in page_crops(p)]
    print(f"{len(crops)} crops of {a.pages} pages of {a.dataset}; {a.against} against the working tree")
    for height in (80, 160):
        best, traces = {}, {}
        for _ in range(a.rounds):
            for name, mod in (("then", then), ("now", current)):
                sk = mod.SkeletonDerenderer(mod.SkeletonParams(work_height=height))
                t = time.process_time()
                out = [sk.trace(c) for c in crops]
                ms = (time.process_time() - t) / len(crops) * 1000
                best[name] = min(best.get(name, np.inf), ms)
                traces[name] = out
        same = all(len(x) == len(y) and all(np.array_equal(s, u) and s.dtype == u.dtype for s, u in zip(x, y))
                   for x, y in zip(traces["then"], traces["now"]))
        print(f"  {height:3d} work px: {a.against} {best['then']:.2f} ms/crop, now {best['now']:.2f} ms/crop "
              f"(ratio {best['now'] / best['then']:.3f}); every trace identical to the last bit: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
