"""``inkground lab`` (``make lab``): the section notebooks in JupyterLab, as working copies.

The server runs from its own environment ``.venv-lab`` (requirements-lab.txt, made by ``make lab``); the
notebooks' kernel is this environment's Python (:func:`kernel_spec`), which has inkground_lib. JupyterLab saves
what is open in it (autosave, every two minutes). So that editing a parameter there never changes the committed
sources in ``notebooks/``, JupyterLab opens working copies in ``lab/`` (ignored by git):

* a copy is made when it is missing: the notebook with a first cell (:func:`lab_note`) saying what it is and
  what of the book's markup (``{glue:text}`` placeholders, ``{term}``, ``{cite}``, admonitions) JupyterLab
  shows as written;
* when the committed notebook changed (a ``git pull``), a copy nobody edited is replaced by the new source; an
  edited copy (a cell's source changed: :func:`content_digest`; saving or running it is no edit) is kept, and
  the command says so (delete it to get the new source);
* ``lab/.inkground-lab.json`` records, per copy, the digest of the source it was made from and of its cells.

The kernel starts in ``lab/``; the notebooks' first cell after the parameters
(:mod:`inkground_lib.publish.notebook_start`) checks the parameters as ``inkground run`` does, finds the data
from the repository root wherever the kernel starts, and a run with changed parameters writes where
:mod:`inkground_lib.publish.rerun_plan` says (``data/reruns/<name>/``, recorded in its ``rerun.json`` with the source
``JupyterLab``), never into the book's runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from inkground_lib.cli.options import describe
from inkground_lib.core import layout
from inkground_lib.core.files import atomic_write_bytes, atomic_write_json

LAB_DIR = "lab"
"""The working copies' folder, relative to the repository root (in .gitignore)."""

LAB_VENV = ".venv-lab"
"""The JupyterLab server's environment (requirements-lab.txt; ``make lab`` makes it)."""

RECORD = ".inkground-lab.json"
HOST = "127.0.0.1"
PORT = 8888


NOTE_ID = "inkground-lab-note"


def lab_note(name: str) -> str:
    """The first cell of a working copy: what it is, and what of the book's markup JupyterLab shows as written."""
    return (f"**A working copy for JupyterLab** (`make lab`) of `notebooks/{name}`: edit and run it here, the "
            f"committed notebook stays as it is. The prose is written for the book: `` {{glue:text}}`name` `` stands "
            f"for a number or a sentence that a cell below computes and the book fills in, `` {{term}}`...` `` and "
            f"`` {{cite}}`...` `` link the glossary and the bibliography, and ```` ```{{admonition}} ```` fences are "
            f"boxes; JupyterLab shows them as written. Run all cells to compute the values; the book "
            f"(`make book`, then `_build/html/`) shows them in place. Change a parameter in the first code cell "
            f"and run all: the next cell checks every value as `inkground run` does, and a run with changed "
            f"parameters writes into `{layout.RERUNS}/<name>/` with its record `rerun.json`, never into the book's "
            f"runs. A parameter changed later needs that cell run again: until then the cells after it are refused.")


def working_copy(source: Path) -> bytes:
    """The working copy of notebook ``source``: its cells after :func:`lab_note`'s."""
    nb = json.loads(source.read_text("utf-8"))
    note = {"cell_type": "markdown", "id": NOTE_ID, "metadata": {"tags": ["remove-cell"]},
            "source": lab_note(source.name)}
    nb["cells"] = [note] + [c for c in nb.get("cells", []) if c.get("id") != NOTE_ID]
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def content_digest(data: bytes) -> str | None:
    """sha256 of what a person edits in a notebook: each cell's type and source, in order (not the outputs,
    execution counts, metadata or the file's layout, which JupyterLab rewrites on every save); None for a file
    that is not a notebook."""
    try:
        cells = json.loads(data.decode("utf-8")).get("cells", [])
        text = json.dumps([(c.get("cell_type"), "".join(c["source"]) if isinstance(c.get("source"), list)
                            else c.get("source", "")) for c in cells])
    except (ValueError, AttributeError, TypeError, UnicodeDecodeError):
        return None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def working_copies(src: Path | None = None, dst: Path | None = None) -> list[tuple[str, str]]:
    """Make or refresh the working copies of ``src``'s notebooks (default notebooks/) in ``dst`` (default lab/);
    returns [(notebook name, what happened)]: "copied", "updated", "unchanged", or "kept: ..." for an edited
    copy whose source changed. A copy counts as edited when a cell's source differs from what was copied
    (:func:`content_digest`): a copy JupyterLab only saved, or ran and saved, still follows its source."""
    src = Path(src or layout.NOTEBOOKS)
    dst = Path(dst or layout.ROOT / LAB_DIR)
    dst.mkdir(parents=True, exist_ok=True)
    try:
        record = json.loads((dst / RECORD).read_text("utf-8"))
    except (OSError, ValueError):
        record = {}
    out = []
    for nb in sorted(src.glob("*.ipynb")):
        copy, source = dst / nb.name, hashlib.sha256(nb.read_bytes()).hexdigest()
        made = record.get(nb.name)
        if isinstance(made, str):  # written by an earlier inkground: the copy was the source, byte for byte
            made = {"source": made, "copy": content_digest(nb.read_bytes()) if made == source else None,
                    "bytes": made}
        made = made if isinstance(made, dict) else {}
        want = working_copy(nb)
        now = content_digest(copy.read_bytes()) if copy.is_file() else None
        if not copy.is_file():
            what = "copied"
        elif made.get("source") == source:
            what = "unchanged"
        elif now is not None and (now == made.get("copy") or now == content_digest(want) or
                                  hashlib.sha256(copy.read_bytes()).hexdigest() == made.get("bytes")):
            what = "updated"  # nobody edited the copy: it follows the source
        else:
            out.append((nb.name, f"kept: edited here, and notebooks/{nb.name} changed since; delete "
                                 f"{LAB_DIR}/{nb.name} to get the new source"))
            continue
        if what != "unchanged":
            atomic_write_bytes(copy, want)
            made = {"source": source, "copy": content_digest(want)}
        record[nb.name] = made
        out.append((nb.name, what))
    atomic_write_json(dst / RECORD, record)
    return out


def kernel_spec(folder: Path, python: str | None = None) -> Path:
    """Write the kernel JupyterLab starts for the notebooks (their metadata name it ``python3``) into
    ``folder/kernels/python3/``: this environment's Python (``python``, default the running one), which has
    inkground_lib, whatever environment the server runs from. ``folder`` goes first on ``JUPYTER_PATH``."""
    spec = {"argv": [python or sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (inkground)", "language": "python", "metadata": {"debugger": True}}
    path = Path(folder) / "kernels" / "python3" / "kernel.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, spec)
    return path


def server_python(given: str | None) -> str:
    """The Python that runs the JupyterLab server: ``given``, else .venv-lab's (``make lab`` installs it), else this
    one; RunCheckError-like ValueError when JupyterLab is not installed there."""
    candidates = [given] if given else [str(layout.ROOT / LAB_VENV / "bin" / "python"), sys.executable]
    for py in candidates:
        if Path(py).is_file() and subprocess.run([py, "-c", "import jupyterlab"], capture_output=True).returncode == 0:
            return py
    raise ValueError(f"JupyterLab is not installed in {' or '.join(candidates)}; `make lab` installs it into "
                     f"{LAB_VENV}/ (requirements-lab.txt)")


def server_command(python: str, folder: Path, host: str = HOST, port: int = PORT, *,
                   browser: bool = True) -> tuple[list[str], dict]:
    """The JupyterLab server's command line and environment: serving ``folder`` (the working copies) on
    ``host``:``port``, its notebooks' kernel this environment's Python (:func:`kernel_spec`, written into
    ``folder/.jupyter``)."""
    kernels = Path(folder) / ".jupyter"
    kernel_spec(kernels)
    env = dict(os.environ)
    env["JUPYTER_PATH"] = os.pathsep.join([str(kernels)] + [p for p in env.get("JUPYTER_PATH", "").split(os.pathsep)
                                                            if p])
    cmd = [python, "-m", "jupyterlab", f"--ServerApp.root_dir={folder}", f"--ip={host}", f"--port={port}",
           "--ServerApp.port_retries=0"]
    if not browser:
        cmd.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # a container's root: JupyterLab refuses to start otherwise
        cmd.append("--allow-root")
    return cmd, env


def _lab(a) -> int:
    python = server_python(a.server_python)
    for name, what in working_copies():
        if what != "unchanged":
            print(f"{LAB_DIR}/{name}: {what}", file=sys.stderr)
    cmd, env = server_command(python, layout.ROOT / LAB_DIR, a.host, a.port, browser=not a.no_browser)
    print(f"JupyterLab on http://{a.host}:{a.port}/lab (the address with its token follows); working copies of "
          f"notebooks/ in {LAB_DIR}/; reruns with changed parameters write into {layout.RERUNS}/<name>/. Ctrl-C "
          f"stops it.", file=sys.stderr, flush=True)
    proc = subprocess.Popen(cmd, cwd=layout.ROOT, env=env)
    try:
        return proc.wait()
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the server stops with the command, never left behind
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        return 0


def add_lab_parser(sub) -> None:
    lab = sub.add_parser("lab", help="the section notebooks in JupyterLab (working copies in lab/)")
    describe(lab, "Open the section notebooks in JupyterLab, ready to run: working copies in lab/ (ignored by "
                  "git), so editing and autosave never change the committed notebooks/; a copy nobody edited "
                  "follows its source. Run All works with the book's data (`make book` first); a run with changed "
                  f"parameters writes into {layout.RERUNS}/<name>/, never into the book's runs. `make lab` runs "
                  "this.")
    lab.add_argument("--host", default=HOST, help=f"address to listen on (default {HOST}: this machine only)")
    lab.add_argument("--port", type=int, default=PORT, help=f"port (default {PORT})")
    lab.add_argument("--no-browser", dest="no_browser", action="store_true", help="do not open a browser")
    lab.add_argument("--server-python", dest="server_python", metavar="PYTHON",
                     help=f"the Python with JupyterLab that runs the server (default: {LAB_VENV}/bin/python, which "
                          "`make lab` installs, else this one); the notebooks' kernel is always this environment's")
    lab.set_defaults(func=_lab)
