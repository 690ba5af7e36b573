"""Reruns on a built book: their wall and CPU time, and what each computed anew rather than found in the book's
runs (issue 42: "a rerun computes only what is new"). Prints figures; not a test.

    .venv/bin/python benchmarks/bench_reruns.py [--only NAME ...] [--without-style]

Needs a checkout in which `make book` has run (data/runs/ and book/sections/). Each scenario's rerun folder
(data/reruns/<name>/) is deleted first, so the rerun starts from the book's runs alone, then
`inkground run ...` is timed as a whole (wall; CPU of the whole process tree: the CLI, the notebook kernels and
their worker processes, from the resource usage of the finished children). Scenarios (the issue's checks):

* ``03_systems``: `inkground run 03 -p systems '["skeleton","font","tracer"]'` (three of the book's systems);
* ``02_ocr_threshold-0.9``: `inkground run 02 --through 03 -p ocr_threshold 0.9` (section 02 and section 03 on
  its benchmark, one rerun);
* ``02_n_candidates-12``: `inkground run 02 -p n_candidates 12`.

What was computed anew is counted from the files, store by store: the records of the rerun's stores whose key no
earlier run's store holds (predictions by request hash, render texts by ink digest, crop readings, derender and
OCR-filter records by page key, truth comparisons by comparison key) and every entry of the rerun's trace stores
(one found elsewhere is never copied). The Style classifiers' part of a rerun belongs to them (the lead's part of
the issue): with ``--without-style``, each scenario that trained one runs a second time with everything but its
classifiers (``style-*/``) deleted from the rerun's folder, which times the rest alone.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SCENARIOS = {
    "03_systems": (["03", "-p", "systems", '["skeleton","font","tracer"]', "--name", "bench_03_systems"],
                   "bench_03_systems"),
    "02_ocr_threshold-0.9": (["02", "--through", "03", "-p", "ocr_threshold", "0.9", "--name",
                              "bench_02_ocr_threshold-0.9"], "bench_02_ocr_threshold-0.9"),
    "02_n_candidates-12": (["02", "-p", "n_candidates", "12", "--name", "bench_02_n_candidates-12"],
                           "bench_02_n_candidates-12"),
}


def timed(cmd: list[str]) -> tuple[float, float, int]:
    """(wall s, CPU s of the finished process tree, exit code) of ``cmd``."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        print(proc.stderr[-3000:], file=sys.stderr)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), proc.returncode


def _lines(path: Path):
    if not path.is_file():
        return
    with open(path, "rb") as f:
        for raw in f:
            try:
                yield json.loads(raw)
            except ValueError:
                continue


def store_keys(run: Path) -> dict[str, set]:
    """{store: keys} of one run folder (section 02's or 03's, and the comparison's folders inside)."""
    out: dict[str, set] = {}

    def add(name, keys):
        out.setdefault(name, set()).update(keys)

    for p in run.rglob("*.jsonl"):
        name = p.name
        if p.parent.name == "predictions" and not name.endswith(".failures.jsonl"):
            add(f"predictions {p.stem}", (r.get("request_hash") for r in _lines(p)))
        elif name.startswith("ocr-renders-"):
            add("render OCR texts", (k for r in _lines(p) for k in r.get("texts", {})))
        elif name == "truth.jsonl":
            add("truth comparisons", (k for r in _lines(p) for k in r.get("rows", {})))
        elif name == "traces.jsonl":
            add("traces", (e["key"] for r in _lines(p) for e in r.get("entries", [])))
        elif name.startswith(("derender-", "ocr-crops-", "ocr-")):
            kind = ("derender pages" if name.startswith("derender-") else
                    "crop OCR pages" if name.startswith("ocr-crops-") else "OCR-filter pages")
            add(kind, (r.get("key") for r in _lines(p)))
    return out


def made_anew(rerun: Path) -> dict[str, tuple[int, int]]:
    """{store: (keys the rerun holds, of them none of the book's runs holds)}; every trace entry counts as made
    (a trace found in another run's store is read there, never copied)."""
    from inkground_lib.core.earlier_runs import earlier_runs

    out = {}
    for run in sorted({p.parent for p in rerun.rglob(".inkground-run.json")}):
        mine = store_keys(run)
        theirs: dict[str, set] = {}
        for other in earlier_runs(run):
            if "reruns" not in other.relative_to(ROOT).parts:  # the book's run: what the rerun could find
                for k, v in store_keys(other).items():
                    theirs.setdefault(k, set()).update(v)
        for store, keys in sorted(mine.items()):
            new = len(keys) if store == "traces" else len(keys - theirs.get(store, set()))
            out[f"{run.relative_to(rerun)}: {store}"] = (len(keys), new)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", choices=sorted(SCENARIOS), help="scenarios to run (default: all)")
    ap.add_argument("--without-style", action="store_true",
                    help="also time each rerun again with only its Style classifiers kept")
    a = ap.parse_args()
    if not (ROOT / "data" / "runs" / "synth" / "03_evaluation").is_dir():
        sys.exit(f"{ROOT}: no built book (data/runs/): run `make book` first")
    exe = str(ROOT / ".venv" / "bin" / "inkground")
    print(f"# bench_reruns: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {ROOT}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start")
    for name in a.only or SCENARIOS:
        args, folder_name = SCENARIOS[name]
        folder = ROOT / "data" / "reruns" / folder_name
        shutil.rmtree(folder, ignore_errors=True)
        wall, cpu, rc = timed([exe, "run", *args])
        print(f"\n{name}: `inkground run {' '.join(args)}`: {wall:.1f} s wall, {cpu:.1f} CPU-s, exit {rc}, "
              f"load {os.getloadavg()[0]:.2f}")
        for store, (n, new) in made_anew(folder).items():
            print(f"  {store:58s} {n:7,d} held, {new:6,d} computed anew")
        styles = sorted(folder.rglob("style-*/style_model.json"))
        for s in styles:
            meta = json.loads(s.read_text())
            facts = s.parent.parent / f"facts-{s.parent.name.removeprefix('style-')}.json"
            now = json.loads(facts.read_text())["style"].get("trained_now", "?") if facts.is_file() else "?"
            print(f"  Style classifier {s.parent.relative_to(folder)}: {meta.get('train_seconds', 0):.0f} s when "
                  f"fitted; fitted by this rerun: {now} (else taken from an earlier run)")
        if a.without_style and styles:
            for p in sorted(folder.rglob("*"), reverse=True):
                if p.is_file() and not any(part.startswith("style-") for part in p.relative_to(folder).parts):
                    p.unlink()
            wall2, cpu2, rc2 = timed([exe, "run", *args, "--force"])
            print(f"  again with its Style classifiers kept (the rest computed as above): {wall2:.1f} s wall, "
                  f"{cpu2:.1f} CPU-s, exit {rc2}")


if __name__ == "__main__":
    main()
