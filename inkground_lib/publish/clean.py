"""``make clean`` and ``make clean-all``: remove what the pipeline rebuilds, keep what cost money or people's time.

``make clean`` (``python -m inkground_lib.publish.clean``) removes the built book (``_build/``), the executed
sections (``book/sections/``) and the generated datasets and runs (``data/datasets/``, ``data/runs/``) but
keeps, in place:

* prediction caches of systems that are not local and free to rerun - API models, InkSight, DeepSeek-OCR:
  every ``predictions/<system>.jsonl`` (and its failures log) holding a record whose ``adapter`` is not one
  of :data:`FREE_ADAPTERS`;
* ratings files with real ratings: a CSV with ``page``, ``rater`` and ``score`` columns and a row whose
  ``source`` is not ``simulated`` (or no ``source`` column at all).

``make clean-all`` (``--all``) removes those too, after listing them and asking (``--yes`` answers for a
script; without a terminal and without ``--yes`` nothing is removed).

Standard library only: it runs with the system Python, before or without the virtual environment.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import sys
from pathlib import Path

from inkground_lib.core.layout import DATASETS_DIR, ROOT, RUNS_DIR, SECTIONS_DIR
from inkground_lib.core.run_files import PREDICTIONS_DIR

TARGETS = (ROOT / "_build", SECTIONS_DIR, DATASETS_DIR, RUNS_DIR)
"""What ``make clean`` empties (everything ``make book`` rebuilds)."""

FREE_ADAPTERS = frozenset({"reference", "box", "font", "skeleton", "replay"})
"""Adapters whose predictions cost nothing to make again (local baselines, the skeleton derenderer, replays)."""


def costly_prediction_cache(path: Path) -> bool:
    """True if ``path`` is a prediction cache (or failures log) with a record of a non-free adapter."""
    if not (path.suffix == ".jsonl" and path.parent.name == PREDICTIONS_DIR):
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


def precious_files(targets=None) -> list[Path]:
    """Files under ``targets`` (default :data:`TARGETS`) that :func:`clean` keeps (API predictions, real
    ratings), sorted."""
    targets = TARGETS if targets is None else targets
    out = []
    for t in targets:
        if t.is_dir():
            out.extend(p for p in t.rglob("*") if p.is_file() and (costly_prediction_cache(p) or real_ratings(p)))
    return sorted(out)


def clean(targets=None, keep_precious: bool = True) -> tuple[int, list[Path]]:
    """Remove every file under ``targets`` (default :data:`TARGETS`) except (with ``keep_precious``)
    :func:`precious_files`, and the folders left empty. Returns (files removed, files kept)."""
    targets = TARGETS if targets is None else targets
    keep = set(precious_files(targets)) if keep_precious else set()
    removed = 0
    for t in targets:
        if not t.exists():
            continue
        if not keep or not any(t in k.parents for k in keep):
            removed += sum(1 for p in t.rglob("*") if p.is_file() or p.is_symlink()) if t.is_dir() else 1
            shutil.rmtree(t) if t.is_dir() and not t.is_symlink() else t.unlink()
            continue
        for p in sorted(t.rglob("*"), key=lambda p: -len(p.parts)):  # deepest first
            if p.is_symlink() or p.is_file():
                if p not in keep:
                    p.unlink()
                    removed += 1
            elif p.is_dir() and not any(p.iterdir()):
                p.rmdir()
    return removed, sorted(keep)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m inkground_lib.publish.clean", description=__doc__.split("\n\n")[0])
    p.add_argument("--all", action="store_true", help="also remove API predictions and real ratings (asks first)")
    p.add_argument("--yes", action="store_true", help="with --all: do not ask")
    a = p.parse_args(argv)
    keep = precious_files()
    if a.all and keep:
        print(f"make clean-all would also remove {len(keep)} file(s) that cost money or people's time:")
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
    print(f"removed {removed} file(s)" + (f"; kept {len(kept)} (API predictions, real ratings; "
                                         f"`make clean-all` removes them):" if kept else ""))
    for f in kept:
        print(f"  {_shown(f)}")
    return 0


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if ROOT in path.parents else str(path)


if __name__ == "__main__":
    sys.exit(main())
