"""Where a rerun writes (publish/rerun_plan.py, core/rerun_folders.py) and what `inkground run` checks before a
notebook starts (issue 36).

papermill is replaced by a stand-in that records the parameters each section would execute with (the rule and
the checks are what is tested; the notebooks' own execution is tested in test_runner.py)."""

from __future__ import annotations

import concurrent.futures
import json
import threading
import time
from pathlib import Path

import pytest

from inkground_lib.cli import main
from inkground_lib.core import layout
from inkground_lib.core.folders import folder_lock
from inkground_lib.core.rerun_folders import RERUN_RECORD, RerunError, check_name, rerun_name, run_folder_parameters
from inkground_lib.publish.parameters_cell import section_defaults
from inkground_lib.publish.rerun_plan import plan_run
from inkground_lib.publish.rerun_record import check_name_free, read_rerun, record_run


# ------------------------------------------------------------------------------------------ the rule, pure

def test_defaults_are_the_books_run_and_changed_parameters_a_rerun_of_their_own():
    book = plan_run("02", {"ocr_threshold": 0.85, "seed": 0})  # given, but the defaults: the book's own run
    assert book.name is None and book.folder is None and book.notebook == layout.SECTIONS_DIR / "02_pseudo_labels.ipynb"
    assert book.writes == (layout.PSEUDO_RUN,)
    p = plan_run("02", {"ocr_threshold": 0.9})
    assert p.name == "02_ocr_threshold-0.9" and p.changed == {"ocr_threshold": 0.9}
    assert p.params == {"ocr_threshold": 0.9, "run_dir": "data/reruns/02_ocr_threshold-0.9/synth/02_pseudo_labels"}
    assert p.notebook == layout.ROOT / "data/reruns/02_ocr_threshold-0.9/sections/02_pseudo_labels.ipynb"
    assert not any(w.startswith("data/runs/") for w in p.writes)  # never the book's folders
    # --into-book: the changed parameters into the book's runs, as asked
    into = plan_run("02", {"ocr_threshold": 0.9}, into_book=True)
    assert into.name is None and into.params == {"ocr_threshold": 0.9} and into.writes == (layout.PSEUDO_RUN,)


def test_every_section_writes_only_below_its_rerun_folder():
    for key in ("01", "02", "03", "04"):
        defaults = section_defaults(key)
        p = plan_run(key, {"seed": 5} if "seed" in defaults else {"example_pages": 1})
        assert p.name and all(w.startswith(f"data/reruns/{p.name}/") for w in p.writes)
        own = [k for k, w in run_folder_parameters(defaults).items() if w == key]
        assert all(p.params[k] != defaults[k] for k in own)
    # the run folders each section writes, read from the parameters cells (a test of the NN_ convention)
    assert {k: run_folder_parameters(section_defaults(k)) for k in ("02", "03", "04")} == {
        "02": {"run_dir": "02"}, "03": {"benchmark": "02", "bench_run": "03", "recorded_run": "03"},
        "04": {"eval_runs": "03"}}


def test_an_upstream_folder_is_the_reruns_own_only_when_the_rerun_ran_that_section():
    alone = plan_run("04", {"n_boot": 200})
    assert alone.upstream == {"eval_runs": "book"} and "eval_runs" not in alone.params  # reads the book's, says so
    chained = plan_run("04", {"n_boot": 200}, name="mine", done=("03",))
    assert chained.upstream == {"eval_runs": "rerun"}
    assert chained.params["eval_runs"] == ["data/reruns/mine/synth/03_evaluation",
                                           "data/reruns/mine/recorded/03_evaluation"]
    given = plan_run("03", {"benchmark": "data/datasets/mine"})
    assert given.upstream == {"benchmark": "given"} and given.params["benchmark"] == "data/datasets/mine"


def test_a_notebook_finds_the_same_folders_as_the_command_line():
    from inkground_lib.publish.rerun_plan import notebook_plan

    values = {**section_defaults("02"), "ocr_threshold": 0.9, "In": [], "Out": {}}  # a kernel's globals()
    assert notebook_plan("02", values).params["run_dir"] == plan_run("02", {"ocr_threshold": 0.9}).params["run_dir"]
    assert notebook_plan("02", section_defaults("02")).params["run_dir"] == layout.PSEUDO_RUN  # the book's own
    cli = plan_run("03", {"n_boot": 50}, name="x", done=("02",))  # what `inkground run` injects: kept as given
    assert notebook_plan("03", {**section_defaults("03"), **cli.params}).params["bench_run"] == cli.params["bench_run"]


def test_names_are_stable_and_safe():
    assert rerun_name("03", {"n_boot": 200, "seed": 1}) == rerun_name("03", {"seed": 1, "n_boot": 200})
    long = rerun_name("03", {"systems": ["reference", "skeleton", "tracer", "font", "box", "inksight"]})
    assert len(long) <= 57 and long.startswith("03_systems-reference,skeleton")
    path = rerun_name("02", {"ratings": "../x y/ratings.csv"})
    assert "/" not in path and " " not in path and ".." not in path
    assert rerun_name("02", {"ratings": "a/b.csv"}) != rerun_name("02", {"ratings": "a-b.csv"})  # lossy: digest
    for bad in ("", "../up", "a/b", ".hidden", "x" * 101):
        with pytest.raises(RerunError):
            check_name(bad)


# ------------------------------------------------------------------------------------------ the command

def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def test_run_with_a_changed_parameter_writes_its_own_folder_and_leaves_the_books_runs(rerun_repo, capsys):
    root, calls = rerun_repo
    assert main(["run", "02", "-p", "ocr_threshold", "0.9"]) == 0
    out, err = capsys.readouterr()
    assert calls == [("02", {"ocr_threshold": 0.9,
                             "run_dir": "data/reruns/02_ocr_threshold-0.9/synth/02_pseudo_labels"})]
    assert "rerun 02_ocr_threshold-0.9: section 02 writes into data/reruns/02_ocr_threshold-0.9/" in err
    assert not (root / "book").exists() and not (root / "data" / "runs").exists()  # the book's runs untouched
    nb = root / "data/reruns/02_ocr_threshold-0.9/sections/02_pseudo_labels.ipynb"
    assert nb.is_file() and f"executed: {nb}" in out
    rec = read_rerun("02_ocr_threshold-0.9")
    entry = rec["sections"]["02"]
    assert entry["changed"] == {"ocr_threshold": 0.9} and entry["parameters"]["run_dir"].startswith("data/reruns/")
    assert entry["notebook"] == "data/reruns/02_ocr_threshold-0.9/sections/02_pseudo_labels.ipynb"
    # the same command again: the same folder, reused
    assert main(["run", "02", "-p", "ocr_threshold", "0.9"]) == 0
    assert "unchanged, not re-executed" in capsys.readouterr().out and len(calls) == 1


def test_one_command_carries_a_rerun_of_02_through_03_and_04(rerun_repo, capsys):
    root, calls = rerun_repo
    assert main(["run", "02", "-p", "ocr_threshold", "0.9", "-p", "n_boot", "50", "--through", "04"]) == 0
    name = "02_n_boot-50_ocr_threshold-0.9"
    assert [k for k, _ in calls] == ["02", "03", "04"]
    p02, p03, p04 = (p for _, p in calls)
    assert p02 == {"ocr_threshold": 0.9, "run_dir": f"data/reruns/{name}/synth/02_pseudo_labels"}
    assert p03["benchmark"] == f"data/reruns/{name}/synth/02_pseudo_labels/benchmark" and p03["n_boot"] == 50
    assert p03["bench_run"] == f"data/reruns/{name}/synth/03_evaluation"
    assert p04["eval_runs"] == [f"data/reruns/{name}/synth/03_evaluation", f"data/reruns/{name}/recorded/03_evaluation"]
    rec = read_rerun(name)
    assert sorted(rec["sections"]) == ["02", "03", "04"]
    assert rec["sections"]["03"]["upstream"] == {"benchmark": "rerun"}
    assert not (root / "book").exists() and not (root / "data" / "runs").exists()


def test_a_section_alone_says_it_reads_the_books_upstream_run(rerun_repo, capsys):
    root, calls = rerun_repo
    (root / layout.BENCHMARK).mkdir(parents=True)
    (root / layout.BENCHMARK / "manifest.json").write_text("{}")
    assert main(["run", "03", "-p", "n_boot", "50", "-p", "systems", '["skeleton"]']) == 0
    assert "reads the book's benchmark" in capsys.readouterr().err
    assert read_rerun("03_n_boot-50_systems-skeleton")["sections"]["03"]["upstream"] == {"benchmark": "book"}


def test_defaults_and_into_book_write_the_books_runs(rerun_repo, capsys):
    root, calls = rerun_repo
    assert main(["run", "02"]) == 0
    assert calls[-1] == ("02", {}) and (root / "book/sections/02_pseudo_labels.ipynb").is_file()
    assert main(["run", "02", "-p", "ocr_threshold", "0.9", "--into-book"]) == 0
    err = capsys.readouterr().err
    assert calls[-1] == ("02", {"ocr_threshold": 0.9}) and "--into-book" in err
    assert not (root / layout.RERUNS).exists()


@pytest.fixture
def page_writers():
    """The modules of the pages make_book writes after the sections, imported before the stand-in root is set
    (they read the repository's files when imported)."""
    from inkground_lib.report import front, reproducibility, reviewers, tracer_page

    return front, reproducibility, reviewers, tracer_page


def test_make_book_after_into_book_executes_nothing(page_writers, rerun_repo, capsys, monkeypatch):
    """Issue 44: `inkground run ... --into-book` recorded another fingerprint than the one `make book` computes,
    so the next `make book` executed the section again (section 02: ~409 s twice). make_book itself, its
    datasets those of the stand-in repository, its pages and HTML left out."""
    from inkground_lib.publish import make_book, notebook_runner

    front, reproducibility, reviewers, tracer_page = page_writers
    root, calls = rerun_repo
    for run in layout.EVAL_RUNS:
        (root / run).mkdir(parents=True)
    (root / layout.BENCHMARK).mkdir(parents=True)
    (root / layout.BENCHMARK / "manifest.json").write_text("{}")
    monkeypatch.setattr(make_book, "ensure_datasets", lambda progress=True: {
        "synth": root / layout.SYNTH_DATASET, "recorded": root / layout.RECORDED_DATASET})
    for module, name in ((front, "write_default_front_page"), (reproducibility, "write_reproducibility_page"),
                         (reviewers, "write_default_reviewers_page"), (tracer_page, "write_tracer_page"),
                         (make_book, "write_pdf"), (notebook_runner, "build_book"), (make_book, "check_benchmark_size")):
        monkeypatch.setattr(module, name, lambda *a, **k: None)
    written = concurrent.futures.Future()
    written.set_result(None)
    monkeypatch.setattr(make_book, "write_downloads", lambda *a, **k: (None, written))  # no digest, archive written
    assert main(["run", "04", "-p", "n_boot", "200", "--into-book"]) == 0
    assert main(["run", "01"]) == 0
    assert main(["run", "02", "-p", "seed", "2", "--into-book"]) == 0
    assert [k for k, _ in calls] == ["04", "01", "02"]
    make_book.make_book(progress=False)
    assert [k for k, _ in calls] == ["04", "01", "02", "03"]  # only the section no command had run
    assert calls[-1][1] == {}
    make_book.make_book(progress=False)  # and the next one executes nothing
    assert len(calls) == 4
    nb = json.loads((root / "book/sections/04_tradeoffs.ipynb").read_text())
    assert nb["metadata"]["inkground"]["parameters"] == {"n_boot": 200}  # the book keeps the user's parameters


def test_make_book_reads_the_pages_inputs_once_and_builds_the_html_beside_the_pdf_check(page_writers, rerun_repo,
                                                                                          monkeypatch):
    """The reviewers' and front pages get one reading of the runs and datasets (the datasets as make book loaded
    them to hash them); the HTML build starts once the PDF is in place and the archive written (its pages link
    the downloads there are), while the PDF's pages are still being checked."""
    import threading

    from inkground_lib.publish import make_book, notebook_runner

    front, reproducibility, reviewers, tracer_page = page_writers
    root, _ = rerun_repo
    monkeypatch.setattr(make_book, "ensure_datasets", lambda progress=True: {"synth": root / layout.SYNTH_DATASET})
    def datasets_info(ds, loaded=None):  # as make book's: the datasets loaded to be hashed are kept in ``loaded``
        loaded.update({k: f"loaded {k}" for k in ds})
        return {k: {"hash": f"stand-in {k}"} for k in ds}
    monkeypatch.setattr(make_book, "datasets_info", datasets_info)
    monkeypatch.setattr(make_book, "run_book_section", lambda section, *a, **k: (root / f"{section.key}.ipynb", False))
    read, got = [], []
    monkeypatch.setattr(reviewers, "default_inputs", lambda r, loaded=(): read.append(list(loaded)) or {"runs": 1})
    monkeypatch.setattr(reviewers, "write_default_reviewers_page", lambda r, inputs=None, **k: got.append(inputs))
    monkeypatch.setattr(front, "write_default_front_page", lambda r, inputs=None: got.append(inputs))
    for module, name in ((reproducibility, "write_reproducibility_page"), (tracer_page, "write_tracer_page")):
        monkeypatch.setattr(module, name, lambda *a, **k: None)
    archive = threading.Event()
    monkeypatch.setattr(make_book, "write_downloads", lambda *a, **k: (
        None, make_book._in_thread(lambda: archive.set(), "archive")))
    html_started, seen = threading.Event(), {}

    def build_book(*a, **k):
        seen["pdf"], seen["archive"] = (make_book.html_dir() / "inkground.pdf").is_file(), archive.is_set()
        html_started.set()
        return "index"

    def write_pdf(when_written=None):
        make_book.html_dir().mkdir(parents=True, exist_ok=True)  # (write_downloads, left out, makes it)
        (make_book.html_dir() / "inkground.pdf").write_bytes(b"%PDF")
        when_written()
        seen["beside the check"] = html_started.wait(30)  # the page check would run here

    monkeypatch.setattr(notebook_runner, "build_book", build_book)
    monkeypatch.setattr(make_book, "write_pdf", write_pdf)
    assert make_book.make_book(progress=False) == "index"
    assert read == [["loaded synth"]] and got == [{"runs": 1}, {"runs": 1}]
    assert seen == {"pdf": True, "archive": True, "beside the check": True}


def test_a_run_that_reproduces_the_same_results_keeps_the_next_section_current(rerun_repo, capsys):
    """Issue 46: a default Run All of section 02 rewrote its stage timings into summary.json, which made the next
    `make book` execute sections 03 and 04 again. Here 03 with its defaults (the book's run, as make book runs
    it) and as a rerun reading the book's 02."""
    from inkground_lib.publish.make_book import earlier_outputs_hash

    root, calls = rerun_repo
    run02 = root / layout.PSEUDO_RUN
    (run02 / "benchmark").mkdir(parents=True)
    (run02 / "benchmark" / "manifest.json").write_text('{"pages": []}')
    (run02 / ".inkground-run.json").write_text('{"created_by": "pseudo"}')

    def summary(timings, pages=3):
        (run02 / "summary.json").write_text(json.dumps({"numbers": {"pages": pages}, "timings": timings,
                                                        "pages": [{"id": "p1", "seconds": timings["ocr"]}]}))
    summary({"ocr": 1.5})
    h = earlier_outputs_hash("03")
    for argv in (["run", "03"], ["run", "03", "-p", "n_boot", "50"]):
        assert main(argv) == 0
    summary({"ocr": 9.25})  # the same results at another speed
    (run02 / ".inkground-run.json").write_text('{"created_by": "run"}')  # bookkeeping, not a result
    assert earlier_outputs_hash("03") == h
    capsys.readouterr()
    for argv in (["run", "03"], ["run", "03", "-p", "n_boot", "50"]):
        assert main(argv) == 0
    assert len(calls) == 2 and capsys.readouterr().out.count("unchanged, not re-executed") == 2
    summary({"ocr": 9.25}, pages=4)  # other results: the book's 03 is executed again
    assert earlier_outputs_hash("03") != h
    assert main(["run", "03"]) == 0 and len(calls) == 3
    (run02 / "benchmark" / "manifest.json").write_text('{"pages": [], "x": 1}')  # what the rerun reads changed
    assert main(["run", "03", "-p", "n_boot", "50"]) == 0 and len(calls) == 4


@pytest.mark.parametrize("argv, message", [
    (["run", "03", "-p", "systems", '["nope"]'], "unknown system 'nope'; known systems: gemini-3.1-pro, "),
    (["run", "02", "-p", "raters_per_pair", "[1, 2, 3]"], "[1, 2, 3] is not a whole number >= 1 or a pair"),
    (["run", "02", "-p", "raters_per_pair", "[3, 2]"], "pair [min, max] with 1 <= min <= max"),
    (["run", "03", "-p", "ocr_engine", "easyocr"], "unknown OCR engine 'easyocr'; known OCR engines: deepseek-ocr"),
    (["run", "02", "-p", "ratings", "no-such.csv"], "parameter ratings: no file"),
    (["run", "02", "-p", "candidates", "data/datasets/none"], "parameter candidates: data/datasets/none holds no dataset"),
    (["run", "03", "-p", "n_boot", "50"], "parameter benchmark: data/runs/synth/02_pseudo_labels/benchmark holds no "
                                          "dataset (no manifest.json under"),
    (["run", "02", "-p", "nope", "1", "--through", "03"], "sections 02-03 have no parameter 'nope'"),
    (["run", "03", "--through", "02"], "--through 02: section 02 comes before 03"),
    # issue 44: an unknown derenderer was refused only inside the notebook, after its folder was made
    (["run", "02", "-p", "derenderer", "pencil"], "section 02: parameter derenderer: unknown derenderer 'pencil'; "
                                                  "known derenderers: skeleton, tracer[:<weights .npz>], "
                                                  "tracer-recognize[:<weights .npz>], tracer-no-text[:<weights .npz>], "
                                                  "inksight-small-p:<model folder>, inksight:<model folder>"),
    (["run", "02", "-p", "compare_derenderers", '["skeleton", "inksight-small-p"]'],
     "parameter compare_derenderers: unknown derenderer 'inksight-small-p'; known derenderers: skeleton"),
    # issue 46: a rerun never writes the book's runs, whatever the spelling of its run folder
    (["run", "02", "-p", "seed", "1", "-p", "run_dir", "data/runs/synth"],
     "would write into data/runs/synth, which is the book's run data/runs/synth/02_pseudo_labels"),
])
def test_bad_input_is_one_line_before_any_notebook_or_folder(rerun_repo, capsys, argv, message):
    root, calls = rerun_repo
    before = _tree(root)
    t0 = time.monotonic()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert calls == [] and _tree(root) == before  # nothing ran, nothing was created
    assert time.monotonic() - t0 < 20


def test_a_missing_recorded_set_says_how_to_skip_it(rerun_repo, capsys):
    root, calls = rerun_repo
    (root / layout.RECORDED_DATASET / "manifest.json").unlink()
    assert main(["run", "01", "-p", "example_pages", "1"]) == 2
    assert "-p recorded '\"\"' runs without it" in capsys.readouterr().err
    assert main(["run", "01", "-p", "example_pages", "1", "-p", "recorded", '""']) == 0


def test_a_held_lock_is_one_line_before_the_notebook_starts(rerun_repo, capsys):
    root, calls = rerun_repo
    with folder_lock(root / "data/reruns/02_seed-1/synth/02_pseudo_labels", "a test"):
        assert main(["run", "02", "-p", "seed", "1"]) == 2
    err = capsys.readouterr().err
    assert "is being written by another inkground command" in err and len(err.strip().splitlines()) == 1
    assert calls == []


def test_a_failed_notebook_is_one_line_not_the_papermill_traceback(rerun_repo, capsys, monkeypatch):
    import papermill
    from papermill.exceptions import PapermillExecutionError

    def fail(src, out, parameters=None, watch=None, **kw):
        watch.started(__import__("nbformat").read(src, as_version=4))
        raise PapermillExecutionError(3, 3, "run()", "FolderError", "data/x: another inkground command is writing "
                                      "this folder", ["Traceback", '  File "a.py", line 1', "FolderError: data/x: "
                                                      "another inkground command is writing this folder"])
    monkeypatch.setattr(papermill, "execute_notebook", fail)
    assert main(["run", "02", "-p", "seed", "2"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    # where it writes (and the stage's progress line when it takes a while), then the one error line
    assert lines[0].startswith("rerun 02_seed-2: ") and all(x.startswith("[inkground] ") for x in lines[1:-1])
    assert not any("Traceback" in x or "File " in x for x in lines)
    err = lines[-1]
    assert err.endswith("FolderError: data/x: another inkground command is writing this folder")
    assert "section 02 failed; the executed copy is kept at" in err


def test_a_name_reused_with_other_parameters_is_refused(rerun_repo, capsys):
    root, calls = rerun_repo
    assert main(["run", "02", "-p", "seed", "1", "--name", "mine"]) == 0
    assert main(["run", "02", "-p", "seed", "1", "--name", "mine"]) == 0  # the same: resumed / reused
    capsys.readouterr()
    assert main(["run", "02", "-p", "seed", "2", "--name", "mine"]) == 2
    assert 'rerun mine (data/reruns/mine) already holds section 02 run with {"seed": 1}' in capsys.readouterr().err
    assert json.loads((root / layout.RERUNS / "mine" / RERUN_RECORD).read_text())["sections"]["02"]["changed"] == \
        {"seed": 1}
    with pytest.raises(RerunError):
        check_name_free(plan_run("02", {"seed": 3}, name="mine"))


def test_run_help_lists_every_parameter_with_its_default_and_where_runs_write(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = capsys.readouterr().out
    for key in ("01", "02", "03", "04"):
        for name, default in section_defaults(key).items():
            assert f"      {name} = " in text, name
    assert 'ocr_threshold = 0.85' in text and "data/reruns/<name>/" in text and "--into-book" in text


def test_every_command_has_a_description_and_every_option_help(capsys):
    import argparse

    from inkground_lib.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    todo = list(sub.choices.items())
    while todo:
        name, p = todo.pop()
        assert p.description, name
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                todo += list(a.choices.items())
            elif a.option_strings and a.dest != "help":
                assert a.help, (name, a.option_strings)
    with pytest.raises(SystemExit):
        main(["--help"])
    top = capsys.readouterr().out
    assert "``" not in top and ":func:" not in top  # no reST markup
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.startswith("inkground 0.")


def test_a_torn_record_is_named_never_read_as_no_record(rerun_repo, capsys):
    """Issue 44: a torn rerun.json was read as no record, so a reused --name with other parameters ran and the
    earlier record was lost."""
    root, calls = rerun_repo
    assert main(["run", "02", "-p", "seed", "1", "--name", "mine"]) == 0
    record = root / layout.RERUNS / "mine" / RERUN_RECORD
    torn = record.read_bytes()[: len(record.read_bytes()) // 2]
    record.write_bytes(torn)
    capsys.readouterr()
    for seed in ("2", "1"):  # other parameters, and the same ones: the record is needed to tell
        assert main(["run", "02", "-p", "seed", seed, "--name", "mine"]) == 2
        err = capsys.readouterr().err
        assert f"{record}: the rerun's record is damaged: not valid JSON" in err and len(err.strip().splitlines()) == 1
    assert record.read_bytes() == torn and len(calls) == 1  # kept as it was; nothing ran
    with pytest.raises(RerunError, match="is not read as no record"):
        read_rerun("mine")
    record.write_text('["a list"]')
    with pytest.raises(RerunError, match="not a JSON object"):
        read_rerun("mine")


def test_one_writer_of_a_record_at_a_time(rerun_repo):
    """Sections finished by two processes at once (a command and a notebook) both stay in the record."""
    plans = [plan_run(k, {"seed": 5} if k != "01" else {"example_pages": 1}, name="both") for k in ("01", "02")]

    def write(plan):
        for _ in range(15):
            record_run(plan, True, source="inkground run", notebook=plan.notebook)
    threads = [threading.Thread(target=write, args=(p,)) for p in plans]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(read_rerun("both")["sections"]) == ["01", "02"]


def test_a_notebooks_rerun_record_under_a_link_to_nothing_is_named_not_file_exists(tmp_path):
    """Issue 44 (defect 11, the notebooks' side): papermill and JupyterLab reach the rerun's record through
    publish.rerun_record, whose folder made under a dangling data/reruns/<name> link failed with a bare 'File
    exists'."""
    from inkground_lib.core.rerun_folders import RerunError
    from inkground_lib.publish.rerun_record import _record_lock

    link = tmp_path / "reruns" / "02_seed-2"
    link.parent.mkdir()
    link.symlink_to(tmp_path / "gone")
    with pytest.raises(RerunError, match=f"{link} is a symbolic link to {tmp_path / 'gone'}, which does not exist"):
        with _record_lock(link / "sub"):
            pass
    assert not (tmp_path / "gone").exists()
