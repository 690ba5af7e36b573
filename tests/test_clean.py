"""`make clean` removes what `make book` rebuilds and keeps what cost money, time or people's work and whatever
inkground did not write (issue 26, case 4: a test per case); `make clean-all` asks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import inkground_lib.publish.clean as cl
from inkground_lib.core.folders import FOREIGN_MARK, LOCK_FILE, RUN_MARK

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A repository root in tmp_path: clean's constants point there."""
    root = tmp_path / "repo"
    data = root / "data"
    monkeypatch.setattr(cl, "ROOT", root)
    monkeypatch.setattr(cl, "DATASETS_DIR", data / "datasets")
    monkeypatch.setattr(cl, "RUNS_DIR", data / "runs")
    generated = (root / "_build", root / "book" / "sections")
    rebuilt = tuple(root / p for p in ("data/datasets/synth", "data/datasets/recorded",
                                       "data/runs/synth/02_pseudo_labels", "data/runs/synth/03_evaluation",
                                       "data/runs/recorded/03_evaluation", "data/runs/eval", "data/runs/predict"))
    monkeypatch.setattr(cl, "GENERATED", generated)
    monkeypatch.setattr(cl, "REBUILT", rebuilt)
    monkeypatch.setattr(cl, "TARGETS", generated + rebuilt)
    return root


def write(root: Path, files: dict) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text if isinstance(text, str) else json.dumps(text))


def rec(adapter):
    return json.dumps({"schema": "inkground-prediction", "adapter": adapter, "status": "ok"}) + "\n"


def mark(by):
    return {"inkground": "run folder", "created_by": by}


def dataset(root: Path, rel: str) -> None:
    from conftest import make_tiny_dataset

    make_tiny_dataset(root / rel, pages=2, words=2)
    (root / rel / LOCK_FILE).write_text("")


def left(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def book_tree(root: Path) -> None:
    dataset(root, "data/datasets/synth")
    write(root, {
        "_build/html/index.html": "<html>", "book/sections/03.ipynb": "{}",
        "data/runs/synth/02_pseudo_labels/" + RUN_MARK: mark("pseudo"),
        "data/runs/synth/02_pseudo_labels/summary.json": "{}",
        "data/runs/synth/02_pseudo_labels/ratings.csv": "page,rater,score,source\np1,r1,10,simulated\n",
        "data/runs/synth/02_pseudo_labels/derender-skeleton.jsonl": "{}\n",
        "data/runs/synth/02_pseudo_labels/ocr-rapidocr.jsonl": "{}\n",
        "data/runs/synth/03_evaluation/" + RUN_MARK: mark("eval"),
        "data/runs/synth/03_evaluation/predictions/gemini-3.1-pro.jsonl": rec("openai"),
        "data/runs/synth/03_evaluation/predictions/gemini-3.1-pro.failures.jsonl": rec("openai"),
        "data/runs/synth/03_evaluation/predictions/gemini-3.1-pro.lock": "",
        "data/runs/synth/03_evaluation/predictions/skeleton.jsonl": rec("skeleton"),
        "data/runs/synth/03_evaluation/predictions/font.jsonl": rec("font"),
        "data/runs/synth/03_evaluation/scores-reference.csv": "system\n",
        "data/runs/synth/03_evaluation/style-reference/style_model.json": "{}",
        "data/runs/synth/03_evaluation/lab_ratings.csv": "page,rater,score,source\np1,ann,10,simulated\np1,bob,7,real\n",
    })
    dataset(root, "data/runs/synth/02_pseudo_labels/benchmark")


def test_clean_removes_what_make_book_rebuilds_and_keeps_api_predictions_and_real_ratings(repo):
    book_tree(repo)
    removed, kept = cl.clean()
    names = [p.relative_to(repo).as_posix() for p in kept]
    assert names == ["data/runs/synth/03_evaluation/predictions/gemini-3.1-pro.failures.jsonl",
                     "data/runs/synth/03_evaluation/predictions/gemini-3.1-pro.jsonl"]
    # lab_ratings.csv is no name inkground writes: kept as the user's, like any such file
    assert left(repo) == sorted(names + ["data/runs/synth/03_evaluation/lab_ratings.csv"])
    assert not (repo / "_build").exists() and not (repo / "data/datasets/synth").exists()
    assert not (repo / "data/runs/synth/02_pseudo_labels").exists()
    assert removed > 20


def test_the_logs_of_paid_or_slow_components_are_kept(repo):
    """DeepSeek-OCR's and InkSight's logs were deleted although the docstring promised to keep them."""
    write(repo, {
        "data/runs/synth/02_pseudo_labels/" + RUN_MARK: mark("pseudo"),
        "data/runs/synth/02_pseudo_labels/ocr-deepseek-ocr.jsonl": "{}\n",
        "data/runs/synth/02_pseudo_labels/derender-inksight-small-p.jsonl": "{}\n",
        "data/runs/synth/02_pseudo_labels/derender-skeleton.jsonl": "{}\n",
        "data/runs/synth/02_pseudo_labels/ocr-rapidocr.jsonl": "{}\n",
        "data/runs/synth/03_evaluation/" + RUN_MARK: mark("eval"),
        "data/runs/synth/03_evaluation/ocr-renders-deepseek-ocr.jsonl": "{}\n",
        "data/runs/synth/03_evaluation/ocr-renders-rapidocr.jsonl": "{}\n",
        "data/runs/synth/03_evaluation/predictions/inksight.jsonl": rec("inksight"),
    })
    cl.clean()
    assert left(repo) == ["data/runs/synth/02_pseudo_labels/derender-inksight-small-p.jsonl",
                          "data/runs/synth/02_pseudo_labels/ocr-deepseek-ocr.jsonl",
                          "data/runs/synth/03_evaluation/ocr-renders-deepseek-ocr.jsonl",
                          "data/runs/synth/03_evaluation/predictions/inksight.jsonl"]


def test_a_paper_scale_run_is_kept(repo):
    """The Makefile's default paper-scale folder (data/runs/paper_scale, hours of work) was deleted; so would one
    written at a folder make clean cleans."""
    write(repo, {"data/runs/paper_scale/" + RUN_MARK: mark("paper-scale"),
                 "data/runs/paper_scale/stages.json": "{}",
                 "data/runs/paper_scale/eval/predictions/skeleton.jsonl": rec("skeleton"),
                 "data/runs/eval/" + RUN_MARK: mark("paper-scale"),
                 "data/runs/eval/stages.json": "{}"})
    before = left(repo)
    cl.clean()
    assert left(repo) == before


def test_a_folder_marked_foreign_is_kept_whole(repo):
    """A user's notes.txt in a folder an --overwrite marked as not inkground's was deleted."""
    write(repo, {"data/runs/eval/" + FOREIGN_MARK: {"inkground": "foreign"},
                 "data/runs/eval/" + RUN_MARK: mark("eval"),
                 "data/runs/eval/notes.txt": "mine",
                 "data/runs/eval/scores-reference.csv": "system\n"})
    before = left(repo)
    _, _, whole = cl.plan_clean()
    assert [(p.relative_to(repo).as_posix(), why) for p, why in whole] == [("data/runs/eval", "foreign")]
    cl.clean()
    assert left(repo) == before


def test_folders_make_book_does_not_build_are_not_touched(repo):
    """data/datasets/iamondb (the README's own output path) was deleted."""
    dataset(repo, "data/datasets/iamondb")
    dataset(repo, "data/datasets/big")
    write(repo, {"data/runs/mine/" + RUN_MARK: mark("eval"), "data/runs/mine/scores-reference.csv": "s\n"})
    before = left(repo)
    cl.clean()
    assert left(repo) == before


def test_a_paid_cache_renamed_as_advised_is_kept(repo):
    """'move the file away to start over': a renamed paid cache was deleted."""
    write(repo, {"data/runs/eval/" + RUN_MARK: mark("eval"),
                 "data/runs/eval/predictions/gemini.jsonl.corrupt": rec("openai"),
                 "data/runs/eval/predictions/gemini-old.jsonl": rec("openai"),
                 "data/runs/eval/predictions/gemini.jsonl.bak": rec("skeleton")})
    cl.clean()
    assert left(repo) == ["data/runs/eval/predictions/gemini-old.jsonl",
                          "data/runs/eval/predictions/gemini.jsonl.bak",
                          "data/runs/eval/predictions/gemini.jsonl.corrupt"]


def test_files_and_folders_inkground_did_not_write_are_kept(repo):
    dataset(repo, "data/datasets/synth")
    write(repo, {"data/datasets/synth/notes.txt": "mine", "data/datasets/synth/pages/my-photo.jpg": "jpeg",
                 "data/runs/eval/" + RUN_MARK: mark("eval"), "data/runs/eval/draft.md": "mine",
                 "data/runs/eval/predictions/box.jsonl": rec("box"),
                 "data/runs/predict/todo.txt": "no mark, no dataset: not inkground's"})
    cl.clean()
    assert left(repo) == ["data/datasets/synth/notes.txt", "data/datasets/synth/pages/my-photo.jpg",
                          "data/runs/eval/draft.md", "data/runs/predict/todo.txt"]


def test_links_are_not_followed(repo, tmp_path):
    outside = tmp_path / "outside"
    write(outside, {"p0000.jpg": "someone's photo"})
    dataset(repo, "data/datasets/synth")
    (repo / "data/datasets/synth/pages/linked").symlink_to(outside, target_is_directory=True)
    cl.clean()
    assert (outside / "p0000.jpg").read_text() == "someone's photo"


def test_clean_all_asks_and_refuses_without_a_terminal(repo, monkeypatch, capsys):
    book_tree(repo)
    monkeypatch.setattr(sys, "stdin", open("/dev/null"))
    assert cl.main(["--all"]) == 1
    assert "would also remove 2 file(s)" in capsys.readouterr().out
    assert (repo / "data/runs/synth/02_pseudo_labels/summary.json").exists()  # nothing removed
    monkeypatch.setattr(sys, "stdin", type("Tty", (), {"isatty": lambda self: True})())
    monkeypatch.setattr("builtins.input", lambda prompt: "no")
    assert cl.main(["--all"]) == 1
    assert (repo / "data/runs/synth/03_evaluation/predictions/gemini-3.1-pro.jsonl").exists()
    assert cl.main(["--all", "--yes"]) == 0
    assert left(repo) == ["data/runs/synth/03_evaluation/lab_ratings.csv"]  # the user's file, still


def test_the_patterns_name_every_file_a_run_writes():
    """clean's and --overwrite's patterns agree with run_files' names (one list, tested against the functions)."""
    from inkground_lib.core import run_files as rf

    names = [rf.pseudo_summary_json("").name, rf.pages_csv("").name, rf.words_csv("").name, rf.funnel_csv("").name,
             rf.ratings_csv("").name, rf.derender_jsonl("", "skeleton").name, rf.ocr_jsonl("", "rapidocr").name,
             rf.benchmark_dir("").name, rf.traces_jsonl("").name, rf.scores_csv("", "true").name, rf.summary_csv("", "true").name,
             rf.facts_json("", "true").name, rf.render_ocr_jsonl("", "rapidocr").name, rf.both_sides_json("").name,
             f"{rf.PREDICTIONS_DIR}/{rf.predictions_jsonl('', 'x').name}", rf.style_dir("", "true").name + "/f"]
    for n in names:
        assert cl._matches(n, rf.RUN_PATTERNS), n
    assert not cl._matches("notes.txt", rf.RUN_PATTERNS)


def test_clean_runs_with_the_system_python_outside_the_venv():
    """`make clean` runs with $(PYTHON) (no numpy needed): importing the module must not pull the library."""
    code = ("import sys, inkground_lib.publish.clean as c; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'pandas')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
