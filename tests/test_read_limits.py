"""Read-size limits: every reader of ink or manifest data refuses a file over its limit before reading it, with a
message naming the file, its size, the limit and how to raise it; page sides are bounded in manifests and
photos; a NUL byte in a manifest path names manifest, page and field."""

from __future__ import annotations

import builtins
import json
import struct
import warnings
import zlib
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import make_tiny_dataset

from inkground_lib.core import dataset, defaults
from inkground_lib.core.dataset import (
    DatasetError,
    check_file_size,
    load_dataset,
    read_limit,
)
from inkground_lib.formats.iamondb import read_iamondb
from inkground_lib.formats.iamondb_strokes import read_iamondb_strokes
from inkground_lib.formats.iamondb_transcriptions import read_iamondb_ascii, read_iamondb_original
from inkground_lib.formats.inkml import read_inkml
from inkground_lib.formats.inkml_write import write_inkml
from inkground_lib.formats.unipen import read_unipen_json
from inkground_lib.formats.unipen_dat import parse_unipen, read_unipen_dat
from inkground_lib.formats.unipen_release import read_unipen_release
from inkground_lib.formats.xmlsafe import FormatError

INK_ENV, MANIFEST_ENV = defaults.MAX_INK_FILE_ENV, defaults.MAX_MANIFEST_ENV


@pytest.fixture(autouse=True)
def _no_limit_env(monkeypatch):
    monkeypatch.delenv(INK_ENV, raising=False)
    monkeypatch.delenv(MANIFEST_ENV, raising=False)


@contextmanager
def no_reads(monkeypatch):
    """Any attempt to open or read a file inside the block fails the test (os.stat still works)."""
    def refuse(target, *a, **k):
        raise AssertionError(f"the file {target} was opened although it is over the limit")

    with monkeypatch.context() as m:
        for name in ("read_bytes", "read_text", "open"):
            m.setattr(Path, name, refuse)
        m.setattr(builtins, "open", refuse)
        yield


def assert_names(msg: str, path: Path, size: int, limit: int, env: str = INK_ENV) -> None:
    assert str(path) in msg and f"{size:,} bytes" in msg and f"read limit of {limit:,} bytes" in msg, msg
    assert f"{env}=" in msg, msg


# ------------------------------------------------------------------------------------------ sample files

def unipen_json(path: Path) -> Path:
    sample = {"id": "s-a-00", "writer_id": "wa", "text": "the",
              "strokes": [[[0, 5, 0.0], [10, 0, 10.0], [20, 8, 20.0]]]}
    path.write_text(json.dumps({"meta": {}, "samples": [sample]}), "utf-8")
    return path


def inkml(path: Path) -> Path:
    return write_inkml(path, [("w1", "hi", [[[0, 0, 0], [5, 5, 10]]])])


IAM_STROKES = ('<?xml version="1.0" encoding="ISO-8859-1"?>\n<WhiteboardCaptureSession><StrokeSet><Stroke>'
               '<Point x="1" y="2" time="0.5"/><Point x="3" y="4" time="0.51"/></Stroke></StrokeSet>'
               '</WhiteboardCaptureSession>\n')
IAM_ORIGINAL = ('<?xml version="1.0" encoding="ISO-8859-1"?>\n<WhiteboardCaptureSession><General>'
                '<Form id="a01-000u" writerID="10158"/></General><Transcription>'
                '<TextLine id="a01-000u-01" text="A MOVE"/></Transcription></WhiteboardCaptureSession>\n')
IAM_ASCII = "OCR:\n\nA MOVE to stop\n\nCSR:\n\nA MOVE to stop\n"


def iam_file(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "latin-1")
    return path


def unipen_dat(path: Path) -> Path:
    path.write_text('.VERSION 1.0\n.COORD X Y\n.POINTS_PER_SECOND 100\n.PEN_DOWN\n0 0\n10 10\n.PEN_UP\n'
                    '.SEGMENT WORD 0 OK "hi"\n', "latin-1")
    return path


def unipen_release(root: Path, include_padding: int = 0) -> Path:
    """A two-file release: data/6/x/w.dat includes include/x/w.dat (padded with .COMMENT lines)."""
    top = root / "data" / "6" / "x" / "w.dat"
    inc = root / "include" / "x" / "w.dat"
    top.parent.mkdir(parents=True)
    inc.parent.mkdir(parents=True)
    top.write_text('.VERSION 1.0\n.INCLUDE x/w.dat\n.SEGMENT WORD 0 OK "hi"\n', "latin-1")
    inc.write_text(".COORD X Y\n.POINTS_PER_SECOND 100\n.WRITER_ID w1\n.STYLE CURSIVE\n"
                   + ".COMMENT padding\n" * include_padding + ".PEN_DOWN\n0 0\n10 10\n20 0\n.PEN_UP\n", "latin-1")
    return top


# ------------------------------------------------------------------------------------------ single-file readers

SINGLE = {
    "unipen-json": (lambda p: unipen_json(p / "u.json"), read_unipen_json),
    "unipen-dat": (lambda p: unipen_dat(p / "w.dat"), lambda f, **k: read_unipen_dat(f, **k)[0]),
    "inkml": (lambda p: inkml(p / "d.inkml"), read_inkml),
    "iamondb-strokes": (lambda p: iam_file(p / "a01-000u-01.xml", IAM_STROKES), read_iamondb_strokes),
    "iamondb-original": (lambda p: iam_file(p / "a01-000u.xml", IAM_ORIGINAL), read_iamondb_original),
    "iamondb-ascii": (lambda p: iam_file(p / "a01-000u.txt", IAM_ASCII), read_iamondb_ascii),
}


@pytest.mark.parametrize("kind", sorted(SINGLE))
def test_reader_refuses_a_file_over_the_limit_before_reading(tmp_path, monkeypatch, kind):
    make, read = SINGLE[kind]
    path = make(tmp_path)
    size = path.stat().st_size
    with no_reads(monkeypatch):
        with pytest.raises(FormatError) as e:
            read(path, max_bytes=size - 1)
    assert_names(str(e.value), path, size, size - 1)
    assert read(path, max_bytes=size)  # at the limit: read


@pytest.mark.parametrize("kind", sorted(SINGLE))
def test_environment_variable_sets_the_ink_limit(tmp_path, monkeypatch, kind):
    make, read = SINGLE[kind]
    path = make(tmp_path)
    size = path.stat().st_size
    limit = size - 1
    monkeypatch.setenv(INK_ENV, repr(limit / 2**20))
    assert read_limit(None, defaults.MAX_INK_FILE_BYTES, INK_ENV) == limit
    with no_reads(monkeypatch):
        with pytest.raises(FormatError) as e:
            read(path)
    assert_names(str(e.value), path, size, limit)
    assert read(path, max_bytes=size)  # the keyword overrides the environment
    monkeypatch.setenv(INK_ENV, "1")
    assert read(path)


def test_default_limits_sit_above_the_real_files():
    assert defaults.MAX_INK_FILE_BYTES == 256 * 2**20 > 4_160_437  # largest UNIPEN train_r01_v07 file
    assert defaults.MAX_INK_FILE_BYTES > 737_280_000 - 493_625_021  # bound on the two files not measured
    assert defaults.MAX_MANIFEST_BYTES == 64 * 2**20 > 16 * 10**6  # the paper's 2,984 pages, ~16 MB
    assert read_limit(None, defaults.MAX_INK_FILE_BYTES, INK_ENV) == defaults.MAX_INK_FILE_BYTES


@pytest.mark.parametrize("value", ["abc", "0", "-3", "nan", "inf"])
def test_bad_environment_value_is_named(tmp_path, monkeypatch, value):
    monkeypatch.setenv(INK_ENV, value)
    with pytest.raises(ValueError, match=rf"environment variable {INK_ENV}=.*positive number of MiB"):
        read_unipen_json(unipen_json(tmp_path / "u.json"))
    with pytest.raises(ValueError, match="max_bytes: expected a positive number of bytes"):
        read_limit(0, 10, INK_ENV)


def test_not_a_regular_file_is_refused_unread(tmp_path):
    with pytest.raises(FormatError, match=r"/dev/zero: cannot be read \(not a regular file\)"):
        read_inkml("/dev/zero")  # os.stat says 0 bytes; reading it would never end
    with pytest.raises(FormatError, match=rf"{tmp_path}: cannot be read \(not a regular file\)"):
        read_unipen_json(tmp_path)
    with pytest.raises(FormatError, match="absent.json: cannot be read"):
        read_unipen_json(tmp_path / "absent.json")


# ------------------------------------------------------------------------------------------ UNIPEN includes

def test_unipen_include_over_the_limit_is_refused_unread(tmp_path, monkeypatch):
    top = unipen_release(tmp_path, include_padding=50)
    root = tmp_path
    inc = root / "include" / "x" / "w.dat"
    top_size, inc_size = top.stat().st_size, inc.stat().st_size
    assert top_size < inc_size
    read = Path.read_bytes
    opened = []

    def spy(self):
        opened.append(self.name if self == top.resolve() else str(self))
        if self != top.resolve():
            raise AssertionError(f"{self} was read although it is over the limit")
        return read(self)

    monkeypatch.setattr(Path, "read_bytes", spy)
    with pytest.raises(FormatError) as e:
        parse_unipen(top, root, max_bytes=inc_size - 1)
    monkeypatch.undo()
    assert opened == ["w.dat"]  # the top file only
    assert_names(str(e.value), inc.resolve(), inc_size, inc_size - 1)
    assert "include/x/w.dat" in str(e.value)
    words, skipped = read_unipen_dat(top, root, max_bytes=inc_size)
    assert [w.text for w in words] == ["hi"] and skipped == []


def test_unipen_release_lists_an_oversize_file_as_failed(tmp_path):
    unipen_release(tmp_path, include_padding=50)
    inc_size = (tmp_path / "include" / "x" / "w.dat").stat().st_size
    words, report = read_unipen_release(tmp_path, category="6", style=None, max_bytes=inc_size - 1)
    assert words == [] and [rel for rel, _ in report.files_failed] == ["data/6/x/w.dat"]
    assert report.failures_by_kind() == {"file over the size limit": 1}
    assert "data/6/x/w.dat" in report.files  # hashed in chunks, not read whole
    words, report = read_unipen_release(tmp_path, category="6", style=None, max_bytes=inc_size)
    assert [w.text for w in words] == ["hi"] and report.files_failed == []


# ------------------------------------------------------------------------------------------ IAM-OnDB folder

def test_iamondb_folder_applies_the_limit_to_every_file(tmp_path, monkeypatch):
    root = tmp_path / "IAM-OnDB"
    line = iam_file(root / "lineStrokes" / "a01" / "a01-000" / "a01-000u-01.xml", IAM_STROKES)
    form = iam_file(root / "original" / "a01" / "a01-000" / "a01-000u.xml", IAM_ORIGINAL + " " * 400)
    iam_file(root / "ascii" / "a01" / "a01-000" / "a01-000u.txt", IAM_ASCII)
    size = form.stat().st_size
    assert line.stat().st_size < size
    with pytest.raises(FormatError) as e:
        read_iamondb(root, max_bytes=size - 1)
    assert_names(str(e.value), form, size, size - 1)
    lines = read_iamondb(root, max_bytes=size)
    assert [(ln.id, ln.writer, ln.text) for ln in lines] == [("a01-000u-01", "10158", "A MOVE")]


# ------------------------------------------------------------------------------------------ datasets

def test_manifest_over_the_limit_is_refused_unread(tmp_path, monkeypatch):
    root = make_tiny_dataset(tmp_path / "ds")
    mpath = root / "manifest.json"
    size = mpath.stat().st_size
    with no_reads(monkeypatch):
        with pytest.raises(DatasetError) as e:
            load_dataset(root, max_manifest_bytes=size - 1)
        with pytest.raises(DatasetError) as e2:
            dataset.dataset_hash(root, max_manifest_bytes=size - 1)
    assert_names(str(e.value), mpath, size, size - 1, MANIFEST_ENV)
    assert "max_manifest_bytes=" in str(e.value) and str(e2.value) == str(e.value)
    monkeypatch.setenv(MANIFEST_ENV, repr((size - 1) / 2**20))
    with pytest.raises(DatasetError, match="over the read limit"):
        load_dataset(root)
    assert len(load_dataset(root, max_manifest_bytes=size).pages) == 2


def test_page_inks_over_the_limit_are_refused_unread(tmp_path, monkeypatch):
    root = make_tiny_dataset(tmp_path / "ds")
    inks = root / "inks" / "p000.json"
    size = inks.stat().st_size
    read_text = Path.read_text

    def spy(self, *a, **k):
        if self.parent.name == "inks":
            raise AssertionError(f"{self} was read although it is over the limit")
        return read_text(self, *a, **k)

    monkeypatch.setattr(Path, "read_text", spy)
    with pytest.raises(DatasetError) as e:
        load_dataset(root, max_ink_bytes=size - 1)
    monkeypatch.undo()
    assert_names(str(e.value), inks, size, size - 1)
    assert "inks of page p000" in str(e.value) and "max_ink_bytes=" in str(e.value)
    assert load_dataset(root, max_ink_bytes=max(f.stat().st_size for f in (root / "inks").iterdir())).n_words == 6


def _edit_manifest(root: Path, **page0) -> Path:
    mpath = root / "manifest.json"
    m = json.loads(mpath.read_text("utf-8"))
    m["pages"][0].update(page0)
    mpath.write_text(json.dumps(m), "utf-8")
    return mpath


@pytest.mark.parametrize("side", ["width", "height"])
def test_manifest_page_side_above_max_page_side_is_refused(tmp_path, side):
    root = make_tiny_dataset(tmp_path / "ds")
    mpath = _edit_manifest(root, **{side: defaults.MAX_PAGE_SIDE + 1})
    for check_images in (True, False):
        with pytest.raises(DatasetError) as e:
            load_dataset(root, check_images=check_images)
        msg = str(e.value)
        assert msg.startswith(f"{mpath}: page p000: field {side}: 12001 px; ") and "at most 12000 x 12000 px" in msg


def test_max_page_side_is_defined_once():
    from inkground_lib.datasets.synth import generate

    assert generate.MAX_PAGE_SIDE is defaults.MAX_PAGE_SIDE == 12000
    assert defaults.MAX_PAGE_PIXELS == 12000 * 12000
    src = Path(generate.__file__).read_text("utf-8")
    assert "MAX_PAGE_SIDE =" not in src


def _png_header(path: Path, width: int, height: int) -> Path:
    """A PNG whose header claims width x height (1-bit grey); its pixel data is never decoded here."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0"))
                     + chunk(b"IEND", b""))
    return path


def test_photos_open_with_the_page_bound_as_pil_bomb_limit(tmp_path):
    from PIL import Image

    ok = _png_header(tmp_path / "max.png", 12000, 12000)  # 144 M pixels: over PIL's default warning limit
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with dataset.open_photo(ok, "m.json: page p0") as im:
            assert im.size == (12000, 12000)
    assert Image.MAX_IMAGE_PIXELS == defaults.MAX_PAGE_PIXELS
    wide = _png_header(tmp_path / "wide.png", 12001, 10)
    with pytest.raises(DatasetError, match=r"^m.json: page p0: field image: wide.png is 12001 x 10 px; pages"):
        dataset.open_photo(wide, "m.json: page p0")
    bomb = _png_header(tmp_path / "bomb.png", 30000, 10000)  # 300 M pixels: PIL's error, not a decode
    with pytest.raises(DatasetError, match=r"^m.json: page p0: field image: bomb.png is refused: .*exceeds limit"):
        dataset.open_photo(bomb, "m.json: page p0")


def test_page_photo_bigger_than_max_page_side_is_refused_by_load_image(tmp_path):
    root = make_tiny_dataset(tmp_path / "ds")
    ds = load_dataset(root)
    page = ds.pages[0]
    _png_header(page.image, 12001, 10)  # the photo replaced after loading
    with pytest.raises(DatasetError, match=rf"{page.image}: page p000: field image: .* is 12001 x 10 px"):
        page.load_image()
    assert ds.pages[1].load_image().shape == (100, 200, 3)


# ------------------------------------------------------------------------------------------ NUL bytes (part C)

@pytest.mark.parametrize("field", ["image", "inks"])
def test_nul_byte_in_a_manifest_path_names_manifest_page_and_field(tmp_path, field):
    root = make_tiny_dataset(tmp_path / "ds")
    value = {"image": "pages/p000.jpg\u0000.png", "inks": "inks/p000\u0000.json"}[field]
    mpath = _edit_manifest(root, **{field: value})
    for check_images in (True, False):
        with pytest.raises(DatasetError) as e:
            load_dataset(root, check_images=check_images)
        msg = str(e.value)
        assert msg.startswith(f"{mpath}: page p000: field {field}: ") and "NUL byte" in msg, msg
        assert "embedded null byte" not in msg
    with pytest.raises(DatasetError, match=rf"^{mpath}: pages\[0\]: field {field}: .*NUL byte"):
        dataset.dataset_hash(root)


def test_check_file_size_names_a_nul_path():
    with pytest.raises(DatasetError, match=r"'a\\x00b': cannot be read"):
        check_file_size("a\x00b", None, 10, INK_ENV)


# ---- issue 33: limits checked while reading, before anything is written

def test_inkml_nested_5000_levels_is_refused_naming_the_file_not_a_recursion_error(tmp_path):
    from inkground_lib.formats.inkml import read_inkml
    from inkground_lib.formats.xmlsafe import FormatError

    f = tmp_path / "deep.inkml"
    f.write_text('<ink xmlns="http://www.w3.org/2003/InkML">' + "<traceGroup>" * 5000 + "<trace>1 2, 3 4</trace>"
                 + "</traceGroup>" * 5000 + "</ink>", "utf-8")
    with pytest.raises(FormatError, match=r"deep\.inkml: <traceGroup>: nested 101 levels deep; .* deeper than 100 "
                                          r"levels are refused \(MAX_XML_DEPTH\)"):
        read_inkml(f)
    ok = tmp_path / "ok.inkml"
    ok.write_text('<ink xmlns="http://www.w3.org/2003/InkML">' + "<traceGroup>" * 98 + "<trace>1 2, 3 4</trace>"
                  + "</traceGroup>" * 98 + "</ink>", "utf-8")
    assert len(read_inkml(ok)) == 98  # 100 levels: ink, 98 groups, the trace


def test_an_inkml_trace_over_the_point_limit_is_refused_before_parsing(tmp_path, monkeypatch):
    import inkground_lib.formats.inkml as inkml
    from inkground_lib.formats.xmlsafe import FormatError

    monkeypatch.setattr(inkml, "MAX_INK_POINTS", 1000)
    f = tmp_path / "long.inkml"
    f.write_text('<ink xmlns="http://www.w3.org/2003/InkML"><trace>' + ", ".join(["1 2"] * 600) + "</trace><trace>"
                 + ", ".join(["1 2"] * 600) + "</trace></ink>", "utf-8")
    with pytest.raises(FormatError, match=r"long\.inkml: <trace> #1: the file holds more than 1,000 points "
                                          r"\(MAX_INK_POINTS\)"):
        inkml.read_inkml(f)


def test_an_inkml_annotation_of_100000_characters_is_refused(tmp_path):
    from inkground_lib.formats.inkml import read_inkml
    from inkground_lib.formats.xmlsafe import FormatError

    f = tmp_path / "text.inkml"
    f.write_text('<ink xmlns="http://www.w3.org/2003/InkML"><traceGroup><annotation type="truth">' + "w" * 100_000
                 + "</annotation><trace>1 2, 3 4</trace></traceGroup></ink>", "utf-8")
    with pytest.raises(FormatError, match=r"text\.inkml: <traceGroup> <annotation type='truth'>: a text of 100,000 "
                                          r"characters"):
        read_inkml(f)
