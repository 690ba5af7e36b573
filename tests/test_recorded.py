"""The recorded dataset builder: layout, page plan, IAM-OnDB words, whole builds (determinism, reuse, shapes)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import pytest

from inkground_lib.core.dataset import DatasetError, load_dataset
from inkground_lib.core.ink import as_ink
from inkground_lib.datasets.recorded import build_recorded
from inkground_lib.datasets.recorded_iamondb import iamondb_words
from inkground_lib.datasets.recorded_inkml import inkml_words
from inkground_lib.datasets.recorded_pages import Layout, compose_page, plan_pages
from inkground_lib.datasets.segmentation import core_height
from inkground_lib.formats.inkml_write import write_inkml
from inkground_lib.formats.unipen import RecordedWord, read_unipen_json

IAM = Path(__file__).resolve().parent / "fixtures" / "iamondb"
UNIPEN = Path(__file__).resolve().parents[1] / "data/unipen_cursive" / "unipen_cursive_dev.json"


def _squiggle(rng, n_letters, unit, x0=0.0):
    u = np.linspace(0, n_letters, n_letters * 10)
    x = x0 + unit * (u + 0.25 * np.sin(2 * np.pi * u))
    y = unit * (1 - 0.5 * (1 + np.cos(2 * np.pi * u))) + rng.normal(0, unit * 0.02, len(u))
    t = np.arange(len(u)) * 10.0
    return np.column_stack([x, y, t])


def _words(n_writers=3, per_writer=6, seed=0):
    """Synthetic recorded words: writer k writes in units k+1 times larger (like different tablets)."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n_writers):
        unit = 50.0 * (k + 1)
        for j in range(per_writer):
            strokes = [_squiggle(rng, int(rng.integers(3, 7)), unit)]
            if j % 2:
                strokes.append(np.array([[unit * 1.5, -unit * 0.8, 500.0]]))  # a dot
            out.append(RecordedWord(f"w{k}-{j:02d}", f"writer{k}", f"word{j}x", as_ink(strokes)))
    return out


def _small_unipen_file(path: Path, words) -> Path:
    samples = [{"id": w.id, "writer_id": w.writer, "contributor": "t", "text": w.text, "style": "CURSIVE",
                "points_per_second": 100.0, "points_per_inch": None,
                "strokes": [s.tolist() for s in w.ink.strokes]} for w in words]
    path.write_text(json.dumps({"meta": {"name": "test"}, "samples": samples}), "utf-8")
    return path


def _similarity_residual(src: np.ndarray, dst: np.ndarray) -> float:
    """Max residual of the best x' = s x + dx, y' = s y + dy fit (least squares)."""
    a = np.zeros((2 * len(src), 3))
    a[0::2, 0], a[0::2, 1] = src[:, 0], 1
    a[1::2, 0], a[1::2, 2] = src[:, 1], 1
    sol, *_ = np.linalg.lstsq(a, dst.reshape(-1), rcond=None)
    return float(np.abs(a @ sol - dst.reshape(-1)).max())


# ============================================================================================ pure parts

def test_compose_page_is_a_similarity_per_word_and_inks_do_not_collide():
    words = [w for w in _words() if w.writer == "writer2"]
    scale = 24.0 / np.median([core_height(w.ink) for w in words])
    comp = compose_page(words, scale, np.random.default_rng(3))
    assert len(comp.inks) == len(words)
    for w, ink, (dx, dy) in zip(words, comp.inks, comp.offsets):
        for a, b in zip(w.ink.strokes, ink.strokes):
            np.testing.assert_allclose(b[:, 0], a[:, 0] * scale + dx, atol=1e-9)
            np.testing.assert_allclose(b[:, 1], a[:, 1] * scale + dy, atol=1e-9)
            np.testing.assert_array_equal(b[:, 2], a[:, 2])  # timing kept
    boxes = [k.bbox() for k in comp.inks]
    for i in range(len(boxes)):
        x0, y0, x1, y1 = boxes[i]
        assert 0 <= x0 and x1 <= comp.width and 0 <= y0 and y1 <= comp.height
        for j in range(i):
            a, b = boxes[i], boxes[j]
            overlap = a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
            assert not overlap, (i, j, a, b)
    # same rng state -> same page
    again = compose_page(words, scale, np.random.default_rng(3))
    assert all(a == b for a, b in zip(comp.inks, again.inks)) and again.pen_width == comp.pen_width


def test_compose_page_widens_for_a_word_wider_than_the_line():
    rng = np.random.default_rng(0)
    long = RecordedWord("x", "w", "long", as_ink([_squiggle(rng, 40, 30.0)]))
    comp = compose_page([long], 1.0, np.random.default_rng(1), Layout(page_width=400))
    assert comp.width > 400 and comp.inks[0].bbox()[2] <= comp.width


def test_plan_pages_one_writer_per_page_disjoint_words():
    words = _words(n_writers=3, per_writer=6) + [RecordedWord("few-0", "few", "abc", as_ink([[[0, 0], [1, 1]]]))]
    words.append(RecordedWord("punct", "writer0", "...", as_ink([[[0, 0], [1, 1]]])))  # no letter: left out
    plan = plan_pages(words, None, (2, 3), np.random.default_rng(0))
    assert sorted(wr for wr, _ in plan) == ["writer0", "writer1", "writer2"]  # 'few' has < 2 words
    for wr, ws in plan:
        assert 2 <= len(ws) <= 3 and {w.writer for w in ws} == {wr}
    # 6 words a writer at most 3 a page: every writer has a second page (6 guaranteed), round-robin order
    more = plan_pages(words, 6, (2, 3), np.random.default_rng(0))
    assert len(more) == 6 and [wr for wr, _ in more[:3]] == [wr for wr, _ in more[3:]]
    ids = [w.id for _, ws in more for w in ws]
    assert len(ids) == len(set(ids)) and "punct" not in ids
    # writers run out: 18 words at >= 2 a page cannot make 20 pages
    assert len(plan_pages(words, 20, (2, 3), np.random.default_rng(0))) <= 9


def test_iamondb_words_from_fixture_lines():
    words, counts = iamondb_words(IAM)
    assert {k: counts[k] for k in ("lines", "lines_with_text", "lines_segmented")} == {
        "lines": 3, "lines_with_text": 3, "lines_segmented": 2}
    # the line "one more line" is cut into 2 words, not 3: skipped, and said why; nothing else went wrong
    assert counts["lines_skipped"] == {"cut at pen-up gaps into another number of words than the transcription's": 1}
    assert (counts["files_found"], counts["files_read"], counts["files_failed"], counts["quirks"]) == (3, 3, 0, {})
    assert [(w.id, w.writer, w.text) for w in words] == [
        ("a01-000u-01-00", "10039", "we"), ("a01-000u-01-01", "10039", "did"), ("a01-000u-01-02", "10039", "it"),
        ("a01-001w-01-00", "iamondb-form-a01-001w", "hello"), ("a01-001w-01-01", "iamondb-form-a01-001w", "there")]
    assert len(words[1].ink) == 2  # "did" with its late i-dot


# ============================================================================================ builds

def _source_writer(ds, root: Path, words_by_id):
    src = json.loads((root / "sources.json").read_text())["page_words"]
    for page in ds.pages:
        writers = {words_by_id[src[page.id][w.id]].writer for w in page.words}
        assert writers == {page.writer}, (page.id, writers)
        yield page, [words_by_id[src[page.id][w.id]] for w in page.words]


def test_build_from_small_unipen_file(tmp_path):
    words = _words(n_writers=3, per_writer=6)
    src = _small_unipen_file(tmp_path / "small.json", words)
    by_id = {w.id: w for w in words}
    a = build_recorded(tmp_path / "a", unipen=src, words_per_page=(4, 6), seed=5, progress=False)
    ds = load_dataset(a)
    assert ds.kind == "recorded" and ds.reference == "true ink" and len(ds.pages) == 3
    assert ds.meta["sources"][0]["sha256"] and ds.meta["seed"] == 5
    n_test = 0
    for page, sources in _source_writer(ds, a, by_id):
        img = page.load_image()
        assert img.shape == (page.height, page.width, 3)
        for w, sw in zip(page.words, sources):
            assert w.text == sw.text and w.true_ink == w.ink
            x0, y0, x1, y1 = w.box
            p = w.ink.points()
            assert (p[:, 0] >= x0 - 1e-6).all() and (p[:, 0] <= x1 + 1e-6).all()
            assert (p[:, 1] >= y0 - 1e-6).all() and (p[:, 1] <= y1 + 1e-6).all()
            assert 0 <= x0 and x1 < page.width and 0 <= y0 and y1 < page.height
            # the recorded trajectory survives up to similarity + homography: a projective fit of the source
            # points onto the dataset's points leaves only the 2-decimal rounding
            s, d = sw.ink.points().astype(np.float32), p.astype(np.float32)
            assert len(s) == len(d)
            H, _ = cv2.findHomography(s, d, 0)
            fit = cv2.perspectiveTransform(s.reshape(-1, 1, 2), H).reshape(-1, 2)
            assert np.abs(fit - d).max() < 0.05
        n_test += sum(w.split == "test" for w in page.words)
        assert 1 <= sum(w.split == "test" for w in page.words) < len(page.words)
    # the writers' different units are scaled to one core height in page pixels
    heights = [np.median([core_height(w.ink) for w in p.words]) for p in ds.pages]
    assert max(heights) / min(heights) < 1.25
    # deterministic: a second folder gets the same bytes
    b = build_recorded(tmp_path / "b", unipen=src, words_per_page=(4, 6), seed=5, progress=False)
    for f in sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file() and p.name != "manifest.json"):
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    ma, mb = json.loads((a / "manifest.json").read_text()), json.loads((b / "manifest.json").read_text())
    ma["meta"]["sources"][0].pop("path"), mb["meta"]["sources"][0].pop("path")
    assert json.dumps(ma["pages"]) == json.dumps(mb["pages"])
    # reuse: same parameters leave the folder untouched; another seed rebuilds it
    stamp = (a / "manifest.json").stat().st_mtime_ns, (a / "pages/p0000.jpg").stat().st_mtime_ns
    build_recorded(tmp_path / "a", unipen=src, words_per_page=(4, 6), seed=5, progress=False)
    assert ((a / "manifest.json").stat().st_mtime_ns, (a / "pages/p0000.jpg").stat().st_mtime_ns) == stamp
    build_recorded(tmp_path / "a", unipen=src, words_per_page=(4, 6), seed=6, progress=False)
    assert load_dataset(a).meta["seed"] == 6
    assert (a / "pages/p0000.jpg").read_bytes() != (b / "pages/p0000.jpg").read_bytes()


def test_build_without_photo_effects_is_an_exact_similarity(tmp_path):
    words = _words(n_writers=2, per_writer=4, seed=1)
    src = _small_unipen_file(tmp_path / "small.json", words)
    out = build_recorded(tmp_path / "clean", unipen=src, words_per_page=(4, 4), effects="none", progress=False)
    ds = load_dataset(out)
    by_id = {w.id: w for w in words}
    for page, sources in _source_writer(ds, out, by_id):
        for w, sw in zip(page.words, sources):
            assert _similarity_residual(sw.ink.points(), w.ink.points()) < 0.01


def test_build_from_iamondb_fixtures(tmp_path):
    out = build_recorded(tmp_path / "iam", iamondb=IAM, words_per_page=(2, 3), progress=False)
    ds = load_dataset(out)
    assert sorted(p.writer for p in ds.pages) == ["10039", "iamondb-form-a01-001w"]
    texts = {p.writer: sorted(w.text for w in p.words) for p in ds.pages}
    assert texts["iamondb-form-a01-001w"] == ["hello", "there"]
    assert len(texts["10039"]) in (2, 3) and set(texts["10039"]) <= {"we", "did", "it"}
    (src,) = ds.meta["sources"]
    assert src["kind"] == "iamondb" and src["lines_segmented"] == 2 and src["lines"] == 3 and src["files"] >= 6
    only = build_recorded(tmp_path / "split", iamondb=IAM, iamondb_split="testset_v", words_per_page=(2, 3),
                          progress=False)
    assert [p.writer for p in load_dataset(only).pages] == ["iamondb-form-a01-001w"]


def test_build_bad_arguments(tmp_path):

    with pytest.raises(ValueError, match="words_per_page"):
        build_recorded(tmp_path / "x", unipen=tmp_path / "none.json", words_per_page=(5, 2))
    with pytest.raises(DatasetError, match="none.json: UNIPEN JSON file not found"):
        build_recorded(tmp_path / "x", unipen=tmp_path / "none.json", progress=False)
    src = _small_unipen_file(tmp_path / "s.json", _words(n_writers=1, per_writer=3))
    with pytest.raises(DatasetError, match="no writer has 4 or more words"):
        build_recorded(tmp_path / "x", unipen=src, words_per_page=(4, 8), progress=False)


def test_build_from_shipped_unipen(tmp_path):
    out = build_recorded(tmp_path / "u", unipen=UNIPEN, pages=3, seed=0, progress=False)
    ds = load_dataset(out)
    by_id = {w.id: w for w in read_unipen_json(UNIPEN)}
    pages = list(_source_writer(ds, out, by_id))
    assert len(pages) == 3 and len({p.writer for p, _ in pages}) == 3
    for page, sources in pages:
        assert 4 <= len(page.words) <= 8
        for w, sw in zip(page.words, sources):
            s, d = sw.ink.points().astype(np.float32), w.ink.points().astype(np.float32)
            H, _ = cv2.findHomography(s, d, 0)
            fit = cv2.perspectiveTransform(s.reshape(-1, 1, 2), H).reshape(-1, 2)
            assert np.abs(fit - d).max() < 0.05


def test_section_01_shows_the_recorded_set_beside_the_synthetic_one(tmp_path):
    from inkground_lib.datasets.statistics import statistics
    from inkground_lib.report.dataset_prose import describe_dataset, recorded_set_sentence
    from inkground_lib.report.tables import beside_paper

    out = build_recorded(tmp_path / "u", unipen=UNIPEN, pages=3, seed=0, progress=False)
    rec = load_dataset(out)
    st = statistics(rec)
    sentence = recorded_set_sentence(rec)
    assert f"{st['pages']} pages by {st['writers']} writers, {st['words']} words" in sentence
    assert "UNIPEN words (JSON) from unipen_cursive_dev.json" in describe_dataset(rec)
    assert recorded_set_sentence(None) == "No recorded dataset was built for this run."
    table = beside_paper({"pages": 7}, [("pages", "pages", "pages")], also={"recorded set (measured)": st})
    assert list(table.columns) == ["ours (measured)", "paper (reported)", "ours / paper", "recorded set (measured)"]
    assert table.loc["pages", "recorded set (measured)"] == st["pages"] == 3


def test_build_refuses_a_users_folder_and_deletes_nothing_it_did_not_write(tmp_path):
    """Issue 11, case 2: `recorded --out` on a folder that is not a dataset removed the user's files."""
    from inkground_lib.core.folders import FolderError

    user = tmp_path / "mine"
    (user / "pages").mkdir(parents=True)
    (user / "inks").mkdir()
    (user / "pages" / "holiday.jpg").write_bytes(b"\xff\xd8 a photo")
    (user / "inks" / "settings.json").write_text("{}")
    with pytest.raises(FolderError, match="not empty and not a recorded dataset"):
        build_recorded(user, unipen=UNIPEN, pages=2, progress=False)
    assert (user / "pages" / "holiday.jpg").read_bytes() == b"\xff\xd8 a photo"
    assert (user / "inks" / "settings.json").read_text() == "{}"
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(FolderError, match="exists and is not a folder"):
        build_recorded(tmp_path / "a_file", unipen=UNIPEN, pages=2, progress=False)
    # its own folder: rebuilt with other settings, a stray file of the user's inside it survives
    out = build_recorded(tmp_path / "rec", unipen=UNIPEN, pages=3, progress=False)
    (out / "pages" / "notes.jpg").write_bytes(b"mine")
    build_recorded(out, unipen=UNIPEN, pages=2, progress=False)
    assert (out / "pages" / "notes.jpg").read_bytes() == b"mine"
    assert sorted(f.name for f in (out / "pages").glob("p*.jpg")) == ["p0000.jpg", "p0001.jpg"]


# ============================================================================================ InkML folders

INKML_FIX = Path(__file__).resolve().parent / "fixtures" / "inkml"


def _inkml_folder(root: Path) -> Path:
    """A folder of word-level InkML: alice/ four words we wrote (truth annotations) and a file holding a line;
    bob/ an ImadocSen-OnDB word file (two words), InkSight words (one with text, one blank) and an Office export
    (no text); at the top a file that is not well-formed and one that is no InkML."""
    rng = np.random.default_rng(4)
    (root / "alice").mkdir(parents=True)
    for j, text in enumerate(["dear", "anna", "thank", "you"]):
        write_inkml(root / "alice" / f"w{j}.inkml", [(f"w{j}", text, [_squiggle(rng, 4 + j, 60.0)])])
    write_inkml(root / "alice" / "line.inkml", [("l0", "two words", [_squiggle(rng, 6, 60.0)])])
    (root / "bob").mkdir()
    for name in ("imadocsen_words", "inksight_word", "inksight_blank", "office_word"):
        shutil.copy(INKML_FIX / f"{name}.inkml", root / "bob" / f"{name}.inkml")
    (root / "broken.inkml").write_text("<ink><trace>1 2", "utf-8")
    (root / "notes.ink").write_text("<svg/>", "utf-8")
    return root


def test_inkml_words_one_writer_per_folder_or_per_file(tmp_path):
    root = _inkml_folder(tmp_path / "ink")
    words, src = inkml_words(root, writer="folder")
    assert [(w.writer, w.text) for w in words] == [
        ("inkml:alice", "dear"), ("inkml:alice", "anna"), ("inkml:alice", "thank"), ("inkml:alice", "you"),
        ("inkml:bob", "we"), ("inkml:bob", "go"), ("inkml:bob", "his")]
    assert words[4].id == "bob/imadocsen_words.inkml#traceGroup-Word_t_1_1" and words[6].id == "bob/inksight_word.inkml#0"
    assert words[6].meta["dialect"] == "inksight" and words[0].meta["file"] == "alice/w0.inkml"
    assert (src["files_found"], src["files_parsed"], src["files_failed"]) == (11, 9, 1)
    failed = dict(src["failed_files"])
    assert failed["broken.inkml"].startswith("not well-formed XML")
    # a file that is not InkML at all is named as such (issue 33), not as a broken InkML file
    assert dict(src["files_not_inkml"]) == {"notes.ink": "not InkML: root element is <svg>, expected <ink>"}
    assert src["words_skipped"] == {"group without text": 2, "text of several words (not word-level)": 1}
    assert src["dialects"] == {"inksight": 2, "w3c": 7} and src["writers"] == 2
    assert src["warnings_by_kind"]["dialect"] == 2 and src["warnings_by_kind"]["no-namespace"] == 1
    assert any("imadocsen_words.inkml" in w and "context_t_2" in w for w in src["warning_examples"])
    per_file, src2 = inkml_words(root, writer="file")
    assert {w.writer for w in per_file} == {"inkml:alice/w0", "inkml:alice/w1", "inkml:alice/w2", "inkml:alice/w3",
                                            "inkml:bob/imadocsen_words", "inkml:bob/inksight_word"}
    assert src2["sha256"] == src["sha256"] and src2["writer_rule"] == "file"
    with pytest.raises(ValueError, match="inkml writer"):
        inkml_words(root, writer="page")
    with pytest.raises(DatasetError, match="no InkML files"):
        inkml_words(_empty(tmp_path))


def _empty(tmp_path: Path) -> Path:
    (tmp_path / "empty").mkdir()
    return tmp_path / "empty"


def test_build_from_a_folder_of_inkml_words(tmp_path):
    root = _inkml_folder(tmp_path / "ink")
    out = build_recorded(tmp_path / "rec", inkml=root, inkml_writer="folder", words_per_page=(3, 4), progress=False)
    ds = load_dataset(out)
    assert sorted(p.writer for p in ds.pages) == ["inkml:alice", "inkml:bob"]
    texts = {p.writer: sorted(w.text for w in p.words) for p in ds.pages}
    assert texts["inkml:bob"] == ["go", "his", "we"] and len(texts["inkml:alice"]) in (3, 4)
    assert set(texts["inkml:alice"]) <= {"anna", "dear", "thank", "you"}
    (src,) = ds.meta["sources"]
    assert src["kind"] == "inkml" and src["words"] == 7
    assert src["files_failed"] == 1 and src["files_not_inkml_count"] == 1
    for page in ds.pages:  # composed as the other sources: one writer per page, inks on the page
        for w in page.words:
            x0, y0, x1, y1 = w.box
            assert 0 <= x0 < x1 <= page.width and 0 <= y0 < y1 <= page.height
    with pytest.raises(DatasetError, match=r"the sources hold no words .*InkML files read, 1 failed"):
        (tmp_path / "bad").mkdir()
        (tmp_path / "bad" / "x.inkml").write_text("<ink>", "utf-8")
        build_recorded(tmp_path / "rec2", inkml=tmp_path / "bad", progress=False)


def test_the_recorded_command_builds_from_inkml_and_prints_what_it_assumed(tmp_path):
    root = _inkml_folder(tmp_path / "ink")
    r = subprocess.run([sys.executable, "-m", "inkground_lib.cli", "recorded", "--inkml", str(root), "--inkml-writer", "folder", "--out",
                        str(tmp_path / "rec"), "--words-per-page", "3", "4", "--quiet"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert f"InkML {root.resolve()} (writer per folder, dialect auto): 9 of 11 files read, 1 failed" in out
    assert "broken.inkml: not well-formed XML" in out and "notes.ink: not InkML: root element is <svg>" in out
    assert "assumed (" in out and "undefined-context: 1" in out and "stray-point: 2" in out
    assert "bob/imadocsen_words.inkml: <trace id=\"trace_t_1_2_1\">: contextRef 'context_t_2' names no context" in out
    assert "words: 7 from 2 writers" in out and "left out, group without text: 2" in out
    assert "pages: 2 (3-4 words each, one writer per page), writers: 2" in out


# ---- issue 33: folders of InkML as users keep them

def test_inkml_writers_come_from_writer_annotations_else_folder_else_file(tmp_path):
    rng = np.random.default_rng(7)
    root = tmp_path / "ink"
    (root / "session1").mkdir(parents=True)
    # 15 files at the top, each one word, written by 3 people who say so in <annotation type="writer">
    for j in range(15):
        write_inkml(root / f"word{j:02d}.inkml", [(f"w{j}", ["dear", "anna", "thank", "you", "very"][j % 5],
                                                    [_squiggle(rng, 4, 60.0)])],
                    document_annotations={"writer": f"writer-{j % 3}"})
    for j, text in enumerate(["one", "two", "three", "four"]):  # a folder without writer annotations
        write_inkml(root / "session1" / f"w{j}.inkml", [(f"s{j}", text, [_squiggle(rng, 4, 60.0)])])
    write_inkml(root / "alone.inkml", [("a0", "lonely", [_squiggle(rng, 4, 60.0)])])  # top level, no annotation
    words, src = inkml_words(root)
    by = Counter(w.writer for w in words)
    assert by == {"inkml:writer-0": 5, "inkml:writer-1": 5, "inkml:writer-2": 5, "inkml:session1": 4,
                  "inkml:alone": 1}
    assert src["writer_sources"] == {"annotation": 15, "file": 1, "folder": 4}
    with pytest.warns(UserWarning, match=r"1 writer\(s\) with fewer than 4 words are left out: inkml:alone \(1\); "
                                         r"--words-per-page .* keeps them; with --inkml, --inkml-writer folder"):
        out = build_recorded(tmp_path / "rec", inkml=root, progress=False)
    ds = load_dataset(out)
    assert {p.writer for p in ds.pages} == {"inkml:writer-0", "inkml:writer-1", "inkml:writer-2", "inkml:session1"}
    assert ds.meta["writers_left_out"] == [["inkml:alone", 1]]
    # annotation only: the files without one are named, with the options that would keep them
    words, src = inkml_words(root, writer="annotation")
    assert {w.writer for w in words} == {"inkml:writer-0", "inkml:writer-1", "inkml:writer-2"}
    assert sorted(f for f, _ in src["files_without_writer"]) == ["alone.inkml"] + [
        f"session1/w{j}.inkml" for j in range(4)]
    assert "--inkml-writer auto or folder or file" in src["files_without_writer"][0][1]


def test_no_writer_with_enough_words_names_them_and_the_options(tmp_path):
    rng = np.random.default_rng(8)
    root = tmp_path / "ink"
    root.mkdir()
    for j in range(6):
        write_inkml(root / f"w{j}.inkml", [(f"w{j}", "hello", [_squiggle(rng, 4, 60.0)])])
    with pytest.raises(DatasetError, match=r"no writer has 4 or more words with letters \(6 writers, 6 words: "
                                           r"inkml:w0 \(1\), .*--inkml-writer folder"):
        build_recorded(tmp_path / "rec", inkml=root, inkml_writer="file", progress=False)


def test_math_and_symbols_are_not_targets_unless_asked_and_office_xml_is_read(tmp_path):
    rng = np.random.default_rng(9)
    root = tmp_path / "ink"
    root.mkdir()
    items = [(f"g{j}", t, [_squiggle(rng, 4, 60.0)]) for j, t in enumerate(["\\sum", "\\theta", "x^2", "42", "word"])]
    write_inkml(root / "crohme.inkml", items)
    shutil.copy(INKML_FIX / "office_word.inkml", root / "journal.xml")  # Word / OneNote / Journal save .xml
    (root / "other.xml").write_text("<settings><a/></settings>", "utf-8")
    (root / "binary.ink").write_bytes(b"\x00\x01ISF\x02\x03" * 10)
    words, src = inkml_words(root)
    assert [w.text for w in words] == ["word"]
    assert src["words_skipped"]["text not a word (math, symbols or numbers; --inkml-symbols keeps them)"] == 4
    assert any("'\\\\sum' is not a word" in e for e in src["words_skipped_examples"])
    assert "journal.xml" in {w.meta["file"] for w in words} or src["files_parsed"] == 2  # read, whatever its text
    assert dict(src["files_not_inkml"]) == {
        "binary.ink": "not InkML: not an XML file (another program's ink format?)",
        "other.xml": "not InkML: root element is <settings>, expected <ink>"}
    words, _ = inkml_words(root, symbols=True)
    assert [w.text for w in words] == ["\\sum", "\\theta", "x^2", "42", "word"]
    # a CROHME file ($a+b$): its symbols, even the letters a and b, are no words; its "Segmentation" group neither
    shutil.copy(INKML_FIX / "crohme_style.inkml", root / "expr.inkml")
    words, src = inkml_words(root)
    assert [w.text for w in words] == ["word"]
    assert src["words_skipped"]["a symbol of a mathematical expression (--inkml-symbols keeps them)"] == 4
    words, _ = inkml_words(root, symbols=True)
    assert [w.text for w in words if w.meta["file"] == "expr.inkml"] == ["a", "+", "b", "ab"]


def test_an_inkml_word_text_over_the_limit_is_left_out_and_named(tmp_path):
    from inkground_lib.core.defaults import MAX_WORD_TEXT

    rng = np.random.default_rng(10)
    root = tmp_path / "ink"
    root.mkdir()
    write_inkml(root / "long.inkml", [("g0", "w" * (MAX_WORD_TEXT + 1), [_squiggle(rng, 4, 60.0)]),
                                      ("g1", "fine", [_squiggle(rng, 4, 60.0)])])
    words, src = inkml_words(root)
    assert [w.text for w in words] == ["fine"]
    assert src["words_skipped"] == {"text longer than MAX_WORD_TEXT": 1}
    assert src["words_skipped_examples"] == [f"long.inkml#g0: a text of {MAX_WORD_TEXT + 1} characters (at most "
                                             f"{MAX_WORD_TEXT})"]


def test_hostile_inkml_files_are_named_and_skipped_and_the_build_goes_on(tmp_path, monkeypatch):
    import inkground_lib.formats.inkml as inkml_mod
    from inkground_lib.core import defaults

    rng = np.random.default_rng(11)
    root = tmp_path / "ink"
    root.mkdir()
    for j, t in enumerate(["dear", "anna", "thank", "you"]):
        write_inkml(root / f"ok{j}.inkml", [(f"g{j}", t, [_squiggle(rng, 4, 60.0)])],
                    document_annotations={"writer": "ann"})
    (root / "deep.inkml").write_text('<ink xmlns="http://www.w3.org/2003/InkML">' + "<traceGroup>" * 5000
                                     + "<trace>1 2, 3 4</trace>" + "</traceGroup>" * 5000 + "</ink>", "utf-8")
    (root / "long.inkml").write_text('<ink xmlns="http://www.w3.org/2003/InkML"><traceGroup><annotation type="truth">'
                                     "huge</annotation><trace>" + ", ".join(f"{i} {i % 7}" for i in range(3000))
                                     + "</trace></traceGroup></ink>", "utf-8")
    monkeypatch.setattr(inkml_mod, "MAX_INK_POINTS", 2000)  # stands for the 10-million-point trace
    words, src = inkml_words(root)
    failed = dict(src["failed_files"])
    assert "nested 101 levels deep" in failed["deep.inkml"] and "MAX_XML_DEPTH" in failed["deep.inkml"]
    assert "more than 2,000 points (MAX_INK_POINTS)" in failed["long.inkml"]
    assert sorted(w.text for w in words) == ["anna", "dear", "thank", "you"]
    # a word over the word limit is left out and named, the others kept
    monkeypatch.setattr(inkml_mod, "MAX_INK_POINTS", 10**6)
    monkeypatch.setattr(defaults, "MAX_WORD_POINTS", 1000)
    words, src = inkml_words(root)
    assert src["words_skipped"]["ink over MAX_WORD_POINTS"] == 1
    assert any(e.startswith("long.inkml#") and "3,000 points (at most 1,000)" in e for e in src["words_skipped_examples"])
    out = build_recorded(tmp_path / "rec", inkml=root, progress=False)
    assert sorted(w.text for p in load_dataset(out).pages for w in p.words) == ["anna", "dear", "thank", "you"]
