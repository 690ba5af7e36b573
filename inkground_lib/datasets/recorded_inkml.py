"""Recorded words from a folder of word-level InkML files (:func:`inkml_words`): which files are words, which groups
are targets, who wrote each; a file that cannot be read is named with its reason."""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from inkground_lib.core.dataset import DatasetError
from inkground_lib.core.files import sha256_file
from inkground_lib.core.repo_paths import portable_path
from inkground_lib.datasets.recorded_pages import has_extent
from inkground_lib.formats.inkml import DIALECTS, read_inkml
from inkground_lib.formats.inkml_document import InkMLDocument
from inkground_lib.formats.unipen import RecordedWord
from inkground_lib.formats.xmlsafe import FormatError


INKML_WRITERS = ("auto", "annotation", "file", "folder")
"""How :func:`inkml_words` assigns writers: ``auto`` (the default: a ``writer`` annotation, else the folder, else
the file), ``annotation`` (only ``writer`` annotations; a file without one is left out, named), or one per file or
per folder (the files' parent folder)."""

INKML_SUFFIXES = (".inkml", ".ink", ".xml")
"""Files :func:`inkml_words` opens: ``.inkml``, ``.ink`` and ``.xml`` (Microsoft Word / OneNote / Windows Journal
save ink as InkML in ``.xml``; an ``.xml`` file whose root is not InkML's ``<ink>`` is named as not InkML)."""

_WORD_TEXT = re.compile(r"['\u2019]?[^\W_]+(?:['\u2019\-.][^\W_]+)*[.,;:!?'\u2019\"]?", re.UNICODE)


def is_word_text(text: str) -> bool:
    r"""True for the text of a word a person could be asked to trace: letters (any script) and digits, joined by
    an apostrophe, hyphen or full stop (``don't``, ``re-use``, ``U.S``), a clitic (``'s``), with at least one
    letter and at most one closing punctuation mark. Math and markup (CROHME's ``\sum``, ``\theta``, ``x^2``,
    ``$x$``, ``a_1``), lone symbols and numbers are not.

    >>> [is_word_text(t) for t in ("hello", "don't", "x^2", "\\sum", "42", "re-use,")]
    [True, True, False, False, False, True]
    """
    return bool(_WORD_TEXT.fullmatch(text)) and any(ch.isalpha() for ch in text)


def is_math_document(doc: InkMLDocument) -> bool:
    """True for an InkML file that writes a mathematical expression, as CROHME's files do: its document-level
    truth is LaTeX between ``$`` signs, or an ``annotationXML`` encodes MathML (CROHME 2011 file
    formulaire001-equation001.inkml: ``<annotation type="truth">$\\phi(x)$</annotation>`` and ``<annotationXML
    type="truth" encoding="Content-MathML">``). Its symbol groups (``x``, ``\\phi``, ``(``) are no words."""
    truth = (doc.annotations.get("truth") or "").strip()
    if len(truth) >= 2 and truth.startswith("$") and truth.endswith("$"):
        return True
    return any("mathml" in str(v.get("encoding", "")).lower()
               for v in doc.annotations.get("annotationXML", {}).values() if isinstance(v, dict))


_MATH_LABELS = frozenset({"Segmentation"})
"""Texts CROHME gives the group that holds an expression's symbol groups (formulaire001-equation001.inkml)."""


def _doc_writer(doc: InkMLDocument) -> Optional[str]:
    w = (doc.annotations.get("writer") or "").strip()
    return w or None


def _group_writer(doc: InkMLDocument, k: int) -> Optional[str]:
    """The ``annotation type="writer"`` of group k or of a group around it, else the document's."""
    i: Optional[int] = k
    while i is not None:
        w = (doc[i].annotations.get("writer") or "").strip()
        if w:
            return w
        i = doc[i].parent
    return _doc_writer(doc)


def _word_groups(doc: InkMLDocument, label_only: frozenset = frozenset()) -> tuple[list[int], Counter]:
    """Indices of the groups of ``doc`` that are words, and the groups left out by reason.

    A word is a group whose text is one word (no white space), unless a group around it already is one (its
    letters' groups are part of it); a group whose text has several words (a line, a sentence) is a word only
    through the word groups inside it; a group without text is left out unless it holds words. Texts in
    ``label_only`` name a group's role, not its ink (CROHME's "Segmentation" group around the symbols)."""
    def ups(i):
        p = doc[i].parent
        while p is not None:
            yield p
            p = doc[p].parent

    one_word = [g.text is not None and g.text not in label_only and len(g.text.split()) == 1 for g in doc]
    chosen = [i for i in range(len(doc)) if one_word[i] and not any(one_word[a] for a in ups(i))]
    sel = set(chosen)
    inside = {i for i in range(len(doc)) if any(a in sel for a in ups(i))}
    holders = {a for i in chosen for a in ups(i)}
    skipped = Counter()
    for i, g in enumerate(doc):
        if i in sel or i in inside or i in holders:
            continue
        skipped["group without text" if g.text is None else "text of several words (not word-level)"] += 1
    return chosen, skipped


def inkml_words(root: str | os.PathLike, *, writer: str = "auto", dialect: str = "auto", symbols: bool = False,
                progress: bool = False) -> tuple[list[RecordedWord], dict]:
    """Words of a folder of word-level InkML files (``*.inkml``, ``*.ink``, ``*.xml``, in sub-folders too), read by
    :func:`~inkground_lib.formats.inkml.read_inkml` (``dialect`` as there), and the manifest source entry.

    A word is a group whose text (annotation ``truth``, InkSight's ``textField``, or an ``annotationXML``
    "Ground truth" label) is one word, see :func:`_word_groups`; its ink is in the file's units, y down. A text
    that is not a word (math, symbols, numbers: :func:`is_word_text`), and every group of a file that writes a
    mathematical expression (:func:`is_math_document`), is no target unless ``symbols``; a text
    over MAX_WORD_TEXT characters or an ink over MAX_WORD_POINTS points is left out and named.

    Writers (``writer``): ``"auto"`` (default) takes the ``annotation type="writer"`` of the word's group (or a
    group around it, or the document), else the file's folder when the file is in a sub-folder of ``root``, else
    the file itself (a file at the top, without a writer annotation, is one writer); ``"annotation"`` takes only
    writer annotations (a file without one is left out, named); ``"file"`` / ``"folder"``: one writer per file /
    per folder, whatever the annotations say.

    Every file left out is named with its reason (``failed_files``: cannot be read; ``files_not_inkml``: an
    ``.xml`` or ``.ink`` file that is not InkML, e.g. another program's ink format; ``files_without_writer``)
    and the option that would keep it where one would; the assumptions the reader made are counted by kind
    (``warnings_by_kind``, examples in ``warning_examples``); groups left out are counted by reason
    (``words_skipped``, examples in ``words_skipped_examples``), and words whose ink has no width or no height
    too (``words_degenerate``); ``writer_sources`` counts where each word's writer came from."""
    from inkground_lib.core.progress import bar as progress_bar

    if writer not in INKML_WRITERS:
        raise ValueError(f"inkml writer: expected one of {INKML_WRITERS}, got {writer!r}")
    if dialect not in DIALECTS:
        raise ValueError(f"inkml dialect: expected one of {DIALECTS}, got {dialect!r}")
    r = Path(root)
    files = _inkml_files(r)
    t = _InkmlTally()
    for f in progress_bar(files, desc="InkML files", enabled=progress):
        _read_file(t, f, f.relative_to(r).as_posix(), writer, dialect, symbols)
    return t.words, _inkml_source(t, r, files, writer, dialect, symbols)


@dataclass
class _InkmlTally:
    """What :func:`inkml_words` found so far: the words kept, the files left out (``failed``: cannot be read;
    ``not_inkml``; ``no_writer``; each as (path relative to the root, reason)), each parsed file's sha256 by
    relative path, and counts: groups left out by reason (``skipped``), the reader's warnings by kind, files by
    dialect, words by where their writer came from (``wsrc``), groups read and degenerate words (no width or no
    height); ``examples`` / ``skip_examples``: the first 50 warnings / groups left out."""
    words: list = field(default_factory=list)
    failed: list = field(default_factory=list)
    not_inkml: list = field(default_factory=list)
    no_writer: list = field(default_factory=list)
    digests: dict = field(default_factory=dict)
    skipped: Counter = field(default_factory=Counter)
    by_kind: Counter = field(default_factory=Counter)
    dialects: Counter = field(default_factory=Counter)
    wsrc: Counter = field(default_factory=Counter)
    examples: list = field(default_factory=list)
    skip_examples: list = field(default_factory=list)
    groups: int = 0
    degenerate: int = 0


def _read_file(t: _InkmlTally, f: Path, rel: str, writer: str, dialect: str, symbols: bool) -> None:
    """Read the InkML file ``f`` (``rel``: its path relative to the root) into the tally ``t``: the file left
    out with its reason when it cannot be read, is not InkML or (``writer`` "annotation") names no writer;
    else its digest, dialect, warnings, and its word groups (:func:`_tally_words`)."""
    try:
        doc = read_inkml(f, dialect=dialect)
    except FormatError as e:
        msg = str(e)
        msg = msg[len(str(f)) + 2:] if msg.startswith(f"{f}: ") else msg
        kind = _not_inkml(f, msg)
        if kind:
            t.not_inkml.append((rel, kind))
        else:
            t.failed.append((rel, msg))
        return
    t.digests[rel] = sha256_file(f)
    t.dialects[doc.dialect] += 1
    t.groups += len(doc)
    for w in doc.warnings:
        t.by_kind[w.kind] += 1
        if len(t.examples) < 50:
            t.examples.append(str(w))
    math = is_math_document(doc)
    chosen, left = _word_groups(doc, _MATH_LABELS if math else frozenset())
    t.skipped.update(left)
    if writer == "annotation" and not any(_group_writer(doc, k) for k in chosen):
        if chosen:
            t.no_writer.append((rel, f"{len(chosen)} word(s), no annotation type=\"writer\" (--inkml-writer "
                                     "auto or folder or file would keep them)"))
        return
    _tally_words(t, doc, chosen, rel, math, writer, symbols)


def _tally_words(t: _InkmlTally, doc: InkMLDocument, chosen: list, rel: str, math: bool, writer: str,
                 symbols: bool) -> None:
    """Add the word groups ``chosen`` of ``doc`` (file ``rel``; ``math``: a file that writes an expression) to
    ``t``: a group that is no target (:func:`_left_out`) is counted by reason, one whose ink has no extent as
    degenerate; every other one becomes a word named ``<rel>#<group id or index>`` with its writer by the
    ``writer`` rule."""
    for k in chosen:
        g = doc[k]
        left_out = _left_out(g, math, symbols)
        if left_out is not None:
            t.skipped[left_out[0]] += 1
            if len(t.skip_examples) < 50:
                t.skip_examples.append(f"{rel}#{g.id if g.id is not None else k}: {left_out[1]}")
            continue
        who, how = _word_writer(writer, _group_writer(doc, k), rel)
        w = RecordedWord(f"{rel}#{g.id if g.id is not None else k}", who, g.text, g.ink,
                         {"source": "inkml", "file": rel, "group": g.id, "dialect": doc.dialect,
                          "writer_from": how})
        if has_extent(w):
            t.words.append(w)
            t.wsrc[how] += 1
        else:
            t.degenerate += 1


def _inkml_source(t: _InkmlTally, r: Path, files: list, writer: str, dialect: str, symbols: bool) -> dict:
    """The manifest's source entry of an InkML folder ``r``: its sha256 (over the parsed files' paths and
    digests, sorted), the options, and what the tally ``t`` found (lists cut at 50 entries)."""
    h = hashlib.sha256()
    for rel in sorted(t.digests):
        h.update(f"{rel}\0{t.digests[rel]}\n".encode())
    words = t.words
    return {"kind": "inkml", "path": portable_path(r), "sha256": h.hexdigest(), "writer_rule": writer,
            "dialect": dialect, "symbols": bool(symbols), "files_found": len(files), "files_parsed": len(t.digests),
            "files_failed": len(t.failed), "failed_files": [list(x) for x in t.failed[:50]],
            "files_not_inkml": [list(x) for x in t.not_inkml[:50]], "files_not_inkml_count": len(t.not_inkml),
            "files_without_writer": [list(x) for x in t.no_writer[:50]],
            "dialects": dict(sorted(t.dialects.items())), "groups_read": t.groups, "words": len(words),
            "words_skipped": dict(sorted(t.skipped.items())), "words_skipped_examples": t.skip_examples,
            "words_degenerate": t.degenerate, "writers": len({w.writer for w in words}),
            "writer_sources": dict(sorted(t.wsrc.items())), "warnings": sum(t.by_kind.values()),
            "warnings_by_kind": dict(sorted(t.by_kind.items())), "warning_examples": t.examples}


def _inkml_files(r: Path) -> list[Path]:
    """The InkML files of folder ``r`` (sub-folders too), by their path in it; DatasetError when there are none."""
    if not r.is_dir():
        raise DatasetError(f"{r}: InkML folder not found")
    files = sorted((p for p in r.rglob("*") if p.is_file() and p.suffix.lower() in INKML_SUFFIXES),
                   key=lambda p: p.relative_to(r).as_posix())
    if not files:
        raise DatasetError(f"{r}: no InkML files ({', '.join('*' + x for x in INKML_SUFFIXES)}) in the folder")
    return files


def _left_out(g, math: bool, symbols: bool) -> Optional[tuple[str, str]]:
    """Why :func:`inkml_words` leaves group ``g`` out (the reason counted, and the example's detail), or None
    for a word it keeps."""
    from inkground_lib.core.defaults import MAX_WORD_POINTS, MAX_WORD_TEXT

    if len(g.text) > MAX_WORD_TEXT:
        return "text longer than MAX_WORD_TEXT", f"a text of {len(g.text):,} characters (at most {MAX_WORD_TEXT})"
    if not symbols and math:
        return ("a symbol of a mathematical expression (--inkml-symbols keeps them)",
                f"{g.text[:40]!r} is a symbol of the file's mathematical expression (--inkml-symbols keeps it)")
    if not symbols and not is_word_text(g.text):
        return ("text not a word (math, symbols or numbers; --inkml-symbols keeps them)",
                f"{g.text[:40]!r} is not a word (--inkml-symbols keeps it)")
    if g.ink.n_points > MAX_WORD_POINTS:
        return "ink over MAX_WORD_POINTS", f"{g.ink.n_points:,} points (at most {MAX_WORD_POINTS:,})"
    return None


def _word_writer(writer: str, annotation: Optional[str], rel: str) -> tuple[str, str]:
    """The writer of a word of file ``rel`` under the rule ``writer`` (:data:`INKML_WRITERS`), and where it came
    from: annotation, folder or file."""
    folder = Path(rel).parent.as_posix()
    if writer in ("auto", "annotation") and annotation:
        return f"inkml:{annotation}", "annotation"
    if writer == "folder" or (writer == "auto" and folder != "."):
        return f"inkml:{folder}", "folder"
    return f"inkml:{Path(rel).with_suffix('').as_posix()}", "file"


def _not_inkml(path: Path, message: str) -> Optional[str]:
    """Why a file that failed to read is not InkML at all (None when it is InkML with a fault): not XML (a binary
    ink format, e.g. Microsoft's Ink Serialized Format in an ``.ink`` file), or XML whose root is not InkML's."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(512)
    except OSError:
        return None
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    xml_like = text.startswith(b"<") or head[:2] in (b"\xff\xfe", b"\xfe\xff")  # UTF-16 marks
    if message.startswith("not well-formed XML") and not xml_like:
        return "not InkML: not an XML file (another program's ink format?)"
    if message.startswith("root element is") and "expected <ink>" in message:
        return "not InkML: " + message
    return None
