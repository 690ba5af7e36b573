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
  hex numbers, ``T`` / ``F`` / ``*`` / ``?``; the grammar is quoted above :func:`parse_trace`). Channels other
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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from inkground_lib.core.defaults import MAX_ANNOTATION_TEXT, MAX_INK_POINTS
from inkground_lib.core.ink import Ink, InkError, as_ink
from inkground_lib.formats.inkml_document import (
    DEVIATIONS,
    INKML_NS,
    WARNING_KINDS,
    InkMLDocument,
    InkMLGroup,
    InkMLWarning,
)
from inkground_lib.formats.inkml_traces import (
    DEFAULT_CHANNELS,
    INT_PAIRS,
    Channels,
    channels_of,
    inkml_children,
    is_inkml,
    parse_pairs,
    parse_trace,
    ref_id,
)
from inkground_lib.formats.inksight_canvas import INKSIGHT_SIZE, canvas_placement, canvas_to_box
from inkground_lib.formats.xmlsafe import (
    FormatError,
    describe_element,
    local_name,
    parse_xml,
    xml_id,
)


DIALECTS = ("auto", "w3c", "inksight")
"""The ``dialect=`` values of :func:`read_inkml`: ``auto`` (InkSight's dialect where the file is InkSight's, else
the Recommendation with the tolerances above), ``w3c`` (never InkSight's dialect), ``inksight`` (every trace
``x,y x,y``)."""


def _text_of(el: ET.Element) -> str:
    return "".join(el.itertext())


def _annotations(el: ET.Element, path="") -> dict:
    """Every <annotation> child by type (first of each), and <annotationXML> children under "annotationXML".
    An annotation longer than MAX_ANNOTATION_TEXT characters is refused (FormatError naming file and element)."""
    ann: dict = {}
    for a in el:
        if is_inkml(a, "annotation"):
            text = _text_of(a).strip()
            if len(text) > MAX_ANNOTATION_TEXT:
                raise FormatError(f"{path}: {describe_element(el)} <annotation type={a.get('type')!r}>: a text of "
                                  f"{len(text):,} characters; annotations of more than {MAX_ANNOTATION_TEXT:,} are "
                                  "refused (MAX_ANNOTATION_TEXT)")
            ann.setdefault(a.get("type") or "", text)
        elif is_inkml(a, "annotationXML"):
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
    if any(is_inkml(el, "traceFormat") or is_inkml(el, "context") for el in root.iter()):
        return None
    traces = [el for el in root.iter() if is_inkml(el, "trace")]
    texts = [(t.text or "") for t in traces if (t.text or "").strip()]
    if not texts or not all(INT_PAIRS.fullmatch(s) for s in texts):
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
        self.formats: dict[str, Channels] = {}
        self.sources: dict[str, ET.Element] = {}
        self.context_els: dict[str, ET.Element] = {}
        self.brushes: dict[str, dict] = {}
        self.contexts_meta: dict[str, dict] = {}
        self._resolved: dict[int, tuple[Optional[Channels], Optional[str]]] = {}
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
            if is_inkml(el, "traceFormat") and i and not self.inksight:
                self.formats[i] = channels_of(el, self)
            elif is_inkml(el, "inkSource") and i:
                self.sources[i] = el
            elif is_inkml(el, "context") and i:
                self.context_els.setdefault(i, el)
            elif is_inkml(el, "brush") and i:
                self.brushes[i] = {bp.get("name"): bp.get("value") for bp in inkml_children(el, "brushProperty")
                                   if bp.get("name")}
        if self.inksight:
            for el in self.root.iter():
                if is_inkml(el, "traceFormat") or is_inkml(el, "context"):
                    self.warn(el, "ignored-format", "not used: traces in InkSight's dialect are x,y pairs",
                              once=("ignored-format",))

    def source_format(self, src: ET.Element) -> Optional[Channels]:
        """An inkSource's traceFormat (child or traceFormatRef), or None."""
        tfs = inkml_children(src, "traceFormat")
        if tfs:
            return self.formats.get(xml_id(tfs[0])) or channels_of(tfs[0], self)
        rr = ref_id(src.get("traceFormatRef"))
        return self.formats.get(rr) if rr else None

    def context_format(self, ctx: ET.Element, seen: tuple = ()) -> tuple[Optional[Channels], Optional[str]]:
        """(the context's traceFormat or None, its brush id): its traceFormat child, traceFormatRef, inkSource
        child, inkSourceRef, then the context it names by contextRef."""
        if id(ctx) in self._resolved:
            return self._resolved[id(ctx)]
        brush = ref_id(ctx.get("brushRef")) or next((xml_id(b) for b in inkml_children(ctx, "brush") if xml_id(b)), None)
        chans: Optional[Channels] = None
        tfs = inkml_children(ctx, "traceFormat")
        if tfs:
            chans = self.formats.get(xml_id(tfs[0])) or channels_of(tfs[0], self)
        if chans is None and ref_id(ctx.get("traceFormatRef")):
            rr = ref_id(ctx.get("traceFormatRef"))
            if rr not in self.formats:
                raise self.fail(ctx, f"traceFormatRef {rr!r} names no traceFormat")
            chans = self.formats[rr]
        if chans is None:
            for src in inkml_children(ctx, "inkSource"):
                chans = self.source_format(src)
                if chans is not None:
                    break
        if chans is None and ref_id(ctx.get("inkSourceRef")):
            rr = ref_id(ctx.get("inkSourceRef"))
            if rr not in self.sources:
                raise self.fail(ctx, f"inkSourceRef {rr!r} names no inkSource")
            chans = self.source_format(self.sources[rr])
            if chans is None:
                raise self.fail(self.sources[rr], "inkSource holds no traceFormat")
        rr = ref_id(ctx.get("contextRef"))
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
            src_id = ref_id(ctx.get("inkSourceRef")) or next((xml_id(s) for s in inkml_children(ctx, "inkSource")), None)
            props: dict = {}
            src_el = self.sources.get(src_id) if src_id else None
            if src_el is None:
                src_el = next(iter(inkml_children(ctx, "inkSource")), None)
            for cp_group in (inkml_children(src_el, "channelProperties") if src_el is not None else []):
                for cp in inkml_children(cp_group, "channelProperty"):
                    props.setdefault(cp.get("channel") or "", {})[cp.get("name") or ""] = (
                        f"{cp.get('value')}" + (f" {cp.get('units')}" if cp.get("units") else ""))
            self.contexts_meta[cid] = {
                "channels": list(chans.regular) if chans else None,
                "intermittent": list(chans.intermittent) if chans else None,
                "units": dict(chans.units) if chans else {}, "dropped": list(chans.dropped) if chans else [],
                "channel_properties": props, "inkSource": src_id, "brush": brush}

    # ------------------------------------------------------------------------------------------ traces

    def in_scope(self, el: ET.Element, current: tuple[Channels, Optional[str], bool]):
        """The (format, brush, explicit?) an element's traces use: its contextRef's, else the one in scope."""
        rr = ref_id(el.get("contextRef"))
        chans, brush, explicit = current
        if rr:
            ctx = self.context_els.get(rr)
            if ctx is None:
                self.warn(el, "undefined-context", f"contextRef {rr!r} names no context in the file: read with the "
                          f"traceFormat in scope ({chans.describe()}"
                          + (", the default)" if chans is DEFAULT_CHANNELS else ")"), once=("undefined-context", rr))
                explicit = True  # this warning says which traceFormat was used
            else:
                c, b = self.context_format(ctx) if not self.inksight else (None, None)
                if c is None and not self.inksight:
                    self.warn(ctx, "context-without-format", "the context (and its inkSource) defines no "
                              "traceFormat: its traces are read with the default X Y", once=("no-format", rr))
                    c = DEFAULT_CHANNELS
                chans, brush, explicit = (c or chans), (b or brush), True
        gb = ref_id(el.get("brushRef"))
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
            arr = parse_pairs(el.text or "", where)
        else:
            if chans is DEFAULT_CHANNELS and not explicit:
                self.n_default += 1
                if self._default_first is None:
                    self._default_first = (el, i)
            elif chans.dropped:
                self.warn(el, "channels-dropped", f"channels {' '.join(chans.dropped)} of {chans.where} "
                          f"({chans.describe()}) read and dropped from the ink", index=i,
                          once=("dropped", chans.where, chans.dropped))
            arr = parse_trace(el.text or "", chans, where)
        attrs = {k: v for k, v in (("id", xml_id(el)), ("contextRef", ref_id(el.get("contextRef"))),
                                   ("brushRef", ref_id(el.get("brushRef")) or brush)) if v}
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
        rr = ref_id(el.get("traceDataRef"))
        if rr and (el.get("from") or el.get("to")):
            raise self.fail(el, "traceView from/to ranges are not supported")
        return rr

    def scope_change(self, child: ET.Element, current):
        """The scope after a ``context`` or ``traceFormat`` met among an element's children, or None."""
        if is_inkml(child, "context") and not self.inksight:
            c, b = self.context_format(child)
            return (c or current[0], b or current[1], c is not None or current[2])
        if is_inkml(child, "traceFormat") and not self.inksight:
            return (self.formats.get(xml_id(child)) or channels_of(child, self), current[1], True)
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
            rr = self.view_ref(child) if is_inkml(child, "traceView") else None
            if is_inkml(child, "trace"):
                arr, attrs = self.read_trace(child, scope)
                node.items.append(("trace", arr, attrs))
            elif rr:
                node.items.append(("ref", rr, child))
            elif is_inkml(child, "traceView") or is_inkml(child, "traceGroup"):
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
        current = (DEFAULT_CHANNELS, None, False)
        for child in self.root:
            if is_inkml(child, "trace"):
                arr, attrs = self.read_trace(child, current)
                self.bare.append((arr, attrs, child))
            elif is_inkml(child, "traceGroup"):
                self.walk(child, current, None)
            elif is_inkml(child, "traceView"):
                rr = self.view_ref(child)
                if rr:
                    self.nodes.append(_Node(child, [("ref", rr, child)], None, 0))
                else:
                    self.walk(child, current, None)
            elif is_inkml(child, "definitions"):
                for d in inkml_children(child, "trace"):  # traces defined for traceViews to name
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


