"""The section runner and the command line: parameters, refusal of unknown names, reuse."""
import json

import pytest

from inkground_lib.publish import make_book
from inkground_lib.cli import main
from inkground_lib.publish.make_book import earlier_outputs_hash, fit_to_available_data
from inkground_lib.publish.notebook_runner import (
    RunnerError,
    find_section,
    notebook_parameters,
    parse_value,
    run_section,
    sections,
)
from inkground_lib.core.layout import ROOT


def test_sections_found_in_order():
    keys = [s.key for s in sections()]
    assert keys == sorted(keys) and "01" in keys
    assert find_section("01").name == "01_dataset_statistics"
    with pytest.raises(RunnerError, match="no section '99'"):
        find_section("99")


def test_notebook_sources_have_no_outputs_and_a_parameters_cell():
    for s in sections():
        nb = json.loads(s.source.read_text())
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), s.name
        assert any("parameters" in c["metadata"].get("tags", []) for c in code), s.name
        assert notebook_parameters(s), s.name


def test_unknown_parameter_is_refused_with_valid_names(tmp_path):
    with pytest.raises(RunnerError) as e:
        run_section("01", {"datset": "x"}, out_dir=tmp_path)
    msg = str(e.value)
    assert "'datset'" in msg and "valid parameters: dataset" in msg and "example_pages" in msg
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_cli_refuses_unknown_parameter(capsys, tmp_path):
    code = main(["run", "01", "-p", "nope", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "has no parameter 'nope'" in err and "valid parameters" in err


@pytest.mark.parametrize("text, value", [("3", 3), ("0.9", 0.9), ("true", True), ("data/x", "data/x"),
                                         ("null", None), ("[1, 2]", [1, 2]), ("a: b", "a: b"), ("", "")])
def test_parse_value(text, value):
    assert parse_value(text) == value


@pytest.mark.slow  # executes a notebook
def test_failed_section_keeps_previous_and_reports(tmp_path):
    """A run on a dataset that does not exist fails clearly and leaves no executed copy that looks valid."""
    with pytest.raises(RunnerError, match="section 01 failed") as e:
        run_section("01", {"dataset": str(tmp_path / "missing")}, out_dir=tmp_path)
    assert "manifest is missing" in str(e.value)
    assert not (tmp_path / "01_dataset_statistics.ipynb").exists()
    assert (tmp_path / "01_dataset_statistics.failed.ipynb").exists()


def test_requirements_and_environment_agree():
    import yaml

    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    deps = env["dependencies"]
    assert "python=3.11" in deps
    pip = next(d["pip"] for d in deps if isinstance(d, dict))
    assert "-r requirements.txt" in pip and "-e ." in pip
    # nothing else pins packages in environment.yml: it defers to requirements.txt
    assert [d for d in deps if isinstance(d, str) and d not in ("python=3.11", "pip")] == []


def test_console_script_declared():
    import importlib
    import tomllib

    py = tomllib.loads((ROOT / "pyproject.toml").read_text())
    module, func = py["project"]["scripts"]["inkground"].split(":")
    assert callable(getattr(importlib.import_module(module), func))


def test_section_fingerprint_inputs_are_earlier_outputs_only(tmp_path, monkeypatch):
    """A section's inputs are what *earlier* sections wrote; its own and later outputs never enter them,
    so a second `make book` re-executes nothing."""

    monkeypatch.setattr(make_book, "DATA", tmp_path)
    bench = tmp_path / "runs" / "synth" / "02_pseudo_labels" / "benchmark"
    bench.mkdir(parents=True)
    (bench / "manifest.json").write_text("{}")
    h02, h03 = earlier_outputs_hash("02"), earlier_outputs_hash("03")
    ev = tmp_path / "runs" / "synth" / "03_evaluation"
    ev.mkdir()
    (ev / "summary-reference.csv").write_text("system\nfont\n")
    assert earlier_outputs_hash("03") == h03  # 03's own output
    assert earlier_outputs_hash("04") != h03
    (bench / "manifest.json").write_text('{"changed": 1}')
    assert earlier_outputs_hash("03") != h03 and earlier_outputs_hash("02") == h02


def test_without_recorded_data_sections_03_and_04_use_the_benchmark_alone(monkeypatch, tmp_path):
    import ast

    s03, s04 = find_section("03"), find_section("04")
    assert fit_to_available_data(s03, {}, {"synth": 1}) == {"recorded": ""}
    assert fit_to_available_data(s03, {"recorded": "mine"}, {"synth": 1}) == {"recorded": "mine"}
    assert fit_to_available_data(s03, {}, {"synth": 1, "recorded": 1}) == {}
    # section 04 keeps exactly the default run folders that exist (in a scratch repository root, so the
    # result does not depend on which runs this checkout happens to hold)
    monkeypatch.setattr(make_book, "ROOT", tmp_path)
    defaults = ast.literal_eval(notebook_parameters(s04)["eval_runs"])
    assert len(defaults) >= 2
    assert fit_to_available_data(s04, {}, {"synth": 1}) == {"eval_runs": []}
    (tmp_path / defaults[1]).mkdir(parents=True)
    (tmp_path / defaults[1] / "summary-reference.csv").write_text("system\nfont\n")
    (tmp_path / defaults[0]).mkdir(parents=True)  # a run folder without its summary does not count
    assert fit_to_available_data(s04, {}, {"synth": 1}) == {"eval_runs": [defaults[1]]}
    assert fit_to_available_data(s04, {"eval_runs": ["mine"]}, {"synth": 1}) == {"eval_runs": ["mine"]}
    assert fit_to_available_data(s04, {}, {"synth": 1, "recorded": 1}) == {}


def test_make_book_warns_when_the_default_benchmark_is_too_small(tmp_path, capsys, monkeypatch):
    from conftest import make_tiny_dataset

    from inkground_lib.publish import make_book

    tiny = make_tiny_dataset(tmp_path / "tiny", pages=2, words=3)
    assert make_book.check_benchmark_size(tiny) is False  # the real minimum: 40 pages, 1,000 words
    out = capsys.readouterr().out
    assert "2 pages and 6 words" in out and f"{make_book.BOOK_MIN_BENCHMARK[0]} pages" in out
    assert make_book.check_benchmark_size(tmp_path / "absent") is False and "cannot be read" in capsys.readouterr().out
    monkeypatch.setattr(make_book, "BOOK_MIN_BENCHMARK", (2, 6))
    assert make_book.check_benchmark_size(tiny) is True and capsys.readouterr().out == ""
    monkeypatch.setattr(make_book, "BOOK_MIN_BENCHMARK", (2, 7))
    assert make_book.check_benchmark_size(tiny) is False


def test_parameter_line_says_not_set_instead_of_none():
    """Issue 13: no raw None on a page: a parameter left at None reads "not set"."""
    import nbformat

    from inkground_lib.publish.notebook_runner import _present_parameters, find_section

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# t"), nbformat.v4.new_code_cell("x = 1")]
    nb.cells[1].metadata["tags"] = ["parameters"]
    _present_parameters(nb, find_section("02"), {"ratings": None, "ocr_threshold": 0.9})
    line = next(c.source for c in nb.cells if c.metadata.get("tags") == ["inkground-parameters"])
    assert "`ratings` not set" in line and "`ocr_threshold = 0.9`" in line and "None" not in line


# ------------------------------------------------------------------- a changed input file re-executes (issue 28)

def _rating(page, rater, score=10, action="rate"):
    return {"page": page, "rater": rater, "score": score, "action": action, "session": rater, "raters_per_page": 2}


@pytest.fixture
def fake_papermill(monkeypatch):
    """papermill's execute_notebook replaced by the source notebook, reported to the runner as executed (the
    runner's fingerprint logic is what is tested here; the real execution is in
    test_section_02_reexecutes_when_a_rating_is_appended)."""
    import nbformat
    import papermill

    calls = []

    def execute(src, out, parameters=None, watch=None, **kw):
        calls.append(dict(parameters or {}))
        nb = nbformat.read(src, as_version=4)
        watch.started(nb)
        watch.finished(nb)
        return nb
    monkeypatch.setattr(papermill, "execute_notebook", execute)
    return calls


def test_appending_a_rating_re_executes_section_02(tmp_path, fake_papermill):
    import hashlib

    from inkground_lib.pseudo.raters import RatingsLog

    f = tmp_path / "people.csv"
    log = RatingsLog(f)
    log.append(_rating("p000", "ann"))
    out = tmp_path / "sections"
    params = {"ratings": str(f)}
    assert run_section("02", params, out_dir=out)[1] is True
    assert run_section("02", params, out_dir=out)[1] is False  # same file, same content: reused
    # `make book` passes its own inputs (dataset hashes); the ratings file's hash is added to them
    assert run_section("02", params, out_dir=out, inputs={"synth": "h"})[1] is True
    assert run_section("02", params, out_dir=out, inputs={"synth": "h"})[1] is False
    log.append(_rating("p000", "bob"))
    path, executed = run_section("02", params, out_dir=out, inputs={"synth": "h"})
    assert executed and len(fake_papermill) == 3
    meta = json.loads(path.read_text())["metadata"]["inkground"]
    assert meta["inputs"]["ratings_sha256"] == hashlib.sha256(f.read_bytes()).hexdigest()
    assert meta["inputs"]["synth"] == "h"
    f.unlink()  # a file that vanished is an input change too (the notebook then says it is missing)
    assert run_section("02", params, out_dir=out, inputs={"synth": "h"})[1] is True


def test_cli_run_says_which_input_file_it_compared(tmp_path, fake_papermill, monkeypatch, capsys):
    from inkground_lib.publish import notebook_runner
    from inkground_lib.pseudo.raters import RatingsLog

    monkeypatch.setattr(notebook_runner, "SECTIONS_DIR", tmp_path / "sections")
    f = tmp_path / "people.csv"
    log = RatingsLog(f)
    log.append(_rating("p000", "ann"))
    assert main(["run", "02", "-p", "ratings", str(f)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("[inkground] section 02: ") and " s (CPU " in out[0]  # its wall and CPU time
    assert out[1].startswith(f"executed: {tmp_path / 'sections'}")
    assert main(["run", "02", "-p", "ratings", str(f)]) == 0
    out = capsys.readouterr().out
    assert "unchanged, not re-executed" in out and f"input files unchanged: ratings {f} (sha256 " in out
    log.append(_rating("p001", "ann"))
    assert main(["run", "02", "-p", "ratings", str(f)]) == 0
    assert "\nexecuted:" in capsys.readouterr().out and len(fake_papermill) == 2


@pytest.mark.slow  # executes notebook 02 three times (~25 s each on 2 cores)
def test_section_02_reexecutes_when_a_rating_is_appended(tmp_path):
    """The README's workflow: rate, run section 02, rate more in the same file, run section 02 again: the
    second run re-executes and its numbers are those of the longer file (issue 28)."""
    import pandas as pd

    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.datasets.synth.generate import SynthParams, generate
    from inkground_lib.pseudo.raters import RatingsLog

    cand = generate(tmp_path / "ds", SynthParams(pages=4, width=500, height=650, words_min=1, words_max=2,
                                                words_mean=1.5, seed=3), progress=False, workers=1)
    pages = [p.id for p in load_dataset(cand).pages]
    f = tmp_path / "people.csv"
    log = RatingsLog(f)
    for p in pages[:3]:
        log.append(_rating(p, "ann"))
        log.append(_rating(p, "bob"))
    log.append(_rating(pages[3], "ann"))  # page 4 has 1 of its K = 2 ratings: it awaits ratings
    out, run = tmp_path / "sections", tmp_path / "run"
    params = {"candidates": str(cand), "run_dir": str(run), "ratings": str(f), "ocr_threshold": 0.0, "recorded": ""}

    def numbers():
        return json.loads((run / "summary.json").read_text())["numbers"]

    path, executed = run_section("02", params, out_dir=out)
    assert executed
    n = numbers()
    assert (n["benchmark_pages"], n["pages_awaiting_ratings"], n["raters_per_page"]) == (3, 1, 2)
    assert "The page awaiting ratings has fewer standing ratings" in path.read_text()
    assert run_section("02", params, out_dir=out)[1] is False
    log.append(_rating(pages[3], "bob", 7))
    path, executed = run_section("02", params, out_dir=out)
    assert executed
    n = numbers()
    assert (n["benchmark_pages"], n["pages_rejected"], n["pages_awaiting_ratings"], n["ratings"]) == (3, 1, 0, 8)
    assert "Every page that passed the OCR filter has its ratings" in path.read_text()
    used = pd.read_csv(run / "ratings.csv", dtype={"page": str})
    assert len(used) == 8 and set(used["source"]) == {"real"}  # the run folder holds the ratings it used
