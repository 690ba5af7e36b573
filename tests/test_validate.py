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
