"""Page-parallel work: map a function over jobs in a process pool (or serially), results in job order.

Workers only compute: they receive a job (page data, a component's name or picklable object) and return
its result; the calling process writes every file (caches, tables), in job order, so a run with N workers
writes byte-identical files to a serial run. Each worker process runs its numeric libraries on one thread
(OpenCV, ONNX Runtime and torch are told so), because the pool already uses every core and spinning
threads starve each other on a shared machine.

``workers=None`` means :func:`default_workers` (the cores this process may use); ``workers=1`` or fewer jobs
than ``min_jobs`` run in the calling process with no pool at all.

One Executor for every page-parallel stage: :func:`executor` yields a local process pool, or, given a
scheduler address, a Dask cluster's executor (``distributed.Client(address).get_executor()``). Dask workers
run the same job functions: they need the same inkground installed and read-only access to the dataset
folders at the same paths (page photos are read by path); they never write a file.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import threading
import time
from collections import deque
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from typing import Callable, Iterator, Optional, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")

_THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def default_workers() -> int:
    """The number of cores this process may run on (``os.sched_getaffinity`` where available)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def check_workers(workers: Optional[int]) -> int:
    """``workers`` as a positive int (None: :func:`default_workers`); ValueError naming the bad value."""
    if workers is None:
        return default_workers()
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers: expected a positive integer or None, got {workers!r}")
    return int(workers)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def _exit_with(driver_pid: int) -> None:
    while _alive(driver_pid):
        time.sleep(1.0)
    os._exit(1)  # the calling process is gone (killed): stop now instead of finishing a job nobody reads


def _worker_init(driver_pid: int | None = None) -> None:
    """Pool worker start-up: one thread for each numeric library (see the module doc), and a watcher that
    ends the worker within a second of the calling process's death (kill -9 included)."""
    for name in _THREAD_ENV:
        os.environ[name] = "1"
    import cv2

    cv2.setNumThreads(1)
    if driver_pid is not None:
        threading.Thread(target=_exit_with, args=(driver_pid,), daemon=True).start()


@contextlib.contextmanager
def process_pool(workers: Optional[int]) -> Iterator[Optional[Executor]]:
    """A process pool of ``workers`` processes (forkserver start, one thread each), or None for 1 worker."""
    n = check_workers(workers)
    if n <= 1:
        yield None
        return
    ctx = mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")
    with ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=_worker_init,
                             initargs=(os.getpid(),)) as ex:
        yield ex


class LazyPool:
    """An Executor-like object whose process pool (:func:`process_pool`) starts at the first ``submit`` (so
    work that turns out to be cached costs no process start-up); with 1 worker, ``submit`` runs the call at
    once and returns a finished future. Use as a context manager: the pool is shut down on exit."""

    def __init__(self, workers: Optional[int] = None):
        self.workers = check_workers(workers)
        self._cm = None
        self._ex: Optional[Executor] = None
        self._lock = threading.Lock()  # threads may submit at once (the Style classifiers' epoch threads)

    @property
    def in_process(self) -> bool:
        """True when ``submit`` runs each call here, at once (1 worker)."""
        return self.workers <= 1

    def submit(self, fn, *args, **kwargs) -> Future:
        if self.workers <= 1:
            fut: Future = Future()
            try:
                fut.set_result(fn(*args, **kwargs))
            except BaseException as e:  # delivered by result(), as a pool would
                fut.set_exception(e)
            return fut
        with self._lock:
            if self._ex is None:
                self._cm = process_pool(self.workers)
                self._ex = self._cm.__enter__()
            return self._ex.submit(fn, *args, **kwargs)

    def __enter__(self) -> "LazyPool":
        return self

    def __exit__(self, *exc) -> None:
        if self._cm is not None:
            self._cm.__exit__(*exc)
            self._cm = self._ex = None


def ordered_map(fn: Callable[[T], R], jobs: Sequence[T], *, workers: Optional[int] = None, min_jobs: int = 4,
                executor: Optional[Executor] = None) -> Iterator[R]:
    """``fn(job)`` for each job, yielded in job order as each becomes ready in order.

    ``executor``: an Executor to use (not shut down here); otherwise a :func:`process_pool` of ``workers``
    is made when there are at least ``min_jobs`` jobs, else the jobs run here one after another. ``fn`` and
    the jobs must be picklable for a pool (module-level functions, plain data). An exception raised by a
    job is raised here, at that job's place in the order.
    """
    jobs = list(jobs)
    if executor is None and (check_workers(workers) <= 1 or len(jobs) < max(1, int(min_jobs))):
        for job in jobs:
            yield fn(job)
        return
    if executor is not None:
        yield from windowed_map(executor, fn, jobs)
        return
    with process_pool(workers) as ex:
        yield from windowed_map(ex, fn, jobs)


def windowed_map(ex: Executor, fn: Callable[[T], R], jobs: Sequence[T], window: Optional[int] = None) -> Iterator[R]:
    """``fn(job)`` for each job on ``ex``, yielded in job order, with at most ``window`` jobs submitted and
    not yet yielded (default :data:`~inkground_lib.core.defaults.JOBS_IN_FLIGHT` per worker): unlike
    ``Executor.map``, which submits every job at once, a cluster's scheduler never holds all 2,984 pages'
    data. Pending jobs are cancelled when the caller stops early or a job fails."""
    from inkground_lib.core.defaults import JOBS_IN_FLIGHT

    if window is None:
        window = JOBS_IN_FLIGHT * max(1, executor_workers(ex))
    pending: deque = deque()
    it = iter(jobs)
    try:
        for job in it:
            pending.append(ex.submit(fn, job))
            if len(pending) >= window:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for f in pending:
            f.cancel()


def executor_workers(ex: Optional[Executor]) -> int:
    """How many jobs ``ex`` runs at once: a process pool's processes (a :class:`LazyPool`'s too), a Dask
    cluster's worker threads, 1 for
    None (serial) or an executor that does not say."""
    if ex is None:
        return 1
    if isinstance(ex, LazyPool):
        return ex.workers
    n = getattr(ex, "_max_workers", None)  # ProcessPoolExecutor / ThreadPoolExecutor
    if n:
        return int(n)
    client = getattr(ex, "_client", None)  # distributed.cfexecutor.ClientExecutor
    if client is not None:
        try:
            return max(1, sum(client.nthreads().values()))
        except Exception:  # noqa: BLE001 - a cluster that cannot say: one at a time is still correct
            return 1
    return 1


@contextlib.contextmanager
def dask_executor(scheduler) -> Iterator[Executor]:
    """A ``concurrent.futures`` Executor on a Dask cluster: ``scheduler`` is an address
    ("tcp://host:8786") or a ``distributed`` cluster object (e.g. ``LocalCluster``).

    Client.get_executor (dask docs, "Source code for distributed.client",
    docs.dask.org/en/latest/_modules/distributed/client.html, checked 2026-11-30, and the installed
    distributed 2026.8.0): "Return a concurrent.futures Executor for submitting tasks on this Client",
    its keywords being "Any submit()- or map()- compatible arguments"; ``pure=False`` (a submit() argument)
    because a job is not to be deduplicated by hashing its (large) page arguments - each job is submitted
    once anyway. Every worker first runs :func:`_worker_init` through
    ``Client.run`` (one thread per numeric library, as in a local pool)."""
    from distributed import Client

    client = Client(scheduler)
    try:
        client.run(_worker_init)
        ex = client.get_executor(pure=False)
        try:
            yield ex
        finally:
            ex.shutdown(wait=False)
    finally:
        client.close()


@contextlib.contextmanager
def executor(workers: Optional[int] = None, scheduler=None) -> Iterator[Optional[Executor]]:
    """The Executor every page-parallel stage of one command shares: a Dask cluster's when ``scheduler`` is
    given (an address or a cluster object, :func:`dask_executor`), else a local :func:`process_pool` of
    ``workers`` processes (None: :func:`default_workers`), or None for one worker (serial, in this
    process). Jobs and results are plain picklable data; only the caller writes files."""
    if scheduler:
        with dask_executor(scheduler) as ex:
            yield ex
        return
    with process_pool(workers) as ex:
        yield ex
