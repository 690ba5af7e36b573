"""Why a dataset folder is made again: the one line a builder prints when the meta of the folder it finds (the
code digest and parameters it was made with) is not the meta it would write now."""

from __future__ import annotations

import sys
from pathlib import Path


def remade_because(old: dict | None, new: dict) -> str:
    """What differs between a folder's recorded meta ``old`` and the meta ``new`` a builder would write: its code
    (``code_sha256``, 12 hex digits of each), then the other entries by name, one level into dictionaries
    (their values when short); "" when nothing does.

    >>> remade_because({"code_sha256": "a" * 64, "params": {"pages": 1}}, {"code_sha256": "b" * 64,
    ...                                                                     "params": {"pages": 2}})
    'its code changed (code sha256 aaaaaaaaaaaa -> bbbbbbbbbbbb); params.pages changed (1 -> 2)'
    >>> remade_because({"seed": 1}, {"code_sha256": "b" * 64, "seed": 1})
    'it was made before its code was recorded'
    """
    if old is None:
        return "no finished dataset was there"
    why = []
    if old.get("code_sha256") != new.get("code_sha256"):
        why.append("it was made before its code was recorded" if "code_sha256" not in old else
                   f"its code changed (code sha256 {str(old['code_sha256'])[:12]} -> {str(new['code_sha256'])[:12]})")
    for key in sorted((set(old) | set(new)) - {"code_sha256"}):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            pairs = [(f"{key}.{k}", a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        else:
            pairs = [(key, a, b)]
        for name, x, y in pairs:
            x, y = repr(x), repr(y)
            why.append(f"{name} changed ({x} -> {y})" if len(x) + len(y) <= 80 else f"{name} changed")
    return "; ".join(why)


def say_remade(folder: Path, what: str, old: dict | None, new: dict) -> None:
    """Print on standard error that ``folder`` (dataset ``what``) is made again, and why (:func:`remade_because`):
    the runs made from the old folder are then made again too, as their fingerprints hold its hash."""
    why = remade_because(old, new)
    if why:
        print(f"[inkground] {what} dataset {folder}: made again: {why}", file=sys.stderr, flush=True)
