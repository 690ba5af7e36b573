"""IAM-OnDB's lineStrokes XML: one line's strokes (x, y, time) and the WhiteboardDescription that frames them."""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from inkground_lib.core.ink import Ink
from inkground_lib.formats.xmlsafe import (
    FormatError,
    finite_number,
    local_name,
    parse_xml,
)


#: how :func:`read_iamondb_strokes` applies the ``WhiteboardDescription``
WHITEBOARD_MODES = ("normalise", "check", "ignore")


@dataclass(frozen=True)
class IamWhiteboard:
    """A ``WhiteboardDescription``: the corner the eBeam sensor sat in (``SensorLocation corner``) and the
    whiteboard's three other corners in the sensor's units (``DiagonallyOppositeCoords`` and so on, each (x, y)).

    With the sensor top-left, the corner below it (vertically opposite) gives the board's left edge and bottom,
    the corner right of it (horizontally opposite) its right edge and top, the diagonal one the bottom-right;
    ``origin`` is the board's top-left corner (left edge x, top edge y)."""

    corner: str
    diagonal: tuple[float, float]
    vertical: tuple[float, float]
    horizontal: tuple[float, float]

    @property
    def origin(self) -> tuple[float, float]:
        return (self.vertical[0], self.horizontal[1])

    @property
    def size(self) -> tuple[float, float]:
        """(width, height) of the board in sensor units."""
        return (self.diagonal[0] - self.vertical[0], self.diagonal[1] - self.horizontal[1])


@dataclass
class IamLine:
    """One IAM-OnDB text line: ``id`` like ``a01-000u-01``, ``form`` like ``a01-000u``, ``writer`` the form's
    writer id (original-xml ``Form writerID``, else the forms.txt listing; None where neither has the form),
    ``text`` the transcription (original xml, else ascii CSR; entities such as ``&quot;`` unescaped; None where
    neither has it or it is a placeholder, ``text_note`` saying which), ``ink`` in whiteboard units (y down as in the file; by default shifted so the whiteboard's
    top-left corner is (0, 0), see :func:`read_iamondb_strokes`; t in ms from the line's first point), ``path``
    the lineStrokes file, ``writer_source`` where the writer id came from (``"original-xml"``, ``"forms.txt"``
    or None), ``writer_info`` the writer's entry in writers.xml ({} when absent), ``whiteboard`` the file's
    WhiteboardDescription (None when it has none)."""

    id: str
    form: str
    writer: Optional[str]
    text: Optional[str]
    ink: Ink
    path: Path
    writer_source: Optional[str] = None
    writer_info: dict = field(default_factory=dict)
    whiteboard: Optional[IamWhiteboard] = None
    text_note: Optional[str] = None
    """Why ``text`` is None: ``"placeholder"`` (the transcription is the recording tool's placeholder, see
    :func:`is_placeholder_transcription`), ``"line count"`` (the form's lineStrokes files and its transcription
    lines are not the same line numbers: no line of the form is matched by number, see :func:`read_iamondb`),
    ``"no transcription"`` (no source transcribes the form)."""
    text_source: Optional[str] = None
    """Where ``text`` came from: ``"original-xml"`` or ``"ascii"`` (None without text)."""
    match: Optional[str] = None
    """How ``text`` was matched to this file: ``"number"`` (the form's files and lines have the same numbers)."""
    form_text: tuple = ()
    """The form's transcription lines as ((line id, text), ...), from the one source read for the form (empty
    when none transcribes it): what a caller that matches lines by another rule needs."""
    form_text_source: Optional[str] = None
    """Where ``form_text`` came from (``"original-xml"`` / ``"ascii"``)."""


def _num(el: ET.Element, key: str, where: str) -> float:
    v = el.get(key)
    if v is None:
        raise FormatError(f"{where}: attribute {key} is missing")
    return finite_number(v, where, f"attribute {key}={v!r}")


def session_root(path: Path, max_bytes: Optional[int]) -> ET.Element:
    root = parse_xml(path, max_bytes=max_bytes)
    if local_name(root.tag) != "WhiteboardCaptureSession":
        raise FormatError(f"{path}: root element is <{local_name(root.tag)}>, expected <WhiteboardCaptureSession>")
    return root


# WhiteboardDescription: public readers of lineStrokes files (checked 2026-11-30) take the three corners as the
# board's extent: hardmaru/write-rnn-tensorflow utils.py (DataLoader.preprocess) subtracts the smallest x and y of
# WhiteboardDescription's children 1..3 from every point; X-rayLaser/pytorch-handwriting-synthesis-toolkit
# iam_ondb/_line_strokes.py reads SensorLocation corner and the three *OppositeCoords (x, y). Every published
# sample has SensorLocation corner="top_left" (e.g. a01-000u-01.xml as quoted in the pywritesmooth README:
# DiagonallyOppositeCoords x="6512" y="1376", VerticallyOppositeCoords x="966" y="1376",
# HorizontallyOppositeCoords x="6512" y="787"), and no public reader handles another corner, so another value is
# refused rather than guessed.
_CORNERS = ("DiagonallyOppositeCoords", "VerticallyOppositeCoords", "HorizontallyOppositeCoords")


def _whiteboard(root: ET.Element, path: Path) -> Optional[IamWhiteboard]:
    descs = [el for el in root if local_name(el.tag) == "WhiteboardDescription"]
    if not descs:
        return None
    desc = descs[0]
    where = f"{path}: <WhiteboardDescription>"
    kids = {}
    for el in desc:
        kids.setdefault(local_name(el.tag), el)
    loc = kids.get("SensorLocation")
    if loc is None:
        raise FormatError(f"{where}: no <SensorLocation> element")
    corner = loc.get("corner")
    if corner is None:
        raise FormatError(f"{where} <SensorLocation>: attribute corner is missing")
    if corner != "top_left":
        raise FormatError(f"{where} <SensorLocation>: attribute corner={corner!r} is not understood (only "
                          "'top_left', the value of every published IAM-OnDB file, is read)")
    pts = []
    for name in _CORNERS:
        el = kids.get(name)
        if el is None:
            raise FormatError(f"{where}: no <{name}> element")
        pts.append((_num(el, "x", f"{where} <{name}>"), _num(el, "y", f"{where} <{name}>")))
    wb = IamWhiteboard(corner, *pts)
    # the check: with the sensor top-left, the board lies right of and below it: the diagonal corner right of
    # the vertically opposite one (x grows rightwards), the vertically opposite corner below the horizontally
    # opposite one (y grows downwards); a description that says otherwise is refused, not flipped
    if not wb.diagonal[0] > wb.vertical[0]:
        raise FormatError(f"{where} <DiagonallyOppositeCoords>: x={wb.diagonal[0]:g} is not right of "
                          f"<VerticallyOppositeCoords> x={wb.vertical[0]:g} (sensor corner top_left)")
    if not wb.vertical[1] > wb.horizontal[1]:
        raise FormatError(f"{where} <VerticallyOppositeCoords>: y={wb.vertical[1]:g} is not below "
                          f"<HorizontallyOppositeCoords> y={wb.horizontal[1]:g} (sensor corner top_left)")
    return wb


def read_iamondb_whiteboard(path: str | os.PathLike, *, max_bytes: Optional[int] = None) -> Optional[IamWhiteboard]:
    """The ``WhiteboardDescription`` of an IAM-OnDB lineStrokes or original-xml file, checked (see
    :func:`read_iamondb_strokes`), or None when the file has none. Size limit as in :func:`read_iamondb_strokes`."""
    path = Path(path)
    return _whiteboard(session_root(path, max_bytes), path)


def _strokes(root: ET.Element, path: Path) -> Ink:
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


def read_line(path: Path, max_bytes: Optional[int], whiteboard: str) -> tuple[Ink, Optional[IamWhiteboard]]:
    if whiteboard not in WHITEBOARD_MODES:
        raise ValueError(f"whiteboard must be one of {WHITEBOARD_MODES}, got {whiteboard!r}")
    root = session_root(path, max_bytes)
    wb = _whiteboard(root, path) if whiteboard != "ignore" else None
    ink = _strokes(root, path)
    if wb is not None and whiteboard == "normalise":
        ox, oy = wb.origin
        ink = Ink(tuple(np.column_stack([s[:, 0] - ox, s[:, 1] - oy, s[:, 2]]) for s in ink.strokes))
    return ink, wb


def read_iamondb_strokes(path: str | os.PathLike, *, max_bytes: Optional[int] = None,
                         whiteboard: str = "normalise") -> Ink:
    """Read an IAM-OnDB lineStrokes (or original) XML file's ``StrokeSet`` into an Ink.

    x, y in whiteboard units, y down as in the file; t = (time - first time) in ms. ``whiteboard``:
    ``"normalise"`` (default) checks the file's ``WhiteboardDescription`` and shifts x, y so that the board's
    top-left corner is (0, 0) (the sensor's origin is wherever the sensor was clipped, so raw coordinates of
    different sessions do not share a frame; units and orientation are kept); ``"check"`` checks it and keeps
    the file's coordinates; ``"ignore"`` does neither. The check: ``SensorLocation corner`` is ``top_left`` and
    the three opposite corners put the board right of and below the sensor (x right, y down); anything else
    raises FormatError naming the element and attribute. A file without a WhiteboardDescription is read as is.
    Parsed by :func:`~inkground_lib.formats.xmlsafe.parse_xml` (no DTDs or entities; at most ``max_bytes``
    bytes, default MAX_INK_FILE_BYTES or $INKGROUND_MAX_INK_FILE_MB in MiB).
    """
    return read_line(Path(path), max_bytes, whiteboard)[0]
