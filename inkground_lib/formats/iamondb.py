"""IAM-OnDB: lineStrokes XML, original-xml forms, ascii transcriptions and split files."""

from __future__ import annotations

import math
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from inkground_lib.core.dataset import check_file_size
from inkground_lib.core.defaults import MAX_INK_FILE_BYTES, MAX_INK_FILE_ENV
from inkground_lib.core.ink import Ink
from inkground_lib.formats.xmlsafe import (
    FormatError,
    finite_number,
    local_name,
    parse_xml,
)


@dataclass
class IamLine:
    """One IAM-OnDB text line: ``id`` like ``a01-000u-01``, ``form`` like ``a01-000u``, ``writer`` the
    writerID of the original-xml form (None where unknown), ``text`` the transcription (original xml, else
    ascii CSR; None where neither has it), ``ink`` in whiteboard units (y down as in the file, t in ms from
    the line's first point), ``path`` the lineStrokes file."""

    id: str
    form: str
    writer: Optional[str]
    text: Optional[str]
    ink: Ink
    path: Path


def _num(el: ET.Element, key: str, where: str) -> float:
    v = el.get(key)
    if v is None:
        raise FormatError(f"{where}: attribute {key} is missing")
    return finite_number(v, where, f"attribute {key}={v!r}")


def read_iamondb_strokes(path: str | os.PathLike, *, max_bytes: Optional[int] = None) -> Ink:
    """Read an IAM-OnDB lineStrokes (or original) XML file's ``StrokeSet`` into an Ink.

    x, y in whiteboard units as in the file (sensor corner top-left, y down); t = (time - first time) in ms.
    Parsed by :func:`~inkground_lib.formats.xmlsafe.parse_xml` (no DTDs or entities; at most ``max_bytes``
    bytes, default MAX_INK_FILE_BYTES or $INKGROUND_MAX_INK_FILE_MB in MiB).
    """
    path = Path(path)
    root = parse_xml(path, max_bytes=max_bytes)
    if local_name(root.tag) != "WhiteboardCaptureSession":
        raise FormatError(f"{path}: root element is <{local_name(root.tag)}>, expected <WhiteboardCaptureSession>")
    sets = [el for el in root if local_name(el.tag) == "StrokeSet"]
    if not sets:
        raise FormatError(f"{path}: <WhiteboardCaptureSession>: no <StrokeSet> element")
    strokes = []
    for si, st in enumerate(el for el in sets[0] if local_name(el.tag) == "Stroke"):
        where_s = f"{path}: <Stroke> #{si}"
        pts = []
        for pi, p in enumerate(el for el in st if local_name(el.tag) == "Point"):
            where = f"{where_s} <Point> #{pi}"
            pts.append((_num(p, "x", where), _num(p, "y", where),
                        _num(p, "time", where) if p.get("time") is not None else math.nan))
        if pts:
            strokes.append(np.asarray(pts, dtype=np.float64))
    if not strokes:
        raise FormatError(f"{path}: <StrokeSet>: no <Stroke> with <Point>s")
    t0 = next((float(s[0, 2]) for s in strokes if np.isfinite(s[0, 2])), math.nan)
    for s in strokes:
        s[:, 2] = np.round((s[:, 2] - t0) * 1000.0, 3)
    return Ink(tuple(strokes))


@dataclass
class IamForm:
    """An IAM-OnDB original-xml form: ``id`` (Form id), ``writer`` (Form writerID; None if absent) and
    ``lines`` {line id: transcription text}."""

    id: Optional[str]
    writer: Optional[str]
    lines: dict
    path: Path


def read_iamondb_original(path: str | os.PathLike, *, max_bytes: Optional[int] = None) -> IamForm:
    """Read an IAM-OnDB original-xml file: ``General/Form(id, writerID)`` and ``Transcription/TextLine(id,
    text)``. Files of original-xml-all without a transcription or writer give an empty ``lines`` / None.
    Parsed by :func:`~inkground_lib.formats.xmlsafe.parse_xml` (no DTDs or entities; size limit
    ``max_bytes`` as in :func:`read_iamondb_strokes`)."""
    path = Path(path)
    root = parse_xml(path, max_bytes=max_bytes)
    if local_name(root.tag) != "WhiteboardCaptureSession":
        raise FormatError(f"{path}: root element is <{local_name(root.tag)}>, expected <WhiteboardCaptureSession>")
    form_id = writer = None
    for gen in (el for el in root if local_name(el.tag) == "General"):
        for form in (el for el in gen if local_name(el.tag) == "Form"):
            form_id = form.get("id")
            writer = form.get("writerID")
    lines = {}
    for tr in (el for el in root if local_name(el.tag) == "Transcription"):
        for i, tl in enumerate(el for el in tr if local_name(el.tag) == "TextLine"):
            lid, text = tl.get("id"), tl.get("text")
            if lid is None or text is None:
                raise FormatError(f"{path}: <Transcription> <TextLine> #{i}: attribute "
                                  f"{'id' if lid is None else 'text'} is missing")
            lines[lid] = text
    return IamForm(form_id, writer, lines, path)


def _check_size(path: Path, max_bytes: Optional[int], what: str) -> None:
    check_file_size(path, max_bytes, MAX_INK_FILE_BYTES, MAX_INK_FILE_ENV, FormatError, what)


def read_iamondb_ascii(path: str | os.PathLike, *, max_bytes: Optional[int] = None) -> dict:
    """Read an IAM-OnDB ascii file: the lines under ``CSR:`` as {``<form>-<k:02d>``: text}, k from 1.
    At most ``max_bytes`` bytes (as in :func:`read_iamondb_strokes`), checked before reading."""
    path = Path(path)
    _check_size(path, max_bytes, "an IAM-OnDB ascii file")
    try:
        raw = path.read_text("latin-1")
    except OSError as e:
        raise FormatError(f"{path}: cannot be read ({e.strerror or e})") from None
    m = re.search(r"^\s*CSR:\s*$", raw, re.MULTILINE)
    if not m:
        raise FormatError(f"{path}: no 'CSR:' section")
    lines = [ln.strip() for ln in raw[m.end():].splitlines() if ln.strip()]
    return {f"{path.stem}-{k + 1:02d}": t for k, t in enumerate(lines)}


_LINE_ID = re.compile(r"^([a-z]\d\d)-(\d\d\d)([a-z]?)-(\d\d)$")


def _first_dir(root: Path, candidates: Sequence[str]) -> Optional[Path]:
    for c in candidates:
        p = root / c
        if p.is_dir():
            return p
    return None


def iamondb_split_ids(root: str | os.PathLike, split: str, *, max_bytes: Optional[int] = None) -> set[str]:
    """Form (or line) ids listed in an IAM-OnDB task file: ``split`` is a path to it, or a name such as
    ``trainset``, ``testset_v``, ``testset_t``, ``testset_f`` looked up in ``root`` and ``root/task1``.
    At most ``max_bytes`` bytes (as in :func:`read_iamondb_strokes`), checked before reading."""
    root = Path(root)
    p = Path(split)
    if not p.is_file():
        name = split if split.endswith(".txt") else f"{split}.txt"
        cands = [root / name, root / "task1" / name]
        p = next((c for c in cands if c.is_file()), None)
        if p is None:
            raise FormatError(f"{root}: split {split!r}: none of {[str(c) for c in cands]} exists")
    _check_size(p, max_bytes, "an IAM-OnDB split file")
    try:
        text = p.read_text("latin-1")
    except OSError as e:
        raise FormatError(f"{p}: cannot be read ({e.strerror or e})") from None
    return {ln.strip() for ln in text.splitlines() if ln.strip()}


def read_iamondb(root: str | os.PathLike, split: Optional[str] = None, *, progress: bool = False,
                 max_bytes: Optional[int] = None) -> list[IamLine]:
    """Read every line of an IAM-OnDB folder, sorted by line id.

    ``root`` holds ``lineStrokes-all/lineStrokes`` (or ``lineStrokes``), and optionally
    ``original-xml-part/original``, ``original-xml-all/original`` (or ``original``) for writer ids and
    transcriptions, and ``ascii-all/ascii`` (or ``ascii``) for transcriptions. ``split`` keeps only the
    forms / lines listed in that task file (see :func:`iamondb_split_ids`). Files that break the format raise
    FormatError naming file and element; every file is read through the size check and the safe XML parser
    of the single-file readers (``max_bytes`` as in :func:`read_iamondb_strokes`).
    """
    from tqdm.auto import tqdm

    root = Path(root)
    if not root.is_dir():
        raise FormatError(f"{root}: IAM-OnDB folder not found")
    strokes_dir = _first_dir(root, ["lineStrokes-all/lineStrokes", "lineStrokes"])
    if strokes_dir is None:
        raise FormatError(f"{root}: no lineStrokes-all/lineStrokes or lineStrokes folder")
    original_dirs = [d for d in (root / "original-xml-part/original", root / "original-xml-all/original",
                                 root / "original") if d.is_dir()]
    ascii_dir = _first_dir(root, ["ascii-all/ascii", "ascii"])
    keep = iamondb_split_ids(root, split, max_bytes=max_bytes) if split else None

    files = sorted(strokes_dir.rglob("*.xml"))
    forms_cache: dict[Path, list[IamForm]] = {}
    ascii_cache: dict[Path, dict] = {}

    def forms_in(sub: Path) -> list[IamForm]:
        out = []
        for od in original_dirs:
            d = od / sub
            if d not in forms_cache:
                forms_cache[d] = ([read_iamondb_original(f, max_bytes=max_bytes) for f in sorted(d.glob("*.xml"))]
                                  if d.is_dir() else [])
            out.extend(forms_cache[d])
        return out

    lines = []
    for f in tqdm(files, desc="IAM-OnDB lines", disable=not progress):
        lid = f.stem
        m = _LINE_ID.match(lid)
        if not m:
            continue  # not a line file
        form = f"{m.group(1)}-{m.group(2)}{m.group(3)}"
        if keep is not None and form not in keep and lid not in keep:
            continue
        ink = read_iamondb_strokes(f, max_bytes=max_bytes)
        sub = f.parent.relative_to(strokes_dir)
        writer = text = None
        for fm in forms_in(sub):
            if lid in fm.lines or fm.id == form:
                writer = writer or fm.writer
            if text is None and lid in fm.lines:
                text = fm.lines[lid]
                writer = fm.writer or writer
        if text is None and ascii_dir is not None:
            af = ascii_dir / sub / f"{form}.txt"
            if af.is_file():
                if af not in ascii_cache:
                    ascii_cache[af] = read_iamondb_ascii(af, max_bytes=max_bytes)
                text = ascii_cache[af].get(lid)
        lines.append(IamLine(lid, form, writer, text, ink, f))
    return lines
