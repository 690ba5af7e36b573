"""Page-parallel work: map a function over jobs in a process pool (or serially), results in job order.

Workers only compute: they receive a job (page data, a component's name or picklable object) and return
its result; the calling process writes every file (caches, tables), in job order, so a run with N workers
writes byte-identical files to a serial run. Each worker process runs its numeric libraries on one thread
(OpenCV, ONNX Runtime and torch are told so), because the pool already uses every core and spinning
threads starve each other on a shared machine.

``workers=None`` means :func:`default_workers` (the cores this process may use); ``workers=1`` or fewer jobs
than ``min_jobs`` run in the calling process with no pool at all.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import threading
import time
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

    def submit(self, fn, *args, **kwargs) -> Future:
        if self.workers <= 1:
            fut: Future = Future()
            try:
                fut.set_result(fn(*args, **kwargs))
            except BaseException as e:  # delivered by result(), as a pool would
                fut.set_exception(e)
            return fut
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
        yield from executor.map(fn, jobs)
        return
    with process_pool(workers) as ex:
        yield from ex.map(fn, jobs)
