"""Derenderer answers on word crops, made once and reused by content: the trace store.

What decides a derenderer's answer on a word is its crop's pixels, its own configuration (settings, code and, for
a learned model, weights) and, when it reads it, the text it is given. A *key* is a sha256 over exactly those
(:func:`crop_digest` for the pixels), so two calls with equal keys are the same computation and the second one
reads the first one's answer. Two kinds of entries:

* ``strokes``: strokes in crop pixels (x, y; y down), e.g. the skeleton derenderer's trace (its key: the crop,
  the skeleton's settings and code; :meth:`~inkground_lib.components.derenderers.skeleton.SkeletonDerenderer.
  trace_key`). The points are stored exactly (float64, little-endian, base64), so an answer read back gives the
  same page ink, to the last bit, as the answer made now.
* ``arrangement``: the tracer network's order and direction of another entry's strokes (``of``: that entry's
  key; the key adds the weights, the code, the text mode and the text given:
  :meth:`~inkground_lib.components.derenderers.tracer.derenderer.TracerDerenderer.arrangement_key`).

The tracer reuses the skeleton's trace of a crop whichever of the two ran first, and each derenderer derives its
page-pixel ink from the entries (:func:`~inkground_lib.components.derenderers.skeleton.page_ink`). Every entry
records ``seconds``, the time it took to make: a derenderer's cost per word stays measurable when its answer was
read rather than made (:attr:`TraceStore.reused_seconds`).

On disk (``traces.jsonl`` of a pseudo-label run, :func:`inkground_lib.core.run_files.traces_jsonl`) a store is an
append-only JSONL log, one line per page derendered (:data:`~inkground_lib.core.run_files.TRACES_SCHEMA`,
``photo``: the sha256 of the page photo's file, ``entries``: the entries made there), resumable as every log of
inkground (a torn last line is dropped). Only the lines' offsets and keys are held in memory; a line is parsed
again when one of its entries is asked for (the paper-scale store is hundreds of MB). Equal keys anywhere in the
file are the same answer; the first one is read.

A run's store reads on in the same store of the earlier runs of its folder (:func:`run_store`,
:func:`~inkground_lib.core.earlier_runs.earlier_files`: the book's run, then every rerun's), only reading them:
an answer found there is not copied (a store is hundreds of MB at the paper's scale, and the derender logs built
from it hold their inks already); what the run makes is appended to its own store.
"""

from __future__ import annotations

import base64
import collections
import json
import os
import threading
from pathlib import Path
from typing import Iterable, Optional, Sequence

import numpy as np

from inkground_lib.components.derenderers.base import DerenderError
from inkground_lib.core.files import JSONLError, append_jsonl, iter_jsonl_at, sha256_array
from inkground_lib.core.run_files import TRACES_SCHEMA

KINDS = ("strokes", "arrangement")


def crop_digest(gray: np.ndarray) -> str:
    """sha256 of a word crop's pixels: its shape, dtype and bytes (C order), as
    :func:`~inkground_lib.core.files.sha256_array` digests every array. Equal digests, equal crops."""
    return sha256_array(gray)


def strokes_entry(key: str, strokes: Sequence[np.ndarray], seconds: float) -> dict:
    """A ``strokes`` entry: each stroke's (x, y) points as float64 (stored exactly) and its length."""
    pts = [np.asarray(s, np.float64)[:, :2] for s in strokes]
    xy = np.concatenate(pts) if pts else np.zeros((0, 2))
    return {"key": key, "kind": "strokes", "lengths": [len(p) for p in pts],
            "xy": base64.b64encode(np.ascontiguousarray(xy, "<f8").tobytes()).decode("ascii"),
            "seconds": round(float(seconds), 6)}


def entry_strokes(entry: dict) -> list[np.ndarray]:
    """The strokes of a ``strokes`` entry, as (n, 2) float64 arrays (the values stored, bit for bit)."""
    xy = np.frombuffer(base64.b64decode(entry["xy"]), "<f8").astype(np.float64).reshape(-1, 2)
    cut = np.cumsum(entry["lengths"])[:-1]
    return [s.copy() for s in np.split(xy, cut)] if entry["lengths"] else []


def arrangement_entry(key: str, of: str, order, reverse, seconds: float) -> dict:
    """An ``arrangement`` entry: the strokes of entry ``of`` taken in ``order``, each reversed where ``reverse``
    (indexed by the original stroke)."""
    return {"key": key, "kind": "arrangement", "of": of, "order": [int(i) for i in order],
            "reverse": [int(bool(r)) for r in reverse], "seconds": round(float(seconds), 6)}


def _valid_entry(e) -> bool:
    if not isinstance(e, dict) or not isinstance(e.get("key"), str) or e.get("kind") not in KINDS:
        return False
    if not isinstance(e.get("seconds"), (int, float)):
        return False
    if e["kind"] == "strokes":
        return isinstance(e.get("lengths"), list) and isinstance(e.get("xy"), str)
    return isinstance(e.get("of"), str) and isinstance(e.get("order"), list) and isinstance(e.get("reverse"), list)


def _valid_record(rec) -> bool:
    return (isinstance(rec, dict) and rec.get("schema") == TRACES_SCHEMA and isinstance(rec.get("photo"), str)
            and isinstance(rec.get("entries"), list) and all(_valid_entry(e) for e in rec["entries"]))


class TraceStore:
    """Entries by key (see the module doc): those made in this process (``path`` None) or read from and
    appended to the log at ``path`` (created at the first :meth:`append`). Lookups count what they found
    (:attr:`hits`, by kind) and the seconds the found entries took to make (:attr:`reused_seconds`); :meth:`put`
    counts what was made (:attr:`made`) and keeps the entry in :attr:`new` until :meth:`take_new`.

    ``max_entries`` bounds the entries held in memory (the oldest made here are forgotten first; the log's are
    read from the file). DerenderError names the file and line of a corrupt log.

    ``readonly``: the log is only read (another run's: never repaired, never appended to); ``earlier``: stores
    whose entries are found too (after this one's) and sent with :meth:`for_photo`, never written
    (:func:`run_store`)."""

    def __init__(self, path: str | os.PathLike | None = None, entries: Iterable[dict] = (),
                 max_entries: Optional[int] = None, readonly: bool = False, earlier: Sequence["TraceStore"] = ()):
        self.path = Path(path) if path is not None else None
        self.max_entries = max_entries
        self.readonly = bool(readonly)
        self.earlier = list(earlier)
        self._mem: collections.OrderedDict[str, dict] = collections.OrderedDict()
        self._offset: dict[str, int] = {}          # key -> offset of its line in the log
        self._photo_lines: dict[str, list[int]] = {}  # photo sha256 -> offsets of its lines
        self._line_cache: collections.OrderedDict[int, dict] = collections.OrderedDict()
        self._lock = threading.Lock()
        self.new: list[dict] = []
        self.hits: collections.Counter = collections.Counter()
        self.made: collections.Counter = collections.Counter()
        self.reused_seconds = 0.0
        self.opened_size = 0  # bytes of the log when it was read
        if self.path is not None:
            self._index()
            self.opened_size = self.path.stat().st_size if self.path.is_file() else 0
        for e in entries:
            self._remember(e)

    # ------------------------------------------------------------------------------------------ reading
    def _index(self) -> None:
        """One pass over the log: each line's offset, photo and keys (a torn last line, from a run killed while
        writing it, is cut off when it is not a valid record and given its newline when it is)."""
        try:
            for _, pos, rec in iter_jsonl_at(self.path, _valid_record, repair=not self.readonly,
                                             what=f"{TRACES_SCHEMA} record"):
                self._photo_lines.setdefault(rec["photo"], []).append(pos)
                for e in rec["entries"]:
                    self._offset.setdefault(e["key"], pos)
        except JSONLError as err:
            raise DerenderError(f"{err}; the trace store is corrupt (delete it to recompute)") from None

    def _line(self, pos: int) -> dict:
        rec = self._line_cache.get(pos)
        if rec is None:
            with open(self.path, "rb") as f:
                f.seek(pos)
                rec = json.loads(f.readline())
            self._line_cache[pos] = rec
            while len(self._line_cache) > 8:
                self._line_cache.popitem(last=False)
        else:
            self._line_cache.move_to_end(pos)
        return rec

    def _find(self, key: str) -> Optional[dict]:
        e = self._mem.get(key)
        if e is not None:
            return e
        pos = self._offset.get(key)
        if pos is None:
            for other in self.earlier:
                with other._lock:
                    e = other._find(key)
                if e is not None:
                    return e
            return None
        return next(x for x in self._line(pos)["entries"] if x["key"] == key)

    def __contains__(self, key: str) -> bool:
        return key in self._mem or key in self._offset or any(key in other for other in self.earlier)

    def __len__(self) -> int:
        """The entries of this store (not of its earlier ones)."""
        return len(set(self._mem) | set(self._offset))

    def get(self, key: str) -> Optional[dict]:
        """The entry of ``key``, or None; a found entry counts in :attr:`hits` and :attr:`reused_seconds`."""
        with self._lock:
            e = self._find(key)
            if e is not None:
                self.hits[e["kind"]] += 1
                self.reused_seconds += float(e["seconds"])
            return e

    def for_photo(self, photo: str) -> list[dict]:
        """The entries of the log's lines made on the page photo whose file has sha256 ``photo``, then those of
        the earlier stores (what a worker derendering that page may need: it still looks each word up by its
        key)."""
        with self._lock:
            out, seen = [], set()
            for pos in self._photo_lines.get(photo, ()):
                for e in self._line(pos)["entries"]:
                    if e["key"] not in seen:
                        seen.add(e["key"])
                        out.append(e)
        for other in self.earlier:
            for e in other.for_photo(photo):
                if e["key"] not in seen:
                    seen.add(e["key"])
                    out.append(e)
        return out

    # ------------------------------------------------------------------------------------------ writing
    def _remember(self, e: dict) -> None:
        self._mem[e["key"]] = e
        self._mem.move_to_end(e["key"])
        if self.max_entries is not None:
            while len(self._mem) > self.max_entries:
                self._mem.popitem(last=False)

    def put(self, entry: dict) -> None:
        """Keep an entry made here (counted in :attr:`made`, listed in :attr:`new`)."""
        if not _valid_entry(entry):
            raise DerenderError(f"trace store: not a valid entry: {str(entry)[:200]}")
        with self._lock:
            self._remember(entry)
            self.new.append(entry)
            self.made[entry["kind"]] += 1

    def take_new(self) -> list[dict]:
        """The entries made since the last call (and forget that they were new)."""
        with self._lock:
            out, self.new = self.new, []
            return out

    def append(self, entries: Sequence[dict], photo: str) -> None:
        """Write ``entries`` (made on the page photo of file sha256 ``photo``) as one line of the log, and keep
        them findable; entries whose key the store already holds are left out. Nothing written when none is
        new, or the store has no ``path``; DerenderError for a read-only store."""
        if self.readonly:
            raise DerenderError(f"trace store {self.path}: opened read-only (another run's store), not appended to")
        with self._lock:
            fresh, seen = [], set()
            for e in entries:
                if not _valid_entry(e):
                    raise DerenderError(f"trace store: not a valid entry: {str(e)[:200]}")
                if e["key"] in self._offset or e["key"] in seen:
                    continue
                seen.add(e["key"])
                fresh.append(e)
            for e in fresh:
                self._remember(e)
            if not fresh or self.path is None:
                return
            pos = self.path.stat().st_size if self.path.is_file() else 0
            append_jsonl(self.path, {"schema": TRACES_SCHEMA, "photo": photo, "entries": fresh})
            self._photo_lines.setdefault(photo, []).append(pos)
            for e in fresh:
                self._offset[e["key"]] = pos
                self._mem.pop(e["key"], None)  # now read from the file when asked for


_PROCESS: dict[str, TraceStore] = {}
_PROCESS_LOCK = threading.Lock()

PROCESS_MAX_ENTRIES = 20_000
"""Entries a process keeps of those it made without a log (section 03's systems), ~2 KB each."""


def process_store() -> TraceStore:
    """The entries this process made without a log (section 03's skeleton and tracer systems share them: the
    tracer reads the skeleton's trace of a crop the skeleton system traced), at most
    :data:`PROCESS_MAX_ENTRIES`."""
    with _PROCESS_LOCK:
        if "" not in _PROCESS:
            _PROCESS[""] = TraceStore(max_entries=PROCESS_MAX_ENTRIES)
        return _PROCESS[""]


def opened_store(path: str | os.PathLike) -> Optional[TraceStore]:
    """The log at ``path`` opened once in this process, read-only (None when there is no such file); opened
    again when the file grew since."""
    p = Path(path).resolve()
    try:
        size = p.stat().st_size
    except FileNotFoundError:
        return None
    with _PROCESS_LOCK:
        st = _PROCESS.get(str(p))
        if st is None or st.opened_size != size:
            st = _PROCESS[str(p)] = TraceStore(p, readonly=True)
        return st


def earlier_stores(path: str | os.PathLike) -> list[TraceStore]:
    """The trace stores at the place of ``path`` in the earlier runs of its run folder
    (:func:`~inkground_lib.core.earlier_runs.earlier_files`: the book's run, then every rerun's), opened
    read-only (:func:`opened_store`)."""
    from inkground_lib.core.earlier_runs import earlier_files

    return [st for st in (opened_store(p) for p in earlier_files(path)) if st is not None]


def run_store(path: str | os.PathLike) -> TraceStore:
    """A run's trace store at ``path`` (appended to), reading on in the earlier runs' stores
    (:func:`earlier_stores`; see the module doc)."""
    return TraceStore(path, earlier=earlier_stores(path))


class StoreChain:
    """Lookups in several stores in turn (the first that holds a key answers); :meth:`put` goes to the first.
    Section 03's systems chain the process's own store with the log of the pseudo-label run that made the
    benchmark."""

    def __init__(self, stores: Sequence[TraceStore]):
        self.stores = list(stores)

    def get(self, key: str) -> Optional[dict]:
        for st in self.stores:
            e = st.get(key)
            if e is not None:
                return e
        return None

    def put(self, entry: dict) -> None:
        self.stores[0].put(entry)
