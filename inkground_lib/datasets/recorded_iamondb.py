"""Recorded words cut out of IAM-OnDB lines (:func:`iamondb_words`), each line's outcome reported, and the digest of
the release folders read (:func:`iamondb_tree_sha256`)."""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

from inkground_lib.core.files import sha256_file
from inkground_lib.datasets.segmentation import cut_line, is_punctuation, match_lines_by_length
from inkground_lib.formats.iamondb import read_iamondb_report
from inkground_lib.formats.iamondb_transcriptions import transcription_tokens
from inkground_lib.formats.unipen import RecordedWord


_IAM_DIRS = ("lineStrokes-all", "lineStrokes", "original-xml-part", "original-xml-all", "original",
             "ascii-all", "ascii")


def iamondb_tree_sha256(root: Path, extra: Sequence[Path] = ()) -> tuple[str, int]:
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
    (:func:`~inkground_lib.formats.iamondb_transcriptions.transcription_tokens`: struck-out, unreadable and
    bracketed words count, as they are ink on the line; a full stop or comma written close to its word is taken back from the
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
        no_target = _no_target(tokens)
        if no_target:
            skip(no_target)
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
        words += _line_words(ln, tokens, parts, marked)
    return words, {"lines": len(lines), "lines_with_text": with_text, "lines_segmented": ok, "lines_kept": ok,
                   "lines_matched_by_length": sum(r["match"] == "length" for r in rows),
                   "lines_skipped": dict(sorted(skipped.items())), "words_not_targets": dict(sorted(marked.items())),
                   **report.as_meta(), "line_report": rows}


def _no_target(tokens) -> str | None:
    """Why a line whose transcription gives ``tokens`` has no word to cut for (empty, only unreadable '%'
    marks, every word marked), or None when it has a plain word."""
    if not tokens:
        return "empty transcription"
    if all(t.mark == "unreadable" for t in tokens):
        return "unreadable transcription (only '%' marks)"
    if not any(t.target for t in tokens):
        return "no plain word (every word marked)"
    return None


def _line_words(ln, tokens, parts, marked: Counter) -> list[RecordedWord]:
    """The target words of a cut line ``ln``: each plain token with its piece of ink (``parts``, in the
    line's order; whiteboard units), id ``<line id>-<k:02d>``, writer the line's (else its form's). Marked
    and punctuation tokens are counted in ``marked`` by mark instead."""
    writer = ln.writer or f"iamondb-form-{ln.form}"
    words = []
    for k, (tok, ink) in enumerate(zip(tokens, parts)):
        if not tok.target or is_punctuation(tok.text):
            marked[tok.mark or "punctuation"] += 1
            continue
        words.append(RecordedWord(f"{ln.id}-{k:02d}", writer, tok.text, ink,
                                  {"source": "iamondb", "line": ln.id, "file": str(ln.path)}))
    return words
