"""`verify` on the book's results archive as a reader may hand it back: unpacked and zipped again with `zip -r`,
with one file edited, with a file and its manifest line edited together, and zipped with its folder.

    .venv/bin/python benchmarks/bench_archive_rezip.py _build/html/inkground-results.zip book/sections \\
        [--reviewers book/sections/reviewers.md] [--at COMMIT ...]

Each variant is made with Info-ZIP's `zip -r` (apt-get install -y zip) from the unpacked archive, in a temporary
folder. For each, verify of this checkout runs with the executed notebooks given and the digest the reviewers'
page prints (the anchor), and, for each ``--at`` commit, that commit's ``publish/results.py`` (read with ``git
show``, run against this checkout's library) with what its verify accepts. Prints the problems' count, the
first problems and the time. Results: benchmarks/results/archive_verify.txt.
"""

import argparse
import hashlib
import importlib.util
import inspect
import json
import shutil
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def variants(archive: Path, work: Path) -> dict[str, Path]:
    folder = work / "inkground-results"
    with zipfile.ZipFile(archive) as z:
        z.extractall(folder)
    zip_r = shutil.which("zip")
    if zip_r is None:
        raise SystemExit("zip is not installed (apt-get install -y zip)")

    def rezip(name, what=".", cwd=folder):
        out = work / f"{name}.zip"
        subprocess.run([zip_r, "-r", "-q", str(out), what], cwd=cwd, check=True)
        return out

    out = {"as published": archive, "zip -r": rezip("rezip")}
    out["zip -r with its folder"] = rezip("wrapped", folder.name, work)
    csv = sorted(folder.rglob("summary-*.csv"))[0]
    original = csv.read_bytes()
    csv.write_bytes(original.replace(b"0.", b"0.9", 1))
    out["zip -r, one file edited"] = rezip("edited")
    manifest_path = folder / "MANIFEST.json"
    kept = manifest_path.read_bytes()
    manifest = json.loads(kept)
    entry = next(f for f in manifest["files"] if (folder / f["path"]) == csv)
    entry["sha256"], entry["bytes"] = hashlib.sha256(csv.read_bytes()).hexdigest(), csv.stat().st_size
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True))
    out["zip -r, file and manifest line edited"] = rezip("forged")
    csv.write_bytes(original)
    manifest_path.write_bytes(kept)
    return out


def results_module(commit: str | None):
    if commit is None:
        from inkground_lib.publish import results
        return results
    text = subprocess.run(["git", "show", f"{commit}:inkground_lib/publish/results.py"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / f"results_{commit.replace('/', '_')}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run(mod, archive: Path, executed: list[Path], anchor: str | None) -> str:
    kwargs = {"anchor": anchor} if "anchor" in inspect.signature(mod.verify).parameters else {}
    t = time.perf_counter()
    try:
        problems = mod.verify(archive, executed, **kwargs)
    except Exception as e:  # the version's own refusal of the whole archive
        return f"refused: {str(e)[:160]} ({time.perf_counter() - t:.1f} s)"
    shown = "; ".join(problems[:2])[:200]
    return f"{len(problems)} problem(s) ({time.perf_counter() - t:.1f} s){': ' + shown if problems else ''}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("archive", type=Path)
    ap.add_argument("sections", type=Path)
    ap.add_argument("--reviewers", type=Path)
    ap.add_argument("--at", action="append", default=[])
    a = ap.parse_args()
    from inkground_lib.publish.results import printed_anchor

    executed = sorted(a.sections.glob("[0-9][0-9]_*.ipynb"))
    anchor = printed_anchor(a.reviewers or a.sections / "reviewers.md")
    print(f"archive {a.archive} ({a.archive.stat().st_size / 1e6:.1f} MB), {len(executed)} executed sections, "
          f"printed digest {anchor}")
    work = Path(tempfile.mkdtemp(prefix="rezip-"))
    try:
        cases = variants(a.archive, work)
        for commit in [*a.at, None]:
            mod = results_module(commit)
            print(f"verify at {commit or 'this checkout'}:")
            for name, path in cases.items():
                print(f"  {name}: {run(mod, path, executed, anchor)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
