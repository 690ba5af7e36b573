"""Tests of the numbered-grid answer parser and writer (inkground_lib.evaluation.parse)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inkground_lib.evaluation.parse import (
    STATUSES,
    USABLE_STATUSES,
    ParseResult,
    error_result,
    format_cell_strokes,
    format_strokes,
    from_cells,
    parse_strokes,
    to_cells,
)

G = 50
SIZE = (1000.0, 500.0)  # W, H: a cell is 20 x 10 page pixels

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _answer(*strokes: str) -> str:
    body = "".join(f"<s{k}><points>{s}</points></s{k}>" for k, s in enumerate(strokes, 1))
    return f"<strokes>{body}</strokes>"


# ------------------------------------------------------------------------------------ cell mapping

def test_cell_mapping_by_hand():
    r = parse_strokes(_answer("'x1y1', 'x50y50', 'x0.5y0.5', 'x50.5y50.5', 'x25.5y25.5'"), G, SIZE)
    assert r.status == "ok" and r.n_clamped == 0
    # x1y1: bottom-left cell centre (10, 495); x50y50: top-right cell centre (990, 5); edges of the photo
    np.testing.assert_allclose(r.strokes[0], [[10, 495], [990, 5], [0, 500], [1000, 0], [500, 250]])


def test_cell_mapping_small_grid():
    # G = 4 on an 8 x 4 photo: cells are 2 x 1 px; x2y3 -> x = 1.5 * 2 = 3, y = (4 - 3 + 0.5) * 1 = 1.5
    r = parse_strokes("<s1><points>x2y3</points></s1>", 4, (8, 4))
    np.testing.assert_allclose(r.strokes[0], [[3.0, 1.5]])


def test_to_cells_from_cells_inverse():
    rng = np.random.default_rng(0)
    p = rng.uniform([0, 0], SIZE, size=(100, 2))
    c = to_cells(p, G, SIZE)
    assert ((c >= 0.5) & (c <= G + 0.5)).all()
    np.testing.assert_allclose(from_cells(c, G, SIZE), p, atol=1e-9)
    np.testing.assert_allclose(to_cells([[10, 495]], G, SIZE), [[1, 1]])
    np.testing.assert_allclose(from_cells([[0, 60]], G, SIZE, clamp=True), [[0, 0]])


def test_bad_grid_or_page_size_raise():
    with pytest.raises(ValueError, match="grid"):
        parse_strokes("x", 0, SIZE)
    with pytest.raises(ValueError, match="page_size"):
        parse_strokes("x", G, (0, 10))
    with pytest.raises(ValueError, match="str"):
        parse_strokes(None, G, SIZE)


# ------------------------------------------------------------------------------------ formats

def test_full_answer_with_prose_fences_and_t_values():
    text = ("I looked at the page. The word is in the middle.\n<answer>\n```xml\n<strokes>\n"
            "<s1><points>'x12y30', 'x13.5y31', 'x14y30'</points><t_values>0, 0.4, 1</t_values></s1>\n"
            "<s2><points>'x20y40'</points><t_values>0</t_values></s2>\n</strokes>\n```\n</answer>\nDone.")
    r = parse_strokes(text, G, SIZE)
    assert r.status == "ok", r.message
    assert r.message == ""
    assert len(r.strokes) == 2 and r.n_points == 4 and r.n_bad_points == 0
    np.testing.assert_allclose(r.strokes[0][1], [(13.5 - 0.5) * 20, (50 - 31 + 0.5) * 10])
    np.testing.assert_allclose(r.t_values[0], [0, 0.4, 1])
    np.testing.assert_allclose(r.t_values[1], [0])


@pytest.mark.parametrize("points", ["x12y30, x13y31", "\"x12y30\", \"x13y31\"", "X12Y30 X13Y31",
                                   "[x12 y30], [x13 y31]", "'x12,y30'; 'x13, y31'", "x12.0y30.00\nx13.y31"])
def test_point_spellings(points):
    r = parse_strokes(_answer(points), G, SIZE)
    assert r.status == "ok", r.message
    np.testing.assert_allclose(r.strokes[0], from_cells([[12, 30], [13, 31]], G, SIZE))


def test_sketchagent_id_tag_and_uppercase_tags_ignored_gracefully():
    text = "<STROKES><S1><Points>'x1y2'</Points><T_VALUES>0</T_VALUES><id>body</id></S1></STROKES>"
    r = parse_strokes(text, G, SIZE)
    assert r.status == "ok" and r.n_points == 1 and r.t_values[0] is not None


def test_bare_strokes_without_wrapper_are_ok():
    r = parse_strokes("Here: <s1><points>x1y1, x2y2</points></s1> <s2><points>x3y3</points></s2> bye", G, SIZE)
    assert r.status == "ok" and len(r.strokes) == 2
    assert "wrapper" in r.message


# ------------------------------------------------------------------------------------ statuses

def test_bad_points_and_invalid_strokes_give_partial():
    text = _answer("'x1y1', 'x2y', 'hello', 'x3y3'", "'nonsense'", "x5y5")
    r = parse_strokes(text, G, SIZE)
    assert r.status == "partial"
    assert len(r.strokes) == 2 and r.n_points == 3
    assert r.n_bad_points == 3
    assert "bad point" in r.message and "without a valid point" in r.message


def test_clamping_counted_once_per_point():
    r = parse_strokes(_answer("x0y0, x51y25, x25y-3, x50.5y0.5, x1y1, x100y100"), G, SIZE)
    assert r.status == "partial"
    assert r.n_clamped == 4
    np.testing.assert_allclose(r.strokes[0][0], [0, 500])
    np.testing.assert_allclose(r.strokes[0][1], [1000, (50 - 25 + 0.5) * 10])
    np.testing.assert_allclose(r.strokes[0][3], [1000, 500])
    assert (r.strokes[0][:, 0] >= 0).all() and (r.strokes[0][:, 0] <= 1000).all()
    assert (r.strokes[0][:, 1] >= 0).all() and (r.strokes[0][:, 1] <= 500).all()


def test_t_values_mismatch_bad_or_out_of_range():
    r = parse_strokes("<strokes><s1><points>x1y1, x2y2</points><t_values>0</t_values></s1></strokes>", G, SIZE)
    assert r.status == "partial" and r.t_values[0] is None and r.n_points == 2
    r = parse_strokes("<strokes><s1><points>x1y1, x2y2</points><t_values>0, a</t_values></s1></strokes>",
                      G, SIZE)
    assert r.status == "partial" and r.t_values[0] is None
    r = parse_strokes("<strokes><s1><points>x1y1, x2y2</points><t_values>-0.5, 1.5</t_values></s1></strokes>",
                      G, SIZE)
    assert r.status == "partial" and r.n_t_clamped == 2 and r.n_clamped == 0
    np.testing.assert_allclose(r.t_values[0], [0, 1])
    # t values given for every token, one of which is a bad point: the bad point's t is dropped
    r = parse_strokes("<strokes><s1><points>x1y1, zz, x2y2</points><t_values>0, .5, 1</t_values></s1></strokes>",
                      G, SIZE)
    np.testing.assert_allclose(r.t_values[0], [0, 1])


def test_truncated_output_salvaged_and_cut_token_dropped():
    r = parse_strokes("<strokes><s1><points>x1y1, x2y2</points></s1><s2><points>'x3y3', 'x4y4', 'x5y", G, SIZE)
    assert r.status == "truncated"
    assert [len(s) for s in r.strokes] == [2, 2]
    assert r.n_bad_points == 1
    r = parse_strokes("<strokes><s1><points>x1y1, x12y3", G, SIZE)  # x12y3 may be the start of x12y30
    assert r.status == "truncated" and r.n_points == 1
    r = parse_strokes("<strokes><s1><points>x1y1</points></s1>", G, SIZE)  # no </strokes>
    assert r.status == "truncated" and r.n_points == 1
    r = parse_strokes("<s1><points>x1y1</points>", G, SIZE)  # no wrapper, last stroke open
    assert r.status == "truncated"


def test_unclosed_but_complete_text_is_partial_not_truncated():
    r = parse_strokes("<strokes><s1><points>x1y1</points><s2><points>x2y2</points></s2></strokes>", G, SIZE)
    assert r.status == "partial" and len(r.strokes) == 2 and "not closed" in r.message
    r = parse_strokes("<answer><strokes><s1><points>x1y1</points></s1></answer> thanks", G, SIZE)
    assert r.status == "partial" and "<strokes> block not closed" in r.message


def test_no_strokes_unparseable_error():
    assert parse_strokes("<strokes><s1><points></points></s1></strokes>", G, SIZE).status == "no_strokes"
    assert parse_strokes("<strokes><s1><points>'x', 'y'</points></s1></strokes>", G, SIZE).status == "no_strokes"
    assert parse_strokes("<strokes><s1><poi", G, SIZE).status == "no_strokes"
    for text in ["", "   \n", "I cannot help with that.", "<answer>sorry</answer>", "x12y30, x13y31"]:
        r = parse_strokes(text, G, SIZE)
        assert r.status == "unparseable" and r.strokes == [] and not r.usable
    e = error_result("HTTP 500 after 3 attempts")
    assert e.status == "error" and e.strokes == [] and "500" in e.message and not e.usable
    with pytest.raises(ValueError):
        ParseResult(strokes=[], t_values=[], status="fine")


def test_echoed_format_before_answer_uses_last_valid_block():
    text = ("The format is <strokes><s1><points>'x..y..', ...</points></s1></strokes>. My answer:\n"
            "<answer><strokes><s1><points>x7y8</points></s1></strokes></answer>")
    r = parse_strokes(text, G, SIZE)
    assert r.status == "ok" and r.n_points == 1
    np.testing.assert_allclose(r.strokes[0], from_cells([[7, 8]], G, SIZE))
    assert "2 <strokes> blocks" in r.message


def test_to_ink_and_summary():
    r = parse_strokes(_answer("x1y1, x2y2"), G, SIZE)
    ink = r.to_ink()
    assert len(ink) == 1 and ink.n_points == 2 and np.isnan(ink[0][:, 2]).all()
    assert r.summary()["n_points"] == 2 and r.summary()["status"] == "ok"


# ------------------------------------------------------------------------------------ adversarial size

@pytest.mark.parametrize("unit,n,status", [
    ("<s1><points>x1y", 80_000, "no_strokes"), ("x1", 500_000, "unparseable"), ("<", 1_000_000, "unparseable"),
    ("<strokes>", 100_000, "no_strokes"), ("<s1><points>", 80_000, "no_strokes"), ("'x1.", 250_000, "unparseable"),
    ("x1 y", 250_000, "unparseable"), ("<s1><points>x" + "9" * 50 + "y", 15_000, "no_strokes"),
    ("<strokes><s1><points>x1y1,", 40_000, "truncated"), ("< / s 1 >", 100_000, "no_strokes")])
def test_large_adversarial_inputs_finish(unit, n, status):
    text = unit * n
    t0 = time.process_time()
    r = parse_strokes(text, G, SIZE)
    took = time.process_time() - t0
    print(f"{len(text)} chars of {unit!r}: {r.status}, {took:.3f} CPU-s")
    # about 1 CPU-s or less each (2026-11); a super-linear blow-up on ~1 MB would take minutes. CPU time of this
    # process, not wall time: a loaded machine (39.7 s wall at load 9) does not make it fail
    assert took < 30, f"{took:.1f} CPU-s"
    assert r.status == status, r.message
    if unit == "<s1><points>x1y":
        assert r.n_bad_points == n
    if unit == "<strokes><s1><points>x1y1,":
        # every block's only point is valid, the last block is used; each block is unclosed
        assert r.n_points == 1


def test_huge_number_is_a_bad_point_and_long_valid_answer_parses():
    r = parse_strokes(_answer("x" + "1" * 100 + "y3, x2y2"), G, SIZE)
    assert r.n_bad_points == 1 and r.n_points == 1
    pts = ", ".join(f"'x{1 + i % 50}y{1 + (i * 7) % 50}'" for i in range(100_000))
    r = parse_strokes(_answer(pts), G, SIZE)
    assert r.status == "ok" and r.n_points == 100_000


# ------------------------------------------------------------------------------------ writer

def test_format_strokes_example_text():
    strokes = [np.array([[10.0, 495.0], [990.0, 5.0]]), np.array([[500.0, 250.0, 7.0]])]
    text = format_strokes(strokes, G, SIZE)
    assert text == ("<strokes>\n<s1><points>'x1y1', 'x50y50'</points><t_values>0, 1</t_values></s1>\n"
                    "<s2><points>'x25.5y25.5'</points><t_values>0</t_values></s2>\n</strokes>")
    assert "t_values" not in format_strokes(strokes, G, SIZE, t_values=None)
    ded = format_cell_strokes([np.array([[1, 1], [1.01, 1], [2, 2]])], decimals=1, dedupe=True)
    assert ded.count("'x1y1'") == 1 and "'x2y2'" in ded


cells_strategy = st.lists(
    st.lists(st.tuples(st.floats(0.5, G + 0.5), st.floats(0.5, G + 0.5)), min_size=1, max_size=12),
    min_size=1, max_size=6)


@FAST
@given(cells_strategy, st.integers(1, 4))
def test_property_format_parse_round_trip(cells, decimals):
    strokes = [from_cells(np.array(c), G, SIZE) for c in cells]
    text = format_strokes(strokes, G, SIZE, decimals=decimals)
    r = parse_strokes(text, G, SIZE)
    assert r.status == "ok", r.message  # with decimals >= 1 the bounds 0.5 and G + 0.5 print exactly
    assert r.n_clamped == 0 and r.n_bad_points == 0
    assert len(r.strokes) == len(strokes)
    tol_cells = 0.5 * 10.0 ** -decimals + 1e-9
    for a, b in zip(r.strokes, strokes):
        np.testing.assert_allclose(to_cells(a, G, SIZE), to_cells(b, G, SIZE), atol=tol_cells)
    for t in r.t_values:
        assert t is not None and t[0] == 0 and ((t >= 0) & (t <= 1)).all()


@FAST
@given(st.lists(st.lists(st.tuples(st.integers(-30, 90), st.integers(-30, 90)), min_size=1, max_size=8),
                min_size=1, max_size=5))
def test_property_clamping_counted(cells):
    text = format_cell_strokes([np.array(c, float) for c in cells], decimals=0)
    r = parse_strokes(text, G, SIZE)
    flat = np.array([p for c in cells for p in c], float)
    out = ((flat < 0.5) | (flat > G + 0.5)).any(axis=1)
    assert r.n_clamped == int(out.sum())
    assert r.status == ("partial" if out.any() else "ok")
    allp = np.concatenate(r.strokes)
    assert (allp >= 0).all() and (allp[:, 0] <= SIZE[0]).all() and (allp[:, 1] <= SIZE[1]).all()


@FAST
@given(st.text(max_size=400))
def test_property_arbitrary_text_never_crashes(text):
    r = parse_strokes(text, G, SIZE)
    assert r.status in STATUSES and r.status != "error"
    assert len(r.strokes) == len(r.t_values)
    assert (r.status in USABLE_STATUSES) == bool(r.strokes)
    assert r.n_points == sum(len(s) for s in r.strokes)


_alphabet = st.sampled_from(list("<>/sx y'\",0123456789.-strokespointst_values\n") +
                            ["<s1>", "</s1>", "<points>", "</points>", "<strokes>", "</strokes>", "<t_values>"])


@FAST
@given(st.lists(_alphabet, max_size=200))
def test_property_tag_soup_never_crashes(tokens):
    r = parse_strokes("".join(tokens), G, SIZE)
    assert r.status in STATUSES
    for s in r.strokes:
        assert s.ndim == 2 and s.shape[1] == 2 and len(s) >= 1 and np.isfinite(s).all()


def _valid_answer(cells) -> str:
    return "<answer>\n" + format_cell_strokes([np.array(c, float) for c in cells], decimals=1) + "\n</answer>"


small_cells = st.lists(st.lists(st.tuples(st.integers(1, G), st.integers(1, G)), min_size=1, max_size=5),
                       min_size=1, max_size=4)


@settings(max_examples=15, deadline=None)
@given(small_cells)
def test_property_truncation_at_every_position(cells):
    text = _valid_answer(cells)
    close = text.index("</strokes>") + len("</strokes>")
    for cut in range(len(text) + 1):
        r = parse_strokes(text[:cut], G, SIZE)
        assert r.status in ("ok", "truncated", "no_strokes", "unparseable"), (cut, r.status, r.message)
        assert (r.status == "ok") == (cut >= close)
        # what survives is a prefix of the original strokes, each a prefix of its original points
        assert len(r.strokes) <= len(cells)
        for got, want in zip(r.strokes, cells):
            want_px = from_cells(np.array(want, float), G, SIZE)
            assert len(got) <= len(want)
            np.testing.assert_allclose(got, want_px[:len(got)])


@FAST
@given(small_cells, st.data())
def test_property_inserted_junk_and_dropped_quotes(cells, data):
    text = _valid_answer(cells)
    no_quotes = text.replace("'", "")
    r0, r1 = parse_strokes(text, G, SIZE), parse_strokes(no_quotes, G, SIZE)
    assert r0.status == r1.status == "ok"
    for a, b in zip(r0.strokes, r1.strokes):
        np.testing.assert_array_equal(a, b)
    pos = data.draw(st.integers(0, len(text)))
    junk = data.draw(st.text(max_size=30) | _alphabet)
    r = parse_strokes(text[:pos] + junk + text[pos:], G, SIZE)
    # (status and one t_values entry per stroke are checked by ParseResult itself)
    assert r.status != "error" and (r.status in USABLE_STATUSES) == bool(r.strokes)
    assert r.n_points == sum(len(s) for s in r.strokes)
    for s in r.strokes:
        assert s.ndim == 2 and s.shape[1] == 2 and len(s) >= 1 and np.isfinite(s).all()


@FAST
@given(st.lists(_alphabet, max_size=150), small_cells)
def test_property_parse_format_parse_idempotent(tokens, cells):
    text = "".join(tokens) + _valid_answer(cells)[: len(tokens) * 3]
    r1 = parse_strokes(text, G, SIZE)
    if not r1.strokes:
        return
    again = format_strokes(r1.strokes, G, SIZE, decimals=6, t_values=r1.t_values)
    r2 = parse_strokes(again, G, SIZE)
    assert r2.status == "ok" and r2.n_clamped == 0
    assert len(r2.strokes) == len(r1.strokes)
    for a, b in zip(r1.strokes, r2.strokes):
        np.testing.assert_allclose(a, b, atol=1e-5 * max(SIZE))
    for a, b in zip(r1.t_values, r2.t_values):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, atol=0.005 + 1e-9)


def test_a_complete_bare_points_block_is_not_truncated():
    """Issue 11, case 15: a complete bare <points>...</points> answer was labelled truncated."""
    done = parse_strokes("<points>x10y10, x20y20, x30y15</points>", grid=50, page_size=(200, 100))
    assert done.status == "partial" and "truncated" not in done.message and done.n_points == 3
    cut = parse_strokes("<points>x10y10, x20y20, x3", grid=50, page_size=(200, 100))
    assert cut.status == "truncated"  # cut inside the region: still truncated
    cut_t = parse_strokes("<points>x10y10, x20y20</points><t_values>0, 5", grid=50, page_size=(200, 100))
    assert cut_t.status == "truncated"
