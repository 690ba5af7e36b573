"""Safe file writing and path confinement.

Every file inkground writes goes through :func:`atomic_write_bytes` (or its text / JSON forms): the data is
written to a temporary file in the same folder, flushed and fsynced, then moved over the target with
``os.replace``. A crash leaves either the old file or the new one, never half of one.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path


class PathError(ValueError):
    """A path that leaves the folder it must stay in."""


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike, obj, indent: int | None = 1) -> Path:
    """JSON with sorted keys (stable bytes for hashing); NaN is refused (not valid JSON)."""
    return atomic_write_text(path, json.dumps(obj, indent=indent, sort_keys=True, allow_nan=False) + "\n")


def append_jsonl(path: str | os.PathLike, record) -> Path:
    """Append ``record`` as one JSON line (one write: sorted keys, NaN refused), then flush and fsync, so an
    append-only log loses at most the line being written when a run is killed (its readers drop a torn
    last line)."""
    line = json.dumps(record, sort_keys=True, allow_nan=False, ensure_ascii=False) + "\n"
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as f:
        f.write(line.encode("utf-8"))
        f.flush()
        os.fsync(f.fileno())
    return path


def confined(root: str | os.PathLike, rel: str, what: str = "path") -> Path:
    """Resolve ``rel`` inside ``root``; raise PathError if it is absolute or leaves ``root`` (.., links)."""
    root = Path(root).resolve()
    if not isinstance(rel, str) or not rel:
        raise PathError(f"{what}: expected a relative path string, got {rel!r}")
    if os.path.isabs(rel):
        raise PathError(f"{what}: {rel!r} is absolute; paths must be relative to {root}")
    p = (root / rel).resolve()
    if p != root and root not in p.parents:
        raise PathError(f"{what}: {rel!r} leaves the folder {root}")
    return p


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(chunk)
            if not b:
                break
            h.update(b)
    return h.hexdigest()
