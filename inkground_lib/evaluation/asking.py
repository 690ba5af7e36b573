"""Asking a system about every word of a run, page by page: what the cache holds is not asked again, each
answer is written as it arrives, and every stop (a spending cap, a spent quota, deadlines missed in a row,
Ctrl-C) comes within seconds of its cause and keeps what was answered.

The store itself (records, their file, its lock) is :mod:`~inkground_lib.evaluation.cache`.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Optional, Sequence

from inkground_lib.core.dataset import DatasetError
from inkground_lib.core.files import append_jsonl_many
from inkground_lib.core.progress import bar as progress_bar
from inkground_lib.evaluation.cache import (
    EarlierCaches,
    append_record,
    check_cache_file,
    failures_path,
    load_cache,
    locked,
    make_record,
    recent_request_starts,
)
from inkground_lib.evaluation.systems.base import (
    MODEL_OUTPUT_STATUSES,
    RETRIED_ON_REQUEST,
    Item,
    RawOutput,
    System,
    prepare,
)

GRACE_SECONDS = 5.0
"""After Ctrl-C, how long answers already in flight are awaited (and kept) before the run stops."""


CLOSE_WAIT_SECONDS = 2.0  # after Ctrl-C, how long closing a system's clients may hold up the exit

AHEAD = 2
"""Requests submitted but not answered, per thread of the system: the run prepares the next page's requests
while these are in flight, and a stop finds at most this many per thread still to cancel."""

NOT_SENT = "not sent: over the spending cap (--max-requests / --max-cost)"
"""The ``error`` of a word a spending cap left unsent (status "not_sent", never written to a file)."""


def ask(system: System, item: Item) -> RawOutput:
    """``system``'s output for ``item``; a failure of the system is an output with status "error". A fault of
    the input (a page photo that cannot be read: DatasetError) is raised, never recorded as the system's
    error: it would be scored against the system."""
    try:
        return system.predict(item)
    except DatasetError:
        raise
    except Exception as e:  # a local system's failure, or a bug: an error, never an output
        scrub = getattr(system, "scrub", lambda s: s)
        return RawOutput(status="error", error=scrub(f"{type(e).__name__}: {e}")[:800], attempts=0)


class PredictionInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run_predictions`, after the grace period: ``summary`` says what was kept."""

    def __init__(self, summary: str, counts: dict):
        super().__init__(summary)
        self.summary = summary
        self.counts = counts


class QuotaExhausted(PredictionInterrupted):
    """A provider's quota is spent (its quota error, or a 429 asking for a wait longer than the retry budget,
    or the registry's daily pace ``rpd``): the system sent nothing more, the answers are kept, and the run
    ends as for Ctrl-C (the command exits 130); ``summary`` says what was exhausted, how many words are
    done and that a rerun resumes."""


class DeadlinesMissed(PredictionInterrupted):
    """``max_deadline_failures`` requests in a row got no complete answer within the system's deadline (a server
    that trickles or never answers): the run stops as on a spent quota (:class:`QuotaExhausted`)."""


def run_predictions(system: System, items: Sequence[Item], cache_path: str | os.PathLike,
                    concurrency: Optional[int] = None, progress: bool = True,
                    prompt_version: Optional[str] = None, retry_refusals: bool = False,
                    grace: float = GRACE_SECONDS, cap=None) -> list[dict]:
    """Answer every item with ``system``, resuming from ``cache_path``; return one record per item, in item
    order.

    Items are prepared in order (an API system's request keyed from each page's image, made once:
    :meth:`~inkground_lib.evaluation.systems.api.ApiSystem.prepare`) and asked as soon as they are, so the first
    request leaves after the first page. Items whose request hash already has a record (in the cache, or in the
    system's cache of an earlier run, copied into this one: :class:`~inkground_lib.evaluation.cache.
    EarlierCaches`) are not asked again (with
    ``retry_refusals``, those whose record is a refusal or an empty answer are); items sharing a hash are asked
    once. The rest are asked by a pool of ``concurrency`` threads (default: the system's ``concurrency``), at
    most :data:`AHEAD` per thread waiting; each answer is appended to the cache as soon as it arrives (model
    outputs) or to the failures log (status "error"). A bar shows the words done unless ``progress`` is False. A
    failed item's record in the returned list has status "error" and is not in the cache.

    ``cap``: a spending cap (:class:`~inkground_lib.evaluation.plan.SpendingCap`) that admits requests in the
    order they would be sent; the words it leaves unsent get an unsaved record with status "not_sent" (no key
    is computed for them when the cache is empty: nothing could answer them).

    A spent quota (:class:`QuotaExhausted`) or ``max_deadline_failures`` missed deadlines in a row
    (:class:`DeadlinesMissed`) stops the run at once, as Ctrl-C does: no new request or retry is started
    (``system.interrupt()``); answers that arrive within ``grace`` seconds are written as usual; requests still
    in flight then are logged with status "interrupted" in the failures log; the system's clients are closed
    and :class:`PredictionInterrupted` (a KeyboardInterrupt) is raised with a one-line summary."""
    items = list(items)
    run = _Run(system, Path(cache_path), items, concurrency, progress, prompt_version)
    with locked(run.path):
        for p in (run.path, run.fail_path):
            check_cache_file(p)
        cached = load_cache(run.path, system=system.name, repair=True)
        earlier = EarlierCaches(run.path, system.name)  # the book's run's and earlier reruns' answers
        run.start(cached)
        try:
            for i, it in enumerate(items):
                if run.stopped():
                    break
                if cap is not None and cap.closed and not cached:
                    run.refuse(i, it, None)  # nothing can answer it: no key needed
                    continue
                p = prepare(system, it)
                k = run.keys[i] = p.key
                if k in run.waiting:  # the same request is in flight: it answers this word too
                    run.waiting[k] += 1
                    continue
                rec = cached.get(k)
                if rec is None and k not in run.decided:
                    rec = earlier.take(k)  # copied into this run's cache (at the latest when the run ends)
                    if rec is not None:
                        cached[k] = run.results[k] = rec
                again = retry_refusals and rec is not None and rec["status"] in RETRIED_ON_REQUEST
                if k in run.decided or (rec is not None and not again):
                    run.bar.update(1)
                    continue
                if cap is not None and not cap.admit(system, p):
                    run.refuse(i, it, k)
                    continue
                run.send(k, p.item)
            run.drain()
            if run.stopped():
                raise run.stop_error(grace)
        except PredictionInterrupted:
            raise
        except KeyboardInterrupt:
            run.interrupted = True
            raise PredictionInterrupted(run.interrupt(grace), dict(run.counts)) from None
        finally:
            earlier.flush()
            run.close()
    return run.records(items)


LOCAL_RECORDS_PER_WRITE = 256
"""A local system's prediction records are appended in groups of this many (one write and one fsync, ~3-9 ms
each here: per record they took 38 of section 03's seconds); an API system's are appended one by one."""


class _Run:
    """The state of one :func:`run_predictions`: the records by key, the requests in flight, the counts."""

    def __init__(self, system, path: Path, items: list, concurrency, progress: bool, prompt_version):
        self.system, self.path, self.fail_path = system, path, failures_path(path)
        self.prompt_version = prompt_version
        self.workers = max(int(concurrency or getattr(system, "concurrency", 1) or 1), 1)
        self.keys: list = [None] * len(items)
        self.results: dict[str, dict] = {}
        self.waiting: dict[str, int] = {}  # key in flight -> words waiting for its answer
        self.decided: set = set()  # keys answered, failed or refused in this run
        self.counts: dict[str, int] = {}
        self.pending: dict = {}
        self.unwritten: dict[Path, list] = {}  # a local system's records waiting for their write (flush)
        self.pool: Optional[ThreadPoolExecutor] = None
        self.interrupted = False
        self.paced = False
        self.bar = progress_bar(total=len(items), desc=f"predict {system.name}", unit="word", enabled=progress)

    def start(self, cached: dict) -> None:
        self.results = dict(cached)
        self.pool = ThreadPoolExecutor(max_workers=self.workers)

    def stopped(self) -> bool:
        return bool(getattr(self.system, "exhausted", None))

    def write(self, k: str, it: Item, out: RawOutput) -> None:
        rec = make_record(self.system, it, k, out, self.prompt_version)
        # written by this (main) thread only: an API system's answer at once (one write and fsync each: paid for),
        # a local system's in groups of LOCAL_RECORDS_PER_WRITE (answered again in milliseconds if lost)
        path = self.path if out.is_model_output else self.fail_path
        if self.system.kind == "api":
            append_record(path, rec)
        else:
            self.unwritten.setdefault(path, []).append(rec)
            if len(self.unwritten[path]) >= LOCAL_RECORDS_PER_WRITE:
                self.flush()
        self.results[k] = rec
        self.decided.add(k)
        self.counts[out.status] = self.counts.get(out.status, 0) + 1
        self.bar.update(self.waiting.pop(k, 1))

    def refuse(self, i: int, it: Item, k: Optional[str]) -> None:
        """A word the spending cap leaves unsent."""
        rec = make_record(self.system, it, k, RawOutput(status="not_sent", attempts=0, error=NOT_SENT),
                          self.prompt_version)
        if k is not None:
            self.results[k] = rec
            self.decided.add(k)
        else:
            self.results[("not sent", i)] = rec
            self.keys[i] = ("not sent", i)
        self.bar.update(1)

    def collect(self, block: bool) -> None:
        """Write the answers that have arrived (``block``: wait for one first)."""
        if not self.pending:
            return
        done, _ = wait(self.pending, timeout=None if block else 0, return_when=FIRST_COMPLETED)
        for fut in done:
            k, it = self.pending.pop(fut)
            self.write(k, it, fut.result())

    def send(self, k: str, it: Item) -> None:
        if not self.paced and getattr(self.system, "rpd", None) and callable(getattr(self.system, "seed_pace", None)):
            self.system.seed_pace(recent_request_starts(self.path))  # the daily pace counts earlier runs too
        self.paced = True
        while len(self.pending) >= AHEAD * self.workers and not self.stopped():
            self.collect(block=True)
        if self.stopped():
            return
        self.waiting[k] = 1
        # one future at a time into ``pending``: a Ctrl-C while submitting (the first requests already in flight
        # on a busy machine) still finds every submitted request there, so none is waited for at exit
        self.pending[self.pool.submit(ask, self.system, it)] = (k, it)
        self.collect(block=False)

    def drain(self) -> None:
        while self.pending and not self.stopped():
            self.collect(block=True)

    def stop_error(self, grace: float) -> PredictionInterrupted:
        """The exception of a run the system stopped (a spent quota, deadlines missed), after the grace."""
        system = self.system
        in_grace, n_flight, _ = _stop(system, self.pending, self.write, grace, self.counts)
        answered = sum(1 for k in self.keys if self.results.get(k, {}).get("status") in MODEL_OUTPUT_STATUSES)
        deadlines = getattr(system, "exhausted_by", None) == "deadlines"
        when = "the server answers in time" if deadlines else "the quota is back"
        summary = (f"{system.name}: stopped sending: {system.exhausted}. {answered} of {len(self.keys)} words are "
                   f"answered and cached ({_by_status(self.counts)} this run; {self.unsent()} not sent, {n_flight} in "
                   f"flight logged as interrupted); rerun when {when} to resume (nothing is asked twice)")
        return (DeadlinesMissed if deadlines else QuotaExhausted)(summary, dict(self.counts))

    def interrupt(self, grace: float) -> str:
        """Ctrl-C: stop the system, keep what arrives within ``grace`` seconds, log the rest of the requests in
        flight as interrupted; the summary line."""
        in_grace, n_flight, _ = _stop(self.system, self.pending, self.write, grace, self.counts)
        return (f"{self.system.name}: interrupted; this run: {_by_status(self.counts)} ({in_grace} answered during "
                f"the {grace:g} s grace, {n_flight} in flight logged as interrupted, {self.unsent()} not sent); "
                f"answers are kept, rerun to resume")

    def unsent(self) -> int:
        """Words nothing was sent for in this run and nothing answers (after a stop): left by a spending cap,
        cancelled before they started, or not reached."""
        return sum(1 for k in self.keys if k is None or self.results.get(k, {}).get("status") in (None, "not_sent"))

    def flush(self) -> None:
        """Append the local system's records not yet written (one write and fsync per file)."""
        for path, recs in self.unwritten.items():
            append_jsonl_many(path, recs)
        self.unwritten = {}

    def close(self) -> None:
        self.flush()
        if self.pool is not None:
            # never wait here for requests still running (after Ctrl-C their threads end on their own)
            self.pool.shutdown(wait=not (self.pending or self.interrupted), cancel_futures=True)
        self.bar.close()
        if self.pending:
            # closing the clients aborts requests still in flight; it must not itself wait for them, so it
            # runs in a daemon thread that Ctrl-C's exit does not wait for beyond CLOSE_WAIT_SECONDS
            closer = threading.Thread(target=getattr(self.system, "close", lambda: None), daemon=True)
            closer.start()
            closer.join(CLOSE_WAIT_SECONDS)

    def records(self, items: list) -> list[dict]:
        out = []
        for it, k in zip(items, self.keys):
            rec = dict(self.results[k])
            if rec["word_id"] != it.word_id or rec.get("page_id") != it.page_id:
                # the same request (same hash) for another word: share the answer, name this word
                rec["word_id"], rec["page_id"] = it.word_id, it.page_id
            out.append(rec)
        return out


def _by_status(counts: dict) -> str:
    return ", ".join(f"{st} {n}" for st, n in sorted(counts.items())) or "nothing"


def _stop(system: System, pending: dict, write, grace: float, counts: dict) -> tuple[int, int, int]:
    """Stop the system (no new request or retry), keep what arrives within ``grace`` seconds, log the rest
    of the requests in flight as interrupted; return (answered during the grace, logged as interrupted, not
    sent)."""
    getattr(system, "interrupt", lambda: None)()
    not_sent = sum(1 for f in list(pending) if f.cancel())
    for f in [f for f in pending if f.cancelled()]:
        pending.pop(f)
    answered_before = sum(counts.values())
    deadline = time.monotonic() + max(float(grace), 0.0)
    while pending and time.monotonic() < deadline:
        done, _ = wait(pending, timeout=max(deadline - time.monotonic(), 0.0), return_when=FIRST_COMPLETED)
        for fut in done:
            k, it = pending.pop(fut)
            write(k, it, fut.result())
    in_grace = sum(counts.values()) - answered_before
    n_flight = len(pending)
    for fut in list(pending):
        k, it = pending[fut]
        write(k, it, RawOutput(status="interrupted", attempts=0,
                               error=f"interrupted: no answer within {grace:g} s of the stop"))
    return in_grace, n_flight, not_sent
