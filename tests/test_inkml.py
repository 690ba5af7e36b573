"""W3C InkML reading as the Recommendation defines it: nested traceGroups kept with their annotations, trace values
in every encoding of the value grammar (hex, white space, difference orders).

Source: W3C InkML, Recommendation 20 September 2011, https://www.w3.org/TR/InkML/ (checked 2026-11-30), section
3.2.1 (<trace>); its value grammar as reproduced in 1011X/inkml src/parse/mod.rs (docs.rs/inkml). The rules each
test covers are quoted in its docstring. Fixtures: tests/fixtures/inkml/*.inkml (sources in their headers)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from inkground_lib.formats.inkml import read_inkml
from inkground_lib.formats.inkml_write import write_inkml
from inkground_lib.formats.xmlsafe import FormatError

FIX = Path(__file__).resolve().parent / "fixtures" / "inkml"


def _truth_points(text: str) -> list[list[float]]:
    return [[float(v) for v in p.split()] for p in text.split(",")]


def _doc(tmp_path: Path, body: str, channels: str = '<channel name="X"/><channel name="Y"/>') -> Path:
    p = tmp_path / "t.inkml"
    p.write_text(f'<ink xmlns="http://www.w3.org/2003/InkML"><traceFormat>{channels}</traceFormat>{body}</ink>',
                 "utf-8")
    return p


def _trace(tmp_path: Path, data: str, **kw) -> np.ndarray:
    (g,) = read_inkml(_doc(tmp_path, f"<trace>{data}</trace>", **kw))
    return g.ink[0]


# ============================================================================================ nested groups

def test_nested_trace_groups_are_kept_with_their_truth():
    """A traceGroup may hold traceGroups; each keeps its <annotation type="truth">: the word group "hi" is a
    group with the traces of its letters, in document order, and the letters point at it."""
    groups = read_inkml(FIX / "nested_words.inkml")
    assert [(g.id, g.text, g.parent, g.depth) for g in groups] == [
        ("line1", "hi yo", None, 0), ("w1", "hi", 0, 1), ("w1.h", "h", 1, 2), ("w1.i", "i", 1, 2),
        ("w2", "yo", 0, 1)]
    by = {g.id: g for g in groups}
    assert [len(by[k].ink) for k in ("line1", "w1", "w1.h", "w1.i", "w2")] == [5, 3, 1, 2, 2]
    hi = by["w1"].ink
    for a, b in zip(hi.strokes, by["w1.h"].ink.strokes + by["w1.i"].ink.strokes):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(hi[2], [[25, 10, 300]])  # the dot of the i, written last, stays in the word
    assert [s[0, 2] for s in by["line1"].ink.strokes] == [0, 60, 300, 100, 150]  # document order, not time
    assert by["line1"].annotations == {"truth": "hi yo"}


def test_crohme_style_segmentation_and_trace_views_of_groups():
    """<traceView traceDataRef> "refers to a trace, traceGroup or traceView": symbol groups built from views of
    traces, the "Segmentation" group holding them, and a group made of views of two symbol groups."""
    groups = read_inkml(FIX / "crohme_style.inkml")
    assert [(g.id, g.text, g.parent, g.depth, len(g.ink)) for g in groups] == [
        ("4", "Segmentation", None, 0, 4), ("5", "a", 0, 1, 1), ("6", "+", 0, 1, 2), ("7", "b", 0, 1, 1),
        ("8", "ab", None, 0, 2)]
    by = {g.id: g for g in groups}
    np.testing.assert_array_equal(by["8"].ink[0], by["5"].ink[0])
    np.testing.assert_array_equal(by["8"].ink[1], by["7"].ink[0])
    # every trace is viewed by a group: no bare group, and the document's truth is not a group's
    assert all(g.id is not None for g in groups)


def test_bare_traces_come_first_and_shift_the_parent_indices(tmp_path):
    p = _doc(tmp_path, '<trace>0 0, 1 1</trace><traceGroup xml:id="w"><annotation type="truth">ab</annotation>'
                       '<traceGroup xml:id="a"><trace>5 5</trace></traceGroup></traceGroup>')
    assert [(g.id, g.parent, g.depth) for g in read_inkml(p)] == [(None, None, 0), ("w", None, 0), ("a", 1, 1)]


def test_trace_view_errors_name_the_view(tmp_path):
    p = _doc(tmp_path, '<traceGroup xml:id="g"><trace>0 0</trace><traceView traceDataRef="#g"/></traceGroup>')
    with pytest.raises(FormatError, match=r"t\.inkml: <traceView>: traceDataRef 'g' refers back to a group"):
        read_inkml(p)
    p = _doc(tmp_path, '<trace xml:id="t">0 0, 1 1</trace><traceView traceDataRef="#t" from="1"/>')
    with pytest.raises(FormatError, match=r"<traceView>: traceView from/to ranges are not supported"):
        read_inkml(p)
    p = _doc(tmp_path, '<traceGroup><traceView traceDataRef="#nope"/></traceGroup>')
    with pytest.raises(FormatError, match="traceDataRef 'nope' names no trace or traceGroup"):
        read_inkml(p)


def test_written_files_still_read_back_flat(tmp_path):
    ink = [[[0, 0, 0], [1, 1, 10]]]
    p = write_inkml(tmp_path / "w.inkml", [("a", "x", ink), ("b", None, ink)])
    assert [(g.id, g.text, g.parent, g.depth) for g in read_inkml(p)] == [("a", "x", None, 0), ("b", None, None, 0)]


# ============================================================================================ values

def test_fixture_traces_match_their_stated_points():
    """Every group of trace_encodings.inkml states in its truth annotation the points its trace stands for."""
    for g in read_inkml(FIX / "trace_encodings.inkml"):
        np.testing.assert_array_equal(g.ink[0][:, :2], _truth_points(g.text), err_msg=g.id)


def test_hex_values(tmp_path):
    """number ::= (decimal | double | hex); hex ::= "#" (digit | "A" | "B" | "C" | "D" | "E" | "F")+
    (lower-case digits are read too, leniently)."""
    np.testing.assert_array_equal(_trace(tmp_path, "#1A #FF, #0 #10, #1a #ff")[:, :2],
                                  [[26, 255], [0, 16], [26, 255]])
    np.testing.assert_array_equal(_trace(tmp_path, "-#A #B, ' #2 '-#2")[:, :2], [[-10, 11], [-8, 9]])
    with pytest.raises(FormatError, match=r"point 0: cannot read value '#G 1'"):
        _trace(tmp_path, "#G 1")


def test_white_space_where_the_grammar_allows_it(tmp_path):
    """value ::= difference_order? wsp* "-"? wsp* number ...; wsp ::= (#x20 | #x9 | #xD | #xA): white space
    may stand between a difference order, the minus and the number, and values need none between them."""
    # (the last Y, 4, is still a first difference: -5 + 4)
    np.testing.assert_array_equal(_trace(tmp_path, "- 5 -\t7, '\n-\r\n1 ' 2, ! - 3 4")[:, :2],
                                  [[-5, -7], [-6, -5], [-3, -1]])
    np.testing.assert_array_equal(_trace(tmp_path, "1-2,'3'-4")[:, :2], [[1, -2], [4, -6]])
    np.testing.assert_array_equal(_trace(tmp_path, "1e2 .5E1, 2.5e-1 3.")[:, :2], [[100, 5], [0.25, 3]])
    # a character that is not wsp (here NO-BREAK SPACE) is no separator
    with pytest.raises(FormatError, match=r"point 0: cannot read value"):
        _trace(tmp_path, "1\u00a02")


def test_difference_orders_w3c_example(tmp_path):
    """difference_order ::= ("!" | "'" | '"'): explicit value, first difference, second difference; a prefix
    holds for the channel's following values. The W3C's example "Pairs with velocity and acceleration",
    1125 18432'23'43"7"-8 3-5+7 (https://www.w3.org/2004/Talks/0624-Seoul-IH/36.html), with commas between
    the points: velocity (23, 43), then accelerations (7, -8) and (3, -5)."""
    np.testing.assert_array_equal(_trace(tmp_path, "1125 18432,'23'43,\"7\"-8,3-5")[:, :2],
                                  [[1125, 18432], [1148, 18475], [1178, 18510], [1211, 18540]])


def test_second_difference_after_explicit_points(tmp_path):
    """A second difference is the change of the first difference, the difference of the values: after the
    explicit points (0, 0) and (10, 5) the first difference is (10, 5), not zero, so "1 "1 gives
    (10, 5) + (10, 5) + (1, 1) = (21, 11), and the next 1 1 (still second differences) (33, 18)."""
    s = _trace(tmp_path, '0 0, 10 5, "1 "1, 1 1')
    np.testing.assert_array_equal(s[:, :2], [[0, 0], [10, 5], [21, 11], [33, 18]])
    # mixing: first differences, then an explicit value, then a second difference from the values
    s = _trace(tmp_path, "0 0, '2 '2, !10 !10, \"0 \"0")
    np.testing.assert_array_equal(s[:, :2], [[0, 0], [2, 2], [10, 10], [18, 18]])


def test_differences_without_the_values_they_need_are_refused(tmp_path):
    """A first difference needs the previous point's value, a second difference the two previous ones."""
    with pytest.raises(FormatError, match=r"<trace> #0: point 0: channel X: a first difference needs the value "
                                          r"of the point before it, and point 0 is the trace's first"):
        _trace(tmp_path, "'5 5")
    with pytest.raises(FormatError, match=r"point 1: channel Y: a second difference needs the values of the two "
                                          r"points before it, and point 1 is the trace's second"):
        _trace(tmp_path, '1 2, 3 "4')
    with pytest.raises(FormatError, match=r"point 1: channel T: a first difference needs the value of the point "
                                          r"before it, and point 0 has none"):
        _trace(tmp_path, "1 2 ?, 3 4 '5", channels='<channel name="X"/><channel name="Y"/>'
                                                   '<intermittentChannels><channel name="T"/></intermittentChannels>')


def test_wildcards_booleans_and_time(tmp_path):
    """value ::= ... | "T" | "F" | "*" | "?": "*" repeats the channel's previous value, "?" leaves it unknown."""
    chans = ('<channel name="X"/><channel name="Y"/><channel name="T" units="s"/>'
             '<intermittentChannels><channel name="B"/></intermittentChannels>')
    s = _trace(tmp_path, "1 2 0.5 T, * 3 ? F, 4 * 1", channels=chans)
    np.testing.assert_array_equal(s[:, :2], [[1, 2], [1, 3], [4, 3]])
    assert s[0, 2] == 500 and math.isnan(s[1, 2]) and s[2, 2] == 1000
