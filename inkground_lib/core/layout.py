"""Where things live: the repository's folders and the default dataset and run folders of each section.

Every path the library, the CLI and the book use by default is spelled here once. Run-folder paths are
relative to the repository root (as the notebooks' parameter cells write them; a test checks that each
parameter cell agrees with this module); ``ROOT / path`` gives the absolute folder.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository root (the folder holding notebooks/, book/, data/ and inkground_lib/)."""

NOTEBOOKS = ROOT / "notebooks"
SECTIONS_DIR = ROOT / "book" / "sections"
DATA = ROOT / "data"
PAPER_DIR = DATA / "paper"
DATASETS_DIR = DATA / "datasets"
RUNS = "data/runs"                     # the book's runs, relative to ROOT (run folders keep their path below it)
RUNS_DIR = ROOT / RUNS

# Default folders, relative to ROOT (strings, as papermill parameters are written).
SYNTH_DATASET = "data/datasets/synth"
RECORDED_DATASET = "data/datasets/recorded"
PSEUDO_RUN = "data/runs/synth/02_pseudo_labels"
BENCHMARK = PSEUDO_RUN + "/benchmark"
BENCH_EVAL_RUN = "data/runs/synth/03_evaluation"
RECORDED_EVAL_RUN = "data/runs/recorded/03_evaluation"
EVAL_RUNS = [BENCH_EVAL_RUN, RECORDED_EVAL_RUN]
PREDICT_RUN = "data/runs/predict"      # `inkground predict` without --run
EVAL_RUN = "data/runs/eval"            # `inkground eval` / `make eval` without --run: never the book's runs
RERUNS = "data/reruns"                 # a run with changed parameters: data/reruns/<name>/ (core/rerun_folders.py)

UNIPEN_SUBSET = DATA / "unipen_cursive" / "unipen_cursive_dev.json"
"""The UNIPEN subset shipped with the repository (286 cursive words, 36 writers; CC BY 4.0, provenance in
its README beside it): the default source of the recorded dataset."""
