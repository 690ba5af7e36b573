"""One InkML trace as the Recommendation defines it: a traceFormat's channels (:func:`channels_of`) and a trace's
values in every encoding of the value grammar (:func:`parse_trace`), and InkSight's ``x,y`` pairs
(:func:`parse_pairs`); the reader that walks a document is :mod:`inkground_lib.formats.inkml`."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Optional

import numpy as np

from inkground_lib.formats.inkml_document import INKML_NS
from inkground_lib.formats.xmlsafe import FormatError, local_name, xml_id


@dataclass(frozen=True)
class Channels:
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


DEFAULT_CHANNELS = Channels()


# T units as the Recommendation's channel units ("ms", "s", ...); "dev" (device ticks, as Office writes the T of
# its exports) and other units are not times: the T channel is then read and its values dropped
_T_UNITS = {"ms": 1.0, "s": 1000.0, "sec": 1000.0, "us": 1e-3, "µs": 1e-3, "ns": 1e-6, "min": 60000.0}


def ref_id(v: Optional[str]) -> Optional[str]:
    """An IDREF / URI reference as files write it: ``#id`` or a bare ``id`` (CROHME writes traceDataRef="0")."""
    v = (v or "").strip()
    return (v[1:] if v.startswith("#") else v) or None


def is_inkml(el: ET.Element, name: str) -> bool:
    """``el`` is the InkML element ``name`` (in the InkML namespace, or in none as files without a namespace
    write it); elements of other namespaces (e.g. Microsoft's ``msink:context`` extensions) are not."""
    tag = el.tag
    if not isinstance(tag, str):
        return False
    if tag.startswith("{"):
        ns, _, local = tag[1:].partition("}")
        return ns == INKML_NS and local == name
    return tag == name


def inkml_children(el: ET.Element, name: str) -> list[ET.Element]:
    return [c for c in el if is_inkml(c, name)]


def channels_of(tf: ET.Element, r) -> Channels:
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
        if is_inkml(child, "channel"):
            add(child, regular)
        elif is_inkml(child, "regularChannels") or is_inkml(child, "intermittentChannels"):
            for ch in inkml_children(child, "channel"):
                add(ch, regular if local_name(child.tag) == "regularChannels" else inter)
    if not regular:
        raise r.fail(tf, "traceFormat declares no channel")
    for need in ("X", "Y"):
        if need not in regular:
            raise r.fail(tf, f"traceFormat has no regular channel {need} (channels: {' '.join(regular + inter)})")
    return Channels(tuple(regular), tuple(inter), t_scale, tuple(units), where)


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
INT_PAIRS = re.compile(rf"{_WSP}*[0-9]+,[0-9]+(?:{_WSP}+[0-9]+,[0-9]+)*{_WSP}*")
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


def parse_trace(text: str, ch: Channels, where: str) -> np.ndarray:
    """Parse a trace's text into an (n, 3) x, y, t array (t NaN where absent, '?' or dropped)."""
    try:
        return _parse_values(text, ch, where)
    except FormatError as e:
        if _PAIRS.fullmatch(text or "") and "," in (text or ""):
            raise FormatError(str(e) + _INKSIGHT_HINT) from None
        raise


def _parse_values(text: str, ch: Channels, where: str) -> np.ndarray:
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


def parse_pairs(text: str, where: str) -> np.ndarray:
    """InkSight's trace text ``x,y x,y ...`` as an (n, 3) array (t NaN)."""
    text = text or ""
    if not text.strip(" \t\r\n"):
        return np.zeros((0, 3))
    if not _PAIRS.fullmatch(text):
        bad = next((p for p in text.split() if not re.fullmatch(_PAIR, p)), text.strip())[:20]
        raise FormatError(f"{where}: {bad!r} is not an x,y pair (InkSight's dialect writes 'x,y x,y ...')")
    pts = [tuple(float(v) for v in p.split(",")) for p in text.split()]
    return np.column_stack([np.asarray(pts, np.float64).reshape(-1, 2), np.full(len(pts), np.nan)])
