"""InkML read/write, IAM-OnDB reading and word segmentation, UNIPEN-derived JSON reading."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from inkground_lib.core.ink import Ink, as_ink
from inkground_lib.datasets.segmentation import core_band, segment_line_words
from inkground_lib.formats.iamondb import read_iamondb
from inkground_lib.formats.iamondb_strokes import read_iamondb_strokes
from inkground_lib.formats.iamondb_transcriptions import read_iamondb_ascii, read_iamondb_original
from inkground_lib.formats.inkml import read_inkml
from inkground_lib.formats.inkml_write import write_inkml
from inkground_lib.formats.unipen import read_unipen_json
from inkground_lib.formats.xmlsafe import FormatError

FIXTURES = Path(__file__).resolve().parent / "fixtures"
IAM = FIXTURES / "iamondb"
UNIPEN_DIR = Path(__file__).resolve().parents[1] / "data/unipen_cursive"
UNIPEN = UNIPEN_DIR / "unipen_cursive_dev.json"


def _random_ink(rng, n_strokes=3, t="all") -> Ink:
    strokes, t0 = [], 0.0
    for _ in range(n_strokes):
        n = int(rng.integers(1, 30))
        xy = rng.normal(0, 300, size=(n, 2))
        tt = t0 + np.cumsum(rng.uniform(5, 15, size=n))
        t0 = tt[-1] + 50
        if t == "none":
            tt = np.full(n, np.nan)
        elif t == "some":
            tt[rng.random(n) < 0.5] = np.nan
        strokes.append(np.column_stack([xy, tt]))
    return as_ink(strokes)


def _assert_close_ink(got: Ink, want: Ink, decimals: int):
    assert len(got) == len(want)
    tol = 0.5 * 10 ** -decimals + 1e-9
    for a, b in zip(got.strokes, want.strokes):
        assert a.shape == b.shape
        np.testing.assert_array_equal(np.isnan(a[:, 2]), np.isnan(b[:, 2]))
        fin = ~np.isnan(b)
        np.testing.assert_allclose(a[fin], b[fin], rtol=0, atol=tol)


# ============================================================================================ InkML

@pytest.mark.parametrize("tmode", ["all", "none", "some"])
@pytest.mark.parametrize("decimals", [0, 2, 4])
def test_inkml_round_trip(tmp_path, tmode, decimals):
    rng = np.random.default_rng(7)
    items = [(f"w{i}", text, _random_ink(rng, int(rng.integers(1, 5)), tmode))
             for i, text in enumerate(["Dear", "café", 'a<b&"c"'])]
    p = write_inkml(tmp_path / "words.inkml", items, decimals=decimals)
    groups = read_inkml(p)
    assert [(g.id, g.text) for g in groups] == [(i, t) for i, t, _ in items]
    for g, (_, _, ink) in zip(groups, items):
        _assert_close_ink(g.ink, ink, decimals)
    text = p.read_text("utf-8")
    assert ('name="T"' in text) == (tmode != "none")
    assert ("intermittentChannels" in text) == (tmode == "some")


def test_inkml_round_trip_is_exact_at_written_precision(tmp_path):
    ink = as_ink([[[1.25, 2.5, 0.0], [3.0, -4.75, 10.0]], [[100.0, 200.0, 30.5]]])
    p = write_inkml(tmp_path / "a.inkml", {"only": ink})
    (g,) = read_inkml(p)
    assert g.id == "only" and g.text is None
    assert g.ink == ink


def test_inkml_write_rejects_bad_items(tmp_path):
    ink = as_ink([[[0, 0], [1, 1]]])
    with pytest.raises(ValueError, match="duplicate id 'a'"):
        write_inkml(tmp_path / "x.inkml", [("a", None, ink), ("a", None, ink)])
    with pytest.raises(ValueError, match="item 0"):
        write_inkml(tmp_path / "x.inkml", [("a", ink)])


CROHME_LIKE = """<?xml version="1.0" encoding="UTF-8"?>
<ink xmlns="http://www.w3.org/2003/InkML">
<traceFormat>
<channel name="X" type="decimal"/>
<channel name="Y" type="decimal"/>
</traceFormat>
<annotation type="writer">w123</annotation>
<annotation type="truth">$a+b$</annotation>
<trace id="0">
10 20, 11 21, 12 23
</trace>
<trace id="1">
30 20,31 25
</trace>
<trace id="2">40 40</trace>
<traceGroup xml:id="7">
  <annotation type="truth">Segmentation</annotation>
  <traceGroup xml:id="8">
    <annotation type="truth">a</annotation>
    <traceView traceDataRef="0"/>
  </traceGroup>
  <traceGroup xml:id="9">
    <annotation type="truth">+</annotation>
    <traceView traceDataRef="1"/>
    <traceView traceDataRef="2"/>
  </traceGroup>
</traceGroup>
</ink>
"""

# no namespace, no traceFormat in the document's scope for the first trace (X Y default), a context with
# T in seconds, difference-encoded values, '?' and '*' wildcards
FOREIGN = """<ink>
  <definitions>
    <traceFormat xml:id="xyt">
      <channel name="X" type="integer"/>
      <channel name="Y" type="integer"/>
      <channel name="T" type="decimal" units="s"/>
    </traceFormat>
    <context xml:id="withT" traceFormatRef="#xyt"/>
  </definitions>
  <trace>5 5, 6 6</trace>
  <trace contextRef="#withT">100 200 1.5, '1 '-1 '0.01, 1 -1 .01, !50 * ?</trace>
  <traceGroup>
    <annotation type="truth">word</annotation>
    <trace>1 2, 3 4</trace>
  </traceGroup>
</ink>
"""


def test_inkml_reads_crohme_style_trace_views(tmp_path):
    p = tmp_path / "crohme.inkml"
    p.write_text(CROHME_LIKE, "utf-8")
    groups = read_inkml(p)
    # every trace is referenced by a group: no bare group; the outer group (no traces of its own) holds its
    # nested groups' traces and keeps its annotation; the nested groups point at it
    assert [(g.id, g.text, g.parent, g.depth) for g in groups] == [
        ("7", "Segmentation", None, 0), ("8", "a", 0, 1), ("9", "+", 0, 1)]
    assert len(groups[0].ink) == 3
    np.testing.assert_array_equal(groups[1].ink[0][:, :2], [[10, 20], [11, 21], [12, 23]])
    assert len(groups[2].ink) == 2 and groups[2].ink[1].shape == (1, 3)
    assert np.isnan(groups[1].ink[0][:, 2]).all()  # no T channel -> t unknown


def test_inkml_reads_foreign_encodings(tmp_path):
    p = tmp_path / "foreign.inkml"
    p.write_text(FOREIGN, "utf-8")
    groups = read_inkml(p)
    bare, word = groups
    assert bare.id is None and word.text == "word"
    # first bare trace: the default X Y (the traceFormat in <definitions> applies only through contextRef)
    np.testing.assert_array_equal(bare.ink[0][:, :2], [[5, 5], [6, 6]])
    assert np.isnan(bare.ink[0][:, 2]).all()
    s = bare.ink[1]
    # 100 200 1.5 s; first differences (the prefix sticks to each channel) twice; explicit X=50, Y repeated (*),
    # T unknown (?)
    np.testing.assert_allclose(s[:, 0], [100, 101, 102, 50])
    np.testing.assert_allclose(s[:, 1], [200, 199, 198, 198])
    np.testing.assert_allclose(s[:3, 2], [1500, 1510, 1520])
    assert math.isnan(s[3, 2])
    np.testing.assert_array_equal(word.ink[0][:, :2], [[1, 2], [3, 4]])


def test_inkml_errors_name_file_and_element(tmp_path):
    p = tmp_path / "bad.inkml"
    p.write_text('<ink xmlns="http://www.w3.org/2003/InkML"><traceFormat><channel name="X"/>'
                 '<channel name="Y"/></traceFormat><traceGroup xml:id="g"><trace xml:id="t7">1 2, 3 4 5 6'
                 '</trace></traceGroup></ink>', "utf-8")
    with pytest.raises(FormatError) as e:
        read_inkml(p)
    msg = str(e.value)
    assert "bad.inkml" in msg and 'trace id="t7"' in msg and "point 1" in msg
    p.write_text("<ink><trace>1 2, x 4</trace></ink>", "utf-8")
    with pytest.raises(FormatError, match=r"bad\.inkml: <trace> #0: point 1: cannot read value 'x 4'"):
        read_inkml(p)
    p.write_text("<ink><trace>1 2</trace>", "utf-8")
    with pytest.raises(FormatError, match="not well-formed"):
        read_inkml(p)
    p.write_text("<svg/>", "utf-8")
    with pytest.raises(FormatError, match="expected <ink>"):
        read_inkml(p)
    p.write_text('<ink><traceGroup><traceView traceDataRef="#nope"/></traceGroup></ink>', "utf-8")
    with pytest.raises(FormatError, match="traceDataRef 'nope' names no trace"):
        read_inkml(p)


def test_xml_with_doctype_or_entities_is_refused(tmp_path):
    bomb = ('<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>\n'
            "<ink><annotation type='truth'>&lol2;</annotation><trace>1 2</trace></ink>")
    p = tmp_path / "bomb.inkml"
    p.write_text(bomb, "utf-8")
    with pytest.raises(FormatError, match=r"bomb\.inkml: refused"):
        read_inkml(p)
    q = tmp_path / "bomb16.xml"
    q.write_bytes(("\ufeff" + bomb.replace('<?xml version="1.0"?>\n', "")).encode("utf-16-le"))
    with pytest.raises(FormatError, match="refused"):
        read_iamondb_strokes(q)


# ============================================================================================ IAM-OnDB

def test_iamondb_reads_lines_writers_and_texts():
    lines = read_iamondb(IAM)
    assert [ln.id for ln in lines] == ["a01-000u-01", "a01-000u-02", "a01-001w-01"]
    by = {ln.id: ln for ln in lines}
    assert by["a01-000u-01"].writer == "10039" and by["a01-000u-01"].form == "a01-000u"
    # the original-xml transcription wins over ascii; ascii is the fallback
    assert by["a01-000u-01"].text == "we did it"
    assert by["a01-001w-01"].text == "hello there" and by["a01-001w-01"].writer is None
    ink = by["a01-000u-01"].ink
    assert len(ink) == 5
    first = ink[0]
    # whiteboard units, shifted so the board's top-left corner (VerticallyOppositeCoords x=966,
    # HorizontallyOppositeCoords y=787 in the fixture) is (0, 0); the file has x=1000, y=1180
    np.testing.assert_array_equal(first[0, :2], [1000 - 966, 1180 - 787])
    raw = read_iamondb(IAM, whiteboard="check")[0].ink[0]
    np.testing.assert_array_equal(raw[0, :2], [1000, 1180])
    assert first[0, 2] == 0.0 and first[1, 2] == pytest.approx(10.0)  # seconds -> ms from the first point
    t = np.concatenate([s[:, 2] for s in ink])
    assert np.all(np.diff(t) > 0)


def test_iamondb_split_files():
    assert [ln.id for ln in read_iamondb(IAM, split="trainset")] == ["a01-000u-01", "a01-000u-02"]
    assert [ln.id for ln in read_iamondb(IAM, split="testset_v")] == ["a01-001w-01"]
    with pytest.raises(FormatError, match="split 'testset_f'"):
        read_iamondb(IAM, split="testset_f")


def test_iamondb_original_and_ascii_readers():
    form = read_iamondb_original(IAM / "original-xml-part/original/a01/a01-000/strokesu.xml")
    assert form.id == "a01-000u" and form.writer == "10039"
    assert form.lines == {"a01-000u-01": "we did it", "a01-000u-02": "one more line"}
    asc = read_iamondb_ascii(IAM / "ascii-all/ascii/a01/a01-000/a01-000u.txt")
    assert asc == {"a01-000u-01": "we did it (ascii)", "a01-000u-02": "one more line (ascii)"}


def test_iamondb_word_segmentation_on_fixtures():
    by = {ln.id: ln for ln in read_iamondb(IAM)}
    words = segment_line_words(by["a01-000u-01"].ink, 3)
    assert words is not None and [len(w) for w in words] == [1, 2, 2]
    # the dot of "did" was written last, after "it": it joins "did" (it lies over it), in writing order
    did = words[1]
    assert did[1].shape[0] == 2 and 1400 - 966 <= did[1][0, 0] <= 1700 - 966  # file x 1400..1700
    assert words[1][0][0, 2] < words[2][0][0, 2] < words[1][1][0, 2]
    # word boxes are left to right and disjoint
    boxes = [w.bbox() for w in words]
    assert all(a[2] < b[0] for a, b in zip(boxes, boxes[1:]))
    # every stroke lands in exactly one word
    assert sum(len(w) for w in words) == len(by["a01-000u-01"].ink)
    # "more" and "line" touch: 2 clusters for 3 words -> the line is rejected, never forced
    assert segment_line_words(by["a01-000u-02"].ink, 3) is None
    assert segment_line_words(by["a01-000u-02"].ink, 2) is not None
    assert segment_line_words(by["a01-001w-01"].ink, 2) is not None
    assert segment_line_words(by["a01-001w-01"].ink, 1) is None


def test_core_band_of_a_line():
    by = {ln.id: ln for ln in read_iamondb(IAM)}
    top, bottom = core_band(by["a01-001w-01"].ink)
    # the squiggles span file y 1180..1300 (core 120 units; the board's top y=787 is 0 here): the band sits
    # inside, near the baseline
    assert 1180 - 787 <= top < bottom <= 1300 - 787 and 60 < bottom - top < 120


def test_iamondb_errors_name_file_and_element(tmp_path):
    root = tmp_path / "iam"
    shutil.copytree(IAM, root)
    f = root / "lineStrokes-all/lineStrokes/a01/a01-000/a01-000u-02.xml"
    text = f.read_text("latin-1")
    f.write_text(text.replace('<Point x="1021" y="1188"', '<Point x="1021"', 1), "latin-1")
    with pytest.raises(FormatError) as e:
        read_iamondb(root)
    assert "a01-000u-02.xml" in str(e.value) and "<Stroke> #0 <Point> #1" in str(e.value)
    assert "attribute y is missing" in str(e.value)
    f.write_text("<Other/>", "latin-1")
    with pytest.raises(FormatError, match="expected <WhiteboardCaptureSession>"):
        read_iamondb_strokes(f)
    with pytest.raises(FormatError, match="no lineStrokes"):
        read_iamondb(tmp_path)


# ============================================================================================ UNIPEN JSON

def _small_unipen(path: Path, **overrides) -> Path:
    samples = [
        {"id": "s-a-00", "writer_id": "wa", "contributor": "x", "text": "the", "style": "CURSIVE",
         "points_per_second": 100.0, "points_per_inch": "1000",
         "strokes": [[[0, 5, 0.0], [10, 0, 10.0], [20, 8, 20.0]], [[25, 3, 30.0]]]},
        {"id": "s-b-00", "writer_id": "wb", "contributor": "y", "text": "and", "style": "CURSIVE",
         "points_per_second": 200.0, "points_per_inch": None,
         "strokes": [[[0, 0, 0.0], [3, 4, 5.0]]]},
    ]
    samples[0].update(overrides)
    path.write_text(json.dumps({"meta": {"name": "tiny"}, "samples": samples}), "utf-8")
    return path


def test_unipen_small_file(tmp_path):
    words = read_unipen_json(_small_unipen(tmp_path / "u.json"))
    assert [(w.id, w.writer, w.text) for w in words] == [("s-a-00", "wa", "the"), ("s-b-00", "wb", "and")]
    np.testing.assert_array_equal(words[0].ink[0], [[0, 5, 0], [10, 0, 10], [20, 8, 20]])
    assert len(words[0].ink) == 2
    assert words[0].meta["points_per_inch"] == "1000" and words[1].meta["contributor"] == "y"
    assert words[0].meta["file"].endswith("u.json")


def test_unipen_bad_inputs_name_sample_and_field(tmp_path):
    p = tmp_path / "broken.json"
    p.write_text('{"meta": {}, "samples": [', "utf-8")
    with pytest.raises(FormatError, match=r"broken\.json: not valid JSON"):
        read_unipen_json(p)
    d = json.loads(_small_unipen(tmp_path / "m.json").read_text())
    del d["samples"][1]["text"]
    p.write_text(json.dumps(d), "utf-8")
    with pytest.raises(FormatError, match=r"sample s-b-00: field text: missing"):
        read_unipen_json(p)
    p = _small_unipen(tmp_path / "nan.json", strokes=[[[0, 0, 0.0], [1, float("nan"), 1.0]]])
    assert "NaN" in p.read_text()  # json.dumps writes the non-standard NaN literal
    with pytest.raises(FormatError, match=r"sample s-a-00: field strokes\[0\]\[1\]: y is nan"):
        read_unipen_json(p)
    p = _small_unipen(tmp_path / "str.json", strokes=[[[0, "1", 0.0]]])
    with pytest.raises(FormatError, match=r"sample s-a-00: field strokes\[0\]\[0\]: y must be a number"):
        read_unipen_json(p)
    p = _small_unipen(tmp_path / "empty.json", strokes=[])
    with pytest.raises(FormatError, match=r"sample s-a-00: field strokes: expected a non-empty list"):
        read_unipen_json(p)
    p = _small_unipen(tmp_path / "dup.json", id="s-b-00")
    with pytest.raises(FormatError, match="sample s-b-00: field id: duplicate"):
        read_unipen_json(p)
    p.write_text('{"meta": {}}', "utf-8")
    with pytest.raises(FormatError, match="field samples: missing"):
        read_unipen_json(p)
    with pytest.raises(FormatError, match="cannot be read"):
        read_unipen_json(tmp_path / "absent.json")


def test_unipen_shipped_file():
    words = read_unipen_json(UNIPEN)
    assert len(words) == 286 and len({w.writer for w in words}) == 36
    for w in words:
        pts = w.ink.points()
        assert np.isfinite(pts).all() and len(w.text) >= 3 and w.text.isalpha()
        for s in w.ink.strokes:
            assert np.all(np.diff(s[:, 2]) > 0)  # synthesised sample times, ms
    # the file's convention: x and y shifted to start at 0, y down
    mins = np.array([w.ink.points().min(axis=0) for w in words])
    assert (mins == 0).all()


def test_unipen_round_trips_through_inkml(tmp_path):
    words = read_unipen_json(UNIPEN)[:20]
    p = write_inkml(tmp_path / "u.inkml", [(w.id, w.text, w.ink) for w in words])
    back = read_inkml(p)
    assert [g.text for g in back] == [w.text for w in words]
    assert all(g.ink == w.ink for g, w in zip(back, words))  # integer units, times to 2 decimals: exact
