"""The book's CI (.github/workflows): actionlint passes, every step is a make target that runs here, and every
path a workflow uploads or caches is one the make targets write (issue 35)."""
import re
import subprocess

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
            if line.startswith(("apt-get ", ".venv/bin/python -m pip install -r requirements-ci.txt")):
                continue
            assert line.startswith("make "), (name, line)
            named = [w for w in line.split()[1:] if not w.startswith("-") and "=" not in w and not w.startswith(">")
                     and not w.startswith('"')]
            assert named and set(named) <= targets, (name, line, set(named) - targets)


def test_cached_and_uploaded_paths_are_what_the_targets_write():
    """The run folders the cache keeps are those `make book` writes (core.layout), the uploaded site is the
    folder jupyter-book writes and `make pdf` / `make results` write into; the installation is .venv, which
    exists here once `make venv` ran (the tests run in it)."""
    paths = ci.workflow_paths()
    rel = {p.relative_to(ROOT).as_posix() for p in (DATASETS_DIR, RUNS_DIR, SECTIONS_DIR)}
    assert set(paths) == rel | {".venv", "_build/html"}, paths
    assert (ROOT / ".venv" / "bin" / "python").exists()
    makefile = (ROOT / "Makefile").read_text()
    assert "_build/html/inkground.pdf" in makefile and "_build/html/inkground-results.zip" in makefile
    from inkground_lib.publish.notebook_runner import build_book
    import inspect
    assert '"_build" / "html"' in inspect.getsource(build_book)


def test_cheap_targets_run_here():
    """`make ci-keys` prints the two cache keys as $GITHUB_OUTPUT lines; `make -n ci-venv` installs torch from
    PyTorch's CPU index before the other pins."""
    out = subprocess.run(["make", "--no-print-directory", "-s", "ci-keys"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    assert re.fullmatch(r"install=[0-9a-f]{64}\nruns=[0-9a-f]{64}\n", out), out
    index = "https://download.pytorch.org/whl/cpu"
    dry = subprocess.run(["make", "-n", "-B", "--no-print-directory", "venv", f"TORCH_INDEX={index}"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout.splitlines()
    torch_line = next(i for i, line in enumerate(dry) if f"--index-url {index}" in line)
    pins_line = next(i for i, line in enumerate(dry) if "-r requirements.txt" in line)
    assert "grep '^torch==' requirements.txt" in dry[torch_line] and torch_line < pins_line
    assert f"CPU_TORCH_INDEX := {index}" in (ROOT / "Makefile").read_text()
