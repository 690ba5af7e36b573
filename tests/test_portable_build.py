"""A moved or renamed checkout keeps its build: no absolute path in a dataset's manifest, the same digest after
the move, and a changed source still rebuilds (issue 36)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from inkground_lib.core import layout
from inkground_lib.core.dataset import dataset_hash, load_dataset
from inkground_lib.core.repo_paths import RepoPathError, portable_path, repo_path, repo_root
from inkground_lib.core.validate import validate_dataset
from inkground_lib.datasets.recorded import build_recorded

SUBSET = Path(__file__).resolve().parents[1] / "data" / "unipen_cursive" / "unipen_cursive_dev.json"


def _checkout(root: Path) -> Path:
    """A stand-in checkout: the shipped UNIPEN subset at its place under ``root``."""
    src = root / "data" / "unipen_cursive" / SUBSET.name
    src.parent.mkdir(parents=True)
    shutil.copyfile(SUBSET, src)
    return src


def _files(folder: Path) -> dict[str, tuple[int, int]]:
    return {p.relative_to(folder).as_posix(): (p.stat().st_mtime_ns, p.stat().st_size)
            for p in folder.rglob("*") if p.is_file() and p.name != ".inkground.lock"}


def test_a_moved_checkout_keeps_its_recorded_dataset(tmp_path, monkeypatch):
    old, new = tmp_path / "checkout", tmp_path / "moved" / "renamed"
    src = _checkout(old)
    monkeypatch.setattr(layout, "ROOT", old)
    out = build_recorded(old / "data" / "datasets" / "recorded", unipen=src, pages=2, seed=0, progress=False)
    manifest = (out / "manifest.json").read_text("utf-8")
    assert str(tmp_path) not in manifest  # no absolute path of the build machine
    assert json.loads(manifest)["meta"]["sources"][0]["path"] == "data/unipen_cursive/unipen_cursive_dev.json"
    digest, before = dataset_hash(out), _files(out)

    new.parent.mkdir(parents=True)
    shutil.move(str(old), str(new))  # the whole checkout moves; file times move with it
    monkeypatch.setattr(layout, "ROOT", new)
    moved = new / "data" / "datasets" / "recorded"
    assert validate_dataset(moved) == []
    again = build_recorded(moved, unipen=new / "data" / "unipen_cursive" / SUBSET.name, pages=2, seed=0,
                           progress=False)
    assert again == moved and _files(moved) == before  # reused as built: nothing rewritten
    assert dataset_hash(moved) == digest  # so no section's fingerprint changes
    assert len(load_dataset(moved).pages) == 2

    # a recorded input changed after the move still rebuilds what reads it
    src_new = new / "data" / "unipen_cursive" / SUBSET.name
    data = json.loads(src_new.read_text("utf-8"))
    data["samples"] = data["samples"][::-1]
    src_new.write_text(json.dumps(data), "utf-8")
    build_recorded(moved, unipen=src_new, pages=2, seed=0, progress=False)
    assert dataset_hash(moved) != digest


def test_portable_path_relative_inside_the_root_absolute_outside(tmp_path, monkeypatch):
    monkeypatch.setattr(layout, "ROOT", tmp_path / "repo")
    (tmp_path / "repo" / "data").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    assert portable_path(tmp_path / "repo" / "data" / "x.json") == "data/x.json"
    assert portable_path(tmp_path / "elsewhere" / "x.json") == str((tmp_path / "elsewhere" / "x.json").resolve())
    # a link into the checkout counts as inside it
    (tmp_path / "link").symlink_to(tmp_path / "repo" / "data")
    assert portable_path(tmp_path / "link" / "y.json") == "data/y.json"
    # and repo_path reads a record back wherever the process runs
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert repo_path("data/x.json") == tmp_path / "repo" / "data" / "x.json"
    assert repo_path(tmp_path / "elsewhere") == tmp_path / "elsewhere"


def test_repo_root_is_the_checkout_wherever_the_kernel_starts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # JupyterLab's kernel starts in notebooks/, a script anywhere
    root = repo_root()
    assert (root / "notebooks").is_dir() and (root / "inkground_lib" / "core" / "repo_paths.py").is_file()
    assert repo_path("notebooks") == root / "notebooks"
    monkeypatch.setattr(layout, "ROOT", tmp_path)  # a copy installed outside a checkout
    with pytest.raises(RepoPathError, match="pip install -e"):
        repo_root()
