"""Installing as users do (issue 43), measured: what `make venv` would install from PyPI alone (uv's dry run: no
CUDA package), the lock made again from pyproject.toml (the same file), and a plain `pip install .` into a fresh
venv followed by `inkground synth` (the declared ranges, resolved by pip; torch's +cpu build, no CUDA package).

    .venv/bin/python benchmarks/bench_install.py [--pip] [--keep DIR]

Without --pip only the two quick checks run (a few seconds with uv's cache); --pip adds the pip installation
(~12 minutes on 2 shared cores: pip resolves, downloads and compiles ~180 packages). The project is installed from a
copy of the commit (`git archive HEAD`), so setuptools writes its build/ folder there, not into this repository.
pip reads this machine's configuration (pip.conf: its indexes and find-links) as a user's pip would; on Linux
PyTorch's CPU index is given as the README says (`--extra-index-url https://download.pytorch.org/whl/cpu`) where it
can be reached (not on this project's machines: there the find-links folder holds torch's +cpu wheel).
Results: benchmarks/results/install.txt.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def timed(cmd: list[str], **kw) -> tuple[float, subprocess.CompletedProcess]:
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    return time.perf_counter() - t, proc


def _reachable(url: str) -> bool:
    import socket
    from urllib.parse import urlsplit

    try:
        socket.getaddrinfo(urlsplit(url).hostname, 443)
        return True
    except OSError:
        return False


def quick() -> list[tuple[str, str, bool]]:
    from inkground_lib.publish import lock

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([str(ROOT / ".venv" / "bin" / "uv"), "venv", "-q", "--python", sys.executable, tmp], check=True)
        t = time.perf_counter()
        plan = dict(lock.install_plan(Path(tmp) / "bin" / "python"))
        took = time.perf_counter() - t
    cuda = lock.cuda_packages(plan)
    same = {lock.canonical(n): v for n, v in plan.items()} == lock.read_lock()
    rows.append(("make venv from PyPI alone (uv dry run)",
                 f"{len(plan)} packages, torch {plan.get('torch')}, CUDA packages: {len(cuda)} ({took:.1f} s)",
                 same and not cuda))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "requirements.txt"
        shutil.copy2(lock.LOCK, out)
        took, proc = timed(["make", "--no-print-directory", "lock", f"LOCK_OUT={out}"], cwd=ROOT)
        again = proc.returncode == 0 and out.read_text() == lock.LOCK.read_text()
    rows.append(("make lock again from pyproject.toml", f"{'the same file' if again else 'DIFFERS'} ({took:.1f} s)",
                 again))
    return rows


def pip_install(keep: Path | None) -> list[tuple[str, str, bool]]:
    from inkground_lib.publish import lock

    work = keep or Path(tempfile.mkdtemp(prefix="inkground-pip-install-"))
    src, venv = work / "src", work / "venv"
    src.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check"]
    # PyTorch's CPU index as the README says, where this machine can reach it; else the local wheel folder
    # (PIP_FIND_LINKS, pip.conf) must hold torch's +cpu wheel, the same file (pip would retry an unreachable index
    # for every package)
    index = ["--extra-index-url", TORCH_CPU_INDEX] if _reachable(TORCH_CPU_INDEX) else []
    took, proc = timed([*pip, "install", *index, str(src)], cwd=work)
    rows = [(f"pip install . (fresh venv{', PyTorch CPU index' if index else ', torch from the local wheel folder'})",
             f"{took:.0f} s (exit {proc.returncode})", proc.returncode == 0)]
    if proc.returncode != 0:
        print(proc.stdout[-2000:] + proc.stderr[-3000:], file=sys.stderr)
        return rows
    listed = {p["name"]: p["version"] for p in json.loads(subprocess.run(
        [*pip, "list", "--format", "json"], capture_output=True, text=True, check=True).stdout)}
    cuda = lock.cuda_packages(listed)
    rows.append(("installed", f"{len(listed)} packages, torch {listed.get('torch')}, CUDA packages: {len(cuda)}",
                 not cuda and str(listed.get("torch", "")).endswith("+cpu")))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    took, proc = timed([str(venv / "bin" / "inkground"), "synth", "--out", str(work / "synth"), "--pages", "2"],
                       cwd=work, env=env)
    made = proc.returncode == 0 and (work / "synth" / "manifest.json").is_file()
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import inkground_lib; print(inkground_lib.__file__)"],
                           capture_output=True, text=True, cwd=work, env=env).stdout.strip()
    rows.append(("inkground synth --pages 2", f"{took:.1f} s (exit {proc.returncode}), from {where}",
                 made and where.startswith(str(venv))))
    if not made:
        print(proc.stdout[-2000:] + proc.stderr[-3000:], file=sys.stderr)
    if keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pip", action="store_true", help="also pip install . into a fresh venv (~12 min)")
    ap.add_argument("--keep", type=Path, default=None, help="do the pip installation in DIR and keep it")
    a = ap.parse_args()
    rows = quick() + (pip_install(a.keep) if a.pip else [])
    width = max(len(k) for k, _, _ in rows)
    for k, v, ok in rows:
        print(f"{'ok  ' if ok else 'FAIL'} {k:<{width}}  {v}")
    return 0 if all(ok for _, _, ok in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
