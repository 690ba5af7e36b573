"""IAM-OnDB's transcriptions: the XML escapes they keep, the transcription marks (struck-out, unreadable, the
transcriber's brackets, the recording tool's placeholder), the original-xml forms (writer and text of each line) and
the ascii files' CSR section."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from inkground_lib.core.dataset import check_file_size
from inkground_lib.core.defaults import MAX_INK_FILE_BYTES, MAX_INK_FILE_ENV
from inkground_lib.formats.iamondb_strokes import session_root
from inkground_lib.formats.xmlsafe import FormatError, local_name


# The transcriptions keep XML's character escapes: handwriting_synthesis/data.py clean_text() in
# X-rayLaser/pytorch-handwriting-synthesis-toolkit (checked 2026-11-30) "Substitutes special text codes for a
# character with an actual character", replacing '&apos;' and '&quot;' in every IAM-OnDB line it reads (original
# xml or ascii). One pass over XML's predefined entities and character references; '&amp;quot;' becomes '&quot;'.
_ENTITY = re.compile(r"&(?:(quot|apos|amp|lt|gt)|#([0-9]+)|#[xX]([0-9a-fA-F]+));")
_NAMED = {"quot": '"', "apos": "'", "amp": "&", "lt": "<", "gt": ">"}


def unescape_iamondb_text(text: str) -> str:
    """IAM-OnDB transcription text with ``&quot;``, ``&apos;``, ``&amp;``, ``&lt;``, ``&gt;`` and numeric
    character references replaced by their characters (one pass; anything else is kept as written).

    >>> unescape_iamondb_text("he said &quot;no&quot; &amp; it&apos;s &#65;")
    'he said "no" & it\\'s A'
    """

    def sub(m: re.Match) -> str:
        if m.group(1):
            return _NAMED[m.group(1)]
        code = int(m.group(2), 10) if m.group(2) else int(m.group(3), 16)
        try:
            return chr(code)
        except (ValueError, OverflowError):
            return m.group(0)

    return _ENTITY.sub(sub, text)


# Transcription marks. IAM-OnDB's own data-format page (https://fki.tic.heia-fr.ch/databases/iam-on-line-
# handwriting-database/data-format) is not in the search index (2026-12-01: only its link, in third-party
# READMEs, and the download page, which names the CSR part, were found), so the rules below follow the IAM
# lab's convention for its handwriting databases as a public reader of the IAM database applies it, and what
# the distributed files hold (issue 24), each stated:
#  * '#' marks a word the writer struck out: jpuigcerver/PyLaia egs/iam-htr/src/prepare_texts.sh ("Also,
#    replace # by <stroke>", checked 2026-12-01). A token holding '#' is ink on the line (it counts when the
#    line is cut into words) but no target.
#  * a token made only of '%' (e.g. '%%%%%%%%%%%') stands for text that could not be read: it counts when the
#    line is cut, is no target; a line made only of such tokens is untranscribed.
#  * text in square brackets ('[...]', one token or several) is the transcriber's, not a plain reading of the
#    ink: each bracketed token counts when the line is cut, none is a target (a bracket left open runs to the
#    end of the line).
#  * the recording tool's placeholder "Please Enter Transcription here" (case and spacing aside) is no
#    transcription: the line is untranscribed.
_PLACEHOLDER = "please enter transcription here"


def is_placeholder_transcription(text: Optional[str]) -> bool:
    """True for the recording tool's placeholder text "Please Enter Transcription here" (case, white space and
    a final full stop aside).

    >>> is_placeholder_transcription("  please enter  Transcription here. ")
    True
    """
    return text is not None and " ".join(text.lower().split()).rstrip(".") == _PLACEHOLDER


@dataclass(frozen=True)
class IamToken:
    """A word of an IAM-OnDB transcription: ``text`` as written; ``mark`` None for a plain word, else
    ``"struck out"`` ('#'), ``"unreadable"`` (only '%') or ``"bracketed"`` ([...]); only plain words with a
    character other than the marks are targets (``target``)."""

    text: str
    mark: Optional[str] = None

    @property
    def target(self) -> bool:
        return self.mark is None


def transcription_tokens(text: str) -> list[IamToken]:
    """The white-space separated words of a transcription with the marks above.

    >>> [(t.text, t.mark) for t in transcription_tokens("we # it %%%% [sic] ok")]
    [('we', None), ('#', 'struck out'), ('it', None), ('%%%%', 'unreadable'), ('[sic]', 'bracketed'), ('ok', None)]
    """
    out, bracket = [], False
    for tok in text.split():
        if tok.startswith("[") or bracket:
            bracket = "]" not in tok
            out.append(IamToken(tok, "bracketed"))
        elif "#" in tok:
            out.append(IamToken(tok, "struck out"))
        elif set(tok) == {"%"}:
            out.append(IamToken(tok, "unreadable"))
        else:
            out.append(IamToken(tok))
    return out


@dataclass
class IamForm:
    """An IAM-OnDB original-xml form: ``id`` (Form id), ``writer`` (Form writerID; None if absent) and
    ``lines`` {line id: transcription text, unescaped}; ``corrected_ids`` {TextLine id as written: line id
    used} for lines whose Word ids name another line (see :func:`read_iamondb_original`)."""

    id: Optional[str]
    writer: Optional[str]
    lines: dict
    path: Path
    corrected_ids: dict = field(default_factory=dict)


def _words_line_id(tl: ET.Element) -> Optional[str]:
    ids = Counter()
    for w in tl:
        wid = w.get("id") if local_name(w.tag) == "Word" else None
        if wid and wid.count("-") >= 3:
            ids[wid.rsplit("-", 1)[0]] += 1
    return ids.most_common(1)[0][0] if ids else None


def read_iamondb_original(path: str | os.PathLike, *, max_bytes: Optional[int] = None) -> IamForm:
    """Read an IAM-OnDB original-xml file: ``General/Form(id, writerID)`` and ``Transcription/TextLine(id,
    text)``. Files of original-xml-all without a transcription or writer give an empty ``lines`` / None.

    Texts are unescaped (:func:`unescape_iamondb_text`). A TextLine's id is not always the line its words
    belong to: X-rayLaser/pytorch-handwriting-synthesis-toolkit iam_ondb/_transcriptions.py
    (auto_correct_file_id, checked 2026-11-30) takes the line id most of the line's ``Word`` ids start with
    (word ``a01-000u-01-02`` belongs to line ``a01-000u-01``) over the TextLine's own; so does this reader,
    recording the change in ``corrected_ids``. Parsed by :func:`~inkground_lib.formats.xmlsafe.parse_xml` (no
    DTDs or entities; size limit ``max_bytes`` as in :func:`read_iamondb_strokes`)."""
    path = Path(path)
    root = session_root(path, max_bytes)
    form_id = writer = None
    for gen in (el for el in root if local_name(el.tag) == "General"):
        for form in (el for el in gen if local_name(el.tag) == "Form"):
            form_id = form.get("id")
            writer = form.get("writerID")
    lines, corrected = {}, {}
    for tr in (el for el in root if local_name(el.tag) == "Transcription"):
        for i, tl in enumerate(el for el in tr if local_name(el.tag) == "TextLine"):
            lid, text = tl.get("id"), tl.get("text")
            if lid is None or text is None:
                raise FormatError(f"{path}: <Transcription> <TextLine> #{i}: attribute "
                                  f"{'id' if lid is None else 'text'} is missing")
            by_words = _words_line_id(tl)
            if by_words and by_words != lid:
                corrected[lid] = by_words
                lid = by_words
            if lid in lines:
                raise FormatError(f"{path}: <Transcription> <TextLine> #{i}: line id {lid!r} given twice")
            lines[lid] = unescape_iamondb_text(text)
    return IamForm(form_id, writer, lines, path, corrected)


def _check_size(path: Path, max_bytes: Optional[int], what: str) -> None:
    check_file_size(path, max_bytes, MAX_INK_FILE_BYTES, MAX_INK_FILE_ENV, FormatError, what)


def read_text_file(path: Path, max_bytes: Optional[int], what: str) -> str:
    _check_size(path, max_bytes, what)
    try:
        return path.read_text("latin-1")
    except OSError as e:
        raise FormatError(f"{path}: cannot be read ({e.strerror or e})") from None


def read_iamondb_ascii(path: str | os.PathLike, *, max_bytes: Optional[int] = None) -> dict:
    """Read an IAM-OnDB ascii file: the lines under ``CSR:`` as {``<form>-<k:02d>``: text}, k from 1, texts
    unescaped (:func:`unescape_iamondb_text`). Line k of the CSR part is line k of the form, as public readers
    number them (X-rayLaser/pytorch-handwriting-synthesis-toolkit iam_ondb/_transcriptions.py
    extract_transcription_from_txt_file: ``f'{object_id}-{i + 1:02}'``, checked 2026-11-30).
    At most ``max_bytes`` bytes (as in :func:`read_iamondb_strokes`), checked before reading."""
    path = Path(path)
    raw = read_text_file(path, max_bytes, "an IAM-OnDB ascii file")
    m = re.search(r"^\s*CSR:\s*$", raw, re.MULTILINE)
    if not m:
        raise FormatError(f"{path}: no 'CSR:' section")
    lines = [ln.strip() for ln in raw[m.end():].splitlines() if ln.strip()]
    return {f"{path.stem}-{k + 1:02d}": unescape_iamondb_text(t) for k, t in enumerate(lines)}
