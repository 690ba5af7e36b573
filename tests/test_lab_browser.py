"""A section notebook rerun in JupyterLab, driven in a real browser (headless system Chromium through Playwright;
no browser download), as a user of `make lab` would (issue 46): the parameters cell edited in the page, the
cell after it run twice, then Run All. The run checks its values first, plans the same rerun however often that
cell runs, refuses a later cell while a parameter differs from the plan, writes only under data/reruns/<name>/
(data/runs/ and book/sections/ keep their sha256), and records every parameter with its source; a wrong value
stops it in that cell, named, with no folder written.

Section 02 runs on three tiny synthetic pages (~1 min). The same with the book's data (section 04, and a
default Run All of section 02 followed by `make book`): benchmarks/bench_jupyter_reruns.py --book."""

from __future__ import annotations

import json
import shutil

import pytest

import browser_checks
import lab_driver as lab
from inkground_lib.cli.lab import working_copies
from inkground_lib.core import layout
from inkground_lib.publish.parameters_cell import section_defaults
from inkground_lib.publish.rerun_plan import plan_run
from inkground_lib.publish.rerun_record import read_rerun

pytestmark = [pytest.mark.slow, pytest.mark.browser]

NOTEBOOK = "02_pseudo_labels.ipynb"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """JupyterLab serving working copies in a folder of its own; yields (base URL, token, folder, tiny dataset)."""
    from inkground_lib.datasets.synth.generate import SynthParams, generate

    tmp = tmp_path_factory.mktemp("lab_browser")
    cand = generate(tmp / "ds", SynthParams(pages=3, width=500, height=650, words_min=1, words_max=2,
                                            words_mean=1.5, seed=3), progress=False, workers=1)
    folder = tmp / "lab"
    working_copies(layout.NOTEBOOKS, folder)
    with lab.jupyterlab(folder, tmp / "state") as (base, token):
        yield base, token, folder, cand


def test_a_jupyterlab_rerun_checks_plans_once_writes_its_own_folder_and_records_itself(served):
    base, token, folder, cand = served
    source = lab.parameters_source(folder / NOTEBOOK)
    changed = {"candidates": str(cand), "recorded": "", "ocr_threshold": 0.0}
    name = plan_run("02", changed).name
    rerun = layout.ROOT / layout.RERUNS / name
    assert not rerun.exists(), f"{rerun} exists before the test"
    reruns_existed = rerun.parent.exists()
    book = {d: lab.sha256_tree(layout.ROOT / d) for d in ("data/runs", "book/sections")}
    try:
        with browser_checks.browser() as b:
            page = b.new_page(viewport={"width": 1400, "height": 900})
            params = lab.open_notebook(page, base, token, NOTEBOOK)
            plan_cell = lab.code_cell(page, "start_run(")

            # a wrong value: refused in the cell after the parameters, named, nothing written
            lab.set_source(page, params, lab.with_values(source, candidates=json.dumps(str(cand)), recorded='""',
                                                         ocr_threshold='"0.0"'))
            lab.run_in_place(page, params, timeout=120)  # the kernel starts with the first cell
            out, seconds = lab.run_in_place(page, plan_cell)
            assert "RunCheckError" in out and "parameter ocr_threshold: the value '0.0' has type str, expected " \
                   "float" in out, out
            assert not rerun.exists()

            # the right values; the cell after the parameters run twice: the same rerun, the parameters as given
            lab.set_source(page, params, lab.with_values(source, candidates=json.dumps(str(cand)), recorded='""',
                                                         ocr_threshold="0.0"))
            lab.run_in_place(page, params)
            for _ in range(2):
                out, _ = lab.run_in_place(page, plan_cell)
                assert f"rerun {name}: changed parameters {json.dumps(changed, sort_keys=True)}; this run writes " \
                       f"into {layout.RERUNS}/{name}/ ({layout.RERUNS}/{name}/synth/02_pseudo_labels)" in out, out

            # a parameter changed and its cell run, but not the cell after it: a later cell is refused, unrun
            lab.set_source(page, params, lab.with_values(source, candidates=json.dumps(str(cand)), recorded='""',
                                                         ocr_threshold="0.5"))
            lab.run_in_place(page, params)
            out, _ = lab.run_in_place(page, lab.code_cell(page, "run_pseudo_labels("))
            assert "InputRejected" in out and "section 02: the parameters changed since this run was planned " \
                   "(ocr_threshold: 0.0 -> 0.5); run the cell after the parameters (start_run) again first" in out, out
            assert not (rerun / "synth").exists()
            lab.set_source(page, params, lab.with_values(source, candidates=json.dumps(str(cand)), recorded='""',
                                                         ocr_threshold="0.0"))

            # Run All, to the last cell, which marks the record finished
            lab.run_all(page)
            lab.wait_until(lambda: ((read_rerun(name).get("sections") or {}).get("02") or {}).get("finished"),
                           page, base, token, folder / NOTEBOOK)
        entry = read_rerun(name)["sections"]["02"]
        assert entry["source"] == "JupyterLab" and entry["notebook"] == str((folder / NOTEBOOK).resolve())
        assert entry["parameters"] == {**section_defaults("02"), **changed,
                                       "run_dir": f"{layout.RERUNS}/{name}/synth/02_pseudo_labels"}
        assert entry["changed"] == changed and set(entry["defaults"]) == set(changed)
        run = rerun / "synth/02_pseudo_labels"
        assert (run / "summary.json").is_file() and (run / "benchmark" / "manifest.json").is_file()
        assert {d: lab.sha256_tree(layout.ROOT / d) for d in book} == book  # the book's runs byte for byte
    finally:
        shutil.rmtree(rerun, ignore_errors=True)
        if not reruns_existed and rerun.parent.is_dir() and not any(rerun.parent.iterdir()):
            rerun.parent.rmdir()
