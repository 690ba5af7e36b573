"""The prediction cache: append-only JSONL, one record per answered request, resumable.

``run_predictions`` asks a system for every item not answered yet; only model outputs are stored, failures
go to a separate log. The layout, the record schema and the rules are on the design page of the book.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import os
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Optional, Sequence

from inkground_lib.core.files import JSONLError, append_jsonl, read_jsonl
from inkground_lib.core.ink import ink_to_lists
from inkground_lib.evaluation.systems.base import (
    MODEL_OUTPUT_STATUSES,
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
    """``<run_dir>/predictions/<system>.jsonl``. System names may not contain path separators."""
    if not system_name or "/" in system_name or "\\" in system_name or system_name.startswith("."):
        raise CacheError(f"system name {system_name!r} cannot name a cache file")
    return Path(run_dir) / "predictions" / f"{system_name}.jsonl"


def failures_path(path: str | os.PathLike) -> Path:
    path = Path(path)
    return path.with_name(path.name[: -len(".jsonl")] + ".failures.jsonl" if path.name.endswith(".jsonl")
                          else path.name + ".failures.jsonl")


def _valid(rec) -> bool:
    return (isinstance(rec, dict) and rec.get("schema") == SCHEMA and all(k in rec for k in REQUIRED)
            and isinstance(rec["request_hash"], str) and rec["status"] in MODEL_OUTPUT_STATUSES)


def load_cache(path: str | os.PathLike, system: Optional[str] = None, repair: bool = False) -> dict[str, dict]:
    """The cached records of ``path`` by request hash (first record wins), in file order.

    A torn last line is kept if it is a complete valid record, else ignored; with ``repair`` the file is
    fixed in place (newline added, or truncated to the last complete line). ``system`` (if given) must
    match every record's system. A missing file is an empty cache."""
    try:
        records = read_jsonl(path, _valid, repair=repair, what=f"{SCHEMA} record")
    except JSONLError as err:
        raise CacheError(f"{err} (the cache is corrupt; move the file away to start over)") from None
    out: dict[str, dict] = {}
    for n, rec in records:
        if system is not None and rec["system"] != system:
            raise CacheError(f"{path}: line {n}: field system: record of {rec['system']!r}, expected "
                             f"{system!r} (wrong cache file)")
        out.setdefault(rec["request_hash"], rec)
    return out



def append_record(path: str | os.PathLike, record: dict) -> None:
    """Append one record as one line (one write), then flush and fsync. NaN is refused."""
    append_jsonl(path, record)


@contextmanager
def _locked(path: Path):
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


def make_record(system: System, item: Item, key: str, out: RawOutput,
                prompt_version: Optional[str] = None) -> dict:
    """The cache record of one answer (see module doc). Errors are scrubbed by the system."""
    from inkground_lib import __version__

    scrub = getattr(system, "scrub", lambda s: s)
    return {
        "schema": SCHEMA, "schema_version": SCHEMA_VERSION,
        "request_hash": key, "word_id": item.word_id, "page_id": item.page_id,
        "system": system.name, "adapter": getattr(system, "adapter", None), "model": getattr(system, "model", None),
        "served_model": out.served_model,
        "raw_text": out.text,
        "strokes": None if out.strokes is None else ink_to_lists(out.strokes),
        "status": out.status, "finish_reason": out.finish_reason, "usage": out.usage or {},
        "error": scrub(out.error) if out.error else None,
        "attempts": int(out.attempts), "latency_s": round(float(out.latency), 4),
        "timestamp": _now(), "prompt_version": _prompt_version(item, out, prompt_version),
        "library_version": __version__,
    }


def _ask(system: System, item: Item) -> RawOutput:
    try:
        return system.predict(item)
    except Exception as e:  # a local system's failure, or a bug: an error, never an output
        scrub = getattr(system, "scrub", lambda s: s)
        return RawOutput(status="error", error=scrub(f"{type(e).__name__}: {e}")[:800], attempts=0)


def run_predictions(system: System, items: Sequence[Item], cache_path: str | os.PathLike,
                    concurrency: Optional[int] = None, progress: bool = True,
                    prompt_version: Optional[str] = None) -> list[dict]:
    """Answer every item with ``system``, resuming from ``cache_path``; return one record per item, in item
    order.

    Items whose request hash already has a record are not asked again; items sharing a hash are asked
    once. The rest are asked by a pool of ``concurrency`` threads (default: the system's ``concurrency``);
    each answer is appended to the cache as soon as it arrives (model outputs) or to the failures log
    (status "error"). A tqdm bar shows progress unless ``progress`` is False. A failed item's record in
    the returned list has status "error" and is not in the cache."""
    from tqdm.auto import tqdm

    path = Path(cache_path)
    items = list(items)
    keys = [system.request_key(it) for it in tqdm(items, desc=f"hash requests {system.name}", unit="req",
                                                  disable=not progress or len(items) < 50, leave=False)]
    workers = max(int(concurrency or getattr(system, "concurrency", 1) or 1), 1)
    with _locked(path):
        cached = load_cache(path, system=system.name, repair=True)
        todo: dict[str, Item] = {}
        for it, k in zip(items, keys):
            if k not in cached and k not in todo:
                todo[k] = it
        results: dict[str, dict] = dict(cached)
        n_keys = len(set(keys))
        bar = tqdm(total=n_keys, initial=n_keys - len(todo), desc=f"predict {system.name}", unit="req",
                   disable=not progress)
        fail_path = failures_path(path)
        pool = ThreadPoolExecutor(max_workers=workers)
        interrupted = True
        try:
            pending = {pool.submit(_ask, system, it): (k, it) for k, it in todo.items()}
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    k, it = pending.pop(fut)
                    out = fut.result()
                    rec = make_record(system, it, k, out, prompt_version)
                    # written by this (main) thread only, one record at a time
                    append_record(path if out.is_model_output else fail_path, rec)
                    results[k] = rec
                    bar.update(1)
            interrupted = False
        finally:
            # on Ctrl-C / an error: drop queued requests and do not wait for the ones in flight (their
            # answers are lost and asked again on the next run; everything already written stays)
            pool.shutdown(wait=not interrupted, cancel_futures=True)
            bar.close()
    out = []
    for it, k in zip(items, keys):
        rec = dict(results[k])
        if rec["word_id"] != it.word_id or rec.get("page_id") != it.page_id:
            # the same request (same hash) for another word: share the answer, name this word
            rec["word_id"], rec["page_id"] = it.word_id, it.page_id
        out.append(rec)
    return out


def stable_view(records: Iterable[dict]) -> list[dict]:
    """Records without the fields that legitimately differ between equivalent runs (timestamp, latency,
    attempts): what must be identical after a kill and resume."""
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in records]
