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
    (run / ".inkground-run.json").write_text("{}")  # the run folder's own marker: not a result
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
    mine = {p for p in paths if p.startswith("external/")}
    assert {p.rsplit("/run03/", 1)[1] for p in mine} == {"summary-reference.csv", "facts.json", "style/model.json"}
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
