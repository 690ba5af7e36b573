"""W3C InkML: reading, as the Recommendation defines it and as real producers write it, and writing.

:func:`read_inkml` reads W3C InkML (Recommendation 20 September 2011, https://www.w3.org/TR/InkML/) where a file
follows it, and the dialects real producers write where it does not, never silently: every assumption it makes
is an :class:`InkMLWarning` on the result (file, element, kind, message); a file it cannot read raises
:class:`~inkground_lib.formats.xmlsafe.FormatError` naming the file, the element and the reason. What is read:

* the Recommendation: ``traceFormat`` (regular and intermittent channels), ``context`` holding a ``traceFormat``
  or an ``inkSource`` holding one, ``contextRef`` / ``traceFormatRef`` / ``inkSourceRef`` / ``brushRef`` written
  ``#id`` or ``id``, several contexts per file, nested ``traceGroup`` s, ``traceView`` s of traces and groups,
  traces in ``definitions``, the ``inkml:`` prefix (any prefix of the InkML namespace), and trace values in every
  encoding of the value grammar (explicit, first- and second-difference values, with or without separators,
  hex numbers, ``T`` / ``F`` / ``*`` / ``?``; the grammar is quoted above :func:`_parse_trace`). Channels other
  than X, Y and T (force, tilt, ...) are read and dropped from the ink; the document's ``contexts`` keep them;
  ``penUp`` traces (the pen above the surface) are left out of the ink;
* Microsoft Office / OneNote / Windows Journal exports: all of the above, plus a T channel in device units
  (``units="dev"``), whose times are dropped (warning ``time-units``);
* ImadocSen-OnDB: no namespace, no XML declaration, CRLF line endings, a context with an ``inkSourceRef``, a
  ``contextRef`` that may name a context the file never defines (read with the traceFormat in scope, X Y by
  default; warning ``undefined-context``), points ``" x y, x y"``, a group's text in ``<annotationXML
  type="Ground truth"><label>``;
* InkSight's published derenderings (google-research/inksight docs/dataset.md: annotations ``application`` =
  "InkSight", ``sourceDataset``, ``inferenceMode``, ``exampleId``, ``textField``; checked 2026-12-01): traces
  written ``x,y x,y`` (the Recommendation's separators swapped), integer pixels of InkSight's 224 x 224 canvas, no
  traceFormat, stray single points at the canvas edge (x = 1 or 223), an empty text written as one space. Read
  when the file says so (annotation ``application`` = InkSight), when its traces can be nothing else (no
  traceFormat or context, every trace ``x,y`` pairs of whole numbers in 0..224), or when ``dialect="inksight"``
  is given; ``box=`` maps the canvas back to a word box with the InkSight adapter's own mapping
  (:mod:`inkground_lib.formats.inksight_canvas`).

A file in any other dialect fails with the file and the reason; ``strict=True`` makes every tolerated deviation
from the Recommendation (:data:`DEVIATIONS`) fail too.
"""

from __future__ import annotations

import math
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

import numpy as np

from inkground_lib.core.defaults import MAX_ANNOTATION_TEXT, MAX_INK_POINTS
from inkground_lib.core.files import atomic_write_text
from inkground_lib.core.ink import Ink, InkError, as_ink
from inkground_lib.formats.inksight_canvas import INKSIGHT_SIZE, canvas_placement, canvas_to_box
from inkground_lib.formats.xmlsafe import (
    FormatError,
    describe_element,
    local_name,
    parse_xml,
    xml_id,
)

INKML_NS = "http://www.w3.org/2003/InkML"

DIALECTS = ("auto", "w3c", "inksight")
"""The ``dialect=`` values of :func:`read_inkml`: ``auto`` (InkSight's dialect where the file is InkSight's, else
the Recommendation with the tolerances above), ``w3c`` (never InkSight's dialect), ``inksight`` (every trace
``x,y x,y``)."""

WARNING_KINDS = {
    "no-namespace": "the root <ink> is in no namespace (the Recommendation's is http://www.w3.org/2003/InkML)",
    "default-format": "traces read with the default traceFormat X Y: no traceFormat applies to them",
    "undefined-context": "a contextRef names a context the file does not define",
    "context-without-format": "a context (or its inkSource) defines no traceFormat",
    "channels-dropped": "channels other than X, Y and T read and dropped from the ink",
    "time-units": "a T channel whose units are not a time unit: its times are dropped",
    "undefined-brush": "a brushRef names a brush the file does not define",
    "empty-trace": "a trace without points, dropped",
    "text-source": "a group's text taken from another annotation than type=\"truth\"",
    "blank-text": "a text annotation holding only white space, read as no text",
    "dialect": "the file read in a producer's dialect (InkSight's x,y pairs)",
    "canvas-range": "InkSight coordinates outside its 224 x 224 canvas",
    "stray-point": "a single-point trace at the edge of InkSight's canvas (x <= 1 or x >= 223), kept",
    "ignored-format": "a traceFormat or context in a file read in InkSight's dialect, not used",
    "pen-up": "a trace of type=\"penUp\" (pen movement above the surface, no ink): read and left out of the ink",
    "continuation": "a trace marked as a continuation of another: kept as a stroke of its own, not joined",
}
"""Every kind of :class:`InkMLWarning`, with what it means."""

DEVIATIONS = frozenset({"no-namespace", "undefined-context", "undefined-brush", "empty-trace", "blank-text",
                        "dialect", "canvas-range", "stray-point", "ignored-format"})
"""The warning kinds that are deviations from the Recommendation (``strict=True`` refuses them); the others
record what the reader chose where the Recommendation leaves it open (the default X Y traceFormat, channels
dropped from the ink, times in device units, a text taken from another annotation than "truth")."""


class InkMLWarning:
    """One assumption :func:`read_inkml` made: ``file``, ``element`` (as ``<trace id="t1"> #3``, or ``<ink>``),
    ``kind`` (a key of :data:`WARNING_KINDS`) and ``message``; ``str()`` gives "file: element: message"."""

    __slots__ = ("file", "element", "kind", "message")

    def __init__(self, file: str, element: str, kind: str, message: str):
        self.file, self.element, self.kind, self.message = str(file), element, kind, message

    def __str__(self) -> str:
        return f"{self.file}: {self.element}: {self.message}"

    def __repr__(self) -> str:
        return f"InkMLWarning({self.kind!r}, {str(self)!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, InkMLWarning) and (self.file, self.element, self.kind, self.message) == (
            other.file, other.element, other.kind, other.message)

    __hash__ = None


@dataclass
class InkMLGroup:
    """One group of traces read from InkML: a ``traceGroup`` (``id`` its xml:id, ``text`` its
    ``annotation type="truth"``) or, with ``id`` None and ``depth`` 0, the document's bare traces. ``ink`` holds
    every trace of the group, its nested groups' included, in document order, in the file's units (t in ms,
    NaN where the file has no T; InkSight's 224-canvas pixels unless ``box=`` was given); ``annotations`` holds
    every ``annotation`` by type (the first of each type; ``annotationXML`` elements under the key
    ``"annotationXML"`` as {type: {child tag: text}}). ``text`` is the truth annotation, else (with a warning)
    InkSight's ``textField`` or an ``annotationXML`` "Ground truth" ``label``; white space only is no text.
    Nested groups stay groups of their own: ``parent`` is the index, in the list :func:`read_inkml` returns, of
    the enclosing group (None at the top), ``depth`` its nesting level (0 at the top); a word group
    ``<traceGroup><annotation type="truth">hello</annotation>`` holding letter groups is one group with the
    text ``hello`` and all the letters' traces, each letter group another with ``parent`` pointing at it.
    ``trace_attrs`` has one dict per stroke of ``ink``: the trace's ``id``, ``contextRef`` and ``brushRef``
    (the group's or a context's brush when the trace names none), where the file gives them."""

    id: Optional[str]
    text: Optional[str]
    ink: Ink
    annotations: dict = field(default_factory=dict)
    parent: Optional[int] = None
    depth: int = 0
    trace_attrs: tuple = ()


class InkMLDocument(list):
    """What :func:`read_inkml` returns: the list of :class:`InkMLGroup` (as it always was; iterate, index and
    unpack it as a list) with what else was read: ``path``, ``dialect`` (``"w3c"`` or ``"inksight"``),
    ``warnings`` (:class:`InkMLWarning`, in the order met), ``annotations`` (the document's own, by type),
    ``contexts`` ({context id: traceFormat channels, units, dropped channels, channel properties, inkSource and
    brush ids}), ``brushes`` ({brush id: {property: value}}) and ``box`` (the word box InkSight's canvas was
    mapped to, or None)."""

    def __init__(self, groups: Iterable[InkMLGroup] = (), *, path: str = "", dialect: str = "w3c",
                 warnings: Sequence[InkMLWarning] = (), annotations: Optional[dict] = None,
                 contexts: Optional[dict] = None, brushes: Optional[dict] = None, box=None):
        super().__init__(groups)
        self.path = str(path)
        self.dialect = dialect
        self.warnings = list(warnings)
        self.annotations = dict(annotations or {})
        self.contexts = dict(contexts or {})
        self.brushes = dict(brushes or {})
        self.box = box

    def warnings_by_kind(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for w in self.warnings:
            out[w.kind] = out.get(w.kind, 0) + 1
        return dict(sorted(out.items()))


@dataclass(frozen=True)
class _Channels:
    regular: tuple[str, ...] = ("X", "Y")
    intermittent: tuple[str, ...] = ()
    t_scale: Optional[float] = 1.0  # multiply T values by this to get ms; None: T is read and dropped
    units: tuple = ()  # ((channel, units), ...) as written
    where: str = "the default traceFormat"

    @property
    def dropped(self) -> tuple[str, ...]:
        return tuple(c for c in self.regular + self.intermittent if c not in ("X", "Y", "T"))

    def describe(self) -> str:
        s = " ".join(self.regular)
        return s + (f" (intermittent {' '.join(self.intermittent)})" if self.intermittent else "")


_DEFAULT_CHANNELS = _Channels()


# T units as the Recommendation's channel units ("ms", "s", ...); "dev" (device ticks, as Office writes the T of
# its exports) and other units are not times: the T channel is then read and its values dropped
_T_UNITS = {"ms": 1.0, "s": 1000.0, "sec": 1000.0, "us": 1e-3, "µs": 1e-3, "ns": 1e-6, "min": 60000.0}


def _ref(v: Optional[str]) -> Optional[str]:
    """An IDREF / URI reference as files write it: ``#id`` or a bare ``id`` (CROHME writes traceDataRef="0")."""
    v = (v or "").strip()
    return (v[1:] if v.startswith("#") else v) or None


def _is_inkml(el: ET.Element, name: str) -> bool:
    """``el`` is the InkML element ``name`` (in the InkML namespace, or in none as files without a namespace
    write it); elements of other namespaces (e.g. Microsoft's ``msink:context`` extensions) are not."""
    tag = el.tag
    if not isinstance(tag, str):
        return False
    if tag.startswith("{"):
        ns, _, local = tag[1:].partition("}")
        return ns == INKML_NS and local == name
    return tag == name


def _children(el: ET.Element, name: str) -> list[ET.Element]:
    return [c for c in el if _is_inkml(c, name)]


def _channels_of(tf: ET.Element, r: _Reader) -> _Channels:
    regular, inter, units, t_scale = [], [], [], 1.0
    where = f"traceFormat {xml_id(tf)!r}" if xml_id(tf) else "a traceFormat"

    def add(ch: ET.Element, into: list):
        nonlocal t_scale
        name = ch.get("name")
        if not name:
            raise r.fail(ch, "channel without a name attribute")
        if name in regular or name in inter:
            raise r.fail(ch, f"channel {name} is declared twice in this traceFormat")
        into.append(name)
        u = (ch.get("units") or "").strip()
        if u:
            units.append((name, u))
        if name == "T":
            u = u or "ms"
            if u in _T_UNITS:
                t_scale = _T_UNITS[u]
            else:
                t_scale = None
                r.warn(ch, "time-units", f"T channel in units {u!r}, not a time unit ({', '.join(_T_UNITS)}): its "
                       "values are read and the times dropped (t unknown)", once=("time-units", id(tf)))

    for child in tf:
        if _is_inkml(child, "channel"):
            add(child, regular)
        elif _is_inkml(child, "regularChannels") or _is_inkml(child, "intermittentChannels"):
            for ch in _children(child, "channel"):
                add(ch, regular if local_name(child.tag) == "regularChannels" else inter)
    if not regular:
        raise r.fail(tf, "traceFormat declares no channel")
    for need in ("X", "Y"):
        if need not in regular:
            raise r.fail(tf, f"traceFormat has no regular channel {need} (channels: {' '.join(regular + inter)})")
    return _Channels(tuple(regular), tuple(inter), t_scale, tuple(units), where)


# Trace data. W3C InkML, Recommendation 20 September 2011 (https://www.w3.org/TR/InkML/, found with the search
# tool 2026-12-01; section 3.2.1 "<trace>"). The index holds the Recommendation's front matter only, so its
# productions are quoted as 1011X/inkml reproduces them (src/parse/mod.rs, point.rs, trace.rs; docs.rs/inkml):
#   trace   ::= point ("," point)* ","? wsp*
#   point   ::= (wsp* value)+ wsp*
#   value   ::= difference_order? wsp* "-"? wsp* number | "T" | "F" | "*" | "?"
#   number  ::= (decimal | double | hex)
#   double  ::= decimal ("e"|"E") ("+"|"-")? digit+
#   decimal ::= digit+ ("." digit*)? | "." digit+
#   hex     ::= "#" (digit | "A" | "B" | "C" | "D" | "E" | "F")+
#   difference_order ::= ("!" | "'" | '"')
#   wsp     ::= (#x20 | #x9 | #xD | #xA)
# So values need no separator between them where the next one starts with a difference order or a sign: Office
# writes "2561 1 23239 0 0,'-29'35'903'0'0,"2"2"-1"0"0", the W3C's own example "1125 18432'23'43"7"-8 3-5+7"
# (https://www.w3.org/2004/Talks/0624-Seoul-IH/36.html, "Pairs with velocity and acceleration"). Read leniently
# beyond the grammar: lower-case hex digits and a "+" sign. The difference orders: "!" an explicit value, "'" a
# first difference (the value minus the previous point's), '"' a second difference (that first difference minus
# the previous one); a prefix holds for the channel's following values until another is given. Differences are of
# the values, whatever encoding gave them: after explicit points the previous first difference is x[k-1] - x[k-2],
# not zero. A trailing comma is allowed (trace ::= ... ","? wsp*).
_WSP = "[ \t\r\n]"
_VALUE = re.compile(rf"""{_WSP}*(?:
    (?P<flag>[TF*?])
  | (?P<order>[!'"])?{_WSP}*(?P<sign>[-+])?{_WSP}*
    (?P<num>\#[0-9A-Fa-f]+|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)
)""", re.VERBOSE)
_ORDER_NAME = {"'": "first difference", '"': "second difference"}

# InkSight's published traces: "x,y x,y ..." (whole numbers), pairs separated by white space
_PAIR = r"-?[0-9]+(?:\.[0-9]+)?,-?[0-9]+(?:\.[0-9]+)?"
_PAIRS = re.compile(rf"{_WSP}*{_PAIR}(?:{_WSP}+{_PAIR})*{_WSP}*")
_PAIRS_INT = re.compile(rf"{_WSP}*[0-9]+,[0-9]+(?:{_WSP}+[0-9]+,[0-9]+)*{_WSP}*")
_INKSIGHT_HINT = ("; its text is written as x,y pairs separated by white space, InkSight's dialect: read it "
                  "with dialect='inksight'")


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
    """Parse a trace's text into an (n, 3) x, y, t array (t NaN where absent, '?' or dropped)."""
    try:
        return _parse_values(text, ch, where)
    except FormatError as e:
        if _PAIRS.fullmatch(text or "") and "," in (text or ""):
            raise FormatError(str(e) + _INKSIGHT_HINT) from None
        raise


def _parse_values(text: str, ch: _Channels, where: str) -> np.ndarray:
    names = list(ch.regular) + list(ch.intermittent)
    nreg, nall = len(ch.regular), len(names)
    ix, iy = names.index("X"), names.index("Y")
    it = names.index("T") if "T" in names and ch.t_scale is not None else None
    mode = ["!"] * nall
    prev1 = [math.nan] * nall  # each channel's value at the previous point
    prev2 = [math.nan] * nall  # ... and at the point before it
    rows = []
    chunks = (text or "").split(",")
    if len(chunks) > 1 and not chunks[-1].strip(" \t\r\n"):
        chunks = chunks[:-1]  # trace ::= point ("," point)* ","? wsp*
    if len(chunks) == 1 and not chunks[0].strip(" \t\r\n"):
        return np.zeros((0, 3))
    for k, chunk in enumerate(chunks):
        vals = _tokens(chunk, k, where)
        if not vals:
            raise FormatError(f"{where}: point {k}: empty point (two commas in a row?)")
        if not (nreg <= len(vals) <= nall):
            raise FormatError(f"{where}: point {k}: {len(vals)} values, expected {nreg}"
                              + (f" to {nall}" if nall > nreg else "") + f" (channels {' '.join(names)}, "
                              f"{ch.where})")
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


def _parse_pairs(text: str, where: str) -> np.ndarray:
    """InkSight's trace text ``x,y x,y ...`` as an (n, 3) array (t NaN)."""
    text = text or ""
    if not text.strip(" \t\r\n"):
        return np.zeros((0, 3))
    if not _PAIRS.fullmatch(text):
        bad = next((p for p in text.split() if not re.fullmatch(_PAIR, p)), text.strip())[:20]
        raise FormatError(f"{where}: {bad!r} is not an x,y pair (InkSight's dialect writes 'x,y x,y ...')")
    pts = [tuple(float(v) for v in p.split(",")) for p in text.split()]
    return np.column_stack([np.asarray(pts, np.float64).reshape(-1, 2), np.full(len(pts), np.nan)])


def _text_of(el: ET.Element) -> str:
    return "".join(el.itertext())


def _annotations(el: ET.Element, path="") -> dict:
    """Every <annotation> child by type (first of each), and <annotationXML> children under "annotationXML".
    An annotation longer than MAX_ANNOTATION_TEXT characters is refused (FormatError naming file and element)."""
    ann: dict = {}
    for a in el:
        if _is_inkml(a, "annotation"):
            text = _text_of(a).strip()
            if len(text) > MAX_ANNOTATION_TEXT:
                raise FormatError(f"{path}: {describe_element(el)} <annotation type={a.get('type')!r}>: a text of "
                                  f"{len(text):,} characters; annotations of more than {MAX_ANNOTATION_TEXT:,} are "
                                  "refused (MAX_ANNOTATION_TEXT)")
            ann.setdefault(a.get("type") or "", text)
        elif _is_inkml(a, "annotationXML"):
            kids = {k: v for k, v in a.attrib.items() if k != "type"}
            for c in a:
                if local_name(c.tag):
                    kids.setdefault(local_name(c.tag), _text_of(c).strip())
            ann.setdefault("annotationXML", {}).setdefault(a.get("type") or "", kids)
    return ann


def _text_from(ann: dict, el: ET.Element, r: _Reader) -> Optional[str]:
    """A group's text: annotation type="truth", else InkSight's textField, else an annotationXML "Ground truth"
    label (ImadocSen-OnDB); white space only is no text. Each fallback and each blank text is a warning."""
    where = "its" if el is not r.root else "the document's"
    for key, how in (("truth", None), ("textField", 'annotation type="textField"')):
        if key in ann:
            raw = ann[key]
            if not raw:
                what = how or 'annotation type="truth"'
                r.warn(el, "blank-text", f"{where} {what} holds only white space: no text")
                return None
            if how:
                r.warn(el, "text-source", f"text {raw!r} taken from {where} {how}")
            return raw
    for typ, kids in ann.get("annotationXML", {}).items():
        if re.sub(r"[\s_-]", "", typ).lower() in ("groundtruth", "truth") and "label" in kids:
            label = kids["label"]
            if not label.strip():
                r.warn(el, "blank-text", f'{where} annotationXML type="{typ}" label is blank: no text')
                return None
            r.warn(el, "text-source", f'text {label!r} taken from {where} annotationXML type="{typ}" <label>')
            return label
    return None


@dataclass
class _Node:
    """A traceGroup (or a traceView holding others) while reading: its items are ("trace", array, attrs),
    ("ref", id, traceView element) and ("node", nested _Node), in document order."""

    el: ET.Element
    items: list
    parent: Optional["_Node"]
    depth: int


def _inksight_evidence(root: ET.Element, doc_ann: dict) -> Optional[str]:
    """Why the file is InkSight's (None when nothing says so)."""
    app = doc_ann.get("application", "")
    if app.strip().lower() == "inksight":
        return f'its annotation type="application" is {app.strip()!r}'
    if any(_is_inkml(el, "traceFormat") or _is_inkml(el, "context") for el in root.iter()):
        return None
    traces = [el for el in root.iter() if _is_inkml(el, "trace")]
    texts = [(t.text or "") for t in traces if (t.text or "").strip()]
    if not texts or not all(_PAIRS_INT.fullmatch(s) for s in texts):
        return None
    vals = [int(v) for s in texts for p in s.split() for v in p.split(",")]
    if max(vals) > INKSIGHT_SIZE:
        return None
    return ("it declares no traceFormat and every trace is x,y pairs of whole numbers in 0..224 (InkSight's "
            "canvas)")


class _Reader:
    """One read of an InkML file: the file, the warnings, the definitions found, the dialect, and the traces and
    groups met. :func:`read_inkml` runs its steps in order, one job each: :meth:`check_root`,
    :meth:`choose_dialect`, :meth:`read_definitions`, :meth:`read_contexts`, :meth:`read_body` (traces and
    groups, with the scope of formats and brushes), :meth:`set_box` and :meth:`groups` (what each group holds,
    traceViews resolved)."""

    def __init__(self, path: Path, root: ET.Element, strict: bool):
        self.path, self.root, self.strict = path, root, strict
        self.warnings: list[InkMLWarning] = []
        self._warned: set = set()
        self.inksight = False
        self.doc_ann: dict = {}
        # definitions
        self.formats: dict[str, _Channels] = {}
        self.sources: dict[str, ET.Element] = {}
        self.context_els: dict[str, ET.Element] = {}
        self.brushes: dict[str, dict] = {}
        self.contexts_meta: dict[str, dict] = {}
        self._resolved: dict[int, tuple[Optional[_Channels], Optional[str]]] = {}
        # traces and groups
        self.traces: dict[str, tuple[np.ndarray, dict]] = {}
        self.referenced: set[str] = set()
        self.nodes: list[_Node] = []
        self.bare: list[tuple[np.ndarray, dict, ET.Element]] = []
        self.n_traces = self.n_default = self.n_points = 0
        self._default_first: Optional[tuple[ET.Element, int]] = None
        self._memo: dict[int, list] = {}
        self._by_id: dict[str, _Node] = {}
        # InkSight's canvas mapped to a word box
        self.box: Optional[tuple] = None
        self._place = None

    # ------------------------------------------------------------------------------------------ reporting

    def warn(self, el: Optional[ET.Element], kind: str, message: str, *, index: Optional[int] = None,
             once: Optional[tuple] = None) -> None:
        if once is not None:
            if once in self._warned:
                return
            self._warned.add(once)
        where = describe_element(el, index) if el is not None else "<ink>"
        w = InkMLWarning(str(self.path), where, kind, message)
        if self.strict and kind in DEVIATIONS:
            raise FormatError(f"{w} (strict: {WARNING_KINDS[kind]})")
        self.warnings.append(w)

    def fail(self, el: Optional[ET.Element], message: str, index: Optional[int] = None) -> FormatError:
        where = describe_element(el, index) if el is not None else "<ink>"
        return FormatError(f"{self.path}: {where}: {message}")

    # ------------------------------------------------------------------------------------------ the document

    def check_root(self) -> None:
        """The root is InkML's ``<ink>`` (in InkML's namespace or in none, with a warning)."""
        tag = self.root.tag if isinstance(self.root.tag, str) else ""
        ns = tag[1:].partition("}")[0] if tag.startswith("{") else ""
        if local_name(tag) != "ink":
            raise FormatError(f"{self.path}: root element is <{local_name(tag)}>, expected <ink>")
        if ns not in ("", INKML_NS):
            raise FormatError(f"{self.path}: root <ink> is in the namespace {ns!r}, not InkML's ({INKML_NS}): not "
                              "read as InkML")
        if ns == "":
            self.warn(None, "no-namespace", f"the root <ink> declares no namespace (InkML's is {INKML_NS}): read as "
                      "InkML")

    def choose_dialect(self, dialect: str, box) -> None:
        """The document's annotations, and whether its traces are read in InkSight's dialect."""
        self.doc_ann = _annotations(self.root, self.path)
        why = _inksight_evidence(self.root, self.doc_ann) if dialect != "w3c" else None
        self.inksight = dialect == "inksight" or why is not None
        if self.inksight:
            self.warn(None, "dialect", "read in InkSight's dialect (traces 'x,y x,y', pixels of its 224 x 224 canvas"
                      + (f"; {why})" if why else "; dialect='inksight' given)")
                      + ("" if box is not None else ": coordinates are canvas pixels, not page pixels (box= maps "
                                                    "them to a word box)"))
        elif box is not None:
            raise FormatError(f"{self.path}: box= maps InkSight's 224 x 224 canvas to a word box, but the file is "
                              "not read in InkSight's dialect (give dialect='inksight' if it is InkSight's)")

    def read_definitions(self) -> None:
        """Every traceFormat, inkSource, context and brush with an id, wherever it stands."""
        for el in self.root.iter():
            i = xml_id(el)
            if _is_inkml(el, "traceFormat") and i and not self.inksight:
                self.formats[i] = _channels_of(el, self)
            elif _is_inkml(el, "inkSource") and i:
                self.sources[i] = el
            elif _is_inkml(el, "context") and i:
                self.context_els.setdefault(i, el)
            elif _is_inkml(el, "brush") and i:
                self.brushes[i] = {bp.get("name"): bp.get("value") for bp in _children(el, "brushProperty")
                                   if bp.get("name")}
        if self.inksight:
            for el in self.root.iter():
                if _is_inkml(el, "traceFormat") or _is_inkml(el, "context"):
                    self.warn(el, "ignored-format", "not used: traces in InkSight's dialect are x,y pairs",
                              once=("ignored-format",))

    def source_format(self, src: ET.Element) -> Optional[_Channels]:
        """An inkSource's traceFormat (child or traceFormatRef), or None."""
        tfs = _children(src, "traceFormat")
        if tfs:
            return self.formats.get(xml_id(tfs[0])) or _channels_of(tfs[0], self)
        rr = _ref(src.get("traceFormatRef"))
        return self.formats.get(rr) if rr else None

    def context_format(self, ctx: ET.Element, seen: tuple = ()) -> tuple[Optional[_Channels], Optional[str]]:
        """(the context's traceFormat or None, its brush id): its traceFormat child, traceFormatRef, inkSource
        child, inkSourceRef, then the context it names by contextRef."""
        if id(ctx) in self._resolved:
            return self._resolved[id(ctx)]
        brush = _ref(ctx.get("brushRef")) or next((xml_id(b) for b in _children(ctx, "brush") if xml_id(b)), None)
        chans: Optional[_Channels] = None
        tfs = _children(ctx, "traceFormat")
        if tfs:
            chans = self.formats.get(xml_id(tfs[0])) or _channels_of(tfs[0], self)
        if chans is None and _ref(ctx.get("traceFormatRef")):
            rr = _ref(ctx.get("traceFormatRef"))
            if rr not in self.formats:
                raise self.fail(ctx, f"traceFormatRef {rr!r} names no traceFormat")
            chans = self.formats[rr]
        if chans is None:
            for src in _children(ctx, "inkSource"):
                chans = self.source_format(src)
                if chans is not None:
                    break
        if chans is None and _ref(ctx.get("inkSourceRef")):
            rr = _ref(ctx.get("inkSourceRef"))
            if rr not in self.sources:
                raise self.fail(ctx, f"inkSourceRef {rr!r} names no inkSource")
            chans = self.source_format(self.sources[rr])
            if chans is None:
                raise self.fail(self.sources[rr], "inkSource holds no traceFormat")
        rr = _ref(ctx.get("contextRef"))
        if rr and rr not in seen and (chans is None or brush is None):
            target = self.context_els.get(rr)
            if target is None:
                self.warn(ctx, "undefined-context", f"contextRef {rr!r} names no context: not inherited")
            else:
                up_chans, up_brush = self.context_format(target, seen + (xml_id(ctx) or "", rr))
                chans, brush = chans or up_chans, brush or up_brush
        if chans is not None and chans.where == "a traceFormat" and xml_id(ctx):
            chans = replace(chans, where=f"the traceFormat of context {xml_id(ctx)!r}")
        self._resolved[id(ctx)] = (chans, brush)
        return chans, brush

    def read_contexts(self) -> None:
        """The document's contexts, for the caller (and every traceFormat they name read once here)."""
        for cid, ctx in self.context_els.items():
            chans, brush = (None, None) if self.inksight else self.context_format(ctx)
            src_id = _ref(ctx.get("inkSourceRef")) or next((xml_id(s) for s in _children(ctx, "inkSource")), None)
            props: dict = {}
            src_el = self.sources.get(src_id) if src_id else None
            if src_el is None:
                src_el = next(iter(_children(ctx, "inkSource")), None)
            for cp_group in (_children(src_el, "channelProperties") if src_el is not None else []):
                for cp in _children(cp_group, "channelProperty"):
                    props.setdefault(cp.get("channel") or "", {})[cp.get("name") or ""] = (
                        f"{cp.get('value')}" + (f" {cp.get('units')}" if cp.get("units") else ""))
            self.contexts_meta[cid] = {
                "channels": list(chans.regular) if chans else None,
                "intermittent": list(chans.intermittent) if chans else None,
                "units": dict(chans.units) if chans else {}, "dropped": list(chans.dropped) if chans else [],
                "channel_properties": props, "inkSource": src_id, "brush": brush}

    # ------------------------------------------------------------------------------------------ traces

    def in_scope(self, el: ET.Element, current: tuple[_Channels, Optional[str], bool]):
        """The (format, brush, explicit?) an element's traces use: its contextRef's, else the one in scope."""
        rr = _ref(el.get("contextRef"))
        chans, brush, explicit = current
        if rr:
            ctx = self.context_els.get(rr)
            if ctx is None:
                self.warn(el, "undefined-context", f"contextRef {rr!r} names no context in the file: read with the "
                          f"traceFormat in scope ({chans.describe()}"
                          + (", the default)" if chans is _DEFAULT_CHANNELS else ")"), once=("undefined-context", rr))
                explicit = True  # this warning says which traceFormat was used
            else:
                c, b = self.context_format(ctx) if not self.inksight else (None, None)
                if c is None and not self.inksight:
                    self.warn(ctx, "context-without-format", "the context (and its inkSource) defines no "
                              "traceFormat: its traces are read with the default X Y", once=("no-format", rr))
                    c = _DEFAULT_CHANNELS
                chans, brush, explicit = (c or chans), (b or brush), True
        gb = _ref(el.get("brushRef"))
        return chans, gb or brush, explicit

    def count_points(self, el: ET.Element, where: str) -> None:
        """Points counted before a trace's text is parsed: commas + 1 (points are comma-separated; InkSight's x,y
        pairs hold one comma each), an upper bound off by at most one a trace; over MAX_INK_POINTS the file is
        refused."""
        text = el.text or ""
        self.n_points += text.count(",") + 1 if text.strip() else 0
        if self.n_points > MAX_INK_POINTS:
            raise FormatError(f"{where}: the file holds more than {MAX_INK_POINTS:,} points (MAX_INK_POINTS): "
                              "refused before its traces are parsed")

    def read_trace(self, el: ET.Element, current) -> tuple[np.ndarray, dict]:
        """One ``<trace>`` as an (n, 3) array in its scope's format, and its attributes (id, contextRef,
        brushRef); a trace with an id is kept for the traceViews that name it."""
        i = self.n_traces
        self.n_traces += 1
        where = f"{self.path}: {describe_element(el, i)}"
        self.count_points(el, where)
        chans, brush, explicit = self.in_scope(el, current)
        if self.inksight:
            arr = _parse_pairs(el.text or "", where)
        else:
            if chans is _DEFAULT_CHANNELS and not explicit:
                self.n_default += 1
                if self._default_first is None:
                    self._default_first = (el, i)
            elif chans.dropped:
                self.warn(el, "channels-dropped", f"channels {' '.join(chans.dropped)} of {chans.where} "
                          f"({chans.describe()}) read and dropped from the ink", index=i,
                          once=("dropped", chans.where, chans.dropped))
            arr = _parse_trace(el.text or "", chans, where)
        attrs = {k: v for k, v in (("id", xml_id(el)), ("contextRef", _ref(el.get("contextRef"))),
                                   ("brushRef", _ref(el.get("brushRef")) or brush)) if v}
        b = attrs.get("brushRef")
        if b and b not in self.brushes:
            self.warn(el, "undefined-brush", f"brushRef {b!r} names no brush (kept as written)", index=i,
                      once=("brush", b))
        kind = (el.get("type") or "").strip()
        if kind == "penUp" and len(arr):
            self.warn(el, "pen-up", f"a penUp trace ({len(arr)} points of pen movement above the surface): left out "
                      "of the ink", index=i)
            arr = np.zeros((0, 3))
        elif el.get("continuation"):
            self.warn(el, "continuation", f"continuation={el.get('continuation')!r}: kept as a stroke of its own",
                      index=i)
        if len(arr) == 0 and kind != "penUp":
            self.warn(el, "empty-trace", "the trace holds no point: dropped", index=i)
        elif self.inksight:
            xs = arr[:, 0]
            if ((arr[:, :2] < 0) | (arr[:, :2] > INKSIGHT_SIZE)).any():
                self.warn(el, "canvas-range", f"points outside InkSight's 0..{INKSIGHT_SIZE} canvas", index=i)
            if len(arr) == 1 and (xs[0] <= 1 or xs[0] >= INKSIGHT_SIZE - 1):
                self.warn(el, "stray-point", f"a single point at x = {xs[0]:g}, the canvas edge (a stray point in "
                          "InkSight's output): kept", index=i)
        if xml_id(el):
            self.traces[xml_id(el)] = (arr, attrs)
        return arr, attrs

    def view_ref(self, el: ET.Element) -> Optional[str]:
        """The id a ``traceView`` names (``traceDataRef``), or None for a view that holds others."""
        rr = _ref(el.get("traceDataRef"))
        if rr and (el.get("from") or el.get("to")):
            raise self.fail(el, "traceView from/to ranges are not supported")
        return rr

    def scope_change(self, child: ET.Element, current):
        """The scope after a ``context`` or ``traceFormat`` met among an element's children, or None."""
        if _is_inkml(child, "context") and not self.inksight:
            c, b = self.context_format(child)
            return (c or current[0], b or current[1], c is not None or current[2])
        if _is_inkml(child, "traceFormat") and not self.inksight:
            return (self.formats.get(xml_id(child)) or _channels_of(child, self), current[1], True)
        return None

    def walk(self, el: ET.Element, current, parent: Optional[_Node]) -> _Node:
        """A traceGroup (or a traceView holding others) and everything in it, as a _Node. Iterative: nesting is
        bounded by MAX_XML_DEPTH when the file is parsed, and the walk uses no recursion either."""
        top = _Node(el, [], parent, 0 if parent is None else parent.depth + 1)
        self.nodes.append(top)
        stack = [(top, iter(el), self.in_scope(el, current))]
        while stack:
            node, children, scope = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                continue
            rr = self.view_ref(child) if _is_inkml(child, "traceView") else None
            if _is_inkml(child, "trace"):
                arr, attrs = self.read_trace(child, scope)
                node.items.append(("trace", arr, attrs))
            elif rr:
                node.items.append(("ref", rr, child))
            elif _is_inkml(child, "traceView") or _is_inkml(child, "traceGroup"):
                sub = _Node(child, [], node, node.depth + 1)
                self.nodes.append(sub)
                node.items.append(("node", sub))
                stack.append((sub, iter(child), self.in_scope(child, scope)))
            else:
                new = self.scope_change(child, scope)
                if new is not None:
                    stack[-1] = (node, children, new)
        return top

    def read_body(self) -> None:
        """The ``<ink>`` element's children in order: bare traces, groups, views, traces defined for views, and
        the contexts and traceFormats that change the scope of what follows them."""
        current = (_DEFAULT_CHANNELS, None, False)
        for child in self.root:
            if _is_inkml(child, "trace"):
                arr, attrs = self.read_trace(child, current)
                self.bare.append((arr, attrs, child))
            elif _is_inkml(child, "traceGroup"):
                self.walk(child, current, None)
            elif _is_inkml(child, "traceView"):
                rr = self.view_ref(child)
                if rr:
                    self.nodes.append(_Node(child, [("ref", rr, child)], None, 0))
                else:
                    self.walk(child, current, None)
            elif _is_inkml(child, "definitions"):
                for d in _children(child, "trace"):  # traces defined for traceViews to name
                    self.read_trace(d, current)
            else:
                current = self.scope_change(child, current) or current
        if self.n_default:
            el, i = self._default_first
            self.warn(el, "default-format", f"{self.n_default} trace(s) read with the default traceFormat X Y: no "
                      "traceFormat applies to them (none in scope, no contextRef)", index=i)

    # ------------------------------------------------------------------------------------------ groups

    def strokes_of(self, node: _Node, seen: tuple = ()) -> list[tuple[np.ndarray, dict]]:
        """Every trace a group holds, its nested groups' and the traces its views name included, in document
        order; a traceView's traceDataRef names a trace, or a traceGroup / traceView whose traces it stands
        for."""
        if id(node) in self._memo:
            return self._memo[id(node)]
        out = []
        for item in node.items:
            if item[0] == "trace":
                out.append((item[1], item[2]))
            elif item[0] == "node":
                out.extend(self.strokes_of(item[1], seen))
            else:
                _, rr, view = item
                if rr in self.traces:
                    self.referenced.add(rr)
                    out.append(self.traces[rr])
                elif rr in self._by_id:
                    if rr in seen:
                        raise self.fail(view, f"traceDataRef {rr!r} refers back to a group that contains this view")
                    out.extend(self.strokes_of(self._by_id[rr], seen + (rr,)))
                else:
                    raise self.fail(view, f"traceDataRef {rr!r} names no trace or traceGroup")
        self._memo[id(node)] = out
        return out

    def set_box(self, box) -> None:
        """The word box InkSight's canvas is mapped to (checked), and the canvas placement in it."""
        if box is None:
            return
        try:
            bx = tuple(float(v) for v in box)
            if len(bx) != 4 or not all(math.isfinite(v) for v in bx) or bx[2] <= bx[0] or bx[3] <= bx[1]:
                raise ValueError
        except (TypeError, ValueError):
            raise ValueError(f"read_inkml: box must be (x0, y0, x1, y1) with x1 > x0 and y1 > y0, got {box!r}") from None
        self.box = bx
        self._place = canvas_placement((max(1, round(bx[2] - bx[0])), max(1, round(bx[3] - bx[1]))))

    def make_ink(self, pairs: list[tuple[np.ndarray, dict]], where: str) -> tuple[Ink, tuple]:
        """The Ink of a group's non-empty traces (mapped into the box where one is set) and their attributes."""
        kept = [(a, at) for a, at in pairs if len(a)]
        arrays = [a for a, _ in kept]
        if self._place is not None:
            arrays = [np.column_stack([xy, a[:, 2]])
                      for xy, a in zip(canvas_to_box(arrays, self._place, self.box), arrays)]
        try:
            ink = as_ink(arrays, where)
        except InkError as e:
            raise FormatError(str(e)) from None
        return ink, tuple(dict(at) for _, at in kept)

    def groups(self) -> list[InkMLGroup]:
        """The groups that hold ink, in document order (the loose traces first), each with its text and the
        index of the group around it."""
        self._by_id = {xml_id(nd.el): nd for nd in self.nodes if xml_id(nd.el)}
        kept_nodes = []
        for node in self.nodes:
            own = (xml_id(node.el),) if xml_id(node.el) else ()
            st = self.strokes_of(node, own)
            if any(len(a) for a, _ in st):
                kept_nodes.append((node, st))
        loose = [(arr, attrs) for arr, attrs, el in self.bare
                 if len(arr) and not (xml_id(el) and xml_id(el) in self.referenced)]
        offset = 1 if loose else 0
        index = {id(node): offset + i for i, (node, _) in enumerate(kept_nodes)}
        out: list[InkMLGroup] = []
        if loose:
            ink, ta = self.make_ink(loose, f"{self.path}: bare traces")
            out.append(InkMLGroup(None, _text_from(self.doc_ann, self.root, self), ink, dict(self.doc_ann), None, 0,
                                  ta))
        for node, st in kept_nodes:
            ann = _annotations(node.el, self.path)
            ink, ta = self.make_ink(st, f"{self.path}: {describe_element(node.el)}")
            up = node.parent
            while up is not None and id(up) not in index:
                up = up.parent
            out.append(InkMLGroup(xml_id(node.el), _text_from(ann, node.el, self), ink, ann,
                                  index[id(up)] if up is not None else None, node.depth, ta))
        if not out and not self.n_traces:
            raise FormatError(f"{self.path}: <ink>: the document holds no InkML <trace> element: no ink to read")
        if not out:
            raise FormatError(f"{self.path}: <ink>: no trace of the document holds a point (each is empty, or "
                              "defined and never viewed): no ink to read")
        return out


def read_inkml(path: str | os.PathLike, *, max_bytes: Optional[int] = None, dialect: str = "auto",
               box: Optional[Sequence[float]] = None, strict: bool = False) -> InkMLDocument:
    """Read an InkML file into groups of strokes; see the module doc for the dialects read and the rules.

    Returns an :class:`InkMLDocument`: the list of :class:`InkMLGroup` (one per ``traceGroup``, and per
    ``traceView`` holding others or standing alone under ``ink``, that holds ink, in document order, a group
    before the groups nested in it; each group's ink is every trace in it, nested groups' included; a
    ``traceView traceDataRef`` stands for the trace, or the traceGroup / traceView, it names; the document's
    traces that no group holds or views come first, as one group with ``id`` None), with the warnings
    (:class:`InkMLWarning`: every assumption, with file and element) and the definitions read.

    ``dialect``: one of :data:`DIALECTS`. ``box`` = (x0, y0, x1, y1): for a file in InkSight's dialect, the
    page-pixel box of the word image InkSight was given; the canvas points are mapped into it with
    :func:`~inkground_lib.formats.inksight_canvas.canvas_to_box` (crop size: the box's size rounded to whole
    pixels), as the InkSight adapter maps its own output. ``strict``: every tolerated deviation from the
    Recommendation (:data:`DEVIATIONS`) raises FormatError instead of a warning. The file is parsed by :func:`~inkground_lib.formats.xmlsafe.parse_xml`
    (no DTDs or entities; at most ``max_bytes`` bytes, default MAX_INK_FILE_BYTES or $INKGROUND_MAX_INK_FILE_MB
    in MiB). Raises FormatError naming the file, the element and the reason."""
    if dialect not in DIALECTS:
        raise ValueError(f"read_inkml: dialect must be one of {DIALECTS}, got {dialect!r}")
    path = Path(path)
    r = _Reader(path, parse_xml(path, max_bytes=max_bytes), strict)
    r.check_root()
    r.choose_dialect(dialect, box)
    r.read_definitions()
    r.read_contexts()
    r.read_body()
    r.set_box(box)
    groups = r.groups()
    return InkMLDocument(groups, path=str(path), dialect="inksight" if r.inksight else "w3c", warnings=r.warnings,
                         annotations=r.doc_ann, contexts=r.contexts_meta, brushes=r.brushes, box=r.box)


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
