"""inkground restore (issue 43): the book's results archive turned back into its runs, every file checked against
its manifest before anything is written; a tampered archive refused naming the file, a re-zipped one restored the
same, a file here that differs kept unless --force, https or a local file only (loopback http where a test asks)."""

import json
import zipfile

import pytest

from inkground_lib.cli import main as cli_main
from inkground_lib.publish import restore as rs
from inkground_lib.publish import results
from inkground_lib.publish.linkcheck import serve

RUN = "data/runs/synth/03_evaluation"


def _book(root):
    """A small built book in ``root``: section 04's executed notebook and the run folder it read."""
    run = root / RUN
    (run / "predictions").mkdir(parents=True)
    (run / "summary-reference.csv").write_text("system,dtw\nskeleton,0.123\nfont,0.456\n")
    (run / "facts-reference.json").write_text('{"words": 12}')
    (run / "predictions" / "skeleton.jsonl").write_text('{"request": "a", "raw": "<strokes/>"}\n')
    (run / "predictions" / "skeleton.lock").write_text("")  # a lock: never a result
    (run / ".inkground-run.json").write_text('{"inkground": "run folder"}')  # the run folder's mark: restored
    (run / ".hidden.json").write_text("{}")  # another hidden file: not in the archive
    nb = {"cells": [], "nbformat": 4, "nbformat_minor": 5,
          "metadata": {"inkground": {"section": "04_tradeoffs", "fingerprint": "f" * 64, "parameters": {}},
                       "papermill": {"parameters": {"eval_runs": [RUN], "n_boot": 10}}}}
    ex = root / "book" / "sections" / "04_tradeoffs.ipynb"
    ex.parent.mkdir(parents=True)
    ex.write_text(json.dumps(nb))
    return ex


@pytest.fixture
def built(tmp_path):
    root = tmp_path / "built"
    ex = _book(root)
    out = root / "_build" / "html" / results.ARCHIVE_NAME
    out.parent.mkdir(parents=True)
    results.pack(out, [ex], root=root)
    return root, out


def _files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_restore_puts_the_notebooks_and_run_files_back(built, tmp_path):
    root, archive = built
    here = tmp_path / "here"
    here.mkdir()
    r = rs.restore(str(archive), here, datasets=False)
    want = {"book/sections/04_tradeoffs.ipynb", f"{RUN}/summary-reference.csv", f"{RUN}/facts-reference.json",
            f"{RUN}/predictions/skeleton.jsonl", f"{RUN}/.inkground-run.json"}
    assert set(r.written) == want and r.unchanged == [] and r.sections == ["04_tradeoffs"]
    assert any(m.endswith("data/paper/reported.csv") for m in r.skipped)  # the checkout's own
    got = _files(here)
    assert set(got) == want and all(got[m] == (root / m).read_bytes() for m in want)
    again = rs.restore(str(archive), here, datasets=False)  # the same archive again: nothing to write
    assert again.written == [] and set(again.unchanged) == want


def _rezip(src, dst, body=None, compression=zipfile.ZIP_STORED):
    with zipfile.ZipFile(src) as z:
        items = [(i.filename, z.read(i.filename)) for i in z.infolist()]
    with zipfile.ZipFile(dst, "w", compression) as z:
        for name, data in reversed(items):  # another order, other dates, another compression
            z.writestr(zipfile.ZipInfo(name, date_time=(2030, 5, 6, 7, 8, 10)), (body or {}).get(name, data))


def test_a_tampered_archive_is_refused_naming_the_file_and_writes_nothing(built, tmp_path):
    _, archive = built
    bad = tmp_path / "bad.zip"
    _rezip(archive, bad, {f"{RUN}/summary-reference.csv": b"system,dtw\nskeleton,0.100\nfont,0.456\n"})
    here = tmp_path / "here"
    here.mkdir()
    with pytest.raises(rs.RestoreError, match=rf"refused, nothing written: {RUN}/summary-reference.csv: sha256"):
        rs.restore(str(bad), here, datasets=False)
    assert _files(here) == {} and list(here.iterdir()) == []  # no staging folder left either


def test_a_rezipped_archive_restores_the_same(built, tmp_path):
    _, archive = built
    again = tmp_path / "rezipped.zip"
    _rezip(archive, again)
    assert again.read_bytes() != archive.read_bytes()
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    rs.restore(str(archive), a, datasets=False)
    rs.restore(str(again), b, datasets=False)
    assert _files(a) == _files(b) != {}


def test_a_file_here_that_differs_is_kept_unless_forced(built, tmp_path):
    _, archive = built
    here = tmp_path / "here"
    mine = here / RUN / "summary-reference.csv"
    mine.parent.mkdir(parents=True)
    mine.write_text("my own\n")
    with pytest.raises(rs.RestoreError, match=rf"1 file\(s\) here differ .*first: {RUN}/summary-reference.csv.*"
                                              "nothing written"):
        rs.restore(str(archive), here, datasets=False)
    assert mine.read_text() == "my own\n" and not (here / "book").exists()
    r = rs.restore(str(archive), here, datasets=False, force=True)
    assert f"{RUN}/summary-reference.csv" in r.written and mine.read_text().startswith("system,dtw")


def test_an_address_is_read_over_https_or_from_loopback_where_a_test_asks(built, tmp_path):
    root, archive = built
    here = tmp_path / "here"
    here.mkdir()
    with serve(archive.parent) as base:
        url = f"{base}{results.ARCHIVE_NAME}"
        with pytest.raises(rs.RestoreError, match="only an https address"):
            rs.restore(url, here, datasets=False)
        r = rs.restore(url, here, datasets=False, allow_http_loopback=True)
        assert "book/sections/04_tradeoffs.ipynb" in r.written
        with pytest.raises(rs.RestoreError, match="HTTP 404"):
            rs.restore(f"{base}missing.zip", here, datasets=False, allow_http_loopback=True)
        with pytest.raises(rs.RestoreError, match="more than the 100 bytes allowed"):
            rs.restore(url, here, datasets=False, allow_http_loopback=True, max_bytes=100)
    with pytest.raises(rs.RestoreError, match="only an https address"):
        rs.restore("http://10.1.2.3/inkground-results.zip", here, datasets=False, allow_http_loopback=True)
    with pytest.raises(rs.RestoreError, match="only an https address"):
        rs.restore("ftp://127.0.0.1/x.zip", here, datasets=False, allow_http_loopback=True)
    with pytest.raises(rs.RestoreError, match="no such file"):
        rs.restore(str(tmp_path / "nothing.zip"), here, datasets=False)


def test_the_published_address_follows_citation_cff(tmp_path):
    (tmp_path / "CITATION.cff").write_text("cff-version: 1.2.0\ntitle: x\n")
    with pytest.raises(rs.RestoreError, match="no repository-code"):
        rs.published_url(tmp_path)
    (tmp_path / "CITATION.cff").write_text("cff-version: 1.2.0\ntitle: x\nrepository-code: https://github.com/Ab/ink\n")
    assert rs.published_url(tmp_path) == "https://ab.github.io/ink/inkground-results.zip"


def test_the_command_takes_one_source_and_says_what_it_did(built, tmp_path, capsys, monkeypatch):
    _, archive = built
    assert cli_main(["restore"]) == 2
    assert "give the archive" in capsys.readouterr().err
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.setattr(rs, "ROOT", here)
    real = rs.restore
    monkeypatch.setattr(rs, "restore", lambda src, **kw: real(src, here, **{**kw, "datasets": False}))
    assert cli_main(["restore", str(archive)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("restored 5 files (0 already equal) of 1 sections")
    assert cli_main(["restore", str(tmp_path / "nothing.zip")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("inkground restore: error: ") and "nothing.zip: no such file" in err


def test_the_cap_bounds_the_archive_file_not_what_it_unpacks_to(tmp_path):
    """The book's archive is compressed (75 MiB of zip, 202 MiB unpacked, at 0ffddcc): the cap bounds the archive's
    file, downloaded or local; what it unpacks to is bounded by the safe reader's own limit."""
    root = tmp_path / "built"
    ex = _book(root)
    (root / RUN / "big.csv").write_text("system,dtw\n" + "skeleton,0.123\n" * 40_000)  # 600 kB, compresses well
    archive = root / results.ARCHIVE_NAME
    results.pack(archive, [ex], root=root)
    size = archive.stat().st_size
    assert size < 100_000 < (root / RUN / "big.csv").stat().st_size
    here = tmp_path / "here"
    here.mkdir()
    r = rs.restore(str(archive), here, datasets=False, max_bytes=100_000)
    assert f"{RUN}/big.csv" in r.written
    assert (here / RUN / "big.csv").read_bytes() == (root / RUN / "big.csv").read_bytes()
    with pytest.raises(rs.RestoreError, match=rf"{size:,} bytes, more than the {size - 1:,} bytes allowed; not read"):
        rs.restore(str(archive), here, datasets=False, max_bytes=size - 1)
