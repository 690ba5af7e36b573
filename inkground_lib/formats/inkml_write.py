"""Writing W3C InkML: :func:`write_inkml` (reading is :mod:`inkground_lib.formats.inkml`)."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Iterable, Mapping, Optional

import numpy as np

from inkground_lib.core.files import atomic_write_text
from inkground_lib.core.ink import Ink, as_ink
from inkground_lib.formats.inkml_document import INKML_NS


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
