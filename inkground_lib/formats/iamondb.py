"""IAM-OnDB: lineStrokes XML, original-xml forms, ascii transcriptions, writers and the task's split files.

What the release holds, from its download page (https://fki.tic.heia-fr.ch/databases/download-the-iam-on-line-
handwriting-database, checked 2026-11-30): ``original-xml-part`` "Contains all forms which were acquired with the
recording system of the University of Bern, i.e. the writer-ids and the transcriptions are stored within the
xml-files"; ``writers.xml`` "Contains the information of all writers in the database"; ``original-xml-all``
"additionally contains forms with the same on-line handwriting informations but without the transcription and the
writer-id. For that, see data/forms.txt, which contains the mapping of all forms to the writers"; ``ascii-all``
"Contains the ascii-transcriptions of all files in the database (Under the CSR:-part)"; task IAM-OnDB-t1: "The
database is divided into 4 parts, a training set, a first validation set, a second validation set and a final test
set". How public readers take the files apart (checked 2026-11-30) is cited at each reader below.

This module reads the writers, forms and the task's split files and a whole release folder (:func:`read_iamondb`,
with its report); one line's strokes are :mod:`~inkground_lib.formats.iamondb_strokes`, the transcriptions
:mod:`~inkground_lib.formats.iamondb_transcriptions`.
"""

from __future__ import annotations

import os
import re
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from inkground_lib.formats.iamondb_strokes import WHITEBOARD_MODES, IamLine, read_line
from inkground_lib.formats.iamondb_transcriptions import (
    IamForm,
    is_placeholder_transcription,
    read_iamondb_ascii,
    read_iamondb_original,
    read_text_file,
)
from inkground_lib.formats.xmlsafe import FormatError, local_name, parse_xml

#: the task IAM-OnDB-t1's split files, in the download page's order: training set, first validation set, second
#: validation set, final test set (names as public readers open them, e.g. jan-auer/rnnlib-iam README:
#: "testset_f.txt testset_t.txt testset_v.txt trainset.txt", checked 2026-11-30)
IAMONDB_SPLITS = ("trainset", "testset_v", "testset_t", "testset_f")


# ------------------------------------------------------------------------------------------ writers

_FORM_ID = re.compile(r"^[a-z]\d\d-\d\d\d[a-z]?$")
_LINE_ID = re.compile(r"^([a-z]\d\d)-(\d\d\d)([a-z]?)-(\d\d)$")


def read_iamondb_forms(path: str | os.PathLike, *, max_bytes: Optional[int] = None) -> dict[str, str]:
    """Read the release's forms.txt ("the mapping of all forms to the writers", download page) as {form id:
    writer id}. A line holds a form id then a writer id, separated by white space (further fields are ignored);
    blank lines and lines starting with ``#`` are skipped: the layout public readers of the IAM-OnDB forms.txt
    use (JSJ-Experiments/DiffInk iam_tools/preview.py writer_map: skip blank and '#' lines, ``fields[0]`` form,
    ``fields[1]`` writer, leading zeros kept; checked 2026-11-30). A malformed line or a form listed twice
    with different writers raises FormatError naming the file and line number. At most ``max_bytes`` bytes."""
    path = Path(path)
    out: dict[str, str] = {}
    for n, ln in enumerate(read_text_file(path, max_bytes, "an IAM-OnDB forms listing").splitlines(), 1):
        s = ln.strip()
        if not s or s.startswith("#"):
            continue
        fields = s.split()
        if len(fields) < 2:
            raise FormatError(f"{path}: line {n}: expected '<form id> <writer id>', got {s[:40]!r}")
        form, writer = fields[0], fields[1]
        if not _FORM_ID.match(form):
            raise FormatError(f"{path}: line {n}: form id {form!r} is not of the form a01-000u")
        if out.get(form, writer) != writer:
            raise FormatError(f"{path}: line {n}: form {form} listed again with writer {writer} "
                              f"(before: {out[form]})")
        out[form] = writer
    return out


def read_iamondb_writers(path: str | os.PathLike, *, max_bytes: Optional[int] = None) -> dict[str, dict]:
    """Read the release's writers.xml as {writer id: {attribute: value, child element: [texts]}}.

    Each writer is a ``Writer`` element under the root whose ``name`` attribute is the writer id (the
    ``writerID`` of original-xml forms); its other attributes describe the writer (e.g. ``Gender``,
    ``NativeLanguage``, ``WritingType``): X-rayLaser/pytorch-handwriting-synthesis-toolkit iam_ondb/_writers.py
    (root's ``Writer`` elements, attributes, child elements' texts as lists; writer id ``name``) and
    JSJ-Experiments/DiffInk iam_tools/preview.py (``w.attrib['name']`` of every ``Writer``), checked
    2026-11-30. Parsed by :func:`~inkground_lib.formats.xmlsafe.parse_xml`; a Writer without ``name`` or a
    writer given twice raises FormatError naming the element."""
    path = Path(path)
    root = parse_xml(path, max_bytes=max_bytes)
    out: dict[str, dict] = {}
    for i, w in enumerate(el for el in root.iter() if local_name(el.tag) == "Writer"):
        name = w.get("name")
        if not name:
            raise FormatError(f"{path}: <Writer> #{i}: attribute name is missing")
        if name in out:
            raise FormatError(f"{path}: <Writer> #{i}: writer {name!r} given twice")
        info: dict = dict(w.attrib)
        for child in w:
            tag = local_name(child.tag)
            if tag:
                info.setdefault(tag, []).append((child.text or "").strip())
        out[name] = info
    return out


# ------------------------------------------------------------------------------------------ splits

# The task files list forms, one a line, as public readers open them (checked 2026-11-30): jan-auer/rnnlib-iam
# english_online.py turns each stripped entry into ascii/<a01>/<a01-020>/<a01-020x>.txt with the pattern
# ^(((\w+)-\d+)\w?)$ and reads lineStrokes/<that>-01.xml, -02.xml, ... (its minimal.txt, cut from trainset.txt,
# has " a01-020x", " d04-081", " f07-088b": a leading space; forms with and without a letter). Entries are
# matched to a line's form id exactly (d04-081 is not d04-081a); line ids (a01-020x-01) are accepted too.
_SPLIT_ENTRY = re.compile(r"^[a-z]\d\d-\d\d\d[a-z]?(-\d\d)?$")


def _split_path(root: Path, split: str) -> Path:
    p = Path(split)
    if p.is_file():
        return p
    name = split if split.endswith(".txt") else f"{split}.txt"
    cands = [root / name, root / "task1" / name]
    p = next((c for c in cands if c.is_file()), None)
    if p is None:
        raise FormatError(f"{root}: split {split!r}: none of {[str(c) for c in cands]} exists")
    return p


def iamondb_split_ids(root: str | os.PathLike, split: str, *, max_bytes: Optional[int] = None) -> set[str]:
    """Form (or line) ids listed in an IAM-OnDB task file: ``split`` is a path to it, or a name such as
    ``trainset``, ``testset_v``, ``testset_t``, ``testset_f`` looked up in ``root`` and ``root/task1``.
    Entries are stripped of white space (the files indent them by a space); blank lines are skipped; an entry
    that is no form or line id raises FormatError naming the file and line number.
    At most ``max_bytes`` bytes (as in :func:`read_iamondb_strokes`), checked before reading."""
    p = _split_path(Path(root), split)
    out = set()
    for n, ln in enumerate(read_text_file(p, max_bytes, "an IAM-OnDB split file").splitlines(), 1):
        s = ln.strip()
        if not s:
            continue
        if not _SPLIT_ENTRY.match(s):
            raise FormatError(f"{p}: line {n}: {s[:40]!r} is no form id (a01-000u) or line id (a01-000u-01)")
        out.add(s)
    return out


def read_iamondb_task(root: str | os.PathLike, *, max_bytes: Optional[int] = None) -> dict[str, set[str]]:
    """The task IAM-OnDB-t1's split files found in ``root`` or ``root/task1``, as {name: ids} for the names of
    :data:`IAMONDB_SPLITS` that exist. The download page divides the database "into 4 parts", so an id listed
    in two of them raises FormatError naming both files."""
    root = Path(root)
    out, where = {}, {}
    for name in IAMONDB_SPLITS:
        try:
            p = _split_path(root, name)
        except FormatError:
            continue
        ids = iamondb_split_ids(root, str(p), max_bytes=max_bytes)
        for i in sorted(ids):
            if i in where:
                raise FormatError(f"{p}: {i} is also listed in {where[i]}; the task's parts are disjoint")
            where[i] = p
        out[name] = ids
    return out


# ------------------------------------------------------------------------------------------ the folder

def _first_dir(root: Path, candidates: Sequence[str]) -> Optional[Path]:
    for c in candidates:
        p = root / c
        if p.is_dir():
            return p
    return None


def _first_file(root: Path, candidates: Sequence[str]) -> Optional[Path]:
    for c in candidates:
        p = root / c
        if p.is_file():
            return p
    return None


@dataclass
class IamReport:
    """What a folder read found, for a caller that reports it: ``files_found`` lineStrokes files named as lines;
    ``files_read`` of them read; ``files_failed`` (file, reason) for every file that could not be read (lineStrokes,
    original xml, ascii, forms.txt, writers.xml), each skipped; ``quirks`` (kind, file, message) for what the
    reader met and how it handled it (kinds in :data:`IAM_QUIRKS`); ``single_point_strokes`` and
    ``strokes_time_backwards`` count strokes over the lines read (both kept as the file has them)."""

    root: str
    files_found: int = 0
    files_read: int = 0
    files_failed: list = field(default_factory=list)
    quirks: list = field(default_factory=list)
    single_point_strokes: int = 0
    strokes_time_backwards: int = 0
    lines_time_backwards: int = 0

    def quirk(self, kind: str, file, message: str) -> None:
        self.quirks.append((kind, str(file) if file is not None else None, message))

    def quirks_by_kind(self) -> dict[str, int]:
        return dict(sorted(Counter(k for k, _, _ in self.quirks).items()))

    def as_meta(self, max_items: int = 50) -> dict:
        """The report as JSON-able manifest meta (the first ``max_items`` failures and quirks listed)."""
        return {"files_found": self.files_found, "files_read": self.files_read,
                "files_failed": len(self.files_failed), "failed_files": [list(f) for f in self.files_failed[:max_items]],
                "quirks": self.quirks_by_kind(),
                "quirk_examples": [f"{f}: {m}" if f else m for _, f, m in self.quirks[:max_items]],
                "single_point_strokes": self.single_point_strokes,
                "strokes_time_backwards": self.strokes_time_backwards,
                "lines_time_backwards": self.lines_time_backwards}


IAM_QUIRKS = {
    "form id": "an original-xml Form id names another form than its folder and file: the folder's form is used",
    "line count": "a form's lineStrokes files and its transcription lines are not the same line numbers (a line "
                  "or a file missing): no line of the form is matched by number (each is left with text None, "
                  "text_note 'line count', and the form's lines in form_text for a caller's own rule)",
    "placeholder": "a line transcribed with the recording tool's placeholder: untranscribed",
    "time backwards": "point times running backwards inside a stroke: the file's point order is kept",
    "writer": "an original-xml writer and the forms.txt writer of a form differ: the original xml is used",
    "unknown writer": "writer ids of the forms that writers.xml does not list",
}
"""Every kind of quirk :func:`read_iamondb_report` records, with the rule it applies."""


def _form_from_path(path: Path) -> Optional[str]:
    """The form an original-xml file stands for by its place: folder ``a01-001`` + file ``strokesw.xml`` ->
    ``a01-001w`` (``strokes.xml``: ``a01-001``); None for a file not named that way."""
    m = re.fullmatch(r"strokes([a-z]?)", path.stem)
    folder = path.parent.name
    if not m or not re.fullmatch(r"[a-z]\d\d-\d\d\d", folder):
        return None
    return folder + m.group(1)


def _rebase_form(fm: IamForm, form: str) -> IamForm:
    """The form read as ``form``: its id, and line ids that start with its written id moved to ``form``."""
    old = fm.id or ""
    lines = {(form + lid[len(old):] if old and lid.startswith(old + "-") else lid): t for lid, t in fm.lines.items()}
    return IamForm(form, fm.writer, lines, fm.path, dict(fm.corrected_ids))


def read_iamondb(root: str | os.PathLike, split: Optional[str] = None, *, progress: bool = False,
                 max_bytes: Optional[int] = None, whiteboard: str = "normalise") -> list[IamLine]:
    """Read every line of an IAM-OnDB folder, sorted by line id; a file that cannot be read raises.

    ``root`` holds ``lineStrokes-all/lineStrokes`` (or ``lineStrokes``), and optionally
    ``original-xml-part/original``, ``original-xml-all/original`` (or ``original``) for writer ids and
    transcriptions, ``ascii-all/ascii`` (or ``ascii``) for transcriptions, ``forms.txt`` (or ``data/forms.txt``)
    for the writers of forms the original xml does not name, ``writers.xml`` (or ``data/writers.xml``) for
    what is known of each writer. A form's writer is its original-xml ``Form writerID``, else its forms.txt
    entry; when both exist and differ a warning names both files (the original xml is kept); writers missing
    from writers.xml are named in one warning. ``split`` keeps only the forms / lines listed in that task file
    (see :func:`iamondb_split_ids`). A form's transcription comes from one source, never mixed line by line: its
    original xml where that transcribes the form, else its ascii ``CSR:`` part (``text_source`` on each line). A
    lineStrokes file gets the transcription line of its number only when the form's files and transcription lines
    carry exactly the same line numbers (``match`` ``"number"``); where they differ (a line or a file missing, so
    numbers would shift the text onto the wrong ink) no line of the form gets a text here: each is left with
    ``text_note`` ``"line count"`` and the form's lines in ``form_text``, and
    :func:`inkground_lib.datasets.recorded_iamondb.iamondb_words` matches them by their lengths or skips them.
    ``whiteboard`` as in :func:`read_iamondb_strokes`. Files that break the
    format raise FormatError naming file and element; every file is read through the size check and the safe
    XML parser of the single-file readers (``max_bytes`` as in :func:`read_iamondb_strokes`). The quirks of
    :data:`IAM_QUIRKS` are handled by their rules and each is a warning; :func:`read_iamondb_report` reads a
    folder with broken files in it.
    """
    lines, report = _read_folder(Path(root), split, progress, max_bytes, whiteboard, tolerant=False)
    for kind in IAM_QUIRKS:
        found = [(f, m) for k, f, m in report.quirks if k == kind]
        for f, m in found[:5]:
            warnings.warn(f"IAM-OnDB: {f}: {m}" if f else f"IAM-OnDB: {m}", stacklevel=2)
        if len(found) > 5:
            warnings.warn(f"IAM-OnDB: {len(found) - 5} more of: {IAM_QUIRKS[kind]}", stacklevel=2)
    return lines


def read_iamondb_report(root: str | os.PathLike, split: Optional[str] = None, *, progress: bool = False,
                        max_bytes: Optional[int] = None,
                        whiteboard: str = "normalise") -> tuple[list[IamLine], IamReport]:
    """:func:`read_iamondb` for a copy with broken files in it: a file that cannot be read (truncated, not
    well-formed, over the size limit, refused) is recorded in the report with its reason and skipped, and the
    read goes on (a lost original xml leaves its form to forms.txt and ascii; a lost ascii file leaves its lines
    untranscribed). Quirks are recorded in the report (:data:`IAM_QUIRKS`), not warned. Errors that concern the
    whole request (no folder, no lineStrokes folder, a split that does not exist) still raise."""
    return _read_folder(Path(root), split, progress, max_bytes, whiteboard, tolerant=True)


def _read_folder(root: Path, split: Optional[str], progress: bool, max_bytes: Optional[int], whiteboard: str,
                 tolerant: bool) -> tuple[list[IamLine], IamReport]:
    if whiteboard not in WHITEBOARD_MODES:
        raise ValueError(f"whiteboard must be one of {WHITEBOARD_MODES}, got {whiteboard!r}")
    if not root.is_dir():
        raise FormatError(f"{root}: IAM-OnDB folder not found")
    strokes_dir = _first_dir(root, ["lineStrokes-all/lineStrokes", "lineStrokes"])
    if strokes_dir is None:
        raise FormatError(f"{root}: no lineStrokes-all/lineStrokes or lineStrokes folder")
    folder = _Folder(root, strokes_dir, split, max_bytes, tolerant)
    per_form = folder.read_line_files(whiteboard, progress)
    lines = [ln for form, entries in sorted(per_form.items()) for ln in folder.form_lines(form, entries)]
    lines.sort(key=lambda ln: ln.id)
    folder.report_writers()
    return lines, folder.report


class _Folder:
    """One IAM-OnDB folder being read: where its parts are, what has been read of them (each file once), and the
    report of what was found, read and failed."""

    def __init__(self, root: Path, strokes_dir: Path, split: Optional[str], max_bytes: Optional[int],
                 tolerant: bool):
        self.strokes_dir, self.max_bytes, self.tolerant = strokes_dir, max_bytes, tolerant
        self.report = IamReport(str(root))
        self.original_dirs = [d for d in (root / "original-xml-part/original", root / "original-xml-all/original",
                                          root / "original") if d.is_dir()]
        self.ascii_dir = _first_dir(root, ["ascii-all/ascii", "ascii"])
        self.forms_file = _first_file(root, ["forms.txt", "data/forms.txt"])
        self.writers_file = _first_file(root, ["writers.xml", "data/writers.xml"])
        self.forms_map = ((self.attempt(read_iamondb_forms, self.forms_file, max_bytes=max_bytes) or {})
                          if self.forms_file else {})
        self.writers = (self.attempt(read_iamondb_writers, self.writers_file, max_bytes=max_bytes)
                        if self.writers_file else None)
        self.keep = iamondb_split_ids(root, split, max_bytes=max_bytes) if split else None
        self.forms_cache: dict[Path, list[IamForm]] = {}
        self.ascii_cache: dict[Path, Optional[dict]] = {}
        self.conflicts: dict = {}
        self.unknown: dict = {}

    def attempt(self, fn, *args, **kw):
        """fn(...), or None with the failure recorded (tolerant) / raised (strict)."""
        try:
            return fn(*args, **kw)
        except FormatError as e:
            if not self.tolerant:
                raise
            msg = str(e)
            where = str(args[0]) if args else ""
            self.report.files_failed.append((where, msg[len(where) + 2:] if msg.startswith(where + ": ") else msg))
            return None

    def read_form(self, f: Path) -> Optional[IamForm]:
        fm = self.attempt(read_iamondb_original, f, max_bytes=self.max_bytes)
        placed = _form_from_path(f)
        if fm is not None and placed and fm.id and fm.id != placed:
            self.report.quirk("form id", f, f"<Form id={fm.id!r}> names another form than its folder and file, "
                                            f"{placed} ({f.parent.name}/{f.name}): read as {placed}")
            fm = _rebase_form(fm, placed)
        return fm

    def forms_in(self, sub: Path) -> list[IamForm]:
        out = []
        for od in self.original_dirs:
            d = od / sub
            if d not in self.forms_cache:
                self.forms_cache[d] = ([fm for fm in (self.read_form(f) for f in sorted(d.glob("*.xml")))
                                        if fm is not None] if d.is_dir() else [])
            out.extend(self.forms_cache[d])
        return out

    def ascii_lines(self, af: Path) -> Optional[dict]:
        if af not in self.ascii_cache:
            self.ascii_cache[af] = (self.attempt(read_iamondb_ascii, af, max_bytes=self.max_bytes) if af.is_file()
                                    else None)
        return self.ascii_cache[af]

    def read_line_files(self, whiteboard: str, progress: bool) -> dict[str, list]:
        """{form: [(line id, file, (ink, whiteboard) or None where the file could not be read)]} of the line
        files in the split; a broken file is reported as such, and still counts as one of the form's lines."""
        from inkground_lib.core.progress import bar as progress_bar

        report = self.report
        per_form: dict[str, list] = {}
        for f in progress_bar(sorted(self.strokes_dir.rglob("*.xml")), desc="IAM-OnDB lines", enabled=progress):
            lid = f.stem
            m = _LINE_ID.match(lid)
            if not m:
                continue  # not a line file
            form = f"{m.group(1)}-{m.group(2)}{m.group(3)}"
            if self.keep is not None and form not in self.keep and lid not in self.keep:
                continue
            report.files_found += 1
            got = self.attempt(read_line, f, self.max_bytes, whiteboard)
            per_form.setdefault(form, []).append((lid, f, got))
            if got is None:
                continue
            report.files_read += 1
            ink = got[0]
            dots = sum(len(s) == 1 for s in ink.strokes)
            back = sum(bool((np.diff(s[:, 2]) < 0).any()) for s in ink.strokes)
            report.single_point_strokes += dots
            if back:
                report.strokes_time_backwards += back
                report.lines_time_backwards += 1
                report.quirk("time backwards", f, f"point times run backwards in {back} of {len(ink)} strokes: "
                                                  "the file's point order is kept")
        return per_form

    def form_writer(self, form: str, sub: Path) -> tuple:
        """The form's writer and where it comes from, and its transcription lines ({line id: text}, from ONE
        source: the original xml, else the ascii file) with that source and where in it."""
        writer = source = form_file = None
        transcribed: Optional[dict] = None
        text_source = where = None
        for fm in self.forms_in(sub):
            mine = {k: t for k, t in fm.lines.items() if k.startswith(form + "-")}
            if fm.writer and writer is None and (mine or fm.id == form):
                writer, source, form_file = fm.writer, "original-xml", fm.path
            if mine and transcribed is None:
                transcribed, text_source, where = mine, "original-xml", f"{fm.path} <Transcription>"
        listed = self.forms_map.get(form)
        if writer is None and listed is not None:
            writer, source = listed, "forms.txt"
        elif writer is not None and listed is not None and listed != writer:
            self.conflicts[form] = (writer, form_file, listed)
        if transcribed is None and self.ascii_dir is not None:
            af = self.ascii_dir / sub / f"{form}.txt"
            asc = self.ascii_lines(af)
            if asc:
                transcribed, text_source, where = dict(asc), "ascii", f"{af} CSR:"
        return writer, source, transcribed, text_source, where

    def form_lines(self, form: str, entries: list) -> list[IamLine]:
        """The lines read of one form, each with its writer and, where the form's files and transcription lines
        carry the same numbers, its text."""
        report = self.report
        sub = entries[0][1].parent.relative_to(self.strokes_dir)
        writer, source, transcribed, text_source, where = self.form_writer(form, sub)
        info = {}
        if self.writers is not None and writer is not None:
            if writer in self.writers:
                info = self.writers[writer]
            else:
                self.unknown.setdefault(writer, form)
        ids = [lid for lid, _, _ in entries]
        by_number = transcribed is not None and set(ids) == set(transcribed)
        if transcribed is not None and not by_number:
            missing = sorted(set(ids) - set(transcribed))
            unused = sorted(set(transcribed) - set(ids))
            report.quirk("line count", where,
                         f"form {form}: {len(ids)} lineStrokes file(s), {len(transcribed)} transcription line(s); "
                         "not matched by number" + (f"; files without a line of that number: {', '.join(missing)}"
                                                    if missing else "")
                         + (f"; lines without a file of that number: {', '.join(unused)}" if unused else ""))
        form_text = tuple(sorted(transcribed.items())) if transcribed is not None else ()
        lines = []
        for lid, f, got in entries:
            if got is None:
                continue
            ink, wb = got
            text, note, src = None, None, None
            if transcribed is None:
                note = "no transcription"
            elif not by_number:
                note = "line count"
            else:
                text, src = transcribed[lid], text_source
                if is_placeholder_transcription(text):
                    report.quirk("placeholder", f, f"transcribed as the placeholder {text.strip()!r}: untranscribed")
                    text, note = None, "placeholder"
            lines.append(IamLine(lid, form, writer, text, ink, f, source, info, wb, note, src,
                                 "number" if text is not None else None, form_text, text_source))
        return lines

    def report_writers(self) -> None:
        """The writer quirks, once every form is read: a form whose two sources name different writers, writer
        ids the writers file does not hold."""
        for form, (w, fp, listed) in sorted(self.conflicts.items()):
            self.report.quirk("writer", None, f"form {form}: writer {w} in {fp} <Form writerID>, {listed} in "
                                              f"{self.forms_file}; {w} (the original xml) is used")
        if self.unknown:
            some = ", ".join(f"{w} (form {fm})" for w, fm in sorted(self.unknown.items())[:5])
            self.report.quirk("unknown writer", self.writers_file, f"{len(self.unknown)} writer id(s) of the forms "
                                                                   f"are not in it: {some}"
                              + (" ..." if len(self.unknown) > 5 else ""))
