"""The notebooks' first code cell after the parameters (publish/notebook_start.py, issue 46): the check
``inkground run`` makes, before anything is written; one plan from the parameters' values however often a cell
runs; a rerun recorded with every parameter and where it came from. The cells are the notebooks' own, executed in
a namespace as a kernel would (the whole notebooks in kernels: test_notebook_paths.py, test_lab_browser.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from inkground_lib.core import layout
from inkground_lib.publish.parameters_cell import section_defaults, section_notebooks
from inkground_lib.publish.rerun_plan import PLANNED_ENV
from inkground_lib.publish.rerun_record import read_rerun
from inkground_lib.publish.notebook_start import JUPYTER_SESSION_ENV, finish_run, start_run
from inkground_lib.publish.run_checks import RunCheckError


@pytest.fixture
def kernel(rerun_repo, monkeypatch):
    """A stand-in repository with every input of the four sections, and a kernel started by papermill (no
    command planned it, no Jupyter server)."""
    root, _ = rerun_repo
    (root / layout.BENCHMARK).mkdir(parents=True)
    (root / layout.BENCHMARK / "manifest.json").write_text("{}")
    for run in layout.EVAL_RUNS:
        (root / run).mkdir(parents=True)
    monkeypatch.delenv(PLANNED_ENV, raising=False)
    monkeypatch.delenv(JUPYTER_SESSION_ENV, raising=False)
    return root


def _cells(section: str) -> tuple[str, str]:
    """The notebook's parameters cell and the code cell after it, as they are committed."""
    nb = json.loads(section_notebooks()[section].read_text("utf-8"))
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    return code[0], code[1]


def _tree(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes() if p.is_file() else None for p in root.rglob("*")}


@pytest.mark.parametrize("section", ["01", "02", "03", "04"])
def test_running_the_paths_cell_again_plans_the_same_run(kernel, section):
    """Issue 46: run twice (JupyterLab, without the parameters cell), the cell took its own resolved paths for
    parameters the user set, and the run wrote into the book's runs while saying it did not."""
    params, paths = _cells(section)
    ns: dict = {}
    exec(params, ns)
    defaults = section_defaults(section)
    book = _tree(kernel / "data" / "runs")
    for _ in range(3):
        exec(paths, ns)
        plan = ns["plan"]
        assert plan.name is None and plan.changed == {}, plan  # the book's own run, each time
        assert all(ns[k] == v for k, v in defaults.items())  # the parameters keep the values the cell gave
        assert all(w.startswith("data/runs/") for w in plan.writes)
    # changed in the parameters cell: a rerun of its own, the same one however often the cell runs
    key, value = ("example_pages", 1) if section == "01" else ("seed", 3)
    ns[key] = value
    names = set()
    for _ in range(2):
        exec(paths, ns)
        names.add(ns["plan"].name)
        assert ns["plan"].changed == {key: value}
        assert all(w.startswith(f"{layout.RERUNS}/{ns['plan'].name}/") for w in ns["plan"].writes)
    assert len(names) == 1 and _tree(kernel / "data" / "runs") == book


@pytest.mark.parametrize("section, values, message", [
    ("04", {"n_boot": "200"}, "parameter n_boot: the value '200' has type str, expected int (the default is 1000); "
                              "write the number without quotes"),
    ("02", {"ocr_threshold": "0.9"}, "parameter ocr_threshold: the value '0.9' has type str, expected float"),
    ("03", {"systems": ["reference", "nope"]}, "parameter systems: unknown system 'nope'; known systems: "),
    ("02", {"derenderer": "pencil"}, "parameter derenderer: unknown derenderer 'pencil'; known derenderers: skeleton, "
                                     "tracer[:<weights .npz>], tracer-recognize[:<weights .npz>]"),
    ("02", {"compare_derenderers": ["skeleton", "inksight"]}, "unknown derenderer 'inksight'; known derenderers:"),
    ("03", {"ocr_engine": "easyocr"}, "parameter ocr_engine: unknown OCR engine 'easyocr'; known OCR engines: "
                                      "deepseek-ocr, rapidocr, tesseract"),
    ("04", {"ocr_engines": "['tesseract']"}, "parameter ocr_engines: the value \"['tesseract']\" has type str, "
                                             "expected list (the default is [\"tesseract\", \"deepseek-ocr\"]); "
                                             "papermill's -p passes a list as text: give it in YAML with "
                                             "-y \"ocr_engines: ['tesseract']\""),
    ("04", {"reference": "truth"}, "parameter reference: unknown reference 'truth'; known references: reference, true"),
    ("02", {"candidates": "data/datasets/none"}, "parameter candidates: data/datasets/none holds no dataset"),
    # a None default no longer accepts anything: its annotation in the parameters cell says what it takes
    ("02", {"n_candidates": "12"}, "parameter n_candidates: the value '12' has type str, expected None or int "
                                   "(the default is None); write the number without quotes"),
    ("02", {"ratings": 3}, "parameter ratings: the value 3 has type int, expected None or str"),
    # a list's elements, as its default's (or its annotation's) are
    ("04", {"spacings": [0.02, "0.1"]}, "parameter spacings: the element '0.1' of [0.02, '0.1'] has type str, "
                                        "expected float (the default is [0.02, 0.1]); write the list's numbers "
                                        "without quotes"),
    ("03", {"systems": ["skeleton", 3]}, "parameter systems: the element 3 of ['skeleton', 3] has type int, "
                                         "expected str"),
    ("04", {"datasets": ["data/datasets/synth", 2]}, "parameter datasets: the element 2 of"),
    ("04", {"datasets": ["data/datasets/synth", "data/datasets/none"]},
     "parameter datasets: data/datasets/none holds no dataset"),
    ("04", {"datasets": ["data/datasets/synth"]}, "parameter datasets: 1 dataset folder(s) for 2 eval_runs; give "
                                                  "one per run folder"),
])
def test_wrong_values_are_refused_naming_the_parameter_before_anything_is_written(kernel, section, values, message):
    params, paths = _cells(section)
    ns: dict = {}
    exec(params, ns)
    ns.update(values)
    before = _tree(kernel)
    t0 = time.monotonic()
    with pytest.raises(RunCheckError) as e:
        exec(paths, ns)
    assert message in str(e.value) and f"section {section}" in str(e.value), str(e.value)
    assert "\n" not in str(e.value) and time.monotonic() - t0 < 10
    assert _tree(kernel) == before and "plan" not in ns  # no folder, no record, no plan


def test_the_check_imports_nothing_heavy():
    """The cell answers within seconds of the kernel's start: no torch, pandas, matplotlib, OCR or API client."""
    code = ("import sys\nfrom inkground_lib.publish.notebook_start import start_run\n"
            "from inkground_lib.publish.run_checks import check_meanings\n"
            "check_meanings('03', {'systems': ['reference'], 'ocr_engines': ['rapidocr'], 'derenderer': 'skeleton',"
            " 'reference': 'true'})\n"
            "heavy = ('torch', 'pandas', 'matplotlib', 'scipy', 'onnxruntime', 'rapidocr', 'transformers', 'numba',"
            " 'skimage', 'openai', 'anthropic', 'papermill', 'nbformat')\n"
            "print(sorted(m for m in heavy if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_notebook_rerun_records_every_parameter_and_where_it_came_from(kernel, monkeypatch, capsys):
    params, paths = _cells("04")
    ns: dict = {}
    exec(params, ns)
    ns["n_boot"] = 200
    lab = kernel / "lab" / "04_tradeoffs.ipynb"
    monkeypatch.setenv(JUPYTER_SESSION_ENV, str(lab))  # a kernel of JupyterLab's
    exec(paths, ns)
    plan = ns["plan"]
    assert plan.name == "04_n_boot-200"
    out = capsys.readouterr().out
    assert "rerun 04_n_boot-200: changed parameters {\"n_boot\": 200}" in out
    assert "data/reruns/04_n_boot-200/rerun.json" in out
    entry = read_rerun(plan.name)["sections"]["04"]
    assert entry["parameters"] == {**section_defaults("04"), "n_boot": 200}  # every parameter, not only the given
    assert entry["changed"] == {"n_boot": 200} and entry["defaults"] == {"n_boot": 1000}
    assert entry["source"] == "JupyterLab" and entry["notebook"] == "lab/04_tradeoffs.ipynb"
    assert entry["upstream"] == {"eval_runs": "book"} and entry["started"] and entry["finished"] is None
    finish_run(plan)
    done = read_rerun(plan.name)["sections"]["04"]
    assert done["finished"] and done["started"] == entry["started"]
    # papermill (no Jupyter server): section 01, which writes no run folder, leaves its record too
    monkeypatch.delenv(JUPYTER_SESSION_ENV)
    params, paths = _cells("01")
    ns = {}
    exec(params, ns)
    ns["example_pages"] = 1
    exec(paths, ns)
    entry = read_rerun("01_example_pages-1")["sections"]["01"]
    assert entry["source"] == "papermill" and entry["notebook"] is None and entry["writes"] == []
    # the book's own run says so and records nothing under data/reruns/
    params, paths = _cells("02")
    ns = {}
    exec(params, ns)
    capsys.readouterr()
    exec(paths, ns)
    assert "the book's own run (default parameters): this run writes data/runs/synth/02_pseudo_labels" in \
        capsys.readouterr().out
    assert sorted(p.name for p in (kernel / layout.RERUNS).iterdir()) == ["01_example_pages-1", "04_n_boot-200"]


@pytest.fixture
def shell():
    """An IPython shell, as a JupyterLab kernel runs the notebook's cells (IPython's own, not a stand-in)."""
    from IPython.core.interactiveshell import InteractiveShell

    sh = InteractiveShell.instance()
    yield sh
    InteractiveShell.clear_instance()


def test_a_cell_run_after_changed_parameters_but_before_the_plan_is_refused(kernel, shell, monkeypatch):
    """In JupyterLab, the parameters cell edited and run, then a later cell run without the cell after the
    parameters: that cell computed with the new values into the folders planned for the old ones (for a first
    default run, the book's). It is refused before it runs, until the run is planned again."""
    monkeypatch.setenv(JUPYTER_SESSION_ENV, str(kernel / "lab" / "04_tradeoffs.ipynb"))
    params, paths = _cells("04")
    book = _tree(kernel / "data" / "runs")
    assert shell.run_cell(params).success and shell.run_cell(paths).success
    assert shell.user_ns["plan"].name is None  # the book's own run
    assert shell.run_cell("folders = eval_folders").success  # nothing changed: any cell runs
    assert shell.run_cell("n_boot = 200").success  # a cell setting a parameter runs
    for cell in ("marker = 1", "finish_run(plan)"):
        result = shell.run_cell(cell)
        assert not result.success and type(result.error_before_exec).__name__ == "InputRejected"
        assert str(result.error_before_exec) == (
            "section 04: the parameters changed since this run was planned (n_boot: 1000 -> 200); run the cell "
            "after the parameters (start_run) again first - this cell was not run")
    assert "marker" not in shell.user_ns
    assert shell.run_cell(paths).success and shell.user_ns["plan"].name == "04_n_boot-200"  # planned again
    assert shell.run_cell("marker = 1").success and shell.user_ns["marker"] == 1
    # a wrong value: the plan is not made, and the cells after it stay refused
    assert shell.run_cell("n_boot = 0").success and not shell.run_cell(paths).success
    assert type(shell.run_cell("marker = 2").error_before_exec).__name__ == "InputRejected"
    assert shell.user_ns["marker"] == 1
    guards = [t for t in shell.ast_transformers if type(t).__name__ == "PlanGuard"]
    assert len(guards) == 1  # planned twice, one guard
    assert _tree(kernel / "data" / "runs") == book


@pytest.mark.parametrize("section", ["01", "02", "03", "04"])
def test_no_cell_after_the_plan_assigns_a_parameter(section):
    """A parameter's value is the plan's from the cell after the parameters to the end (the guard above refuses
    cells otherwise): no cell of the notebook's own assigns one."""
    import ast

    nb = json.loads(section_notebooks()[section].read_text("utf-8"))
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    defaults = set(section_defaults(section))
    for cell in code[1:]:
        names = {n.id for n in ast.walk(ast.parse(cell)) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        assert not names & defaults, (section, names & defaults, cell[:80])


def test_under_a_command_the_cell_checks_but_records_nothing(kernel, monkeypatch, capsys):
    monkeypatch.setenv(PLANNED_ENV, "make book")
    params, paths = _cells("04")
    ns: dict = {}
    exec(params, ns)
    ns["n_boot"] = 200  # make book keeping an --into-book parameter
    exec(paths, ns)
    assert ns["plan"].name is None and capsys.readouterr().out == "" and not (kernel / layout.RERUNS).exists()
    ns["n_boot"] = 0
    with pytest.raises(RunCheckError, match="n_boot must be >= 1"):
        exec(paths, ns)


@pytest.mark.slow  # one papermill process and kernel each (~5-10 s)
@pytest.mark.parametrize("notebook, args, message", [
    ("04_tradeoffs", ["-r", "n_boot", "200"], "parameter n_boot: the value '200' has type str, expected int"),
    ("04_tradeoffs", ["-p", "ocr_engines", "['tesseract']"],
     "parameter ocr_engines: the value \"['tesseract']\" has type str, expected list"),
    ("03_model_evaluation", ["-y", "systems: [reference, nope]"], "parameter systems: unknown system 'nope'"),
    ("02_pseudo_labels", ["-p", "derenderer", "pencil"], "parameter derenderer: unknown derenderer 'pencil'; known "
                                                         "derenderers: skeleton, tracer[:<weights .npz>]"),
    ("03_model_evaluation", ["-p", "ocr_engine", "easyocr"], "parameter ocr_engine: unknown OCR engine 'easyocr'"),
])
def test_papermill_stops_a_wrong_value_in_the_cell_after_the_parameters(tmp_path, notebook, args, message):
    """Issue 46: papermill checked nothing: a text n_boot failed after 3 s with a TypeError naming no parameter,
    a list given with -p failed after 45 s, an unknown derenderer left an empty rerun folder."""
    reruns = layout.ROOT / layout.RERUNS
    before = sorted(reruns.iterdir()) if reruns.is_dir() else None
    env = {k: v for k, v in os.environ.items() if k not in (PLANNED_ENV, JUPYTER_SESSION_ENV)}
    out = tmp_path / "out.ipynb"
    proc = subprocess.run([str(Path(sys.executable).with_name("papermill")), str(section_notebooks()[notebook[:2]]),
                           str(out), *args, "--cwd", str(tmp_path)], capture_output=True, text=True, env=env)
    assert proc.returncode != 0
    code = [c for c in json.loads(out.read_text())["cells"] if c["cell_type"] == "code"]
    failed = [c for c in code if any(o.get("output_type") == "error" for o in c["outputs"])]
    assert len(failed) == 1 and "start_run(" in "".join(failed[0]["source"])  # the cell after the parameters
    error = next(o for o in failed[0]["outputs"] if o.get("output_type") == "error")
    assert error["ename"] == "RunCheckError" and message in error["evalue"], error["evalue"]
    assert (sorted(reruns.iterdir()) if reruns.is_dir() else None) == before  # no folder written
