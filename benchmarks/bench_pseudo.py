"""Pseudo-label pipeline throughput: derendered words per second and OCR-filtered pages per second (through
the pipeline's own functions, cold caches), and the wall time of run_pipeline on the default candidate set
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

from inkground_lib import pseudo  # noqa: E402
from inkground_lib.dataset import load_dataset  # noqa: E402
from inkground_lib.ocr import get_engine  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--candidates", default=str(ROOT / "data" / "datasets" / "synth"))
    ap.add_argument("--pages", type=int, default=None, help="first N pages for the stage timings (default all)")
    a = ap.parse_args()
    cand = Path(a.candidates)
    if not (cand / "manifest.json").is_file():
        from inkground_lib import synth

        print(f"generating the default synth dataset at {cand}")
        synth.generate(cand, synth.SynthParams(), progress=False)
    ds = load_dataset(cand)
    if a.pages:
        ds.pages = ds.pages[: a.pages]
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        ps = pseudo.derender_dataset(ds, "skeleton", Path(tmp) / "stages", progress=False)
        dt = time.perf_counter() - t
        print(f"derender (skeleton): {ds.n_words} words on {len(ds.pages)} pages in {dt:.1f} s = "
              f"{ds.n_words / dt:.1f} words/s")
        eng = get_engine("rapidocr", progress=False)
        eng.read([__import__("numpy").full((32, 64), 255, "uint8")])  # load the model outside the timing
        t = time.perf_counter()
        pseudo.ocr_filter(ds, ps, eng, run_dir=Path(tmp) / "stages", progress=False)
        dt = time.perf_counter() - t
        print(f"OCR filter (rapidocr, 2 reads per word): {len(ds.pages)} pages in {dt:.1f} s = "
              f"{len(ds.pages) / dt:.2f} pages/s ({2 * ds.n_words / dt:.1f} word images/s)")
        t = time.perf_counter()
        pseudo.truth_metrics(ds, ps)
        print(f"truth comparison (DTW, Chamfer, order/direction): {time.perf_counter() - t:.1f} s")
        for label in ("cold", "warm (rerun, caches reused)"):
            t = time.perf_counter()
            r = pseudo.run_pipeline(cand, Path(tmp) / "run", progress=False)
            print(f"run_pipeline on {cand.name} ({len(r.pages)} pages, {len(r.words)} words), {label}: "
                  f"{time.perf_counter() - t:.1f} s; stages {r.timings}")


if __name__ == "__main__":
    main()
