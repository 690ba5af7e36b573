"""Pseudo-label pipeline throughput: derendered words per second and OCR-filtered pages per second (through
the pipeline's own functions, cold caches), and the wall time of run_pseudo_labels on the default candidate set
(cold, then warm: a rerun reuses every cached page).

    .venv/bin/python benchmarks/bench_pseudo.py [--candidates data/datasets/synth] [--pages N]
"""
import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from inkground_lib.components.ocr import make_engine  # noqa: E402
from inkground_lib.core.dataset import load_dataset  # noqa: E402
from inkground_lib.datasets.synth.generate import SynthParams, generate
from inkground_lib.pseudo.derender_stage import derender_dataset
from inkground_lib.pseudo.ocr_filter import ocr_filter
from inkground_lib.pseudo.run import run_pseudo_labels
from inkground_lib.pseudo.truth import truth_metrics


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--candidates", default=str(ROOT / "data" / "datasets" / "synth"))
    ap.add_argument("--pages", type=int, default=None, help="first N pages for the stage timings (default all)")
    a = ap.parse_args()
    cand = Path(a.candidates)
    if not (cand / "manifest.json").is_file():

        print(f"generating the default synth dataset at {cand}")
        generate(cand, SynthParams(), progress=False)
    ds = load_dataset(cand)
    if a.pages:
        ds.pages = ds.pages[: a.pages]
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        ps = derender_dataset(ds, "skeleton", Path(tmp) / "stages", progress=False)
        dt = time.perf_counter() - t
        print(f"derender (skeleton): {ds.n_words} words on {len(ds.pages)} pages in {dt:.1f} s = "
              f"{ds.n_words / dt:.1f} words/s")
        eng = make_engine("rapidocr", progress=False)
        eng.read([__import__("numpy").full((32, 64), 255, "uint8")])  # load the model outside the timing
        t = time.perf_counter()
        ocr_filter(ds, ps, eng, run_dir=Path(tmp) / "stages", progress=False)
        dt = time.perf_counter() - t
        print(f"OCR filter (rapidocr, 2 reads per word): {len(ds.pages)} pages in {dt:.1f} s = "
              f"{len(ds.pages) / dt:.2f} pages/s ({2 * ds.n_words / dt:.1f} word images/s)")
        t = time.perf_counter()
        truth_metrics(ds, ps)
        print(f"truth comparison (DTW, Chamfer, order/direction): {time.perf_counter() - t:.1f} s")
        for label in ("cold", "warm (rerun, caches reused)"):
            t = time.perf_counter()
            r = run_pseudo_labels(cand, Path(tmp) / "run", progress=False)
            print(f"run_pseudo_labels on {cand.name} ({len(r.pages)} pages, {len(r.words)} words), {label}: "
                  f"{time.perf_counter() - t:.1f} s; stages {r.timings}")


if __name__ == "__main__":
    main()
