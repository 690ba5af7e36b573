"""Paths relative to the repository root, wherever the process starts: a notebook's kernel, papermill, the CLI.

The section notebooks' parameters name folders relative to the repository root (``"data/datasets/synth"``), as
:mod:`inkground_lib.core.layout` spells them. ``inkground run`` and ``make book`` start the kernel in the root;
``make lab`` starts it in ``lab/`` (the working copies), papermill wherever it is told and a user's own script
anywhere. A notebook therefore never opens a parameter's path as it is and never calls ``os.chdir``: it resolves
it with :func:`repo_path` (the notebooks through ``plan.paths``, :mod:`inkground_lib.publish.rerun_plan`)::

    from inkground_lib.core.repo_paths import repo_path
    ds = load_dataset(repo_path(dataset))   # the same folder from lab/, from the root, from /tmp

Records the book depends on (dataset manifests, run records) store paths with :func:`portable_path`: relative
to the root when inside it, so a moved or renamed checkout keeps its build (its digests do not change).
"""

from __future__ import annotations

import os
from pathlib import Path

from inkground_lib.core import layout


class RepoPathError(ValueError):
    """The repository root cannot be found (the library is installed outside a checkout)."""


def repo_root() -> Path:
    """The repository root: the folder holding ``notebooks/``, ``data/`` and ``inkground_lib/``
    (:data:`inkground_lib.core.layout.ROOT`, found from this file, not from the working directory).
    RepoPathError when the library was installed as a copy (``pip install .``) rather than from a checkout."""
    root = layout.ROOT
    if not (root / "notebooks").is_dir() or not (root / "inkground_lib").is_dir():
        raise RepoPathError(f"inkground_lib is imported from {root / 'inkground_lib'}, which is not inside a "
                            f"checkout of the repository (no notebooks/ beside it); install it from the checkout "
                            f"with `pip install -e .` (make venv does)")
    return root


def repo_path(path: str | os.PathLike) -> Path:
    """The absolute path of ``path`` as the notebooks' parameters and the CLI's defaults write it: an absolute
    path (or ``~/...``) as it is, a relative one under the repository root (never the working directory).

    >>> repo_path("data/datasets/synth") == layout.ROOT / "data" / "datasets" / "synth"
    True
    >>> str(repo_path("/tmp/x"))
    '/tmp/x'
    """
    p = Path(path).expanduser()
    return p if p.is_absolute() else layout.ROOT / p


def portable_path(path: str | os.PathLike, root: str | os.PathLike | None = None) -> str:
    """``path`` as a record stores it: relative to ``root`` (default: the repository root), in POSIX form, when
    it lies inside it; absolute otherwise (a file outside the checkout moves on its own). Symbolic links are
    resolved on both sides first. Read back with :func:`repo_path` (or ``root / path``).

    >>> portable_path(layout.ROOT / "data" / "unipen_cursive" / "x.json")
    'data/unipen_cursive/x.json'
    >>> portable_path("/elsewhere/x.json", root="/work/repo")
    '/elsewhere/x.json'
    """
    p = Path(path).expanduser().resolve()
    base = Path(root if root is not None else layout.ROOT).resolve()
    try:
        return p.relative_to(base).as_posix()
    except ValueError:
        return str(p)
