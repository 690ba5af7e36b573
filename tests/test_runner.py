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
    assert f"{tmp_path / 'missing'}" in str(e.value) and "make book` builds the default datasets" in str(e.value)
    assert not (tmp_path / "01_dataset_statistics.ipynb").exists()
    assert (tmp_path / "01_dataset_statistics.failed.ipynb").exists()


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


def test_a_page_run_with_other_parameters_says_so_at_its_top_and_how_to_rerun_it():
    """Issue 46: with --into-book the page showed `n_boot = 200` among the parameters with no sign that it is
    not the default; a page says in one place how to rerun its section (command line, papermill, JupyterLab)."""
    import nbformat

    from inkground_lib.publish.notebook_runner import _present_parameters, find_section

    def page(params):
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_markdown_cell("# 4. Trade-offs\n\nThe paper reads its results..."),
                    nbformat.v4.new_code_cell("x = 1")]
        nb.cells[1].metadata["tags"] = ["parameters"]
        _present_parameters(nb, find_section("04"), params)
        return nb

    nb = page({"n_boot": 200, "seed": 0})
    top = nb.cells[0].source
    assert top.startswith("# 4. Trade-offs\n\n```{important}\n**Not the book's default run.**")
    assert "`n_boot = 200` (default `1000`)" in top and "seed" not in top  # a default given is not a change
    assert top.index("```{important}") < top.index("The paper reads")
    how = next(c.source for c in nb.cells if c.metadata.get("tags") == ["inkground-parameters"])
    for text in (".venv/bin/inkground run 04 -p NAME VALUE", ".venv/bin/papermill notebooks/04_tradeoffs.ipynb "
                 "out.ipynb -p NAME VALUE", "-y 'NAME: [...]'", "`make lab`", "data/reruns/<name>/", "rerun.json",
                 "{ref}`rerunning-a-section`"):
        assert text in how, text
    assert sum("Rerun this section" in c.source for c in nb.cells) == 1
    assert "Not the book's default run" not in page({"n_boot": 1000}).cells[0].source


# ------------------------------------------------------------------- a changed input file re-executes (issue 28)

def _rating(page, rater, score=10, action="rate"):
    return {"page": page, "rater": rater, "score": score, "action": action, "session": rater, "raters_per_page": 2}


def test_appending_a_rating_re_executes_section_02(tmp_path, fake_papermill):
    import hashlib

    from inkground_lib.pseudo.ratings_log import RatingsLog

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
    from inkground_lib.pseudo.ratings_log import RatingsLog

    from inkground_lib.core import layout

    monkeypatch.setattr(notebook_runner, "SECTIONS_DIR", tmp_path / "sections")
    for d in (layout.SYNTH_DATASET, layout.RECORDED_DATASET):  # the inputs `inkground run` checks before starting
        (tmp_path / "repo" / d).mkdir(parents=True)
        (tmp_path / "repo" / d / "manifest.json").write_text("{}")
    monkeypatch.setattr(layout, "ROOT", tmp_path / "repo")
    from inkground_lib.publish import make_book  # the book's run: the stand-in datasets' "hashes"

    monkeypatch.setattr(make_book, "ROOT", tmp_path / "repo")
    monkeypatch.setattr(make_book, "datasets_info", lambda ds, loaded=None: {k: {"hash": f"stand-in {k}"} for k in ds})
    f = tmp_path / "people.csv"
    log = RatingsLog(f)
    log.append(_rating("p000", "ann"))
    assert main(["run", "02", "-p", "ratings", str(f), "--into-book"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("[inkground] section 02: ") and " s (CPU " in out[0]  # its wall and CPU time
    assert out[1].startswith(f"executed: {tmp_path / 'sections'}")
    assert main(["run", "02", "-p", "ratings", str(f), "--into-book"]) == 0
    out = capsys.readouterr().out
    assert "unchanged, not re-executed" in out and f"input files unchanged: ratings {f} (sha256 " in out
    log.append(_rating("p001", "ann"))
    assert main(["run", "02", "-p", "ratings", str(f), "--into-book"]) == 0
    assert "\nexecuted:" in capsys.readouterr().out and len(fake_papermill) == 2


@pytest.mark.slow  # executes notebook 02 three times (~25 s each on 2 cores)
def test_section_02_reexecutes_when_a_rating_is_appended(tmp_path):
    """The README's workflow: rate, run section 02, rate more in the same file, run section 02 again: the
    second run re-executes and its numbers are those of the longer file (issue 28)."""
    import pandas as pd

    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.datasets.synth.generate import SynthParams, generate
    from inkground_lib.pseudo.ratings_log import RatingsLog

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
    # the skeleton derenderer alone (the default reads each word with the tracer and compares three): the ratings are
    # what this test follows, and every page passes the OCR filter whichever derenderer drew its labels
    params = {"candidates": str(cand), "run_dir": str(run), "ratings": str(f), "ocr_threshold": 0.0, "recorded": "",
              "derenderer": "skeleton", "compare_derenderers": ["skeleton"]}

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


# ------------------------------------------------ progress on the terminal, nothing finished lost (issue 32)

def tiny_sections(folder):
    """Two section notebooks of a tiny book, each logging to the file its ``log`` parameter names: 01 draws a
    library progress bar, prints a line, and (``shutdown_delay``) makes its kernel slow to shut down, the window
    where a Ctrl-C lost a finished section; 02 sleeps ``sleep`` seconds between its start and its end."""
    import nbformat

    def notebook(params, *cells):
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
        p = nbformat.v4.new_code_cell(params)
        p.metadata["tags"] = ["parameters"]
        nb.cells = [nbformat.v4.new_markdown_cell("# A tiny section"), p] + [nbformat.v4.new_code_cell(c) for c in cells]
        return nb

    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook('log = ""\nshutdown_delay = 0.0',
                            'import atexit, pathlib, time\npathlib.Path(log).open("a").write("01 start\\n")',
                            "from inkground_lib.core.progress import bar\n"
                            'for _ in bar(range(3), desc="tiny stage 01", unit="step"):\n    time.sleep(0.01)',
                            'print("cell output 01")',
                            'atexit.register(time.sleep, shutdown_delay)\npathlib.Path(log).open("a").write("01 end\\n")'),
                   folder / "01_first.ipynb")
    nbformat.write(notebook('log = ""\nsleep = 0.0',
                            'import pathlib, time\npathlib.Path(log).open("a").write("02 start\\n")\ntime.sleep(sleep)',
                            'pathlib.Path(log).open("a").write("02 end\\n")'),
                   folder / "02_second.ipynb")
    return folder


@pytest.mark.slow  # executes a notebook
def test_a_bar_drawn_in_a_section_reaches_the_runners_stderr_and_not_the_notebook(tmp_path, monkeypatch, capfd):
    import os

    from inkground_lib.core.progress import PROGRESS_ENV
    from inkground_lib.publish import notebook_runner

    monkeypatch.setattr(notebook_runner, "NOTEBOOKS", tiny_sections(tmp_path / "notebooks"))
    monkeypatch.delenv(PROGRESS_ENV, raising=False)
    path, ran = run_section("01", {"log": str(tmp_path / "log")}, out_dir=tmp_path / "sections")
    err = capfd.readouterr().err
    assert ran and "[inkground] section 01 | tiny stage 01: 100%" in err and "3/3" in err
    outputs = json.dumps([c.get("outputs", []) for c in json.loads(path.read_text())["cells"]])
    assert "cell output 01" in outputs  # the notebook's own output is there
    assert "tiny stage" not in outputs and "%|" not in outputs and "it/s" not in outputs
    assert PROGRESS_ENV not in os.environ  # the environment is restored


MAKE_BOOK_LIKE = """
import sys
from pathlib import Path

from inkground_lib.publish import notebook_runner
from inkground_lib.publish.stages import Timer

notebook_runner.NOTEBOOKS = Path(sys.argv[1])
out, log, sleep = Path(sys.argv[2]), sys.argv[3], float(sys.argv[4])
timer = Timer()
for s in notebook_runner.sections():  # make book's loop over the sections
    params = {"log": log, "shutdown_delay": 3.0} if s.key == "01" else {"log": log, "sleep": sleep}
    with timer(f"section {s.key}"):
        notebook_runner.run_section(s.key, params, out_dir=out)
"""


@pytest.mark.slow  # three processes, each starting notebook kernels, two stopped by SIGINT
def test_ctrl_c_after_a_section_finished_keeps_it_and_a_rerun_goes_on_from_the_next(tmp_path):
    """Issue 32: a Ctrl-C just after section 02 finished (while its kernel shut down) lost its executed notebook,
    and the rerun executed it again. Here: a Ctrl-C half a second after section 01's last cell keeps 01; a
    terminal's Ctrl-C (the whole process group: the kernel too) in the middle of 02 leaves 02's partial notebook
    as 02_second.failed.ipynb without a fingerprint; the reruns never execute 01 again."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from inkground_lib.publish.notebook_runner import stored_fingerprint

    notebooks, out, log = tiny_sections(tmp_path / "notebooks"), tmp_path / "sections", tmp_path / "log"
    (tmp_path / "book.py").write_text(MAKE_BOOK_LIKE)

    def start(sleep):
        return subprocess.Popen([sys.executable, str(tmp_path / "book.py"), str(notebooks), str(out), str(log),
                                 str(sleep)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True,  # its own process group, as a terminal's foreground job
                                # a test run started in the background by a shell ignores SIGINT: not the child
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))

    def wait_for(proc, line):
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if log.exists() and line in log.read_text().splitlines():
                return
            time.sleep(0.02)
        raise AssertionError(f"{line!r} never logged: {proc.communicate()}")

    # 1. Ctrl-C to the runner 0.5 s after section 01's last cell ran: its kernel takes 3 s to shut down
    proc = start(sleep=60)
    wait_for(proc, "01 end")
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and "KeyboardInterrupt" in err, err
    first = out / "01_first.ipynb"
    assert stored_fingerprint(first) is not None, err  # saved, with its fingerprint
    assert not (out / "01_first.failed.ipynb").exists()
    assert log.read_text().splitlines() == ["01 start", "01 end"]
    saved = first.stat().st_mtime_ns

    # 2. the rerun goes on with 02; a terminal's Ctrl-C (runner and kernel) while 02 runs
    proc = start(sleep=60)
    wait_for(proc, "02 start")
    os.killpg(proc.pid, signal.SIGINT)
    stdout, err = proc.communicate(timeout=60)
    assert proc.returncode != 0, err
    assert log.read_text().splitlines() == ["01 start", "01 end", "02 start"]  # 01 was not executed again
    assert "[inkground] section 01: " in stdout and "[inkground] section 02: stopped after" in stdout
    assert not (out / "02_second.ipynb").exists()
    partial = json.loads((out / "02_second.failed.ipynb").read_text())
    assert "inkground" not in partial["metadata"]  # never a fingerprint on a notebook that did not finish
    assert any("02 start" in "".join(c["source"]) for c in partial["cells"])

    # 3. a run to the end: 02 executed, 01 still not
    proc = start(sleep=0)
    stdout, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert log.read_text().splitlines() == ["01 start", "01 end", "02 start", "02 start", "02 end"]
    assert stored_fingerprint(out / "02_second.ipynb") is not None
    assert not (out / "02_second.failed.ipynb").exists()
    assert first.stat().st_mtime_ns == saved  # 01's notebook as the first run saved it
    assert all(f"[inkground] section {k}: " in stdout and "(CPU " in stdout for k in ("01", "02"))
