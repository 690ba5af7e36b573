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
