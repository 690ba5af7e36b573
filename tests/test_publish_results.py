"""The results archive: the run files behind the book's numbers with a manifest; verify fails after one value
of one CSV is edited, a file is added or removed, or the book is of another run (issue 35)."""
import json
import zipfile

import pytest

from inkground_lib.publish import results


def _book(tmp_path):
    run = tmp_path / "run03"
    (run / "style").mkdir(parents=True)
    (run / "summary-reference.csv").write_text("system,dtw\nskeleton,0.123\nfont,0.456\n")
    (run / "facts.json").write_text('{"words": 12}')
    (run / "style" / "model.json").write_text("{}")
    (run / ".inkground-run.json").write_text("{}")  # the run folder's mark: kept (restore needs it)
    (run / ".hidden.json").write_text("{}")  # any other hidden file: not a result
    (run / "preds.npz").write_bytes(b"\0")  # not CSV/JSON
    nb = {"cells": [], "nbformat": 4, "nbformat_minor": 5,
          "metadata": {"inkground": {"section": "04_tradeoffs", "fingerprint": "f" * 64, "parameters": {}},
                       "papermill": {"parameters": {"eval_runs": [str(run)], "n_boot": 10}}}}
    ex = tmp_path / "sections" / "04_tradeoffs.ipynb"
    ex.parent.mkdir()
    ex.write_text(json.dumps(nb))
    return run, ex


def test_pack_lists_every_result_with_its_hash_and_maker(tmp_path):
    run, ex = _book(tmp_path)
    out = tmp_path / "r.zip"
    m = results.pack(out, [ex])
    paths = {f["path"] for f in m["files"]}
    mine = {p for p in paths if p.startswith("external/") and "/run03/" in p}
    assert {p.rsplit("/run03/", 1)[1] for p in mine} == {"summary-reference.csv", "facts.json", "style/model.json",
                                                         ".inkground-run.json"}
    assert "data/paper/reported.csv" in paths  # the paper's numbers the book compares with
    entry = next(f for f in m["files"] if f["path"].endswith("summary-reference.csv"))
    assert entry["made_by"] == [{"section": "04_tradeoffs", "parameter": "eval_runs"}]
    sec = m["sections"][0]
    assert sec["parameters"]["n_boot"] == 10 and sec["parameters"]["eval_runs"] == [str(run)]
    assert "seed" in sec["parameters"]  # the notebook's defaults, with what papermill injected
    with zipfile.ZipFile(out) as z:
        assert {"MANIFEST.json", "CITATION.cff", "citation.bib"} <= set(z.namelist())
    assert results.verify(out, [ex]) == []
    first = out.read_bytes()
    results.pack(out, [ex])
    assert out.read_bytes() == first  # deterministic


def _rewrite(archive, name, data):
    with zipfile.ZipFile(archive) as z:
        items = [(i, z.read(i.filename)) for i in z.infolist()]
    with zipfile.ZipFile(archive, "w") as z:
        for info, body in items:
            z.writestr(info, data if info.filename == name else body)


def test_one_edited_value_fails_verification(tmp_path):
    _, ex = _book(tmp_path)
    out = tmp_path / "r.zip"
    m = results.pack(out, [ex])
    name = next(f["path"] for f in m["files"] if f["path"].endswith("summary-reference.csv"))
    _rewrite(out, name, b"system,dtw\nskeleton,0.124\nfont,0.456\n")
    problems = results.verify(out, [ex])
    assert len(problems) == 1 and name in problems[0] and "sha256" in problems[0]
    assert results.main(["verify", str(out)]) == 1


def test_another_run_of_the_book_fails_verification(tmp_path):
    _, ex = _book(tmp_path)
    out = tmp_path / "r.zip"
    results.pack(out, [ex])
    nb = json.loads(ex.read_text())
    nb["metadata"]["inkground"]["fingerprint"] = "e" * 64
    ex.write_text(json.dumps(nb))
    assert results.verify(out, [ex]) == ["section 04_tradeoffs: the archive is of another run (fingerprint differs)"]


def test_no_executed_section_is_named(tmp_path):
    with pytest.raises(results.ResultsError, match="no executed section"):
        results.pack(tmp_path / "r.zip", [])


def test_packing_the_same_files_again_writes_nothing_and_a_changed_file_is_packed(tmp_path, monkeypatch):
    """Issue 32: a rerun of make book with nothing changed does not compress the archive again."""
    run, ex = _book(tmp_path)
    out = tmp_path / "r.zip"
    results.pack(out, [ex])
    first = out.read_bytes()
    writes = []
    real = results.atomic_write_bytes
    monkeypatch.setattr(results, "atomic_write_bytes", lambda p, d: writes.append(p) or real(p, d))
    results.pack(out, [ex])
    assert writes == [] and out.read_bytes() == first
    (run / "facts.json").write_text('{"words": 13}')
    results.pack(out, [ex])
    assert writes == [out] and out.read_bytes() != first and results.verify(out, [ex]) == []


# ------------------------------------------------------------------ issue 44: checked as safely as it is unpacked

def _repack(archive, extra=(), listed=True, first=False, edit=None):
    """Rewrite ``archive`` with ``extra`` members ((ZipInfo or name, bytes)) added (before the others when
    ``first``) and, when ``listed``, stated in its manifest with their true sha256 and size, as an attacker who
    rewrites the manifest would; ``edit(manifest)`` changes the manifest."""
    import hashlib
    with zipfile.ZipFile(archive) as z:
        items = [(i, z.read(i.filename)) for i in z.infolist()]
    manifest = json.loads(dict((i.filename, b) for i, b in items)["MANIFEST.json"])
    for info, body in extra:
        name = info.filename if isinstance(info, zipfile.ZipInfo) else info
        if listed and name not in {f["path"] for f in manifest["files"]}:
            manifest["files"].append({"path": name, "sha256": hashlib.sha256(body).hexdigest(), "bytes": len(body)})
    if edit:
        edit(manifest)
    body = json.dumps(manifest).encode()
    items = [(i, body if i.filename == "MANIFEST.json" else b) for i, b in items]
    items = list(extra) + items if first else items + list(extra)
    import warnings
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of a duplicated name: that is the point
        for info, data in items:
            z.writestr(info, data)


def _symlink(name, target):
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = 0o120777 << 16
    return info, target.encode()


@pytest.mark.parametrize("member", [("../outside.csv", b"a,b\n"), ("/tmp/absolute.csv", b"a,b\n"),
                                    ("runs/../../up.csv", b"a,b\n"), _symlink("link.csv", "/etc/passwd")],
                         ids=["dotdot", "absolute", "inner-dotdot", "symlink"])
def test_a_member_an_unpacker_would_write_outside_its_folder_is_refused(tmp_path, member):
    """Issue 44: listed in the manifest with its true sha256, such a member verified on ed2f909."""
    _, ex = _book(tmp_path)
    out = tmp_path / "r.zip"
    results.pack(out, [ex])
    _repack(out, [member])
    problems = results.verify(out, [ex])
    name = member[0].filename if isinstance(member[0], zipfile.ZipInfo) else member[0]
    assert len(problems) == 1 and repr(name) in problems[0], problems


def test_a_duplicated_name_is_refused(tmp_path):
    """Issue 44: an edited copy first, the original last: zipfile reads the last, ``unzip -n`` unpacks the
    first; ed2f909 verified it."""
    _, ex = _book(tmp_path)
    out = tmp_path / "r.zip"
    m = results.pack(out, [ex])
    name = next(f["path"] for f in m["files"] if f["path"].endswith("summary-reference.csv"))
    _repack(out, [(name, b"system,dtw\nskeleton,0.001\nfont,0.456\n")], listed=False, first=True)
    problems = results.verify(out, [ex])
    assert problems == [f"{name!r}: twice in the archive (the same name); an unpacker would keep only one"]


def test_a_size_the_manifest_does_not_state_is_refused_unread(tmp_path):
    """Issue 44: 64 MiB of zeros (64 kB in the archive) where the manifest states 3 bytes: refused before it is
    inflated; ed2f909 read it whole (and ignored the stated size)."""
    import hashlib
    _, ex = _book(tmp_path)
    out = tmp_path / "r.zip"
    results.pack(out, [ex])
    bomb = bytes(64 * 2**20)

    def lie(manifest):
        manifest["files"][-1]["bytes"] = 3

    _repack(out, [("zeros.csv", bomb)], edit=lie)
    assert results.verify(out, [ex]) == ["zeros.csv: 67,108,864 bytes in the archive, the manifest says 3; not read"]
    _repack(out, [], edit=lambda m: m["files"][-1].update(bytes=len(bomb), sha256=hashlib.sha256(bomb).hexdigest()))
    problems = results.verify(out, [ex], max_bytes=32 * 2**20)  # stated, but more than the archive may hold
    assert len(problems) == 1 and "unpack to 67,1" in problems[0] and "over the read limit" in problems[0]
    with pytest.raises(results.ResultsError, match="over the read limit"):  # the file itself
        results.verify(out, [ex], max_bytes=10_000)


def test_members_are_streamed_in_bounded_memory(tmp_path):
    """Issue 44: a 64 MiB member, stated truly, is hashed in 1 MiB chunks: the peak of Python's allocations
    stays far below its size (ed2f909 held it whole: > 64 MiB)."""
    import tracemalloc
    _, ex = _book(tmp_path)
    out = tmp_path / "r.zip"
    results.pack(out, [ex])
    _repack(out, [("zeros.csv", bytes(64 * 2**20))])
    tracemalloc.start()
    try:
        assert results.verify(out, [ex]) == []
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20, peak


@pytest.mark.parametrize("manifest, message", [
    (b"{not json", "MANIFEST.json: not JSON"),
    (b"[]", "MANIFEST.json: expected an object, got array []"),
    (b'{"sections": []}', "MANIFEST.json: field files: missing"),
    (b'{"files": [{"path": "a.csv", "bytes": 1}], "sections": []}', "MANIFEST.json: field files[0].sha256: missing"),
    (b'{"files": {"a.csv": 1}, "sections": []}', "MANIFEST.json: field files: expected an array, got object"),
    (b'{"files": [{"path": "a.csv", "bytes": "1", "sha256": "' + b"0" * 64 + b'"}], "sections": []}',
     "MANIFEST.json: field files[0].bytes: expected an integer (no decimal point), got string '1'"),
    (b'{"files": [{"path": "a.csv", "bytes": 1, "sha256": 5}], "sections": []}',
     "MANIFEST.json: field files[0].sha256: expected a string, got integer 5"),
    (b'{"files": [], "sections": [{"section": "04", "fingerprint": null}]}',
     "MANIFEST.json: field sections[0].parameters: missing"),
    (b"\xff\xfe", "MANIFEST.json: not JSON"),
], ids=["not-json", "not-object", "no-files", "no-sha256", "files-object", "bytes-string", "sha256-int",
        "no-parameters", "not-utf8"])
def test_a_malformed_manifest_is_named_in_one_line(tmp_path, capsys, manifest, message):
    """Issue 44: ed2f909 ended each of these in a Python traceback."""
    _, ex = _book(tmp_path)
    out = tmp_path / "r.zip"
    results.pack(out, [ex])
    _rewrite(out, "MANIFEST.json", manifest)
    with pytest.raises(results.ResultsError) as e:
        results.verify(out, [ex])
    assert str(e.value).startswith(f"{out}: ") and message in str(e.value) and "\n" not in str(e.value)
    assert results.main(["verify", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_an_edited_parameter_fails_verification(tmp_path):
    """Issue 44: the docstring says verify compares each section's parameters; ed2f909 compared only the
    fingerprint."""
    _, ex = _book(tmp_path)
    out = tmp_path / "r.zip"
    results.pack(out, [ex])
    nb = json.loads(ex.read_text())
    nb["metadata"]["papermill"]["parameters"]["n_boot"] = 11
    ex.write_text(json.dumps(nb))
    assert results.verify(out, [ex]) == ["section 04_tradeoffs: parameter n_boot: 10 in the archive, 11 in the book"]


def test_an_archive_that_is_no_zip_is_named(tmp_path, capsys):
    out = tmp_path / "r.zip"
    out.write_bytes(b"PK not really")
    assert results.main(["verify", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a zip archive" in err


def test_restore_unpacks_a_checked_archive_and_nothing_of_a_refused_one(tmp_path):
    """The reader ``restore`` builds on: every member streamed to a staging folder and checked before any is
    moved into place."""
    from inkground_lib.core.archive import ArchiveError, extract, open_archive
    _, ex = _book(tmp_path)
    out = tmp_path / "r.zip"
    m = results.pack(out, [ex])
    dest = tmp_path / "restored"
    with open_archive(out) as a:
        written = extract(a, results.archive_manifest(a)[1], dest)
    assert len(written) == len(m["files"]) + 3
    name = next(f["path"] for f in m["files"] if f["path"].endswith("summary-reference.csv"))
    assert (dest / name).read_bytes() == b"system,dtw\nskeleton,0.123\nfont,0.456\n"
    before = sorted(p.relative_to(dest) for p in dest.rglob("*"))
    (dest / name).write_bytes(b"mine")
    _rewrite(out, name, b"system,dtw\nskeleton,0.124\nfont,0.456\n")  # edited: its sha256 no longer holds
    with open_archive(out) as a, pytest.raises(ArchiveError, match="sha256"):
        extract(a, results.archive_manifest(a)[1], dest)
    assert sorted(p.relative_to(dest) for p in dest.rglob("*")) == before and (dest / name).read_bytes() == b"mine"
    results.pack(out, [ex])
    (tmp_path / "elsewhere").mkdir()
    first = name.split("/")[0]
    import shutil
    shutil.rmtree(dest / first)
    (dest / first).symlink_to(tmp_path / "elsewhere")  # a folder of the target that leads elsewhere
    with open_archive(out) as a, pytest.raises(ArchiveError, match="leaves the folder"):
        extract(a, results.archive_manifest(a)[1], dest)
    assert list((tmp_path / "elsewhere").iterdir()) == []


# ------------------------------------------------- issue 45: judged by its files, anchored by the printed digest

def _zip_r(folder, out, what="."):
    """``zip -r`` as a reader would run it in ``folder`` (Info-ZIP: folder entries, the files' own times, extra
    fields with their owner and times, its own order)."""
    import os
    import shutil
    import subprocess

    exe = shutil.which("zip")
    if exe is None:
        if os.environ.get("CI", "").strip().lower() in ("true", "1"):
            pytest.fail("zip is not installed (apt-get install -y zip)")
        pytest.skip("zip is not installed (apt-get install -y zip)")
    subprocess.run([exe, "-r", "-q", str(out), what], cwd=folder, check=True)
    return out


def _unzipped(tmp_path):
    import hashlib

    _, ex = _book(tmp_path)
    out = tmp_path / "inkground-results.zip"
    results.pack(out, [ex])
    folder = tmp_path / "inkground-results"
    with zipfile.ZipFile(out) as z:
        z.extractall(folder)
        digest = hashlib.sha256(z.read("MANIFEST.json")).hexdigest()
    return ex, folder, digest


def _csv(folder):
    return next(folder.rglob("summary-reference.csv"))


def test_an_archive_unpacked_and_zipped_again_with_zip_r_verifies(tmp_path):
    ex, folder, digest = _unzipped(tmp_path)
    again = _zip_r(folder, tmp_path / "again.zip")
    with zipfile.ZipFile(again) as z:
        infos = z.infolist()
    # what zip -r changed: folder entries, times, extra fields (what verify must not judge)
    assert any(i.is_dir() for i in infos) and any(i.extra for i in infos)
    assert any(i.date_time != (2026, 1, 1, 0, 0, 0) for i in infos if not i.is_dir())
    assert results.verify(again, [ex], anchor=digest) == []


def test_a_file_edited_before_zip_r_is_named(tmp_path):
    import hashlib

    ex, folder, digest = _unzipped(tmp_path)
    csv = _csv(folder)
    csv.write_text(csv.read_text().replace("0.123", "0.124"))
    problems = results.verify(_zip_r(folder, tmp_path / "again.zip"), [ex], anchor=digest)
    edited = hashlib.sha256(csv.read_bytes()).hexdigest()[:12]
    assert len(problems) == 1 and f"summary-reference.csv: sha256 {edited}, the manifest says" in problems[0]


def test_a_file_edited_with_its_manifest_line_is_refused_by_the_printed_digest(tmp_path, monkeypatch, capsys):
    import hashlib

    ex, folder, digest = _unzipped(tmp_path)
    csv = _csv(folder)
    csv.write_text(csv.read_text().replace("0.123", "0.012"))
    manifest = json.loads((folder / "MANIFEST.json").read_text())
    entry = next(f for f in manifest["files"] if f["path"].endswith("summary-reference.csv"))
    entry["sha256"], entry["bytes"] = hashlib.sha256(csv.read_bytes()).hexdigest(), csv.stat().st_size
    (folder / "MANIFEST.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
    forged = _zip_r(folder, tmp_path / "forged.zip")
    assert results.verify(forged, [ex]) == []  # the files match the forged manifest: only the anchor tells
    problems = results.verify(forged, [ex], anchor=digest)
    assert len(problems) == 1 and problems[0].startswith("MANIFEST.json: sha256 ") and digest in problems[0]
    # the command: the digest given, or read from the book's reviewers' page
    monkeypatch.setattr(results, "SECTIONS_DIR", tmp_path / "no-sections")
    assert results.main(["verify", str(forged), "--manifest-sha256", digest]) == 1
    page = tmp_path / "reviewers.md"
    page.write_text(f"# Reviewers\n\n{results.ANCHOR_TARGET}\n## Check the results archive\n\n```text\n{digest}\n```\n")
    monkeypatch.setattr(results, "ANCHOR_PAGE", page)
    capsys.readouterr()
    assert results.main(["verify", str(forged)]) == 1
    assert "MANIFEST.json: sha256" in capsys.readouterr().out
    assert results.main(["verify", str(tmp_path / "inkground-results.zip")]) == 0
    assert f"checked against the digest printed in {page}" in capsys.readouterr().out
    assert results.main(["verify", str(forged), "--manifest-sha256", "0123"]) == 2


def test_an_archive_zipped_with_its_folder_says_how_to_zip_it(tmp_path):
    _, folder, _ = _unzipped(tmp_path)
    wrapped = _zip_r(tmp_path, tmp_path / "wrapped.zip", folder.name)
    with pytest.raises(results.ResultsError, match=r"inkground-results/MANIFEST.json.*zip -r"):
        results.verify(wrapped, [])


def test_the_digest_printed_before_the_archive_is_written_is_the_written_archives(tmp_path):
    """make book prints the manifest's digest on the reviewers' page while the archive is still being compressed
    (issue 42): it must be the digest of the archive then written, and the page must say it."""
    from inkground_lib.report.reviewers import archive_lines, manifest_digest

    run, ex = _book(tmp_path)
    contents = results.archive_contents([ex])
    out = tmp_path / "r.zip"
    results.write_archive(out, contents)
    assert manifest_digest(out) == contents.digest()
    (run / "facts.json").write_text('{"words": 13}')  # another result: another digest
    assert results.archive_contents([ex]).digest() != contents.digest()
    printed = "\n".join(archive_lines(None, digest=contents.digest()))
    assert contents.digest()[0] in printed and f"lists the {contents.digest()[1]:,} files" in printed
