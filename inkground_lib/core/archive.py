"""Reading a zip archive as safely as it would be unpacked: the checks every command that reads or unpacks
one shares (``verify`` of the book's results archive, ``restore``).

An archive is refused, naming the member, when a member's name would be written outside the folder it is
unpacked into (``../``, an absolute path, a drive letter, a backslash, an empty, ``.`` or control-character
part), when a member is a symbolic link, a device or another special file, or is encrypted, when two members
have the same name (also after case folding and Unicode normalisation, as a case-insensitive disk sees them; an
unpacker such as ``unzip -n`` would take one of them) or a file is also a folder, when it lists more than
MAX_ARCHIVE_MEMBERS members, and when the sizes it would unpack to add up to more than its read limit.

Each member's content is compared with what its caller's manifest states (:class:`Expected`: the size in bytes
and the sha256): a member whose recorded size differs from the stated one is refused before it is read, and a
member is read in chunks of CHUNK bytes, never more bytes than stated (memory stays bounded whatever a member
claims or inflates to). :func:`check` lists every problem; :func:`extract` writes the files into a folder only
when all of them check, through a staging folder inside it, so a refused archive writes nothing.

Written here (no library checks zip member names and types for unpacking; zipfile itself leaves that to the
caller, see its "Decompression pitfalls" and ``extractall`` warnings, docs.python.org/3.11/library/zipfile.html,
read 2026-12).
"""

from __future__ import annotations

import hashlib
import lzma
import os
import shutil
import stat
import tempfile
import unicodedata
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping, Optional

from inkground_lib.core.dataset import _mib, read_limit
from inkground_lib.core.defaults import MAX_ARCHIVE_BYTES, MAX_ARCHIVE_ENV, MAX_ARCHIVE_MEMBERS
from inkground_lib.core.files import FILE_MODE, PathError, confined

CHUNK = 1 << 20
"""Bytes read from a member at a time (1 MiB): the memory a member's check takes, whatever its size."""

COMPRESSIONS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)
"""The compression methods read (those Python's zipfile reads; another is refused by name)."""


class ArchiveError(ValueError):
    """An archive that cannot be read or is refused as a whole; the message is one line naming the archive."""


@dataclass(frozen=True)
class Expected:
    """What a manifest states of one member: its size in bytes and its sha256 (hex), or None where the caller
    checks only the size (the member is then still read whole, in chunks, so a damaged one is found)."""

    bytes: int
    sha256: Optional[str] = None


@dataclass
class Archive:
    """An open zip archive whose member list has been read: ``files`` are its file members by name (folder
    entries left out), ``problems`` what makes it unsafe to unpack (empty when it is safe). Use it in a
    ``with`` block, or call ``close()``."""

    path: Path
    zip: zipfile.ZipFile
    files: dict[str, zipfile.ZipInfo]
    problems: list[str]
    max_bytes: int

    def close(self) -> None:
        fp = self.zip.fp
        self.zip.close()
        if fp is not None:
            fp.close()  # zipfile leaves a file object it was given open

    def __enter__(self) -> "Archive":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def name_problem(name: str) -> Optional[str]:
    """Why a member name would not unpack inside its folder (None when it would): absolute, a drive letter,
    a backslash, a ``..``, ``.`` or empty part, or a control character. A folder entry ends in one ``/``.

    >>> [name_problem(n) for n in ("runs/a.csv", "runs/", "../a.csv", "/etc/passwd", "a//b")]
    [None, None, "'../a.csv': a '..' part leaves the folder", "'/etc/passwd': an absolute path", "'a//b': an empty part"]
    """
    shown = repr(name[:200])
    if not name or name == "/":
        return f"{shown}: an empty name"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return f"{shown}: a control character in the name"
    if name.startswith("/"):
        return f"{shown}: an absolute path"
    if "\\" in name:
        return f"{shown}: a backslash (a Windows path separator)"
    if len(name) >= 2 and name[1] == ":" and name[0].isalpha():
        return f"{shown}: a drive letter"
    parts = name[:-1].split("/") if name.endswith("/") else name.split("/")
    if ".." in parts:
        return f"{shown}: a '..' part leaves the folder"
    if "." in parts:
        return f"{shown}: a '.' part"
    if "" in parts:
        return f"{shown}: an empty part"
    return None


def _kind_problem(info: zipfile.ZipInfo) -> Optional[str]:
    """Why a member is no plain file or folder (None when it is one)."""
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        return f"{info.filename!r}: a symbolic link"
    if stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
        return f"{info.filename!r}: a special file (mode {oct(mode)}), not a plain file"
    if info.flag_bits & 0x1:
        return f"{info.filename!r}: encrypted"
    if info.compress_type not in COMPRESSIONS:
        return f"{info.filename!r}: compression method {info.compress_type} is not read here"
    if info.is_dir() and info.file_size:
        return f"{info.filename!r}: a folder entry with {info.file_size} bytes of content"
    return None


def _folded(name: str) -> str:
    return unicodedata.normalize("NFC", name.rstrip("/")).casefold()


def _member_count(f) -> int:
    """The member count the archive's end record states, read before zipfile parses its directory (zipfile's
    own reader of that record, private but unchanged since Python 2: -1 when it has none, BadZipFile below)."""
    end = zipfile._EndRecData(f)
    return -1 if end is None else int(end[zipfile._ECD_ENTRIES_TOTAL])


def open_archive(path: str | os.PathLike, max_bytes: Optional[int] = None) -> Archive:
    """Open ``path`` and check its member list (nothing is unpacked or read). Raises ArchiveError when it is no
    readable zip archive, is bigger than its read limit (:data:`MAX_ARCHIVE_BYTES`, $INKGROUND_MAX_ARCHIVE_MB,
    or ``max_bytes``) or lists more than MAX_ARCHIVE_MEMBERS members; the members that are unsafe to unpack are
    in ``problems``."""
    path = Path(path)
    limit = read_limit(max_bytes, MAX_ARCHIVE_BYTES, MAX_ARCHIVE_ENV)
    try:
        st = os.stat(path)
        size = st.st_size
        if not stat.S_ISREG(st.st_mode):
            raise ArchiveError(f"{path}: not a regular file")
        if size > limit:
            raise ArchiveError(f"{path}: {_mib(size)}, over the read limit of {_mib(limit)}; not read "
                               f"(if it is genuine, set {MAX_ARCHIVE_ENV}=<MiB>)")
        f = open(path, "rb")
    except OSError as e:
        raise ArchiveError(f"{path}: cannot be read ({e.strerror or e})") from None
    try:
        count = _member_count(f)
        if count < 0:
            raise ArchiveError(f"{path}: not a zip archive (no end-of-directory record)")
        if count > MAX_ARCHIVE_MEMBERS:
            raise ArchiveError(f"{path}: lists {count:,} members, more than {MAX_ARCHIVE_MEMBERS:,}; not read")
        z = zipfile.ZipFile(f)
    except ArchiveError:
        f.close()
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError, UnicodeDecodeError) as e:
        f.close()
        raise ArchiveError(f"{path}: not a readable zip archive ({e})") from None
    problems, files, seen, folders = [], {}, {}, set()
    total = 0
    for info in z.infolist():
        problem = name_problem(info.filename) or _kind_problem(info)
        if problem:
            problems.append(problem)
            continue
        key = _folded(info.filename)
        if key in seen:
            same = "the same name" if seen[key] == info.filename else f"the same name as {seen[key]!r} on a " \
                                                                     "case-insensitive disk"
            problems.append(f"{info.filename!r}: twice in the archive ({same}); an unpacker would keep only one")
            continue
        seen[key] = info.filename
        parts = key.split("/")
        folders.update("/".join(parts[:i]) for i in range(1, len(parts)))
        if not info.is_dir():
            files[info.filename] = info
            total += info.file_size
    for name in files:
        if _folded(name) in folders:
            problems.append(f"{name!r}: both a file and a folder of other members")
    if total > limit:
        problems.append(f"{path}: its members unpack to {_mib(total)}, over the read limit of {_mib(limit)} "
                        f"(if it is genuine, set {MAX_ARCHIVE_ENV}=<MiB>)")
    return Archive(path, z, files, problems, limit)


def chunks(archive: Archive, name: str, limit: int) -> Iterator[bytes]:
    """The bytes of member ``name`` in chunks of at most CHUNK bytes; ArchiveError when it holds more than
    ``limit`` bytes (its recorded size is checked before anything is read), is damaged (bad CRC, truncated) or
    cannot be inflated."""
    info = archive.files.get(name)
    if info is None:
        raise ArchiveError(f"{archive.path}: {name!r}: not in the archive")
    if info.file_size > limit:
        raise ArchiveError(f"{archive.path}: {name!r}: {_mib(info.file_size)}, more than the {limit:,} bytes "
                           "allowed; not read")
    n = 0
    try:
        with archive.zip.open(info) as f:
            while chunk := f.read(CHUNK):
                n += len(chunk)
                if n > limit:
                    raise ArchiveError(f"{archive.path}: {name!r}: more than the {limit:,} bytes allowed")
                yield chunk
    except ArchiveError:
        raise
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError, RuntimeError, zlib.error,
            lzma.LZMAError) as e:  # a bad CRC, a truncated or undecodable stream
        raise ArchiveError(f"{archive.path}: {name!r}: damaged ({e})") from None


def read_member(archive: Archive, name: str, limit: int) -> bytes:
    """A small member whole (a manifest, a citation), at most ``limit`` bytes (ArchiveError beyond)."""
    return b"".join(chunks(archive, name, limit))


def member_problem(archive: Archive, name: str, expected: Expected, sink=None) -> Optional[str]:
    """Why member ``name`` is not what ``expected`` states (None when it is): missing, another size recorded
    (refused unread), another size or sha256 when streamed, or damaged. One line, naming the member. ``sink``
    (a callable) is given each chunk as it is read."""
    info = archive.files.get(name)
    if info is None:
        return f"{name}: listed in the manifest, not in the archive"
    if info.file_size != expected.bytes:
        return f"{name}: {info.file_size:,} bytes in the archive, the manifest says {expected.bytes:,}; not read"
    h, n = hashlib.sha256(), 0
    try:
        for chunk in chunks(archive, name, expected.bytes):
            h.update(chunk)
            n += len(chunk)
            if sink is not None:
                sink(chunk)
    except ArchiveError as e:
        return str(e).removeprefix(f"{archive.path}: ")
    if n != expected.bytes:
        return f"{name}: {n:,} bytes when read, the manifest says {expected.bytes:,}"
    if expected.sha256 is not None and h.hexdigest() != expected.sha256:
        return f"{name}: sha256 {h.hexdigest()[:12]}, the manifest says {expected.sha256[:12]}"
    return None


def _unread_problems(archive: Archive, expected: Mapping[str, Expected]) -> list[str]:
    """What is wrong before any member is read: unsafe members, unsafe names in the manifest, and members it
    does not state (so no size for)."""
    if archive.problems:
        return list(archive.problems)
    return ([f"the manifest lists {p}" for p in map(name_problem, expected) if p]
            + [f"{n}: in the archive, not in the manifest" for n in sorted(set(archive.files) - set(expected))])


def check(archive: Archive, expected: Mapping[str, Expected]) -> list[str]:
    """Every problem of ``archive`` against ``expected`` ({member name: what the manifest states}), one line
    each: the unsafe members (when there are any nothing is read), unsafe names the manifest lists, the members
    it does not state, then :func:`member_problem` of each member it states."""
    problems = _unread_problems(archive, expected)
    if archive.problems:
        return problems
    return problems + [p for p in (member_problem(archive, name, exp) for name, exp in expected.items()
                                   if not name_problem(name)) if p]


def extract(archive: Archive, expected: Mapping[str, Expected], dest: str | os.PathLike) -> list[Path]:
    """Unpack the members ``expected`` states into ``dest`` (made if missing) when all of them check: each is
    streamed into a staging folder inside ``dest`` while its size and sha256 are checked, and only when every
    member checked and no target is in the way (a link, a folder, a path leaving ``dest``) are they moved into
    place (an existing file is replaced). Raises ArchiveError with the first problem; then nothing in ``dest``
    has changed. Returns the written paths."""
    def refuse(problems: list[str]):
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise ArchiveError(f"{archive.path}: {problems[0]}{more}")

    problems = _unread_problems(archive, expected)
    if problems:
        refuse(problems)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    targets = {}
    for name in expected:
        try:
            final = confined(dest, name, "member")  # no folder on the way leads out of dest
        except PathError as e:
            refuse([str(e)])
        plain = dest / name
        if plain.is_symlink() or (plain.exists() and not plain.is_file()):
            refuse([f"{plain}: in the way (not a plain file)"])
        folder = next((p for p in plain.parents if p.exists() and not p.is_dir()), None)
        if folder is not None:
            refuse([f"{folder}: in the way of {name} (a file where a folder goes)"])
        targets[name] = final
    staging = Path(tempfile.mkdtemp(prefix=".inkground-unpack-", dir=dest))
    try:
        for i, (name, exp) in enumerate(expected.items()):
            with open(staging / str(i), "wb") as f:
                problem = member_problem(archive, name, exp, f.write)
                f.flush()
                os.fsync(f.fileno())
            if problem:
                refuse([problem])
            os.chmod(staging / str(i), FILE_MODE)
        for i, name in enumerate(expected):
            targets[name].parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / str(i), targets[name])
        return list(targets.values())
    finally:
        shutil.rmtree(staging, ignore_errors=True)
