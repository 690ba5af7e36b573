"""IAM-OnDB as the release lays it out: writers from original-xml, forms.txt and writers.xml, unescaped
transcriptions, the WhiteboardDescription, the task's split files (fixture: tests/fixtures/iamondb_release,
whose files cite the public sources of their layout)."""

from __future__ import annotations

import doctest
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

from inkground_lib.formats import iamondb_transcriptions
from inkground_lib.formats.iamondb import (
    IAMONDB_SPLITS,
    iamondb_split_ids,
    read_iamondb,
    read_iamondb_forms,
    read_iamondb_task,
    read_iamondb_writers,
)
from inkground_lib.formats.iamondb_strokes import read_iamondb_strokes, read_iamondb_whiteboard
from inkground_lib.formats.iamondb_transcriptions import (
    read_iamondb_ascii,
    read_iamondb_original,
    unescape_iamondb_text,
)
from inkground_lib.formats.xmlsafe import FormatError

REL = Path(__file__).resolve().parent / "fixtures" / "iamondb_release"
LINE = REL / "lineStrokes-all/lineStrokes/a01/a01-000/a01-000u-01.xml"
PART = REL / "original-xml-part/original/a01/a01-000/strokesu.xml"


@pytest.fixture
def rel(tmp_path) -> Path:
    root = tmp_path / "IAM-OnDB"
    shutil.copytree(REL, root)
    return root


def _quiet_read(root, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the fixture itself is consistent: any warning fails the test
        return read_iamondb(root, **kw)


# ------------------------------------------------------------------------------------------ writers

def test_every_form_gets_its_writer_from_original_xml_or_forms_txt():
    """Download page: original-xml-part holds "the writer-ids"; original-xml-all's other forms come "without
    the transcription and the writer-id. For that, see data/forms.txt, which contains the mapping of all forms
    to the writers"; writers.xml "Contains the information of all writers"."""
    lines = _quiet_read(REL)
    got = {ln.id: (ln.form, ln.writer, ln.writer_source) for ln in lines}
    assert got == {
        "a01-000u-01": ("a01-000u", "10039", "original-xml"),
        "a01-000u-02": ("a01-000u", "10039", "original-xml"),
        "a01-001w-01": ("a01-001w", "10040", "forms.txt"),  # original-xml-all has the form, without writerID
        "a01-003-01": ("a01-003", "10041", "forms.txt"),  # a form id without letter
        "a02-000z-01": ("a02-000z", "10042", "forms.txt"),
    }
    by = {ln.id: ln for ln in lines}
    assert by["a01-001w-01"].writer_info["NativeLanguage"] == "German"
    assert by["a01-000u-01"].writer_info["WritingType"] == "Right-handed"


def test_without_forms_txt_the_forms_outside_original_xml_part_have_no_writer(rel):
    (rel / "forms.txt").unlink()
    by = {ln.id: ln for ln in _quiet_read(rel)}
    assert by["a01-000u-01"].writer == "10039"
    assert by["a01-001w-01"].writer is None and by["a01-001w-01"].writer_source is None
    assert by["a01-001w-01"].writer_info == {}


def test_forms_txt_reader_and_its_errors(tmp_path):
    """DiffInk's writer_map: blank and '#' lines skipped, fields[0] the form, fields[1] the writer."""
    assert read_iamondb_forms(REL / "forms.txt") == {"a01-000u": "10039", "a01-001w": "10040",
                                                     "a01-003": "10041", "a02-000z": "10042"}
    p = tmp_path / "forms.txt"
    p.write_text("# header\n\na01-000u 00012 extra\n", "latin-1")
    assert read_iamondb_forms(p) == {"a01-000u": "00012"}  # leading zeros kept, further fields ignored
    p.write_text("a01-000u 10039\na01-000u\n", "latin-1")
    with pytest.raises(FormatError, match=r"forms\.txt: line 2: expected '<form id> <writer id>'"):
        read_iamondb_forms(p)
    p.write_text("a01-000u 10039\na01-000u 10040\n", "latin-1")
    with pytest.raises(FormatError, match=r"forms\.txt: line 2: form a01-000u listed again with writer 10040"):
        read_iamondb_forms(p)
    p.write_text("10039 a01-000u\n", "latin-1")
    with pytest.raises(FormatError, match=r"line 1: form id '10039' is not of the form"):
        read_iamondb_forms(p)


def test_writers_xml_reader_and_its_errors(tmp_path):
    """X-rayLaser iam_ondb/_writers.py and DiffInk: the root's Writer elements, writer id = attribute name."""
    w = read_iamondb_writers(REL / "writers.xml")
    assert sorted(w) == ["10039", "10040", "10041", "10042"] and w["10041"]["NativeLanguage"] == "French"
    p = tmp_path / "writers.xml"
    p.write_text('<Writers><Writer name="1"><Note>a</Note><Note>b</Note></Writer></Writers>', "utf-8")
    assert read_iamondb_writers(p) == {"1": {"name": "1", "Note": ["a", "b"]}}
    p.write_text('<Writers><Writer name="1"/><Writer Gender="Male"/></Writers>', "utf-8")
    with pytest.raises(FormatError, match=r"writers\.xml: <Writer> #1: attribute name is missing"):
        read_iamondb_writers(p)
    p.write_text('<Writers><Writer name="1"/><Writer name="1"/></Writers>', "utf-8")
    with pytest.raises(FormatError, match=r"<Writer> #1: writer '1' given twice"):
        read_iamondb_writers(p)


def test_disagreeing_writer_sources_and_unknown_writers_are_named(rel):
    (rel / "forms.txt").write_text("a01-000u 20000\na01-001w 10040\na01-003 10041\na02-000z 99999\n", "latin-1")
    with pytest.warns(UserWarning) as rec:
        by = {ln.id: ln for ln in read_iamondb(rel)}
    msgs = [str(r.message) for r in rec]
    assert any("a01-000u: writer 10039 in" in m and "strokesu.xml <Form writerID>, 20000 in" in m
               and "forms.txt" in m for m in msgs)
    assert any("writers.xml: 1 writer id(s) of the forms are not in it: 99999 (form a02-000z)" in m for m in msgs)
    assert by["a01-000u-01"].writer == "10039"  # the original xml wins
    assert by["a02-000z-01"].writer == "99999" and by["a02-000z-01"].writer_info == {}


# ------------------------------------------------------------------------------------------ transcriptions

def test_transcriptions_are_unescaped_in_original_xml_and_ascii():
    """X-rayLaser's clean_text "Substitutes special text codes for a character with an actual character":
    '&apos;' and '&quot;' stay in the texts of both sources."""
    by = {ln.id: ln.text for ln in _quiet_read(REL)}
    assert by["a01-000u-01"] == 'he said "go"'  # original xml: text="he said &amp;quot;go&amp;quot;"
    assert by["a01-000u-02"] == "it's time"
    assert by["a01-001w-01"] == "it's \"late\""  # ascii CSR: it&apos;s &quot;late&quot;
    assert by["a01-003-01"] == "to & fro"
    asc = read_iamondb_ascii(REL / "ascii-all/ascii/a01/a01-000/a01-000u.txt")
    assert asc == {"a01-000u-01": 'he said "go" (ascii)', "a01-000u-02": "it's time (ascii)"}
    # one pass: an escaped entity stays an entity; unknown ones are kept as written
    assert unescape_iamondb_text("&amp;quot; &nbsp; &#x41;&#66;") == "&quot; &nbsp; AB"
    res = doctest.testmod(iamondb_transcriptions, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0 and res.attempted >= 1


def test_textline_id_follows_its_word_ids():
    """X-rayLaser iam_ondb/_transcriptions.py auto_correct_file_id: the line id most Word ids name wins over
    the TextLine's id."""
    form = read_iamondb_original(PART)
    assert form.id == "a01-000u" and form.writer == "10039"
    assert form.lines == {"a01-000u-01": 'he said "go"', "a01-000u-02": "it's time"}
    assert form.corrected_ids == {"a01-000u-03": "a01-000u-02"}


# ------------------------------------------------------------------------------------------ whiteboard

def test_whiteboard_description_is_checked_and_applied():
    """The published a01-000u-01.xml: SensorLocation corner="top_left", DiagonallyOppositeCoords x="6512"
    y="1376", VerticallyOppositeCoords x="966" y="1376", HorizontallyOppositeCoords x="6512" y="787": the board's
    top-left corner is (966, 787), its size 5546 x 589."""
    wb = read_iamondb_whiteboard(LINE)
    assert wb.corner == "top_left" and wb.origin == (966, 787) and wb.size == (5546, 589)
    raw = read_iamondb_strokes(LINE, whiteboard="check")
    same = read_iamondb_strokes(LINE, whiteboard="ignore")
    norm = read_iamondb_strokes(LINE)  # default: normalise
    np.testing.assert_array_equal(raw[0][0], [1000, 1100, 0])
    assert all(np.array_equal(a, b) for a, b in zip(raw.strokes, same.strokes))
    for r, n in zip(raw.strokes, norm.strokes):
        np.testing.assert_array_equal(n[:, :2], r[:, :2] - [966, 787])
        np.testing.assert_array_equal(n[:, 2], r[:, 2])
    line = _quiet_read(REL)[0]
    assert line.whiteboard == wb and np.array_equal(line.ink[0], norm[0])
    assert read_iamondb(REL, whiteboard="check")[0].ink[0][0, 0] == 1000
    with pytest.raises(ValueError, match="whiteboard must be one of"):
        read_iamondb_strokes(LINE, whiteboard="flip")


@pytest.mark.parametrize("old, new, message", [
    ('<SensorLocation corner="top_left"/>', '<SensorLocation corner="bottom_right"/>',
     r"<WhiteboardDescription> <SensorLocation>: attribute corner='bottom_right' is not understood"),
    ('<SensorLocation corner="top_left"/>', '<SensorLocation/>',
     r"<WhiteboardDescription> <SensorLocation>: attribute corner is missing"),
    ('<VerticallyOppositeCoords x="966" y="1376"/>', '',
     r"<WhiteboardDescription>: no <VerticallyOppositeCoords> element"),
    ('<DiagonallyOppositeCoords x="6512" y="1376"/>', '<DiagonallyOppositeCoords y="1376"/>',
     r"<WhiteboardDescription> <DiagonallyOppositeCoords>: attribute x is missing"),
    ('<HorizontallyOppositeCoords x="6512" y="787"/>', '<HorizontallyOppositeCoords x="6512" y="1500"/>',
     r"<WhiteboardDescription> <VerticallyOppositeCoords>: y=1376 is not below <HorizontallyOppositeCoords> y=1500"),
    ('<VerticallyOppositeCoords x="966" y="1376"/>', '<VerticallyOppositeCoords x="7000" y="1376"/>',
     r"<WhiteboardDescription> <DiagonallyOppositeCoords>: x=6512 is not right of <VerticallyOppositeCoords> x=7000"),
])
def test_a_whiteboard_description_that_breaks_the_check_is_refused(tmp_path, old, new, message):
    p = tmp_path / "a01-000u-01.xml"
    text = LINE.read_text("latin-1")
    body = text.index("<WhiteboardCaptureSession>")  # after the header comment, which quotes the elements
    assert old in text[body:]
    p.write_text(text[:body] + text[body:].replace(old, new, 1), "latin-1")
    with pytest.raises(FormatError, match=r"a01-000u-01\.xml: " + message):
        read_iamondb_strokes(p)
    with pytest.raises(FormatError, match=message):
        read_iamondb_strokes(p, whiteboard="check")
    assert len(read_iamondb_strokes(p, whiteboard="ignore")) == 3  # ignoring it reads the strokes


# ------------------------------------------------------------------------------------------ splits

def test_task_split_files_select_their_forms():
    """Download page: "divided into 4 parts"; jan-auer/rnnlib-iam: " a01-020x", " d04-081" (a leading space,
    forms with and without a letter)."""
    assert IAMONDB_SPLITS == ("trainset", "testset_v", "testset_t", "testset_f")
    assert (REL / "task1/trainset.txt").read_text("latin-1") == " a01-000u\n"
    want = {"trainset": ["a01-000u-01", "a01-000u-02"], "testset_v": ["a01-001w-01"],
            "testset_t": ["a01-003-01"], "testset_f": ["a02-000z-01"]}
    for split, ids in want.items():
        assert [ln.id for ln in _quiet_read(REL, split=split)] == ids
    assert read_iamondb_task(REL) == {"trainset": {"a01-000u"}, "testset_v": {"a01-001w"},
                                      "testset_t": {"a01-003"}, "testset_f": {"a02-000z"}}


def test_split_entries_match_form_ids_exactly_and_bad_entries_are_named(rel):
    # a form a01-003u next to a01-003: the entry a01-003 keeps only a01-003
    src = rel / "lineStrokes-all/lineStrokes/a01/a01-003/a01-003-01.xml"
    shutil.copy(src, src.with_name("a01-003u-01.xml"))
    assert [ln.id for ln in _quiet_read(rel, split="testset_t")] == ["a01-003-01"]
    (rel / "task1/testset_t.txt").write_text(" a01-003u-01\n", "latin-1")  # a line id
    assert [ln.id for ln in _quiet_read(rel, split="testset_t")] == ["a01-003u-01"]
    (rel / "task1/testset_t.txt").write_text(" a01-003\n\n a01-003.xml\n", "latin-1")
    with pytest.raises(FormatError, match=r"testset_t\.txt: line 3: 'a01-003\.xml' is no form id"):
        iamondb_split_ids(rel, "testset_t")
    (rel / "task1/testset_t.txt").write_text(" a01-000u\n", "latin-1")
    with pytest.raises(FormatError, match=r"testset_t\.txt: a01-000u is also listed in .*trainset\.txt"):
        read_iamondb_task(rel)
    with pytest.raises(FormatError, match="split 'nosuch'"):
        read_iamondb(rel, split="nosuch")
