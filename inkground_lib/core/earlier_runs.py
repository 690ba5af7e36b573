"""Where a run finds the results the book's runs and earlier reruns computed already: the one lookup every
content-keyed store reads through (predictions, OCR readings of renders and crops, derender logs, traces, truth
comparisons, Style features and fitted heads).

A run folder lies under the book's runs or under a rerun's folder (:mod:`inkground_lib.core.rerun_folders` says
which), at the same path below it: ``data/runs/synth/03_evaluation`` is the book's run of section 03 on the
synthetic benchmark, ``data/reruns/<name>/synth/03_evaluation`` a rerun's. That path below (``synth/03_evaluation``,
the dataset and the section) names the runs that can hold the same results; :func:`earlier_runs` lists them,
:func:`earlier_files` the same file in each.

What is found there is a candidate, never a result: each store keeps its own key with every record (a digest of
everything that decides the result: the inputs' contents, the settings, the code) and takes a record only where
that key equals the one it computes for its request, so a record of another dataset, other settings or older
code never matches. The earlier runs are only read (never locked, repaired or written: another command may be
appending to them). What a run takes from them it appends to its own store, so a run folder always holds every
record its tables were computed from: its results archive is whole, its readers (section 04's costs, the
derender errors, the recorded seconds) see one run, and deleting the book's runs (``make clean``) takes nothing
from a rerun. One exception: a trace store (:mod:`inkground_lib.components.derenderers.traces`) reads on in the
earlier runs' stores without copying, since traces are intermediate answers (hundreds of MB at the paper's
scale) whose inks the run's derender logs already hold.
"""

from __future__ import annotations

import os
from pathlib import Path

from inkground_lib.core import layout

ADOPT_BATCH = 256
"""Records a store takes from earlier runs are appended to the run's own file this many at a time (one write and
one fsync each, ~9 ms here: taking thousands one by one would cost more than reading them)."""

_RUNS = Path(layout.RUNS).parts                      # ("data", "runs"); never ROOT: a test may move it
_RERUNS = tuple(Path(layout.RERUNS).parts)           # ("data", "reruns")


def run_home(folder: str | os.PathLike) -> tuple[Path, Path] | None:
    """(the repository root, ``folder``'s path below the runs) for a folder under ``<root>/data/runs/`` or
    ``<root>/data/reruns/<name>/``; None for any other folder. The root is read from the path itself (the
    innermost match), so a checkout anywhere, or a test's temporary one, works the same.

    >>> run_home("/repo/data/reruns/03_n_boot-200/synth/03_evaluation")
    (PosixPath('/repo'), PosixPath('synth/03_evaluation'))
    >>> run_home("/repo/data/runs/synth/02_pseudo_labels/derenderers")
    (PosixPath('/repo'), PosixPath('synth/02_pseudo_labels/derenderers'))
    >>> run_home("/tmp/my_run") is None
    True
    """
    parts = Path(os.path.abspath(folder)).parts
    for i in range(len(parts) - 2, -1, -1):
        if parts[i:i + 2] == _RUNS and len(parts) > i + 2:
            return Path(*parts[:i]), Path(*parts[i + 2:])
        if parts[i:i + 2] == _RERUNS and len(parts) > i + 3:
            return Path(*parts[:i]), Path(*parts[i + 3:])
    return None


def earlier_runs(folder: str | os.PathLike) -> list[Path]:
    """The other run folders of the same dataset and section as ``folder`` (the same path below the runs, see
    the module doc) that exist, in this order: the book's run (``data/runs/<path>``), then every rerun's
    (``data/reruns/<name>/<path>``) by name; ``folder`` itself is never listed, and a folder outside
    ``data/runs/`` and ``data/reruns/`` has none. Works for any folder inside a run folder too (``.../derenderers/
    recorded pages``). Absolute paths. Equal keys mean equal results, so the order only decides which copy is
    read, never what is read."""
    home = run_home(folder)
    if home is None:
        return []
    root, below = home
    me = Path(os.path.realpath(folder))
    reruns = root.joinpath(*_RERUNS)
    names = sorted(p.name for p in reruns.iterdir() if p.is_dir()) if reruns.is_dir() else []
    out = []
    for cand in [root.joinpath(*_RUNS) / below] + [reruns / n / below for n in names]:
        if cand.is_dir() and Path(os.path.realpath(cand)) != me:
            out.append(cand)
    return out


def earlier_files(path: str | os.PathLike) -> list[Path]:
    """The file at the same place as ``path`` (a file inside a run folder) in each of :func:`earlier_runs` of its
    folder, where there is one (same order); never ``path`` itself."""
    path = Path(path)
    return [p for p in (d / path.name for d in earlier_runs(path.parent)) if p.is_file()]
