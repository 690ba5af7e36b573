"""A section notebook rerun in JupyterLab, driven in a real browser (headless system Chromium through Playwright;
no browser download), as a user of `make lab` would (issue 46): the parameters cell edited in the page, the
cell after it run twice, then Run All. The run checks its values first, plans the same rerun however often that
cell runs, writes only under data/reruns/<name>/ (data/runs/ and book/sections/ keep their sha256), and records
every parameter with its source; a wrong value stops it in that cell, named, with no folder written.

The server is the one `make lab` starts (cli/lab.server_command: .venv-lab's JupyterLab, this environment's
kernel) on a folder of working copies of its own. Section 02 runs on three tiny synthetic pages (~1 min)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from inkground_lib.cli.lab import server_command, server_python, working_copies
from inkground_lib.core import layout
from inkground_lib.core.notebook_params import section_defaults
from inkground_lib.core.reruns import PLANNED_ENV, RERUN_RECORD, plan_run, read_rerun

import browser_checks

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ROOT = layout.ROOT
NOTEBOOK = "02_pseudo_labels.ipynb"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _sha256_tree(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()} if folder.is_dir() else {}


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab on loopback serving working copies in a folder of its own; yields (base URL with token, folder,
    tiny candidates dataset)."""
    from inkground_lib.datasets.synth.generate import SynthParams, generate

    tmp = tmp_path_factory.mktemp("lab_browser")
    cand = generate(tmp / "ds", SynthParams(pages=3, width=500, height=650, words_min=1, words_max=2,
                                            words_mean=1.5, seed=3), progress=False, workers=1)
    if not (ROOT / ".venv-lab" / ".inkground-installed").is_file():  # the server's environment, as `make lab`
        subprocess.run(["make", "-s", ".venv-lab/.inkground-installed"], cwd=ROOT, check=True)
    folder = tmp / "lab"
    working_copies(layout.NOTEBOOKS, folder)
    port, token = _free_port(), secrets.token_hex(16)
    cmd, env = server_command(server_python(None), folder, "127.0.0.1", port, browser=False)
    env.pop(PLANNED_ENV, None)
    env.update(JUPYTER_TOKEN=token, JUPYTER_CONFIG_DIR=str(tmp / "config"), JUPYTER_DATA_DIR=str(tmp / "data"),
               JUPYTER_RUNTIME_DIR=str(tmp / "runtime"), JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"))
    log = open(tmp / "server.log", "wb")
    proc = subprocess.Popen(cmd, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        t0 = time.monotonic()
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5)
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() - t0 < 120, (tmp / "server.log").read_text()
                time.sleep(0.5)
        yield base, token, folder, Path(cand)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _code_cell(page, text: str):
    return page.locator(".jp-Notebook .jp-CodeCell").filter(has_text=text).first


def _set_source(page, cell, source: str) -> None:
    """Replace a cell's source as a user would: click into its editor, select all, type (inserted as text, so
    the editor's bracket closing adds nothing)."""
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(source)
    page.keyboard.press("Escape")  # command mode, the cell selected


def _prompt(cell) -> str:
    return cell.locator(".jp-InputPrompt").first.inner_text().strip()


def _run_in_place(page, cell, timeout: float = 60) -> str:
    """Run one cell (Ctrl+Enter in command mode) and wait for its new execution count; returns its output."""
    before = _prompt(cell)
    cell.locator(".jp-InputPrompt").first.click()  # select the cell, command mode
    page.keyboard.press("Control+Enter")
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        now = _prompt(cell)
        if re.fullmatch(r"\[\d+\]:", now) and now != before:
            return cell.locator(".jp-OutputArea").first.inner_text()
        time.sleep(0.2)
    raise AssertionError(f"the cell did not finish within {timeout} s (prompt {_prompt(cell)!r})")


def _parameters(source: str, **values) -> str:
    """The parameters cell's source with ``values`` (Python source text) in place of the defaults."""
    for name, text in values.items():
        source, n = re.subn(rf"^({name}(?:: [^=]+)? = )[^#\n]*?(\s*#|$)", rf"\g<1>{text}\g<2>", source, flags=re.M)
        assert n == 1, name
    return source


def _kernel_state(base: str, token: str) -> str:
    kernels = json.loads(urllib.request.urlopen(f"{base}/api/kernels?token={token}", timeout=10).read())
    return "busy" if any(k.get("execution_state") != "idle" for k in kernels) else "idle"


def _wait_for_run_all(page, base: str, token: str, folder: Path, name: str, timeout: float = 600) -> None:
    """Until the rerun's record says it finished (the notebook's last cell); a kernel idle before that means a
    cell failed: the notebook is saved (Ctrl+S) and its error named."""
    t0, idle = time.monotonic(), 0
    time.sleep(3)
    while True:
        entry = read_rerun(name).get("sections", {}).get("02") or {}
        if entry.get("finished"):
            return
        idle = idle + 1 if _kernel_state(base, token) == "idle" else 0
        if idle >= 3 or time.monotonic() - t0 > timeout:
            page.keyboard.press("Control+s")
            time.sleep(2)
            nb = json.loads((folder / NOTEBOOK).read_text())
            errors = [f"{o.get('ename')}: {o.get('evalue')}" for c in nb["cells"] for o in c.get("outputs", [])
                      if o.get("output_type") == "error"]
            raise AssertionError(f"Run All stopped before the last cell ({time.monotonic() - t0:.0f} s): {errors}")
        time.sleep(1)


def test_a_jupyterlab_rerun_checks_plans_once_writes_its_own_folder_and_records_itself(lab):
    base, token, folder, cand = lab
    src = json.loads((folder / NOTEBOOK).read_text())
    params_source = next("".join(c["source"]) for c in src["cells"]
                         if "parameters" in c.get("metadata", {}).get("tags", []))
    changed = {"candidates": str(cand), "recorded": "", "ocr_threshold": 0.0}
    name = plan_run("02", changed).name
    rerun = ROOT / layout.RERUNS / name
    assert not rerun.exists(), f"{rerun} exists before the test"
    reruns_existed = rerun.parent.exists()
    book = {d: _sha256_tree(ROOT / d) for d in ("data/runs", "book/sections")}
    try:
        with browser_checks.browser() as b:
            page = b.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"{base}/lab/tree/{NOTEBOOK}?token={token}")
            params = _code_cell(page, "# Parameters (papermill)")
            params.wait_for(timeout=120_000)
            plan_cell = _code_cell(page, "start_run(")

            # a wrong value: refused in the cell after the parameters, named, within 10 s, nothing written
            _set_source(page, params, _parameters(params_source, candidates=json.dumps(str(cand)), recorded='""',
                                                  ocr_threshold='"0.0"'))
            _run_in_place(page, params, timeout=120)  # the kernel starts with the first cell
            t0 = time.monotonic()
            out = _run_in_place(page, plan_cell)
            assert time.monotonic() - t0 < 10
            assert "RunCheckError" in out and "parameter ocr_threshold: the value '0.0' has type str, expected " \
                   "float" in out, out
            assert not rerun.exists()

            # the right values; the cell after the parameters run twice: the same rerun, the parameters as given
            _set_source(page, params, _parameters(params_source, candidates=json.dumps(str(cand)), recorded='""',
                                                  ocr_threshold="0.0"))
            _run_in_place(page, params)
            for _ in range(2):
                out = _run_in_place(page, plan_cell)
                assert f"rerun {name}: changed parameters {json.dumps(changed, sort_keys=True)}; this run writes " \
                       f"into {layout.RERUNS}/{name}/ ({layout.RERUNS}/{name}/synth/02_pseudo_labels)" in out, out

            # Run All (the Run menu), to the last cell, which marks the record finished
            page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
            page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
            _wait_for_run_all(page, base, token, folder, name)
        entry = read_rerun(name)["sections"]["02"]
        assert entry["source"] == "JupyterLab" and entry["notebook"] == str((folder / NOTEBOOK).resolve())
        assert entry["parameters"] == {**section_defaults("02"), **changed,
                                       "run_dir": f"{layout.RERUNS}/{name}/synth/02_pseudo_labels"}
        assert entry["changed"] == changed and set(entry["defaults"]) == set(changed)
        run = rerun / "synth/02_pseudo_labels"
        assert (run / "summary.json").is_file() and (run / "benchmark" / "manifest.json").is_file()
        assert {d: _sha256_tree(ROOT / d) for d in book} == book  # the book's runs byte for byte
    finally:
        shutil.rmtree(rerun, ignore_errors=True)
        if not reruns_existed and rerun.parent.is_dir() and not any(rerun.parent.iterdir()):
            rerun.parent.rmdir()
