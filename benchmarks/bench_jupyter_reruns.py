"""Reruns the Jupyter way, measured (issue 46; prints figures; not a test).

Without options (no data needed): how soon a wrong value is refused, and that nothing is written -

* ``inkground run`` (a fresh process, as a user starts it);
* papermill (a fresh papermill process: its start, the kernel's start and the notebook's first two code cells),
  for a text where a number belongs (``-r``), a list given with ``-p``, an unknown system, derenderer and OCR
  engine;
* the check alone (the second code cell's imports and :func:`~inkground_lib.publish.run_checks.check_section`)
  in a fresh Python.

Beside each wall time, the CPU seconds of the process tree (user + system): on a shared machine the wall time
follows the load, the CPU time much less.

``--book`` (the book's data must be there: ``make book``, or a copy of its ``data/`` and ``book/sections/``), in
JupyterLab driven in Chromium as a user of ``make lab`` (tests/lab_driver.py):

1. section 04 with ``n_boot = 200`` typed into its parameters cell, the cell after it run twice, then Run All:
   the sha256 of every file of ``data/runs/`` and ``book/sections/`` before and after, and the rerun's record
   (every parameter? its source);
2. section 02 with its defaults, Run All (the book's own run), then ``inkground book``: which sections it
   executed (an executed notebook is rewritten; one reused is not) and its wall time;
3. ``inkground run 04 -p n_boot 200 --into-book``, then ``inkground book``: which sections it executed; the top
   of section 04's page; then ``inkground book --defaults`` puts the default run back (executing 04 again).

Usage: .venv/bin/python benchmarks/bench_jupyter_reruns.py [--book]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

VENV = Path(sys.executable).parent
PAPERMILL = [
    ("a text for a number (-r n_boot 200)", "04_tradeoffs", ["-r", "n_boot", "200"]),
    ("a list with -p (ocr_engines)", "04_tradeoffs", ["-p", "ocr_engines", "['tesseract']"]),
    ("an unknown system", "03_model_evaluation", ["-y", "systems: [reference, nope]"]),
    ("an unknown derenderer", "02_pseudo_labels", ["-p", "derenderer", "pencil"]),
    ("an unknown OCR engine", "03_model_evaluation", ["-p", "ocr_engine", "easyocr"]),
]
RUN = [
    ("a text for a number", ["04", "-p", "n_boot", "'200'"]),
    ("an unknown system", ["03", "-p", "systems", '["nope"]']),
    ("an unknown derenderer", ["02", "-p", "derenderer", "pencil"]),
    ("an unknown OCR engine", ["03", "-p", "ocr_engine", "easyocr"]),
]
CHECK_ALONE = ("import time; t = time.monotonic()\n"
               "from inkground_lib.publish.notebook_start import start_run\n"
               "from inkground_lib.publish.run_checks import RunCheckError, check_section\n"
               "try:\n    check_section('02', {'derenderer': 'pencil'}, how='notebook')\n"
               "except RunCheckError as e:\n    print(f'{time.monotonic() - t:.2f}')\n")


def timed(cmd: list[str], cwd: Path = ROOT) -> tuple[float, float, subprocess.CompletedProcess]:
    """Wall and CPU seconds (the process and its children) of one command, and its result."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    env = {k: v for k, v in os.environ.items() if k not in ("INKGROUND_RUN_PLANNED", "JPY_SESSION_NAME")}
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, proc


def reruns_tree() -> list[str]:
    folder = ROOT / "data" / "reruns"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def refusals() -> None:
    print("how soon a wrong value is refused (wall s / CPU s; a fresh process each)")
    before = reruns_tree()
    for what, args in RUN:
        wall, cpu, proc = timed([str(VENV / "inkground"), "run", *args])
        line = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
        print(f"  inkground run, {what:<40} {wall:5.1f} / {cpu:4.1f}  exit {proc.returncode}: {line[:90]}")
    with tempfile.TemporaryDirectory() as tmp:
        for what, nb, args in PAPERMILL:
            out = Path(tmp) / "out.ipynb"
            wall, cpu, proc = timed([str(VENV / "papermill"), str(ROOT / "notebooks" / f"{nb}.ipynb"), str(out), *args,
                                     "--cwd", tmp])
            err = next((o for c in json.loads(out.read_text())["cells"] for o in c.get("outputs", [])
                        if o.get("output_type") == "error"), {}) if out.is_file() else {}
            print(f"  papermill, {what:<44} {wall:5.1f} / {cpu:4.1f}  {err.get('ename')}: "
                  f"{str(err.get('evalue'))[:80]}")
    wall, cpu, proc = timed([sys.executable, "-c", CHECK_ALONE])
    print(f"  the check alone (imports and check_section){'':<23} {wall:5.1f} / {cpu:4.1f}  (in-process "
          f"{proc.stdout.strip()} s)")
    print(f"  data/reruns/ unchanged: {reruns_tree() == before}")


def _executed(sections: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in sorted(sections.glob("[0-9][0-9]_*.ipynb"))}


def _book(args: list[str] = ()) -> tuple[float, list[str]]:
    """``inkground book``: its wall time and the sections it executed."""
    sections = ROOT / "book" / "sections"
    before = _executed(sections)
    wall, cpu, proc = timed([str(VENV / "inkground"), "book", *args])
    if proc.returncode != 0:
        raise SystemExit(f"inkground book failed: {proc.stderr[-2000:]}")
    after = _executed(sections)
    return wall, [k[:2] for k in after if after[k] != before.get(k)]


def book_checks() -> None:
    import browser_checks
    import lab_driver as lab
    from inkground_lib.cli.lab import working_copies
    from inkground_lib.publish.parameters_cell import section_defaults
    from inkground_lib.publish.rerun_plan import plan_run
    from inkground_lib.publish.rerun_record import read_rerun

    book = {d: lab.sha256_tree(ROOT / d) for d in ("data/runs", "book/sections")}
    print(f"the book's runs: {len(book['data/runs'])} files in data/runs/, {len(book['book/sections'])} in "
          f"book/sections/")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "lab"
        working_copies(ROOT / "notebooks", folder)
        with lab.jupyterlab(folder, Path(tmp) / "state") as (base, token), browser_checks.browser() as b:
            page = b.new_page(viewport={"width": 1400, "height": 900})
            # 1. section 04 rerun: the parameters cell edited, the cell after it twice, Run All
            nb = folder / "04_tradeoffs.ipynb"
            params = lab.open_notebook(page, base, token, nb.name)
            lab.set_source(page, params, lab.with_values(lab.parameters_source(nb), n_boot="200"))
            _, first = lab.run_in_place(page, params, timeout=120)
            cell = lab.code_cell(page, "start_run(")
            for i in range(2):
                out, seconds = lab.run_in_place(page, cell)
                print(f"1. section 04, the cell after the parameters, run {i + 1}: {seconds:.1f} s: {out.strip()[:160]}")
            name = plan_run("04", {"n_boot": 200}).name
            lab.run_all(page)
            waited = lab.wait_until(lambda: ((read_rerun(name).get("sections") or {}).get("04") or {}).get("finished"),
                                    page, base, token, nb, timeout=1800)
            entry = read_rerun(name)["sections"]["04"]
            print(f"   Run All: {waited:.0f} s; data/runs/ and book/sections/ unchanged (sha256 of every file): "
                  f"{ {d: lab.sha256_tree(ROOT / d) for d in book} == book}")
            print(f"   data/reruns/{name}/rerun.json: source {entry['source']}, notebook {entry['notebook']}, "
                  f"{len(entry['parameters'])} parameters (the notebook has {len(section_defaults('04'))}; every one: "
                  f"{set(entry['parameters']) == set(section_defaults('04'))}), changed {entry['changed']}, "
                  f"defaults {entry['defaults']}")
            # 2. section 02 with its defaults (the book's own run), then make book
            nb = folder / "02_pseudo_labels.ipynb"
            lab.open_notebook(page, base, token, nb.name)
            before = (ROOT / "data/runs/synth/02_pseudo_labels/summary.json").stat().st_mtime_ns
            lab.run_all(page)
            waited = lab.wait_until(lambda: lab.kernel_busy(base, token) is False and
                                    (ROOT / "data/runs/synth/02_pseudo_labels/summary.json").stat().st_mtime_ns
                                    != before, page, base, token, nb, timeout=3600)
    print(f"2. section 02, a default Run All in JupyterLab: {waited:.0f} s; it wrote the book's run "
          f"data/runs/synth/02_pseudo_labels (summary.json rewritten)")
    wall, executed = _book()
    print(f"   then inkground book: {wall:.0f} s, sections executed: {executed or 'none'}")
    # 3. --into-book, then make book
    wall, cpu, proc = timed([str(VENV / "inkground"), "run", "04", "-p", "n_boot", "200", "--into-book"])
    print(f"3. inkground run 04 -p n_boot 200 --into-book: {wall:.0f} s, exit {proc.returncode}")
    wall, executed = _book()
    html = (ROOT / "_build/html/book/sections/04_tradeoffs.html").read_text("utf-8")
    text = " ".join(re.sub(r"<[^>]+>", " ", html).split())  # Sphinx splits inline code into spans
    top = "Not the book’s default run" in text.replace("'", "’") and "n_boot = 200 (default 1000)" in text
    print(f"   then inkground book: {wall:.0f} s, sections executed: {executed or 'none'}; the page says at its "
          f"top that n_boot = 200 is not the default: {top}")
    wall, executed = _book(["--defaults"])
    print(f"   inkground book --defaults: {wall:.0f} s, sections executed: {executed or 'none'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--book", action="store_true", help="the checks that need the book's data (minutes to an hour)")
    a = ap.parse_args()
    refusals()
    if a.book:
        book_checks()


if __name__ == "__main__":
    main()
