"""The ratings file ``inkground rate`` writes (:class:`RatingsLog`): append-only, one fsynced row per event, shared
by threads and processes under a lock on the file itself; the reading of a ratings file is
:mod:`inkground_lib.pseudo.raters`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from inkground_lib.core.files import FILE_MODE
from inkground_lib.pseudo.raters import (
    ACTIONS,
    LOG_COLUMNS,
    REAL,
    RatingsError,
    RatingsFileGone,
    RatingsStanding,
    check_rater_name,
    parse_score,
)


class RatingsLog:
    """An append-only ratings file (:data:`LOG_COLUMNS`) shared by threads and processes: the writer of
    ``inkground rate``.

    * Every row is written with one ``write`` on a file opened for appending, then flushed and fsynced
      before :meth:`append` returns, so a rating confirmed to a rater survives a crash.
    * Writers take an exclusive ``flock`` on the file itself (no lock file beside it) and, before writing,
      read the rows other writers appended since (:meth:`refresh`), so a ``check`` callback sees every
      rating written so far by anyone.
    * Rows already written are never changed. Opening a file whose last line was cut by a crash (no
      newline; never confirmed to anyone) cuts that partial line off, or adds the missing newline if the row
      is complete.
    * ``on_event(row, line)`` is called for every row, in file order, once: the rows found at open and each
      one read or appended later.
    * The file is created (with its header) only when the log is opened. Every later read or append checks,
      by path, that the file is still the one opened (same device and inode, not shorter than what was read):
      a file moved, deleted, replaced or cut while the log is open is a :class:`RatingsError` saying so, and
      nothing is written (never a new file without its header somewhere else).

    A new file starts with the header; an existing file must have exactly this header (a plain
    ``page,rater,score`` file is read by :func:`read_ratings`, not appended to).
    """

    def __init__(self, path, on_event=None):
        import threading

        self.path = Path(path)
        self.on_event = on_event or (lambda row, line: None)
        self._lock = threading.Lock()
        self._offset = 0
        self._line = 0
        self._standing = RatingsStanding()
        self.repaired: str = ""
        self._identity: Optional[tuple[int, int]] = None  # (st_dev, st_ino) of the file opened
        if self.path.exists() and not self.path.is_file():
            raise RatingsError(f"{self.path}: not a regular file; give a ratings CSV file")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._locked(create=True) as fd:
            self._repair(fd)
            if os.fstat(fd).st_size == 0:
                self._write(fd, ",".join(LOG_COLUMNS) + "\n")
            self._read_new(fd)

    # -- file access (callers hold self._lock and the flock)
    def _locked(self, create: bool = False):
        import fcntl
        from contextlib import contextmanager

        @contextmanager
        def cm():
            with self._lock:
                flags = os.O_RDWR | os.O_APPEND | (os.O_CREAT if create else 0)
                try:
                    fd = os.open(self.path, flags, FILE_MODE)
                except FileNotFoundError:
                    raise RatingsFileGone(self._gone("is gone (moved or deleted)")) from None
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                    st = os.fstat(fd)
                    if self._identity is None:
                        self._identity = (st.st_dev, st.st_ino)
                    elif (st.st_dev, st.st_ino) != self._identity:
                        raise RatingsFileGone(self._gone("was replaced by another file"))
                    elif st.st_size < self._offset:
                        raise RatingsFileGone(self._gone(f"got shorter ({st.st_size} bytes, {self._offset} were read)"))
                    yield fd
                finally:
                    os.close(fd)  # releases the flock
        return cm()

    def _gone(self, what: str) -> str:
        return (f"ratings file {self.path} {what} since it was opened: nothing was saved; put the file back "
                f"where it was, or restart `inkground rate` with --ratings naming where it is now")

    def _repair(self, fd) -> None:
        size = os.fstat(fd).st_size
        if not size:
            return
        data = os.pread(fd, size, 0)
        if data.endswith(b"\n"):
            return
        start = data.rfind(b"\n") + 1
        tail = data[start:]
        cells = tail.decode("utf-8", "replace").split(",")
        complete = (start > 0 and len(cells) == len(LOG_COLUMNS) and cells[-1].strip().isdigit()
                    and all(c.strip() for c in cells[:6]))
        if complete:
            self._write(fd, "\n")
            self.repaired = f"{self.path}: added the missing newline after the last row"
        else:
            os.ftruncate(fd, start)
            os.fsync(fd)
            self.repaired = (f"{self.path}: cut off an incomplete last row left by a crash (never confirmed to a "
                             f"rater): {tail.decode('utf-8', 'replace')!r:.120}")

    @staticmethod
    def _write(fd, text: str) -> None:
        data = text.encode("utf-8")
        while data:
            n = os.write(fd, data)
            data = data[n:]
        os.fsync(fd)

    def _read_new(self, fd) -> list[dict]:
        import csv

        size = os.fstat(fd).st_size
        if size <= self._offset:
            return []
        data = os.pread(fd, size - self._offset, self._offset)
        end = data.rfind(b"\n") + 1  # only whole lines (another writer's row is whole: we hold the lock)
        data = data[:end]
        new = []
        for raw in data.decode("utf-8").splitlines():
            self._line += 1
            where = f"{self.path}: line {self._line}"
            cells = next(csv.reader([raw]), [])
            if self._line == 1:
                if tuple(c.strip().lower() for c in cells) != LOG_COLUMNS:
                    raise RatingsError(f"{where}: header {cells} is not that of a file written by inkground rate "
                                       f"({','.join(LOG_COLUMNS)}); give a new file (inkground pseudo --ratings "
                                       f"reads the old one)")
                continue
            if not any(c.strip() for c in cells):
                continue
            if len(cells) != len(LOG_COLUMNS):
                raise RatingsError(f"{where}: {len(cells)} fields, expected {len(LOG_COLUMNS)}")
            row = dict(zip(LOG_COLUMNS, (c.strip() for c in cells)))
            row["score"] = parse_score(row["score"], where)
            check_rater_name(row["rater"], f"{where}: field rater")
            if row["action"] not in ACTIONS:
                raise RatingsError(f"{where}: field action: {row['action']!r:.40} is not one of {ACTIONS}")
            self._standing.apply(row, where, self._line)
            new.append(row)
            self.on_event(row, self._line)
        self._offset += end
        return new

    def refresh(self) -> list[dict]:
        """Read the rows other writers appended since the last read; returns them (``on_event`` is called)."""
        with self._locked() as fd:
            return self._read_new(fd)

    def append(self, row: dict, check=None) -> dict:
        """Append one event row (keys of :data:`LOG_COLUMNS`; time is filled in when missing) after reading
        everyone's new rows and calling ``check(row)`` (which may raise to refuse it), all under the lock.
        Returns the row as written; it is on disk (fsync) when this returns."""
        import csv
        import io
        from datetime import datetime, timezone

        row = dict(row)
        row.setdefault("source", REAL)
        row.setdefault("action", "rate")
        row.setdefault("session", "")
        if not row.get("time"):
            row["time"] = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        missing = [c for c in LOG_COLUMNS if c not in row]
        if missing:
            raise RatingsError(f"{self.path}: a row to append lacks {missing}")
        with self._locked() as fd:
            self._read_new(fd)
            where = f"{self.path}: new row"
            row["score"] = parse_score(row["score"], where)
            check_rater_name(row["rater"], f"{where}: field rater")
            if check is not None:
                check(row)
            probe = RatingsStanding()
            probe.rows, probe.line = dict(self._standing.rows), dict(self._standing.line)
            probe.apply(row, where, self._line + 1)  # refuses a double rating / a bad undo before writing
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerow([row[c] for c in LOG_COLUMNS])
            self._write(fd, buf.getvalue())
            self._read_new(fd)
        return row
