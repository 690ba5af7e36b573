"""Wall time of `make book` on a fresh clone, by stage, and of a second run with nothing changed.

    .venv/bin/python benchmarks/bench_book.py [--reuse-venv]

Clones this repository (committed state) into a temporary folder and runs `make book` there twice, printing
the install time and the stage times the pipeline reports. With --reuse-venv the clone links to this
checkout's .venv instead of creating its own (measures everything but the installation).
Targets (DEVELOPERS.md / issue 2): the whole first run within 10 minutes on 2 cores including installation;
the second run within 1 minute.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_make(folder: Path) -> tuple[float, str]:
    t = time.perf_counter()
    proc = subprocess.run(["make", "book"], cwd=folder, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        sys.exit(f"make book failed in {folder}:\n{(proc.stdout + proc.stderr)[-3000:]}")
    return wall, proc.stdout + proc.stderr


def stages(log: str) -> list[tuple[str, float]]:
    return [(m.group(1), float(m.group(2))) for m in re.finditer(r"\[inkground\] ([^:\n]+): ([0-9.]+) s", log)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reuse-venv", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "inkground"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        shared = ROOT.parent / "shared"
        if shared.is_dir():  # the recorded dataset is built from ../shared, as on a developer's machine
            (Path(tmp) / "shared").symlink_to(shared)
        if a.reuse_venv:
            # use this checkout's venv without reinstalling into it (a reinstall would point its editable
            # install at the temporary clone): make sees its install stamp as newer than the clone's pin
            # files, and `python -m inkground_lib.build.cli` run in the clone imports the clone's library first
            (clone / ".venv").symlink_to(ROOT / ".venv")
            for f in ("requirements.txt", "pyproject.toml"):
                os.utime(clone / f, (0, 0))
        first, log1 = run_make(clone)
        second, log2 = run_make(clone)
    total_stages = stages(log1)
    pipeline = sum(t for name, t in total_stages if name != "total")
    print(f"first make book: {first:.1f} s wall ({'venv reused' if a.reuse_venv else 'including installation'})")
    print(f"  installation and start-up: {first - pipeline:.1f} s")
    for name, t in total_stages:
        print(f"  {name}: {t:.1f} s")
    print(f"second make book (nothing changed): {second:.1f} s wall")
    for name, t in stages(log2):
        print(f"  {name}: {t:.1f} s")
    print(f"targets: first <= 600 s: {'met' if first <= 600 else 'NOT met'}; "
          f"second <= 60 s: {'met' if second <= 60 else 'NOT met'}")


if __name__ == "__main__":
    main()
