"""The recorded dataset: photographed pages composed from real recorded handwriting, one writer per page.

``build_recorded`` writes the dataset from a UNIPEN-derived JSON file, a whole UNIPEN release (the original
``.dat`` format, :mod:`inkground_lib.formats.unipen_release`), an IAM-OnDB copy and / or a folder of word-level
InkML files (:mod:`inkground_lib.formats.inkml`);
``compose_page`` lays one writer's words out on a page, drawn and photographed as synth does. The design
page of the book has the details.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from inkground_lib.core.dataset import (
    DatasetError,
    Page,
    Word,
    load_dataset,
    write_manifest,
)
from inkground_lib.core.files import atomic_write_bytes, atomic_write_json, modules_sha256, sha256_file
from inkground_lib.core.folders import (
    check_claims,
    check_output_folder,
    claim_files,
    folder_lock,
    may_delete_own_files,
)
from inkground_lib.core.ink import Ink, as_ink
from inkground_lib.core.layout import UNIPEN_SUBSET
from inkground_lib.core.repo_paths import portable_path
from inkground_lib.datasets.remade import say_remade
from inkground_lib.datasets.segmentation import (
    core_band,
    core_height,
    cut_line,
    is_punctuation,
    match_lines_by_length,
)
from inkground_lib.datasets.synth.page_layout import clean_page
from inkground_lib.datasets.synth.photo import (
    PhotoEffects,
    apply_homography,
    encode_jpeg,
    photograph,
)
from inkground_lib.datasets.synth.texts import split_words
from inkground_lib.formats.iamondb import read_iamondb_report
from inkground_lib.formats.iamondb_transcriptions import transcription_tokens
from inkground_lib.formats.inkml import DIALECTS, read_inkml
from inkground_lib.formats.inkml_document import InkMLDocument
from inkground_lib.formats.unipen import RecordedWord, read_unipen_json
from inkground_lib.formats.unipen_release import read_unipen_release
from inkground_lib.formats.xmlsafe import FormatError

BUILDER_VERSION = 1
"""The version of the builder's file layout (``meta["builder_version"]``). What identifies the code that composed
the pages is :func:`code_sha256`, never this number: nobody has to remember to bump it."""
BUILDER_CODE = (
    "inkground_lib",
    "inkground_lib.core",
    "inkground_lib.core.dataset",
    "inkground_lib.core.defaults",
    "inkground_lib.core.files",
    "inkground_lib.core.folders",
    "inkground_lib.core.ink",
    "inkground_lib.core.layout",
    "inkground_lib.core.manifest_schema",
    "inkground_lib.core.progress",
    "inkground_lib.core.render",
    "inkground_lib.core.repo_paths",
    "inkground_lib.datasets",
    "inkground_lib.datasets.recorded",
    "inkground_lib.datasets.remade",
    "inkground_lib.datasets.segmentation",
    "inkground_lib.datasets.synth",
    "inkground_lib.datasets.synth.glyphs",
    "inkground_lib.datasets.synth.page_layout",
    "inkground_lib.datasets.synth.photo",
    "inkground_lib.datasets.synth.texts",
    "inkground_lib.datasets.synth.writers",
    "inkground_lib.formats",
    "inkground_lib.formats.iamondb",
    "inkground_lib.formats.iamondb_strokes",
    "inkground_lib.formats.iamondb_transcriptions",
    "inkground_lib.formats.inkml",
    "inkground_lib.formats.inkml_document",
    "inkground_lib.formats.inkml_traces",
    "inkground_lib.formats.inksight_canvas",
    "inkground_lib.formats.unipen",
    "inkground_lib.formats.unipen_dat",
    "inkground_lib.formats.unipen_release",
    "inkground_lib.formats.xmlsafe",
)
"""Every library module the builder may run, the readers of its sources included (its static import closure; a
test keeps the two equal): their code digest is part of the dataset's meta, so pages composed by other code are
composed again."""


def code_sha256() -> str:
    """sha256 over the source files of :data:`BUILDER_CODE` (:func:`~inkground_lib.core.files.modules_sha256`)."""
    return modules_sha256(BUILDER_CODE)
BUILDER_MARK = "recorded_builder.json"
"""Written into the output folder before any page: marks the folder as this builder's (resumable, rebuildable)."""
OWN_FILE = re.compile(r"p\d{4,}\.(jpg|json)")
"""The names of the page photos and ink files this builder writes (``p0000.jpg``, ``p0000.json``)."""

SUBSET_WORDS_PER_PAGE = (4, 8)
"""Words per page for the small sources (the JSON subset holds at most 8 words a writer)."""
PAPER_WORDS_PER_PAGE = (20, 50)
"""Words per page from a whole UNIPEN release: uniform in 20-50, mean 35, like the paper's pages (34.89 words
on average, 2-140)."""


def is_recorded_folder(out: Path) -> bool:
    """True if ``out`` is a recorded dataset this builder wrote (its builder mark, or a recorded manifest)."""
    if (out / BUILDER_MARK).is_file():
        return True
    try:
        return json.loads((out / "manifest.json").read_text("utf-8")).get("kind") == "recorded"
    except (OSError, ValueError, AttributeError):
        return False


def default_unipen_path() -> Path | None:
    """The UNIPEN subset shipped with the repository (``data/unipen_cursive/unipen_cursive_dev.json``), or
    None where it was deleted from the checkout."""
    return UNIPEN_SUBSET if UNIPEN_SUBSET.is_file() else None


# ============================================================================================ sources

_IAM_DIRS = ("lineStrokes-all", "lineStrokes", "original-xml-part", "original-xml-all", "original",
             "ascii-all", "ascii")


def _tree_sha256(root: Path, extra: Sequence[Path] = ()) -> tuple[str, int]:
    """sha256 over (relative path, file sha256) of every file in the IAM-OnDB folders used, sorted."""
    files = []
    for d in _IAM_DIRS:
        p = root / d
        if p.is_dir():
            files.extend(f for f in p.rglob("*") if f.is_file())
    files.extend(f for f in extra if f.is_file())
    h = hashlib.sha256()
    for f in sorted(set(files)):
        h.update(f"{f.relative_to(root).as_posix()}\0{sha256_file(f)}\n".encode())
    return h.hexdigest(), len(files)


_LINE_SKIPS = {"placeholder": "placeholder transcription", "no transcription": "no transcription"}


def _match_forms(lines) -> dict[str, tuple[Optional[str], str, str]]:
    """{line id: (text or None, how, source)} for the lines whose form the reader left unmatched ("line count"),
    by :func:`~inkground_lib.datasets.segmentation.match_lines_by_length`."""
    by_form: dict[str, list] = {}
    for ln in lines:
        if ln.text is None and ln.text_note == "line count":
            by_form.setdefault(ln.form, []).append(ln)
    out = {}
    for form, lns in by_form.items():
        lns.sort(key=lambda ln: ln.id)
        texts = [t for _, t in lns[0].form_text]
        got, how = match_lines_by_length([ln.ink for ln in lns], texts)
        for k, ln in enumerate(lns):
            j = got[k] if got is not None else None
            out[ln.id] = (texts[j] if j is not None else None, how, ln.form_text_source)
    return out


def iamondb_words(root: str | os.PathLike, split: str | None = None, *, gap_factor: float = 0.6,
                  progress: bool = False) -> tuple[list[RecordedWord], dict]:
    """Words cut out of IAM-OnDB lines, and the read report as manifest meta, with what each line got.

    The folder is read by :func:`~inkground_lib.formats.iamondb.read_iamondb_report`: a file that cannot be read
    is listed (``failed_files``: file, reason) and the rest is read; its quirks are counted (``quirks``).

    Lines and texts: a line takes the transcription line of its number when the form's files and transcription
    lines carry the same numbers; where they do not (a line or a file missing), the form's lines are matched by
    their lengths (:func:`~inkground_lib.datasets.segmentation.match_lines_by_length`: one way of pairing them
    must fit clearly best) or skipped (``lines_skipped``: "form's lines not matched ...").

    Cutting: a line is cut at pen-up gaps into as many pieces as its transcription has words
    (:func:`~inkground_lib.formats.iamondb_transcriptions.transcription_tokens`: struck-out, unreadable and bracketed words
    count, as they are ink on the line; a full stop or comma written close to its word is taken back from the
    word's end), and the cut is used only when it is also supported by the words' lengths
    (:func:`~inkground_lib.datasets.segmentation.cut_line` and ``check_cut``: punctuation gets small ink, each
    word a width that fits its letters against the line's own scale); otherwise the whole line is skipped and
    counted, never forced.
    Its plain words are the targets, the marked ones are left out (``words_not_targets`` by mark).

    ``line_report`` lists every line read: ``line``, ``text`` (None if none), ``text_source`` (original-xml /
    ascii), ``match`` (number / length / None), ``kept`` and ``reason`` (why it was skipped, or how it was matched).
    ``lines_kept`` counts the lines whose words are used, ``lines_skipped`` the others by reason. Word ids are
    ``<line id>-<k:02d>`` (k the word's place in the line); inks in whiteboard units."""
    lines, report = read_iamondb_report(root, split, progress=progress)
    matched = _match_forms(lines)
    words, with_text, ok = [], 0, 0
    skipped, marked = Counter(), Counter()
    rows = []
    for ln in lines:
        text, how, src = ln.text, ln.match, ln.text_source
        if ln.id in matched:
            text, why, src = matched[ln.id]
            how = "length" if text is not None else None
        row = {"line": ln.id, "file": str(ln.path), "text": text, "text_source": src if text is not None else None,
               "match": how, "kept": False, "reason": None}
        rows.append(row)

        def skip(reason: str, detail: Optional[str] = None) -> None:
            skipped[reason] += 1
            row["reason"] = reason + (f": {detail}" if detail else "")

        if ln.id in matched and text is None:
            skip("form's lines not matched (files and transcription lines differ in number)", why)
            continue
        if text is None:
            skip(_LINE_SKIPS.get(ln.text_note or "", "no transcription"))
            continue
        tokens = transcription_tokens(text)
        if not tokens:
            skip("empty transcription")
            continue
        if all(t.mark == "unreadable" for t in tokens):
            skip("unreadable transcription (only '%' marks)")
            continue
        if not any(t.target for t in tokens):
            skip("no plain word (every word marked)")
            continue
        with_text += 1
        parts, kind, why_not = cut_line(ln.ink, [t.text for t in tokens], gap_factor=gap_factor,
                                        sized=[t.target for t in tokens])
        if parts is None:
            skip("cut at pen-up gaps into another number of words than the transcription's" if kind == "count"
                 else "cut does not fit the words' lengths", why_not)
            continue
        ok += 1
        row["kept"] = True
        if how == "length":
            row["reason"] = why
        writer = ln.writer or f"iamondb-form-{ln.form}"
        for k, (tok, ink) in enumerate(zip(tokens, parts)):
            if not tok.target or is_punctuation(tok.text):
                marked[tok.mark or "punctuation"] += 1
                continue
            words.append(RecordedWord(f"{ln.id}-{k:02d}", writer, tok.text, ink,
                                      {"source": "iamondb", "line": ln.id, "file": str(ln.path)}))
    return words, {"lines": len(lines), "lines_with_text": with_text, "lines_segmented": ok, "lines_kept": ok,
                   "lines_matched_by_length": sum(r["match"] == "length" for r in rows),
                   "lines_skipped": dict(sorted(skipped.items())), "words_not_targets": dict(sorted(marked.items())),
                   **report.as_meta(), "line_report": rows}


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
    from inkground_lib.core.defaults import MAX_WORD_POINTS, MAX_WORD_TEXT
    from inkground_lib.core.progress import bar as progress_bar

    if writer not in INKML_WRITERS:
        raise ValueError(f"inkml writer: expected one of {INKML_WRITERS}, got {writer!r}")
    if dialect not in DIALECTS:
        raise ValueError(f"inkml dialect: expected one of {DIALECTS}, got {dialect!r}")
    r = Path(root)
    if not r.is_dir():
        raise DatasetError(f"{r}: InkML folder not found")
    files = sorted((p for p in r.rglob("*") if p.is_file() and p.suffix.lower() in INKML_SUFFIXES),
                   key=lambda p: p.relative_to(r).as_posix())
    if not files:
        raise DatasetError(f"{r}: no InkML files ({', '.join('*' + x for x in INKML_SUFFIXES)}) in the folder")
    words, failed, not_inkml, no_writer, digests = [], [], [], [], {}
    skipped, by_kind, dialects, wsrc = Counter(), Counter(), Counter(), Counter()
    examples, skip_examples = [], []
    groups = degenerate = 0
    for f in progress_bar(files, desc="InkML files", enabled=progress):
        rel = f.relative_to(r).as_posix()
        try:
            doc = read_inkml(f, dialect=dialect)
        except FormatError as e:
            msg = str(e)
            msg = msg[len(str(f)) + 2:] if msg.startswith(f"{f}: ") else msg
            kind = _not_inkml(f, msg)
            if kind:
                not_inkml.append((rel, kind))
            else:
                failed.append((rel, msg))
            continue
        digests[rel] = sha256_file(f)
        dialects[doc.dialect] += 1
        groups += len(doc)
        for w in doc.warnings:
            by_kind[w.kind] += 1
            if len(examples) < 50:
                examples.append(str(w))
        math = is_math_document(doc)
        chosen, left = _word_groups(doc, _MATH_LABELS if math else frozenset())
        skipped.update(left)
        folder = Path(rel).parent.as_posix()
        if writer == "annotation" and not any(_group_writer(doc, k) for k in chosen):
            if chosen:
                no_writer.append((rel, f"{len(chosen)} word(s), no annotation type=\"writer\" (--inkml-writer "
                                       "auto or folder or file would keep them)"))
            continue
        for k in chosen:
            g = doc[k]

            def leave(reason: str, detail: str) -> None:
                skipped[reason] += 1
                if len(skip_examples) < 50:
                    skip_examples.append(f"{rel}#{g.id if g.id is not None else k}: {detail}")

            if len(g.text) > MAX_WORD_TEXT:
                leave("text longer than MAX_WORD_TEXT", f"a text of {len(g.text):,} characters (at most "
                                                        f"{MAX_WORD_TEXT})")
                continue
            if not symbols and math:
                leave("a symbol of a mathematical expression (--inkml-symbols keeps them)",
                      f"{g.text[:40]!r} is a symbol of the file's mathematical expression (--inkml-symbols keeps it)")
                continue
            if not symbols and not is_word_text(g.text):
                leave("text not a word (math, symbols or numbers; --inkml-symbols keeps them)",
                      f"{g.text[:40]!r} is not a word (--inkml-symbols keeps it)")
                continue
            if g.ink.n_points > MAX_WORD_POINTS:
                leave("ink over MAX_WORD_POINTS", f"{g.ink.n_points:,} points (at most {MAX_WORD_POINTS:,})")
                continue
            ann = _group_writer(doc, k)
            if writer in ("auto", "annotation") and ann:
                who, how = f"inkml:{ann}", "annotation"
            elif writer == "folder" or (writer == "auto" and folder != "."):
                who, how = f"inkml:{folder}", "folder"
            else:
                who, how = f"inkml:{Path(rel).with_suffix('').as_posix()}", "file"
            w = RecordedWord(f"{rel}#{g.id if g.id is not None else k}", who, g.text, g.ink,
                             {"source": "inkml", "file": rel, "group": g.id, "dialect": doc.dialect,
                              "writer_from": how})
            if _usable(w):
                words.append(w)
                wsrc[how] += 1
            else:
                degenerate += 1
    h = hashlib.sha256()
    for rel in sorted(digests):
        h.update(f"{rel}\0{digests[rel]}\n".encode())
    source = {"kind": "inkml", "path": portable_path(r), "sha256": h.hexdigest(), "writer_rule": writer,
              "dialect": dialect, "symbols": bool(symbols), "files_found": len(files), "files_parsed": len(digests),
              "files_failed": len(failed), "failed_files": [list(x) for x in failed[:50]],
              "files_not_inkml": [list(x) for x in not_inkml[:50]], "files_not_inkml_count": len(not_inkml),
              "files_without_writer": [list(x) for x in no_writer[:50]],
              "dialects": dict(sorted(dialects.items())), "groups_read": groups, "words": len(words),
              "words_skipped": dict(sorted(skipped.items())), "words_skipped_examples": skip_examples,
              "words_degenerate": degenerate, "writers": len({w.writer for w in words}),
              "writer_sources": dict(sorted(wsrc.items())), "warnings": sum(by_kind.values()),
              "warnings_by_kind": dict(sorted(by_kind.items())), "warning_examples": examples}
    return words, source


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


# ============================================================================================ layout

@dataclass(frozen=True)
class Layout:
    """Page layout parameters, in page pixels (``core_px``: the writers' common core height)."""

    core_px: float = 24.0
    page_width: int = 1000
    margin_left: tuple[float, float] = (0.06, 0.12)     # fraction of the page width
    margin_right: float = 0.05                          # fraction of the page width
    margin_top: tuple[float, float] = (0.06, 0.10)      # fraction of the page width
    word_gap: tuple[float, float] = (0.9, 1.5)          # times core_px
    line_spacing: tuple[float, float] = (3.2, 4.0)      # times core_px
    baseline_jitter: float = 0.12                       # std, times core_px
    line_gap: float = 0.4                               # least gap between lines' inks, times core_px
    pen_width: tuple[float, float] = (2.0, 3.4)         # page pixels
    min_aspect: float = 0.55                            # page height >= this * width


@dataclass
class ComposedPage:
    """A laid-out page before photographing: ``inks[i]`` = ``scale`` * source ink i + ``offsets[i]``."""

    width: int
    height: int
    pen_width: float
    scale: float
    inks: list[Ink]
    offsets: list[tuple[float, float]]


def compose_page(words: Sequence[RecordedWord], scale: float, rng: np.random.Generator,
                 layout: Layout = Layout()) -> ComposedPage:
    """Lay out one writer's ``words`` (source units, y down) on a note page in page pixels.

    Every word ink becomes ``scale * ink + (dx, dy)`` (a similarity transform, t unchanged); see the module
    doc for the layout rules. Deterministic for a given ``rng`` state.
    """
    if not words:
        raise ValueError("compose_page: no words")
    L = layout
    W = int(L.page_width)
    pen = float(rng.uniform(*L.pen_width))
    gap = float(rng.uniform(*L.word_gap)) * L.core_px
    spacing = float(rng.uniform(*L.line_spacing)) * L.core_px
    left = float(rng.uniform(*L.margin_left)) * W
    top = float(rng.uniform(*L.margin_top)) * W
    right_edge = W - L.margin_right * W
    scaled = []
    for w in words:
        ink = as_ink(w.ink)
        x0, _, x1, _ = ink.bbox()
        base = core_band(ink)[1]
        scaled.append((ink, x0 * scale, (x1 - x0) * scale, base * scale))
    widest = max(s[2] for s in scaled)
    if left + widest > right_edge:  # one word wider than a line: widen the page
        W = int(np.ceil(left + widest + L.margin_right * W))
        right_edge = W - L.margin_right * W
    # 1. words to lines, left to right; 2. lines stacked: baseline k is line_spacing below baseline k-1,
    # lower still where line k's tallest letters would come closer than line_gap to line k-1's lowest ink
    lines: list[list[int]] = [[]]
    xs, cursor = [], left
    for i, (ink, x0s, ws, bs) in enumerate(scaled):
        if cursor > left and cursor + ws > right_edge:
            lines.append([])
            cursor = left
        lines[-1].append(i)
        xs.append(cursor - x0s)
        cursor += ws + gap
    jitter = [float(rng.normal(0.0, L.baseline_jitter)) * L.core_px for _ in scaled]
    dys = [0.0] * len(scaled)
    baseline, prev_bottom = 0.0, None
    for k, idx in enumerate(lines):
        rel = [(ink.bbox()[1] * scale - bs + jitter[i], ink.bbox()[3] * scale - bs + jitter[i])
               for i in idx for (ink, _, _, bs) in [scaled[i]]]
        top_rel, bot_rel = min(r[0] for r in rel), max(r[1] for r in rel)
        if k > 0:
            baseline = max(baseline + spacing, prev_bottom + L.line_gap * L.core_px - top_rel)
        for i in idx:
            dys[i] = baseline + jitter[i] - scaled[i][3]
        prev_bottom = baseline + bot_rel
    offsets = list(zip(xs, dys))
    inks = [ink.transformed(scale, dx, dy) for (ink, *_), (dx, dy) in zip(scaled, offsets)]
    # shift so the ink's top lies at the top margin
    y_top = min(k.bbox()[1] for k in inks)
    y_bot = max(k.bbox()[3] for k in inks)
    shift = top - y_top
    inks = [k.transformed(1.0, 0.0, shift) for k in inks]
    offsets = [(dx, dy + shift) for dx, dy in offsets]
    H = int(np.ceil(max((y_bot - y_top) + 2 * top, L.min_aspect * W)))
    return ComposedPage(W, H, pen, float(scale), inks, offsets)


def plan_pages(words: Sequence[RecordedWord], pages: int | None, words_per_page: tuple[int, int],
               rng: np.random.Generator) -> list[tuple[str, list[RecordedWord]]]:
    """Which writer's which words go on each page (see the module doc); words with no letter are left out."""
    lo, hi = words_per_page
    by_writer: dict[str, list[RecordedWord]] = {}
    for w in words:
        if any(c.isalpha() for c in w.text):
            by_writer.setdefault(w.writer, []).append(w)
    writers = sorted(by_writer)
    order = [writers[i] for i in rng.permutation(len(writers))]
    pools = {wr: [by_writer[wr][i] for i in rng.permutation(len(by_writer[wr]))] for wr in order}
    plan: list[tuple[str, list[RecordedWord]]] = []
    while True:
        added = False
        for wr in order:
            if pages is not None and len(plan) >= pages:
                return plan
            pool = pools[wr]
            if len(pool) < lo:
                continue
            k = min(int(rng.integers(lo, hi + 1)), len(pool))
            plan.append((wr, pool[:k]))
            pools[wr] = pool[k:]
            added = True
        if pages is None or not added:
            return plan


# ============================================================================================ builder

def _effects(effects):
    if effects is None:
        return PhotoEffects()
    if isinstance(effects, str):
        if effects == "none":
            return PhotoEffects.none()
        if effects == "default":
            return PhotoEffects()
        raise ValueError(f"effects: {effects!r} is not 'default', 'none', a dict or a PhotoEffects")
    if isinstance(effects, dict):
        return PhotoEffects(**effects)
    return effects


def _effects_record(eff) -> dict:
    if dataclasses.is_dataclass(eff):
        d = dataclasses.asdict(eff)
    else:
        d = dict(vars(eff))
    return json.loads(json.dumps(d, default=str))


def _usable(w: RecordedWord) -> bool:
    """A word whose ink spans some width and height (a scale can be taken from it)."""
    try:
        x0, y0, x1, y1 = w.ink.bbox()
    except ValueError:
        return False
    return x1 > x0 and y1 > y0


def unipen_dir_words(root: str | os.PathLike, *, category="6", style="CURSIVE", quality="!BAD",
                     progress: bool = False) -> tuple[list[RecordedWord], dict]:
    """Words of a whole UNIPEN release (:func:`inkground_lib.formats.unipen_release.read_unipen_release`,
    WORD segments) and the manifest source entry: path, sha256 over the files read, selection, counts and
    the read report. Words whose ink has no width or no height are left out (counted)."""
    r = Path(root)
    if not r.is_dir():
        raise DatasetError(f"{r}: UNIPEN release folder not found")
    words, report = read_unipen_release(r, category=category, style=style, quality=quality, progress=progress)
    usable = [w for w in words if _usable(w)]
    source = {"kind": "unipen_dir", "path": portable_path(r), "sha256": report.digest(),
              "files": len(report.files), "selection": report.selection, "words": len(usable),
              "words_degenerate": len(words) - len(usable), **report.as_meta()}
    return usable, source


def build_recorded(out_dir: str | os.PathLike, *, unipen: str | os.PathLike | None = None,
                   unipen_dir: str | os.PathLike | None = None, category="6", style="CURSIVE",
                   quality="!BAD", iamondb: str | os.PathLike | None = None, iamondb_split: str | None = None,
                   inkml: str | os.PathLike | None = None, inkml_writer: str = "auto", inkml_dialect: str = "auto",
                   inkml_symbols: bool = False,
                   pages: int | None = None, words_per_page: tuple[int, int] | None = None, seed: int = 0,
                   effects=None, progress: bool = True, layout: Layout = Layout(), gap_factor: float = 0.6,
                   jpeg_quality: int = 88, name: str = "recorded", overwrite: bool = False) -> Path:
    """Build (or reuse) the recorded dataset in ``out_dir`` and return the folder.

    ``unipen``: a UNIPEN-format JSON file; ``unipen_dir``: the root of a whole UNIPEN release in the
    original format (e.g. train_r01_v07: ``data/``, ``include/``), from which ``category`` (``"6"``:
    isolated cursive or mixed words; a list or ``"6,7"`` for several), ``style`` (``.STYLE`` label(s),
    ``"CURSIVE"``, ``"CURSIVE,MIXED"``, None for any) and ``quality`` (``"!BAD"``: all but BAD;
    ``"GOOD,OK"``; None: any) select the WORD segments (see :func:`unipen_dir_words`); ``iamondb``: an
    IAM-OnDB root (``iamondb_split`` e.g. ``"trainset"`` keeps one task split; broken files are reported and
    skipped, see :func:`iamondb_words`); ``inkml``: a folder of word-level InkML files, ``inkml_writer``
    (``"auto"``: writer annotations, else the folder, else the file; ``"annotation"``, ``"file"`` or ``"folder"``),
    ``inkml_dialect`` as in :func:`~inkground_lib.formats.inkml.read_inkml` and ``inkml_symbols`` (keep texts that
    are not words as targets), see :func:`inkml_words`. Writers with fewer words than the page minimum are left
    out with a warning naming them and the options that would keep them (``writers_left_out`` in the meta).
    With none of them, the
    shipped UNIPEN subset is used (:func:`default_unipen_path`). ``pages``: number of pages (None: one per
    eligible writer; more pages take further words of the writers in turn until they run out);
    ``words_per_page``: (min, max) words per page, one writer per page (None: :data:`PAPER_WORDS_PER_PAGE`
    with ``unipen_dir``, else :data:`SUBSET_WORDS_PER_PAGE`); ``effects``: a
    :class:`inkground_lib.datasets.synth.photo.PhotoEffects`, a dict of its fields, ``"none"`` or None
    (defaults). Deterministic for a seed; a folder whose manifest has identical meta is returned as it is; one
    made with other sources, parameters or code (the meta's ``code_sha256``, :func:`code_sha256`) is made again,
    and a line on standard error says why.
    A non-empty folder that is not a recorded dataset is refused (FolderError) before anything is read, unless
    ``overwrite`` (pages are then written into it, and nothing of it is deleted); the folder is locked while
    pages are written. Raises DatasetError / FormatError naming the file at fault.

    Each source's ``path`` in the meta is stored relative to the repository root when the source lies inside it
    (:func:`~inkground_lib.core.repo_paths.portable_path`: the shipped subset is
    ``data/unipen_cursive/unipen_cursive_dev.json``), so a moved or renamed checkout finds its dataset as built
    (same meta, same :func:`~inkground_lib.core.dataset.dataset_hash`) while its ``sha256`` still rebuilds it
    when the source's content changes.
    """
    from inkground_lib.core.progress import bar as progress_bar

    out = check_output_folder(out_dir, "a recorded dataset", is_recorded_folder, overwrite)
    if words_per_page is None:
        words_per_page = PAPER_WORDS_PER_PAGE if unipen_dir is not None else SUBSET_WORDS_PER_PAGE
    lo, hi = (int(v) for v in words_per_page)
    if not (1 <= lo <= hi):
        raise ValueError(f"words_per_page: expected 1 <= min <= max, got {words_per_page!r}")
    if pages is not None and int(pages) < 1:
        raise ValueError(f"pages: expected a positive number or None, got {pages!r}")
    if inkml_writer not in INKML_WRITERS:
        raise ValueError(f"inkml_writer: expected one of {INKML_WRITERS}, got {inkml_writer!r}")
    if inkml_dialect not in DIALECTS:
        raise ValueError(f"inkml_dialect: expected one of {DIALECTS}, got {inkml_dialect!r}")
    if unipen is None and iamondb is None and unipen_dir is None and inkml is None:
        unipen = default_unipen_path()
        if unipen is None:
            raise DatasetError("build_recorded: no source: give unipen=PATH (UNIPEN-format JSON), "
                               "unipen_dir=PATH (a UNIPEN release), iamondb=PATH (IAM-OnDB root) and/or "
                               f"inkml=PATH (a folder of InkML files); the shipped UNIPEN subset {UNIPEN_SUBSET} "
                               "is absent")

    words: list[RecordedWord] = []
    sources = []
    line_report = None
    if unipen is not None:
        up = Path(unipen)
        if not up.is_file():
            raise DatasetError(f"{up}: UNIPEN JSON file not found")
        uw = read_unipen_json(up)
        words += uw
        sources.append({"kind": "unipen", "path": portable_path(up), "sha256": sha256_file(up), "words": len(uw)})
    if unipen_dir is not None:
        dw, source = unipen_dir_words(unipen_dir, category=category, style=style, quality=quality,
                                      progress=progress)
        words += dw
        sources.append(source)
    if iamondb is not None:
        ip = Path(iamondb)
        iw, counts = iamondb_words(ip, iamondb_split, gap_factor=gap_factor, progress=progress)
        line_report = counts.pop("line_report")  # every line's outcome: written to sources.json, not the manifest
        words += iw
        extra = []
        if iamondb_split:
            extra = [p for p in (Path(iamondb_split), ip / f"{iamondb_split}.txt", ip / "task1" / f"{iamondb_split}.txt")]
        digest, n_files = _tree_sha256(ip, extra)
        sources.append({"kind": "iamondb", "path": portable_path(ip), "sha256": digest, "files": n_files,
                        "split": iamondb_split, "words": len(iw), **counts,
                        "note": "words cut from lines at pen-up gaps; a line is used only when the cut gives "
                                "the transcription's word count and fits the words' lengths; what each line got "
                                "is listed in sources.json (iamondb_lines)"})
    if inkml is not None:
        kw, source = inkml_words(inkml, writer=inkml_writer, dialect=inkml_dialect, symbols=inkml_symbols,
                                 progress=progress)
        words += kw
        sources.append(source)
    if not words:
        sel = "".join(f"; {s['path']}: selection {s['selection']}, {s['files_parsed']} files parsed, "
                      f"{s['files_failed']} failed" for s in sources if s["kind"] == "unipen_dir")
        sel += "".join(f"; {s['path']}: {s['files_parsed']} of {s['files_found']} InkML files read, "
                       f"{s['files_failed']} failed, groups left out: {s['words_skipped'] or 'none'}"
                       for s in sources if s["kind"] == "inkml")
        raise DatasetError(f"build_recorded: the sources hold no words ({[s['path'] for s in sources]}){sel}")

    rng = np.random.default_rng([int(seed), 0])
    plan = plan_pages(words, None if pages is None else int(pages), (lo, hi), rng)
    counts = Counter(w.writer for w in words if any(c.isalpha() for c in w.text))
    short = sorted((wr, n) for wr, n in counts.items() if n < lo)
    hint = ("; --words-per-page (words_per_page) with a lower minimum keeps them"
            + ("; with --inkml, --inkml-writer folder (inkml_writer='folder') puts a folder's files under one writer"
               if inkml is not None and inkml_writer != "folder" else ""))
    listed = ", ".join(f"{wr} ({n})" for wr, n in short[:20]) + (" ..." if len(short) > 20 else "")
    if not plan:
        raise DatasetError(f"build_recorded: no writer has {lo} or more words with letters ({len(counts)} writers, "
                           f"{sum(counts.values())} words: {listed}){hint} (now {lo}-{hi})")
    if short:
        warnings.warn(f"build_recorded: {len(short)} writer(s) with fewer than {lo} words are left out: {listed}"
                      f"{hint}")
    if pages is not None and len(plan) < int(pages):
        warnings.warn(f"build_recorded: only {len(plan)} of the {pages} pages requested can be composed "
                      f"(writers run out of words for {lo}+ words per page)")
    by_writer: dict[str, list[RecordedWord]] = {}
    for w in words:
        by_writer.setdefault(w.writer, []).append(w)
    scales = {wr: layout.core_px / float(np.median([core_height(w.ink) for w in ws]))
              for wr, ws in by_writer.items()}

    eff = _effects(effects)
    meta = {"builder": "inkground_lib.datasets.recorded.build_recorded", "builder_version": BUILDER_VERSION,
            "code_sha256": code_sha256(), "seed": int(seed), "sources": sources,
            "params": {"pages": None if pages is None else int(pages), "words_per_page": [lo, hi],
                       "layout": dataclasses.asdict(layout), "gap_factor": gap_factor,
                       "jpeg_quality": int(jpeg_quality), "iamondb_split": iamondb_split},
            "effects": _effects_record(eff), "pages_built": len(plan),
            "writers_left_out": [[wr, n] for wr, n in short[:50]],
            "writers": len({wr for wr, _ in plan})}
    meta = json.loads(json.dumps(meta))

    # an --overwrite of someone's folder replaces none of their files (refused, naming the file, before the lock
    # file is made)
    names = ["manifest.json", BUILDER_MARK, "sources.json"] + [f"{sub}/p{pi:04d}.{ext}" for pi in range(len(plan))
                                                              for sub, ext in (("pages", "jpg"), ("inks", "json"))]
    if out.is_dir():
        check_claims(out, names, is_recorded_folder(out))
    with folder_lock(out, "recorded"):
        claim_files(out, names, is_recorded_folder(out))
        own = may_delete_own_files(out, is_recorded_folder(out))
        mpath = out / "manifest.json"
        if mpath.is_file():
            try:
                old = json.loads(mpath.read_text("utf-8"))
                if isinstance(old, dict) and old.get("meta") == meta and old.get("name") == name:
                    load_dataset(out)
                    return out
                if isinstance(old, dict) and isinstance(old.get("meta"), dict):
                    say_remade(out, "recorded", old["meta"], meta)
            except (ValueError, OSError, DatasetError):
                pass
            if own:
                mpath.unlink()  # an interrupted rebuild must not leave a manifest that loads
        atomic_write_json(out / BUILDER_MARK, {"builder": "inkground_lib.datasets.recorded.build_recorded"})

        result_pages = []
        for pi, (writer, ws) in enumerate(progress_bar(plan, desc="recorded pages", enabled=progress)):
            layout_rng, split_rng, photo_rng = np.random.default_rng([int(seed), 1, pi]).spawn(3)
            comp = compose_page(ws, scales[writer], layout_rng, layout)
            gray = clean_page(comp.inks, (comp.width, comp.height), comp.pen_width)
            rgb, Hm = photograph(gray, photo_rng, eff)
            pid = f"p{pi:04d}"
            img_path = out / "pages" / f"{pid}.jpg"
            atomic_write_bytes(img_path, encode_jpeg(rgb, jpeg_quality))
            splits = split_words(split_rng, len(ws))
            page_words = []
            for j, (w, ink, sp) in enumerate(zip(ws, comp.inks, splits)):
                photo_ink = apply_homography(ink, Hm, decimals=2)
                page_words.append(Word(f"{pid}-w{j:03d}", w.text, photo_ink.bbox(), photo_ink, pid, sp, photo_ink))
            result_pages.append(Page(pid, img_path, writer, int(rgb.shape[1]), int(rgb.shape[0]), page_words))
        # provenance: which source word is each page word (not part of the manifest schema)
        provenance = {"page_words": {p.id: {w.id: src.id for w, src in zip(p.words, ws)}
                                     for p, (_, ws) in zip(result_pages, plan)}}
        if line_report is not None:
            provenance["iamondb_lines"] = line_report
        atomic_write_json(out / "sources.json", provenance)
        write_manifest(out, name, "recorded", "true ink", meta, result_pages)
        if not own:  # written with overwrite into someone else's folder: delete nothing there
            return out
        keep = {f"{p.id}.jpg" for p in result_pages} | {f"{p.id}.json" for p in result_pages}
        for sub in ("pages", "inks"):  # pages of an earlier, larger build: only files named as this builder names them
            for f in (out / sub).glob("*"):
                if f.is_file() and f.name not in keep and OWN_FILE.fullmatch(f.name):
                    f.unlink()
        return out
