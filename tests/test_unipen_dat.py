"""The original UNIPEN .dat reader, the release walker, recorded pages from a release folder and the CLI path.

The fixture release (tests/fixtures/unipen_dat/release, described in its README.md) reproduces the quirks of
train_r01_v07: nested includes, pen-up components with samples and empty .PEN_UP markers, .DT, both range
forms and comma lists, data included before the .doc that gives .COORD (pcl), a 3-value sample in X Y data
(hpb43ajj), escaped and unpatched labels; plus bad input (missing include, include escaping the root,
garbage numbers, out-of-range segments, truncated files, a file that is no UNIPEN)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from inkground_lib.cli import main
from inkground_lib.core.dataset import DatasetError, load_dataset
from inkground_lib.core.repo_paths import portable_path
from inkground_lib.datasets.recorded import build_recorded
from inkground_lib.formats.unipen_dat import (
    parse_delineation,
    parse_unipen,
    read_unipen_dat,
    writer_key,
)
from inkground_lib.formats.unipen_release import (
    failure_kind,
    quality_set,
    read_unipen_release,
)
from inkground_lib.formats.xmlsafe import FormatError

FIX = Path(__file__).resolve().parent / "fixtures" / "unipen_dat"
REL = FIX / "release"


def _words(path, levels=("WORD",)):
    return read_unipen_dat(REL / path, REL, levels=list(levels))


def _pts(*rows):
    return np.asarray(rows, dtype=np.float64)


# ============================================================================================ one file

def test_components_count_pen_up_with_samples_but_not_markers_or_dt():
    doc = parse_unipen(REL / "data/6/abc/w1.dat", REL)
    assert len(doc.components) == 14
    assert [c.pen_down for c in doc.components[:5]] == [False, True, True, False, True]
    assert [len(c.samples) for c in doc.components[:5]] == [2, 5, 3, 1, 2]
    assert doc.components[0].file == "include/abc/data/w1.dat" and doc.components[0].line == 10
    assert set(doc.files) == {"data/6/abc/w1.dat", "include/abc/abc.doc", "include/abc/data/w1.dat"}
    assert all(len(h) == 64 for h in doc.files.values())
    assert [s.level for s in doc.segments] == ["WORD"] * 6 and doc.state.hierarchy == ("TEXT", "WORD", "CHARACTER")


def test_word_ink_follows_the_json_subset_convention():
    words, skipped = _words("data/6/abc/w1.dat")
    assert skipped == [] and [w.text for w in words] == ["hi", "go", "it's", 'x"y', "on", '"']
    hi = words[0]
    # pen-down components 1, 2, 4 only; x from 0, y = max y - y (the dot at y 561 is the top), t = k * 10 ms
    assert [len(s) for s in hi.ink.strokes] == [5, 3, 2]
    np.testing.assert_array_equal(hi.ink.strokes[0], _pts([0, 61, 0], [10, 41, 10], [20, 21, 20], [30, 41, 30],
                                                          [40, 61, 40]))
    np.testing.assert_array_equal(hi.ink.strokes[2], _pts([65, 1, 80], [66, 0, 90]))
    assert hi.id == "data/6/abc/w1.dat#0" and hi.writer == writer_key("abc", "W1", "") == "unipen-abc-66ed71"
    assert hi.meta == {"category": "6", "level": "WORD", "style": "CURSIVE", "quality": "GOOD", "contributor": "abc",
                       "data_source": "Test fixture, made up for inkground", "data_id": "abc0",
                       "points_per_inch": 1000.0, "y_points_per_inch": 1000.0, "points_per_second": 100.0,
                       "file": "data/6/abc/w1.dat", "data_file": "include/abc/data/w1.dat", "segment": "0-4",
                       "segment_written": "0-4",
                       "line": 7, "source_writer_id": "W1"}


def test_delineation_forms_cut_the_right_samples():
    words, _ = _words("data/6/abc/w1.dat")
    go, its, xy = words[1], words[2], words[3]
    # 5:2-7:10: samples 2.. of component 5, all of 6, samples ..10 of 7
    assert [len(s) for s in go.ink.strokes] == [4, 2, 11]
    assert go.ink.strokes[0][0, 0] == 0 and go.ink.strokes[2][-1, 0] == 360 - 310
    # 8-9:3,11: all of 8, samples 0-3 of 9, all of 11 (10 skipped)
    assert [len(s) for s in its.ink.strokes] == [3, 4, 4]
    assert its.ink.strokes[2][0, 0] == 460 - 400
    assert its.ink.strokes[2][0, 2] == 70.0  # t counts pen-down samples of the word only
    # 12:1-12: samples 1.. of component 12; label with an escaped quote
    assert [len(s) for s in xy.ink.strokes] == [2] and xy.meta["quality"] == "BAD"
    assert parse_delineation("0-3,5:2-7:10,9,4-6:2,1:3-2") == [(0, None, 3, None), (5, 2, 7, 10), (9, None, 9, None),
                                                               (4, None, 6, 2), (1, 3, 2, None)]
    for bad in ("3-1", "2:5-2:1", "1:2", "a-b", "1--2", ""):
        with pytest.raises(FormatError, match="delineation"):
            parse_delineation(bad)


def test_nested_include_crlf_and_resolution_changing_after_include_and_within_the_file():
    words, skipped = _words("data/6/abc/w2.dat")
    assert skipped == [] and [w.text for w in words] == ["am", "be", "me", "we"]
    assert {w.meta["style"] for w in words} == {"MIXED"} and words[0].meta["source_writer_id"] == "W2"
    # .X_POINTS_PER_MM 20 after the included .doc's 1000 per inch
    assert all(w.meta["points_per_inch"] == pytest.approx(508.0) for w in words)
    assert [w.meta["points_per_second"] for w in words] == [200.0, 200.0, 100.0, 100.0]
    assert words[0].ink.strokes[1][0, 2] == 4 * 5.0 and words[2].ink.strokes[0][1, 2] == 10.0
    assert words[0].meta["data_file"] == "include/abc/data/w2.dat"


def test_data_before_coord_and_a_damaged_component_spoil_only_their_segments():
    doc = parse_unipen(REL / "data/6/xyz/w3.dat", REL)
    assert doc.unknown_keywords == {"Y_POSITIVE": 1}
    assert [c.error is None for c in doc.components] == [True, True, False, True]
    assert "include/xyz/data/w3.dat:17: .PEN_DOWN: 7 values are not whole samples" in doc.problems[0]
    words, skipped = _words("data/6/xyz/w3.dat")
    assert [w.text for w in words] == ["ab", "ef"]
    assert words[0].meta["points_per_inch"] == 500.0 and words[0].meta["y_points_per_inch"] == 400.0
    assert words[0].meta["points_per_second"] == 50.0 and words[0].ink.strokes[1][0, 2] == 60.0
    ((where, why),) = skipped
    assert where == "data/6/xyz/w3.dat:5" and "uses damaged component 2" in why and "truncated?" in why


def test_text_level_segments_join_multiline_labels():
    words, _ = _words("data/8/abc/w1.dat", levels=("TEXT",))
    (text,) = words
    assert text.text == 'hi go it\'s x"y on' and len(text.ink) == 12 and text.meta["category"] == "8"
    assert _words("data/8/abc/w1.dat")[0] == []  # no WORD segment there


@pytest.mark.parametrize("name, message", [
    ("missing_include.dat", r"missing_include.dat:3: .INCLUDE: .INCLUDE bad/nothere.dat: file not found"),
    ("escape.dat", (r"escape.dat:2: .INCLUDE: .INCLUDE ../../outside.dat: .*outside.dat lies outside the "
                    r"release root .*; refused")),
    ("notunipen.dat", r"notunipen.dat:1: text before the first .KEYWORD statement"),
])
def test_file_level_errors_name_file_line_and_keyword(name, message):
    with pytest.raises(FormatError, match=message):
        parse_unipen(REL / "data/6/bad" / name, REL)


def test_segment_level_errors_are_skipped_with_a_reason():
    words, skipped = _words("data/6/bad/garbage.dat")
    assert [w.text for w in words] == ["good"]
    reasons = dict(skipped)
    assert "uses damaged component 0" in reasons["data/6/bad/garbage.dat:13"]
    assert "'2O' is not a number" in reasons["data/6/bad/garbage.dat:13"]
    assert "quality 'FINE' is not one of" in reasons["data/6/bad/garbage.dat:15"]
    assert "label 'unquoted' is not a double-quoted string" in reasons["data/6/bad/garbage.dat:16"]
    assert "runs backwards" in reasons["data/6/bad/garbage.dat:17"]
    words, skipped = _words("data/6/bad/out_of_range.dat")
    assert [w.text for w in words] == ["fine"]
    reasons = dict(skipped)
    assert "component 99 out of range (the file has 2 components, 0-1)" in reasons["data/6/bad/out_of_range.dat:11"]
    assert "sample 7 of component 1 out of range (it has 3 samples" in reasons["data/6/bad/out_of_range.dat:12"]
    assert "no pen-down samples" in reasons["data/6/bad/out_of_range.dat:13"]
    # truncated in the middle of a sample / of a statement
    doc = parse_unipen(REL / "data/6/bad/truncated.dat", REL)
    assert doc.components[-1].error.endswith("5 values are not whole samples of .COORD X Y T (3 values each; truncated?)")
    words, skipped = _words("data/6/bad/truncated_segment.dat")
    assert [w.text for w in words] == ["cut"]
    assert "missing label" in skipped[0][1] and failure_kind(skipped[0][1]) == "incomplete .SEGMENT"


def test_bad_inputs_written_on_the_fly(tmp_path):
    root = tmp_path / "rel"
    (root / "include").mkdir(parents=True)
    f = root / "a.dat"
    cases = {
        ".VERSION 1.0\n.COORD X Y\n.POINTS_PER_SECOND fast\n": r"a.dat:3: .POINTS_PER_SECOND: 'fast' is not a number",
        ".VERSION 1.0\n.COORD T P\n": r"a.dat:2: .COORD: channels T P lack X or Y",
        ".VERSION 1.0\n.PEN_DOWN\n1 2\n": r"a.dat:2: .PEN_DOWN: samples but no .COORD statement",
        ".VERSION 1.0\n.INCLUDE a.dat\n": r"a.dat:2: .INCLUDE: .INCLUDE a.dat: includes itself",
        "": r"a.dat: no .KEYWORD statement",
        "\x00\x01binary": r"not a UNIPEN text file",
    }
    for text, message in cases.items():
        f.write_text(text, "latin-1")
        with pytest.raises(FormatError, match=message):
            parse_unipen(f, root)
    f.write_text(".VERSION 1.0\n.COORD X Y\n.WRITER_ID w\n.PEN_DOWN\n1 2\n3 nan\n.SEGMENT WORD 0 OK \"x\"\n")
    words, skipped = read_unipen_dat(f, root)
    assert words == [] and "'nan' is not a finite number" in skipped[0][1]


# ============================================================================================ release

def test_release_report_counts_failures_skips_and_selection():
    words, rep = read_unipen_release(REL, category=None, style=None, quality=None, level="WORD")
    assert rep.files_found == 12 and rep.files_parsed == 9
    assert [f for f, _ in rep.files_failed] == ["data/6/bad/escape.dat", "data/6/bad/missing_include.dat",
                                                "data/6/bad/notunipen.dat"]
    assert rep.failures_by_kind() == {"include outside the root": 1, "missing include": 1, "not a UNIPEN file": 1}
    assert rep.skipped == {"bad delineation": 1, "bad label": 1, "bad quality": 1, "garbage number": 1,
                           "incomplete .SEGMENT": 1, "incomplete sample (truncated?)": 1, "no pen-down samples": 1,
                           "range out of bounds": 2}
    # category 7 repeats two category-6 words of the same data: kept once
    assert rep.not_selected == {"duplicate (another category)": 2}
    assert rep.segments_read == 26 and rep.segments_other_level == 1 and rep.words_selected == len(words) == 15
    assert rep.unknown_keywords == {"Y_POSITIVE": 1} and len(rep.damaged_components) == 3
    assert rep.by_style == {"CURSIVE": 11, "MIXED": 4, "PRINTED": 2}  # read, before selection
    assert "include/abc/data/w1.dat" in rep.files and len(rep.digest()) == 64
    text = rep.summary()
    assert "12 found, 9 parsed, 3 failed" in text and "missing include: 1" in text
    meta = rep.as_meta()
    assert meta["files_failed"] == 3 and meta["failed_files"][1][0] == "data/6/bad/missing_include.dat"
    json.dumps(meta)


def test_release_selection_options():
    cursive, rep = read_unipen_release(REL, category="6", style="CURSIVE", quality="!BAD")
    assert {w.meta["style"] for w in cursive} == {"CURSIVE"} and "BAD" not in {w.meta["quality"] for w in cursive}
    assert rep.not_selected == {"style": 6, "quality": 1} and rep.selection["quality"] == "GOOD,OK,?"
    good, _ = read_unipen_release(REL, category="6", style="cursive,mixed", quality="GOOD")
    assert sorted(w.text for w in good) == ["be", "hi"]
    anything, _ = read_unipen_release(REL, category=["6", "7"], style=None, quality=None)
    assert len(anything) == 15 and {w.meta["category"] for w in anything} == {"6"}
    assert quality_set("-BAD") == {"GOOD", "OK", "?"} and quality_set(None) is None
    with pytest.raises(ValueError, match="quality"):
        quality_set("EXCELLENT")
    with pytest.raises(FormatError, match="no category folder data/5"):
        read_unipen_release(REL, category="5")
    with pytest.raises(FormatError, match=r"not a UNIPEN release \(no data/<category>/ folders\)"):
        read_unipen_release(FIX)  # a folder of .dat files that is no release: categories cannot be selected


# ============================================================================================ pages

def test_build_recorded_from_a_release_folder(tmp_path):
    out = build_recorded(tmp_path / "r", unipen_dir=REL, style=None, quality="!BAD", words_per_page=(2, 3),
                         seed=1, progress=False)
    ds = load_dataset(out)
    words, _ = read_unipen_release(REL, style=None, quality="!BAD")
    by_id = {w.id: w for w in words}
    src = json.loads((out / "sources.json").read_text())["page_words"]
    assert len(ds.pages) >= 3
    for page in ds.pages:
        assert 2 <= len(page.words) <= 3
        sources = [by_id[src[page.id][w.id]] for w in page.words]
        assert {s.writer for s in sources} == {page.writer}  # one writer per page
        assert all(s.text == w.text for s, w in zip(sources, page.words))
    (s,) = ds.meta["sources"]
    assert s["kind"] == "unipen_dir" and s["path"] == portable_path(REL) and len(s["sha256"]) == 64
    assert s["selection"] == {"category": "6", "style": None, "quality": "GOOD,OK,?", "level": "WORD"}
    assert s["files_parsed"] == 7 and s["files_failed"] == 3 and s["words"] == 14
    assert ds.meta["params"]["words_per_page"] == [2, 3]
    # style selection: only the MIXED writer's pages
    with pytest.warns(UserWarning, match="only 2 of the 5 pages requested"):
        mixed = load_dataset(build_recorded(tmp_path / "m", unipen_dir=REL, style="MIXED", words_per_page=(2, 2),
                                            pages=5, progress=False))
    assert {p.writer for p in mixed.pages} == {"unipen-abc-0ef18b"} and len(mixed.pages) == 2  # 4 words
    # the default words per page for a release is paper-like: the fixture's writers have too few words
    with pytest.raises(DatasetError, match="no writer has 20 or more words"):
        build_recorded(tmp_path / "d", unipen_dir=REL, progress=False)
    with pytest.raises(DatasetError, match="UNIPEN release folder not found"):
        build_recorded(tmp_path / "x", unipen_dir=tmp_path / "nothing", progress=False)
    with pytest.raises(DatasetError, match="the sources hold no words.*selection"):
        build_recorded(tmp_path / "x", unipen_dir=REL, style="PRINTED", category="7",
                       progress=False)


def test_cli_recorded_from_a_release_folder(tmp_path, capsys):
    code = main(["recorded", "--unipen-dir", str(REL), "--out", str(tmp_path / "c"), "--style", "CURSIVE,MIXED",
                 "--words-per-page", "2-3", "--seed", "2", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "files: 10 found, 7 parsed, 3 failed; include outside the root: 1; missing include: 1" in out
    assert "data/6/bad/missing_include.dat:3: .INCLUDE" in out
    assert "words selected: 12 from 5 writers" in out
    ds = load_dataset(tmp_path / "c")
    assert f"pages: {len(ds.pages)} (2-3 words each, one writer per page)" in out
    assert main(["recorded", "--unipen-dir", str(REL), "--out", str(tmp_path / "e"), "--words-per-page", "3", "2",
                 "--quiet"]) == 2
    assert "words_per_page" in capsys.readouterr().err


def _own_file(folder: Path) -> Path:
    """A UNIPEN file written by hand from the format definition (not a release): two writers, two words each,
    segments before their components, resolution and sampling rate set once."""
    lines = [".VERSION 1.0", ".DATA_SOURCE ourlab", ".COORD X Y", ".X_POINTS_PER_INCH 500",
             ".Y_POINTS_PER_INCH 500", ".POINTS_PER_SECOND 100", ".HIERARCHY PAGE WORD", ".STYLE CURSIVE"]
    for wi, (writer, word) in enumerate([("ann", "hello"), ("ann", "world"), ("bob", "cursive"), ("bob", "again")]):
        lines += [f".WRITER_ID {writer}", f'.SEGMENT WORD {2 * wi}-{2 * wi + 1} OK "{word}"']
        for k in range(2):
            lines.append(".PEN_DOWN")
            lines += [f"{100 * k + 3 * i} {200 + (i % 7) * 4 - 10 * k}" for i in range(20)]
            lines.append(".PEN_UP")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "ours" / "mine.dat"
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_folder_of_ones_own_dat_files_is_read_without_categories(tmp_path, capsys):
    _own_file(tmp_path / "own")
    words, report = read_unipen_release(tmp_path / "own", category=None, style="CURSIVE")
    assert [w.text for w in words] == ["hello", "world", "cursive", "again"]
    assert report.files_found == report.files_parsed == 1 and len({w.writer for w in words}) == 2
    first = words[0].ink
    assert len(first) == 2 and first.points()[:, 0].min() == 0 and first.points()[:, 1].min() == 0
    assert np.allclose(np.diff(first.strokes[0][:, 2]), 10.0)  # 100 samples per second: 10 ms apart
    with pytest.raises(FormatError, match=r"not a UNIPEN release .*give --category any"):
        read_unipen_release(tmp_path / "own", category="6")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FormatError, match="no .dat or .unp files and no data/ folder"):
        read_unipen_release(tmp_path / "empty", category=None)
    assert main(["recorded", "--unipen-dir", str(tmp_path / "own"), "--category", "any", "--words-per-page", "2",
                 "2", "--out", str(tmp_path / "ds"), "--quiet"]) in (0, None)
    ds = load_dataset(tmp_path / "ds")
    assert len(ds.pages) == 2 and sorted(len(p.words) for p in ds.pages) == [2, 2]
    assert all(len({w.text for w in p.words} & {"hello", "world"}) in (0, 2) for p in ds.pages)  # one writer a page


# ---- issue 33: .unp files, '?' delineations where unambiguous, no "None" in a message

def _unknown_file(path: Path, before: bool, explicit_first: bool = False) -> Path:
    """A UNIPEN file whose WORD segments say '?' for their delineation; each segment before (``before``) or after
    its two pen-down components; with ``explicit_first`` the first segment is numbered."""
    lines = [".VERSION 1.0", ".COORD X Y", ".POINTS_PER_SECOND 100", ".HIERARCHY WORD", ".STYLE CURSIVE",
             ".WRITER_ID ann"]
    for wi, word in enumerate(["hello", "world", "again"]):
        delin = f"{2 * wi}-{2 * wi + 1}" if (explicit_first and wi == 0) else "?"
        seg = f'.SEGMENT WORD {delin} OK "{word}"'
        pen = []
        for k in range(2):
            pen += [".PEN_DOWN"] + [f"{100 * k + 3 * i + 1000 * wi} {200 + (i % 7) * 4}" for i in range(10)]
            pen += [".PEN_UP"]
        lines += ([seg] + pen) if before else (pen + [seg])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("before", [True, False])
def test_unknown_delineations_are_read_where_unambiguous(tmp_path, before):
    f = _unknown_file(tmp_path / "own" / "w.unp", before)
    words, report = read_unipen_release(tmp_path / "own", category="any", style=None)
    assert [w.text for w in words] == ["hello", "world", "again"]  # the .unp file is read
    assert all(len(w.ink) == 2 for w in words)
    assert [(w.meta["segment"], w.meta["segment_written"]) for w in words] == [("0-1", "?"), ("2-3", "?"),
                                                                               ("4-5", "?")]
    from inkground_lib.formats.unipen_dat import parse_unipen, resolve_unknown_delineation

    doc = parse_unipen(f, tmp_path / "own")
    assert [resolve_unknown_delineation(doc, s) for s in doc.segments] == ["0-1", "2-3", "4-5"]


def test_an_unknown_delineation_that_is_ambiguous_is_skipped_and_named(tmp_path):
    path = tmp_path / "own" / "w.dat"
    path.parent.mkdir(parents=True)
    # one '?' segment between two runs of components: before or after, both readings fit
    path.write_text("\n".join([".VERSION 1.0", ".COORD X Y", ".HIERARCHY WORD", ".WRITER_ID ann", ".PEN_DOWN",
                               "0 0 5 5", ".PEN_UP", '.SEGMENT WORD ? OK "one"', ".PEN_DOWN", "9 9 12 14",
                               ".PEN_UP"]) + "\n")
    words, report = read_unipen_release(tmp_path / "own", category="any", style=None)
    assert words == []
    (why,) = report.skipped_examples.values()
    assert "w.dat:8: .SEGMENT WORD ?: delineation '?' is ambiguous: the document's segments could stand after " \
           "their data or before it" in why


def test_no_none_in_the_release_messages(tmp_path):
    _own_file(tmp_path / "own")
    with pytest.raises(FormatError) as e:
        read_unipen_release(tmp_path / "own", category="6")
    assert "None" not in str(e.value) and "--category any" in str(e.value)
