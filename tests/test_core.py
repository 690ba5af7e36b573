"""ink, files and dataset: the data model, validation that names file/record/field, atomic writes."""
import json

import numpy as np
import pytest
from conftest import make_tiny_dataset

from inkground_lib.core import dataset
from inkground_lib.core.files import (
    PathError,
    atomic_write_json,
    confined,
)
from inkground_lib.core.ink import (
    InkError,
    as_ink,
    ink_from_lists,
    ink_to_lists,
    resample,
)
from inkground_lib.datasets.statistics import statistics


def test_as_ink_accepts_2_and_3_columns_and_rejects_nan():
    ink = as_ink([[[0, 0], [1, 1]], np.array([[2, 2, 5.0]])])
    assert len(ink) == 2 and ink[0].shape == (2, 3) and np.isnan(ink[0][0, 2]) and ink[1][0, 2] == 5.0
    with pytest.raises(InkError, match="stroke 1: point 0 has a NaN"):
        as_ink([[[0, 0]], [[np.nan, 1]]], "word w1")
    with pytest.raises(InkError, match="shape"):
        as_ink([np.zeros((3, 4))])


def test_ink_is_immutable_and_compares_by_content():
    a = as_ink([[[0, 0], [1, 1]]])
    with pytest.raises(ValueError):
        a[0][0, 0] = 5
    assert a == as_ink([[[0, 0], [1, 1]]]) and a != as_ink([[[0, 0], [1, 2]]])


def test_lists_round_trip_keeps_nan_time():
    ink = as_ink([[[0.123, 1.5, 0], [2, 3, np.nan]], [[4, 5, 7]]])
    with pytest.raises(InkError, match="must all be numeric"):
        as_ink([[[0, 1, 0], [2, 3]]])
    back = ink_from_lists(json.loads(json.dumps(ink_to_lists(ink))))
    assert back == ink_from_lists(ink_to_lists(ink)) and np.isnan(back[0][1, 2])
    np.testing.assert_allclose(back[0][:, :2], np.round(ink[0][:, :2], 2))


def test_resample_spacing_and_endpoints():
    ink = as_ink([[[0, 0], [10, 0]], [[0, 5]]])
    r = resample(ink, 1.0)
    assert len(r[0]) == 11 and np.allclose(np.diff(r[0][:, 0]), 1.0)
    assert np.allclose(r[0][-1, :2], [10, 0]) and len(r[1]) == 1


def test_confined_refuses_escapes(tmp_path):
    assert confined(tmp_path, "a/b.json") == (tmp_path / "a/b.json").resolve()
    for bad in ["../x.json", "/etc/passwd", "a/../../x"]:
        with pytest.raises(PathError):
            confined(tmp_path, bad)


def test_atomic_write_leaves_old_file_on_failure(tmp_path):
    p = tmp_path / "f.json"
    atomic_write_json(p, {"a": 1})
    with pytest.raises(ValueError):
        atomic_write_json(p, {"a": float("nan")})  # NaN is refused before anything is replaced
    assert json.loads(p.read_text()) == {"a": 1}
    assert [x.name for x in tmp_path.iterdir()] == ["f.json"]  # no temp file left behind


def test_dataset_round_trip(tmp_path):
    root = make_tiny_dataset(tmp_path / "ds")
    ds = dataset.load_dataset(root)
    assert ds.name == "tiny" and len(ds.pages) == 2 and ds.n_words == 6
    w = ds.pages[0].words[0]
    assert w.split == "test" and w.true_ink == w.ink and w.box == (10.0, 30.0, 50.0, 60.0)
    assert ds.pages[0].load_image().shape == (100, 200, 3)
    h1 = dataset.dataset_hash(root)
    assert h1 == dataset.dataset_hash(root)
    (root / "pages" / "p000.jpg").write_bytes(b"changed")
    assert dataset.dataset_hash(root) != h1


def test_statistics(tmp_path):
    ds = dataset.load_dataset(make_tiny_dataset(tmp_path / "ds", pages=2, words=3))
    s = statistics(ds)
    assert s["pages"] == 2 and s["words"] == 6 and s["words_per_page_mean"] == 3
    assert s["strokes_per_page_mean"] == 6 and s["points_per_stroke_mean"] == 1.5
    assert s["box_width_median"] == pytest.approx(40 / 200) and s["box_height_median"] == pytest.approx(0.3)


def _edit_manifest(root, fn):
    m = json.loads((root / "manifest.json").read_text())
    fn(m)
    (root / "manifest.json").write_text(json.dumps(m))


@pytest.mark.parametrize("edit, message", [
    (lambda m: m.update(schema_version=99), "field schema_version: 99 is not supported"),
    (lambda m: m["pages"][1]["words"][2].pop("text"), "page p001 word p001-w2: field text: missing"),
    (lambda m: m["pages"][0]["words"][0].update(box=[1, 2, 3]), "word p000-w0: field box"),
    (lambda m: m["pages"][0].update(image="../../etc/passwd"), "page p000: field image: '../../etc/passwd' leaves"),
    (lambda m: m["pages"][0].update(inks="/abs/inks.json"), "page p000: field inks: '/abs/inks.json' is absolute"),
    (lambda m: m["pages"][1].update(width=-3), "page p001: field width: must be at least 1, got -3"),
    (lambda m: m["pages"][0]["words"][1].update(split="dev"), "field split"),
])
def test_bad_manifest_names_file_record_and_field(tmp_path, edit, message):
    root = make_tiny_dataset(tmp_path / "ds")
    _edit_manifest(root, edit)
    with pytest.raises(dataset.DatasetError) as e:
        dataset.load_dataset(root)
    assert message in str(e.value) and "manifest.json" in str(e.value)


def test_corrupt_manifest_and_missing_files(tmp_path):
    root = make_tiny_dataset(tmp_path / "ds")
    (root / "pages" / "p001.jpg").unlink()
    with pytest.raises(dataset.DatasetError, match=r"page p001: field image: file .*p001.jpg is missing"):
        dataset.load_dataset(root)
    (root / "manifest.json").write_text('{"schema": "inkground-dataset", "pages": [')
    with pytest.raises(dataset.DatasetError, match="manifest.json: manifest is not valid JSON"):
        dataset.load_dataset(root)
    (root / "manifest.json").unlink()
    with pytest.raises(dataset.DatasetError, match="manifest is missing"):
        dataset.load_dataset(root)


def test_nan_coordinates_in_inks_are_rejected_with_location(tmp_path):
    root = make_tiny_dataset(tmp_path / "ds")
    p = root / "inks" / "p001.json"
    inks = json.loads(p.read_text())
    inks["words"]["p001-w1"]["reference"][0][1][0] = None  # x = null -> NaN
    p.write_text(json.dumps(inks))
    with pytest.raises(dataset.DatasetError, match=r"p001.json: word p001-w1: field reference stroke 0: point 1 has a NaN"):
        dataset.load_dataset(root)


def test_interrupted_write_leaves_no_loadable_dataset(tmp_path, monkeypatch):
    """The manifest is written last: if writing the inks fails, no manifest exists to be trusted."""
    root = tmp_path / "ds"
    from PIL import Image

    from inkground_lib.core.dataset import Page, Word, write_manifest

    (root / "pages").mkdir(parents=True)
    Image.new("RGB", (10, 10)).save(root / "pages" / "a.jpg")
    ink = as_ink([[[1, 1], [2, 2]]])
    pages = [Page("a", root / "pages" / "a.jpg", "w", 10, 10, [Word("a-0", "x", (1, 1, 2, 2), ink, "a")])]
    calls = {"n": 0}
    real = dataset.write_page_inks

    def failing(r, page):
        calls["n"] += 1
        raise OSError("disk full")

    monkeypatch.setattr(dataset, "write_page_inks", failing)
    with pytest.raises(OSError):
        write_manifest(root, "x", "synth", "true ink", {}, pages)
    assert calls["n"] == 1 and not (root / "manifest.json").exists()
    monkeypatch.setattr(dataset, "write_page_inks", real)
    write_manifest(root, "x", "synth", "true ink", {}, pages)
    assert dataset.load_dataset(root).n_words == 1


def test_jsonl_torn_last_line_is_dropped_and_a_complete_one_kept(tmp_path):
    from inkground_lib.core.files import JSONLError, append_jsonl, read_jsonl

    p = tmp_path / "log.jsonl"
    append_jsonl(p, {"k": 1})
    append_jsonl(p, {"k": 2})
    good = p.read_bytes()
    ok = lambda r: isinstance(r, dict) and "k" in r  # noqa: E731
    p.write_bytes(good + b'{"k": 3')  # killed mid-write
    assert [r for _, r in read_jsonl(p, ok, repair=False)] == [{"k": 1}, {"k": 2}]
    assert p.read_bytes().endswith(b'{"k": 3')  # without repair the file is untouched
    assert [n for n, _ in read_jsonl(p, ok)] == [1, 2] and p.read_bytes() == good  # repaired
    p.write_bytes(good + b'{"k": 3}')  # killed between the record and its newline: kept
    assert [r["k"] for _, r in read_jsonl(p, ok)] == [1, 2, 3] and p.read_bytes().endswith(b"}\n")
    p.write_bytes(b'{"k": 1}\n{broken\n{"k": 2}\n')
    with pytest.raises(JSONLError, match="line 2"):
        read_jsonl(p, ok)


def test_jsonl_records_are_parsed_one_at_a_time_and_a_torn_line_repaired_at_the_end(tmp_path):
    """iter_jsonl yields each record as it parses it (the paper-scale derender cache is read page by page);
    a broken middle line raises after the records before it, and a torn last line is cut off once the
    iteration reaches it."""
    from inkground_lib.core.files import JSONLError, append_jsonl, iter_jsonl

    p = tmp_path / "log.jsonl"
    for k in (1, 2):
        append_jsonl(p, {"k": k})
    good = p.read_bytes()
    ok = lambda r: isinstance(r, dict) and "k" in r  # noqa: E731
    p.write_bytes(b'{"k": 1}\n{broken\n{"k": 2}\n')
    it = iter_jsonl(p, ok)
    assert next(it) == (1, {"k": 1})
    with pytest.raises(JSONLError, match="line 2"):
        next(it)
    p.write_bytes(good + b'{"k": 3')
    it = iter_jsonl(p, ok)
    assert [r["k"] for _, r in [next(it), next(it)]] == [1, 2] and p.read_bytes().endswith(b'{"k": 3')
    assert list(it) == [] and p.read_bytes() == good


@pytest.mark.parametrize("bad", ["../evil", "a/b", "", ".hidden", "x" * 129, "p 1", "p\x00"])
def test_a_page_or_word_id_that_is_no_plain_name_is_refused_before_anything_is_written(tmp_path, bad):
    """Issue 11, case 1: a page id with ../ made `inkground pseudo` write outside its run folder."""
    import json as _json

    from inkground_lib.cli import main
    from inkground_lib.core.dataset import DatasetError, load_dataset

    root = make_tiny_dataset(tmp_path / "ds", pages=2, words=2)
    m = _json.loads((root / "manifest.json").read_text())
    for field in ("page", "word"):
        mm = _json.loads(_json.dumps(m))
        if field == "page":
            mm["pages"][0]["id"] = bad
        else:
            mm["pages"][1]["words"][0]["id"] = bad
        (root / "manifest.json").write_text(_json.dumps(mm))
        with pytest.raises(DatasetError, match="field id: .* is not a valid id"):
            load_dataset(root)
        before = sorted(p for p in tmp_path.rglob("*"))
        assert main(["pseudo", "--candidates", str(root), "--run", str(tmp_path / "run"), "--quiet"]) not in (0, None)
        after = sorted(p for p in tmp_path.rglob("*"))
        assert [p for p in after if p not in before and tmp_path / "run" not in p.parents and p != tmp_path / "run"] == []
    (root / "manifest.json").write_text(_json.dumps(m))
    assert len(load_dataset(root).pages) == 2


def test_atomic_writes_get_the_mode_open_would_give(tmp_path):
    """Issue 11, case 16: atomically written files were 0600 (mkstemp) beside 0644 logs."""
    import os
    import stat

    from inkground_lib.core.files import FILE_MODE, append_jsonl, atomic_write_json

    old = os.umask(0o022)  # the usual umask: open() makes 0644 files
    try:
        a = atomic_write_json(tmp_path / "a.json", {"x": 1})
        b = append_jsonl(tmp_path / "b.jsonl", {"x": 1})
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(b).st_mode) == 0o644
    assert stat.S_IMODE(os.stat(a).st_mode) == FILE_MODE == 0o666 & ~old  # mkstemp alone gives 0600


def test_synth_refuses_a_page_that_cannot_fit_in_memory():
    """Issue 11, case 10: synth --width 100000 --height 100000 tried a 37 GiB allocation."""
    from inkground_lib.datasets.synth.generate import MAX_PAGE_SIDE, SynthParams

    with pytest.raises(ValueError, match=f"SynthParams.width: page sides are at most {MAX_PAGE_SIDE} px"):
        SynthParams(width=100000, height=100000).validate()
    with pytest.raises(ValueError, match="SynthParams.height"):
        SynthParams(height=MAX_PAGE_SIDE + 1).validate()
    SynthParams(width=MAX_PAGE_SIDE, height=MAX_PAGE_SIDE).validate()


def _edit(root, fn):
    import json as _json

    m = _json.loads((root / "manifest.json").read_text())
    fn(m)
    (root / "manifest.json").write_text(_json.dumps(m))


def test_manifest_sizes_and_boxes_are_checked_against_the_photo_and_page(tmp_path):
    """Issue 11, cases 7 and 8: a wrong width/height, and boxes outside the page or empty, loaded silently."""
    from inkground_lib.core.dataset import DatasetError, load_dataset

    root = make_tiny_dataset(tmp_path / "ds", pages=1, words=2)  # photos are 200 x 100
    good = (root / "manifest.json").read_text()
    cases = [
        (lambda m: m["pages"][0].update(width=400), r"page p000: field width/height: the manifest says 400 x 100 but "
                                                    r"the photo p000.jpg is 200 x 100 px"),
        (lambda m: m["pages"][0]["words"][1].update(box=[150, 30, 260, 60]), r"word p000-w1: field box: .* lies "
                                                                             r"outside the 200 x 100 page"),
        (lambda m: m["pages"][0]["words"][0].update(box=[-30, 30, 40, 60]), "outside the 200 x 100 page"),
        (lambda m: m["pages"][0]["words"][0].update(box=[40, 30, 10, 60]), "expected x0 <= x1"),
        (lambda m: m["pages"][0]["words"][0].update(box=[40, 30, 40, 30]), "empty"),
    ]
    for change, message in cases:
        (root / "manifest.json").write_text(good)
        _edit(root, change)
        with pytest.raises(DatasetError, match=message):
            load_dataset(root)
    (root / "manifest.json").write_text(good)
    assert load_dataset(root).n_words == 2


def test_ink_values_must_be_numbers_and_references_non_empty(tmp_path):
    """Issue 11, case 14: coordinates given as strings or t = inf were accepted; an empty reference loaded."""
    import json as _json

    from inkground_lib.core.dataset import DatasetError, load_dataset

    root = make_tiny_dataset(tmp_path / "ds", pages=1, words=2)
    path = root / "inks" / "p000.json"
    good = path.read_text()
    for bad, message in [([[["10", 40, 0], [50, 60, 10]]], "x must be a number, got '10'"),
                         ([[[10, 40, float("inf")], [50, 60, 10]]], "t is infinite"),
                         ([[[10, True, 0]]], "y must be a number"),
                         ([], "field reference: empty")]:
        inks = _json.loads(good)
        inks["words"]["p000-w0"]["reference"] = bad
        path.write_text(_json.dumps(inks))
        with pytest.raises(DatasetError, match=message):
            load_dataset(root)
    path.write_text(good)
    assert load_dataset(root).n_words == 2


def test_json_nested_too_deeply_is_a_clear_error(tmp_path):
    """Issue 11, case 9: a manifest nested 100,000 deep gave a RecursionError traceback."""
    from inkground_lib.core.dataset import DatasetError, load_dataset

    root = tmp_path / "deep"
    root.mkdir()
    (root / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(DatasetError, match="manifest.json: manifest is nested too deeply"):
        load_dataset(root)
