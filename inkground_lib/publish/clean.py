"""``make clean`` and ``make clean-all``: remove what the pipeline rebuilds, keep what cost money, time or people's
work, and never touch what inkground did not write.

``make clean`` (``python -m inkground_lib.publish.clean``) removes the built book (``_build/``), the executed
sections (``book/sections/``) and the folders ``make book`` and ``make eval`` / ``inkground predict`` write by
default (:data:`REBUILT`: the synthetic and recorded datasets, section 02's and 03's runs, ``data/runs/eval`` and
``data/runs/predict``). Inside those folders it deletes only files inkground writes there (the dataset and run
files of :mod:`inkground_lib.core.run_files`), and it keeps, in place:

* prediction caches of systems that are not local and free to rerun - API models, InkSight: every
  ``predictions/*.jsonl`` holding a record whose ``adapter`` is not one of :data:`FREE_ADAPTERS` (under any name:
  a cache renamed as an error message advised is kept too);
* the logs of a paid or slow component: ``ocr-*.jsonl``, ``ocr-renders-*.jsonl`` and ``derender-*.jsonl`` of any
  engine or derenderer that is not one of :data:`FREE_COMPONENTS` (DeepSeek-OCR, InkSight);
* ratings files with real ratings: a CSV with ``page``, ``rater`` and ``score`` columns and a row whose
  ``source`` is not ``simulated`` (or no ``source`` column at all);
* every file it did not write (a user's ``notes.txt`` beside a run's files), every folder inkground did not
  create (no run mark, no dataset of its own, or marked ``.inkground-foreign`` by an ``--overwrite``), and every
  paper-scale run (hours of work ``make book`` does not rebuild). Everything else under ``data/`` (a user's
  ``data/datasets/iamondb``, ``data/runs/paper_scale``, ...) is not ``make book``'s and is not looked at.

``make clean-all`` (``--all``) removes the caches, logs and ratings above too, after listing them and asking
(``--yes`` answers for a script; without a terminal and without ``--yes`` nothing is removed); it still keeps
what inkground did not write.

Standard library only (and the light modules of ``inkground_lib.core`` and the component tables, whose cards say
what is free): it runs with the system Python, before or without the virtual environment.
"""

from __future__ import annotations

import argparse
import csv
import fnmatch
import json
import os
import sys
from pathlib import Path, PurePosixPath

from inkground_lib.components.derenderers.factory import DERENDERERS
from inkground_lib.components.ocr.factory import ENGINES
from inkground_lib.core.folders import FOREIGN_MARK, LOCK_FILE, RUN_MARK
from inkground_lib.core.layout import (
    BENCH_EVAL_RUN,
    DATASETS_DIR,
    EVAL_RUN,
    PREDICT_RUN,
    PSEUDO_RUN,
    RECORDED_DATASET,
    RECORDED_EVAL_RUN,
    ROOT,
    RUNS_DIR,
    SECTIONS_DIR,
    SYNTH_DATASET,
)
from inkground_lib.core.manifest_schema import SCHEMA as DATASET_SCHEMA
from inkground_lib.core.run_files import EVAL_RUN_PATTERNS, PREDICTIONS_DIR, PSEUDO_RUN_PATTERNS
from inkground_lib.evaluation.systems.registry import free_adapters

GENERATED = (ROOT / "_build", SECTIONS_DIR)
"""Folders that hold only what ``make book`` builds (the HTML book, the executed sections): removed whole."""

REBUILT = tuple(ROOT / p for p in (SYNTH_DATASET, RECORDED_DATASET, PSEUDO_RUN, BENCH_EVAL_RUN, RECORDED_EVAL_RUN,
                                   EVAL_RUN, PREDICT_RUN))
"""The dataset and run folders ``make book`` (and ``make eval`` / ``inkground predict`` without ``--run``) write by
default: cleaned file by file."""

TARGETS = GENERATED + REBUILT
"""What ``make clean`` looks at."""

FREE_ADAPTERS = free_adapters()
"""Adapters whose predictions cost nothing to make again, as their cards say (local baselines, the skeleton
derenderer, the shipped tracer, replays)."""

FREE_COMPONENTS = frozenset(n for table in (DERENDERERS, ENGINES) for n, row in table.items() if row.card.free)
"""Derenderers and OCR engines that run here quickly and for free, as their cards say: their logs are rebuilt by
``make book``."""

DATASET_PATTERNS = ("manifest.json", "pages/p*.jpg", "pages/p*.png", "inks/p*.json", "generator.json",
                    "recorded_builder.json", "sources.json", "reference_ocr.json")
"""The files inkground's dataset builders write (core.dataset: manifest, pages, inks; datasets.synth: generator;
datasets.recorded: builder mark, sources; pseudo.benchmark: reference_ocr.json)."""

COMMON_PATTERNS = (LOCK_FILE, RUN_MARK, ".*.tmp", "*/.*.tmp")
"""Files inkground writes into every folder it writes (locks, the run mark, atomic writes in progress)."""

_LOGS = ("ocr-renders-", "ocr-", "derender-")


def _matches(rel: str, patterns) -> bool:
    """``rel`` (a '/'-separated path) matches one of the glob ``patterns`` part by part ('*' stays in a part)."""
    parts = PurePosixPath(rel).parts
    for pattern in patterns:
        pp = PurePosixPath(pattern).parts
        if len(pp) == len(parts) and all(fnmatch.fnmatchcase(a, b) for a, b in zip(parts, pp)):
            return True
    return False


def costly_prediction_cache(path: Path) -> bool:
    """True if ``path`` is a prediction cache (or failures log, under any name in a ``predictions`` folder) with
    a record of a non-free adapter, or cannot be read."""
    if path.parent.name != PREDICTIONS_DIR or path.suffix == ".lock":
        return False
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if isinstance(rec, dict) and rec.get("adapter") not in FREE_ADAPTERS:
                    return True
    except OSError:
        return True  # unreadable: keep it rather than guess
    return False


def costly_component_log(path: Path) -> bool:
    """True if ``path`` is the log of an OCR engine or derenderer (``ocr-<engine>.jsonl``,
    ``ocr-renders-<engine>.jsonl``, ``derender-<derenderer>.jsonl``) that is not one of :data:`FREE_COMPONENTS`."""
    name = path.name
    if not name.endswith(".jsonl"):
        return False
    for prefix in _LOGS:
        if name.startswith(prefix):
            return name[len(prefix):-len(".jsonl")] not in FREE_COMPONENTS
    return False


def real_ratings(path: Path) -> bool:
    """True if ``path`` is a ratings CSV holding a rating that is not simulated."""
    if path.suffix.lower() != ".csv":
        return False
    try:
        with open(path, newline="", encoding="utf-8", errors="replace") as f:
            rows = csv.DictReader(f)
            if not rows.fieldnames or not {"page", "rater", "score"} <= set(rows.fieldnames):
                return False
            if "source" not in rows.fieldnames:
                return True
            return any((row.get("source") or "").strip() != "simulated" for row in rows)
    except OSError:
        return True


def _precious(path: Path) -> bool:
    return costly_prediction_cache(path) or costly_component_log(path) or real_ratings(path)


def _files(folder: Path) -> list[str]:
    """Every file and link under ``folder`` (links are not followed), as '/'-separated relative paths."""
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):  # does not follow links
        rel = Path(dirpath).relative_to(folder)
        for n in filenames + [d for d in dirnames if (Path(dirpath) / d).is_symlink()]:
            out.append((rel / n).as_posix())
    return sorted(out)


def _read_json(path: Path):
    try:
        return json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None


def folder_kind(folder: Path) -> str:
    """What ``folder`` is to ``make clean``: "foreign" (an ``--overwrite`` wrote into someone's folder),
    "paper-scale", "run" (a run folder of inkground's), "dataset" (a dataset inkground built), "generated"
    (:data:`GENERATED`), or "not inkground's"."""
    if folder.is_symlink():
        return "not inkground's"
    if (folder / FOREIGN_MARK).exists():
        return "foreign"
    mark = _read_json(folder / RUN_MARK)
    if isinstance(mark, dict):
        return "paper-scale" if mark.get("created_by") == "paper-scale" else "run"
    m = _read_json(folder / "manifest.json")
    if isinstance(m, dict) and m.get("schema") == DATASET_SCHEMA and not (folder / "manifest.json").is_symlink():
        return "dataset"
    if folder in GENERATED:
        return "generated"
    return "not inkground's"


def _plan(folder: Path, keep_precious: bool, remove: list, keep: list, kept_folders: list) -> None:
    """Add to ``remove`` the files of ``folder`` (an inkground folder) that ``make clean`` deletes, to ``keep``
    the precious ones; ``kept_folders`` gets (folder, why) for folders left whole."""
    kind = folder_kind(folder)
    if kind in ("foreign", "paper-scale", "not inkground's"):
        kept_folders.append((folder, kind))
        return
    if kind == "generated":
        remove.extend(folder / rel for rel in _files(folder))
        return
    patterns = COMMON_PATTERNS + (DATASET_PATTERNS if kind == "dataset" else EVAL_RUN_PATTERNS + PSEUDO_RUN_PATTERNS)
    nested = [folder / d for d in ("benchmark",) if kind == "run" and (folder / d).is_dir()
              and not (folder / d).is_symlink()]
    for rel in _files(folder):
        p = folder / rel
        if any(n in p.parents for n in nested):
            continue
        if not _matches(rel, patterns):
            continue  # not a file inkground writes here: the user's
        (keep if keep_precious and _precious(p) else remove).append(p)
    for n in nested:
        _plan(n, keep_precious, remove, keep, kept_folders)


def plan_clean(targets=None, keep_precious: bool = True) -> tuple[list[Path], list[Path], list[tuple[Path, str]]]:
    """(files to remove, precious files kept, folders left whole with why) for ``targets`` (default
    :data:`TARGETS`)."""
    remove, keep, kept_folders = [], [], []
    for t in TARGETS if targets is None else targets:
        t = Path(t)
        if t.is_dir():
            _plan(t, keep_precious, remove, keep, kept_folders)
    return sorted(remove), sorted(keep), kept_folders


def precious_files(targets=None) -> list[Path]:
    """Files under ``targets`` (default :data:`TARGETS`) that :func:`clean` keeps (API predictions, logs of paid
    or slow components, real ratings), sorted."""
    return plan_clean(targets)[1]


def clean(targets=None, keep_precious: bool = True) -> tuple[int, list[Path]]:
    """Remove the files :func:`plan_clean` lists and then the folders left empty (a folder holding anything
    else stays). Returns (files removed, files kept)."""
    targets = TARGETS if targets is None else tuple(targets)
    remove, keep, _ = plan_clean(targets, keep_precious)
    for p in remove:
        try:
            p.unlink()
        except FileNotFoundError:
            pass
    for t in targets:
        t = Path(t)
        if not t.is_dir() or t.is_symlink():
            continue
        for dirpath, dirnames, _ in sorted(os.walk(t), key=lambda w: -len(Path(w[0]).parts)):  # deepest first
            d = Path(dirpath)
            if not d.is_symlink() and not any(d.iterdir()):
                d.rmdir()
        parent = t.parent  # e.g. data/runs/synth once both of its runs are gone
        while parent not in (ROOT, ROOT / "data", DATASETS_DIR, RUNS_DIR) and parent.is_dir() \
                and ROOT in parent.parents and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
    return len(remove), keep


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m inkground_lib.publish.clean", description=__doc__.split("\n\n")[0])
    p.add_argument("--all", action="store_true", help="also remove API predictions, paid or slow components' logs "
                                                      "and real ratings (asks first)")
    p.add_argument("--yes", action="store_true", help="with --all: do not ask")
    a = p.parse_args(argv)
    _, keep, kept_folders = plan_clean()
    if a.all and keep:
        print(f"make clean-all would also remove {len(keep)} file(s) that cost money, time or people's work:")
        for f in keep:
            print(f"  {_shown(f)}")
        if not a.yes:
            if not sys.stdin.isatty():
                print("not removed: no terminal to ask; rerun with --yes (make clean-all YES=1) to remove them")
                return 1
            if input("Remove them? Type 'yes': ").strip().lower() != "yes":
                print("nothing removed")
                return 1
    removed, kept = clean(keep_precious=not a.all)
    print(f"removed {removed} file(s)" + (f"; kept {len(kept)} (API predictions, paid or slow components' logs, "
                                         f"real ratings; `make clean-all` removes them):" if kept else ""))
    for f in kept:
        print(f"  {_shown(f)}")
    for folder, why in kept_folders:
        print(f"  kept whole: {_shown(folder)} ({why}: "
              + ("written into with --overwrite; its files may be yours" if why == "foreign" else
                 "hours of work `make book` does not rebuild" if why == "paper-scale" else
                 "not created by inkground") + ")")
    return 0


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if ROOT in path.parents else str(path)


if __name__ == "__main__":
    sys.exit(main())
