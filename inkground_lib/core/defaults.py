"""The definitions the paper leaves open, and the paper's settings we follow: each constant defined once.

A section notebook's parameter cell repeats some of these as literals (papermill needs literals); a test
checks that each equals the constant here.
"""

from __future__ import annotations

OCR_THRESHOLD = 0.85
"""A candidate page passes the OCR filter when this share of its words read the same (the paper's value)."""

KEEP_SCORE = 10
"""A pair is kept only if every rater gives this score (the paper's rule)."""

SCORE_RANGE = (0, 10)
"""Raters score a pair from 0 to 10."""

N_RATERS = 85
"""Simulated rater pool (the paper's number of raters)."""

RATERS_PER_PAIR = 2
"""Simulated raters per pair (the paper: at least two)."""

CROP_GROW = 0.1
"""Word box growth per side (share of its width and height) before derendering and OCR."""

GRID = 50
"""The prompt's numbered grid: G x G cells over the page photo."""

SPACING = 0.05
"""Arc-length resampling step of both inks before DTW and Chamfer, in reference word heights."""

N_BOOT = 1000
"""Page-bootstrap replicates for 95% intervals."""

METRICS = ("dtw", "chamfer", "ar", "cr", "style")
"""The paper's metrics, by their column names in score tables."""

METRIC_LABELS = {"dtw": "DTW", "chamfer": "Chamfer", "ar": "AR", "cr": "CR", "style": "Style"}
"""Column name -> the paper's name for the metric."""

PAPER_METRIC = {label: key for key, label in METRIC_LABELS.items()}
"""The paper's metric name -> column name."""

BETTER = {"dtw": "min", "chamfer": "min", "ar": "max", "cr": "max", "style": "max"}
"""Which direction is better for each metric."""

BOOK_CANDIDATE_PAGES = 158
"""Synthetic candidate pages ``make book`` generates for section 02 (seed 0); the paper started from 2,984.
The benchmark set section 02 keeps from them must hold at least BOOK_MIN_BENCHMARK pages and words (measured
2026-11-30: 158 candidates -> 41 pages, 1,291 words; 156 -> 39 pages), so that Style's chance level and the
page-bootstrap intervals let the book's tables rank systems."""

BOOK_MIN_BENCHMARK = (40, 1000)
"""(pages, words) the default book's benchmark set must reach; ``make book`` says so when it does not."""
