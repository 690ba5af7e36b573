"""Safe file writing and path confinement: atomic writes (bytes, text, JSON), JSONL append and read, paths
kept inside a folder, file hashes.

A crash leaves either the old file or the new one, never half of one; the design page of the book has the
details.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Iterator


class PathError(ValueError):
    """A path that leaves the folder it must stay in."""


def _umask() -> int:
    mask = os.umask(0)  # read once, at import (single-threaded): os.umask can only be read by setting it
    os.umask(mask)
    return mask


FILE_MODE = 0o666 & ~_umask()
"""Mode of every file written here: what open() would give (0644 under the usual umask 022). mkstemp alone
makes 0600 files, unlike the append-only logs beside them."""


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, FILE_MODE)
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
    return append_jsonl_many(path, [record])


def append_jsonl_many(path: str | os.PathLike, records) -> Path:
    """Append ``records`` as one JSON line each (as :func:`append_jsonl`), in one write and one fsync (an fsync
    costs ~9 ms here: a run taking hundreds of records from an earlier run's log appends them together)."""
    data = "".join(json.dumps(r, sort_keys=True, allow_nan=False, ensure_ascii=False) + "\n" for r in records)
    path = Path(path)
    if not data:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as f:
        f.write(data.encode("utf-8"))
        f.flush()
        os.fsync(f.fileno())
    return path


class JSONLError(ValueError):
    """An append-only JSONL file with an invalid line that is not a torn last line; names file and line."""


def read_jsonl(path: str | os.PathLike, valid, *, repair: bool = True, what: str = "record") -> list[tuple[int, dict]]:
    """The records of an append-only JSONL file written by :func:`append_jsonl`, as (line number, record):
    :func:`iter_jsonl` as a list."""
    return list(iter_jsonl(path, valid, repair=repair, what=what))


def iter_jsonl(path: str | os.PathLike, valid, *, repair: bool = True,
               what: str = "record") -> Iterator[tuple[int, dict]]:
    """The records of an append-only JSONL file written by :func:`append_jsonl`, as (line number, record),
    parsed one at a time (a caller that keeps a compact form of each record never holds the whole file as
    Python objects: the paper-scale derender cache, 261 MB, took ~2 GB parsed at once).

    ``valid(record) -> bool`` says whether a parsed line is a usable record. A record and its newline are
    written in one write, so only the last line can be torn: a last line *without* its newline that does
    not parse (or is not valid) is dropped, and a valid one is kept; with ``repair`` the file is fixed in
    place (truncated before the torn line, or given its missing newline) so the next append starts on a
    fresh line (when the iteration reaches the end). Any other invalid line raises :class:`JSONLError` naming
    the file and the line, after the records before it were yielded. A missing file has no records."""
    for n, _, rec in iter_jsonl_at(path, valid, repair=repair, what=what):
        yield n, rec


def iter_jsonl_at(path: str | os.PathLike, valid, *, repair: bool = True,
                  what: str = "record") -> Iterator[tuple[int, int, dict]]:
    """:func:`iter_jsonl` with each record's byte offset in the file: (line number, offset, record) (a caller
    that keeps only the offsets reads a record again with ``f.seek(offset); f.readline()``)."""
    path = Path(path)
    if not path.is_file():
        return
    with open(path, "rb") as f:  # one line at a time: a cache of hundreds of MB is never read whole
        n = 0
        while True:
            pos = f.tell()
            raw = f.readline()
            if not raw:
                break
            torn = not raw.endswith(b"\n")
            line = raw if torn else raw[:-1]
            n += 1
            rec = None
            if line.strip():
                try:
                    rec = json.loads(line.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                    rec = None
                if rec is None or not valid(rec):
                    if torn:
                        if repair:
                            _repair(path, truncate_at=pos)
                        break
                    raise JSONLError(f"{path}: line {n}: not a valid {what}")
                yield n, pos, rec
            if torn:
                if repair and rec is not None:
                    _repair(path)
                break


def _repair(path: Path, truncate_at: int | None = None) -> None:
    """Fix a torn last line in place: truncate the file at ``truncate_at``, or (None) add the missing newline."""
    with open(path, "r+b" if truncate_at is not None else "ab") as f:
        if truncate_at is not None:
            f.truncate(truncate_at)
        else:
            f.write(b"\n")
        f.flush()
        os.fsync(f.fileno())


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


def sha256_json(obj) -> str:
    """sha256 (hex) of an object's canonical JSON (keys sorted; other types as ``str``): a cache key.

    >>> sha256_json({"b": 1, "a": [1, 2]}) == sha256_json({"a": [1, 2], "b": 1})
    True
    """
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def sha256_array(a) -> str:
    """sha256 (hex) of an array's pixels or values: its dtype and shape, then its bytes in C order. Equal digests,
    equal arrays (a word crop, a render: read once by their digest).

    >>> import numpy as np
    >>> sha256_array(np.zeros((2, 3), np.uint8)) == sha256_array(np.zeros((2, 3), np.uint8))
    True
    >>> sha256_array(np.zeros((2, 3), np.uint8)) == sha256_array(np.zeros((3, 2), np.uint8))
    False
    """
    import numpy as np

    arr = np.ascontiguousarray(a)
    h = hashlib.sha256(f"{arr.dtype.str}{arr.shape}".encode())
    h.update(arr.tobytes())
    return h.hexdigest()


def sources_sha256(files) -> str:
    """sha256 (hex) over ``files``, (name, path) pairs in order: each name, a NUL byte and the file's bytes. The
    digest of the code that decides a cached result (a trace, a training sample, a truth comparison): part of
    its key, so a result made by other code is made again."""
    h = hashlib.sha256()
    for name, path in files:
        h.update(str(name).encode() + b"\0" + Path(path).read_bytes())
    return h.hexdigest()


def modules_sha256(names) -> str:
    """:func:`sources_sha256` over the source files of the modules ``names`` (dotted names, in that order): the
    digest of the code a module list names (a dataset builder's, a training sample's)."""
    import importlib

    return sources_sha256((name, importlib.import_module(name).__file__) for name in names)


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(chunk)
            if not b:
                break
            h.update(b)
    return h.hexdigest()
