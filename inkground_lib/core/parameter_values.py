"""Whether a run's parameter values are its section's defaults: compared as JSON stores them (a tuple equals its
list), and a folder under ``data/`` in any spelling of it (relative or absolute, ``./``). A run with any value
other than its default is a rerun (:mod:`inkground_lib.core.rerun_folders`); the reproducibility page shows a
changed value with its default.
"""

from __future__ import annotations

import json
import os

from inkground_lib.core.repo_paths import repo_path


def canonical(value):
    """Values compared as JSON would store them (a tuple equals its list)."""
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def _same(value, default) -> bool:
    """Whether a parameter's value is its default: as JSON would store them (a tuple equals its list), and a
    path under the repository (a default under ``data/``) in any spelling of the same folder (relative or
    absolute, ``./``): a resolved path is never taken for a new value."""
    if canonical(value) == canonical(default):
        return True
    if isinstance(default, (list, tuple)) and isinstance(value, (list, tuple)):
        return len(value) == len(default) and all(_same(v, d) for v, d in zip(value, default))
    if isinstance(default, str) and default.startswith("data/") and isinstance(value, (str, os.PathLike)) \
            and str(value):
        return os.path.normpath(repo_path(value)) == os.path.normpath(repo_path(default))
    return False


def changed_parameters(params: dict, defaults: dict) -> dict:
    """The parameters of ``params`` whose value is not the notebook's default (unknown names count as changed;
    a default folder spelled otherwise does not).

    >>> changed_parameters({"ocr_threshold": 0.85, "seed": 1}, {"ocr_threshold": 0.85, "seed": 0})
    {'seed': 1}
    >>> changed_parameters({"run_dir": str(repo_path("data/runs/x"))}, {"run_dir": "data/runs/x"})
    {}
    """
    return {k: v for k, v in params.items() if k not in defaults or not _same(v, defaults[k])}
