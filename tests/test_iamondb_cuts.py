"""IAM-OnDB (issue 33): no word is drawn with another word's ink. A line is cut into words only when the cut fits
the words' lengths, lines are matched to transcription lines by more than their number, and the report says what
each line got. The lines are written here in the lineStrokes format (IAM-OnDB may not be redistributed): each
letter a zigzag one unit wide (units of :func:`letter_units`), words separated by pen-up gaps."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from inkground_lib.core.ink import Ink
from inkground_lib.datasets.recorded import build_recorded
from inkground_lib.datasets.recorded_iamondb import iamondb_words
from inkground_lib.datasets.segmentation import (
    check_cut,
    cut_line,
    core_height,
    letter_units,
    match_lines_by_length,
    segment_line_words,
)
from inkground_lib.formats.iamondb import read_iamondb_report

U = 100.0  # one letter unit, in whiteboard units; the zigzag's core height is about 0.6 U

HEADER = """<?xml version="1.0" encoding="ISO-8859-1"?>
<WhiteboardCaptureSession>
  <WhiteboardDescription>
    <SensorLocation corner="top_left"/>
    <DiagonallyOppositeCoords x="9000" y="1400"/>
    <VerticallyOppositeCoords x="0" y="1400"/>
    <HorizontallyOppositeCoords x="9000" y="0"/>
  </WhiteboardDescription>
  <StrokeSet>
"""


def _zigzag(x0: float, width: float, t0: float) -> list[tuple[float, float, float]]:
    n = max(2, int(round(width / (U / 4))) + 1)
    xs = np.linspace(x0, x0 + width, n)
    return [(float(x), 1000.0 + (0 if k % 2 else U), t0 + 0.01 * k) for k, x in enumerate(xs)]


def _line_xml(pieces: list[tuple[float, float]]) -> str:
    """pieces: (width in units, gap after in units), each one stroke; a piece of width 0 is a dot."""
    out, x, t = [HEADER], 500.0, 100.0
    for w, gap in pieces:
        pts = [(x, 1000.0 + U, t)] if w == 0 else _zigzag(x, w * U, t)
        out.append(f'    <Stroke colour="black" start_time="{t:.2f}" end_time="{pts[-1][2]:.2f}">\n')
        out += [f'      <Point x="{px:.0f}" y="{py:.0f}" time="{pt:.2f}"/>\n' for px, py, pt in pts]
        out.append("    </Stroke>\n")
        x += w * U + gap * U
        t = pts[-1][2] + 0.2
    out.append("  </StrokeSet>\n</WhiteboardCaptureSession>\n")
    return "".join(out)


def _words(text: str, gap: float = 1.2) -> list[tuple[float, float]]:
    return [(letter_units(w), gap) for w in text.split()]


def _write(root: Path, lines: dict[str, list], csr: dict[str, list[str]]) -> Path:
    for lid, pieces in lines.items():
        form = lid.rsplit("-", 1)[0]
        d = root / "lineStrokes-all/lineStrokes" / form[:3] / form[:7]
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{lid}.xml").write_text(_line_xml(pieces), "latin-1")
    for form, texts in csr.items():
        d = root / "ascii-all/ascii" / form[:3] / form[:7]
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{form}.txt").write_text("OCR:\n\n" + "\n".join(texts) + "\n\nCSR:\n\n" + "\n".join(texts) + "\n",
                                       "latin-1")
    (root / "forms.txt").write_text("".join(f"{f} 100{k}\n" for k, f in enumerate(sorted(csr))), "latin-1")
    return root


# the real line a01-000u-01 as its pen-up gaps fall (issue 33): "MOVE" lifted before its E, "Mr." written in one go
MOVE_LINE = [(1.2, 1.6), (3.6, 1.0), (1.2, 1.6), (1.6, 1.6), (3.6, 1.6), (2.2, 0.3), (0, 1.6), (7.6, 1.0)]
MOVE_TEXT = "A MOVE to stop Mr . Gaitskell"


def _ink(pieces) -> Ink:
    out, x = [], 500.0
    for w, gap in pieces:
        out.append(np.array([(x, 1000.0 + U, 0.0)]) if w == 0 else np.array(_zigzag(x, w * U, 0.0)))
        x += w * U + gap * U
    return Ink(tuple(out))


def test_a_cut_whose_count_matches_but_whose_widths_do_not_is_refused():
    ink = _ink(MOVE_LINE)
    tokens = MOVE_TEXT.split()
    parts = segment_line_words(ink, len(tokens))
    assert parts is not None and len(parts) == 7  # the count matches: A | MOV | E | to | stop | Mr. | Gaitskell
    why = check_cut(parts, tokens, core_height(ink))
    assert why is not None and "'.'" in why and "punctuation" in why
    # without the full stop the count no longer matches, and without the punctuation check the widths still say no
    tokens2 = "A MOVE to stop Mr Gaitskell".split()
    assert segment_line_words(ink, 6) is None or check_cut(segment_line_words(ink, 6), tokens2, core_height(ink))


def test_right_cuts_are_kept_and_a_shifted_one_is_refused_by_widths_alone():
    text = "nominating any more Labour life Peers"
    ink = _ink(_words(text))
    parts = segment_line_words(ink, 6)
    assert check_cut(parts, text.split(), core_height(ink)) is None
    # the same ink read against words shifted by one ("any" drawn with the ink of "nominating", ...)
    shifted = "any more Labour life Peers nominating".split()
    why = check_cut(parts, shifted, core_height(ink))
    assert why is not None and "times its expected width" in why


def test_lines_are_matched_by_length_when_a_middle_line_is_missing(tmp_path):
    lines = ["he is", "a very very long sentence indeed for one line", "no", "the middle one here"]
    root = _write(tmp_path / "iam", {f"a01-000u-0{k + 1}": _words(t) for k, t in enumerate(lines)},
                  {"a01-000u": [lines[0], lines[1], lines[3]]})  # the transcription lacks line 3
    got, how = match_lines_by_length([_ink(_words(t)) for t in lines], [lines[0], lines[1], lines[3]])
    assert got == [0, 1, None, 2] and "matched by length" in how
    words, counts = iamondb_words(root)
    rows = {r["line"]: r for r in counts["line_report"]}
    assert rows["a01-000u-04"]["text"] == "the middle one here" and rows["a01-000u-04"]["match"] == "length"
    assert rows["a01-000u-03"]["text"] is None and not rows["a01-000u-03"]["kept"]
    assert {w.id: w.text for w in words if w.id.startswith("a01-000u-04")} == {
        "a01-000u-04-00": "the", "a01-000u-04-01": "middle", "a01-000u-04-02": "one", "a01-000u-04-03": "here"}
    # by number, line 3 would have been drawn with line 4's text: nothing of it is used
    assert not any(w.id.startswith("a01-000u-03") for w in words)
    assert counts["lines_matched_by_length"] == 3


def test_a_form_whose_lines_cannot_be_told_apart_by_length_is_skipped_and_said(tmp_path):
    lines = ["one two", "two one", "owe ton"]  # the same letters: no length tells them apart
    root = _write(tmp_path / "iam", {f"b01-000-0{k + 1}": _words(t) for k, t in enumerate(lines)},
                  {"b01-000": [lines[0], lines[2]]})
    words, counts = iamondb_words(root)
    assert words == []
    assert counts["lines_skipped"] == {"form's lines not matched (files and transcription lines differ in number)": 3}
    assert all("fit their lengths about as well" in r["reason"] for r in counts["line_report"])
    lines_, report = read_iamondb_report(root)
    assert all(ln.text is None and ln.text_note == "line count" for ln in lines_)
    ((kind, f, msg),) = [q for q in report.quirks if q[0] == "line count"]
    assert f.endswith("b01-000.txt CSR:") and "not matched by number" in msg and "b01-000-03" in msg


def test_the_text_of_a_line_comes_from_one_source_and_the_report_says_which(tmp_path):
    root = _write(tmp_path / "iam", {"c01-000-01": _words("we go now"), "c01-000-02": _words("so far away")},
                  {"c01-000": ["we go now", "so far away"]})
    words, counts = iamondb_words(root)
    assert [(r["line"], r["text_source"], r["match"], r["kept"]) for r in counts["line_report"]] == [
        ("c01-000-01", "ascii", "number", True), ("c01-000-02", "ascii", "number", True)]
    assert counts["lines_kept"] == 2 and len(words) == 6


def test_the_build_keeps_what_fits_and_lists_every_line_in_sources_json(tmp_path):
    root = _write(tmp_path / "iam", {"a01-000u-01": MOVE_LINE, "a01-000u-02": _words("nominating any more Labour"),
                                     "a01-000u-03": _words("life Peers is to be made")},
                  {"a01-000u": [MOVE_TEXT, "nominating any more Labour", "life Peers is to be made"]})
    out = build_recorded(tmp_path / "out", iamondb=root, words_per_page=(2, 4), progress=False)
    src = json.loads((out / "manifest.json").read_text())["meta"]["sources"][0]
    assert src["lines_kept"] == 2 and src["lines_skipped"] == {"cut does not fit the words' lengths": 1}
    prov = json.loads((out / "sources.json").read_text())
    rows = {r["line"]: r for r in prov["iamondb_lines"]}
    assert rows["a01-000u-01"]["kept"] is False and "'.'" in rows["a01-000u-01"]["reason"]
    used = {v for page in prov["page_words"].values() for v in page.values()}
    assert not any(u.startswith("a01-000u-01") for u in used)  # no word of the miscut line reaches a page
    assert "line_report" not in src


def test_a_line_missing_from_the_original_xml_never_takes_its_text_from_the_ascii_file(tmp_path):
    lines = ["he is", "a very very long sentence indeed for one line", "no"]
    root = _write(tmp_path / "iam", {f"a01-000u-0{k + 1}": _words(t) for k, t in enumerate(lines)},
                  {"a01-000u": lines})  # the ascii file has all three lines
    d = root / "original-xml-part/original/a01/a01-000"
    d.mkdir(parents=True)
    (d / "strokesu.xml").write_text(
        '<?xml version="1.0" encoding="ISO-8859-1"?>\n<WhiteboardCaptureSession><General><Form id="a01-000u" '
        'writerID="10039"/></General><Transcription>'
        + "".join(f'<TextLine text="{t}" id="a01-000u-0{k + 1}"/>' for k, t in enumerate(lines[:2]))
        + "</Transcription></WhiteboardCaptureSession>\n", "latin-1")
    got, report = read_iamondb_report(root)
    assert {ln.id: (ln.text, ln.text_note, ln.form_text_source) for ln in got} == {
        f"a01-000u-0{k}": (None, "line count", "original-xml") for k in (1, 2, 3)}
    words, counts = iamondb_words(root)
    rows = {r["line"]: r for r in counts["line_report"]}
    # matched by length from the original xml's two lines; line 3 gets none (the ascii file's "no" is not used)
    assert rows["a01-000u-03"]["text"] is None and rows["a01-000u-03"]["text_source"] is None
    assert rows["a01-000u-02"]["text"] == lines[1] and rows["a01-000u-02"]["text_source"] == "original-xml"
    assert not any(w.text == "no" for w in words)


def test_the_recorded_command_says_how_many_lines_were_kept_and_skipped(tmp_path, capsys):
    from inkground_lib.cli import main

    root = _write(tmp_path / "iam", {"a01-000u-01": MOVE_LINE, "a01-000u-02": _words("nominating any more Labour"),
                                     "a01-000u-03": _words("life Peers is to be made")},
                  {"a01-000u": [MOVE_TEXT, "nominating any more Labour", "life Peers is to be made"]})
    assert main(["recorded", "--iamondb", str(root), "--words-per-page", "2", "4", "--out", str(tmp_path / "ds")]) \
        in (0, None)
    out = capsys.readouterr().out
    assert ("lines: 3 read, 2 kept (cut into words that fit their lengths; 0 matched to their text by length); "
            "skipped, cut does not fit the words' lengths: 1; what each line got: sources.json (iamondb_lines)") in out


def test_a_full_stop_written_close_to_its_word_is_taken_back_from_the_words_end():
    # "Mr" then its full stop 0.3 units later (one piece at pen-up gaps), MOVE in one go this time
    pieces = [(1.2, 1.6), (5.6, 1.6), (1.6, 1.6), (3.6, 1.6), (2.2, 0.3), (0, 1.6), (7.6, 1.0)]
    ink = _ink(pieces)
    tokens = MOVE_TEXT.split()
    assert segment_line_words(ink, len(tokens)) is None  # 6 pieces at pen-up gaps for 7 tokens
    parts, kind, why = cut_line(ink, tokens)
    assert why == "" and [len(p) for p in parts] == [1, 1, 1, 1, 1, 1, 1]
    assert parts[5].n_points == 1 and parts[4].bbox()[2] < parts[5].bbox()[0]  # "." is the dot, "Mr" is without it
    # a piece whose last stroke is no mark (a whole word written close) is refused, not split
    pieces2 = [(1.2, 1.6), (5.6, 1.6), (1.6, 1.6), (3.6, 1.6), (2.2, 0.3), (3.0, 1.6), (7.6, 1.0)]
    parts, kind, why = cut_line(_ink(pieces2), tokens)
    assert parts is None and kind == "count" and "no mark for '.' at the end of 'Mr'" in why
