"""Ink file formats: W3C InkML (read and write), IAM-OnDB XML (read), UNIPEN-derived JSON (read).

Conventions (see :mod:`inkground_lib.ink`): an ink is a tuple of strokes, each a float64 (n, 3) array of
x, y, t. Readers keep the file's own coordinate units and orientation (IAM-OnDB whiteboard units and the
UNIPEN JSON's tablet units both have y growing downwards, like page pixels); t is in milliseconds, NaN where
the file has no time.

Every reader raises :class:`FormatError` naming the file and the element / record / field at fault. XML is
parsed with :mod:`xml.etree.ElementTree` after refusing any DOCTYPE or ENTITY declaration (no entity
expansion attacks); defusedxml is used instead where it is installed. Nothing is ever evaluated or unpickled.

InkML (https://www.w3.org/TR/InkML/)
    :func:`write_inkml` writes one ``traceGroup`` per word (``xml:id`` = word id, ``<annotation
    type="truth">`` = word text), traces as ``"x y t, x y t, ..."`` under a ``traceFormat`` declaring
    X, Y and T (T in ms; left out when no point has a time; an *intermittent* channel written as ``?`` where
    only some points have one). :func:`read_inkml` reads such files and standard InkML written by other tools:
    a ``traceFormat`` directly under ``ink`` or in a ``context`` (one in ``definitions`` applies where a
    ``contextRef`` names its context; X Y when there is none), traces with or without T (``units="s"`` is converted to ms),
    difference-encoded values (``'`` first and ``"`` second differences, ``!`` explicit), ``?`` (unknown -> NaN) and ``*`` (repeat),
    ``traceGroup``s holding traces directly or through ``traceView traceDataRef`` (CROHME style), and bare
    traces (returned together as one group with id None).

IAM-OnDB (https://fki.tic.heia-fr.ch/databases/iam-on-line-handwriting-database)
    ``lineStrokes/a01/a01-000/a01-000u-01.xml``: ``WhiteboardCaptureSession/StrokeSet/Stroke(start_time,
    end_time)/Point(x, y, time)``, times in seconds. ``original/a01/a01-000/strokesu.xml`` (original-xml-part or
    -all): ``WhiteboardCaptureSession/General/Form(id, writerID)`` and ``Transcription/TextLine(id, text)``.
    ``ascii/a01/a01-000/a01-000u.txt``: the line texts under ``CSR:``, line k of the form is ``<form>-<k:02d>``.
    IAM-OnDB is line-level: words need segmentation (:func:`segment_line_words`).

UNIPEN-derived JSON (``shared/data/unipen_cursive/``)
    ``{"meta": {...}, "samples": [{"id", "writer_id", "contributor", "text", "style", "points_per_second",
    "points_per_inch", "strokes": [[[x, y, t_ms], ...], ...]}]}``, tablet units, y down.
"""

from __future__ import annotations

import json
import math
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

import numpy as np

from .files import atomic_write_text
from .ink import Ink, InkError, as_ink

INKML_NS = "http://www.w3.org/2003/InkML"
XML_ID = "{http://www.w3.org/XML/1998/namespace}id"


class FormatError(ValueError):
    """A file that cannot be read in the format it claims; the message names file and element / field."""


# ============================================================================================ safe XML

def _parse_xml(path: Path) -> ET.Element:
    """Parse an XML file safely: DOCTYPE / ENTITY declarations are refused (or defusedxml is used)."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise FormatError(f"{path}: cannot be read ({e.strerror or e})") from None
    try:
        import defusedxml.ElementTree as DET  # type: ignore
    except ImportError:
        DET = None
    if DET is not None:
        try:
            return DET.fromstring(data, forbid_dtd=True)
        except ET.ParseError as e:
            raise FormatError(f"{path}: not well-formed XML ({e})") from None
        except Exception as e:  # defusedxml's DTDForbidden / EntitiesForbidden
            raise FormatError(f"{path}: refused: {type(e).__name__} ({e})") from None
    probe = data
    for bom, enc in ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
                     (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if data.startswith(bom):
            probe = data.decode(enc, errors="replace").encode("utf-8")
            break
    m = re.search(rb"<!\s*(DOCTYPE|ENTITY)", probe, re.IGNORECASE)
    if m:
        raise FormatError(f"{path}: refused: the file declares <!{m.group(1).decode().upper()} ...> "
                          "(DTDs and entities are not accepted, to rule out entity expansion)")
    try:
        return ET.fromstring(data)
    except ET.ParseError as e:
        raise FormatError(f"{path}: not well-formed XML ({e})") from None


def _local(tag) -> str:
    """Tag name without namespace ('{ns}trace' -> 'trace'); comments / PIs give ''."""
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]


def _xml_id(el: ET.Element) -> Optional[str]:
    return el.get(XML_ID) or el.get("id")


def _describe(el: ET.Element, index: Optional[int] = None) -> str:
    name = _local(el.tag)
    i = _xml_id(el)
    s = f"<{name}"
    if i is not None:
        s += f' id="{i}"'
    s += ">"
    if index is not None:
        s += f" #{index}"
    return s


# ============================================================================================ InkML

@dataclass
class InkMLGroup:
    """One group of traces read from InkML: a ``traceGroup`` (``id`` its xml:id, ``text`` its
    ``annotation type="truth"``) or, with ``id`` None, the document's bare traces. ``ink`` is in the file's
    units (t in ms, NaN where the file has no T); ``annotations`` holds every ``annotation`` by type."""

    id: Optional[str]
    text: Optional[str]
    ink: Ink
    annotations: dict = field(default_factory=dict)


@dataclass(frozen=True)
class _Channels:
    regular: tuple[str, ...] = ("X", "Y")
    intermittent: tuple[str, ...] = ()
    t_scale: float = 1.0  # multiply T values by this to get ms


_DEFAULT_CHANNELS = _Channels()
_T_UNITS = {"ms": 1.0, "s": 1000.0, "sec": 1000.0, "us": 1e-3, "µs": 1e-3, "ns": 1e-6, "min": 60000.0}


def _channels_of(tf: ET.Element, where: str) -> _Channels:
    regular, inter, t_scale = [], [], 1.0

    def add(ch: ET.Element, into: list):
        nonlocal t_scale
        name = ch.get("name")
        if not name:
            raise FormatError(f"{where}: {_describe(ch)}: channel without a name attribute")
        into.append(name)
        if name == "T":
            units = (ch.get("units") or "ms").strip()
            if units not in _T_UNITS:
                raise FormatError(f"{where}: {_describe(ch)}: T units {units!r} not understood "
                                  f"(expected one of {sorted(_T_UNITS)})")
            t_scale = _T_UNITS[units]

    for child in tf:
        n = _local(child.tag)
        if n == "channel":
            add(child, regular)
        elif n in ("regularChannels", "intermittentChannels"):
            for ch in child:
                if _local(ch.tag) == "channel":
                    add(ch, regular if n == "regularChannels" else inter)
    if not regular:
        raise FormatError(f"{where}: {_describe(tf)}: traceFormat declares no channel")
    for need in ("X", "Y"):
        if need not in regular:
            raise FormatError(f"{where}: {_describe(tf)}: traceFormat has no regular channel {need} "
                              f"(channels: {regular + inter})")
    return _Channels(tuple(regular), tuple(inter), t_scale)


_TOKEN = re.compile(r"""\s*([!'"]?)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|\?|\*|T|F)""")


def _parse_trace(text: str, ch: _Channels, where: str) -> np.ndarray:
    """Parse a trace's text into an (n, 3) x, y, t array (t NaN where absent or '?')."""
    names = list(ch.regular) + list(ch.intermittent)
    nreg, nall = len(ch.regular), len(names)
    ix, iy = names.index("X"), names.index("Y")
    it = names.index("T") if "T" in names else None
    mode = ["!"] * nall
    prev = [math.nan] * nall
    vel = [0.0] * nall
    rows = []
    chunks = (text or "").split(",")
    if len(chunks) == 1 and not chunks[0].strip():
        return np.zeros((0, 3))
    for k, chunk in enumerate(chunks):
        pos, vals = 0, []
        chunk = chunk.rstrip()
        while pos < len(chunk):
            m = _TOKEN.match(chunk, pos)
            if not m or m.end() == pos:
                bad = chunk[pos:].strip()[:20]
                raise FormatError(f"{where}: point {k}: cannot read value {bad!r}")
            vals.append((m.group(1), m.group(2)))
            pos = m.end()
        if not vals:
            raise FormatError(f"{where}: point {k}: empty point (two commas in a row?)")
        if not (nreg <= len(vals) <= nall):
            raise FormatError(f"{where}: point {k}: {len(vals)} values, expected {nreg}"
                              + (f" to {nall}" if nall > nreg else "") + f" (channels {' '.join(names)})")
        row = [math.nan] * nall
        for c, (prefix, tok) in enumerate(vals):
            if prefix:
                mode[c] = prefix
            if tok == "?":
                row[c] = math.nan
                continue
            if tok == "*":
                row[c] = prev[c]
                continue
            v = 1.0 if tok == "T" else 0.0 if tok == "F" else float(tok)
            if mode[c] == "!" or k == 0 or math.isnan(prev[c]):
                row[c] = v
                vel[c] = 0.0
            elif mode[c] == "'":
                vel[c] = v
                row[c] = prev[c] + v
            else:  # '"': second difference
                vel[c] = vel[c] + v
                row[c] = prev[c] + vel[c]
        for c in range(nall):
            if not math.isnan(row[c]):
                prev[c] = row[c]
        t = row[it] * ch.t_scale if it is not None else math.nan
        rows.append((row[ix], row[iy], t))
    arr = np.asarray(rows, dtype=np.float64).reshape(-1, 3)
    bad = ~np.isfinite(arr[:, :2]).all(axis=1)
    if bad.any():
        raise FormatError(f"{where}: point {int(np.flatnonzero(bad)[0])}: X or Y is missing or not finite")
    return arr


def read_inkml(path: str | os.PathLike) -> list[InkMLGroup]:
    """Read an InkML file into groups of strokes (see the module doc). Raises FormatError naming the element."""
    path = Path(path)
    root = _parse_xml(path)
    if _local(root.tag) != "ink":
        raise FormatError(f"{path}: root element is <{_local(root.tag)}>, expected <ink>")

    formats: dict[str, _Channels] = {}
    contexts: dict[str, _Channels] = {}
    all_tf = [el for el in root.iter() if _local(el.tag) == "traceFormat"]
    for tf in all_tf:
        if _xml_id(tf):
            formats[_xml_id(tf)] = _channels_of(tf, str(path))

    def ref(v: Optional[str]) -> Optional[str]:
        return v[1:] if v and v.startswith("#") else v

    def context_channels(ctx: ET.Element, seen=()) -> Optional[_Channels]:
        for child in ctx:
            if _local(child.tag) == "traceFormat":
                return _channels_of(child, str(path))
        r = ref(ctx.get("traceFormatRef"))
        if r:
            if r not in formats:
                raise FormatError(f"{path}: {_describe(ctx)}: traceFormatRef {r!r} names no traceFormat")
            return formats[r]
        r = ref(ctx.get("contextRef"))
        if r and r not in seen:
            target = next((c for c in root.iter() if _local(c.tag) == "context" and _xml_id(c) == r), None)
            if target is None:
                raise FormatError(f"{path}: {_describe(ctx)}: contextRef {r!r} names no context")
            return context_channels(target, seen + (r,))
        return None

    for ctx in root.iter():
        if _local(ctx.tag) == "context" and _xml_id(ctx):
            chans = context_channels(ctx)
            if chans is not None:
                contexts[_xml_id(ctx)] = chans

    # as in the spec: X Y until a <traceFormat> or <context> child of <ink> (or of a traceGroup) sets another;
    # formats inside <definitions> apply only to traces / groups that name them through contextRef
    default = _DEFAULT_CHANNELS

    traces: dict[str, np.ndarray] = {}
    referenced: set[str] = set()
    groups: list[tuple[ET.Element, list]] = []  # (element, items: arrays or ('ref', id, el))
    bare: list[np.ndarray] = []
    counter = {"trace": 0}

    def trace_channels(el: ET.Element, current: _Channels) -> _Channels:
        r = ref(el.get("contextRef"))
        if r:
            if r not in contexts:
                raise FormatError(f"{path}: {_describe(el)}: contextRef {r!r} names no context with a traceFormat")
            return contexts[r]
        return current

    def read_trace(el: ET.Element, current: _Channels) -> np.ndarray:
        i = counter["trace"]
        counter["trace"] += 1
        where = f"{path}: {_describe(el, i)}"
        arr = _parse_trace(el.text or "", trace_channels(el, current), where)
        if _xml_id(el):
            traces[_xml_id(el)] = arr
        return arr

    def walk_group(el: ET.Element, current: _Channels) -> None:
        current = trace_channels(el, current)
        items = []
        for child in el:
            n = _local(child.tag)
            if n == "trace":
                items.append(read_trace(child, current))
            elif n == "traceView":
                r = ref(child.get("traceDataRef"))
                if not r:
                    # a traceView holding nested traceViews / traces: flatten one level
                    walk_group(child, current)
                    continue
                if child.get("from") or child.get("to"):
                    raise FormatError(f"{path}: {_describe(child)}: traceView from/to ranges are not supported")
                items.append(("ref", r, child))
            elif n == "traceGroup":
                walk_group(child, current)
            elif n == "context":
                current = context_channels(child) or current
            elif n == "traceFormat":
                current = _channels_of(child, str(path))
        if items:
            groups.append((el, items))

    current = default
    doc_annotations = {}
    for child in root:
        n = _local(child.tag)
        if n == "trace":
            bare.append((read_trace(child, current), child))
        elif n == "traceGroup":
            walk_group(child, current)
        elif n == "traceView":
            r = ref(child.get("traceDataRef"))
            if r:
                groups.append((child, [("ref", r, child)]))
            else:
                walk_group(child, current)
        elif n == "context":
            current = context_channels(child) or current
        elif n == "traceFormat":
            current = _channels_of(child, str(path))
        elif n == "annotation":
            doc_annotations[child.get("type") or ""] = (child.text or "").strip()

    out: list[InkMLGroup] = []
    for el, items in groups:
        strokes = []
        for it in items:
            if isinstance(it, tuple):
                _, r, view = it
                if r not in traces:
                    raise FormatError(f"{path}: {_describe(view)}: traceDataRef {r!r} names no trace")
                referenced.add(r)
                strokes.append(traces[r])
            else:
                strokes.append(it)
        ann = {}
        for a in el:
            if _local(a.tag) == "annotation":
                ann.setdefault(a.get("type") or "", (a.text or "").strip())
        try:
            ink = as_ink(strokes, f"{path}: {_describe(el)}")
        except InkError as e:
            raise FormatError(str(e)) from None
        out.append(InkMLGroup(_xml_id(el), ann.get("truth"), ink, ann))
    loose = [arr for arr, el in bare if not (_xml_id(el) and _xml_id(el) in referenced)]
    if loose:
        out.insert(0, InkMLGroup(None, doc_annotations.get("truth"), as_ink(loose, f"{path}: bare traces"),
                                 dict(doc_annotations)))
    return out


def _fmt(v: float, decimals: int) -> str:
    s = f"{v:.{decimals}f}"
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    if s in ("-0", ""):
        s = "0"
    return s


def write_inkml(path: str | os.PathLike,
                items: Mapping[str, Ink] | Iterable[tuple[str, Optional[str], Ink]],
                *, decimals: int = 2, document_annotations: Optional[Mapping[str, str]] = None) -> Path:
    """Write inks to an InkML file (atomically); returns the path.

    ``items`` is a mapping ``{id: ink}`` or a sequence of ``(id, text, ink)`` (text may be None). Each item
    becomes a ``traceGroup`` with ``xml:id`` = id and, if text is given, ``<annotation type="truth">``.
    Coordinates are written with ``decimals`` decimals (trailing zeros dropped), t in ms. The T channel is
    left out when no point has a time, regular when every point has one, and intermittent (``?`` for a
    missing time) otherwise. :func:`read_inkml` gives the inks back rounded to ``decimals``.
    """
    if isinstance(items, Mapping):
        rows = [(k, None, v) for k, v in items.items()]
    else:
        rows = []
        for i, it in enumerate(items):
            if not (isinstance(it, (tuple, list)) and len(it) == 3):
                raise ValueError(f"write_inkml: item {i}: expected (id, text, ink), got {type(it).__name__}")
            rows.append(tuple(it))
    inks, seen = [], set()
    for i, (wid, text, ink) in enumerate(rows):
        if not isinstance(wid, str) or not wid:
            raise ValueError(f"write_inkml: item {i}: id must be a non-empty string, got {wid!r}")
        if wid in seen:
            raise ValueError(f"write_inkml: item {i}: duplicate id {wid!r}")
        seen.add(wid)
        inks.append(as_ink(ink, f"write_inkml item {wid}"))
    ts = [s[:, 2] for ink in inks for s in ink.strokes]
    allt = np.concatenate(ts) if ts else np.zeros(0)
    has_t = bool(np.isfinite(allt).any())
    t_mode = "none" if not has_t else ("regular" if np.isfinite(allt).all() else "intermittent")

    ink_el = ET.Element("ink", {"xmlns": INKML_NS})
    ctx = ET.SubElement(ink_el, "context", {"xml:id": "ctx0"})
    tf = ET.SubElement(ctx, "traceFormat", {"xml:id": "tf0"})
    ET.SubElement(tf, "channel", {"name": "X", "type": "decimal"})
    ET.SubElement(tf, "channel", {"name": "Y", "type": "decimal"})
    if t_mode == "regular":
        ET.SubElement(tf, "channel", {"name": "T", "type": "decimal", "units": "ms"})
    elif t_mode == "intermittent":
        ic = ET.SubElement(tf, "intermittentChannels")
        ET.SubElement(ic, "channel", {"name": "T", "type": "decimal", "units": "ms"})
    for k, v in (document_annotations or {}).items():
        a = ET.SubElement(ink_el, "annotation", {"type": str(k)})
        a.text = str(v)
    for (wid, text, _), ink in zip(rows, inks):
        g = ET.SubElement(ink_el, "traceGroup", {"xml:id": wid})
        if text is not None:
            a = ET.SubElement(g, "annotation", {"type": "truth"})
            a.text = str(text)
        for j, s in enumerate(ink.strokes):
            pts = []
            for x, y, t in s:
                p = f"{_fmt(x, decimals)} {_fmt(y, decimals)}"
                if t_mode != "none":
                    p += " " + ("?" if not np.isfinite(t) else _fmt(t, decimals))
                pts.append(p)
            tr = ET.SubElement(g, "trace", {"xml:id": f"{wid}.t{j}"})
            tr.text = ", ".join(pts)
    ET.indent(ink_el, space=" ")
    text = '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(ink_el, encoding="unicode") + "\n"
    return atomic_write_text(path, text)


# ============================================================================================ IAM-OnDB

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
    try:
        f = float(v)
    except ValueError:
        raise FormatError(f"{where}: attribute {key}={v!r} is not a number") from None
    if not math.isfinite(f):
        raise FormatError(f"{where}: attribute {key}={v!r} is not finite")
    return f


def read_iamondb_strokes(path: str | os.PathLike) -> Ink:
    """Read an IAM-OnDB lineStrokes (or original) XML file's ``StrokeSet`` into an Ink.

    x, y in whiteboard units as in the file (sensor corner top-left, y down); t = (time - first time) in ms.
    """
    path = Path(path)
    root = _parse_xml(path)
    if _local(root.tag) != "WhiteboardCaptureSession":
        raise FormatError(f"{path}: root element is <{_local(root.tag)}>, expected <WhiteboardCaptureSession>")
    sets = [el for el in root if _local(el.tag) == "StrokeSet"]
    if not sets:
        raise FormatError(f"{path}: <WhiteboardCaptureSession>: no <StrokeSet> element")
    strokes = []
    for si, st in enumerate(el for el in sets[0] if _local(el.tag) == "Stroke"):
        where_s = f"{path}: <Stroke> #{si}"
        pts = []
        for pi, p in enumerate(el for el in st if _local(el.tag) == "Point"):
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


def read_iamondb_original(path: str | os.PathLike) -> IamForm:
    """Read an IAM-OnDB original-xml file: ``General/Form(id, writerID)`` and ``Transcription/TextLine(id,
    text)``. Files of original-xml-all without a transcription or writer give an empty ``lines`` / None."""
    path = Path(path)
    root = _parse_xml(path)
    if _local(root.tag) != "WhiteboardCaptureSession":
        raise FormatError(f"{path}: root element is <{_local(root.tag)}>, expected <WhiteboardCaptureSession>")
    form_id = writer = None
    for gen in (el for el in root if _local(el.tag) == "General"):
        for form in (el for el in gen if _local(el.tag) == "Form"):
            form_id = form.get("id")
            writer = form.get("writerID")
    lines = {}
    for tr in (el for el in root if _local(el.tag) == "Transcription"):
        for i, tl in enumerate(el for el in tr if _local(el.tag) == "TextLine"):
            lid, text = tl.get("id"), tl.get("text")
            if lid is None or text is None:
                raise FormatError(f"{path}: <Transcription> <TextLine> #{i}: attribute "
                                  f"{'id' if lid is None else 'text'} is missing")
            lines[lid] = text
    return IamForm(form_id, writer, lines, path)


def read_iamondb_ascii(path: str | os.PathLike) -> dict:
    """Read an IAM-OnDB ascii file: the lines under ``CSR:`` as {``<form>-<k:02d>``: text}, k from 1."""
    path = Path(path)
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


def iamondb_split_ids(root: str | os.PathLike, split: str) -> set[str]:
    """Form (or line) ids listed in an IAM-OnDB task file: ``split`` is a path to it, or a name such as
    ``trainset``, ``testset_v``, ``testset_t``, ``testset_f`` looked up in ``root`` and ``root/task1``."""
    root = Path(root)
    p = Path(split)
    if not p.is_file():
        name = split if split.endswith(".txt") else f"{split}.txt"
        cands = [root / name, root / "task1" / name]
        p = next((c for c in cands if c.is_file()), None)
        if p is None:
            raise FormatError(f"{root}: split {split!r}: none of {[str(c) for c in cands]} exists")
    return {ln.strip() for ln in p.read_text("latin-1").splitlines() if ln.strip()}


def read_iamondb(root: str | os.PathLike, split: Optional[str] = None, *, progress: bool = False) -> list[IamLine]:
    """Read every line of an IAM-OnDB folder, sorted by line id.

    ``root`` holds ``lineStrokes-all/lineStrokes`` (or ``lineStrokes``), and optionally
    ``original-xml-part/original``, ``original-xml-all/original`` (or ``original``) for writer ids and
    transcriptions, and ``ascii-all/ascii`` (or ``ascii``) for transcriptions. ``split`` keeps only the
    forms / lines listed in that task file (see :func:`iamondb_split_ids`). Files that break the format raise
    FormatError naming file and element.
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
    keep = iamondb_split_ids(root, split) if split else None

    files = sorted(strokes_dir.rglob("*.xml"))
    forms_cache: dict[Path, list[IamForm]] = {}
    ascii_cache: dict[Path, dict] = {}

    def forms_in(sub: Path) -> list[IamForm]:
        out = []
        for od in original_dirs:
            d = od / sub
            if d not in forms_cache:
                forms_cache[d] = [read_iamondb_original(f) for f in sorted(d.glob("*.xml"))] if d.is_dir() else []
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
        ink = read_iamondb_strokes(f)
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
                    ascii_cache[af] = read_iamondb_ascii(af)
                text = ascii_cache[af].get(lid)
        lines.append(IamLine(lid, form, writer, text, ink, f))
    return lines


# ---------------------------------------------------------------------------------- word segmentation

def core_band(ink: Ink, spacing: Optional[float] = None) -> tuple[float, float]:
    """(top, bottom) of the writing's core band: the 20th and 80th percentiles of y over the ink resampled
    at uniform arc length (so slow and fast pen movement weigh the same). ``bottom`` approximates the
    baseline and ``bottom - top`` is the *core height* used to scale and segment handwriting (a robust
    stand-in for the x-height, in the ink's own units)."""
    from .ink import resample

    ink = as_ink(ink)
    if ink.n_points == 0:
        raise InkError("an empty ink has no core band")
    x0, y0, x1, y1 = ink.bbox()
    ext = max(x1 - x0, y1 - y0)
    if ext <= 0:
        return (y0, y1)
    pts = resample(ink, spacing or ext / 400.0).points()
    lo, hi = np.percentile(pts[:, 1], [20, 80])
    return float(lo), float(hi)


def core_height(ink: Ink) -> float:
    """Core height (see :func:`core_band`), never below 1e-9."""
    lo, hi = core_band(ink)
    return max(hi - lo, 1e-9)


def segment_line_words(ink: Ink, n_words: int, *, gap_factor: float = 0.6) -> Optional[list[Ink]]:
    """Split a recorded text line into ``n_words`` words at pen-up gaps, or return None.

    Strokes are clustered by their horizontal extents: strokes whose x-ranges overlap or lie closer than
    ``gap_factor`` * core height (:func:`core_band`) belong to one word; so delayed strokes (i-dots,
    t-crosses written after the word) join the word they lie over. The clusters, left to right, are the
    words; each keeps its strokes in writing order. The segmentation is accepted only when it yields exactly
    ``n_words`` clusters (the transcription's word count); otherwise None (the line is skipped, never forced).
    """
    ink = as_ink(ink)
    if n_words < 1 or len(ink) == 0:
        return None
    gap = gap_factor * core_height(ink)
    ext = np.array([(s[:, 0].min(), s[:, 0].max()) for s in ink.strokes])
    order = np.argsort(ext[:, 0], kind="stable")
    clusters: list[list[int]] = []
    right = -np.inf
    for i in order:
        if clusters and ext[i, 0] - right <= gap:
            clusters[-1].append(int(i))
            right = max(right, ext[i, 1])
        else:
            clusters.append([int(i)])
            right = ext[i, 1]
    if len(clusters) != n_words:
        return None
    return [Ink(tuple(ink.strokes[i] for i in sorted(c))) for c in clusters]


# ============================================================================================ UNIPEN JSON

@dataclass
class RecordedWord:
    """A recorded word: ``ink`` in the source's units (y down, t in ms), ``meta`` other source fields."""

    id: str
    writer: str
    text: str
    ink: Ink
    meta: dict = field(default_factory=dict)


def _unipen_strokes(strokes, where: str) -> Ink:
    if not isinstance(strokes, list) or not strokes:
        raise FormatError(f"{where}: expected a non-empty list of strokes")
    out = []
    for i, s in enumerate(strokes):
        if not isinstance(s, list) or not s:
            raise FormatError(f"{where}[{i}]: expected a non-empty list of [x, y, t] points")
        rows = []
        for j, p in enumerate(s):
            w = f"{where}[{i}][{j}]"
            if not isinstance(p, list) or len(p) not in (2, 3):
                raise FormatError(f"{w}: expected [x, y, t_ms], got {p!r:.60}")
            vals = []
            for k, v in enumerate(p):
                name = "xyt"[k]
                if k == 2 and v is None:
                    vals.append(math.nan)
                    continue
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise FormatError(f"{w}: {name} must be a number, got {v!r:.30}")
                if not math.isfinite(v):
                    raise FormatError(f"{w}: {name} is {v} (NaN or infinite)")
                vals.append(float(v))
            if len(vals) == 2:
                vals.append(math.nan)
            rows.append(vals)
        out.append(np.asarray(rows, dtype=np.float64))
    return Ink(tuple(out))


def read_unipen_json(path: str | os.PathLike) -> list[RecordedWord]:
    """Read a UNIPEN-derived JSON file (format in the module doc) into RecordedWords, in file order.

    Required per sample: id, writer_id, text (strings) and strokes; the other fields (contributor, style,
    points_per_second, points_per_inch, ...) go to ``meta`` along with ``file`` and the file-level meta under
    ``source``. Raises FormatError naming the file, the sample and the field at fault (NaN coordinates too).
    """
    path = Path(path)
    try:
        raw = path.read_text("utf-8")
    except OSError as e:
        raise FormatError(f"{path}: cannot be read ({e.strerror or e})") from None
    except UnicodeDecodeError as e:
        raise FormatError(f"{path}: not UTF-8 text ({e})") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        raise FormatError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise FormatError(f"{path}: expected a JSON object with 'meta' and 'samples'")
    meta = data.get("meta", {})
    if not isinstance(meta, dict):
        raise FormatError(f"{path}: field meta: expected an object")
    samples = data.get("samples")
    if not isinstance(samples, list):
        raise FormatError(f"{path}: field samples: " + ("missing" if samples is None else "expected a list"))
    out, seen = [], set()
    for i, s in enumerate(samples):
        where = f"{path}: samples[{i}]"
        if not isinstance(s, dict):
            raise FormatError(f"{where}: expected an object")
        sid = s.get("id")
        if isinstance(sid, str) and sid:
            where = f"{path}: sample {sid}"
        for key in ("id", "writer_id", "text", "strokes"):
            if key not in s:
                raise FormatError(f"{where}: field {key}: missing")
        for key in ("id", "writer_id", "text"):
            if not isinstance(s[key], str) or not s[key]:
                raise FormatError(f"{where}: field {key}: expected a non-empty string, got {s[key]!r:.40}")
        if sid in seen:
            raise FormatError(f"{where}: field id: duplicate sample id")
        seen.add(sid)
        ink = _unipen_strokes(s["strokes"], f"{where}: field strokes")
        extra = {k: v for k, v in s.items() if k not in ("id", "writer_id", "text", "strokes")}
        extra["file"] = str(path)
        out.append(RecordedWord(sid, s["writer_id"], s["text"], ink, extra))
    return out
