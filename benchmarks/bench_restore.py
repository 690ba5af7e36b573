"""Starting from the published results, as a reader would: a built book's _build/html served on loopback, a fresh
clone restores the book's runs from the archive's address, then `make book` in the clone executes no section (its
executed notebooks stay byte for byte the archive's, so its numbers are the served book's), and `inkground run 04 -p
n_boot 500` answers. Prints the archive's size, each step's wall time and what make book executed.

    .venv/bin/python benchmarks/bench_restore.py [--book DIR] [--clone DIR] [--reuse-venv]

--book: the repository whose _build/html holds the built book (default this one); --reuse-venv links this
repository's .venv into the clone instead of installing (the installation is measured by `make venv` alone).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _digests(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted((root / "book" / "sections").glob("[0-9][0-9]_*.ipynb")):
        if not p.name.endswith(".failed.ipynb"):
            out[p.relative_to(root).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    for p in sorted((root / "data" / "runs").rglob("*.csv")):
        out[p.relative_to(root).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _timed(cmd: list[str], cwd: Path) -> tuple[float, str]:
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    took = time.perf_counter() - t
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{(proc.stdout + proc.stderr)[-4000:]}")
    return took, proc.stdout + proc.stderr


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--book", type=Path, default=ROOT)
    ap.add_argument("--clone", type=Path, default=None)
    ap.add_argument("--reuse-venv", action="store_true")
    a = ap.parse_args()
    html = a.book / "_build" / "html"
    archive = html / "inkground-results.zip"
    if not archive.is_file():  # make bench runs every benchmark: say why nothing is measured
        print(f"bench_restore: nothing measured: {archive} does not exist (build the book first: make book)")
        return 0
    served = _digests(a.book)
    clone = a.clone or Path(tempfile.mkdtemp(prefix="inkground-restore-bench-"))
    if not (clone / ".git").exists():
        subprocess.run(["git", "clone", "-q", str(a.book), str(clone)], check=True)
    rows = [("archive", f"{archive.stat().st_size / 1e6:.1f} MB")]
    if a.reuse_venv and not (clone / ".venv").exists():
        (clone / ".venv").symlink_to(a.book / ".venv")
    else:
        took, _ = _timed(["make", "venv"], clone)
        rows.append(("make venv (fresh clone)", f"{took:.0f} s"))
    from inkground_lib.publish.linkcheck import serve

    with serve(html) as base:
        took, out = _timed([".venv/bin/inkground", "restore", f"{base}inkground-results.zip", "--allow-http-loopback"],
                           clone)
        rows.append(("inkground restore URL", f"{took:.1f} s"))
        print(out.strip())
    before = _digests(clone)
    took, out = _timed(["make", "book"], clone)
    executed = [line for line in out.splitlines() if "executed:" in line or "executing" in line]
    after = _digests(clone)
    rows.append(("make book after restore", f"{took:.0f} s"))
    same = after == before and {k: v for k, v in after.items() if k in served} == {k: served[k] for k in after}
    rows.append(("notebooks and run CSVs equal the served book's", "yes" if same else "NO"))
    took, out = _timed([".venv/bin/inkground", "run", "04", "-p", "n_boot", "500"], clone)
    rows.append(("inkground run 04 -p n_boot 500", f"{took:.1f} s"))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    if changed:
        print("changed by make book:", json.dumps(changed[:20]))
    if executed:
        print("\n".join(executed[:10]))
    if a.clone is None:
        shutil.rmtree(clone, ignore_errors=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
