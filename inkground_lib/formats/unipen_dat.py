r"""The original UNIPEN 1.0 ``.dat`` format (as in the train_r01_v07 release): one file and its includes.

A UNIPEN file is a sequence of statements; a statement starts at a line beginning with ``.KEYWORD`` and runs
up to the next such line (lines ending in LF or CR LF). The keywords this reader acts on:

* ``.INCLUDE name``: the named file is read in place, recursively. ``name`` is looked up, in order, in the
  include folders (the release's ``include/``), the including file's folder and the top file's folder (the
  ``UNIPEN_INCLUDE_PATH=". .INHERIT <include>"`` convention of the reference tools, uptools3). A file that
  does not exist, or that lies outside ``root`` (the release root), is a :class:`FormatError`. Statements
  are not scoped: what an included file sets (``.COORD``, resolution, writer, ...) holds after it, as the
  reference tools read it.
* ``.PEN_DOWN`` / ``.PEN_UP``: a *component*, the samples that follow (whitespace-separated numbers, one
  group per sample in the order ``.COORD`` gives, e.g. ``X Y T``). Components are numbered from 0 in file
  order over pen-down and pen-up components together, counting only components that hold samples (an empty
  ``.PEN_UP`` is a marker, not a component), ``.DT`` (elapsed time) never; these are the numbers
  ``.SEGMENT`` refers to.
* ``.SEGMENT level delineation quality "label"``: ``delineation`` is a comma-separated list of ranges
  ``c``, ``c0-c1``, ``c0:p0-c1``, ``c0-c1:p1`` or ``c0:p0-c1:p1`` (component ``c``, sample ``p`` in it, both
  from 0, ends included), or ``?``: the components between the statement and its neighbour of the same level,
  where that is unambiguous (:func:`resolve_unknown_delineation`; otherwise the segment is skipped, named);
  ``quality`` is ``GOOD``, ``OK``, ``BAD`` or ``?``; the label is a double-quoted
  string with the escapes ``\"``, ``\\``, ``\/``, ``\@``, ``\ ``, ``\t``, ``\n`` (the unpatched release also
  has three double quotes for a double quote and ``"\"`` for a backslash; both are read as such).
* state keywords, remembered with every component that follows them: ``.COORD``, ``.X_POINTS_PER_INCH`` /
  ``.Y_POINTS_PER_INCH`` (or ``.X_POINTS_PER_MM`` / ``.Y_POINTS_PER_MM``, stored converted to per inch),
  ``.POINTS_PER_SECOND``, ``.WRITER_ID``, ``.STYLE``, ``.DATA_SOURCE``, ``.DATA_ID``, ``.HIERARCHY``.
* every other keyword of the format definition (``.VERSION``, ``.COMMENT``, ``.SETUP``, ``.PAD``, ``.X_DIM``,
  ``.START_BOX``, ``.H_LINE``, ``.ALPHABET``, ``.LEXICON``, ``.DATE``, ``.HAND``, ...) is accepted and
  ignored; a keyword outside the definition is counted in :attr:`UnipenDocument.unknown_keywords` and
  ignored (the reference tools skip them too). The format has no orientation keyword: y grows upwards.

Units: coordinates stay in the file's tablet units. :func:`segment_ink` returns the words in the convention
of the UNIPEN-derived JSON (``data/unipen_cursive/README.md``), so that both sources agree: x shifted so its
minimum is 0, y flipped to grow downwards and shifted so its minimum is 0, t in ms synthesised as
(pen-down sample index in the word) * 1000 / points_per_second rounded to 0.1 ms as in the JSON (NaN
without ``.POINTS_PER_SECOND``; a ``T`` channel is not used, pen-up time between strokes is not kept). Only
pen-down samples make strokes. Statements are read in order, but a state keyword (``.COORD``, resolution,
...) that a document sets only after some of its samples also applies to those samples: the release's pcl
files include their data before the ``.doc`` file that gives ``.COORD``, and the reference tools read such
keywords document-wide.

Errors are :class:`FormatError` naming file, line and keyword. Problems of one segment (a malformed
statement, a range out of bounds, no pen-down sample, ...) or of one component (a value that is no number, an incomplete sample:
the release's hpb43ajj.dat has a 3-value sample in X Y data) do not stop the file: the damaged component
keeps its number, and :func:`read_unipen_dat` returns the segments that use it as skipped.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from inkground_lib.core.dataset import check_file_size
from inkground_lib.core.defaults import MAX_INK_FILE_BYTES, MAX_INK_FILE_ENV
from inkground_lib.core.ink import Ink
from inkground_lib.formats.unipen import RecordedWord
from inkground_lib.formats.xmlsafe import FormatError, finite_number

KNOWN_KEYWORDS = frozenset(["KEYWORD", "RESERVE", "COMMENT", "INCLUDE", "VERSION", "DATA_SOURCE", "DATA_ID", "COORD", "HIERARCHY", "DATA_CONTACT", "DATA_INFO", "SETUP", "PAD", "ALPHABET", "ALPHABET_FREQ", "LEXICON_SOURCE", "LEXICON_ID", "LEXICON_CONTACT", "LEXICON_INFO", "LEXICON", "LEXICON_FREQ", "X_DIM", "Y_DIM", "H_LINE", "V_LINE", "X_POINTS_PER_INCH", "Y_POINTS_PER_INCH", "Z_POINTS_PER_INCH", "X_POINTS_PER_MM", "Y_POINTS_PER_MM", "Z_POINTS_PER_MM", "POINTS_PER_GRAM", "POINTS_PER_SECOND", "PEN_DOWN", "PEN_UP", "DT", "DATE", "STYLE", "WRITER_ID", "COUNTRY", "HAND", "AGE", "SEX", "SKILL", "WRITER_INFO", "SEGMENT", "START_SET", "START_BOX", "REC_SOURCE", "REC_ID", "REC_CONTACT", "REC_INFO", "IMPLEMENT", "TRAINING_SET", "TEST_SET", "ADAPT_SET", "LEXICON_SET", "REC_TIME", "REC_LABELS", "REC_SCORES"])
"""The keywords of the UNIPEN 1.0 format definition."""

QUALITIES = ("GOOD", "OK", "BAD", "?")
MAX_INCLUDE_DEPTH = 16

_KEYWORD = re.compile(rb"^\.([A-Za-z_][A-Za-z0-9_]*)", re.MULTILINE)
_RANGE = re.compile(r"(\d+)(?::(\d+))?(?:-(\d+)(?::(\d+))?)?")
_ESCAPE = re.compile(r"\\([\"\\/@ tn])")
_ESCAPED = {'"': '"', "\\": "\\", "/": "/", "@": "@", " ": " ", "t": "\t", "n": "\n"}


@dataclass(frozen=True)
class State:
    """What the statements before a component set: resolution in points per inch (x, y; None when the file
    gives none), samples per second, the ``.COORD`` channels, writer, style, data source / id, hierarchy."""

    coord: tuple[str, ...] = ()
    x_ppi: float | None = None
    y_ppi: float | None = None
    points_per_second: float | None = None
    writer_id: str | None = None
    style: str | None = None
    data_source: str | None = None
    data_id: str | None = None
    hierarchy: tuple[str, ...] = ()


@dataclass(frozen=True)
class Component:
    """A ``.PEN_DOWN`` / ``.PEN_UP`` component: ``samples`` (n, len(state.coord)) float64 in file units.
    A damaged component (a value that is no number, an incomplete last sample) keeps its number, has no
    samples and ``error`` says what is wrong; segments that use it are not read."""

    pen_down: bool
    samples: np.ndarray
    state: State
    file: str
    line: int
    error: str | None = None


@dataclass(frozen=True)
class Segment:
    """A ``.SEGMENT`` statement: ``index`` is its position among the document's segments. A malformed
    statement (missing label, unknown quality, bad delineation) is kept with ``error`` set, so that it
    spoils only itself."""

    index: int
    level: str
    delineation: str
    quality: str
    label: str
    file: str
    line: int
    error: str | None = None
    n_before: int = -1
    """How many components the document held when the statement was read (for a ``?`` delineation)."""


@dataclass
class UnipenDocument:
    """A parsed top file with its includes: components and segments in reading order, the files read
    (relative path -> sha256 of its bytes), the keywords met outside the format definition and the
    problems of damaged components (see :class:`Component`). ``max_bytes``: the read limit of every file
    (None: MAX_INK_FILE_BYTES or $INKGROUND_MAX_INK_FILE_MB)."""

    path: Path
    root: Path
    components: list[Component] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    unknown_keywords: Counter = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    state: State = State()
    max_bytes: int | None = None
    _pending: list = field(default_factory=list, repr=False)
    _first: dict = field(default_factory=dict, repr=False)


# ============================================================================================ parsing

def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _values(body: str, where: str) -> np.ndarray:
    """The numbers of a pen statement, flat (float64); FormatError names the first token that is not one."""
    toks = body.split()
    if not toks:
        return np.zeros(0)
    try:
        vals = np.array(toks, dtype=np.float64)
    except ValueError:
        bad = next(t for t in toks if not _is_number(t))
        raise FormatError(f"{where}: {bad!r:.30} is not a number") from None
    if not np.isfinite(vals).all():
        bad = toks[int(np.flatnonzero(~np.isfinite(vals))[0])]
        raise FormatError(f"{where}: {bad!r:.30} is not a finite number")
    return vals


def _is_number(tok: str) -> bool:
    try:
        float(tok)
        return True
    except ValueError:
        return False


def _label(text: str, where: str) -> str:
    text = text.strip()
    if len(text) < 2 or not (text.startswith('"') and text.endswith('"')):
        raise FormatError(f'{where}: label {text!r:.40} is not a double-quoted string')
    inner = " ".join(text[1:-1].split()) if "\n" in text else text[1:-1]
    return _ESCAPE.sub(lambda m: _ESCAPED[m.group(1)], inner)


def _segment(body: str, index: int, file: str, line: int, n_before: int = -1) -> Segment:
    try:
        return _segment_strict(body, index, file, line, n_before)
    except FormatError as e:
        parts = body.split(None, 3) + ["", "", ""]
        return Segment(index, parts[0] or "?", parts[1], parts[2], "", file, line, str(e), n_before)


def _segment_strict(body: str, index: int, file: str, line: int, n_before: int = -1) -> Segment:
    where = f"{file}:{line}: .SEGMENT"
    parts = body.split(None, 3)
    if len(parts) < 4:
        names = ("level", "delineation", "quality", "label")
        raise FormatError(f"{where}: missing {' and '.join(names[len(parts):])} "
                          f"(expected: level delineation quality \"label\")")
    level, delin, quality, label = parts
    if quality not in QUALITIES:
        raise FormatError(f"{where}: quality {quality!r:.20} is not one of {', '.join(QUALITIES)}")
    if delin != "?":
        parse_delineation(delin, where)
    return Segment(index, level, delin, quality, _label(label, where), file, line, None, n_before)


def _unknown_ranges(doc: "UnipenDocument", level: str, n: int, follows: bool) -> dict[int, tuple[int, int]]:
    """{segment index: (first, last component)} of the level's ``?`` segments, reading each as the components
    before it back to the previous statement of the level (``follows``: segments follow their data) or after it
    up to the next one."""
    segs = [o for o in doc.segments if o.level == level]
    out = {}
    for k, o in enumerate(segs):
        if o.delineation != "?":
            continue
        if follows:
            out[o.index] = (segs[k - 1].n_before if k else 0, o.n_before - 1)
        else:
            out[o.index] = (o.n_before, (segs[k + 1].n_before if k + 1 < len(segs) else n) - 1)
    return out


def resolve_unknown_delineation(doc: "UnipenDocument", seg: Segment) -> str:
    """The delineation a ``.SEGMENT`` with delineation ``?`` stands for, where it is unambiguous.

    The rule: a ``?`` segment holds the pen components between its statement and the neighbouring statement of
    the same level: the components before it back to the previous one where the document's segments follow
    their data, the components after it up to the next one where they precede it. Which of the two holds is
    read from the level's segments with numbered delineations (all of them delineate components before their
    statement, or all after it); without such segments, from the ``?`` segments themselves (the reading under
    which every one of them holds a component, when only one reading does). Ambiguous, a FormatError naming file
    and line: neither or both readings fit, the segment would hold no component, or a numbered segment of the
    level delineates one of its components too."""
    where = f"{seg.file}:{seg.line}: .SEGMENT {seg.level} ?"
    n = len(doc.components)
    explicit = []
    for o in doc.segments:
        if o.level == seg.level and o.delineation != "?" and o.error is None:
            rr = parse_delineation(o.delineation, where)
            explicit.append((o, min(r[0] for r in rr), max(r[2] for r in rr)))
    if explicit and all(c1 < o.n_before for o, _, c1 in explicit):
        readings = [True]
    elif explicit and all(c0 >= o.n_before for o, c0, _ in explicit):
        readings = [False]
    elif explicit:
        raise FormatError(f"{where}: delineation '?' is ambiguous: the numbered .SEGMENT {seg.level} statements "
                          "delineate components both before and after themselves")
    else:
        readings = [f for f in (True, False)
                    if all(b >= a for a, b in _unknown_ranges(doc, seg.level, n, f).values())]
        if len(readings) != 1:
            raise FormatError(f"{where}: delineation '?' is ambiguous: the document's segments could stand after "
                              f"their data or before it" if readings else
                              f"{where}: delineation '?' is ambiguous: some segment of the level would hold no "
                              "component whichever way it is read")
    start, end = _unknown_ranges(doc, seg.level, n, readings[0])[seg.index]
    if end < start:
        raise FormatError(f"{where}: delineation '?' is ambiguous: no pen component lies between it and the "
                          f"neighbouring .SEGMENT {seg.level}")
    for o, c0, c1 in explicit:
        if c0 <= end and c1 >= start:
            raise FormatError(f"{where}: delineation '?' is ambiguous: its components {start}-{end} are also "
                              f"delineated by .SEGMENT {o.level} {o.delineation} ({o.file}:{o.line})")
    return f"{start}-{end}" if end > start else str(start)


def parse_delineation(text: str, where: str = "delineation") -> list[tuple[int, int | None, int, int | None]]:
    """``"0-3,5:2-7:10"`` -> [(0, None, 3, None), (5, 2, 7, 10)]: (first component, first sample or None =
    from its start, last component, last sample or None = to its end), all from 0, ends included."""
    out = []
    for item in text.split(","):
        m = _RANGE.fullmatch(item)
        if not m or (m.group(2) is not None and m.group(3) is None):
            raise FormatError(f"{where}: delineation {text!r:.40}: {item!r:.20} is not c, c0-c1, c0:p0-c1, "
                              "c0-c1:p1 or c0:p0-c1:p1")
        c0 = int(m.group(1))
        p0 = None if m.group(2) is None else int(m.group(2))
        c1 = c0 if m.group(3) is None else int(m.group(3))
        p1 = None if m.group(4) is None else int(m.group(4))
        if c1 < c0 or (c1 == c0 and p0 is not None and p1 is not None and p1 < p0):
            raise FormatError(f"{where}: delineation {text!r:.40}: range {item!r:.20} runs backwards")
        out.append((c0, p0, c1, p1))
    return out


def _resolve_include(name: str, including: Path, doc: UnipenDocument, include_dirs: Sequence[Path],
                     where: str) -> Path:
    if not name:
        raise FormatError(f"{where}: .INCLUDE names no file")
    cands = [d / name for d in include_dirs] + [including.parent / name, doc.path.parent / name]
    for c in cands:
        if c.is_file():
            real = c.resolve()
            try:
                real.relative_to(doc.root)
            except ValueError:
                raise FormatError(f"{where}: .INCLUDE {name}: {real} lies outside the release root "
                                  f"{doc.root}; refused") from None
            return real
    looked = ", ".join(dict.fromkeys(str(d) for d in [*include_dirs, including.parent, doc.path.parent]))
    raise FormatError(f"{where}: .INCLUDE {name}: file not found (looked in {looked})")


def _read_file(path: Path, doc: UnipenDocument, include_dirs: Sequence[Path], stack: tuple[Path, ...]) -> None:
    rel = _rel(path, doc.root)
    check_file_size(path, doc.max_bytes, MAX_INK_FILE_BYTES, MAX_INK_FILE_ENV, FormatError,
                    f"a UNIPEN file ({rel})")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise FormatError(f"{rel}: cannot be read ({e.strerror or e})") from None
    doc.files.setdefault(rel, hashlib.sha256(data).hexdigest())
    if b"\0" in data[:4096]:
        raise FormatError(f"{rel}: not a UNIPEN text file (binary content)")
    matches = list(_KEYWORD.finditer(data))
    head = data[: matches[0].start()] if matches else data
    if head.strip():
        line = head[: len(head) - len(head.lstrip())].count(b"\n") + 1
        raise FormatError(f"{rel}:{line}: text before the first .KEYWORD statement "
                          f"({head.strip()[:30].decode('latin-1')!r}); not a UNIPEN file")
    if not matches:
        raise FormatError(f"{rel}: no .KEYWORD statement; not a UNIPEN file")
    line, pos = 1, 0
    st = doc.state
    for i, m in enumerate(matches):
        line += data.count(b"\n", pos, m.start())
        pos = m.start()
        end = matches[i + 1].start() if i + 1 < len(matches) else len(data)
        kw = m.group(1).decode("ascii")
        body = data[m.end():end].decode("latin-1")
        where = f"{rel}:{line}: .{kw}"
        if kw not in KNOWN_KEYWORDS:
            doc.unknown_keywords[kw] += 1
            continue
        if kw in ("PEN_DOWN", "PEN_UP"):
            if body.strip():
                try:
                    vals, err = _values(body, where), None
                except FormatError as e:
                    vals, err = None, str(e)
                doc._pending.append((kw == "PEN_DOWN", vals, err, st, rel, line))
        elif kw == "SEGMENT":
            doc.segments.append(_segment(body, len(doc.segments), rel, line, len(doc.components) + len(doc._pending)))
        elif kw == "INCLUDE":
            name = body.strip().split()[0] if body.strip() else ""
            target = _resolve_include(name, path, doc, include_dirs, where)
            if target in stack:
                raise FormatError(f"{where}: .INCLUDE {name}: includes itself (cycle)")
            if len(stack) >= MAX_INCLUDE_DEPTH:
                raise FormatError(f"{where}: .INCLUDE {name}: more than {MAX_INCLUDE_DEPTH} nested includes")
            doc.state = st
            _read_file(target, doc, include_dirs, stack + (target,))
            st = doc.state
        elif kw in _STATE_KEYWORDS:
            new = _STATE_KEYWORDS[kw](st, body, where)
            for f in _FIELDS:
                if getattr(new, f) != getattr(st, f):
                    doc._first.setdefault(f, getattr(new, f))
            st = new
    doc.state = st


_FIELDS = tuple(State.__dataclass_fields__)


def _finish(doc: UnipenDocument) -> None:
    """Components from the pending pen statements: a state field still unset where a component was read
    takes the first value the document sets later (e.g. pcl's data file, included before the .doc file that
    gives .COORD and the resolution), then the values are cut into samples of the ``.COORD`` channels."""
    fixed: dict[int, State] = {}
    for pen_down, vals, err, st, rel, line in doc._pending:
        if id(st) not in fixed:
            fill = {f: doc._first[f] for f in _FIELDS if f in doc._first and getattr(st, f) in (None, ())}
            fixed[id(st)] = _replace(st, **fill) if fill else st
        eff = fixed[id(st)]
        where = f"{rel}:{line}: .{'PEN_DOWN' if pen_down else 'PEN_UP'}"
        if not eff.coord:
            raise FormatError(f"{where}: samples but no .COORD statement in the file or its includes "
                              "(channel order unknown)")
        if err is None and len(vals) % len(eff.coord):
            err = (f"{where}: {len(vals)} values are not whole samples of .COORD {' '.join(eff.coord)} "
                   f"({len(eff.coord)} values each; truncated?)")
        if err is not None:
            doc.problems.append(err)
            doc.components.append(Component(pen_down, np.zeros((0, len(eff.coord))), eff, rel, line, err))
        else:
            doc.components.append(Component(pen_down, vals.reshape(-1, len(eff.coord)), eff, rel, line))
    doc._pending = []


def _value(body: str, where: str) -> str:
    v = " ".join(body.split())
    if not v:
        raise FormatError(f"{where}: missing value")
    return v


def _positive(body: str, where: str) -> float:
    toks = body.split()
    if not toks:
        raise FormatError(f"{where}: missing value")
    v = finite_number(toks[0], where)
    if v <= 0:
        raise FormatError(f"{where}: {toks[0]} must be positive")
    return v


def _coord(st: State, body: str, where: str) -> State:
    ch = tuple(body.split())
    if "X" not in ch or "Y" not in ch:
        raise FormatError(f"{where}: channels {' '.join(ch) or '(none)'} lack X or Y")
    if len(set(ch)) != len(ch):
        raise FormatError(f"{where}: channel named twice in {' '.join(ch)}")
    return _replace(st, coord=ch)


def _replace(st: State, **kw) -> State:
    return State(**{**st.__dict__, **kw})


_STATE_KEYWORDS = {
    "COORD": _coord,
    "X_POINTS_PER_INCH": lambda st, b, w: _replace(st, x_ppi=_positive(b, w)),
    "Y_POINTS_PER_INCH": lambda st, b, w: _replace(st, y_ppi=_positive(b, w)),
    "X_POINTS_PER_MM": lambda st, b, w: _replace(st, x_ppi=_positive(b, w) * 25.4),
    "Y_POINTS_PER_MM": lambda st, b, w: _replace(st, y_ppi=_positive(b, w) * 25.4),
    "POINTS_PER_SECOND": lambda st, b, w: _replace(st, points_per_second=_positive(b, w)),
    "WRITER_ID": lambda st, b, w: _replace(st, writer_id=_value(b, w)),
    "STYLE": lambda st, b, w: _replace(st, style=_value(b, w)),
    "DATA_SOURCE": lambda st, b, w: _replace(st, data_source=_value(b, w)),
    "DATA_ID": lambda st, b, w: _replace(st, data_id=_value(b, w)),
    "HIERARCHY": lambda st, b, w: _replace(st, hierarchy=tuple(b.split())),
}


def parse_unipen(path: str | os.PathLike, root: str | os.PathLike | None = None,
                 include_dirs: Sequence[str | os.PathLike] | None = None, *,
                 max_bytes: int | None = None) -> UnipenDocument:
    """Parse a UNIPEN file and everything it includes.

    ``root``: the release root (default: the file's folder); no file outside it is read. ``include_dirs``:
    where ``.INCLUDE`` names are looked up first (default: ``root/include``). ``max_bytes``: the largest
    file read, the top file and each included one, checked with os.stat before reading (default
    MAX_INK_FILE_BYTES, or $INKGROUND_MAX_INK_FILE_MB in MiB). Raises FormatError naming file, line and
    keyword (a missing or escaping include, a file over the limit, garbage numbers, a malformed segment, ...).
    """
    p = Path(path).resolve()
    r = Path(root).resolve() if root is not None else p.parent
    dirs = [Path(d).resolve() for d in include_dirs] if include_dirs is not None else [r / "include"]
    doc = UnipenDocument(p, r, max_bytes=max_bytes)
    try:
        p.relative_to(r)
    except ValueError:
        raise FormatError(f"{p}: lies outside the release root {r}") from None
    _read_file(p, doc, dirs, (p,))
    _finish(doc)
    return doc


# ============================================================================================ segments

def segment_strokes(doc: UnipenDocument, seg: Segment) -> tuple[list[np.ndarray], list[Component]]:
    """The pen-down samples a segment delineates, one array per pen-down component piece (file units,
    ``.COORD`` channels), and the components they come from. Raises FormatError for a range outside the
    document's components or samples."""
    if seg.error is not None:
        raise FormatError(seg.error)
    where = f"{seg.file}:{seg.line}: .SEGMENT {seg.delineation}"
    n = len(doc.components)
    pieces, comps = [], []
    delin = resolve_unknown_delineation(doc, seg) if seg.delineation == "?" else seg.delineation
    for c0, p0, c1, p1 in parse_delineation(delin, where):
        if c1 >= n:
            raise FormatError(f"{where}: component {c1} out of range (the file has {n} components, 0-{n - 1})")
        for c in range(c0, c1 + 1):
            comp = doc.components[c]
            if comp.error is not None:
                raise FormatError(f"{where}: uses damaged component {c}: {comp.error}")
            m = len(comp.samples)
            a = p0 if (c == c0 and p0 is not None) else 0
            b = p1 if (c == c1 and p1 is not None) else m - 1
            for q in (a, b):
                if q >= m:
                    raise FormatError(f"{where}: sample {q} of component {c} out of range "
                                      f"(it has {m} samples, 0-{m - 1})")
            comps.append(comp)
            if comp.pen_down and b >= a:
                pieces.append(comp.samples[a:b + 1])
    return pieces, comps


def segment_ink(doc: UnipenDocument, seg: Segment) -> tuple[Ink, State]:
    """A segment's ink in the UNIPEN-derived JSON's convention (module doc: x from 0, y down from 0, t from
    points_per_second) and the state of its first component. Raises FormatError for a bad range, a segment
    without pen-down samples, or one whose components come from different writers or resolutions."""
    ink, st, _ = _segment_ink(doc, seg)
    return ink, st


def _segment_ink(doc: UnipenDocument, seg: Segment) -> tuple[Ink, State, list[Component]]:
    where = f"{seg.file}:{seg.line}: .SEGMENT {seg.delineation}"
    pieces, comps = segment_strokes(doc, seg)
    if not pieces:
        raise FormatError(f"{where}: no pen-down samples in the range")
    st = comps[0].state
    for c in comps[1:]:
        if c.state is not st and (c.state.writer_id, c.state.x_ppi, c.state.y_ppi, c.state.points_per_second,
                                  c.state.coord) != (st.writer_id, st.x_ppi, st.y_ppi, st.points_per_second,
                                                     st.coord):
            raise FormatError(f"{where}: its components differ in writer or resolution")
    ix, iy = st.coord.index("X"), st.coord.index("Y")
    xs = np.concatenate([p[:, ix] for p in pieces])
    ys = np.concatenate([p[:, iy] for p in pieces])
    x0, y1 = float(xs.min()), float(ys.max())
    dt = 1000.0 / st.points_per_second if st.points_per_second else math.nan
    strokes, k = [], 0
    for p in pieces:
        t = np.round(np.arange(k, k + len(p)) * dt, 1) if st.points_per_second else np.full(len(p), np.nan)
        strokes.append(np.column_stack([p[:, ix] - x0, y1 - p[:, iy], t]))
        k += len(p)
    return Ink(tuple(strokes)), st, comps


def _category(rel: str) -> str | None:
    parts = rel.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "data" else None


def _contributor(rel: str) -> str | None:
    parts = rel.split("/")
    return parts[2] if len(parts) > 3 and parts[0] == "data" else None


def writer_key(contributor: str | None, writer_id: str | None, data_file: str) -> str:
    """The JSON subset's pseudonym ``unipen-<contributor>-<sha1(WRITER_ID)[:6]>``; without a WRITER_ID the
    data file stands for the writer (``...-file-<sha1(path)[:6]>``)."""
    c = contributor or "unknown"
    if writer_id:
        return f"unipen-{c}-{hashlib.sha1(writer_id.encode('utf-8')).hexdigest()[:6]}"
    return f"unipen-{c}-file-{hashlib.sha1(data_file.encode('utf-8')).hexdigest()[:6]}"


def segment_word(doc: UnipenDocument, seg: Segment) -> RecordedWord:
    """A segment as a RecordedWord: id ``<top file relative to root>#<segment index>``, writer
    :func:`writer_key`, text the label, ink :func:`segment_ink`, and meta: category (``data/<category>/``
    of the path), level, style, quality, contributor, data_source, data_id, points_per_inch (x) and
    y_points_per_inch (None where the file gives none), points_per_second, file, data_file, segment
    (the delineation; a ``?`` resolved to the components it stands for), segment_written (as the file has
    it), line, source_writer_id."""
    ink, st, comps = _segment_ink(doc, seg)
    top = _rel(doc.path, doc.root)
    contributor = _contributor(top)
    data_file = comps[0].file
    meta = {"category": _category(top), "level": seg.level, "style": st.style, "quality": seg.quality,
            "contributor": contributor, "data_source": st.data_source, "data_id": st.data_id,
            "points_per_inch": st.x_ppi, "y_points_per_inch": st.y_ppi,
            "points_per_second": st.points_per_second, "file": top, "data_file": data_file,
            "segment": (resolve_unknown_delineation(doc, seg) if seg.delineation == "?" else seg.delineation),
            "segment_written": seg.delineation, "line": seg.line, "source_writer_id": st.writer_id}
    return RecordedWord(f"{top}#{seg.index}", writer_key(contributor, st.writer_id, data_file), seg.label,
                        ink, meta)


def read_unipen_dat(path: str | os.PathLike, root: str | os.PathLike | None = None,
                    include_dirs: Sequence[str | os.PathLike] | None = None,
                    levels: Sequence[str] | None = None, *,
                    max_bytes: int | None = None) -> tuple[list[RecordedWord], list[tuple[str, str]]]:
    """Read one UNIPEN file's segments as RecordedWords (see :func:`segment_word`), in file order.

    ``levels``: keep only segments of these hierarchy levels (e.g. ``["WORD"]``; None: all). Returns the
    words and the skipped segments as (``file:line``, reason) pairs; a file-level problem raises
    FormatError (see :func:`parse_unipen`, also for ``max_bytes``).
    """
    doc = parse_unipen(path, root, include_dirs, max_bytes=max_bytes)
    words, skipped = [], []
    for seg in doc.segments:
        if levels is not None and seg.level not in levels:
            continue
        try:
            words.append(segment_word(doc, seg))
        except FormatError as e:
            skipped.append((f"{seg.file}:{seg.line}", str(e)))
    return words, skipped
