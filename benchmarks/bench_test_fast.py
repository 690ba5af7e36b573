"""The contributor's loop, measured: ``make test-fast``'s wall time, how many of the collected tests it keeps,
and which library modules none of its tests exercises.

    python benchmarks/bench_test_fast.py [--no-coverage]

Runs the same pytest command as ``make test-fast`` (``-m "not slow and not browser"``, 2 workers) under
coverage.py and prints: the tests collected in all and kept (the goal: at least 80%), the wall time (the goal:
at most 3 minutes on 2 cores; coverage adds ~10-20%, ``--no-coverage`` measures without it), and every module of
``inkground_lib`` in which no statement inside a function or method ran (importing a module runs its top level
only; a module with no function counts as exercised when it is imported). Exit status 1 when a goal is missed.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "inkground_lib"
FAST = ["-m", "not slow and not browser", "-n", "2", "--dist", "loadfile", "-q", "-p", "no:cacheprovider"]
GOAL_SECONDS = 180.0
GOAL_SHARE = 0.80


def collected(marker: list[str]) -> int:
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *marker],
                         cwd=ROOT, capture_output=True, text=True).stdout
    m = re.search(r"(\d+)(?:/(\d+))? tests? collected", out)
    if not m:
        raise SystemExit(f"could not count the tests: {out[-500:]}")
    return int(m.group(1))


def function_body_lines(path: Path) -> set[int]:
    """Line numbers of the statements inside every function and method of a module."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for stmt in node.body:
                for sub in ast.walk(stmt):
                    if isinstance(sub, ast.stmt):
                        lines.add(sub.lineno)
    return lines


def unexercised(report: dict) -> list[str]:
    executed = {str(Path(f).resolve()): set(d["executed_lines"]) for f, d in report["files"].items()}
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "__main__.py":
            continue
        body = function_body_lines(path)
        ran = executed.get(str(path.resolve()))
        if ran is None or (body and not body & ran):
            out.append(str(path.relative_to(ROOT)))
    return out


def main(argv: list[str]) -> int:
    with_coverage = "--no-coverage" not in argv
    total = collected([])
    kept = collected(["-m", "not slow and not browser"])
    with tempfile.TemporaryDirectory() as tmp:
        cov = ["--cov=inkground_lib", f"--cov-report=json:{tmp}/cov.json", "--cov-report="] if with_coverage else []
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "pytest", *FAST, *cov], cwd=ROOT)
        wall = time.perf_counter() - t0
        missing = unexercised(json.loads(Path(tmp, "cov.json").read_text())) if with_coverage else None
    print(f"tests collected: {total}; kept by test-fast: {kept} ({kept / total:.1%}; goal >= {GOAL_SHARE:.0%})")
    print(f"test-fast wall time: {wall:.1f} s{' under coverage' if with_coverage else ''} (goal <= {GOAL_SECONDS:.0f} s); "
          f"pytest exit status {r.returncode}")
    if missing is not None:
        modules = sum(1 for p in PACKAGE.rglob("*.py") if p.name != "__main__.py")
        print(f"library modules: {modules}; exercised by test-fast: {modules - len(missing)}")
        for m in missing:
            print(f"  not exercised: {m}")
    ok = r.returncode == 0 and kept / total >= GOAL_SHARE and (with_coverage or wall <= GOAL_SECONDS)
    return 0 if ok and not missing else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
