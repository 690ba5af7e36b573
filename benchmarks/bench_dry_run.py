"""How soon ``inkground predict`` answers a user: dry runs, the first request, and every early stop (prints
figures; not a test; issue 32).

Each figure is the wall time of one ``inkground predict`` process, started as a user starts it (a fresh
Python, the library of ``--repo``), on a copy of a benchmark folder:

* ``dry run <system>``: ``predict --dry-run`` of gemini-3.1-pro, claude-opus-4.8 and kimi-k3 with none of
  their keys set (``--with-keys``: with made-up keys, as the code before issue 32 needed them);
* against the loopback fake server (tests/fakeserver.py), with a registry entry extending claude-opus-4.8
  (its pacing off, so the figures are the command's own):
  ``first request`` - seconds from the start of ``predict --max-requests 4`` to the first request the server
  receives; ``quota stop`` - every request answered 429 with retry-after 3600 (a spent daily quota), seconds
  until the command exits; ``cap stop`` - ``--max-requests 10``, seconds until it exits; ``trickle stop`` -
  every answer trickles one byte a second and the entry's deadline (timeout) is 2 s, seconds until it exits.

A process still running after ``--timeout`` seconds is killed and shown as "> T s". Beside each wall time, the
CPU seconds the process used (user + system): on a shared machine the wall time follows the load, the CPU time
much less. Python's own bytecode cache is used as the environment says (``PYTHONDONTWRITEBYTECODE=1`` makes every
process compile what it imports: the anthropic SDK alone is thousands of modules).

Usage: .venv/bin/python benchmarks/bench_dry_run.py [--benchmark DIR] [--repo PATH] [--timeout S] [--with-keys]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fakeserver import FakeServer, http_error, trickle  # noqa: E402

DEFAULT_BENCHMARK = Path("/work/main/data/runs/synth/02_pseudo_labels/benchmark")
SYSTEMS = ("gemini-3.1-pro", "claude-opus-4.8", "kimi-k3")
KEYS = ("GEMINI_API_KEY", "ANTHROPIC_API_KEY", "MOONSHOT_API_KEY")
CLI = "import sys; from inkground_lib.cli import main; sys.exit(main())"

REGISTRY = """\
bench-claude: {extends: claude-opus-4.8, api_key_env: BENCH_KEY, base_url_env: BENCH_URL, rpm: null}
bench-trickle: {extends: claude-opus-4.8, api_key_env: BENCH_KEY, base_url_env: BENCH_URL, rpm: null, timeout: 2,
                backoff_base: 1}
"""


def start(repo: Path, args: list, env: dict) -> tuple[subprocess.Popen, float, float]:
    cpu0, t0 = _cpu(), time.time()
    proc = subprocess.Popen([sys.executable, "-c", CLI, *args], cwd=repo, env={**env, "PYTHONPATH": str(repo)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    return proc, t0, cpu0


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def finish(proc: subprocess.Popen, t0: float, timeout: float, cpu0: float) -> tuple[str, int | None, str, str]:
    """(seconds as text, exit code or None when killed, stdout, stderr); ``cpu0``: the children's CPU time before."""
    try:
        out, err = proc.communicate(timeout=max(timeout - (time.time() - t0), 0.1))
        took, code = f"{time.time() - t0:.1f} s", proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        took, code = f"> {timeout:g} s (killed)", None
    return f"{took} ({_cpu() - cpu0:.1f} CPU-s)", code, out, err


def last_line(text: str) -> str:
    lines = [x for x in text.replace("\r", "\n").splitlines() if x.strip()]
    return lines[-1].strip()[:160] if lines else ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--benchmark", default=str(DEFAULT_BENCHMARK))
    ap.add_argument("--repo", default=str(ROOT), help="the checkout whose library is timed (default: this one)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds before a process is killed")
    ap.add_argument("--with-keys", action="store_true", help="dry runs with made-up keys set")
    ap.add_argument("--only", choices=["dry", "server"], help="only the dry runs or only the fake-server figures")
    a = ap.parse_args()
    repo = Path(a.repo).resolve()
    base_env = {k: v for k, v in os.environ.items() if k not in KEYS and not k.startswith("INKGROUND_")}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        bench = tmp / "benchmark"
        shutil.copytree(a.benchmark, bench)
        print(f"benchmark {a.benchmark} (copied); library {repo}; timeout {a.timeout:g} s")
        if a.only in (None, "dry"):
            env = dict(base_env)
            if a.with_keys:
                env.update({k: "made-up-key" for k in KEYS})
            for name in SYSTEMS:
                proc, t0, cpu0 = start(repo, ["predict", "--system", name, "--dataset", str(bench), "--run",
                                              str(tmp / f"dry-{name}"), "--dry-run"], env)
                took, code, out, err = finish(proc, t0, a.timeout, cpu0)
                first = next((x for x in out.splitlines() if x.strip()), last_line(err))
                print(f"dry run {name}{' (made-up keys)' if a.with_keys else ' (no key)'}: {took}, exit {code}; "
                      f"{first[:140]}")
        if a.only in (None, "server"):
            (tmp / "systems.yaml").write_text(REGISTRY, "utf-8")
            env = {**base_env, "INKGROUND_SYSTEMS": str(tmp / "systems.yaml"), "BENCH_KEY": "made-up-key"}
            cases = [("first request", "bench-claude", ["--max-requests", "4"], None),
                     ("quota stop", "bench-claude", [], http_error(429, retry_after=3600, message="daily quota")),
                     ("cap stop", "bench-claude", ["--max-requests", "10"], None),
                     ("trickle stop", "bench-trickle", [], trickle(1.0, 600.0))]
            for what, name, extra, action in cases:
                with FakeServer() as srv:
                    if action is not None:
                        srv.script(*[action] * 5000)
                    run = tmp / f"run-{what.replace(' ', '-')}"
                    proc, t0, cpu0 = start(repo, ["predict", "--system", name, "--dataset", str(bench), "--run",
                                                  str(run), *extra], {**env, "BENCH_URL": srv.anthropic_url})
                    took, code, out, err = finish(proc, t0, a.timeout, cpu0)
                    first = f"{srv.requests[0].time - t0:.1f} s" if srv.requests else "none"
                    figure = f"{first} to the first request (the run took {took})" if what == "first request" \
                        else took
                    print(f"{what}: {figure}, exit {code}, {srv.hits()} requests; {last_line(err or out)}")


if __name__ == "__main__":
    main()
