"""The UNIPEN writers that no model of this project may train on (shipped: data/unipen_eval_writers.txt)."""

from __future__ import annotations

import os
from pathlib import Path

from inkground_lib.core.layout import DATA

EVAL_WRITERS_FILE = DATA / "unipen_eval_writers.txt"
"""One writer id a line (``unipen-<contributor>-<sha1[:6]>``) and its group (shipped / held-out); # comments."""


def read_eval_writers(path: str | os.PathLike | None = None, group: str | None = None) -> set[str]:
    """The writer ids of the list at ``path`` (default :data:`EVAL_WRITERS_FILE`), all groups or one
    (``"shipped"``, ``"held-out"``). Raises FileNotFoundError / ValueError naming the file and line."""
    p = Path(path) if path is not None else EVAL_WRITERS_FILE
    if not p.is_file():
        raise FileNotFoundError(f"{p}: the list of evaluation writers is missing (it ships with the repository)")
    out = set()
    for k, line in enumerate(p.read_text("utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2 or not parts[0].startswith("unipen-"):
            raise ValueError(f"{p}: line {k}: expected '<writer id> <group>', got {line!r}")
        if group is None or parts[1] == group:
            out.add(parts[0])
    if not out:
        raise ValueError(f"{p}: no writers" + (f" in group {group!r}" if group else ""))
    return out
