"""Where the reruns live and what a rerun folder is: the layout the content-keyed stores find earlier results in
(:mod:`inkground_lib.core.earlier_runs`) and the commands plan and record reruns in
(:mod:`inkground_lib.publish.rerun_plan`, :mod:`inkground_lib.publish.rerun_record`).

**The book's runs** are the sections run with their notebooks' default parameters, in the run folders the
parameters cells name under ``data/runs/`` (``data/runs/synth/02_pseudo_labels``, ``data/runs/synth/03_evaluation``,
``data/runs/recorded/03_evaluation``). **A rerun** is a run with any parameter other than its default
(:func:`inkground_lib.core.parameter_values.changed_parameters`). It never writes into the book's runs; it
writes into its own folder ``data/reruns/<name>/`` (:func:`rerun_folder`):

* ``<name>`` is given by the user (``inkground run --name``, :func:`check_name`) or made from the changed
  parameters, the section first: ``02_ocr_threshold-0.9`` (:func:`rerun_name`); a long name, or a value with
  characters a folder name should not hold (a path), is shortened and ends in 8 hex digits of the parameters'
  digest (``02_ratings-people-ratings.csv-04b376a7``). The same parameters give the same name, so the same rerun
  resumes (and is reused when nothing changed);
* a **run-folder parameter** (a default under ``data/runs/``: ``run_dir``, ``bench_run``, ``eval_runs``...;
  :func:`run_folder_parameters`) is written by the section whose ``NN_`` folder it is; moved into a rerun it
  keeps its path below ``data/runs/`` (:func:`rebase`: ``data/runs/synth/02_pseudo_labels`` ->
  ``data/reruns/<name>/synth/02_pseudo_labels``), so the same dataset and section lie at the same path below the
  book's runs and below every rerun's folder;
* the executed notebook goes to ``data/reruns/<name>/sections/<NN_name>.ipynb``, and ``data/reruns/<name>/
  rerun.json`` (:data:`RERUN_RECORD`) records what the rerun ran with (:mod:`inkground_lib.publish.rerun_record`);
  a folder with a record is a rerun (:func:`list_reruns`).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from inkground_lib.core import layout
from inkground_lib.core.parameter_values import canonical

RERUN_RECORD = "rerun.json"
"""The record in each rerun folder (see the module doc)."""

RERUN_LABEL = "rerunning-a-section"
"""The label of the book's instructions for rerunning a section (book/intro.md), which the pages link. Here, in
the standard-library bottom layer, because CI's cache keys (publish/ci.py, run with the system Python) import
the notebook runner that uses it."""

RUNS_PREFIX = "data/runs/"
"""Run-folder parameters are those whose default lies under this folder (relative to the repository root)."""

NAME_MAX = 48
"""Longest readable part of a rerun's name; a longer one is cut and ends in the parameters' digest."""

_NAME_OK = re.compile(r"[A-Za-z0-9][A-Za-z0-9._,+-]*")
_SECTION_DIR = re.compile(r"^(\d\d)_")


class RerunError(ValueError):
    """A rerun that cannot be planned as asked (a bad name, a name already used with other parameters)."""


def _slug(value) -> tuple[str, bool]:
    """A value as a folder-name fragment, and whether it is exact (a number, a bool, a plain word, a list of them)."""
    if isinstance(value, (list, tuple)):
        parts = [_slug(v) for v in value]
        return ",".join(p for p, _ in parts), all(ok for _, ok in parts)
    text = json.dumps(value) if not isinstance(value, str) else value
    slug = re.sub(r"[^A-Za-z0-9._+-]+", "-", text).strip("-.") or "x"
    return slug, slug == text


def rerun_name(section: str, changed: dict) -> str:
    """The folder name of a rerun of ``section`` with ``changed`` parameters (see the module doc).

    >>> rerun_name("02", {"ocr_threshold": 0.9})
    '02_ocr_threshold-0.9'
    >>> rerun_name("03", {"systems": ["skeleton", "font"], "n_boot": 200})
    '03_n_boot-200_systems-skeleton,font'
    >>> rerun_name("02", {"ratings": "people/ratings.csv"})
    '02_ratings-people-ratings.csv-04b376a7'
    """
    parts, exact = [], True
    for k in sorted(changed):
        slug, ok = _slug(changed[k])
        parts.append(f"{k}-{slug}")
        exact &= ok
    readable = f"{section}_" + "_".join(parts)
    if exact and len(readable) <= NAME_MAX:
        return readable
    digest = hashlib.sha256(json.dumps(canonical(changed), sort_keys=True).encode()).hexdigest()[:8]
    return readable[:NAME_MAX].rstrip("_-.,") + "-" + digest


def check_name(name: str) -> str:
    """A user's rerun name: letters, digits and ``._,+-``, at most 100 characters; RerunError otherwise."""
    if not _NAME_OK.fullmatch(name or "") or len(name) > 100:
        raise RerunError(f"--name {name!r}: a rerun name is a folder name under {layout.RERUNS}/: letters, digits "
                         f"and . _ , + - (not first), at most 100 characters")
    return name


def _writer(path) -> str | None:
    """The section that writes a run folder under data/runs/ (its ``NN_`` folder), None if not one."""
    if not isinstance(path, str) or not path.startswith(RUNS_PREFIX):
        return None
    for part in Path(path[len(RUNS_PREFIX):]).parts:
        m = _SECTION_DIR.match(part)
        if m:
            return m.group(1)
    return None


def run_folder_parameters(defaults: dict) -> dict[str, str]:
    """{parameter: the section writing its folder} for the parameters whose default lies under data/runs/
    (a list of folders counts when all are written by one section).

    >>> run_folder_parameters({"benchmark": "data/runs/synth/02_pseudo_labels/benchmark", "seed": 0,
    ...                        "bench_run": "data/runs/synth/03_evaluation"})
    {'benchmark': '02', 'bench_run': '03'}
    """
    out = {}
    for name, default in defaults.items():
        values = default if isinstance(default, (list, tuple)) else [default]
        writers = {_writer(v) for v in values}
        if len(writers) == 1 and None not in writers and values:
            out[name] = writers.pop()
    return out


def rebase(value, name: str):
    """A run-folder value (a path under data/runs/, or a list of them) moved under rerun ``name``.

    >>> rebase("data/runs/synth/02_pseudo_labels", "02_seed-1")
    'data/reruns/02_seed-1/synth/02_pseudo_labels'
    """
    if isinstance(value, (list, tuple)):
        return [rebase(v, name) for v in value]
    return f"{layout.RERUNS}/{name}/{value[len(RUNS_PREFIX):]}"


def rerun_folder(name: str) -> Path:
    """The absolute folder of rerun ``name``."""
    return layout.ROOT / layout.RERUNS / name


def list_reruns() -> list[str]:
    """The names of the reruns under data/reruns/ that have a record, sorted."""
    base = layout.ROOT / layout.RERUNS
    return sorted(p.parent.name for p in base.glob(f"*/{RERUN_RECORD}")) if base.is_dir() else []
