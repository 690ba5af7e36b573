"""W3C InkML: reading and writing."""

from __future__ import annotations

import math
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Optional

import numpy as np

from inkground_lib.core.files import atomic_write_text
from inkground_lib.core.ink import Ink, InkError, as_ink
from inkground_lib.formats.xmlsafe import (
    FormatError,
    describe_element,
    local_name,
    parse_xml,
    xml_id,
)

INKML_NS = "http://www.w3.org/2003/InkML"


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
            raise FormatError(f"{where}: {describe_element(ch)}: channel without a name attribute")
        into.append(name)
        if name == "T":
            units = (ch.get("units") or "ms").strip()
            if units not in _T_UNITS:
                raise FormatError(f"{where}: {describe_element(ch)}: T units {units!r} not understood "
                                  f"(expected one of {sorted(_T_UNITS)})")
            t_scale = _T_UNITS[units]

    for child in tf:
        n = local_name(child.tag)
        if n == "channel":
            add(child, regular)
        elif n in ("regularChannels", "intermittentChannels"):
            for ch in child:
                if local_name(ch.tag) == "channel":
                    add(ch, regular if n == "regularChannels" else inter)
    if not regular:
        raise FormatError(f"{where}: {describe_element(tf)}: traceFormat declares no channel")
    for need in ("X", "Y"):
        if need not in regular:
            raise FormatError(f"{where}: {describe_element(tf)}: traceFormat has no regular channel {need} "
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


def read_inkml(path: str | os.PathLike, *, max_bytes: Optional[int] = None) -> list[InkMLGroup]:
    """Read an InkML file into groups of strokes (see the module doc). Raises FormatError naming the element.

    The file is parsed by :func:`~inkground_lib.formats.xmlsafe.parse_xml` (no DTDs or entities; at most
    ``max_bytes`` bytes, default MAX_INK_FILE_BYTES or $INKGROUND_MAX_INK_FILE_MB in MiB)."""
    path = Path(path)
    root = parse_xml(path, max_bytes=max_bytes)
    if local_name(root.tag) != "ink":
        raise FormatError(f"{path}: root element is <{local_name(root.tag)}>, expected <ink>")

    formats: dict[str, _Channels] = {}
    contexts: dict[str, _Channels] = {}
    all_tf = [el for el in root.iter() if local_name(el.tag) == "traceFormat"]
    for tf in all_tf:
        if xml_id(tf):
            formats[xml_id(tf)] = _channels_of(tf, str(path))

    def ref(v: Optional[str]) -> Optional[str]:
        return v[1:] if v and v.startswith("#") else v

    def context_channels(ctx: ET.Element, seen=()) -> Optional[_Channels]:
        for child in ctx:
            if local_name(child.tag) == "traceFormat":
                return _channels_of(child, str(path))
        r = ref(ctx.get("traceFormatRef"))
        if r:
            if r not in formats:
                raise FormatError(f"{path}: {describe_element(ctx)}: traceFormatRef {r!r} names no traceFormat")
            return formats[r]
        r = ref(ctx.get("contextRef"))
        if r and r not in seen:
            target = next((c for c in root.iter() if local_name(c.tag) == "context" and xml_id(c) == r), None)
            if target is None:
                raise FormatError(f"{path}: {describe_element(ctx)}: contextRef {r!r} names no context")
            return context_channels(target, seen + (r,))
        return None

    for ctx in root.iter():
        if local_name(ctx.tag) == "context" and xml_id(ctx):
            chans = context_channels(ctx)
            if chans is not None:
                contexts[xml_id(ctx)] = chans

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
                raise FormatError(f"{path}: {describe_element(el)}: contextRef {r!r} names no context with a traceFormat")
            return contexts[r]
        return current

    def read_trace(el: ET.Element, current: _Channels) -> np.ndarray:
        i = counter["trace"]
        counter["trace"] += 1
        where = f"{path}: {describe_element(el, i)}"
        arr = _parse_trace(el.text or "", trace_channels(el, current), where)
        if xml_id(el):
            traces[xml_id(el)] = arr
        return arr

    def walk_group(el: ET.Element, current: _Channels) -> None:
        current = trace_channels(el, current)
        items = []
        for child in el:
            n = local_name(child.tag)
            if n == "trace":
                items.append(read_trace(child, current))
            elif n == "traceView":
                r = ref(child.get("traceDataRef"))
                if not r:
                    # a traceView holding nested traceViews / traces: flatten one level
                    walk_group(child, current)
                    continue
                if child.get("from") or child.get("to"):
                    raise FormatError(f"{path}: {describe_element(child)}: traceView from/to ranges are not supported")
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
        n = local_name(child.tag)
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
                    raise FormatError(f"{path}: {describe_element(view)}: traceDataRef {r!r} names no trace")
                referenced.add(r)
                strokes.append(traces[r])
            else:
                strokes.append(it)
        ann = {}
        for a in el:
            if local_name(a.tag) == "annotation":
                ann.setdefault(a.get("type") or "", (a.text or "").strip())
        try:
            ink = as_ink(strokes, f"{path}: {describe_element(el)}")
        except InkError as e:
            raise FormatError(str(e)) from None
        out.append(InkMLGroup(xml_id(el), ann.get("truth"), ink, ann))
    loose = [arr for arr, el in bare if not (xml_id(el) and xml_id(el) in referenced)]
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
