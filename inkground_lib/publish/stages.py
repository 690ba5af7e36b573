"""The stages of ``make book`` and ``inkground run``: each shows its progress while it runs
(:mod:`inkground_lib.publish.progress_relay`) and ends with one line of wall and CPU time,

    [inkground] section 02: 360.6 s (CPU 650.2 s)

which ``benchmarks/bench_book.py`` reads. CPU time is that of the whole process tree (this process and every
process under it: a notebook's kernel, its worker processes, jupyter-book), user plus system, followed while
the stage runs (:class:`TreeCPU`).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass

from inkground_lib.publish.progress_relay import PREFIX, relayed


POLL_SECONDS = 0.25
"""How often :class:`TreeCPU` reads the CPU time of every process under this one."""


class TreeCPU:
    """The CPU seconds (user + system) of this process and of every process that ran under it - children,
    grandchildren, ... - between :meth:`start` and :meth:`stop` (:attr:`seconds`), however they ended.

    A thread reads each descendant's own CPU time every :data:`POLL_SECONDS` (by pid and start time, so a
    reused pid is another process); a process counts with the last value read, so what it used in its last
    poll interval, or a process that lived less than one, is missed. Children's times (``children_user``)
    are not used: a process is counted by its own reading, never twice through the parent that waited for it.
    """

    def __init__(self, interval: float = POLL_SECONDS):
        import psutil

        self._me = psutil.Process()
        self._interval = float(interval)
        self._last: dict[tuple[int, float], float] = {}
        self._base: dict[tuple[int, float], float] = {}
        self._own0 = 0.0
        self._stop = None
        self._thread = None
        self.seconds = 0.0

    def _own(self) -> float:
        t = self._me.cpu_times()
        return t.user + t.system

    def _poll(self) -> None:
        import psutil

        try:
            procs = self._me.children(recursive=True)
        except psutil.Error:
            return
        for p in procs:
            try:
                with p.oneshot():
                    key, t = (p.pid, p.create_time()), p.cpu_times()
            except psutil.Error:  # ended meanwhile: its last reading stands
                continue
            self._last[key] = t.user + t.system

    def start(self) -> "TreeCPU":
        import threading

        self._poll()
        self._base = dict(self._last)  # what the processes already running had used before
        self._own0 = self._own()
        self._stop = threading.Event()

        def loop():
            while not self._stop.wait(self._interval):
                self._poll()

        self._thread = threading.Thread(target=loop, name="inkground-tree-cpu", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> float:
        """Stop following; :attr:`seconds` (returned) is the tree's CPU time since :meth:`start`."""
        self._stop.set()
        self._thread.join()
        self._poll()
        self.seconds = self._own() - self._own0 + sum(v - self._base.get(k, 0.0) for k, v in self._last.items())
        return self.seconds


@dataclass(frozen=True)
class Stage:
    name: str
    seconds: float  # wall
    cpu_seconds: float  # the whole process tree (TreeCPU)


def stage_line(name: str, seconds: float, cpu_seconds: float) -> str:
    return f"{PREFIX} {name}: {seconds:.1f} s (CPU {cpu_seconds:.1f} s)"


class Timer:
    """Runs named stages (``with timer("section 02"): ...``): the progress of each is shown while it runs, and
    its wall and CPU time printed when it ends (``stages`` keeps them); a stage stopped by an error or Ctrl-C
    prints that it stopped, and is not kept."""

    def __init__(self):
        self.stages: list[Stage] = []

    @contextmanager
    def __call__(self, name: str):
        t, cpu = time.perf_counter(), TreeCPU().start()
        finished = False
        try:
            with relayed(name):
                yield
            finished = True
        finally:
            wall = time.perf_counter() - t
            cpu.stop()
            if finished:
                self.stages.append(Stage(name, wall, cpu.seconds))
                print(stage_line(name, wall, self.stages[-1].cpu_seconds), flush=True)
            else:
                print(f"{PREFIX} {name}: stopped after {wall:.1f} s", flush=True)

    def total_line(self) -> str:
        return stage_line("total", sum(s.seconds for s in self.stages), sum(s.cpu_seconds for s in self.stages))
