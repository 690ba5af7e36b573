"""InkML as real producers write it (issue 24): Office / OneNote / Journal exports, ImadocSen-OnDB, InkSight's
published derenderings; every tolerated deviation is a warning naming file and element, every file in a dialect
that is not read fails naming the file and the reason.

Fixtures: tests/fixtures/inkml/{office_word,onenote_journal,imadocsen_words,imadocsen_undefined_context,
inksight_word,inksight_blank,inksight_bare}.inkml, hand-made from the formats' documentation (sources and the
points each trace stands for in their header comments). Each test compares the traces with an independent reading:
the points stated in the fixture, or a plain split of InkSight's "x,y x,y" text."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

import inkground_lib
from inkground_lib.formats.inkml import DIALECTS, read_inkml
from inkground_lib.formats.inkml_document import DEVIATIONS, WARNING_KINDS, InkMLDocument, InkMLGroup
from inkground_lib.formats.inkml_write import write_inkml
from inkground_lib.formats.inksight_canvas import canvas_placement, canvas_to_box
from inkground_lib.formats.xmlsafe import FormatError

FIX = Path(__file__).resolve().parent / "fixtures" / "inkml"


def _xy(group: InkMLGroup) -> list[list[list[float]]]:
    return [s[:, :2].tolist() for s in group.ink.strokes]


def _kinds(doc: InkMLDocument) -> list[str]:
    return [w.kind for w in doc.warnings]


def _write(tmp_path: Path, text: str, name: str = "d.inkml") -> Path:
    p = tmp_path / name
    p.write_text(text, "utf-8")
    return p


NS = 'xmlns="http://www.w3.org/2003/InkML"'


# ============================================================================================ the result

def test_the_result_is_still_the_list_of_groups(tmp_path):
    """read_inkml's callers unpack, index and compare the groups as a list: the document is that list, with the
    warnings and definitions as attributes; the public name is the same function."""
    assert inkground_lib.read_inkml is read_inkml
    doc = read_inkml(FIX / "nested_words.inkml")
    assert isinstance(doc, list) and isinstance(doc, InkMLDocument) and len(doc) == 5
    assert doc == list(doc) and doc[1].text == "hi" and [g.id for g in doc][:2] == ["line1", "w1"]
    assert doc.dialect == "w3c" and doc.warnings == [] and doc.annotations == {"writer": "w007"}
    (g,) = read_inkml(write_inkml(tmp_path / "w.inkml", {"a": [[[0, 0, 0], [1, 1, 10]]]}))
    assert g.id == "a" and read_inkml(tmp_path / "w.inkml").warnings == []  # our own files need no tolerance
    assert set(WARNING_KINDS) >= {"no-namespace", "undefined-context", "default-format", "channels-dropped",
                                  "dialect", "stray-point", "blank-text"}
    with pytest.raises(ValueError, match="dialect must be one of"):
        read_inkml(FIX / "nested_words.inkml", dialect="office")
    assert DIALECTS == ("auto", "w3c", "inksight")


# ============================================================================================ Office / OneNote

def test_office_contexts_with_inksource_formats_glued_differences_and_brushes():
    """Word / OneNote / Journal: traceFormat in <inkSource> in <context>, the inkml: prefix, several contexts and
    brushes, #id and bare-id contextRefs, channels X Y F OA OE / OTx OTy read and dropped (kept as metadata),
    first and second differences with the tokens glued, a trailing comma."""
    doc = read_inkml(FIX / "office_word.inkml")
    (g,) = doc
    assert g.id is None and g.text is None
    assert _xy(g) == [[[2561, 1], [2532, 36], [2505, 73]],
                      [[100, 200], [105, 195], [111, 191], [118, 188]],
                      [[500, 500], [510, 500], [520, 500]]]
    assert all(np.isnan(s[:, 2]).all() for s in g.ink.strokes)  # no T channel
    assert g.trace_attrs == ({"id": "t0", "contextRef": "ctx0", "brushRef": "br0"},
                             {"id": "t1", "contextRef": "ctx1", "brushRef": "br1"},
                             {"id": "t2", "contextRef": "ctx0"})
    assert doc.brushes == {"br0": {"width": "0.05", "height": "0.05", "color": "#E71224"},
                           "br1": {"width": "0.1", "color": "#000000"}}
    c0, c1 = doc.contexts["ctx0"], doc.contexts["ctx1"]
    assert c0["channels"] == ["X", "Y", "F", "OA", "OE"] and c0["dropped"] == ["F", "OA", "OE"]
    assert c0["units"]["X"] == "cm" and c0["inkSource"] == "inkSrc0"
    assert c0["channel_properties"]["X"] == {"resolution": "1000 1/cm"}
    assert c1["channels"] == ["X", "Y", "F", "OTx", "OTy"] and c1["dropped"] == ["F", "OTx", "OTy"]
    assert _kinds(doc) == ["channels-dropped", "channels-dropped"]  # one per traceFormat, not per trace
    assert "of the traceFormat of context 'ctx0'" in doc.warnings[0].message


def test_onenote_time_in_device_units_is_dropped_and_extension_elements_are_not_inkml(tmp_path):
    """A T channel in units="dev" (ticks) is no time: read, its times dropped, a warning; Microsoft's msink:context
    inside annotationXML is another namespace's element and no InkML context."""
    doc = read_inkml(FIX / "onenote_journal.inkml")
    (g,) = doc
    assert (g.id, g.text) == ("g0", "hello")
    assert _xy(g) == [[[0, 0], [10, 20], [25, 45]], [[40, 10], [40, 30]]]
    assert all(np.isnan(s[:, 2]).all() for s in g.ink.strokes)
    assert [a["brushRef"] for a in g.trace_attrs] == ["br0", "br0"]  # the group's brushRef
    assert set(doc.contexts) == {"ctx0"} and doc.contexts["ctx0"]["dropped"] == ["F"]
    assert _kinds(doc) == ["time-units", "channels-dropped"]
    assert "T channel in units 'dev'" in doc.warnings[0].message
    # a traceFormat of another namespace is not taken for InkML's (here it would name a bogus channel set)
    p = _write(tmp_path, f'<ink {NS} xmlns:x="urn:other"><x:traceFormat><x:channel name="Q"/></x:traceFormat>'
                         f'<traceFormat><channel name="X"/><channel name="Y"/><channel name="T" units="s"/></traceFormat>'
                         "<trace>1 2 0.5, 3 4 1</trace></ink>")
    (g,) = read_inkml(p)
    np.testing.assert_array_equal(g.ink[0], [[1, 2, 500], [3, 4, 1000]])


def test_references_with_and_without_hash_and_formats_by_reference(tmp_path):
    """contextRef / traceFormatRef / inkSourceRef / brushRef written "#id" or "id"; a context inheriting from
    another by contextRef."""
    p = _write(tmp_path, f"""<ink {NS}><definitions>
      <traceFormat xml:id="xyt"><channel name="X"/><channel name="Y"/><channel name="T" units="s"/></traceFormat>
      <inkSource xml:id="src"><traceFormat><channel name="Y"/><channel name="X"/></traceFormat></inkSource>
      <brush xml:id="b"><brushProperty name="color" value="#FF0000"/></brush>
      <context xml:id="a" traceFormatRef="xyt"/>
      <context xml:id="b1" inkSourceRef="src" brushRef="b"/>
      <context xml:id="c" contextRef="#b1"/>
    </definitions>
    <trace contextRef="a">1 2 1, 3 4 2</trace>
    <trace contextRef="#b1">10 20, 30 40</trace>
    <trace contextRef="c" brushRef="#b">5 6</trace></ink>""")
    doc = read_inkml(p)
    (g,) = doc
    np.testing.assert_array_equal(g.ink[0], [[1, 2, 1000], [3, 4, 2000]])
    assert _xy(g)[1:] == [[[20, 10], [40, 30]], [[6, 5]]]  # that inkSource's traceFormat is Y X
    assert [a.get("brushRef") for a in g.trace_attrs] == [None, "b", "b"]
    assert doc.warnings == []


def test_a_context_without_traceformat_and_a_missing_brush_are_reported(tmp_path):
    p = _write(tmp_path, f'<ink {NS}><definitions><context xml:id="c"/></definitions>'
                         '<trace contextRef="#c" brushRef="#nope">1 2, 3 4</trace><trace>,</trace></ink>')
    doc = read_inkml(p)
    assert _xy(doc[0]) == [[[1, 2], [3, 4]]]
    assert _kinds(doc) == ["context-without-format", "undefined-brush", "empty-trace", "default-format"]
    assert all(str(w).startswith(f"{p}: <") for w in doc.warnings)


def test_pen_up_traces_are_no_ink_and_continuations_are_said(tmp_path):
    """Recommendation, <trace> type: "penUp" traces record the pen above the surface (no ink); continuation
    traces are fragments of one stroke, kept here as strokes of their own: both are warnings."""
    p = _write(tmp_path, f"<ink {NS}><traceFormat><channel name='X'/><channel name='Y'/></traceFormat>"
                         "<trace>0 0, 1 1</trace><trace type='penUp'>1 1, 5 5</trace>"
                         "<trace continuation='begin' xml:id='a'>5 5, 6 6</trace></ink>")
    doc = read_inkml(p)
    assert _xy(doc[0]) == [[[0, 0], [1, 1]], [[5, 5], [6, 6]]]
    assert _kinds(doc) == ["pen-up", "continuation"] and doc.warnings[0].element == "<trace> #1"
    assert [a.get("id") for a in doc[0].trace_attrs] == [None, "a"]


def test_trailing_comma_and_empty_points(tmp_path):
    """trace ::= point ("," point)* ","? wsp*: one trailing comma is allowed; two commas in a row are not."""
    p = _write(tmp_path, f"<ink {NS}><traceFormat><channel name='X'/><channel name='Y'/></traceFormat>"
                         "<trace>1 2, 3 4, \n</trace></ink>")
    assert _xy(read_inkml(p)[0]) == [[[1, 2], [3, 4]]]
    p = _write(tmp_path, f"<ink {NS}><traceFormat><channel name='X'/><channel name='Y'/></traceFormat>"
                         "<trace>1 2,, 3 4</trace></ink>")
    with pytest.raises(FormatError, match=r"<trace> #0: point 1: empty point"):
        read_inkml(p)


# ============================================================================================ ImadocSen-OnDB

def test_imadocsen_words_without_namespace_crlf_inksourceref_and_annotationxml_labels():
    raw = (FIX / "imadocsen_words.inkml").read_bytes()
    assert raw.startswith(b"<ink>") and b"\r\n" in raw and b"<?xml" not in raw  # the fixture is what it claims
    doc = read_inkml(FIX / "imadocsen_words.inkml")
    assert [(g.id, g.text, g.parent, g.depth) for g in doc] == [
        ("traceGroup-Sentence_t_1", "we go", None, 0), ("traceGroup-Word_t_1_1", "we", 0, 1),
        ("traceGroup-Word_t_1_2", "go", 0, 1)]
    assert _xy(doc[1]) == [[[100, 900], [120, 950], [140, 900]], [[160, 900], [180, 950]]]
    assert _xy(doc[2]) == [[[400, 900], [430, 950], [460, 900]]]
    assert doc[1].trace_attrs[0]["brushRef"] == "brush_t_1"  # the context's brush
    assert doc.contexts["context_t_1"]["channels"] == ["X", "Y"]
    assert doc.contexts["context_t_1"]["inkSource"] == "inkSource_t_1"
    assert doc[1].annotations["annotationXML"]["Ground truth"] == {"type": "Word", "label": "we"}
    assert doc.annotations["annotationXML"]["Writer characteristics"]["writingType"] == "Right-handed"
    assert _kinds(doc) == ["no-namespace", "undefined-context", "text-source", "text-source", "text-source"]
    undefined = doc.warnings[1]
    assert undefined.element == '<trace id="trace_t_1_2_1">' and "'context_t_2' names no context" in undefined.message


def test_a_context_the_file_never_defines_is_read_with_the_default_format_and_said():
    doc = read_inkml(FIX / "imadocsen_undefined_context.inkml")
    (g,) = doc
    assert (g.text, _xy(g)) == ("a line", [[[10, 20], [30, 40]], [[50, 60], [70, 80], [90, 100]]])
    w = [x for x in doc.warnings if x.kind == "undefined-context"]
    assert len(w) == 1  # once per missing context, not per trace
    assert str(w[0]).endswith("contextRef 'context_u_1' names no context in the file: read with the traceFormat "
                              "in scope (X Y, the default)")
    with pytest.raises(FormatError, match=r"imadocsen_undefined_context\.inkml: <ink>: the root <ink> declares no "
                                          r"namespace .*\(strict: "):
        read_inkml(FIX / "imadocsen_undefined_context.inkml", strict=True)


# ============================================================================================ InkSight

def _pairs(path: Path) -> list[list[list[float]]]:
    """An independent reading of InkSight's traces: each <trace> text split into x,y pairs."""
    text = re.sub(r"<!--.*?-->", "", path.read_text("utf-8"), flags=re.S)
    return [[[float(v) for v in p.split(",")] for p in body.split()]
            for body in re.findall(r"<trace[^>]*>([^<]*)</trace>", text)]


def test_inksight_word_is_read_by_its_annotation_with_text_and_stray_point():
    path = FIX / "inksight_word.inkml"
    doc = read_inkml(path)
    (g,) = doc
    assert doc.dialect == "inksight" and doc.box is None
    assert _xy(g) == _pairs(path) and len(g.ink) == 3
    assert g.text == "his" and g.annotations["exampleId"] == "00-000-00-00_0"
    assert _kinds(doc) == ["dialect", "stray-point", "text-source"]
    assert 'annotation type="application" is \'InkSight\'' in doc.warnings[0].message
    assert doc.warnings[1].element == '<trace id="2"> #2' and "x = 223" in doc.warnings[1].message


def test_inksight_empty_text_written_as_one_space_is_no_text():
    path = FIX / "inksight_blank.inkml"
    doc = read_inkml(path)
    assert doc[0].text is None and _xy(doc[0]) == _pairs(path)
    assert _kinds(doc) == ["dialect", "stray-point", "blank-text"]
    assert "x = 1," in doc.warnings[1].message


def test_inksight_pairs_without_its_annotations_are_detected_by_their_traces():
    path = FIX / "inksight_bare.inkml"
    doc = read_inkml(path)
    assert doc.dialect == "inksight" and doc[0].text == "no" and _xy(doc[0]) == _pairs(path)
    assert "every trace is x,y pairs of whole numbers in 0..224" in doc.warnings[0].message
    with pytest.raises(FormatError, match=r"inksight_bare\.inkml: <trace> #0: point 0: 1 values, expected 2 .*"
                                          r"read it with dialect='inksight'"):
        read_inkml(path, dialect="w3c")


def test_inksight_dialect_named_reads_what_detection_would_not(tmp_path):
    """Decimals or values past the canvas are not taken for InkSight's by themselves: they fail with the reason
    and the way on; dialect='inksight' reads them, and says what lies outside the canvas."""
    p = _write(tmp_path, f"<ink {NS}><trace>1.5,2 300,4</trace></ink>")
    with pytest.raises(FormatError, match=r"d\.inkml: <trace> #0: point 0: 1 values, expected 2.*dialect='inksight'"):
        read_inkml(p)
    doc = read_inkml(p, dialect="inksight")
    assert _xy(doc[0]) == [[[1.5, 2], [300, 4]]]
    assert _kinds(doc) == ["dialect", "canvas-range"] and "dialect='inksight' given" in doc.warnings[0].message
    # a trace that is no x,y pairs fails in that dialect, naming it
    p = _write(tmp_path, f"<ink {NS}><trace>1,2 3;4</trace></ink>")
    with pytest.raises(FormatError, match=r"<trace> #0: '3;4' is not an x,y pair"):
        read_inkml(p, dialect="inksight")


def test_inksight_canvas_maps_back_to_a_word_box_as_the_adapter_maps_its_output():
    """box= maps the 224 canvas with the InkSight adapter's own mapping (inksight_to_page over the crop the
    notebook prepares): the same page points, to the last bit."""
    from inkground_lib.components.derenderers.inksight import inksight_to_page, prepare_inksight_crop

    box = (40.0, 300.0, 160.0, 340.0)  # a 120 x 40 px word image on its page
    doc = read_inkml(FIX / "inksight_word.inkml", box=box)
    canvas = read_inkml(FIX / "inksight_word.inkml")[0].ink
    prep = prepare_inksight_crop(np.zeros((40, 120), np.uint8))
    want = inksight_to_page([s[:, :2] for s in canvas.strokes], prep, box)
    assert doc.box == box and _kinds(doc) == ["dialect", "stray-point", "text-source"]
    for a, b in zip(doc[0].ink.strokes, want.strokes):
        np.testing.assert_array_equal(a[:, :2], b[:, :2])
    place = canvas_placement((120, 40))
    assert (place.ratio, place.dx, place.dy) == (prep.ratio, prep.dx, prep.dy)
    # the canvas's middle lands on the box's middle, up to the whole-pixel placement (74 px tall at dy = 75)
    mid = canvas_to_box([np.array([[112.0, 112.0]])], place, box)[0]
    np.testing.assert_allclose(mid, [[100.0, 300 + (112 - 75) / place.ratio]])
    assert abs(mid[0, 1] - 320.0) < 0.5
    with pytest.raises(FormatError, match="box= maps InkSight's 224 x 224 canvas"):
        read_inkml(FIX / "office_word.inkml", box=box)


# ============================================================================================ what is not read

@pytest.mark.parametrize("body, message", [
    ('<ink xmlns="urn:another-format"><trace>1 2</trace></ink>',
     r"d\.inkml: root <ink> is in the namespace 'urn:another-format', not InkML's"),
    ("<svg><path d='M0 0'/></svg>", r"d\.inkml: root element is <svg>, expected <ink>"),
    (f"<ink {NS}><annotation type='truth'>x</annotation></ink>",
     r"d\.inkml: <ink>: the document holds no InkML <trace> element"),
    (f"<ink {NS}><trace>1 2; 3 4</trace></ink>", r"d\.inkml: <trace> #0: point 0: cannot read value '; 3 4'"),
    (f"<ink {NS}><trace>1 2 3, 4 5 6</trace></ink>",
     r"<trace> #0: point 0: 3 values, expected 2 \(channels X Y, the default traceFormat\)"),
    (f"<ink {NS}><trace contextRef='#c'>1 2</trace><definitions><context xml:id='c' traceFormatRef='#nope'/>"
     "</definitions></ink>", r"d\.inkml: <context id=\"c\">: traceFormatRef 'nope' names no traceFormat"),
    (f"<ink {NS}><definitions><context xml:id='c' inkSourceRef='#s'/></definitions><trace contextRef='c'>1 2"
     "</trace></ink>", r"<context id=\"c\">: inkSourceRef 's' names no inkSource"),
    (f"<ink {NS}><traceFormat><channel name='X'/><channel name='P'/></traceFormat><trace>1 2</trace></ink>",
     r"<traceFormat>: traceFormat has no regular channel Y"),
    (f"<ink {NS}><trace>  </trace></ink>", r"d\.inkml: <ink>: no trace of the document holds a point"),
])
def test_a_file_in_a_dialect_not_read_fails_naming_file_element_and_reason(tmp_path, body, message):
    p = _write(tmp_path, body)
    with pytest.raises(FormatError, match=message):
        read_inkml(p)


def test_strict_makes_every_tolerated_deviation_an_error():
    """strict=True refuses the deviations from the Recommendation; what the reader chose where the
    Recommendation leaves it open (the default X Y, channels dropped, device-unit times) stays a warning."""
    for name in ("imadocsen_words", "imadocsen_undefined_context", "inksight_word", "inksight_blank"):
        with pytest.raises(FormatError, match=r"\(strict: "):
            read_inkml(FIX / f"{name}.inkml", strict=True)
    for name in ("office_word", "onenote_journal", "crohme_style", "nested_words"):
        doc = read_inkml(FIX / f"{name}.inkml", strict=True)
        assert not {w.kind for w in doc.warnings} & DEVIATIONS
    assert set(DEVIATIONS) < set(WARNING_KINDS)
    assert math.isnan(read_inkml(FIX / "onenote_journal.inkml", strict=True)[0].ink[0][0, 2])
