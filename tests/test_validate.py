"""The manifest's JSON Schema and `validate_dataset`: every schema fault reported with file, record and field;
file faults through load_dataset; the shipped schema file, its id pattern and the book page that shows it."""
import json
import re
import shutil
from pathlib import Path

import pytest

from inkground_lib.core.dataset import DatasetError, load_dataset
from inkground_lib.core.defaults import (
    MAX_INK_FILE_BYTES,
    MAX_INK_FILE_ENV,
    MAX_MANIFEST_BYTES,
    MAX_MANIFEST_ENV,
    MAX_PAGE_SIDE,
)
from inkground_lib.core.layout import ROOT
from inkground_lib.core.manifest_schema import (
    ID_RULE,
    KINDS,
    SPLITS,
    id_pattern,
    manifest_schema,
    manifest_validator,
    schema_file,
    schema_text,
    write_schema,
)
from inkground_lib.core.validate import (
    exit_code,
    format_report,
    problem_from_error,
    validate_dataset,
)
from inkground_lib.datasets.recorded import build_recorded
from inkground_lib.datasets.synth.generate import SynthParams, generate

UNIPEN = ROOT / "data" / "unipen_cursive" / "unipen_cursive_dev.json"  # shipped with the repository


@pytest.fixture(scope="module")
def synth(tmp_path_factory) -> Path:
    return generate(tmp_path_factory.mktemp("synth") / "ds", SynthParams(pages=2, words_min=3, words_max=6,
                                                                          words_mean=4, width=600, height=800),
                    progress=False)


@pytest.fixture
def copy(synth, tmp_path) -> Path:
    out = tmp_path / "ds"
    shutil.copytree(synth, out)
    return out


def _edit(root: Path, change) -> dict:
    path = root / "manifest.json"
    m = json.loads(path.read_text("utf-8"))
    change(m)
    path.write_text(json.dumps(m), "utf-8")
    return m


def test_recorded_dataset_from_the_shipped_subset_is_valid(tmp_path):
    assert UNIPEN.is_file()
    ds = build_recorded(tmp_path / "recorded", unipen=UNIPEN, progress=False)
    assert validate_dataset(ds) == []
    assert exit_code([]) == 0
    loaded = load_dataset(ds)
    assert format_report(ds, []) == [f"{ds}: valid dataset, {len(loaded.pages)} pages, {loaded.n_words} words"]
    assert loaded.kind == "recorded" and len(loaded.pages) > 1


def test_fresh_synthetic_dataset_is_valid(synth):
    assert validate_dataset(synth) == []
    manifest = json.loads((synth / "manifest.json").read_text("utf-8"))
    assert list(manifest_validator().iter_errors(manifest)) == []
    n_words = sum(len(p["words"]) for p in manifest["pages"])
    assert format_report(synth, []) == [f"{synth}: valid dataset, 2 pages, {n_words} words"]


def test_every_schema_fault_is_reported_with_file_record_and_field(copy):
    def faults(m):
        m["pages"][0]["id"] = "../x"  # bad id
        m["pages"][0]["words"][1]["box"] = [1.0, 2.0, 3.0]  # a box of 3 numbers
        del m["pages"][1]["writer"]  # a missing field
        m["pages"][1]["width"] = "600"  # a string width
        m["pages"][1]["words"][0]["split"] = "dev"
        m["kind"] = "mine"

    m = _edit(copy, faults)
    problems = validate_dataset(copy)
    mpath = str(copy / "manifest.json")
    p1, w01 = m["pages"][1]["id"], m["pages"][0]["words"][1]["id"]
    w1 = m["pages"][1]["words"][0]["id"]
    bad_box = f"word {w01} (pages/0/words/1)"  # the page's id is the bad one: the record names the word
    found = {(p.record, p.field): p for p in problems}
    assert set(found) == {
        ("pages/0", "id"), (bad_box, "box"), (f"page {p1} (pages/1)", "writer"),
        (f"page {p1} (pages/1)", "width"), (f"page {p1} word {w1} (pages/1/words/0)", "split"), ("", "kind")}
    assert len(problems) == 6 and all(p.file == mpath and p.stage == "schema" for p in problems)
    assert "'../x' is not a valid id" in found[("pages/0", "id")].message
    assert "expected 4 numbers" in found[(bad_box, "box")].message
    assert found[(f"page {p1} (pages/1)", "writer")].message == "missing"
    assert "expected an integer" in found[(f"page {p1} (pages/1)", "width")].message
    assert found[(bad_box, "box")].pointer == "/pages/0/words/1/box"
    lines = format_report(copy, problems)
    assert lines[-1] == f"6 errors in {copy}"
    assert f"{mpath}: page {p1} (pages/1): field width: expected an integer (no decimal point), got string '600'" \
        in lines
    assert exit_code(problems) == 1


def test_box_entries_and_integers_are_checked_like_load_dataset(copy):
    def faults(m):
        m["pages"][0]["words"][0]["box"] = [1, 2, float("nan"), True]
        m["pages"][0]["height"] = 800.0
        m["schema_version"] = 1.0

    _edit(copy, faults)
    problems = validate_dataset(copy)
    fields = sorted(p.field for p in problems)
    assert fields == ["box[2]", "box[3]", "height", "schema_version"]
    with pytest.raises(DatasetError):  # what the schema refuses, loading refuses too
        load_dataset(copy)


def test_missing_photo_is_reported_by_the_file_checks(copy):
    m = json.loads((copy / "manifest.json").read_text("utf-8"))
    page = m["pages"][1]
    (copy / page["image"]).unlink()
    problems = validate_dataset(copy)
    assert len(problems) == 1
    p = problems[0]
    assert (p.file, p.record, p.field, p.stage) == (str(copy / "manifest.json"), f"page {page['id']}", "image",
                                                    "files")
    assert "is missing" in p.message and exit_code(problems) == 1
    with pytest.raises(DatasetError) as e:
        load_dataset(copy)
    assert str(p) == str(e.value)


def test_photo_of_the_wrong_size_is_reported(copy):
    from PIL import Image

    m = json.loads((copy / "manifest.json").read_text("utf-8"))
    page = m["pages"][0]
    Image.new("RGB", (10, 10)).save(copy / page["image"])
    (p,) = validate_dataset(copy)
    assert (p.record, p.field, p.stage) == (f"page {page['id']}", "width/height", "files") and "10 x 10" in p.message


def test_broken_ink_is_reported_naming_the_ink_file(copy):
    page = json.loads((copy / "manifest.json").read_text("utf-8"))["pages"][0]
    inks_path = copy / page["inks"]
    inks = json.loads(inks_path.read_text("utf-8"))
    wid = page["words"][0]["id"]
    inks["words"][wid]["reference"][0][0] = ["a", 1]
    inks_path.write_text(json.dumps(inks), "utf-8")
    (p,) = validate_dataset(copy)
    assert p.file == str(inks_path) and p.record == f"word {wid}" and p.field.startswith("reference")


def test_unreadable_folder_or_manifest_exits_2(tmp_path):
    (missing,) = validate_dataset(tmp_path / "nope")
    assert missing.stage == "unreadable" and exit_code([missing]) == 2
    (no_manifest,) = validate_dataset(tmp_path)
    assert no_manifest.file == str(tmp_path / "manifest.json") and exit_code([no_manifest]) == 2
    (tmp_path / "manifest.json").write_text("{not json", "utf-8")
    (broken,) = validate_dataset(tmp_path)
    assert "not valid JSON" in broken.message and exit_code([broken]) == 2
    assert format_report(tmp_path, [broken])[-1] == f"1 error in {tmp_path}"


def test_manifest_over_its_read_limit_is_unreadable(copy):
    size = (copy / "manifest.json").stat().st_size
    (p,) = validate_dataset(copy, max_manifest_bytes=size - 1)
    assert p.stage == "unreadable" and p.file == str(copy / "manifest.json") and "read limit" in p.message
    assert exit_code([p]) == 2
    assert validate_dataset(copy, max_manifest_bytes=size) == []


def test_page_side_over_the_limit_is_a_schema_fault(copy):
    m = _edit(copy, lambda m: m["pages"][0].update(width=MAX_PAGE_SIDE + 1))
    (p,) = validate_dataset(copy)
    assert (p.record, p.field, p.stage) == (f"page {m['pages'][0]['id']} (pages/0)", "width", "schema")
    assert f"at most {MAX_PAGE_SIDE}" in p.message


def test_not_an_object_is_one_fault(tmp_path):
    (tmp_path / "manifest.json").write_text("[1, 2]", "utf-8")
    (p,) = validate_dataset(tmp_path)
    assert p.record == "" and p.field == "" and "expected an object" in p.message and exit_code([p]) == 1


def test_id_pattern_is_id_rule():
    schema = manifest_schema()
    pattern = schema["$defs"]["id"]["pattern"]
    assert pattern == id_pattern() == rf"^(?:{ID_RULE.pattern})(?![\s\S])"
    samples = ["p0001-w003", "a", "A.b_c-d", "../x", ".x", "-x", "a b", "p0\n", "", "x" * 128, "x" * 129, "é"]
    for s in samples:
        assert bool(re.search(pattern, s)) == bool(ID_RULE.fullmatch(s)), s


def test_schema_names_the_dataset_constants():
    schema = manifest_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["properties"]["kind"]["enum"] == list(KINDS)
    assert schema["$defs"]["word"]["properties"]["split"]["enum"] == list(SPLITS)
    box = schema["$defs"]["word"]["properties"]["box"]
    assert box["minItems"] == box["maxItems"] == 4 and box["items"] == {"type": "number"}


def test_shipped_schema_file_is_the_generated_schema(tmp_path):
    assert schema_file().read_text("utf-8") == schema_text()
    assert json.loads(schema_file().read_text("utf-8")) == manifest_schema()
    written = write_schema(tmp_path / "s.json")
    assert written.read_text("utf-8") == schema_text()
    pyproject = (ROOT / "pyproject.toml").read_text("utf-8")
    assert '"inkground_lib.core" = ["*.schema.json"]' in pyproject


def test_problem_from_error_keeps_the_message():
    e = DatasetError("/d/manifest.json: page p1 word w2: field box: lies outside")
    p = problem_from_error(e)
    assert (p.file, p.record, p.field, p.message) == ("/d/manifest.json", "page p1 word w2", "box", "lies outside")
    assert str(p) == str(e)
    q = problem_from_error(DatasetError("/d/inks/p1.json: inks of page p1 is missing"))
    assert (q.file, q.field, str(q)) == ("/d/inks/p1.json", "", "/d/inks/p1.json: inks of page p1 is missing")


def test_book_page_includes_the_shipped_schema():
    page = ROOT / "book" / "dataset-format.md"
    text = page.read_text("utf-8")
    includes = re.findall(r"```\{literalinclude\}\s+(\S+)", text)
    assert includes, "the page includes the schema file"
    for rel in includes:  # literalinclude paths are relative to the page
        assert (page.parent / rel).resolve() == schema_file().resolve()
    assert "inkground validate DIR" in text and "ID_RULE" in text
    # the limits the page states are the library's
    assert f"1 to {MAX_PAGE_SIDE} px (`MAX_PAGE_SIDE`)" in text
    assert f"over {MAX_MANIFEST_BYTES // 2**20} MiB\n  (`MAX_MANIFEST_BYTES`" in text
    assert f"over {MAX_INK_FILE_BYTES // 2**20} MiB (`MAX_INK_FILE_BYTES`" in text
    assert MAX_MANIFEST_ENV in text and MAX_INK_FILE_ENV in text


def test_docstring_examples_pass():
    import doctest

    from inkground_lib.core import manifest_schema

    result = doctest.testmod(manifest_schema, verbose=False, report=True)
    assert result.failed == 0 and result.attempted >= 2


# ------------------------------------------------------------------------------------------------- issue 26

def _truncate_photo(root: Path) -> Path:
    m = json.loads((root / "manifest.json").read_text("utf-8"))
    photo = root / m["pages"][0]["image"]
    data = photo.read_bytes()
    photo.write_bytes(data[: len(data) // 2])  # a JPEG cut at half: its header (size) still reads
    return photo


def test_a_truncated_photo_is_refused_by_validate_naming_the_file(copy):
    """Case 2: validate read only the photo's header and said "valid dataset"; it decodes every photo now."""
    photo = _truncate_photo(copy)
    load_dataset(copy)  # loading reads headers only (as before): the commands decode before any request
    problems = validate_dataset(copy)
    assert len(problems) == 1 and problems[0].field == "image" and exit_code(problems) == 1
    assert str(photo) in str(problems[0]) and "cannot be decoded as an image" in problems[0].message
    with pytest.raises(DatasetError, match="cannot be decoded"):
        load_dataset(copy, decode_images=True)


@pytest.mark.parametrize("value", [1e308, -1e308, 5000.0])  # NaN: refused by as_ink already
def test_a_huge_or_not_finite_coordinate_is_refused(copy, value):
    """Case 9: 1e308 passed validate and made every mean Chamfer of eval infinite. Ink points must be finite and
    lie on the page (a margin of 5% of its size): refused by validate and load_dataset, naming file, word,
    stroke and point."""
    m = json.loads((copy / "manifest.json").read_text("utf-8"))
    inks_path = copy / m["pages"][0]["inks"]
    inks = json.loads(inks_path.read_text("utf-8"))
    wid = m["pages"][0]["words"][1]["id"]
    inks["words"][wid]["reference"][0][2][1] = value  # stroke 0, point 2, y
    inks_path.write_text(json.dumps(inks), "utf-8")
    with pytest.raises(DatasetError, match=rf"word {wid}: field reference: stroke 0 point 2: .* is not finite or "
                                           r"lies off the 600 x 800 page"):
        load_dataset(copy)
    problems = validate_dataset(copy)
    assert len(problems) == 1 and problems[0].field == "reference" and str(inks_path) == problems[0].file


def test_an_ink_a_little_outside_the_page_is_kept(copy):
    m = json.loads((copy / "manifest.json").read_text("utf-8"))
    inks_path = copy / m["pages"][0]["inks"]
    inks = json.loads(inks_path.read_text("utf-8"))
    wid = m["pages"][0]["words"][0]["id"]
    inks["words"][wid]["true"][0][0][0] = -20.0  # 20 px left of the page: within 5% of 600 px
    inks_path.write_text(json.dumps(inks), "utf-8")
    assert validate_dataset(copy) == []


def test_empty_datasets_and_empty_word_texts_are_refused(copy):
    """Case 10: a dataset with no pages, or no words, and a word whose text is empty passed validate."""
    def blank(m):
        m["pages"][0]["words"][0]["text"] = "  "

    _edit(copy, blank)
    problems = validate_dataset(copy)
    assert len(problems) == 1 and problems[0].field == "text" and problems[0].stage == "schema"
    assert "a word's text may not be empty" in problems[0].message
    _edit(copy, lambda m: m["pages"][0]["words"][0].update(text="Dear"))
    _edit(copy, lambda m: [p.update(words=[]) for p in m["pages"]])
    problems = validate_dataset(copy)
    assert [p.message for p in problems] == ["none of its 2 pages has a word (nothing to evaluate)"]
    _edit(copy, lambda m: m.update(pages=[]))
    problems = validate_dataset(copy)
    assert [p.message for p in problems] == ["the dataset has no pages (nothing to evaluate)"]
    assert exit_code(problems) == 1 and format_report(copy, problems)[-1] == f"1 error in {copy}"


def test_ids_differing_only_in_case_are_refused(copy):
    """Case 10: p0000 and P0000 were both accepted; they would overwrite each other's files on macOS and Windows."""
    m = json.loads((copy / "manifest.json").read_text("utf-8"))
    first = m["pages"][0]["id"]
    _edit(copy, lambda m: m["pages"][1].update(id=first.upper()))
    with pytest.raises(DatasetError, match=rf"page {first.upper()}: field id: differs from page id {first} only in "
                                           r"case"):
        load_dataset(copy)
    problems = validate_dataset(copy)
    assert len(problems) == 1 and problems[0].field == "id"
    _edit(copy, lambda m: m["pages"][1].update(id=m["pages"][1]["id"].lower() + "b"))
    w0 = m["pages"][0]["words"][0]["id"]
    _edit(copy, lambda m: m["pages"][0]["words"][1].update(id=w0.upper()))
    with pytest.raises(DatasetError, match=rf"word {w0.upper()}: field id: differs from word id {w0} only in case"):
        load_dataset(copy)


def test_a_manifest_that_is_a_symlink_is_refused(copy, tmp_path):
    """Case 10: a manifest.json that is a symbolic link was read (photos and inks that leave the folder are
    refused)."""
    real = tmp_path / "elsewhere.json"
    (copy / "manifest.json").rename(real)
    (copy / "manifest.json").symlink_to(real)
    with pytest.raises(DatasetError, match=r"manifest.json: is a symbolic link \(to .*elsewhere.json\)"):
        load_dataset(copy)
    problems = validate_dataset(copy)
    assert len(problems) == 1 and problems[0].stage == "unreadable" and "symbolic link" in problems[0].message
    assert exit_code(problems) == 2


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_fifo_or_a_folder_as_the_photo_says_what_it_is(copy, kind):
    """Case 10: a FIFO or a folder in place of the photo was reported as "file ... is missing"."""
    import os

    m = json.loads((copy / "manifest.json").read_text("utf-8"))
    photo = copy / m["pages"][0]["image"]
    photo.unlink()
    if kind == "fifo":
        os.mkfifo(photo)
    else:
        photo.mkdir()
    said = "a FIFO (named pipe)" if kind == "fifo" else "a folder"
    with pytest.raises(DatasetError, match=rf"{re.escape(str(photo))} is {re.escape(said)}, not a photo file"):
        load_dataset(copy)
    problems = validate_dataset(copy)
    assert len(problems) == 1 and f"is {said}, not a photo file" in problems[0].message
    assert "missing" not in problems[0].message


# ---- issue 33: the reference ink lies in its word's box; a word's text has a bounded length

def _shift_reference(copy, shift):
    """Move word 1 of page 0's reference ink right by ``shift(box width)`` (kept inside the page); returns the
    page record, its inks file and the word id."""
    page = json.loads((copy / "manifest.json").read_text("utf-8"))["pages"][0]
    inks_path = copy / page["inks"]
    inks = json.loads(inks_path.read_text("utf-8"))
    wid = page["words"][1]["id"]
    x0, y0, x1, y1 = page["words"][1]["box"]
    for stroke in inks["words"][wid]["reference"]:
        for p in stroke:
            p[0] = min(p[0] + shift(x1 - x0), page["width"] - 1)
    inks_path.write_text(json.dumps(inks), "utf-8")
    return page, inks_path, wid


def test_a_reference_ink_outside_its_words_box_is_refused_naming_file_word_and_field(copy):
    # the word's ink moved right by two box widths: wholly outside, still inside the page
    page, inks_path, wid = _shift_reference(copy, lambda w: 2 * w + 5)
    probs = validate_dataset(copy)
    p = next(p for p in probs if p.field == "ink")
    assert p.file == str(inks_path) and p.record == f"page {page['id']} word {wid}"
    assert "0% of its" in p.message and "grown by 10% a side" in p.message
    assert exit_code(probs) == 1


def test_a_reference_ink_within_the_tolerance_passes(copy):
    _shift_reference(copy, lambda w: 0.08 * w)  # 8% of the box width: inside the 10% tolerance
    assert validate_dataset(copy) == []


def test_a_word_text_over_the_limit_is_a_schema_fault(copy):
    from inkground_lib.core.defaults import MAX_WORD_TEXT

    _edit(copy, lambda m: m["pages"][0]["words"][0].__setitem__("text", "w" * (MAX_WORD_TEXT + 1)))
    (p,) = validate_dataset(copy)
    assert p.field == "text" and p.stage == "schema"


# ---- issue 44: every command that reads a dataset refuses what validate refuses (one check, shared)

@pytest.mark.parametrize("command", ["predict", "eval"])
def test_predict_and_eval_refuse_a_reference_ink_off_its_box(copy, tmp_path, capsys, command):
    """On ed2f909 predict and eval scored such a word (DTW 54.1 against a median of 0.27), no warning."""
    from inkground_lib.cli import main

    page, inks_path, wid = _shift_reference(copy, lambda w: 2 * w + 5)
    run = tmp_path / "run"
    argv = (["predict", "--system", "box"] if command == "predict" else ["eval", "--systems", "box"]) + [
        "--dataset", str(copy), "--run", str(run), "--quiet"]
    assert main(argv) != 0
    err = capsys.readouterr().err
    assert f"{inks_path}: page {page['id']} word {wid}: field ink: 0% of its" in err and "validate" in err
    assert not run.exists() or not any(run.rglob("*.*"))  # nothing scored, nothing written


def test_load_dataset_makes_the_check_validate_lists(copy):
    from inkground_lib.core.dataset import DatasetError, load_dataset

    _shift_reference(copy, lambda w: 2 * w + 5)
    with pytest.raises(DatasetError) as e:
        load_dataset(copy)
    (p,) = validate_dataset(copy)
    assert str(e.value).startswith(str(p).split(": 0% of")[0])  # the same file, word and field
    assert load_dataset(copy, check_boxes=False).n_words  # validate's own way in, to list every such word


def test_section_02_never_writes_a_benchmark_that_validate_refuses(synth, tmp_path):
    """On ed2f909 a pseudo-label outside its word's box was written into the benchmark (exit 0) and the
    benchmark failed validate: now such a word is left out, like an empty pseudo-label, and counted."""
    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.pseudo.benchmark import build_benchmark

    ds = load_dataset(synth)
    page = ds.pages[0]
    pseudo = {w.id: w.ink for p in ds.pages for w in p.words}
    far = page.words[1]
    x0, _, x1, _ = far.box
    pseudo[far.id] = far.ink.transformed(dx=min(2 * (x1 - x0) + 5, page.width - 1 - far.ink.bbox()[2]))
    out = build_benchmark(ds, pseudo, [page.id], tmp_path / "bench", meta={"derenderer": "test"})
    assert validate_dataset(out) == []
    bench = load_dataset(out)
    assert far.id not in {w.id for w in bench.pages[0].words} and bench.meta["dropped_off_box_words"] == 1
