"""What reading W3C InkML gives: the namespace, the kinds of warning (and which are deviations from the
Recommendation), :class:`InkMLWarning`, :class:`InkMLGroup` and :class:`InkMLDocument` (the reader is
:mod:`inkground_lib.formats.inkml`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence

from inkground_lib.core.ink import Ink


INKML_NS = "http://www.w3.org/2003/InkML"

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
