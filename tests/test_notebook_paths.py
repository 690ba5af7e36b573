"""The section notebooks find their folders wherever the kernel starts, and a papermill or JupyterLab run with
changed parameters writes under data/reruns/ (issues 36, 46): ``start_run`` + ``RunPlan.paths`` in the cell after
each parameters cell, whose paths never overwrite a parameter; records store portable paths."""

from __future__ import annotations

import json
import os
import shutil
import types
from pathlib import Path

import pandas as pd
import pytest

from inkground_lib.core import layout
from inkground_lib.core.rerun_folders import run_folder_parameters
from inkground_lib.publish.parameters_cell import section_defaults, section_notebooks
from inkground_lib.publish.rerun_plan import PLANNED_ENV, notebook_plan, plan_run, planned_by_command


def _kernel_globals(section: str, **changed) -> dict:
    return {**section_defaults(section), **changed, "In": [], "Out": {}}


# ----------------------------------------------------------------------------------------- the library calls

def test_paths_come_from_the_repository_root_whatever_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(PLANNED_ENV, raising=False)
    plan = notebook_plan("03", _kernel_globals("03", recorded=""))
    benchmark, recorded, bench_run = plan.paths("benchmark", "recorded", "bench_run")
    assert benchmark == str(layout.ROOT / "data/runs/synth/02_pseudo_labels/benchmark")  # read from the book's 02
    assert recorded == ""  # a skipped input stays skipped (not the root)
    assert bench_run == str(layout.ROOT / layout.RERUNS / plan.name / "synth/03_evaluation")
    runs, datasets = notebook_plan("04", _kernel_globals("04")).paths("eval_runs", "datasets")
    assert runs == [str(layout.ROOT / "data/runs/synth/03_evaluation"),
                    str(layout.ROOT / "data/runs/recorded/03_evaluation")] and datasets is None
    assert notebook_plan("02", _kernel_globals("02", ratings="/elsewhere/r.csv")).paths("ratings") == "/elsewhere/r.csv"


def test_a_run_its_command_planned_keeps_the_injected_folders(monkeypatch):
    """inkground run / make book inject the folders they chose: the notebook must not move them a second time."""
    monkeypatch.delenv(PLANNED_ENV, raising=False)
    with planned_by_command():
        assert os.environ[PLANNED_ENV] == "inkground run"
        # --into-book (or make book keeping a user's parameters): changed values, the book's folder
        into_book = notebook_plan("02", _kernel_globals("02", ocr_threshold=0.9))
        assert into_book.params["run_dir"] == layout.PSEUDO_RUN and into_book.name is None
        # a rerun: the command moved run_dir already
        cli = plan_run("02", {"ocr_threshold": 0.9}, name="mine")
        plan = notebook_plan("02", _kernel_globals("02", **cli.params))
        assert plan.params["run_dir"] == cli.params["run_dir"] == "data/reruns/mine/synth/02_pseudo_labels"
        assert plan.name == "mine" and plan.writes == cli.writes
    assert PLANNED_ENV not in os.environ  # restored
    # the same values from papermill or JupyterLab: a rerun of its own
    assert notebook_plan("02", _kernel_globals("02", ocr_threshold=0.9)).params["run_dir"] == \
        "data/reruns/02_ocr_threshold-0.9/synth/02_pseudo_labels"


# --------------------------------------------------------------------------------------------- the records

def test_records_store_paths_relative_to_the_root_and_read_them_back_from_anywhere(tmp_path, monkeypatch):
    """What the default run records stays what it was (relative), whether the notebook passes the absolute
    repo_path of its parameters or the relative value with the kernel in the root."""
    from inkground_lib.core.run_loaders import load_eval_run
    from inkground_lib.evaluation.run import _write_result
    from inkground_lib.evaluation.settings import EvalSettings

    monkeypatch.setattr(layout, "ROOT", tmp_path)
    ds_dir = tmp_path / "data/datasets/synth"
    ds_dir.mkdir(parents=True)
    (ds_dir / "manifest.json").write_text(json.dumps({"kind": "synth"}))
    res = types.SimpleNamespace(scores=pd.DataFrame({"a": [1]}), summary=pd.DataFrame({"a": [1]}), dataset="synth",
                                style={}, targets={}, unavailable={})
    recorded = []
    for given in (ds_dir, Path("data/datasets/synth")):
        monkeypatch.chdir(tmp_path)
        run = tmp_path / "data/runs/synth/03_evaluation"
        _write_result(run, res, given, "synth", EvalSettings())
        recorded.append(json.loads((run / "facts-reference.json").read_text())["dataset_dir"])
        monkeypatch.chdir(tmp_path / "data")  # a kernel elsewhere reads it back from the root
        assert load_eval_run(run, scores=False).dataset_dir == ds_dir
    assert recorded == ["data/datasets/synth", "data/datasets/synth"]
    from inkground_lib.analysis.run_conditions import _manifest
    assert _manifest("data/datasets/synth") == {"kind": "synth"}  # from tmp_path/data: found from the root


@pytest.mark.slow  # runs the pseudo-label pipeline on 3 tiny pages twice (~10 s)
def test_the_pseudo_label_record_is_the_same_from_absolute_or_relative_paths(tmp_path, monkeypatch):
    import inkground_lib.core.earlier_runs  # noqa: F401  (reads layout.ROOT when imported: before the stand-in)
    from inkground_lib.datasets.synth.generate import SynthParams, generate
    from inkground_lib.pseudo.run import run_pseudo_labels

    monkeypatch.setattr(layout, "ROOT", tmp_path)
    cand = generate(tmp_path / "data/datasets/synth", SynthParams(pages=3, width=500, height=650, words_min=1,
                    words_max=2, words_mean=1.5, seed=3), progress=False, workers=1)
    monkeypatch.chdir(tmp_path)
    records = []
    for c, r in ((str(cand), str(tmp_path / "data/runs/a/02_pseudo_labels")),
                 ("data/datasets/synth", "data/runs/b/02_pseudo_labels")):
        run_pseudo_labels(c, r, derenderer="skeleton", ocr_threshold=0.0, progress=False, workers=1)
        summary = json.loads((tmp_path / r / "summary.json").read_text())
        manifest = json.loads((tmp_path / r / "benchmark/manifest.json").read_text())
        records.append((summary["params"]["candidates"], summary["params"]["run_dir"],
                        manifest["meta"]["candidates"]["path"], manifest["meta"]["params"]["candidates"]))
    assert records == [("data/datasets/synth", "data/runs/a/02_pseudo_labels", "data/datasets/synth",
                        "data/datasets/synth"),
                       ("data/datasets/synth", "data/runs/b/02_pseudo_labels", "data/datasets/synth",
                        "data/datasets/synth")]


# ------------------------------------------------------------------------ the notebooks' own cells, in a kernel

def _head_notebook(section: str, tmp_path: Path) -> Path:
    """The section notebook's cells up to its paths cell, and a cell printing the values the rest would use."""
    import nbformat

    nb = nbformat.read(section_notebooks()[section], as_version=4)
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    params, paths = code[0], code[1]
    assert "parameters" in nb.cells[params].metadata.get("tags", [])
    assert "start_run(" in nb.cells[paths].source and ".paths(" in nb.cells[paths].source
    nb.cells = nb.cells[:paths + 1] + [nbformat.v4.new_code_cell(
        "import json, os\nprint(json.dumps({'cwd': os.getcwd(), 'plan': plan.name, "
        "'values': {k: plan.paths(k) for k in plan.params}}))")]
    path = tmp_path / f"head_{section}.ipynb"
    nbformat.write(nb, path)
    return path


def _execute(nb: Path, cwd: Path, parameters: dict | None = None) -> dict:
    import papermill as pm

    out = pm.execute_notebook(str(nb), None, parameters=parameters or {}, cwd=str(cwd), kernel_name="python3",
                              progress_bar=False)
    text = "".join(o.get("text", "") for o in out.cells[-1].outputs if o.get("name") == "stdout")
    return json.loads(text.strip().splitlines()[-1])


@pytest.fixture
def reruns_cleaned():
    """The names of the reruns a test writes under this checkout's data/reruns/, removed after it."""
    names: list[str] = []
    folder = layout.ROOT / layout.RERUNS
    existed = folder.exists()
    yield names
    for n in names:
        shutil.rmtree(folder / n, ignore_errors=True)
    if not existed and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()


@pytest.mark.slow  # starts 6 kernels (~3 s each)
def test_each_notebooks_paths_cell_resolves_from_notebooks_and_from_lab(tmp_path, monkeypatch, reruns_cleaned):
    """Relative paths are read from the repository root whatever the kernel's folder (here notebooks/; the
    inputs are tiny datasets named relative to the root, as a user names a folder of the checkout)."""
    from conftest import make_tiny_dataset

    monkeypatch.delenv(PLANNED_ENV, raising=False)
    ds = make_tiny_dataset(tmp_path / "ds")
    runs = [tmp_path / "runs" / "a", tmp_path / "runs" / "b"]
    for r in runs:
        r.mkdir(parents=True)
    rel = lambda p: os.path.relpath(p, layout.ROOT)  # noqa: E731
    given = {"01": {"dataset": rel(ds), "recorded": ""}, "02": {"candidates": rel(ds), "recorded": ""},
             "03": {"benchmark": rel(ds), "recorded": ""}, "04": {"eval_runs": [rel(r) for r in runs]}}
    cwd = layout.ROOT / "notebooks"
    for section, params in given.items():
        plan = plan_run(section, params)
        reruns_cleaned.append(plan.name)
        got = _execute(_head_notebook(section, tmp_path), cwd, params)
        assert got["cwd"] == str(cwd) and got["plan"] == plan.name
        for name, value in params.items():
            want = [str(layout.ROOT / v) for v in value] if isinstance(value, list) else \
                (str(layout.ROOT / value) if value else "")
            assert got["values"][name] == want, (section, name)
        own = [k for k, w in run_folder_parameters(section_defaults(section)).items() if w == section]
        for name in own:  # the folders it writes: under data/reruns/<name>/
            assert got["values"][name] == str(layout.ROOT / plan.params[name]), (section, name)
    # the kernel of a command that planned the run (--into-book here) keeps the injected folder
    with planned_by_command():
        got = _execute(_head_notebook("02", tmp_path), tmp_path, {**given["02"], "ocr_threshold": 0.9})
    assert got["values"]["run_dir"] == str(layout.ROOT / layout.PSEUDO_RUN)


def _tree(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.stat().st_mtime_ns for p in folder.rglob("*")} \
        if folder.is_dir() else {}


@pytest.mark.slow  # executes notebook 02 on 3 tiny pages (~30 s on 2 cores)
def test_papermill_with_a_changed_parameter_writes_under_reruns_and_not_the_books_run(tmp_path):
    """``papermill notebooks/02_pseudo_labels.ipynb out.ipynb -p ...`` from notebooks/: the run goes to
    data/reruns/<name>/ of this checkout; the book's runs are not touched."""
    import papermill as pm

    from inkground_lib.datasets.synth.generate import SynthParams, generate

    cand = generate(tmp_path / "ds", SynthParams(pages=3, width=500, height=650, words_min=1, words_max=2,
                                                 words_mean=1.5, seed=3), progress=False, workers=1)
    params = {"candidates": str(cand), "ocr_threshold": 0.0, "recorded": ""}
    plan = plan_run("02", params)
    folder = layout.ROOT / layout.RERUNS / plan.name
    assert not folder.exists(), f"{folder} exists before the test"
    reruns_existed = folder.parent.exists()
    book_runs = layout.ROOT / "data/runs"
    before = _tree(book_runs)
    env = os.environ.pop(PLANNED_ENV, None)
    try:
        pm.execute_notebook(str(section_notebooks()["02"]), str(tmp_path / "out.ipynb"), parameters=params,
                            cwd=str(layout.ROOT / "notebooks"), kernel_name="python3", progress_bar=False)
        run = layout.ROOT / plan.writes[0]
        assert plan.writes[0].startswith(f"{layout.RERUNS}/{plan.name}/")
        summary = json.loads((run / "summary.json").read_text())
        assert summary["params"]["run_dir"] == plan.writes[0]  # recorded relative, as the plan names it
        assert summary["params"]["candidates"] == str(cand.resolve())  # outside the checkout: absolute
        assert (run / "benchmark/manifest.json").is_file()
        assert _tree(book_runs) == before  # the book's runs byte for byte where they were
        printed = (tmp_path / "out.ipynb").read_text()
        assert f"rerun {plan.name}" in printed
    finally:
        if env is not None:
            os.environ[PLANNED_ENV] = env
        shutil.rmtree(folder, ignore_errors=True)
        if not reruns_existed and folder.parent.is_dir() and not any(folder.parent.iterdir()):
            folder.parent.rmdir()
