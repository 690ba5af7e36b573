"""A whole UNIPEN release (e.g. train_r01_v07): walk its ``data/<category>/`` files, read each with
:mod:`inkground_lib.formats.unipen_dat`, select segments, and report what was read and what was not.

Layout expected (as the release ships it): ``<root>/data/<category>/<contributor>/.../*.dat`` hold the
``.SEGMENT`` statements and include the pen data and documentation from ``<root>/include/``. Categories are
the release's folder names (``1a`` .. ``1d``, ``2``, ``3``, ``6``, ``7``, ``8``; 6 = isolated cursive or
mixed-style words). A file that cannot be read is recorded as failed with its reason and the walk goes on.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from inkground_lib.core.files import sha256_file
from inkground_lib.formats.unipen import RecordedWord
from inkground_lib.formats.unipen_dat import QUALITIES, parse_unipen, segment_word
from inkground_lib.formats.xmlsafe import FormatError

_KINDS = (("over the read limit", "file over the size limit"),
          (".SEGMENT: missing", "incomplete .SEGMENT"), ("file not found", "missing include"), ("outside the release root", "include outside the root"),
          ("includes itself", "include cycle"), ("nested includes", "include too deep"),
          ("is not a number", "garbage number"), ("not a finite number", "garbage number"),
          ("not whole samples", "incomplete sample (truncated?)"), ("no .COORD", "no .COORD"),
          ("out of range", "range out of bounds"), ("no pen-down samples", "no pen-down samples"),
          ("differ in writer", "components of several writers"), ("runs backwards", "bad delineation"),
          ("delineation", "bad delineation"), ("label", "bad label"), ("quality", "bad quality"),
          ("not a UNIPEN", "not a UNIPEN file"),
          ("cannot be read", "unreadable file"), ("lack X or Y", "bad .COORD"), ("must be positive", "bad value"),
          ("missing value", "missing value"))


def failure_kind(message: str) -> str:
    """A short class of a reader error message (for grouping failures in reports)."""
    for needle, kind in _KINDS:
        if needle in message:
            return kind
    return "other"


UNIPEN_SUFFIXES = (".dat", ".unp")
"""The file names read as UNIPEN 1.0 files: the release's ``.dat``, and ``.unp``, the suffix other UNIPEN
collections use for the same format."""


def _as_set(value, name: str, upper: bool = True) -> frozenset[str] | None:
    """A selection as a set; None (or the word ``any``) selects everything."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "any"):
        return None
    items = re.split(r"[,\s]+", value) if isinstance(value, str) else list(value)
    out = frozenset(str(v).strip().upper() if upper else str(v).strip() for v in items if str(v).strip())
    if not out:
        raise ValueError(f"{name}: empty selection {value!r}")
    return out


def quality_set(quality) -> frozenset[str] | None:
    """Accepted qualities from ``"!BAD"`` / ``"-BAD"`` (all but BAD), ``"GOOD,OK"``, a list, or None (any)."""
    if isinstance(quality, str) and quality.strip()[:1] in ("!", "-"):
        excluded = _as_set(quality.strip()[1:], "quality")
        out = frozenset(QUALITIES) - excluded
    else:
        out = _as_set(quality, "quality")
    if out is not None:
        unknown = out - frozenset(QUALITIES)
        if unknown or not out:
            raise ValueError(f"quality: {quality!r}: qualities are {', '.join(QUALITIES)} (or !BAD to exclude)")
    return out


@dataclass
class ReleaseReport:
    """What :func:`read_unipen_release` read. Counts of segments are over the selected categories and level;
    ``by_*`` count the segments read (before style / quality selection); ``damaged_components`` lists the
    problems of damaged pen components (once per include file); ``files`` maps every file read (relative
    path) to its sha256."""

    root: str
    selection: dict
    files_found: int = 0
    files_parsed: int = 0
    files_failed: list[tuple[str, str]] = field(default_factory=list)
    segments_read: int = 0
    segments_other_level: int = 0
    not_selected: Counter = field(default_factory=Counter)
    skipped: Counter = field(default_factory=Counter)
    skipped_examples: dict = field(default_factory=dict)
    words_selected: int = 0
    by_category: Counter = field(default_factory=Counter)
    by_style: Counter = field(default_factory=Counter)
    by_quality: Counter = field(default_factory=Counter)
    unknown_keywords: Counter = field(default_factory=Counter)
    damaged_components: list[str] = field(default_factory=list)
    files: dict = field(default_factory=dict)

    @property
    def writers(self) -> int:
        return len(self._writers)

    _writers: set = field(default_factory=set, repr=False)

    def digest(self) -> str:
        """sha256 over (relative path, sha256) of every file read, sorted by path."""
        h = hashlib.sha256()
        for rel in sorted(self.files):
            h.update(f"{rel}\0{self.files[rel]}\n".encode())
        return h.hexdigest()

    def failures_by_kind(self) -> dict[str, int]:
        return dict(sorted(Counter(failure_kind(r) for _, r in self.files_failed).items()))

    def as_meta(self, max_failures: int = 50) -> dict:
        """The report as JSON-able manifest meta (the first ``max_failures`` failed files listed)."""
        return {"files_found": self.files_found, "files_parsed": self.files_parsed,
                "files_failed": len(self.files_failed), "failures_by_kind": self.failures_by_kind(),
                "failed_files": [list(f) for f in self.files_failed[:max_failures]],
                "files_read": len(self.files), "segments_read": self.segments_read,
                "segments_skipped": dict(sorted(self.skipped.items())),
                "segments_not_selected": dict(sorted(self.not_selected.items())),
                "damaged_components": len(self.damaged_components),
                "words_selected": self.words_selected, "writers_selected": self.writers,
                "unknown_keywords": dict(sorted(self.unknown_keywords.items()))}

    def summary(self) -> str:
        """A few lines for a terminal."""
        sel = ", ".join(f"{k}={v}" for k, v in self.selection.items())
        lines = [f"UNIPEN release {self.root} ({sel})",
                 (f"  files: {self.files_found} found, {self.files_parsed} parsed, {len(self.files_failed)} "
                  f"failed ({len(self.files)} files read with includes)")]
        for kind, n in self.failures_by_kind().items():
            example = next(r for _, r in self.files_failed if failure_kind(r) == kind)
            lines.append(f"    failed, {kind}: {n}  e.g. {example[:150]}")
        if self.damaged_components:
            lines.append(f"  damaged components (their segments are skipped): {len(self.damaged_components)}"
                         f"  e.g. {self.damaged_components[0][:150]}")
        lines.append(f"  segments read: {self.segments_read}; skipped: {sum(self.skipped.values())}"
                     + "".join(f"; {k}: {n}" for k, n in sorted(self.skipped.items())))
        if self.not_selected:
            lines.append("  not selected: " + "; ".join(f"{k}: {n}" for k, n in sorted(self.not_selected.items())))
        lines.append(f"  words selected: {self.words_selected} from {self.writers} writers")
        return "\n".join(lines)


def _top_files(root: Path, categories: frozenset[str] | None) -> list[Path]:
    data = root / "data"
    if not data.is_dir():  # a folder of one's own .dat files: every one is read; categories do not apply
        files = sorted((p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in UNIPEN_SUFFIXES),
                       key=lambda p: p.relative_to(root).as_posix())
        if not files:
            raise FormatError(f"{root}: no .dat or .unp files and no data/ folder; expected a UNIPEN release "
                              f"(data/<category>/..., include/) or a folder of UNIPEN .dat / .unp files")
        if categories is not None:
            raise FormatError(f"{root}: not a UNIPEN release (no data/<category>/ folders), so its "
                              f"{len(files)} UNIPEN files have no category to select by; give --category "
                              f"any (in Python category='any') to read them all")
        return files
    cats = sorted(p.name for p in data.iterdir() if p.is_dir())
    if categories is not None:
        missing = sorted(categories - set(cats))
        if missing:
            raise FormatError(f"{root}: no category folder data/{missing[0]} (categories here: {', '.join(cats)})")
        cats = [c for c in cats if c in categories]
    out = []
    for c in cats:
        out.extend(sorted((p for p in (data / c).rglob("*") if p.is_file() and p.suffix.lower() in UNIPEN_SUFFIXES),
                          key=lambda p: p.relative_to(root).as_posix()))
    return out


def read_unipen_release(root: str | os.PathLike, *, category: str | Sequence[str] | None = "6",
                        style: str | Sequence[str] | None = None, quality: str | Sequence[str] | None = "!BAD",
                        level: str | Sequence[str] | None = "WORD", progress: bool = False,
                        max_bytes: int | None = None) -> tuple[list[RecordedWord], ReleaseReport]:
    """Read the selected segments of a UNIPEN release as RecordedWords (see
    :func:`inkground_lib.formats.unipen_dat.segment_word`: source units, y down, t from points_per_second).

    ``root``: a release (``data/<category>/``, ``include/``) or any folder of ``.dat`` / ``.unp`` files (read with
    ``category=None``; includes are looked up beside each file and under ``root/include``).
    ``category``: the ``data/`` folders to read (``"6"``, ``"6,7"``, a list, or None for all); ``style``:
    ``.STYLE`` labels to keep (``"CURSIVE"``, ``"CURSIVE,MIXED"``; None: any); ``quality``: qualities to
    keep (``"!BAD"``: all but BAD; ``"GOOD,OK"``; None: any); ``level``: hierarchy level(s) of the segments
    (``WORD``; category 8 holds ``TEXT``; None: any). A word that two categories both hold (6 and 7 share their words)
    is kept once. Files are read in sorted path order; a file that fails is listed in the report with its
    reason, a segment that cannot be cut is counted by reason; a file over ``max_bytes`` bytes (default
    MAX_INK_FILE_BYTES, or $INKGROUND_MAX_INK_FILE_MB in MiB) fails unread. Raises FormatError only when ``root`` is no
    release and holds no ``.dat`` file, when a category is asked of a folder that is not a release, or when
    a release has no such category.
    """
    r = Path(root).resolve()
    cats = _as_set(category, "category", upper=False)
    styles = _as_set(style, "style")
    quals = quality_set(quality)
    levels = _as_set(level, "level")
    selection = {"category": None if cats is None else ",".join(sorted(cats)),
                 "style": None if styles is None else ",".join(sorted(styles)),
                 "quality": None if quals is None else ",".join(q for q in QUALITIES if q in quals),
                 "level": None if levels is None else ",".join(sorted(levels))}
    report = ReleaseReport(str(r), selection)
    tops = _top_files(r, cats)
    report.files_found = len(tops)
    seen: set[tuple[str, str]] = set()
    words: list[RecordedWord] = []
    it = tops
    if progress:
        from inkground_lib.core.progress import bar as progress_bar

        it = progress_bar(tops, desc="UNIPEN files", unit="file")
    for path in it:
        rel = path.relative_to(r).as_posix()
        try:
            doc = parse_unipen(path, r, max_bytes=max_bytes)
        except FormatError as e:
            report.files_failed.append((rel, str(e)))
            try:
                report.files.setdefault(rel, sha256_file(path))  # in 1 MiB chunks: it may be over the limit
            except OSError:
                pass
            continue
        report.files_parsed += 1
        report.files.update(doc.files)
        report.unknown_keywords.update(doc.unknown_keywords)
        report.damaged_components.extend(p for p in doc.problems if p not in report.damaged_components)
        words += _selected_words(doc, report, levels, styles, quals, seen)
    report.words_selected = len(words)
    return words, report


def _selected_words(doc, report: ReleaseReport, levels, styles, quals,
                    seen: set[tuple[str, str]]) -> list[RecordedWord]:
    """The words of one parsed file ``doc`` that the selection keeps: segments at one of ``levels``, cut into
    words (:func:`segment_word`), of one of ``styles`` and ``quals`` (each None: any), not already taken from
    another category (``seen``: (data file, segment) keys, updated). Counts everything read, cut, refused and
    left out in ``report``."""
    words: list[RecordedWord] = []
    for seg in doc.segments:
        if levels is not None and seg.level.upper() not in levels:
            report.segments_other_level += 1
            continue
        report.segments_read += 1
        try:
            w = segment_word(doc, seg)
        except FormatError as e:
            kind = failure_kind(str(e))
            report.skipped[kind] += 1
            report.skipped_examples.setdefault(kind, str(e))
            continue
        st = (w.meta["style"] or "?").upper()
        report.by_category[w.meta["category"]] += 1
        report.by_style[st] += 1
        report.by_quality[seg.quality] += 1
        if styles is not None and st not in styles:
            report.not_selected["style"] += 1
            continue
        if quals is not None and seg.quality not in quals:
            report.not_selected["quality"] += 1
            continue
        key = (w.meta["data_file"], w.meta["segment"])
        if key in seen:
            report.not_selected["duplicate (another category)"] += 1
            continue
        seen.add(key)
        words.append(w)
        report._writers.add(w.writer)
    return words
