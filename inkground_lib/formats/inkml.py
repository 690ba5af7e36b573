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
    ``annotation type="truth"``) or, with ``id`` None and ``depth`` 0, the document's bare traces. ``ink`` holds
    every trace of the group, its nested groups' included, in document order, in the file's units (t in ms,
    NaN where the file has no T); ``annotations`` holds every ``annotation`` by type (the first of each type).
    Nested groups stay groups of their own: ``parent`` is the index, in the list :func:`read_inkml` returns, of
    the enclosing group (None at the top), ``depth`` its nesting level (0 at the top); a word group
    ``<traceGroup><annotation type="truth">hello</annotation>`` holding letter groups is one group with the
    text ``hello`` and all the letters' traces, each letter group another with ``parent`` pointing at it."""

    id: Optional[str]
    text: Optional[str]
    ink: Ink
    annotations: dict = field(default_factory=dict)
    parent: Optional[int] = None
    depth: int = 0


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


# Trace data, W3C InkML (Recommendation 20 September 2011, https://www.w3.org/TR/InkML/, section 3.2.1 "<trace>
# element"; checked 2026-11-30). The value grammar as reproduced from that section in 1011X/inkml
# (src/parse/mod.rs; docs.rs/inkml):
#   value   ::= difference_order? wsp* "-"? wsp* number | "T" | "F" | "*" | "?"
#   number  ::= (decimal | double | hex)
#   double  ::= decimal ("e"|"E") ("+"|"-")? digit+
#   decimal ::= digit+ ("." digit*)? | "." digit+
#   hex     ::= "#" (digit | "A" | "B" | "C" | "D" | "E" | "F")+
#   difference_order ::= ("!" | "'" | '"')
#   wsp     ::= (#x20 | #x9 | #xD | #xA)
# Points are separated by ",". Read leniently beyond the grammar: lower-case hex digits and a "+" sign.
# The difference orders: "!" an explicit value, "'" a first difference (the value minus the previous point's),
# '"' a second difference (that first difference minus the previous one); a prefix holds for the channel's
# following values until another is given (the W3C's own example, "Pairs with velocity and acceleration":
# 1125 18432'23'43"7"-8 3-5+7, https://www.w3.org/2004/Talks/0624-Seoul-IH/36.html). Differences are of the
# values, whatever encoding gave them: after explicit points the previous first difference is x[k-1] - x[k-2],
# not zero.
_WSP = "[ \t\r\n]"
_VALUE = re.compile(rf"""{_WSP}*(?:
    (?P<flag>[TF*?])
  | (?P<order>[!'"])?{_WSP}*(?P<sign>[-+])?{_WSP}*
    (?P<num>\#[0-9A-Fa-f]+|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)
)""", re.VERBOSE)
_ORDER_NAME = {"'": "first difference", '"': "second difference"}


def _tokens(chunk: str, k: int, where: str) -> list[tuple[Optional[str], Optional[str], float]]:
    """A point's values as (flag, order, number): flag one of T F * ? (number unused) or None."""
    pos, vals = 0, []
    end = len(chunk.rstrip(" \t\r\n"))
    while pos < end:
        m = _VALUE.match(chunk, pos)
        if not m or m.end() == pos:
            bad = chunk[pos:].strip(" \t\r\n")[:20]
            raise FormatError(f"{where}: point {k}: cannot read value {bad!r}")
        if m.group("flag"):
            vals.append((m.group("flag"), None, math.nan))
        else:
            num = m.group("num")
            v = float(int(num[1:], 16)) if num.startswith("#") else float(num)
            if not math.isfinite(v):
                raise FormatError(f"{where}: point {k}: value {m.group(0).strip()!r} is not finite")
            vals.append((None, m.group("order"), -v if m.group("sign") == "-" else v))
        pos = m.end()
    return vals


def _parse_trace(text: str, ch: _Channels, where: str) -> np.ndarray:
    """Parse a trace's text into an (n, 3) x, y, t array (t NaN where absent or '?')."""
    names = list(ch.regular) + list(ch.intermittent)
    nreg, nall = len(ch.regular), len(names)
    ix, iy = names.index("X"), names.index("Y")
    it = names.index("T") if "T" in names else None
    mode = ["!"] * nall
    prev1 = [math.nan] * nall  # each channel's value at the previous point
    prev2 = [math.nan] * nall  # ... and at the point before it
    rows = []
    chunks = (text or "").split(",")
    if len(chunks) == 1 and not chunks[0].strip(" \t\r\n"):
        return np.zeros((0, 3))
    for k, chunk in enumerate(chunks):
        vals = _tokens(chunk, k, where)
        if not vals:
            raise FormatError(f"{where}: point {k}: empty point (two commas in a row?)")
        if not (nreg <= len(vals) <= nall):
            raise FormatError(f"{where}: point {k}: {len(vals)} values, expected {nreg}"
                              + (f" to {nall}" if nall > nreg else "") + f" (channels {' '.join(names)})")
        row = [math.nan] * nall
        for c, (flag, order, v) in enumerate(vals):
            if flag == "?":
                continue
            if flag == "*":
                row[c] = prev1[c]
                continue
            if flag is not None:  # T / F
                row[c] = 1.0 if flag == "T" else 0.0
                continue
            if order:
                mode[c] = order
            if mode[c] == "!":
                row[c] = v
                continue
            need = (prev1[c],) if mode[c] == "'" else (prev1[c], prev2[c])
            if not all(math.isfinite(x) for x in need):
                missing = k - 1 if not math.isfinite(prev1[c]) else k - 2
                raise FormatError(f"{where}: point {k}: channel {names[c]}: a {_ORDER_NAME[mode[c]]} needs the "
                                  + ("value of the point before it" if mode[c] == "'" else
                                     "values of the two points before it")
                                  + (f", and point {missing} has none" if missing >= 0 else
                                     f", and point {k} is the trace's {'first' if k == 0 else 'second'}"))
            row[c] = prev1[c] + v if mode[c] == "'" else prev1[c] + (prev1[c] - prev2[c]) + v
        prev2, prev1 = prev1, row
        t = row[it] * ch.t_scale if it is not None else math.nan
        rows.append((row[ix], row[iy], t))
    arr = np.asarray(rows, dtype=np.float64).reshape(-1, 3)
    bad = ~np.isfinite(arr[:, :2]).all(axis=1)
    if bad.any():
        raise FormatError(f"{where}: point {int(np.flatnonzero(bad)[0])}: X or Y is missing or not finite")
    return arr


@dataclass
class _Node:
    """A traceGroup (or a traceView holding others) while reading: its items are ("trace", array),
    ("ref", id, traceView element) and ("node", nested _Node), in document order."""

    el: ET.Element
    items: list
    parent: Optional["_Node"]
    depth: int


def read_inkml(path: str | os.PathLike, *, max_bytes: Optional[int] = None) -> list[InkMLGroup]:
    """Read an InkML file into groups of strokes. Raises FormatError naming the element.

    One :class:`InkMLGroup` per ``traceGroup`` (and per ``traceView`` holding others, or standing alone under
    ``ink``) that holds ink, in document order, a group before the groups nested in it; each group's ink is every
    trace in it, nested groups' included; a ``traceView traceDataRef`` stands for the trace, or the traceGroup /
    traceView, it names. The document's traces that no group holds or views come first, as one group with ``id``
    None. Trace values follow the grammar quoted above :func:`_parse_trace`: hex numbers, white space between a
    difference order, the minus and the number, explicit values and first / second differences of the values.
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
    nodes: list[_Node] = []  # every traceGroup (or traceView holding others), in document order
    bare: list[tuple[np.ndarray, ET.Element]] = []
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

    def view_ref(el: ET.Element) -> Optional[str]:
        r = ref(el.get("traceDataRef"))
        if r and (el.get("from") or el.get("to")):
            raise FormatError(f"{path}: {describe_element(el)}: traceView from/to ranges are not supported")
        return r

    def walk(el: ET.Element, current: _Channels, parent: Optional[_Node]) -> _Node:
        node = _Node(el, [], parent, 0 if parent is None else parent.depth + 1)
        nodes.append(node)
        current = trace_channels(el, current)
        for child in el:
            n = local_name(child.tag)
            if n == "trace":
                node.items.append(("trace", read_trace(child, current)))
            elif n == "traceView":
                r = view_ref(child)
                node.items.append(("ref", r, child) if r else ("node", walk(child, current, node)))
            elif n == "traceGroup":
                node.items.append(("node", walk(child, current, node)))
            elif n == "context":
                current = context_channels(child) or current
            elif n == "traceFormat":
                current = _channels_of(child, str(path))
        return node

    current = default
    doc_annotations = {}
    for child in root:
        n = local_name(child.tag)
        if n == "trace":
            bare.append((read_trace(child, current), child))
        elif n == "traceGroup":
            walk(child, current, None)
        elif n == "traceView":
            r = view_ref(child)
            if r:
                node = _Node(child, [("ref", r, child)], None, 0)
                nodes.append(node)
            else:
                walk(child, current, None)
        elif n == "context":
            current = context_channels(child) or current
        elif n == "traceFormat":
            current = _channels_of(child, str(path))
        elif n == "annotation":
            doc_annotations[child.get("type") or ""] = (child.text or "").strip()

    # a traceView's traceDataRef names a trace, or a traceGroup / traceView whose traces it stands for
    by_id = {xml_id(nd.el): nd for nd in nodes if xml_id(nd.el)}
    memo: dict[int, list[np.ndarray]] = {}

    def strokes_of(node: _Node, seen: tuple = ()) -> list[np.ndarray]:
        if id(node) in memo:
            return memo[id(node)]
        out = []
        for item in node.items:
            if item[0] == "trace":
                out.append(item[1])
            elif item[0] == "node":
                out.extend(strokes_of(item[1], seen))
            else:
                _, r, view = item
                if r in traces:
                    referenced.add(r)
                    out.append(traces[r])
                elif r in by_id:
                    if r in seen:
                        raise FormatError(f"{path}: {describe_element(view)}: traceDataRef {r!r} refers back to "
                                          "a group that contains this view")
                    out.extend(strokes_of(by_id[r], seen + (r,)))
                else:
                    raise FormatError(f"{path}: {describe_element(view)}: traceDataRef {r!r} names no trace or "
                                      "traceGroup")
        memo[id(node)] = out
        return out

    kept: list[tuple[_Node, list[np.ndarray]]] = []
    for node in nodes:
        own = (xml_id(node.el),) if xml_id(node.el) else ()
        st = strokes_of(node, own)
        if st:
            kept.append((node, st))
    loose = [arr for arr, el in bare if not (xml_id(el) and xml_id(el) in referenced)]
    offset = 1 if loose else 0
    index = {id(node): offset + i for i, (node, _) in enumerate(kept)}
    out: list[InkMLGroup] = []
    if loose:
        out.append(InkMLGroup(None, doc_annotations.get("truth"), as_ink(loose, f"{path}: bare traces"),
                              dict(doc_annotations)))
    for node, st in kept:
        ann = {}
        for a in node.el:
            if local_name(a.tag) == "annotation":
                ann.setdefault(a.get("type") or "", (a.text or "").strip())
        try:
            ink = as_ink(st, f"{path}: {describe_element(node.el)}")
        except InkError as e:
            raise FormatError(str(e)) from None
        up = node.parent
        while up is not None and id(up) not in index:
            up = up.parent
        out.append(InkMLGroup(xml_id(node.el), ann.get("truth"), ink, ann,
                              index[id(up)] if up is not None else None, node.depth))
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
