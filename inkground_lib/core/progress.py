"""Progress bars for the stages a user waits on, and the one rule for where they go.

A bar (tqdm's text bar) is written to:

* the progress stream named by the environment variable :data:`PROGRESS_ENV` when it is set: a file that the
  runner of ``inkground run`` / ``make book`` (:mod:`inkground_lib.publish.notebook_runner`) creates before a
  notebook starts and copies to its terminal or log while the notebook runs - so the bars of a section's
  stages reach the user and never the executed notebook;
* else standard error, when the code runs from a terminal or a script;
* nowhere inside a Jupyter kernel without that variable (an executed notebook never holds a bar).

``enabled=False`` turns a bar off wherever it would go (a caller's ``progress=False``). Library code makes its
bars with :func:`bar` only (tqdm's own ``tqdm.auto`` warns in a kernel without ipywidgets; this module never
imports it).

The progress file holds one JSON record a line, appended by any process that inherits the variable (a kernel,
its worker processes): ``{"bar": KEY, "text": LINE}`` each time a bar is drawn (``LINE``: tqdm's text of the
bar, without carriage returns or terminal codes) and ``{"bar": KEY, "done": true, "leave": BOOL, "text": LINE}``
when it closes (``LINE``: its final state; ``leave``: whether the caller wanted it kept on screen). ``KEY`` is
unique to one bar of one process. :mod:`inkground_lib.publish.progress_relay` reads it.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import sys
import threading

PROGRESS_ENV = "INKGROUND_PROGRESS"
"""Environment variable naming the file bars are appended to (set by the notebook runner for its kernel)."""

FILE_MININTERVAL = 2.0
"""Seconds between two updates of a bar written to the progress file (a terminal gets tqdm's default 0.1 s)."""

_lock = threading.Lock()
_streams: dict[str, object] = {}


def in_kernel() -> bool:
    """True inside a Jupyter (IPython) kernel, where standard error is a cell's output."""
    mod = sys.modules.get("IPython")
    if mod is None:
        return False
    try:
        shell = mod.get_ipython()
    except Exception:  # an IPython too old or half-imported: not a kernel we know
        return False
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def progress_stream():
    """Where a bar goes now (see the module doc): an open text file, ``sys.stderr``, or None (no bar)."""
    path = os.environ.get(PROGRESS_ENV)
    if path:
        with _lock:
            f = _streams.get(path)
            if f is None or getattr(f, "closed", True):
                try:
                    f = open(path, "a", encoding="utf-8", buffering=1)  # line-buffered; appends from any process
                except OSError:
                    f = None
                if f is not None:
                    _streams[path] = f
            if f is not None:
                return f
    return None if in_kernel() else sys.stderr


def close_progress_file(path: str) -> None:
    """Close this process's handle on the progress file ``path`` (its runner is done with it)."""
    with _lock:
        f = _streams.pop(str(path), None)
    if f is not None:
        try:
            f.close()
        except OSError:
            pass


def bar(iterable=None, *, total=None, desc: str | None = None, unit: str = "it", enabled: bool = True,
        initial: int = 0, leave: bool = True, **kwargs):
    """A tqdm bar (use it as tqdm: ``update``, ``close``, ``with``, or iterate over it) that follows the module's
    rule; a disabled bar still counts and iterates, it only draws nothing."""
    from tqdm import tqdm

    stream = progress_stream() if enabled else None
    if stream is not None and stream is not sys.stderr:
        kwargs.setdefault("mininterval", FILE_MININTERVAL)
        kwargs.setdefault("ascii", True)
        kwargs.setdefault("dynamic_ncols", False)
        kwargs.setdefault("ncols", 100)
        return _recorded_bar_class()(iterable, total=total, desc=desc, unit=unit, initial=initial, leave=leave,
                                     records=_BarRecords(stream, leave), **kwargs)
    return tqdm(iterable, total=total, desc=desc, unit=unit, initial=initial, leave=leave,
                file=stream if stream is not None else sys.stderr, disable=stream is None, **kwargs)


_TERMINAL_CODES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_keys = itertools.count()


class _BarRecords:
    """The file object a bar in the progress file draws on: each drawing becomes one JSON record (see the
    module doc), written and flushed whole, so records of several processes appending to one file never mix."""

    encoding = "utf-8"

    def __init__(self, stream, leave: bool):
        self.stream, self.leave = stream, bool(leave)
        self.key = f"{os.getpid()}-{next(_keys)}"
        self.finished = False

    def _record(self, **fields) -> None:
        try:
            self.stream.write(json.dumps({"bar": self.key, **fields}) + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # the progress file went away (the runner ended): the work goes on
            pass

    def write(self, s: str) -> None:
        text = _TERMINAL_CODES.sub("", str(s)).replace("\r", "").strip()
        if text and not self.finished:  # tqdm's cursor moves and blanking write nothing
            self._record(text=text)

    def flush(self) -> None:
        pass  # each record is flushed as it is written

    def done(self, text: str) -> None:
        if not self.finished:
            self._record(text=_TERMINAL_CODES.sub("", text).strip(), done=True, leave=self.leave)
            self.finished = True


_recorded_bar = None


def _recorded_bar_class():
    """tqdm with one more record when it closes: its final state, drawn or not (tqdm draws a bar that closes
    with ``leave=False`` as blank, and at most every ``mininterval``)."""
    global _recorded_bar
    if _recorded_bar is None:
        from tqdm import tqdm

        class RecordedBar(tqdm):
            def __init__(self, *args, records: _BarRecords, **kwargs):
                self._records = records
                super().__init__(*args, file=records, **kwargs)

            def close(self):
                final = None if self.disable else self.__str__()
                super().close()
                if final is not None:
                    self._records.done(final)

        _recorded_bar = RecordedBar
    return _recorded_bar
