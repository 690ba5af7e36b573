"""Parse (and write) answers in SketchAgent's numbered-grid stroke format.

``parse_strokes`` turns a model's answer into strokes in page pixels with a status (ok, partial, truncated,
no_strokes, unparseable) without ever evaluating the text; ``format_strokes`` writes strokes as an answer.
The grid convention, the answer format and the parsing rules are on the design page of the book.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from inkground_lib.core.defaults import GRID
from inkground_lib.core.ink import Ink, InkLike, as_ink

STATUSES = ("ok", "partial", "truncated", "no_strokes", "unparseable", "error")
USABLE_STATUSES = ("ok", "partial", "truncated")

MAX_NUMBER_CHARS = 40
_NUM = r"[-+]?+(?:\d++(?:\.\d*+)?+|\.\d++)"
_SEP = r"\s,;'\"`\[\](){}"
_TAG = re.compile(
    r"<\s*+(/?+)\s*+(?:(strokes)|(points)|(t[_ -]?+values)|(answer)|s\s*+(?:\d{1,9}+)?+)\s*+>", re.I)
_POINT_TOKEN = re.compile(rf"x\s*+({_NUM})\s*+,?+\s*+y\s*+({_NUM})(?=[{_SEP}]|\Z)|[^{_SEP}]++", re.I)
_NUM_TOKEN = re.compile(rf"({_NUM})(?=[{_SEP}]|\Z)|[^{_SEP}]++")


@dataclass
class ParseResult:
    """The parsed answer.

    ``strokes``: valid strokes, each a float64 (n, 2) array of x, y in **page pixels** (origin top-left,
    y down). ``t_values``: per stroke, a float64 (n,) array in [0, 1] or None. ``status``: see module doc.
    ``n_points``: valid points kept; ``n_bad_points``: point tokens dropped; ``n_clamped``: kept points with
    a coordinate clamped onto the photo; ``n_t_clamped``: t values clipped into [0, 1]; ``message``: what
    went wrong (empty for ``ok``).
    """

    strokes: list[np.ndarray]
    t_values: list[Optional[np.ndarray]]
    status: str
    n_clamped: int = 0
    n_points: int = 0
    n_bad_points: int = 0
    message: str = ""
    n_t_clamped: int = 0

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"ParseResult: status {self.status!r} is not one of {STATUSES}")
        if len(self.t_values) != len(self.strokes):
            raise ValueError("ParseResult: t_values must have one entry per stroke")

    @property
    def usable(self) -> bool:
        """True when the result carries strokes (status ok, partial or truncated)."""
        return self.status in USABLE_STATUSES and len(self.strokes) > 0

    def to_ink(self) -> Ink:
        """The strokes as an :class:`Ink` (page pixels; t = NaN: t values are curve parameters, not ms)."""
        return as_ink(self.strokes, where="parsed answer")

    def summary(self) -> dict:
        """JSON-ready counts and status (no coordinates)."""
        return {"status": self.status, "n_strokes": len(self.strokes), "n_points": self.n_points,
                "n_bad_points": self.n_bad_points, "n_clamped": self.n_clamped,
                "n_t_clamped": self.n_t_clamped, "message": self.message}


_REFUSAL = re.compile(
    r"\A\W*(?:I\s*(?:'|\u2019)?\s*m\s+sorry|I\s+am\s+sorry|sorry\b|I\s+apologi[sz]e|unfortunately\b|"
    r"I\s+(?:can\s*not|can(?:'|\u2019)?t|won(?:'|\u2019)?t|will\s+not|am\s+(?:not\s+able|unable)|"
    r"(?:'|\u2019)m\s+(?:not\s+able|unable)|do\s+not|don(?:'|\u2019)?t)\b)", re.I)


def answer_kind(text: Optional[str]) -> str:
    """How an answer reads before parsing: "empty" (None or only white space), "refusal" (no tag at all and it
    opens like a refusal: "I'm sorry", "I can't", "Unfortunately", ...) or "answer".

    A text with any ``<...>`` tag is an answer whatever its words (the parser salvages what it can).

    >>> answer_kind("  "), answer_kind("I'm sorry, but I can't trace handwriting."), answer_kind("<strokes>")
    ('empty', 'refusal', 'answer')
    >>> answer_kind("Sorry - <strokes><s1><points>'x1y1'</points></s1></strokes>")
    'answer'
    """
    if text is None or not str(text).strip():
        return "empty"
    text = str(text)
    if "<" not in text and _REFUSAL.match(text[:200]):
        return "refusal"
    return "answer"


def error_result(message: str) -> ParseResult:
    """A result with status ``"error"`` and no strokes, for a transport error or a refusal."""
    return ParseResult(strokes=[], t_values=[], status="error", message=str(message))


# ------------------------------------------------------------------------------------------ mapping

def _check_grid(grid: int, page_size) -> tuple[int, float, float]:
    if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or grid < 1:
        raise ValueError(f"grid must be a positive integer, got {grid!r}")
    try:
        w, h = (float(v) for v in page_size)
    except (TypeError, ValueError):
        raise ValueError(f"page_size must be (width, height), got {page_size!r}") from None
    if not (np.isfinite(w) and np.isfinite(h) and w > 0 and h > 0):
        raise ValueError(f"page_size must be two positive numbers (width, height), got {page_size!r}")
    return int(grid), w, h


def to_cells(points, grid: int, page_size: tuple[float, float]) -> np.ndarray:
    """Page-pixel points (n, >=2: x, y, ...) -> (n, 2) cell coordinates J, I (1-based, y up). No clamping."""
    g, w, h = _check_grid(grid, page_size)
    p = np.asarray(points, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] < 2:
        raise ValueError(f"to_cells: points must be an (n, 2) array, got shape {p.shape}")
    return np.column_stack([p[:, 0] * g / w + 0.5, g - p[:, 1] * g / h + 0.5])


def from_cells(cells, grid: int, page_size: tuple[float, float], clamp: bool = False) -> np.ndarray:
    """(n, 2) cell coordinates J, I -> (n, 2) page pixels x, y. With ``clamp``, J and I are first clamped
    into [0.5, G + 0.5] (onto the photo)."""
    g, w, h = _check_grid(grid, page_size)
    c = np.asarray(cells, dtype=np.float64)
    if c.ndim != 2 or c.shape[1] != 2:
        raise ValueError(f"from_cells: cells must be an (n, 2) array, got shape {c.shape}")
    if clamp:
        c = np.clip(c, 0.5, g + 0.5)
    return np.column_stack([(c[:, 0] - 0.5) * w / g, (g - c[:, 1] + 0.5) * h / g])


# ------------------------------------------------------------------------------------------ writing

def _fmt(v: float, decimals: int) -> str:
    s = f"{v:.{decimals}f}"
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def arc_t_values(stroke) -> np.ndarray:
    """Normalised arc length along a stroke (first point 0, last 1); evenly spaced when it has no length;
    [0] for a single point."""
    p = np.asarray(stroke, dtype=np.float64)[:, :2]
    if len(p) == 1:
        return np.zeros(1)
    cum = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(p, axis=0).T))])
    if cum[-1] <= 0:
        return np.linspace(0.0, 1.0, len(p))
    return cum / cum[-1]


def format_cell_strokes(cell_strokes: Sequence, decimals: int = 1, t_values="arc", dedupe: bool = False,
                        quote: str = "'", t_decimals: int = 2) -> str:
    """Write strokes given in cell coordinates (each (n, 2): J, I) as answer text (no ``<answer>`` wrapper).

    ``t_values``: "arc" (normalised arc length per stroke), None (no ``<t_values>``), or a sequence with one
    (n,) array (or None: no t values) per stroke, as in ``ParseResult.t_values``. ``dedupe`` drops consecutive points that print identically. Empty strokes are
    skipped.
    """
    if decimals < 0 or t_decimals < 0:
        raise ValueError("decimals must be >= 0")
    lines = ["<strokes>"]
    k = 0
    for i, s in enumerate(cell_strokes):
        c = np.asarray(s, dtype=np.float64).reshape(-1, 2) if len(s) else np.zeros((0, 2))
        if not np.isfinite(c).all():
            raise ValueError(f"format_cell_strokes: stroke {i} has a NaN or infinite coordinate")
        if len(c) == 0:
            continue
        toks = [f"x{_fmt(a, decimals)}y{_fmt(b, decimals)}" for a, b in c]
        if isinstance(t_values, str):
            if t_values != "arc":
                raise ValueError(f"t_values must be 'arc', None or a sequence, got {t_values!r}")
            tv = arc_t_values(c)
        elif t_values is None:
            tv = None
        elif t_values[i] is None:
            tv = None
        else:
            tv = np.asarray(t_values[i], dtype=np.float64).reshape(-1)
            if len(tv) != len(c):
                raise ValueError(f"format_cell_strokes: stroke {i} has {len(c)} points but {len(tv)} t values")
        keep = np.ones(len(toks), bool)
        if dedupe:
            keep[1:] = [toks[j] != toks[j - 1] for j in range(1, len(toks))]
        toks = [f"{quote}{t}{quote}" for t, kk in zip(toks, keep) if kk]
        k += 1
        body = f"<s{k}><points>{', '.join(toks)}</points>"
        if tv is not None:
            body += "<t_values>" + ", ".join(_fmt(v, t_decimals) for v in tv[keep]) + "</t_values>"
        lines.append(body + f"</s{k}>")
    lines.append("</strokes>")
    return "\n".join(lines)


def format_strokes(strokes: InkLike, grid: int = GRID, page_size: tuple[float, float] = (1.0, 1.0),
                   decimals: int = 1, t_values="arc", dedupe: bool = False, quote: str = "'",
                   t_decimals: int = 2) -> str:
    """Page-pixel strokes (an Ink or (n, 2) / (n, 3) arrays) -> answer text; the inverse of
    :func:`parse_strokes` up to ``decimals`` decimal places of a cell. Points are not clamped; with
    ``decimals >= 1`` a point on the photo stays on it (the bounds 0.5 and G + 0.5 print exactly), with 0 an
    edge value can round off the grid (0.5 -> 0)."""
    ink = as_ink(strokes, where="format_strokes")
    cells = [to_cells(s, grid, page_size) for s in ink.strokes]
    return format_cell_strokes(cells, decimals=decimals, t_values=t_values, dedupe=dedupe, quote=quote,
                               t_decimals=t_decimals)


# ------------------------------------------------------------------------------------------ parsing

@dataclass
class _Stroke:
    points: list = field(default_factory=list)        # (J, I) floats
    bad_idx: list = field(default_factory=list)       # token indices of bad points
    n_tokens: int = 0
    t: Optional[list] = None
    t_bad: bool = False
    t_given: bool = False
    closed: bool = False
    implicit: bool = False


def _number(s: str) -> Optional[float]:
    if len(s) > MAX_NUMBER_CHARS:
        return None
    return float(s)


def _scan_points(text: str, a: int, b: int, at_end: bool, st: _Stroke) -> None:
    matches = list(_POINT_TOKEN.finditer(text, a, b))
    for k, m in enumerate(matches):
        idx = st.n_tokens
        st.n_tokens += 1
        if at_end and k == len(matches) - 1 and m.end() == b:
            st.bad_idx.append(idx)   # possibly cut short
            continue
        if m.group(1) is None:
            st.bad_idx.append(idx)
            continue
        j, i = _number(m.group(1)), _number(m.group(2))
        if j is None or i is None:
            st.bad_idx.append(idx)
            continue
        st.points.append((j, i))


def _scan_t(text: str, a: int, b: int, at_end: bool, st: _Stroke) -> None:
    st.t_given = True
    vals = []
    matches = list(_NUM_TOKEN.finditer(text, a, b))
    for k, m in enumerate(matches):
        v = None if m.group(1) is None else _number(m.group(1))
        if v is None or (at_end and k == len(matches) - 1 and m.end() == b):
            st.t_bad = True
            continue
        vals.append(v)
    st.t = (st.t or []) + vals


@dataclass
class _Block:
    strokes: list
    closed: bool          # ended by </strokes>
    at_end: bool          # ended by the end of the text
    wrapped: bool         # opened by <strokes>
    notes: list


def _scan_block(text: str, tags: list, k0: int, k1: int, end: int, wrapped: bool, closed: bool) -> _Block:
    """Strokes from the tags tags[k0:k1] (the block's content); ``end`` is where the block's content ends."""
    n = len(text)
    strokes: list[_Stroke] = []
    notes: list[str] = []
    cur: Optional[_Stroke] = None
    unclosed_regions = 0
    for k in range(k0, k1):
        m = tags[k]
        closing = bool(m.group(1))
        nxt = tags[k + 1].start() if k + 1 < k1 else end
        is_points, is_t = m.group(3) is not None, m.group(4) is not None
        if is_points or is_t:
            if closing:
                continue
            if cur is None:
                cur = _Stroke(implicit=True)
                strokes.append(cur)
            region_closed = (k + 1 < k1 and bool(tags[k + 1].group(1))
                             and (tags[k + 1].group(3) if is_points else tags[k + 1].group(4)) is not None)
            at_end = (not region_closed) and nxt == n
            if not region_closed:
                unclosed_regions += 1
            (_scan_points if is_points else _scan_t)(text, m.end(), nxt, at_end, cur)
            if cur.implicit:  # a bare <points>/<t_values> region: its own closing tag completes the stroke
                cur.closed = region_closed
        elif m.group(2) is None and m.group(5) is None:      # a stroke tag
            if closing:
                if cur is not None:
                    cur.closed = True
                    cur = None
                else:
                    notes.append("stray stroke closing tag")
            else:
                cur = _Stroke()
                strokes.append(cur)
    if unclosed_regions:
        notes.append(f"{unclosed_regions} unclosed <points>/<t_values> region(s)")
    return _Block(strokes=strokes, closed=closed, at_end=(end == n and not closed), wrapped=wrapped,
                  notes=notes)


def _finish(block: _Block, grid: int, w: float, h: float, n_blocks: int, used: int) -> ParseResult:
    notes = list(block.notes)
    out, tvs = [], []
    n_clamped = n_bad = n_t_clamped = 0
    n_invalid = n_unclosed = n_implicit = n_t_problem = 0
    lo, hi = 0.5, grid + 0.5
    for i, st in enumerate(block.strokes):
        n_bad += len(st.bad_idx)
        last = i == len(block.strokes) - 1
        if not st.closed and not (last and block.at_end):
            n_unclosed += 1
        n_implicit += st.implicit
        if not st.points:
            n_invalid += 1
            continue
        c = np.asarray(st.points, dtype=np.float64)
        cc = np.clip(c, lo, hi)
        n_clamped += int(np.any(cc != c, axis=1).sum())
        out.append(from_cells(cc, grid, (w, h)))
        t = None
        if st.t_given:
            ok_t = not st.t_bad and st.t is not None
            if ok_t and len(st.t) == len(st.points):
                t = np.asarray(st.t, dtype=np.float64)
            elif ok_t and len(st.t) == st.n_tokens:
                bad = set(st.bad_idx)
                t = np.asarray([v for j, v in enumerate(st.t) if j not in bad], dtype=np.float64)
            else:
                n_t_problem += 1
            if t is not None:
                tc = np.clip(t, 0.0, 1.0)
                n_t_clamped += int((tc != t).sum())
                t = tc
        tvs.append(t)
    n_points = int(sum(len(s) for s in out))
    truncated = block.at_end and (block.wrapped or (block.strokes and not block.strokes[-1].closed))
    if n_bad:
        notes.append(f"{n_bad} bad point token(s) dropped")
    if n_invalid:
        notes.append(f"{n_invalid} stroke(s) without a valid point dropped")
    if n_clamped:
        notes.append(f"{n_clamped} point(s) clamped onto the grid [0.5, {grid}.5]")
    if n_t_clamped:
        notes.append(f"{n_t_clamped} t value(s) clipped into [0, 1]")
    if n_t_problem:
        notes.append(f"{n_t_problem} stroke(s) with malformed t values (ignored)")
    if n_unclosed:
        notes.append(f"{n_unclosed} stroke(s) not closed")
    if n_implicit:
        notes.append(f"{n_implicit} <points> outside a stroke tag")
    if block.wrapped and not block.closed and not block.at_end:
        notes.append("<strokes> block not closed")
    problems = bool(notes)
    if truncated:
        notes.insert(0, "output ends inside the answer (truncated)")
    if not block.wrapped:
        notes.append("no <strokes> wrapper")
    if n_blocks > 1:
        notes.append(f"{n_blocks} <strokes> blocks; used block {used + 1}")
    if not out:
        status = "no_strokes"
    elif truncated:
        status = "truncated"
    elif problems:
        status = "partial"
    else:
        status = "ok"
    return ParseResult(strokes=out, t_values=tvs, status=status, n_clamped=n_clamped, n_points=n_points,
                       n_bad_points=n_bad, message="; ".join(notes), n_t_clamped=n_t_clamped)


def parse_strokes(text: str, grid: int = GRID, page_size: tuple[float, float] = (1.0, 1.0)) -> ParseResult:
    """Parse a model's answer (see the module doc for the rules and statuses) into page-pixel strokes.

    ``grid`` is G; ``page_size`` is (W, H) in page pixels of the page photo the grid was drawn on.
    Never raises on any text; raises ValueError for a bad ``grid`` / ``page_size`` or a non-str ``text``.
    """
    g, w, h = _check_grid(grid, page_size)
    if not isinstance(text, str):
        raise ValueError(f"parse_strokes: text must be a str, got {type(text).__name__}")
    tags = list(_TAG.finditer(text))
    if not any(m.group(5) is None for m in tags):
        what = "empty answer" if not text.strip() else "no stroke tags in the answer"
        return ParseResult(strokes=[], t_values=[], status="unparseable", message=what)
    opens = [k for k, m in enumerate(tags) if m.group(2) is not None and not m.group(1)]
    n = len(text)
    blocks: list[_Block] = []
    if not opens:
        blocks.append(_scan_block(text, tags, 0, len(tags), n, wrapped=False, closed=False))
    else:
        for bi, k0 in enumerate(opens):
            limit = opens[bi + 1] if bi + 1 < len(opens) else len(tags)
            k1, end, closed = limit, (tags[limit].start() if limit < len(tags) else n), False
            for k in range(k0 + 1, limit):
                m = tags[k]
                if m.group(1) and (m.group(2) is not None or m.group(5) is not None):
                    k1, end, closed = k, m.start(), m.group(2) is not None
                    break
            blocks.append(_scan_block(text, tags, k0 + 1, k1, end, wrapped=True, closed=closed))
    used = len(blocks) - 1
    for bi in range(len(blocks) - 1, -1, -1):
        if any(st.points for st in blocks[bi].strokes):
            used = bi
            break
    return _finish(blocks[used], g, w, h, len(blocks), used)
