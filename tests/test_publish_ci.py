"""The book's CI (.github/workflows): actionlint passes, every step is a make target that runs here, every path a
workflow uploads or caches is one the make targets write (issue 35), and the workflow's steps run here in their
order with CI=true, each step's condition read as GitHub reads it (issue 43)."""
import re
import subprocess

import pytest
import yaml

from inkground_lib.core.layout import DATASETS_DIR, ROOT, RUNS_DIR, SECTIONS_DIR
from inkground_lib.publish import ci


def test_workflows_pass_actionlint(tmp_path):
    which, found = ci.lint()
    assert found == [], f"{which}:\n" + "\n".join(found)
    # the check can fail: an unknown input and an undefined context property are found
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n"
                   "        with:\n          no-such-input: 1\n      - run: echo ${{ github.no_such_thing }}\n")
    _, found = ci.lint([bad])
    assert any("no_such_thing" in f for f in found), found


def _run_steps():
    for wf in sorted(ci.WORKFLOWS.glob("*.yml")):
        for job in yaml.safe_load(wf.read_text())["jobs"].values():
            for step in job["steps"]:
                if "run" in step:
                    yield wf.name, step["run"]


def test_every_workflow_step_is_a_make_target():
    """Each `run:` step is `make <targets>` (or installs what make needs: apt packages, CI-only pins), and each
    target it names exists in the Makefile, so the same steps run on any machine."""
    makefile = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([A-Za-z][\w-]*)\s*:(?!=)", makefile, re.M))
    for name, run in _run_steps():
        for line in run.strip().splitlines():
            line = line.strip()
            if line.startswith("apt-get "):
                continue
            assert line.startswith("make "), (name, line)
            named = [w for w in line.split()[1:] if not w.startswith("-") and "=" not in w and not w.startswith(">")
                     and not w.startswith('"')]
            assert named and set(named) <= targets, (name, line, set(named) - targets)


def test_cached_and_uploaded_paths_are_what_the_targets_write():
    """The run folders the cache keeps are those `make book` writes (core.layout); the uploaded site is the folder
    jupyter-book writes and `make pdf` / `make results` write into; a failed section's notebook is the file
    run_section keeps; pr.txt is what `make pr-number-file` writes, _site what `make site` fills; the installation
    is .venv, which exists here once `make venv` ran (the tests run in it)."""
    paths = ci.workflow_paths()
    rel = {p.relative_to(ROOT).as_posix() for p in (DATASETS_DIR, RUNS_DIR, SECTIONS_DIR)}
    assert rel == set(ci.RUN_FOLDERS)
    failed = f"{SECTIONS_DIR.relative_to(ROOT).as_posix()}/*.failed.ipynb"
    assert set(paths) == rel | {".venv", "_build/html", "_build/pr.txt", failed, "_site"}, paths
    assert (ROOT / ".venv" / "bin" / "python").exists()
    makefile = (ROOT / "Makefile").read_text()
    assert "_build/html/inkground.pdf" in makefile and "_build/html/inkground-results.zip" in makefile
    assert "> _build/pr.txt" in makefile
    from inkground_lib.publish.notebook_runner import build_book, run_section
    import inspect
    assert '"_build" / "html"' in inspect.getsource(build_book)
    assert 'f"{target.stem}.failed.ipynb"' in inspect.getsource(run_section)


def _workflow(name):
    return yaml.safe_load((ci.WORKFLOWS / name).read_text())


def test_the_installation_is_cpu_torch_from_the_lock_and_a_cache_hit_reinstalls_nothing(tmp_path):
    """`make venv` syncs the lock with hashes, torch from PyTorch's CPU index (uv's --torch-backend cpu), or from a
    local wheel folder that holds the locked wheel; the install step is skipped on a cache hit, and the stamp is
    named by the lock's digest, so a checkout's new file times reinstall nothing."""
    import os

    def dry(**env):
        e = {k: v for k, v in os.environ.items() if k != "PIP_FIND_LINKS"} | env
        return subprocess.run(["make", "-n", "-B", "--no-print-directory", "venv"], cwd=ROOT, capture_output=True,
                              text=True, check=True, env=e).stdout

    sync = next(line for line in dry().splitlines() if " pip sync " in line)
    assert "--require-hashes --torch-backend cpu requirements.txt" in sync
    (tmp_path / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")
    sync = next(line for line in dry(PIP_FIND_LINKS=str(tmp_path)).splitlines() if " pip sync " in line)
    assert f"--require-hashes --find-links {tmp_path} requirements.txt" in sync
    build = _workflow("book.yml")["jobs"]["build"]["steps"]
    install = next(s for s in build if s.get("run") == "make venv")
    assert install["if"] == "steps.venv.outputs.cache-hit != 'true'"
    stamp = subprocess.run(["make", "-s", "--no-print-directory", "-p", "-n", "venv"], cwd=ROOT, capture_output=True,
                           text=True).stdout
    name = next(line.split(":=", 1)[1].strip() for line in stamp.splitlines() if line.startswith("STAMP :="))
    assert (ROOT / name).is_file()
    lock = ROOT / "requirements.txt"
    st = lock.stat()
    try:
        os.utime(lock, (st.st_atime + 3600, st.st_mtime + 3600))  # as a fresh checkout leaves it: newer than .venv
        assert subprocess.run(["make", "-q", "venv"], cwd=ROOT).returncode == 0
    finally:
        os.utime(lock, (st.st_atime, st.st_mtime))


def test_deploys_are_never_cancelled_and_pull_requests_get_a_preview_link():
    book, publish = _workflow("book.yml"), _workflow("publish.yml")
    assert book["concurrency"]["cancel-in-progress"] == "${{ github.event_name == 'pull_request' }}"
    assert publish["concurrency"] == {"group": "pages", "cancel-in-progress": False}
    on = publish[True] if True in publish else publish["on"]  # YAML 1.1 reads the key `on` as True
    assert on["workflow_run"] == {"workflows": ["book"], "types": ["completed"]}
    job = publish["jobs"]["publish"]
    assert job["permissions"]["pages"] == "write" and job["environment"]["name"] == "github-pages"
    runs = [s.get("run", "") for s in job["steps"]]
    assert any("make announce-preview" in r for r in runs) and any("make site" in r for r in runs)
    # the pull request's code never runs with the write token: publish.yml checks out the default branch only
    assert all("ref" not in (s.get("with") or {}) for s in job["steps"] if str(s.get("uses", "")).startswith(
        "actions/checkout"))
    # the book workflow itself has no write permission and no secret (forks build the same way)
    assert book["permissions"] == {"contents": "read"} and "secrets." not in (ci.WORKFLOWS / "book.yml").read_text()


def test_weekly_build_with_external_links_and_actions_kept_current():
    book = _workflow("book.yml")
    on = book[True] if True in book else book["on"]
    assert on["schedule"][0]["cron"].split()[-1] == "1"  # weekly
    step = next(s for s in book["jobs"]["build"]["steps"] if s.get("run") == "make linkcheck-external")
    assert "schedule" in step["if"]
    dependabot = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text())
    assert {"package-ecosystem": "github-actions", "directory": "/"}.items() <= dependabot["updates"][0].items()
    assert dependabot["updates"][0]["schedule"]["interval"] == "weekly"


def test_runs_digest_changes_only_with_the_run_folders(tmp_path):
    assert ci.runs_digest(tmp_path) == ""
    (tmp_path / "data" / "runs" / "synth").mkdir(parents=True)
    (tmp_path / "data" / "runs" / "synth" / "a.csv").write_text("1")
    d = ci.runs_digest(tmp_path)
    assert d and ci.runs_digest(tmp_path) == d
    (tmp_path / "elsewhere.txt").write_text("x")
    assert ci.runs_digest(tmp_path) == d
    (tmp_path / "data" / "runs" / "synth" / "a.csv").write_text("2")
    assert ci.runs_digest(tmp_path) != d
    d = ci.runs_digest(tmp_path)
    sections = tmp_path / "book" / "sections"
    sections.mkdir(parents=True)
    for page in ci.PAGES_REMADE:  # every build writes these anew (the build's commit and time): not digested
        (sections / page).write_text("Built 2026-12-06 08:25 UTC")
    assert ci.runs_digest(tmp_path) == d
    (sections / "04_tradeoffs.ipynb").write_text("{}")  # an executed section is
    assert ci.runs_digest(tmp_path) != d


def test_the_pages_left_out_of_the_digest_are_those_make_book_writes():
    """PAGES_REMADE names what make_book writes into book/sections besides the executed notebooks."""
    import inspect

    from inkground_lib.publish import make_book
    from inkground_lib.report import front, reproducibility, reviewers, tracer_page

    source = "".join(inspect.getsource(m) for m in (make_book, front, reproducibility, reviewers, tracer_page))
    for page in ci.PAGES_REMADE:
        assert f'"{page}"' in source or f"'{page}'" in source, page


def test_cheap_targets_run_here():
    """`make ci-keys` prints the two cache keys as $GITHUB_OUTPUT lines, with the system Python."""
    out = subprocess.run(["make", "--no-print-directory", "-s", "ci-keys"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    assert re.fullmatch(r"install=[0-9a-f]{64}\nruns=[0-9a-f]{64}\n", out), out


def _names(results, action):
    return [r.name for r in results if r.action == action]


def test_the_book_workflow_runs_here_step_by_step_for_each_event():
    """`ci replay --dry-run` evaluates each step's `if` as GitHub would: on a push the book is built, linked and
    uploaded, no pull request number is written and the external links wait for the weekly run; a pull request
    writes its number; the schedule checks external links and uploads nothing; a failed section's notebook and
    the cache save wait for their conditions."""
    wf = ci.WORKFLOWS / "book.yml"
    push = ci.replay(wf, event="push", dry_run=True)
    order = [s.get("name") or s.get("uses") for s in _workflow("book.yml")["jobs"]["build"]["steps"]]
    assert [r.name for r in push] == order  # every step, in the workflow's order
    assert _names(push, "skipped") == ["The notebook of a failed section", "Save the run folders",
                                       "Links to other sites (weekly)", "The pull request's number"]
    assert "Build the book, its PDF and its results archive" in _names(push, "would run")
    pr = ci.replay(wf, event="pull_request", pr="7", dry_run=True)
    assert "The pull request's number" in _names(pr, "would run") and "The built book" in _names(pr, "would run")
    weekly = ci.replay(wf, event="schedule", dry_run=True)
    assert "Links to other sites (weekly)" in _names(weekly, "would run")
    assert "The built book" in _names(weekly, "skipped")


def test_replay_runs_steps_in_order_with_ci_true_their_outputs_and_failures(tmp_path):
    """A workflow's run steps run in bash with CI=true and their env's expressions substituted; $GITHUB_OUTPUT
    feeds later conditions; after a failure only failure()/always() steps run; an upload with nothing to upload
    fails as actions/upload-artifact does with if-no-files-found: error; a cache restore is a hit when its folder
    is here."""
    (tmp_path / "have").mkdir()
    wf = tmp_path / "w.yml"
    wf.write_text("""
on: push
jobs:
  j:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v7
      - id: a
        run: echo "ci=$CI" >> "$GITHUB_OUTPUT"
      - id: c
        uses: actions/cache@v5
        with: {path: have, key: k}
      - name: named
        if: steps.a.outputs.ci == 'TRUE' && steps.c.outputs.cache-hit == 'true'
        env:
          NAME: ${{ github.event.repository.name }}
        run: test "$NAME" = inkground && echo named > order.txt
      - name: not on a push
        if: github.event_name == 'pull_request'
        run: echo pr >> order.txt
      - name: fails
        run: exit 3
      - name: after a failure
        run: echo never >> order.txt
      - name: on failure
        if: failure()
        run: echo failure >> order.txt
      - name: upload
        if: always()
        uses: actions/upload-artifact@v7
        with: {name: x, path: nothing-here, if-no-files-found: error}
""")
    got = ci.replay(wf, root=tmp_path)
    assert [(r.name, r.action, r.outcome) for r in got] == [
        ("actions/checkout@v7", "stood in", "success"), ("echo \"ci=$CI\" >> \"$GITHUB_OUTPUT\"", "ran", "success"),
        ("actions/cache@v5", "stood in", "success"), ("named", "ran", "success"), ("not on a push", "skipped", ""),
        ("fails", "ran", "failure"), ("after a failure", "skipped", ""), ("on failure", "ran", "success"),
        ("upload", "stood in", "failure")]
    assert (tmp_path / "order.txt").read_text().split() == ["named", "failure"]
    cold = ci.replay(wf, root=tmp_path, cold=True)  # the cache misses: the named step does not run
    assert ("named", "skipped") in [(r.name, r.action) for r in cold]


def test_expressions_as_github_reads_them():
    ctx = {"github": {"event_name": "push"}, "steps": {"s": {"outputs": {"d": "x"}}}}
    assert ci.evaluate("github.event_name == 'PUSH'", ctx) is True  # strings compare without case
    assert ci.evaluate("steps.s.outputs.d != '' && steps.s.outputs.d != steps.t.outputs.d", ctx) is True
    assert ci.evaluate("!(github.event_name == 'push') || steps.nothing.outputs.x", ctx) == ""
    assert ci.step_runs({"if": "github.event_name == 'push'"}, ctx, "failure") is False  # success() implied
    assert ci.step_runs({"if": "${{ always() }}"}, ctx, "failure") is True
    assert ci.substitute("a-${{ github.event_name }}-${{ github.event_name == 'push' }}", ctx) == "a-push-true"
    with pytest.raises(ci.WorkflowError, match=r"function hashFiles\(\)"):
        ci.evaluate("hashFiles() == ''", ctx)
    with pytest.raises(ci.WorkflowError, match="cannot read it at"):
        ci.evaluate("github.event_name === 'push'", ctx)
