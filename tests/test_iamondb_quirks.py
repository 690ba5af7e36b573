"""IAM-OnDB as distributed (issue 24): a folder read survives every quirk of the distributed set, each handled by
its stated rule and reported; a recorded build from a partial copy with broken files in it goes on and says what
it read and what not. Fixture: tests/fixtures/iamondb_quirks (its README lists the quirks and the rules)."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from inkground_lib.core.dataset import load_dataset
from inkground_lib.datasets.recorded import build_recorded
from inkground_lib.datasets.recorded_iamondb import iamondb_words
from inkground_lib.formats.iamondb import IAM_QUIRKS, read_iamondb, read_iamondb_report
from inkground_lib.formats.iamondb_transcriptions import (
    is_placeholder_transcription,
    read_iamondb_ascii,
    transcription_tokens,
)
from inkground_lib.formats.xmlsafe import FormatError

Q = Path(__file__).resolve().parent / "fixtures" / "iamondb_quirks"
ASCII = Q / "ascii-all/ascii"


@pytest.fixture(scope="module")
def read():
    lines, report = read_iamondb_report(Q)
    return {ln.id: ln for ln in lines}, report


def _quirks(report, kind):
    return [(f, m) for k, f, m in report.quirks if k == kind]


def test_a_broken_or_truncated_file_is_reported_and_the_read_goes_on(read):
    by, report = read
    failed = {Path(f).name: why for f, why in report.files_failed}
    assert set(failed) == {"e05-040-01.xml", "strokes.xml"}
    assert failed["e05-040-01.xml"].startswith("not well-formed XML")
    assert (Q / "original-xml-all/original/e05/e05-040/strokes.xml").stat().st_size == 706
    assert report.files_found == 11 and report.files_read == 10
    # the form's other line is read: writer from forms.txt (its original xml is lost), text from ascii CSR
    ln = by["e05-040-02"]
    assert (ln.writer, ln.writer_source, ln.text) == ("10055", "forms.txt", "ok now")
    assert "e05-040-01" not in by
    # the strict reader stops at the first broken file, naming it
    with pytest.raises(FormatError, match=r"e05-040-01\.xml: not well-formed XML"):
        read_iamondb(Q)


def test_csr_is_the_section_read_and_lines_follow_it_with_mixed_line_endings(read):
    raw = (ASCII / "a08/a08-551/a08-551z.txt").read_bytes()
    assert b"\r\n" in raw and b"o far\n" in raw  # both line endings, as the fixture claims
    assert read_iamondb_ascii(ASCII / "a08/a08-551/a08-551z.txt") == {"a08-551z-01": "we go", "a08-551z-02": "so far"}
    by, _ = read
    # the form's lines are kept as read from CSR (not OCR's "We go") for a caller's own matching rule
    assert by["a08-551z-01"].form_text == (("a08-551z-01", "we go"), ("a08-551z-02", "so far"))
    assert by["a08-551z-01"].form_text_source == "ascii"


def test_more_files_than_lines_are_not_matched_by_number(read):
    by, report = read
    for k in (1, 2, 3):  # OCR: has a third line; CSR: does not; numbers could put a line's text on another's ink
        ln = by[f"a08-551z-0{k}"]
        assert ln.text is None and ln.text_note == "line count" and ln.match is None
    (q,) = _quirks(report, "line count")
    assert q[0].endswith("a08-551z.txt CSR:")
    assert "form a08-551z: 3 lineStrokes file(s), 2 transcription line(s); not matched by number" in q[1]
    assert "a08-551z-03" in q[1]


def test_a_form_id_that_disagrees_with_its_folder_loses_and_the_quirk_names_both(read):
    by, report = read
    ln = by["a01-001w-01"]
    assert (ln.form, ln.writer, ln.writer_source, ln.text) == ("a01-001w", "10050", "original-xml", "one two")
    ((f, m),) = _quirks(report, "form id")
    assert f.endswith("a01-001/strokesw.xml") and "a01-000z" in m and "read as a01-001w" in m


def test_the_placeholder_transcription_makes_the_line_untranscribed(read):
    assert is_placeholder_transcription("Please Enter Transcription here")
    assert not is_placeholder_transcription("please enter the house")
    by, report = read
    assert by["b02-010u-01"].text is None and by["b02-010u-01"].text_note == "placeholder"
    assert len(_quirks(report, "placeholder")) == 1


def test_transcription_marks_follow_the_stated_rules():
    toks = transcription_tokens("a # b %%%% [two words] c [open rest")
    assert [(t.text, t.mark) for t in toks] == [
        ("a", None), ("#", "struck out"), ("b", None), ("%%%%", "unreadable"), ("[two", "bracketed"),
        ("words]", "bracketed"), ("c", None), ("[open", "bracketed"), ("rest", "bracketed")]
    assert [t.target for t in toks] == [True, False, True, False, False, False, True, False, False]
    assert (ASCII / "c03/c03-020/c03-020.txt").read_bytes().count(b"\r\n") >= 8  # the CRLF file


def test_time_running_backwards_keeps_the_file_order_and_is_reported_dots_are_kept(read):
    by, report = read
    ink = by["d04-030v-01"].ink
    assert len(ink) == 4 and [len(s) for s in ink.strokes] == [5, 1, 5, 1]  # the i-dots: one-point strokes
    t = ink[0][:, 2]
    np.testing.assert_allclose(t, [0, 10, 30, 20, 40])  # ms from the line's start, in the file's order
    np.testing.assert_array_equal(ink[0][:, 0] + 966, [1000, 1050, 1100, 1150, 1200])  # whiteboard left edge 966
    assert report.strokes_time_backwards == 1 and report.lines_time_backwards == 1
    assert report.single_point_strokes == 2
    ((f, m),) = _quirks(report, "time backwards")
    assert f.endswith("d04-030v-01.xml") and "1 of 4 strokes" in m


def test_the_strict_reader_warns_every_quirk_by_its_rule(tmp_path):
    root = tmp_path / "copy"
    shutil.copytree(Q, root)
    for f in ("lineStrokes-all/lineStrokes/e05/e05-040/e05-040-01.xml", "original-xml-all/original/e05/e05-040/strokes.xml"):
        (root / f).unlink()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        lines = read_iamondb(root)
    msgs = [str(r.message) for r in rec]
    assert len(lines) == 10
    for kind in ("form id", "line count", "placeholder", "time backwards"):
        assert kind in IAM_QUIRKS
    assert any("a01-000z" in m for m in msgs) and any("a08-551z" in m for m in msgs)
    assert any("placeholder" in m for m in msgs) and any("run backwards" in m for m in msgs)


def test_words_and_the_lines_skipped_by_reason():
    words, counts = iamondb_words(Q)
    assert [(w.id, w.text) for w in words] == [
        ("a01-001w-01-00", "one"), ("a01-001w-01-01", "two"), ("c03-020-01-00", "we"), ("c03-020-01-02", "it"),
        ("c03-020-03-00", "go"), ("c03-020-03-02", "now"), ("d04-030v-01-00", "in"), ("d04-030v-01-01", "it"),
        ("e05-040-02-00", "ok"), ("e05-040-02-01", "now")]
    assert len(words[7].ink) == 2  # "it" with its dot
    assert counts["lines"] == 10 and counts["lines_segmented"] == counts["lines_kept"] == 5
    # a08-551z: 3 files, 2 lines: no way of pairing them by length is clearly best, so no line of it is used
    assert counts["lines_skipped"] == {
        "form's lines not matched (files and transcription lines differ in number)": 3,
        "placeholder transcription": 1, "unreadable transcription (only '%' marks)": 1}
    assert counts["words_not_targets"] == {"bracketed": 1, "struck out": 1}
    assert counts["files_failed"] == 2 and counts["quirks"] == {"form id": 1, "line count": 1, "placeholder": 1,
                                                                "time backwards": 1}


def test_recorded_pages_from_a_partial_copy_with_broken_files(tmp_path):
    out = build_recorded(tmp_path / "iam", iamondb=Q, words_per_page=(2, 4), progress=False)
    ds = load_dataset(out)
    (src,) = ds.meta["sources"]
    assert src["kind"] == "iamondb" and src["files_failed"] == 2 and src["words"] == 10
    assert sorted(Path(f).name for f, _ in src["failed_files"]) == ["e05-040-01.xml", "strokes.xml"]
    assert src["lines_skipped"]["placeholder transcription"] == 1
    assert sorted(p.writer for p in ds.pages) == ["10050", "10053", "10054", "10055"]
    assert {w.text for p in ds.pages for w in p.words} >= {"one", "it", "now"}
    assert "#" not in {w.text for p in ds.pages for w in p.words}
