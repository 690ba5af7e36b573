"""The stages of ``make book`` and ``inkground run``: each shows its progress while it runs
(:mod:`inkground_lib.publish.progress_relay`) and ends with one line of wall and CPU time,

    [inkground] section 02: 360.6 s (CPU 650.2 s)

which ``benchmarks/bench_book.py`` reads. CPU time is that of the whole process tree (this process and every
process under it: a notebook's kernel, its worker processes, jupyter-book), user plus system.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass

from inkground_lib.publish.progress_relay import PREFIX, relayed


def tree_cpu_seconds() -> float:
    """CPU seconds (user + system) used so far by this process and every process under it: its own, those of
    the children it has waited for (and theirs), and those of the processes still running under it (and of the
    children they waited for). The difference between two calls is the CPU time of the tree in between, a child
    that ended in between included; only a process whose parent ended without waiting for it is lost."""
    import psutil

    me = psutil.Process()
    t = me.cpu_times()
    total = t.user + t.system + t.children_user + t.children_system
    for p in me.children(recursive=True):
        try:
            c = p.cpu_times()
        except psutil.Error:  # ended between the listing and the reading: counted once its parent waits for it
            continue
        total += c.user + c.system + c.children_user + c.children_system
    return total


@dataclass(frozen=True)
class Stage:
    name: str
    seconds: float  # wall
    cpu_seconds: float  # the whole process tree (tree_cpu_seconds)


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
        t, cpu = time.perf_counter(), tree_cpu_seconds()
        finished = False
        try:
            with relayed(name):
                yield
            finished = True
        finally:
            wall = time.perf_counter() - t
            if finished:
                self.stages.append(Stage(name, wall, tree_cpu_seconds() - cpu))
                print(stage_line(name, wall, self.stages[-1].cpu_seconds), flush=True)
            else:
                print(f"{PREFIX} {name}: stopped after {wall:.1f} s", flush=True)

    def total_line(self) -> str:
        return stage_line("total", sum(s.seconds for s in self.stages), sum(s.cpu_seconds for s in self.stages))
