"""JupyterLab driven in a real browser, as a user of ``make lab`` drives it (a test and benchmark helper, not
library code): the server ``make lab`` starts (:func:`inkground_lib.cli.lab.server_command`) on a folder of
working copies, and the page operated through Playwright on the system Chromium (tests/browser_checks.py).

JupyterLab 4.6 (requirements-lab.txt), as its page is built: a notebook's cells are ``.jp-Notebook .jp-Cell``
(``.jp-CodeCell`` for code), a cell's editor CodeMirror 6's ``.cm-content``, its prompt ``.jp-InputPrompt``
("[3]:" once run, "[*]:" while running), its outputs ``.jp-OutputArea``; the menu bar's items
``.lm-MenuBar-itemLabel`` and a menu's ``.lm-Menu-itemLabel`` (Lumino). Ctrl+Enter runs the selected cell in
command mode; Escape leaves the editor. Checked in the running JupyterLab, 2026-12-06. The server's REST API
``/api/kernels`` gives each kernel's ``execution_state`` (jupyter_server 2.x)."""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import socket
import subprocess
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from inkground_lib.cli.lab import server_command, server_python
from inkground_lib.core.layout import ROOT
from inkground_lib.publish.rerun_plan import PLANNED_ENV


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sha256_tree(folder: Path) -> dict:
    """{relative path: sha256} of every file under ``folder`` ({} when there is none)."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()} if folder.is_dir() else {}


@contextmanager
def jupyterlab(folder: Path, state: Path) -> Iterator[tuple[str, str]]:
    """JupyterLab on loopback serving ``folder``, as ``make lab`` starts it (.venv-lab, made if missing), its
    configuration, data and workspaces in ``state``; yields (base URL, token). Stopped on exit."""
    if not (ROOT / ".venv-lab" / ".inkground-installed").is_file():
        subprocess.run(["make", "-s", ".venv-lab/.inkground-installed"], cwd=ROOT, check=True)
    port, token = free_port(), secrets.token_hex(16)
    cmd, env = server_command(server_python(None), folder, "127.0.0.1", port, browser=False)
    env.pop(PLANNED_ENV, None)
    env.update(JUPYTER_TOKEN=token, JUPYTER_CONFIG_DIR=str(state / "config"), JUPYTER_DATA_DIR=str(state / "data"),
               JUPYTER_RUNTIME_DIR=str(state / "runtime"), JUPYTERLAB_WORKSPACES_DIR=str(state / "workspaces"))
    state.mkdir(parents=True, exist_ok=True)
    with open(state / "server.log", "wb") as log:
        proc = subprocess.Popen(cmd, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            t0 = time.monotonic()
            while True:
                try:
                    urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5)
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() - t0 > 120:
                        raise RuntimeError(f"JupyterLab did not start: {(state / 'server.log').read_text()[-2000:]}")
                    time.sleep(0.5)
            yield base, token
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


def open_notebook(page, base: str, token: str, name: str):
    """Open notebook ``name`` (in the served folder); returns its parameters cell once shown."""
    page.goto(f"{base}/lab/tree/{name}?token={token}")
    params = code_cell(page, "# Parameters (papermill)")
    params.wait_for(timeout=120_000)
    return params


def code_cell(page, text: str):
    """The first code cell showing ``text``."""
    return page.locator(".jp-Notebook .jp-CodeCell").filter(has_text=text).first


def set_source(page, cell, source: str) -> None:
    """Replace a cell's source as a user would: click into its editor, select all, type (inserted as text, so
    the editor's bracket closing adds nothing), leave the editor."""
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(source)
    page.keyboard.press("Escape")


def prompt(cell) -> str:
    return cell.locator(".jp-InputPrompt").first.inner_text().strip()


def run_in_place(page, cell, timeout: float = 60) -> tuple[str, float]:
    """Run one cell (Ctrl+Enter) and wait for its new execution count; returns its output text and the seconds
    from the key press to the count."""
    before = prompt(cell)
    cell.locator(".jp-InputPrompt").first.click()  # select the cell, command mode
    t0 = time.monotonic()
    page.keyboard.press("Control+Enter")
    while time.monotonic() - t0 < timeout:
        now = prompt(cell)
        if re.fullmatch(r"\[\d+\]:", now) and now != before:
            return cell.locator(".jp-OutputArea").first.inner_text(), time.monotonic() - t0
        time.sleep(0.1)
    raise AssertionError(f"the cell did not finish within {timeout} s (prompt {prompt(cell)!r})")


def run_all(page) -> None:
    """Run > Run All Cells."""
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()


def kernel_busy(base: str, token: str) -> bool:
    kernels = json.loads(urllib.request.urlopen(f"{base}/api/kernels?token={token}", timeout=10).read())
    return any(k.get("execution_state") != "idle" for k in kernels)


def wait_until(done, page, base: str, token: str, notebook: Path, timeout: float = 600) -> float:
    """Wait until ``done()`` (after Run All); a kernel idle three seconds running before that means a cell
    failed: the notebook is saved (Ctrl+S) and its errors named. Returns the seconds waited."""
    t0, idle = time.monotonic(), 0
    time.sleep(3)
    while not done():
        idle = 0 if kernel_busy(base, token) else idle + 1
        if idle >= 3 or time.monotonic() - t0 > timeout:
            page.keyboard.press("Control+s")
            time.sleep(2)
            nb = json.loads(notebook.read_text())
            errors = [f"{o.get('ename')}: {o.get('evalue')}" for c in nb["cells"] for o in c.get("outputs", [])
                      if o.get("output_type") == "error"]
            raise AssertionError(f"Run All stopped before it was done ({time.monotonic() - t0:.0f} s): {errors}")
        time.sleep(1)
    return time.monotonic() - t0


def with_values(source: str, **values: str) -> str:
    """A parameters cell's source with ``values`` (Python source text) in place of the defaults."""
    for name, text in values.items():
        source, n = re.subn(rf"^({name}(?:: [^=]+)? = )[^#\n]*?(\s*#|$)", rf"\g<1>{text}\g<2>", source, flags=re.M)
        if n != 1:
            raise ValueError(f"no parameter {name} in the cell")
    return source


def parameters_source(notebook: Path) -> str:
    """The source of a notebook's parameters cell."""
    nb = json.loads(notebook.read_text("utf-8"))
    return next("".join(c["source"]) for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
