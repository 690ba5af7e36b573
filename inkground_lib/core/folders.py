"""Output folders: which folder a command may write into, and one writer at a time.

Every command that writes a folder (``synth``, ``recorded``, ``pseudo``, ``predict``, ``eval`` and the
section notebooks that call the same functions) goes through :func:`output_folder`:

* a new or empty folder is created and used;
* a non-empty folder is used only if the command recognises it as its own earlier output (a resume or a
  rebuild), or when the user says ``overwrite=True`` (``--overwrite``); otherwise :class:`FolderError` names
  the folder and nothing is written. With ``overwrite`` inkground writes its own files into the folder but
  still never deletes a file it did not write;
* while the command works, the folder is locked (``flock`` on ``.inkground.lock`` inside it): a second
  command on the same folder is refused at once. A killed process releases
  its lock. The lock is re-entrant within a process (a function that locks a folder may call another that
  locks it too).

Run folders (pseudo-label runs, prediction and evaluation runs) carry a mark, :data:`RUN_MARK`, written when
inkground first uses them; datasets are recognised by their own manifests and builder files.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from inkground_lib.core.files import PathError, atomic_write_json

LOCK_FILE = ".inkground.lock"
"""The lock file inside a folder being written (empty: a dataset folder's files stay byte-identical between
runs)."""

RUN_MARK = ".inkground-run.json"
"""Written into every run folder inkground creates: marks it as inkground's (resumable)."""


FOREIGN_MARK = ".inkground-foreign"
"""Written into a folder that was not inkground's when ``--overwrite`` made a command write into it: from then
on no command deletes files there by their names (they might be the user's)."""


class FolderError(PathError):
    """A folder a command may not write into (not its own, not empty), or one another command is writing."""


_HELD: dict[str, list] = {}  # resolved folder -> [fd, depth]
_HELD_LOCK = threading.Lock()


def dangling_link(path: str | os.PathLike) -> Path | None:
    """The first of ``path`` and the folders it lies in that is a symbolic link to nothing, or None. Nothing can
    be written under such a link (making a folder there fails with a bare "File exists"): every command names it
    (:func:`dangling_link_problem`)."""
    p = Path(path)
    for q in [p, *p.parents]:
        if q.is_symlink() and not q.exists():
            return q
    return None


def dangling_link_problem(path: str | os.PathLike) -> str | None:
    """One line naming the link to nothing on the way to ``path`` (:func:`dangling_link`), its missing target and
    what to do; None when there is none."""
    link = dangling_link(path)
    if link is None:
        return None
    return (f"{link} is a symbolic link to {os.readlink(link)}, which does not exist, so nothing can be written "
            f"under it; create that folder, or remove the link (rm {link})")


def is_empty(folder: Path) -> bool:
    """True if ``folder`` holds nothing but inkground's lock file."""
    return all(p.name == LOCK_FILE for p in folder.iterdir())


def check_output_folder(folder: str | os.PathLike, what: str, is_own: Callable[[Path], bool],
                        overwrite: bool = False) -> Path:
    """Refuse ``folder`` (FolderError, before anything is written) when it is a file, or when it is not
    empty, ``is_own(folder)`` is False and ``overwrite`` is False. ``what`` names what the command writes
    ("a synthetic dataset", ...). Returns the folder as a Path (not created)."""
    folder = Path(folder)
    if folder.is_symlink() and not folder.exists():
        raise FolderError(f"{folder}: a symbolic link to {os.readlink(folder)}, which does not exist; create that "
                          f"folder or give another for {what}")
    if folder.exists() and not folder.is_dir():
        raise FolderError(f"{folder}: exists and is not a folder; give a folder for {what}")
    if folder.is_dir() and not overwrite and not is_empty(folder) and not is_own(folder):
        raise FolderError(f"{folder}: not empty and not {what} written by inkground; refusing to write into it "
                          f"(nothing was changed). Choose a new or empty folder, or pass --overwrite to write "
                          f"into it anyway (inkground never deletes files it did not write)")
    if folder.is_dir():
        check_links_inside(folder)
    return folder


def check_links_inside(folder: Path) -> None:
    """FolderError if a symbolic link anywhere inside ``folder`` points outside it (writing through it would
    write outside the output folder); links to places inside are fine."""
    root = folder.resolve()
    for dirpath, dirnames, filenames in os.walk(folder):  # does not follow links
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            if p.is_symlink():
                target = p.resolve()
                if target != root and root not in target.parents:
                    raise FolderError(f"{p}: a link to {target}, outside the output folder {folder}; inkground "
                                      f"writes only inside it - remove the link or choose another folder")


@contextmanager
def folder_lock(folder: str | os.PathLike, command: str) -> Iterator[Path]:
    """Hold the write lock of ``folder`` (created if missing) for ``command``; FolderError at once if another
    process holds it. Re-entrant within one process."""
    folder = Path(folder)
    problem = dangling_link_problem(folder)
    if problem:
        raise FolderError(problem)
    folder.mkdir(parents=True, exist_ok=True)
    key = str(folder.resolve())
    with _HELD_LOCK:
        held = _HELD.get(key)
        if held is not None:
            held[1] += 1
    if held is not None:
        try:
            yield folder
        finally:
            with _HELD_LOCK:
                held[1] -= 1
        return
    path = folder / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise FolderError(f"{folder}: another inkground command is writing this folder (its lock {LOCK_FILE} is "
                          f"held; {command} needs it); wait for it to finish, or use another folder") from None
    except BaseException:
        os.close(fd)
        raise
    try:
        with _HELD_LOCK:
            _HELD[key] = [fd, 1]
        yield folder
    finally:
        with _HELD_LOCK:
            _HELD.pop(key, None)
        os.close(fd)  # releases the lock


def _foreign_record(folder: Path) -> dict:
    try:
        rec = json.loads((folder / FOREIGN_MARK).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return rec if isinstance(rec, dict) else {}


def written_here(folder: Path) -> set[str]:
    """The files (paths relative to ``folder``) inkground recorded writing into a folder that was not its own
    (:func:`claim_files`)."""
    written = _foreign_record(Path(folder)).get("written")
    return {str(n) for n in written} if isinstance(written, list) else set()


def claim_files(folder: Path, names, own: bool) -> None:
    """Before a builder writes ``names`` (paths relative to ``folder``): when ``folder`` is not the builder's own
    (``own`` False: an ``--overwrite`` of someone's folder) or carries :data:`FOREIGN_MARK`, FolderError naming
    the first of ``names`` that exists there and that inkground did not write (nothing is replaced: the user's
    ``manifest.json`` or ``pages/p0000.jpg`` stay theirs); otherwise the names are recorded in the mark as
    inkground's, so a later run may write them again and nothing else is ever deleted."""
    folder = Path(folder)
    if (own or is_empty(folder)) and not (folder / FOREIGN_MARK).exists():
        return  # its own folder, or a new one
    names = [str(n) for n in names]
    mine = check_claims(folder, names, own)
    rec = _foreign_record(folder)
    atomic_write_json(folder / FOREIGN_MARK, {**FOREIGN_NOTE, **rec, "written": sorted(mine | set(names))})


def check_claims(folder: Path, names, own: bool) -> set[str]:
    """The check of :func:`claim_files` alone (it writes nothing: callers run it before they take the folder's
    lock); returns the names inkground recorded writing there."""
    folder = Path(folder)
    if (own or is_empty(folder)) and not (folder / FOREIGN_MARK).exists():
        return set()
    mine = written_here(folder)
    clash = [str(n) for n in names if str(n) not in mine and os.path.lexists(folder / str(n))]
    if clash:
        more = f" (and {len(clash) - 1} more of the files it would write)" if len(clash) > 1 else ""
        raise FolderError(f"{folder / clash[0]}: exists and was not written by inkground{more}; --overwrite writes "
                          f"beside your files but never replaces one: move it away or choose another folder "
                          f"(nothing was changed)")
    return mine


FOREIGN_NOTE = {"inkground": "written with --overwrite into a folder that was not inkground's; nothing here is "
                             "deleted but the files listed under 'written'"}


def refuse_clashes(folder: Path, patterns) -> None:
    """FolderError naming the first file of ``folder`` that matches one of the glob ``patterns`` (what a command
    writes there): ``--overwrite`` into a folder that is not inkground's never replaces a file of that name."""
    folder = Path(folder)
    for pattern in patterns:
        for hit in sorted(folder.glob(pattern)):
            raise FolderError(f"{hit}: exists in a folder inkground did not create, and inkground would write a "
                              f"file of that name; --overwrite never replaces a file it did not write: move it "
                              f"away or choose another folder (nothing was changed)")


def may_delete_own_files(folder: Path, own: bool) -> bool:
    """Whether a builder may delete stale files it names as its own in ``folder`` (``own``: the folder was
    recognised as this builder's before writing). Writing into a folder that was not (``--overwrite``)
    leaves :data:`FOREIGN_MARK` there, and then nothing is ever deleted by name."""
    if not own and not is_empty(folder) and not (folder / FOREIGN_MARK).exists():
        atomic_write_json(folder / FOREIGN_MARK, FOREIGN_NOTE)
    return own and not (folder / FOREIGN_MARK).exists()


def is_run_folder(folder: Path, legacy: tuple[str, ...] = ()) -> bool:
    """True if ``folder`` carries inkground's run mark, or one of the ``legacy`` names (files or folders that
    inkground wrote there before run marks existed)."""
    return (folder / RUN_MARK).is_file() or any((folder / n).exists() for n in legacy)


@contextmanager
def run_folder(folder: str | os.PathLike, command: str, legacy: tuple[str, ...] = (),
               overwrite: bool = False, writes: tuple[str, ...] = ()) -> Iterator[Path]:
    """Check (:func:`check_output_folder`), lock (:func:`folder_lock`) and mark (:data:`RUN_MARK`) a run folder
    for ``command``; yields the folder. With ``overwrite`` into a non-empty folder that is no run folder: refused
    when a file of a name the command writes is there (``writes``: glob patterns, default every run file,
    ``inkground_lib.core.run_files.RUN_PATTERNS``, passed in by the callers), and the folder is marked
    :data:`FOREIGN_MARK` (``make clean`` then deletes nothing there)."""
    folder = check_output_folder(folder, "a run folder", lambda f: is_run_folder(f, legacy), overwrite)
    foreign = folder.is_dir() and not is_empty(folder) and not is_run_folder(folder, legacy)
    if foreign:
        refuse_clashes(folder, writes)
    with folder_lock(folder, command) as f:
        if foreign and not (f / FOREIGN_MARK).exists():
            atomic_write_json(f / FOREIGN_MARK, FOREIGN_NOTE)
        mark = f / RUN_MARK
        if not mark.is_file():
            atomic_write_json(mark, {"inkground": "run folder", "created_by": command})
        yield f


def is_locked(folder: str | os.PathLike) -> bool:
    """True if another process holds ``folder``'s write lock."""
    path = Path(folder) / LOCK_FILE
    if not path.is_file():
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)
