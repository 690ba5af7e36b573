"""Starting from the published results, as a reader would (issue 43): a built book's _build/html served on loopback,
a fresh clone restores the book's runs from the archive's address, then the book workflow's steps run in the clone in
their order with CI=true (`python -m inkground_lib.publish.ci replay book.yml`: the cache keys, the installation,
`make book`, the run folders' digests, the link check, the upload), `make book` executes no section and the numbers
of the book's section pages equal the served one's, and `inkground run 04 -p n_boot 500` answers within 60 s. A
tampered copy of the archive, served beside it, is refused first, naming the file, with nothing written.

    .venv/bin/python benchmarks/bench_restore.py --html DIR [--source REPO] [--clone DIR] [--reuse-venv]

--html: the served book (a _build/html with inkground-results.zip; default this repository's); --source: the
repository to clone (default this one: its code must be the code the book was built from, or make book rightly
executes the sections whose code changed); --reuse-venv links this repository's .venv into the clone instead of
installing (`make venv` is measured on its own, benchmarks/results/install.txt); every command in the clone runs
with PYTHONPATH=<clone>, so it runs the clone's code, not the linked venv's editable install. Exit 0 when every
check holds. Results: benchmarks/results/restore.txt.
"""

from __future__ import annotations

import argparse
import hashlib
import html.parser
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RUN_04_LIMIT = 60.0
"""Seconds `inkground run 04 -p n_boot 500` may take after a restore (issue 43's check)."""
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


class _Text(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.parts, self._skip = [], 0

    def handle_starttag(self, tag, attrs):
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag):
        self._skip -= tag in ("script", "style") and self._skip > 0

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def page_numbers(path: Path) -> list[str]:
    """The numbers a page shows, in order (its text without scripts and styles)."""
    p = _Text()
    p.feed(path.read_text("utf-8", errors="replace"))
    return NUMBER.findall(" ".join(p.parts))


def section_pages(html: Path) -> list[Path]:
    return sorted(p for p in (html / "book" / "sections").glob("[0-9][0-9]_*.html"))


def archive_digests(archive: Path) -> dict[str, str]:
    """{path: sha256} of the executed notebooks and run CSVs the archive's MANIFEST.json lists."""
    with zipfile.ZipFile(archive) as z:
        files = json.loads(z.read("MANIFEST.json"))["files"]
    return {f["path"]: f["sha256"] for f in files
            if (f["path"].startswith("book/sections/") and f["path"].endswith(".ipynb"))
            or (f["path"].startswith("data/runs/") and f["path"].endswith(".csv"))}


def digests(root: Path, paths) -> dict[str, str]:
    return {p: hashlib.sha256((root / p).read_bytes()).hexdigest() if (root / p).is_file() else "" for p in paths}


def tampered_copy(archive: Path, out: Path) -> str:
    """``archive`` zipped again with one byte of one run CSV changed; returns that member's name."""
    with zipfile.ZipFile(archive) as z:
        items = [(i.filename, z.read(i.filename)) for i in z.infolist()]
    victim = next(n for n, _ in items if n.startswith("data/runs/") and n.endswith(".csv"))
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in items:
            if name == victim:
                data = data[:-2] + (b"8" if data[-2:-1] != b"8" else b"9") + data[-1:]
            z.writestr(name, data)
    return victim


def run(cmd: list[str], cwd: Path, env: dict, log: io.TextIOBase) -> tuple[int, float, str]:
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    took = time.perf_counter() - t
    log.write(f"$ {' '.join(cmd)}  ({took:.1f} s, exit {proc.returncode})\n{proc.stdout}{proc.stderr}\n")
    log.flush()
    return proc.returncode, took, proc.stdout + proc.stderr


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--html", type=Path, default=ROOT / "_build" / "html")
    ap.add_argument("--source", type=Path, default=ROOT)
    ap.add_argument("--clone", type=Path, default=None)
    ap.add_argument("--reuse-venv", action="store_true")
    a = ap.parse_args()
    from inkground_lib.publish.linkcheck import serve

    archive = a.html / "inkground-results.zip"
    if not archive.is_file():  # make bench runs every benchmark: say why nothing is measured
        print(f"bench_restore: nothing measured: {archive} does not exist (build the book first: make book)")
        return 0
    load0 = os.getloadavg()[0]
    clone = a.clone or Path(tempfile.mkdtemp(prefix="inkground-restore-bench-"))
    subprocess.run(["git", "clone", "-q", str(a.source), str(clone)], check=True)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True).stdout
    env = {**os.environ, "PYTHONPATH": str(clone)}
    log_path = clone.with_name(clone.name + "-bench_restore.log")  # outside the clone: its build is of a clean tree
    with open(clone / ".git" / "info" / "exclude", "a") as f:
        f.write(".venv\n")  # the linked venv (a symlink, which .gitignore's ".venv/" does not match)
    rows: list[tuple[str, str]] = [("clone of", f"{a.source} at {head.strip()}"),
                                   ("archive", f"{archive.stat().st_size / 2**20:.1f} MiB")]
    checks: list[tuple[str, bool]] = []
    with open(log_path, "w") as log:
        if a.reuse_venv:
            (clone / ".venv").symlink_to(ROOT / ".venv")
        else:
            _, took, _ = run(["make", "venv"], clone, env, log)
            rows.append(("make venv (fresh clone)", f"{took:.0f} s"))
        py = str(clone / ".venv" / "bin" / "python")
        code, _, out = run([py, "-c", "from inkground_lib.core.layout import ROOT; print(ROOT)"], clone, env, log)
        if out.strip() != str(clone):
            sys.exit(f"bench_restore: the clone's commands would run {out.strip()}'s code, not {clone}'s")
        inkground = [py, "-m", "inkground_lib.cli"]
        served = archive_digests(archive)
        with tempfile.TemporaryDirectory() as tmp:
            victim = tampered_copy(archive, Path(tmp) / "tampered.zip")
            with serve(Path(tmp)) as base:
                code, took, out = run([*inkground, "restore", f"{base}tampered.zip", "--allow-http-loopback"], clone,
                                      env, log)
            refused = (code != 0 and victim in out and "nothing written" in out
                       and not (clone / "data" / "runs").exists())
            checks.append((f"a tampered archive is refused, naming {victim}, nothing written", refused))
        with serve(a.html) as base:
            code, took, out = run([*inkground, "restore", f"{base}inkground-results.zip", "--allow-http-loopback"],
                                  clone, env, log)
        rows.append(("inkground restore URL", f"{took:.1f} s (exit {code})"))
        restored_lines = [ln for ln in out.splitlines() if ln.startswith(("restored ", "make book "))]
        checks.append(("restore checks every file and restores them", code == 0))
        checks.append(("restore says make book executes no section",
                       any(ln.startswith("make book executes no section") for ln in restored_lines)))
        before = digests(clone, served)
        checks.append(("the restored notebooks and run CSVs are the archive's", before == served))
        code, took, out = run([py, "-m", "inkground_lib.publish.ci", "replay", "book.yml", "--event", "push"], clone,
                              env, log)
        rows.append(("book.yml's steps, CI=true (make book inside)", f"{took:.0f} s (exit {code})"))
        steps = [ln for ln in out.splitlines() if re.search(r"\s(ran|stood in|skipped)\s", ln)]
        checks.append(("every step of book.yml ran or was skipped as on GitHub, none failed", code == 0))
        executed = sorted(set(re.findall(r"\[inkground\] section (\d\d): (?:cell|every cell)", out)))
        stages = [ln.strip() for ln in out.splitlines() if re.match(r"\s*\[inkground\] (section \d\d|total)", ln)
                  and " s" in ln and "cell" not in ln]
        after = digests(clone, served)
        checks.append(("make book executed no section (no cell ran; notebooks and run CSVs unchanged)",
                       not executed and after == served))
        pages = section_pages(a.html)
        differ = [p.name for p in pages
                  if not (clone / "_build" / "html" / p.relative_to(a.html)).is_file()
                  or page_numbers(p) != page_numbers(clone / "_build" / "html" / p.relative_to(a.html))]
        n = sum(len(page_numbers(p)) for p in pages)
        rows.append(("section pages compared", f"{len(pages)} pages, {n:,} numbers"))
        checks.append(("the section pages' numbers equal the served book's", bool(pages) and not differ))
        code, took, out = run([*inkground, "run", "04", "-p", "n_boot", "500"], clone, env, log)
        cpu = re.search(r"section 04: [\d.]+ s \(CPU ([\d.]+) s\)", out)
        rows.append(("inkground run 04 -p n_boot 500", f"{took:.1f} s (exit {code}; CPU of the section "
                                                       f"{cpu.group(1) if cpu else '?'} s)"))
        checks.append((f"inkground run 04 -p n_boot 500 within {RUN_04_LIMIT:.0f} s",
                       code == 0 and took <= RUN_04_LIMIT))
    rows.append(("load average (1 min) at the start and the end", f"{load0:.1f}, {os.getloadavg()[0]:.1f} "
                                                                     f"on {os.cpu_count()} cores"))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    print("restore said:\n  " + "\n  ".join(restored_lines))
    print("book.yml's steps:\n  " + "\n  ".join(steps))
    if stages:
        print("make book's stages:\n  " + "\n  ".join(stages))
    if differ:
        print("section pages whose numbers differ:", ", ".join(differ))
    for what, ok in checks:
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
    print(f"log: {log_path}")
    if a.clone is None and all(ok for _, ok in checks):
        shutil.rmtree(clone, ignore_errors=True)
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
