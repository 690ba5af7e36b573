"""`make lab` (inkground lab): working copies that keep the committed notebooks as they are, and a JupyterLab that
answers on loopback (issue 36)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from inkground_lib.cli.lab import RECORD, kernel_spec, lab_note, server_python, working_copies

ROOT = Path(__file__).resolve().parents[1]


def _nb(path: Path, text: str) -> None:
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "source": text, "metadata": {}, "outputs": [],
                                           "execution_count": None}], "metadata": {}, "nbformat": 4,
                                "nbformat_minor": 5}))


def _sources(path: Path) -> list[str]:
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in json.loads(path.read_text())["cells"]]


def test_working_copies_follow_their_sources_unless_edited(tmp_path):
    src, dst = tmp_path / "notebooks", tmp_path / "lab"
    src.mkdir()
    _nb(src / "01_a.ipynb", "x = 1")
    _nb(src / "02_b.ipynb", "y = 1")
    assert working_copies(src, dst) == [("01_a.ipynb", "copied"), ("02_b.ipynb", "copied")]
    assert _sources(dst / "01_a.ipynb") == [lab_note("01_a.ipynb"), "x = 1"]  # the source after the note
    assert working_copies(src, dst) == [("01_a.ipynb", "unchanged"), ("02_b.ipynb", "unchanged")]
    # JupyterLab saves an edit into the copy; the committed source is untouched
    before = (src / "01_a.ipynb").read_bytes()
    nb = json.loads((dst / "01_a.ipynb").read_text())
    nb["cells"][1]["source"] = "x = 2  # edited in JupyterLab"
    (dst / "01_a.ipynb").write_text(json.dumps(nb))
    assert working_copies(src, dst)[0] == ("01_a.ipynb", "unchanged") and (src / "01_a.ipynb").read_bytes() == before
    # a copy JupyterLab only saved (autosave: its own layout, metadata, outputs, execution counts) is no edit
    nb = json.loads((dst / "02_b.ipynb").read_text())
    nb["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3 (inkground)"}
    nb["cells"][1].update(execution_count=4, outputs=[{"output_type": "stream", "name": "stdout", "text": "1\n"}])
    nb["cells"][1]["source"] = ["y = 1"]
    (dst / "02_b.ipynb").write_text(json.dumps(nb, indent=2))
    # a git pull changes both sources: the unedited copy follows, the edited one is kept and the command says so
    _nb(src / "01_a.ipynb", "x = 3")
    _nb(src / "02_b.ipynb", "y = 3")
    res = dict(working_copies(src, dst))
    assert res["02_b.ipynb"] == "updated" and _sources(dst / "02_b.ipynb")[1] == "y = 3"
    assert res["01_a.ipynb"].startswith("kept: edited here") and "edited in JupyterLab" in (dst / "01_a.ipynb").read_text()
    (dst / "01_a.ipynb").unlink()  # deleting the copy gets the new source
    assert dict(working_copies(src, dst))["01_a.ipynb"] == "copied" and _sources(dst / "01_a.ipynb")[1] == "x = 3"
    assert set(json.loads((dst / RECORD).read_text())) == {"01_a.ipynb", "02_b.ipynb"}


def _autosaved(path: Path) -> None:
    """Rewrite ``path`` as JupyterLab's saving does without an edit: its own JSON layout, cell ids, kernel and
    language metadata, outputs and execution counts of cells that ran."""
    nb = json.loads(path.read_text())
    for k, c in enumerate(nb["cells"]):
        c["id"] = f"cell-{k}"
        c["execution_count"] = k + 1
        c["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["ran\n"]}]
        c["source"] = c["source"].splitlines(keepends=True) if isinstance(c["source"], str) else c["source"]
    nb["metadata"].update({"kernelspec": {"name": "inkground", "display_name": "inkground"},
                           "language_info": {"name": "python", "version": "3.11.7"}})
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


def test_a_copy_only_saved_by_jupyterlab_still_follows_its_source(tmp_path):
    """Issue 44: a working copy JupyterLab had only saved (autosave) was reported as "edited here" and stopped
    following its source; only an edit of its cells keeps it now."""
    src, dst = tmp_path / "notebooks", tmp_path / "lab"
    src.mkdir()
    _nb(src / "01_a.ipynb", "x = 1\ny = 2")
    working_copies(src, dst)
    _autosaved(dst / "01_a.ipynb")
    assert working_copies(src, dst) == [("01_a.ipynb", "unchanged")]
    _nb(src / "01_a.ipynb", "x = 1\ny = 3")  # a git pull
    assert working_copies(src, dst) == [("01_a.ipynb", "updated")] and "y = 3" in (dst / "01_a.ipynb").read_text()
    _autosaved(dst / "01_a.ipynb")
    nb = json.loads((dst / "01_a.ipynb").read_text())
    nb["cells"][0]["source"][0] = "x = 5\n"  # now an edit
    (dst / "01_a.ipynb").write_text(json.dumps(nb))
    _nb(src / "01_a.ipynb", "x = 1\ny = 4")
    (what,) = dict(working_copies(src, dst)).values()
    assert what.startswith("kept: edited here") and "x = 5" in (dst / "01_a.ipynb").read_text()


def test_a_copy_made_by_an_earlier_inkground_follows_its_source_unless_edited(tmp_path):
    """lab/.inkground-lab.json of an earlier version recorded the source's digest; its copies were the source."""
    import hashlib

    src, dst = tmp_path / "notebooks", tmp_path / "lab"
    src.mkdir()
    dst.mkdir()
    for name, text in (("01_a.ipynb", "x = 1"), ("02_b.ipynb", "y = 1")):
        _nb(src / name, text)
        (dst / name).write_bytes((src / name).read_bytes())
    (dst / RECORD).write_text(json.dumps({n: hashlib.sha256((src / n).read_bytes()).hexdigest()
                                          for n in ("01_a.ipynb", "02_b.ipynb")}))
    _nb(dst / "01_a.ipynb", "x = 2  # edited")
    _nb(src / "01_a.ipynb", "x = 3")
    _nb(src / "02_b.ipynb", "y = 3")
    res = dict(working_copies(src, dst))
    assert res["02_b.ipynb"] == "updated" and res["01_a.ipynb"].startswith("kept: edited here")


def test_the_section_notebooks_working_copies_explain_the_books_markup(tmp_path):
    """Issue 46: JupyterLab showed {glue:text} placeholders with no word about them."""
    working_copies(ROOT / "notebooks", tmp_path)
    for nb in sorted(tmp_path.glob("*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        assert cells[0]["cell_type"] == "markdown" and "{glue:text}" in cells[0]["source"]
        assert f"notebooks/{nb.name}" in cells[0]["source"] and "data/reruns/<name>/" in cells[0]["source"]
        assert "the cells after it are refused" in cells[0]["source"]
        assert cells[1:] == json.loads((ROOT / "notebooks" / nb.name).read_text())["cells"]


def test_lab_copies_and_checkpoints_are_ignored_by_git():
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert "/lab/" in ignored and ".ipynb_checkpoints/" in ignored and ".venv-lab/" in ignored
    # JupyterLab is pinned for its own environment, not in .venv's pin list (it would slow every import of papermill)
    assert any(line.startswith("jupyterlab==") for line in (ROOT / "requirements-lab.txt").read_text().splitlines())
    assert not any(line.startswith("jupyterlab") for line in (ROOT / "requirements.txt").read_text().splitlines())


def test_the_kernel_is_this_environments_python_whatever_runs_the_server(tmp_path):
    spec = json.loads(kernel_spec(tmp_path).read_text())
    assert spec["argv"][:3] == [sys.executable, "-m", "ipykernel_launcher"] and "{connection_file}" in spec["argv"]
    assert kernel_spec(tmp_path) == tmp_path / "kernels" / "python3" / "kernel.json"  # the notebooks' kernel name
    with pytest.raises(ValueError, match="make lab"):
        server_python(str(tmp_path / "no-python"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow  # starts JupyterLab (~5-20 s)
def test_make_lab_answers_on_loopback_and_stops_with_the_command(tmp_path):
    port = _free_port()
    if not (ROOT / ".venv-lab" / ".inkground-installed").is_file():  # the server's environment, as `make lab` makes it
        subprocess.run(["make", "-s", ".venv-lab/.inkground-installed"], cwd=ROOT, check=True)
    proc = subprocess.Popen([sys.executable, "-m", "inkground_lib.cli", "lab", "--no-browser", "--port", str(port)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env={**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")})
    try:
        t0, code = time.monotonic(), None
        while time.monotonic() - t0 < 60 and code != 200:
            try:
                code = urllib.request.urlopen(f"http://127.0.0.1:{port}/lab", timeout=5).status
            except OSError:
                time.sleep(0.5)
        assert code == 200, f"no answer within 60 s (exit {proc.poll()})"
    finally:
        proc.send_signal(signal.SIGTERM)
        out = proc.communicate(timeout=30)[0].decode(errors="replace")
    with pytest.raises(OSError):  # the server went with the command
        urllib.request.urlopen(f"http://127.0.0.1:{port}/lab", timeout=5)
    assert "working copies of notebooks/ in lab/" in out
