"""The locked installation: requirements.txt, made from pyproject.toml by ``make lock`` (uv pip compile), holds every
package with its exact version and sha256 hashes for the platform the project tests (Linux x86-64, CPython 3.11);
``make venv`` installs exactly that (uv pip sync). This module reads the lock and checks it:

    python -m inkground_lib.publish.lock check     # the lock against pyproject.toml; no CUDA package in it
    python -m inkground_lib.publish.lock plan      # what `make venv` would install into a fresh venv (a dry run)

Parsing is ``packaging``'s (requirements, versions, markers); the dry run is uv's own (``uv pip sync --dry-run``).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

from inkground_lib.core.layout import ROOT

LOCK = ROOT / "requirements.txt"
PYPROJECT = ROOT / "pyproject.toml"
LOCKED_EXTRAS = ("test",)
"""The optional dependencies the lock holds besides the main ones (``make lock``: ``--extra test``)."""
LOCKED_PLATFORM = {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64",
                   "python_version": "3.11", "python_full_version": "3.11.5", "implementation_name": "cpython",
                   "platform_python_implementation": "CPython", "os_name": "posix"}
"""The environment markers of the platform the lock is made for (``make lock``: ``--python-version 3.11.5
--python-platform x86_64-manylinux_2_28``)."""

CUDA_PACKAGE = re.compile(r"^(nvidia-.*|triton|pytorch-triton.*|cuda-.*|cupy.*)$")
"""Names of the packages a CUDA build of torch brings (PyPI's Linux torch 2.13.0: 19 of them, nvidia-* and
triton)."""

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def canonical(name: str) -> str:
    """A distribution name as the lock and installers compare them (PEP 503: lower case, runs of -_. as -)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path: Path = LOCK) -> dict[str, str]:
    """{canonical name: version} of every package the lock pins (``name==version`` at the start of a line)."""
    out = {}
    for line in Path(path).read_text("utf-8").splitlines():
        m = _PIN.match(line)
        if m:
            out[canonical(m.group(1))] = m.group(2)
    return out


def declared(pyproject: Path = PYPROJECT, extras: tuple[str, ...] = LOCKED_EXTRAS):
    """The requirements pyproject.toml declares (``project.dependencies`` and the ``extras``), as
    ``packaging.requirements.Requirement``; those whose markers leave out the locked platform are dropped."""
    from packaging.requirements import Requirement

    project = tomllib.loads(Path(pyproject).read_text("utf-8"))["project"]
    lines = list(project.get("dependencies", []))
    for extra in extras:
        lines += project.get("optional-dependencies", {}).get(extra, [])
    reqs = [Requirement(line) for line in lines]
    return [r for r in reqs if r.marker is None or r.marker.evaluate(LOCKED_PLATFORM)]


def disagreements(lock: Path = LOCK, pyproject: Path = PYPROJECT) -> list[str]:
    """What the lock and pyproject.toml disagree on ([] when they agree): a declared package the lock leaves out,
    or one whose locked version the declared range excludes."""
    pins = read_lock(lock)
    out = []
    for req in declared(pyproject):
        version = pins.get(canonical(req.name))
        if version is None:
            out.append(f"{req}: declared in {Path(pyproject).name}, not in {Path(lock).name} (run make lock)")
        elif not req.specifier.contains(version, prereleases=True):
            out.append(f"{req}: {Path(lock).name} pins {version}, outside the declared range (run make lock)")
    return out


def cuda_packages(names) -> list[str]:
    """The names among ``names`` that are CUDA packages (:data:`CUDA_PACKAGE`)."""
    return sorted(n for n in map(canonical, names) if CUDA_PACKAGE.match(n))


def venv_sync_command(root: Path = ROOT, env: dict | None = None) -> list[str]:
    """The ``uv pip sync`` command ``make venv`` runs (read from ``make -n``, so it is the Makefile's, with its
    torch source), as an argument list."""
    out = subprocess.run(["make", "-n", "-B", "--no-print-directory", "venv"], cwd=root, capture_output=True,
                         text=True, check=True, env=env).stdout
    m = re.search(r"(\S*uv pip sync [^;\n]*)", out.replace("\\\n", " "))
    if m is None:
        raise RuntimeError(f"make -n venv runs no `uv pip sync`:\n{out}")
    return shlex.split(m.group(1))


PYPI_ONLY = {"UV_NO_CONFIG": "1", "UV_DEFAULT_INDEX": "https://pypi.org/simple"}
"""The environment of a machine whose only package index is PyPI (uv's files and index variables ignored)."""


def install_plan(python: str | Path, command: list[str] | None = None, root: Path = ROOT) -> list[tuple[str, str]]:
    """(name, version) of every package ``make venv``'s sync (``command``, default :func:`venv_sync_command`)
    would install into the environment of ``python``, with PyPI as the only index (:data:`PYPI_ONLY`): uv's dry
    run. RuntimeError with uv's message when it cannot be resolved."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("UV_INDEX", "UV_EXTRA_INDEX", "UV_DEFAULT_INDEX", "UV_FIND_LINKS", "PIP_INDEX",
                                "PIP_EXTRA_INDEX"))}
    env.update(PYPI_ONLY)
    cmd = list(command or venv_sync_command(root, env))
    i = cmd.index("--python")
    cmd[i + 1] = str(python)
    cmd = [c for c in cmd if c != "-q"] + ["--dry-run"]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^ \+ (\S+)==(\S+)$", proc.stderr + proc.stdout, re.M)]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    what = argv[0] if argv else ""
    if what == "check":
        problems = disagreements() + [f"{n}: a CUDA package in the lock" for n in cuda_packages(read_lock())]
        print("\n".join(problems) or f"{LOCK.name}: agrees with {PYPROJECT.name}, {len(read_lock())} packages, "
                                     f"torch {read_lock().get('torch')}, no CUDA package")
        return 1 if problems else 0
    if what == "plan":
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([str(ROOT / ".venv" / "bin" / "uv"), "venv", "-q", "--python", sys.executable, tmp],
                           check=True)
            plan = install_plan(Path(tmp) / "bin" / "python")
        cuda = cuda_packages(n for n, _ in plan)
        print(f"make venv from PyPI would install {len(plan)} packages; CUDA packages: {', '.join(cuda) or 'none'}")
        return 1 if cuda else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
