"""The prediction cache: append-only JSONL, one record per answered request, resumable.

Only model outputs are stored; failures go to a separate log. A request the run's cache does not hold is looked
up in the same system's cache of the earlier runs (the book's run, then every rerun's, by request hash:
:class:`EarlierCaches`) and, when found there, copied into the run's cache rather than asked again. The files,
their lock, the records (made and loaded) are here; asking a system for the words not answered yet is
:mod:`~inkground_lib.evaluation.asking`. The layout, the record schema and the rules are on the design page of
the book.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import os
import re
import stat
import time
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Optional

from inkground_lib.core.earlier_runs import ADOPT_BATCH, earlier_files
from inkground_lib.core.files import JSONLError, append_jsonl, append_jsonl_many, iter_jsonl
from inkground_lib.core.ink import ink_to_lists
from inkground_lib.core.run_files import predictions_jsonl
from inkground_lib.evaluation.systems.base import (
    MODEL_OUTPUT_STATUSES,
    RETRIED_ON_REQUEST,
    Item,
    RawOutput,
    System,
)

SCHEMA = "inkground-prediction"
SCHEMA_VERSION = 1
REQUIRED = ("request_hash", "word_id", "system", "status")
VOLATILE = ("timestamp", "latency_s", "attempts")  # fields that may differ between equivalent runs


class CacheError(ValueError):
    """A cache file that cannot be used (corrupt line, another system's records, held by another run)."""


def cache_path(run_dir: str | os.PathLike, system_name: str) -> Path:
    """``<run_dir>/predictions/<system>.jsonl``; the system name must be an id
    (:data:`~inkground_lib.core.manifest_schema.ID_RULE`)."""
    from inkground_lib.core.dataset import check_id

    check_id(system_name, "system name (it names the cache file)", CacheError)
    return predictions_jsonl(run_dir, system_name)


def failures_path(path: str | os.PathLike) -> Path:
    path = Path(path)
    return path.with_name(path.name[: -len(".jsonl")] + ".failures.jsonl" if path.name.endswith(".jsonl")
                          else path.name + ".failures.jsonl")


def _valid(rec) -> bool:
    return (isinstance(rec, dict) and rec.get("schema") == SCHEMA and all(k in rec for k in REQUIRED)
            and isinstance(rec["request_hash"], str) and rec["status"] in MODEL_OUTPUT_STATUSES)


def load_cache(path: str | os.PathLike, system: Optional[str] = None, repair: bool = False) -> dict[str, dict]:
    """The cached records of ``path`` by request hash (first record wins), in file order, read one record at a
    time (the file is never read whole).

    A torn last line is kept if it is a complete valid record, else ignored; with ``repair`` the file is
    fixed in place (newline added, or truncated to the last complete line). ``system`` (if given) must
    match every record's system. A missing file is an empty cache. A file whose first line is no prediction
    record is not a cache of inkground's (a user's file of that name): :class:`CacheError` says so and that it
    is left alone; a bad line after valid records is a corrupt cache."""
    out: dict[str, dict] = {}
    try:
        for n, rec in iter_jsonl(path, _valid, repair=repair, what=f"{SCHEMA} record"):
            if system is not None and rec["system"] != system:
                raise CacheError(f"{path}: line {n}: field system: record of {rec['system']!r}, expected "
                                 f"{system!r} (wrong cache file)")
            k = rec["request_hash"]
            if k not in out or out[k]["status"] in RETRIED_ON_REQUEST:
                out[k] = rec  # a later answer replaces a refusal / empty one (asked again with retry_refusals)
    except JSONLError as err:
        if not out:
            raise CacheError(f"{path}: not a prediction cache written by inkground (its first record is not an "
                             f"{SCHEMA} record); inkground never replaces or appends to a file it did not write: "
                             f"move the file away, or choose another run folder") from None
        raise CacheError(f"{err} (the cache is corrupt; move the file away to start over)") from None
    return out


class EarlierCaches:
    """One system's answers in the earlier runs of a cache's run folder: the file of the same name
    (``predictions/<system>.jsonl``) in the book's run, then in every rerun's
    (:func:`~inkground_lib.core.earlier_runs.earlier_files`). A record is found only by its request hash, the
    digest of everything the answer depends on (the system's settings, model and prompt version, the word, its
    page photo's pixels...), so an answer to another dataset, word or setting never matches.

    The files are read once, at the first lookup, and only read (never locked or repaired: another run may be
    writing them); one that cannot be read is skipped with a warning. :meth:`take` appends what a run takes to
    its own cache (:data:`~inkground_lib.core.earlier_runs.ADOPT_BATCH` records a write, the rest at
    :meth:`flush`), so a run's cache holds every answer its scores come from, and a rerun's answers stay with it
    whatever becomes of the book's runs."""

    def __init__(self, path: str | os.PathLike, system: str):
        self.path = Path(path)
        self.system = system
        self._records: Optional[dict] = None
        self._pending: list = []
        self.taken = 0

    def _load(self) -> dict:
        if self._records is None:
            self._records = {}
            for other in earlier_files(self.path):
                try:
                    found = load_cache(other, system=self.system)
                except CacheError as err:
                    warnings.warn(f"{err}: not read for answers to reuse", stacklevel=3)
                    continue
                for k, rec in found.items():
                    had = self._records.get(k)
                    if had is None or (had["status"] in RETRIED_ON_REQUEST
                                       and rec["status"] not in RETRIED_ON_REQUEST):
                        self._records[k] = rec
        return self._records

    def get(self, key: str) -> Optional[dict]:
        """The earlier runs' record of request ``key``, or None (nothing is written)."""
        return self._load().get(key)

    def take(self, key: str) -> Optional[dict]:
        """The earlier runs' record of request ``key`` (None when none holds it), queued for this run's cache."""
        rec = self.get(key)
        if rec is not None:
            self._pending.append(rec)
            self.taken += 1
            if len(self._pending) >= ADOPT_BATCH:
                self.flush()
        return rec

    def flush(self) -> None:
        """Append the records taken and not written yet to this run's cache (one write)."""
        if self._pending:
            append_jsonl_many(self.path, self._pending)
            self._pending = []


def check_cache_file(path: str | os.PathLike) -> None:
    """CacheError unless ``path`` (a prediction cache or failures log about to be appended to) is missing or a
    regular file with no other hard link: a cache hard-linked from outside the run folder would be written
    there too."""
    p = Path(path)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
        raise CacheError(f"{p}: not a regular file ({'a symbolic link' if stat.S_ISLNK(st.st_mode) else 'a folder or device'}); "
                         f"a prediction cache is a plain file inside its run folder: move it away")
    if st.st_nlink > 1:
        raise CacheError(f"{p}: the file has {st.st_nlink} hard links (another name, maybe outside the run folder, "
                         f"shares it); inkground does not append to it, since that would write there too: copy it "
                         f"(cp {p.name} x && mv x {p.name}) or move it away")



def append_record(path: str | os.PathLike, record: dict) -> None:
    """Append one record as one line (one write), then flush and fsync. NaN is refused."""
    append_jsonl(path, record)


@contextmanager
def locked(path: Path):
    """Hold the cache ``path``'s lock (``<system>.lock`` beside it) for a run that appends to it; CacheError when
    another run holds it."""
    lock = path.with_name(path.name[: -len(".jsonl")] + ".lock" if path.name.endswith(".jsonl")
                          else path.name + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CacheError(f"{path}: another run is writing this cache (lock {lock.name} is held)") from None
        yield
    finally:
        os.close(fd)  # closing releases the lock (a killed process releases it too)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


def _prompt_version(item: Item, out: RawOutput, default: Optional[str]) -> Optional[str]:
    if default is not None:
        return default
    if out.prompt_version is not None:
        return out.prompt_version
    meta = getattr(item.request, "meta", None)
    if isinstance(meta, dict) and meta.get("prompt_version") is not None:
        return str(meta["prompt_version"])
    return None


MAX_LABEL_CHARS = 200
"""Longest ``served_model`` / ``finish_reason`` kept (a label, not a document)."""

USAGE_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
"""Usage entries kept: counters with plain names (``prompt_tokens``, ``reasoning_tokens``, ...)."""


def _label(value, scrub) -> Optional[str]:
    if value is None:
        return None
    return scrub(str(value))[:MAX_LABEL_CHARS]


def _usage_numbers(usage, scrub, depth: int = 0) -> dict:
    """Only the numbers of a usage object (nested at most 3 deep, e.g. ``completion_tokens_details``), under
    names that survive scrubbing unchanged: a server cannot put text (or an echoed key) into the cache."""
    out = {}
    if not isinstance(usage, dict) or depth > 3:
        return out
    for k, v in usage.items():
        if not isinstance(k, str) or not USAGE_KEY.fullmatch(k) or scrub(k) != k:
            continue
        if isinstance(v, bool):
            continue
        if isinstance(v, int) or (isinstance(v, float) and v == v and abs(v) != float("inf")):
            out[k] = v
        elif isinstance(v, dict):
            sub = _usage_numbers(v, scrub, depth + 1)
            if sub:
                out[k] = sub
    return out


def make_record(system: System, item: Item, key: str, out: RawOutput,
                prompt_version: Optional[str] = None) -> dict:
    """The cache record of one answer (see module doc).

    Of the server's response only an allow-list is stored, each field scrubbed of the system's secrets
    (API key, base URL) and key-shaped strings: the answer text (scrubbed by the API adapter, exact secrets
    only, so an answer's own text is not mangled), the served model name and finish reason (labels, at most
    :data:`MAX_LABEL_CHARS`), the usage counters (numbers only, :func:`_usage_numbers`) and the error
    message. Nothing else the server sends is kept."""
    from inkground_lib import __version__

    scrub = getattr(system, "scrub", lambda s: s)
    return {
        "schema": SCHEMA, "schema_version": SCHEMA_VERSION,
        "request_hash": key, "word_id": item.word_id, "page_id": item.page_id, "word_key": item.word_key(),
        "system": system.name, "adapter": getattr(system, "adapter", None), "model": getattr(system, "model", None),
        "served_model": _label(out.served_model, scrub),
        "raw_text": out.text,  # already scrubbed of the system's secrets by the API adapter
        "strokes": None if out.strokes is None else ink_to_lists(out.strokes),
        "status": out.status, "finish_reason": _label(out.finish_reason, scrub),
        "usage": _usage_numbers(out.usage or {}, scrub),
        "error": scrub(out.error) if out.error else None,
        "attempts": int(out.attempts), "latency_s": round(float(out.latency), 4),
        "timestamp": _now(), "prompt_version": _prompt_version(item, out, prompt_version),
        "images_sent": [_image_record(r) for r in (out.images_sent or [])],
        "library_version": __version__,
    }


_IMAGE_KEYS = ("format", "bytes", "b64_bytes", "scale", "size", "quality")


def _image_record(rec) -> dict:
    """What was sent of one image (format, bytes, scale, size, quality): only these keys, numbers and a label."""
    rec = rec if isinstance(rec, dict) else {}
    out = {k: rec.get(k) for k in _IMAGE_KEYS}
    out["format"] = str(out["format"])[:8] if out["format"] is not None else None
    return out


def recent_request_starts(path: str | os.PathLike, within: float = 86400.0) -> list[float]:
    """Wall-clock start times (seconds) of the requests recorded in a cache file and its failures log in the
    last ``within`` seconds: a record's timestamp less its latency, once per attempt (for the daily pace)."""
    cutoff = time.time() - within
    starts = []
    for p in (Path(path), failures_path(path)):
        try:
            records = iter_jsonl(p, lambda r: isinstance(r, dict), repair=False)
            for _, rec in records:
                try:
                    t = _dt.datetime.fromisoformat(str(rec["timestamp"])).timestamp()
                    t -= float(rec.get("latency_s") or 0.0)
                    n = max(int(rec.get("attempts") or 0), 0)
                except (KeyError, TypeError, ValueError):
                    continue
                if t > cutoff:
                    starts += [t] * n
        except JSONLError:
            continue  # a corrupt file is reported where the cache is loaded
    return starts


def stable_view(records: Iterable[dict]) -> list[dict]:
    """Records without the fields that legitimately differ between equivalent runs (timestamp, latency,
    attempts): what must be identical after a kill and resume."""
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in records]
