"""What a stage is doing while a user waits: the progress bars of the code it runs and, for a notebook, the cell
running, shown on the terminal or written to the log of ``inkground run`` and ``make book``.

:func:`relayed` creates a progress file in a temporary folder (outside the book, the notebooks and every run
folder), names it in ``INKGROUND_PROGRESS`` (:data:`inkground_lib.core.progress.PROGRESS_ENV`) for the code the
stage runs - this process, and a notebook's kernel and its worker processes, which inherit the environment -
and copies the bars drawn there (:mod:`inkground_lib.core.progress` writes them, one JSON record a line) to
standard error from a thread, until the stage ends; the environment is restored afterwards. A kernel started
with the variable draws its bars into that file, never into a cell's output, so an executed notebook holds none.

On a terminal, a status line ("[inkground] section 02: cell 3/17 (run_pseudo_labels), 1:12") and one line per
open bar are redrawn in place; a bar closed with ``leave=True`` stays on screen above them. On a log (standard
error is not a terminal: CI, a file) a bar's line is printed at most every :data:`LOG_INTERVAL` seconds and its
final line when it closes; the running cell (or step) when it changes (at most every :data:`LOG_INTERVAL` seconds,
or once it has run that long); and, when nothing else was printed for :data:`LOG_HEARTBEAT` seconds, what is still running.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from inkground_lib.core.progress import PROGRESS_ENV, close_progress_file

LOG_INTERVAL = 15.0
"""Seconds between two lines of one bar (or two cell lines) on a log."""

LOG_HEARTBEAT = 60.0
"""Seconds without any line on a log after which the running stage and cell are printed again."""

REFRESH = {True: 0.25, False: 1.0}
"""Seconds between two reads of the progress file: on a terminal, on a log."""

PREFIX = "[inkground]"


def clock_text(seconds: float) -> str:
    """``m:ss`` (``h:mm:ss`` from an hour on): never ``<number> s``, which the benchmarks read as a stage's time."""
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


_BAR = re.compile(r"^(.*?\d+%\|)([^|]*)(\|.*)$")


def fit(line: str, width: int) -> str:
    """``line`` in at most ``width`` characters: a tqdm bar drawn narrower ("45%|####5     | 9/20 [...]" keeps its
    counts and times), anything else cut."""
    if len(line) <= width:
        return line
    m = _BAR.match(line)
    if m:
        head, body, tail = m.groups()
        room = len(body) - (len(line) - width)
        if room >= 3:
            done = body.count("#") + (0.5 if body.rstrip(" #") else 0)  # tqdm's ascii bar: '#', a digit, spaces
            filled = min(room, int(round(done / max(len(body), 1) * room)))
            return head + "#" * filled + " " * (room - filled) + tail
    return line[:width]


@dataclass
class _Bar:
    text: str
    started: float
    printed_at: float | None = None  # on a log: when its line was last printed
    done: bool = False
    leave: bool = True


@dataclass
class _Activity:
    text: str  # "cell 3/17 (run_pseudo_labels)", "starting the kernel"
    started: float
    printed: bool = False


@dataclass
class ProgressRelay:
    """Copies the records of one progress file to ``out`` (see the module doc); :meth:`poll` does one round,
    a thread started by :meth:`start` calls it until :meth:`stop`. ``tty``: redraw in place (default: whether
    ``out`` is a terminal). ``clock``: monotonic seconds (a test passes its own)."""

    label: str
    path: Path
    out: object = None
    tty: bool | None = None
    clock: object = time.monotonic
    bars: dict = field(default_factory=dict)
    activity: _Activity | None = None

    def __post_init__(self):
        self.out = self.out if self.out is not None else sys.stderr
        if self.tty is None:
            isatty = getattr(self.out, "isatty", None)
            self.tty = bool(isatty and isatty())
        self.started = self.last_printed = self.clock()
        self.last_activity_printed = -float("inf")
        self._offset, self._partial = 0, b""
        self._drawn = 0  # lines of the live block on a terminal (the cursor is at its first line)
        self._lines: list[str] = []  # what they show
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ----------------------------------------------------------------- what the stage reports
    def set_activity(self, text: str) -> None:
        """What the stage does now, for the status line: "cell 3/17 (run_pseudo_labels)" (the notebook runner
        reports each code cell as it starts), "starting the kernel"."""
        with self._lock:
            self.activity = _Activity(text, self.clock())
            if self.tty:
                self._render()

    def status(self) -> str:
        text = f"{PREFIX} {self.label}: "
        if self.activity is not None:
            text += f"{self.activity.text}, "
        return text + clock_text(self.clock() - self.started)

    # ----------------------------------------------------------------- reading the progress file
    def _records(self) -> list[dict]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self._offset)
                data = f.read()
        except OSError:
            return []
        self._offset += len(data)
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()  # a record still being written
        out = []
        for line in lines:
            text = line.decode("utf-8", "replace").strip()
            if not text:
                continue
            try:
                rec = json.loads(text)
            except ValueError:
                rec = None
            out.append(rec if isinstance(rec, dict) and "bar" in rec else {"raw": text})
        return out

    def poll(self, final: bool = False) -> None:
        """Read what was appended to the progress file since the last call and show it (``final``: the stage has
        ended; only the last lines of its bars are still printed)."""
        with self._lock:
            now = self.clock()
            finished = []
            for rec in self._records():
                if "raw" in rec:  # not a bar's record (something else wrote to the file): shown as it is
                    self._emit(f"{PREFIX} {self.label} | {rec['raw']}")
                    continue
                b = self.bars.get(rec["bar"])
                if b is None:
                    b = self.bars[rec["bar"]] = _Bar(rec.get("text", ""), now)
                if rec.get("text"):
                    b.text = rec["text"]
                if rec.get("done"):
                    b.done, b.leave = True, bool(rec.get("leave", True))
                    finished.append(rec["bar"])
            for key in dict.fromkeys(finished):
                b = self.bars.pop(key)
                if not self.tty or b.leave:  # a log keeps every bar's final line; a terminal those left on screen
                    self._emit(self._bar_line(b))
            if self.tty:
                self._render()
            elif not final:
                self._log_round(now)

    def _bar_line(self, b: _Bar) -> str:
        return f"  {b.text}" if self.tty else f"{PREFIX} {self.label} | {b.text}"

    # ----------------------------------------------------------------- a log: lines, rate-limited
    def _log_round(self, now: float) -> None:
        for b in self.bars.values():
            if now - (b.printed_at if b.printed_at is not None else b.started) >= LOG_INTERVAL:
                self._emit(self._bar_line(b))
                b.printed_at = now
        a = self.activity
        if a is not None and not a.printed and (now - self.last_activity_printed >= LOG_INTERVAL
                                                or now - a.started >= LOG_INTERVAL):
            self._emit(self.status())
            a.printed, self.last_activity_printed = True, now
        if now - self.last_printed >= LOG_HEARTBEAT:
            self._emit(self.status() + " so far")

    def _emit(self, line: str) -> None:
        """One line that stays (a log line, or a finished bar above a terminal's live block)."""
        if self.tty:
            self._clear()
        self._write(line + "\n")
        self.last_printed = self.clock()

    # ----------------------------------------------------------------- a terminal: a live block redrawn
    def _width(self) -> int:
        return max(20, shutil.get_terminal_size((100, 24)).columns - 1)

    def _render(self) -> None:
        w = self._width()
        lines = [fit(self.status(), w)] + [fit(self._bar_line(b), w) for b in self.bars.values()]
        if self._drawn and lines == self._lines:
            return  # nothing changed since the last drawing
        up = f"\x1b[{len(lines) - 1}A" if len(lines) > 1 else ""
        self._write("\r\x1b[J" + "\n".join(lines) + up + "\r")
        self._drawn, self._lines = len(lines), lines

    def _clear(self) -> None:
        if self._drawn:
            self._write("\r\x1b[J")
            self._drawn = 0

    def _write(self, text: str) -> None:
        try:
            self.out.write(text)
            self.out.flush()
        except (OSError, ValueError):  # a closed terminal or pipe: the stage goes on without its progress
            pass

    # ----------------------------------------------------------------- the thread
    def start(self) -> "ProgressRelay":
        self._thread = threading.Thread(target=self._loop, name=f"progress relay ({self.label})", daemon=True)
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(REFRESH[bool(self.tty)]):
            self.poll()

    def stop(self) -> None:
        """Show what is left in the file (final lines of bars closed at the very end) and clear the live block."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self.poll(final=True)
        with self._lock:
            if self.tty:
                self._clear()


_current: list[ProgressRelay] = []  # the relay of the stage running in this process (at most one)


def current() -> ProgressRelay | None:
    """The relay of the stage running now in this process, if any (the notebook runner reports its cells to it)."""
    return _current[-1] if _current else None


@contextmanager
def relayed(label: str, *, out=None, tty: bool | None = None):
    """Run a stage with its progress shown (see the module doc); yields its :class:`ProgressRelay`. Inside
    another stage's relay (a section run by ``make book``) the outer one is reused: one file, one display."""
    outer = current()
    if outer is not None:
        yield outer
        return
    folder = Path(tempfile.mkdtemp(prefix="inkground-progress-"))
    path = folder / "progress.jsonl"
    path.touch()
    previous = os.environ.get(PROGRESS_ENV)
    relay = ProgressRelay(label, path, out=out, tty=tty)
    os.environ[PROGRESS_ENV] = str(path)
    _current.append(relay)
    relay.start()
    try:
        yield relay
    finally:
        _current.pop()
        if previous is None:
            os.environ.pop(PROGRESS_ENV, None)
        else:
            os.environ[PROGRESS_ENV] = previous
        relay.stop()
        close_progress_file(str(path))
        shutil.rmtree(folder, ignore_errors=True)
