"""The run folders of sections 02 and 03: the name of every file in them, and the loaders of both run kinds.

A pseudo-label run (section 02, ``inkground pseudo``; written by :mod:`inkground_lib.pseudo`)::

    summary.json  pages.csv  words.csv  funnel.csv  ratings.csv (the ratings the run used, with their source)
    derender-<derenderer>.jsonl  ocr-<OCR engine>.jsonl  benchmark/ (the benchmark set, a dataset folder)
    traces.jsonl (every derenderer answer on a word crop the run made, by content key)
    truth.jsonl (each ink's distances to its true ink, by content key)

An evaluation run (section 03, ``inkground predict`` / ``inkground eval``; written by
:mod:`inkground_lib.evaluation`)::

    predictions/<system>.jsonl  scores-<reference>.csv  summary-<reference>.csv  facts-<reference>.json
    style-<reference>/ (a writer classifier)  ocr-renders-<OCR engine>.jsonl  both_sides.json
    style-features/ (the Style backbone's features of renders, by content key)

where <reference> is one of :data:`REFERENCES` and a component's name is made safe for a file name by
:func:`safe_name`. Writers and readers take every name from the functions here (this module needs only the
standard library, so ``make clean`` can use it without numpy); :mod:`inkground_lib.core.run_loaders` reads
both run kinds.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

PathLike = str | os.PathLike


def safe_name(name: str) -> str:
    """A component's name as part of a file name: runs of characters other than ``A-Za-z0-9_.-`` become one
    ``_``, leading and trailing dots and underscores are dropped ("x" if nothing is left)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "x"


# ------------------------------------------------------------------------------------ section 03: evaluation

REFERENCES = ("reference", "true")
"""What an evaluation run scores against: the dataset's reference inks, or the true (recorded) inks."""

PREDICTIONS_DIR = "predictions"
"""The folder of an evaluation run holding one append-only prediction cache per system."""


def predictions_dir(run_dir: PathLike) -> Path:
    """``run_dir/predictions``."""
    return Path(run_dir) / PREDICTIONS_DIR


def predictions_jsonl(run_dir: PathLike, system: str) -> Path:
    """``run_dir/predictions/<system>.jsonl``: the prediction cache of one system (its name is an id)."""
    return predictions_dir(run_dir) / f"{system}.jsonl"


def scores_csv(run_dir: PathLike, reference: str) -> Path:
    """``run_dir/scores-<reference>.csv``: the per-word scores (:mod:`inkground_lib.core.scores_table`)."""
    return Path(run_dir) / f"scores-{reference}.csv"


def summary_csv(run_dir: PathLike, reference: str) -> Path:
    """``run_dir/summary-<reference>.csv``: one row per system with page-bootstrap intervals."""
    return Path(run_dir) / f"summary-{reference}.csv"


def facts_json(run_dir: PathLike, reference: str) -> Path:
    """``run_dir/facts-<reference>.json``: the dataset scored, the Style classifier's facts, the systems that
    could not run and the settings."""
    return Path(run_dir) / f"facts-{reference}.json"


def style_dir(run_dir: PathLike, reference: str) -> Path:
    """``run_dir/style-<reference>``: the writer classifier trained on the ``reference`` inks."""
    return Path(run_dir) / f"style-{reference}"


STYLE_FEATURES_DIR = "style-features"


def style_features_dir(run_dir: PathLike) -> Path:
    """``run_dir/style-features``: the Style backbone's features of the run's renders, by content key."""
    return Path(run_dir) / STYLE_FEATURES_DIR


def render_ocr_jsonl(run_dir: PathLike, engine: str) -> Path:
    """``run_dir/ocr-renders-<engine>.jsonl``: the log of the OCR texts of a run's renders."""
    return Path(run_dir) / f"ocr-renders-{safe_name(engine)}.jsonl"


def render_ocr_logs(run_dir: PathLike) -> list[Path]:
    """The render-OCR logs in ``run_dir`` (every engine's), sorted."""
    return sorted(Path(run_dir).glob("ocr-renders-*.jsonl"))


def both_sides_json(run_dir: PathLike) -> Path:
    """``run_dir/both_sides.json``: the second derenderer's inks of the "both sides" measurement."""
    return Path(run_dir) / "both_sides.json"


EVAL_RUN_FILES = (PREDICTIONS_DIR,) + tuple(scores_csv("", r).name for r in REFERENCES)
"""Names that mark a prediction / evaluation run folder written before run marks existed."""

EVAL_RUN_PATTERNS = (f"{PREDICTIONS_DIR}/*.jsonl", f"{PREDICTIONS_DIR}/*.lock", "scores-*.csv", "summary-*.csv",
                     "facts-*.json", "style-*/*", "ocr-renders-*.jsonl", both_sides_json("").name,
                     f"{STYLE_FEATURES_DIR}/*.npz")
"""Every file an evaluation run writes (glob patterns relative to the run folder, from the names above)."""


# ------------------------------------------------------------------------------ section 02: pseudo-labels

_SUMMARY_JSON, _FUNNEL_CSV = "summary.json", "funnel.csv"

PSEUDO_RUN_FILES = (_SUMMARY_JSON, _FUNNEL_CSV)
"""Files that mark a pseudo-label run folder written before run marks existed."""

_TRACES_JSONL = "traces.jsonl"
_TRUTH_JSONL = "truth.jsonl"

PSEUDO_RUN_PATTERNS = (_SUMMARY_JSON, "pages.csv", "words.csv", _FUNNEL_CSV, "ratings.csv", "derender-*.jsonl",
                       "ocr-*.jsonl", "benchmark", "derenderers", _TRACES_JSONL, _TRUTH_JSONL)
"""Every file (and the benchmark folder) a pseudo-label run writes, as glob patterns relative to the run folder
(the names of the functions below: a test checks they agree)."""

RUN_PATTERNS = EVAL_RUN_PATTERNS + PSEUDO_RUN_PATTERNS
"""What either run kind writes: ``--overwrite`` into a folder that is not a run folder refuses to start when
one of these is there (a user's file of that name would be replaced)."""

DERENDER_SCHEMA = "inkground-pseudo-derender"
"""Schema name of a record of a derender log (``derender-<name>.jsonl``: one page's inks and errors)."""


def pseudo_summary_json(run_dir: PathLike) -> Path:
    """``run_dir/summary.json``: the run's numbers, components, parameters and timings."""
    return Path(run_dir) / _SUMMARY_JSON


def pages_csv(run_dir: PathLike) -> Path:
    """``run_dir/pages.csv``: one row per candidate page (the OCR filter's and the raters' outcome)."""
    return Path(run_dir) / "pages.csv"


def words_csv(run_dir: PathLike) -> Path:
    """``run_dir/words.csv``: one row per candidate word (its pseudo-label's size, OCR, distance to the truth)."""
    return Path(run_dir) / "words.csv"


def funnel_csv(run_dir: PathLike) -> Path:
    """``run_dir/funnel.csv``: pages at each stage."""
    return Path(run_dir) / _FUNNEL_CSV


def ratings_csv(run_dir: PathLike) -> Path:
    """``run_dir/ratings.csv``: the ratings the run used: the simulated ones, or the standing ratings of the
    ratings file of the pages that passed the OCR filter (page, rater, score, source, and time for a file of
    ``inkground rate``); summary.json names the file and its sha256. The ratings file itself lives outside
    every run folder."""
    return Path(run_dir) / "ratings.csv"


def benchmark_dir(run_dir: PathLike) -> Path:
    """``run_dir/benchmark``: the benchmark set, a dataset folder."""
    return Path(run_dir) / "benchmark"


def benchmark_run_dir(benchmark: PathLike) -> Path:
    """The pseudo-label run folder that holds the benchmark folder ``benchmark`` (the inverse of
    :func:`benchmark_dir`)."""
    return Path(benchmark).parent


TRACES_SCHEMA = "inkground-traces"
"""Schema name of a record of a trace store (``traces.jsonl``: the derenderer answers made on one page photo)."""


def traces_jsonl(run_dir: PathLike) -> Path:
    """``run_dir/traces.jsonl``: the run's trace store (records of :data:`TRACES_SCHEMA`: derenderer answers on
    word crops by content key, :mod:`inkground_lib.components.derenderers.traces`)."""
    return Path(run_dir) / _TRACES_JSONL


TRUTH_SCHEMA = "inkground-truth"
"""Schema name of a record of a truth log (``truth.jsonl``: the truth comparisons one call computed)."""


def truth_jsonl(run_dir: PathLike) -> Path:
    """``run_dir/truth.jsonl``: each ink's DTW, Chamfer, stroke order and direction against its true ink, by
    content key (records of :data:`TRUTH_SCHEMA`, :func:`inkground_lib.pseudo.truth.truth_metrics`)."""
    return Path(run_dir) / _TRUTH_JSONL


def derenderers_dir(run_dir: PathLike) -> Path:
    """``run_dir/derenderers``: section 02's comparison of derenderers against the truth, one folder per set of
    pages (:mod:`inkground_lib.pseudo.derenderer_comparison`)."""
    return Path(run_dir) / "derenderers"


def derender_jsonl(run_dir: PathLike, derenderer: str) -> Path:
    """``run_dir/derender-<derenderer>.jsonl``: the derender log (records of :data:`DERENDER_SCHEMA`)."""
    return Path(run_dir) / f"derender-{safe_name(derenderer)}.jsonl"


def crop_ocr_jsonl(run_dir: PathLike, engine: str) -> Path:
    """``run_dir/ocr-crops-<engine>.jsonl``: the OCR readings of the word crops (records of
    :data:`CROP_OCR_SCHEMA`), read once and used by the tracer in its "recognize" mode and by the OCR filter."""
    return Path(run_dir) / f"ocr-crops-{safe_name(engine)}.jsonl"


CROP_OCR_SCHEMA = "inkground-pseudo-crop-ocr"
"""Schema name of a record of a crop-reading log (one page's readings of its word crops)."""


def ocr_jsonl(run_dir: PathLike, engine: str) -> Path:
    """``run_dir/ocr-<engine>.jsonl``: the OCR filter's log of the texts read."""
    return Path(run_dir) / f"ocr-{safe_name(engine)}.jsonl"
