"""The section runner and the command line: parameters, refusal of unknown names, reuse."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from inkground_lib import runner
from inkground_lib.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_sections_found_in_order():
    keys = [s.key for s in runner.sections()]
    assert keys == sorted(keys) and "01" in keys
    assert runner.find_section("01").name == "01_dataset_statistics"
    with pytest.raises(runner.RunnerError, match="no section '99'"):
        runner.find_section("99")


def test_notebook_sources_have_no_outputs_and_a_parameters_cell():
    for s in runner.sections():
        nb = json.loads(s.source.read_text())
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), s.name
        assert any("parameters" in c["metadata"].get("tags", []) for c in code), s.name
        assert runner.notebook_parameters(s), s.name


def test_unknown_parameter_is_refused_with_valid_names(tmp_path):
    with pytest.raises(runner.RunnerError) as e:
        runner.run_section("01", {"datset": "x"}, out_dir=tmp_path)
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
    assert runner.parse_value(text) == value


def test_failed_section_keeps_previous_and_reports(tmp_path):
    """A run on a dataset that does not exist fails clearly and leaves no executed copy that looks valid."""
    with pytest.raises(runner.RunnerError, match="section 01 failed") as e:
        runner.run_section("01", {"dataset": str(tmp_path / "missing")}, out_dir=tmp_path)
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
    reqs = {re.split(r"[=<>]", l)[0].strip().lower(): l.strip()
            for l in (ROOT / "requirements.txt").read_text().splitlines() if l.strip() and not l.startswith("#")}
    assert reqs["torch"] == "torch==2.13.0"
    assert reqs["jupyter-book"] == "jupyter-book>=1.0.4,<2"
    # nothing else pins packages in environment.yml: it defers to requirements.txt
    assert [d for d in deps if isinstance(d, str) and d not in ("python=3.11", "pip")] == []


def test_console_script_declared():
    import tomllib

    py = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert py["project"]["scripts"]["inkground"] == "inkground_lib.cli:main"


def test_section_fingerprint_inputs_are_earlier_outputs_only(tmp_path, monkeypatch):
    """A section's inputs are what *earlier* sections wrote; its own and later outputs never enter them,
    so a second `make book` re-executes nothing."""
    from inkground_lib import pipeline

    monkeypatch.setattr(pipeline, "DATA", tmp_path)
    bench = tmp_path / "runs" / "synth" / "02_pseudo_labels" / "benchmark"
    bench.mkdir(parents=True)
    (bench / "manifest.json").write_text("{}")
    h02, h03 = pipeline.earlier_outputs_hash("02"), pipeline.earlier_outputs_hash("03")
    ev = tmp_path / "runs" / "synth" / "03_evaluation"
    ev.mkdir()
    (ev / "summary-reference.csv").write_text("system\nfont\n")
    assert pipeline.earlier_outputs_hash("03") == h03  # 03's own output
    assert pipeline.earlier_outputs_hash("04") != h03
    (bench / "manifest.json").write_text('{"changed": 1}')
    assert pipeline.earlier_outputs_hash("03") != h03 and pipeline.earlier_outputs_hash("02") == h02


def test_without_recorded_data_sections_03_and_04_use_the_benchmark_alone(monkeypatch):
    from inkground_lib import pipeline

    s03, s04 = runner.find_section("03"), runner.find_section("04")
    assert pipeline.fit_to_available_data(s03, {}, {"synth": 1}) == {"recorded": ""}
    assert pipeline.fit_to_available_data(s03, {"recorded": "mine"}, {"synth": 1}) == {"recorded": "mine"}
    assert pipeline.fit_to_available_data(s03, {}, {"synth": 1, "recorded": 1}) == {}
    runs = pipeline.fit_to_available_data(s04, {}, {"synth": 1})["eval_runs"]
    assert all((pipeline.ROOT / r / "summary-reference.csv").is_file() for r in runs)
