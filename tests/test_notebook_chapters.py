"""The four section notebooks as chapters (issue 47, after Project Pythia's notebook template): a Prerequisites
section after the overview, a "What's next?" section at the end, each step's key library call shown, the
plumbing removed. Reads the notebooks only (fast)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("0[1-4]_*.ipynb"))
HIDDEN = {"remove-cell", "remove-input", "hide-input"}
#: the one computation of each section, shown to the reader
KEY_CALLS = {"01": "statistics(ds)", "02": "run_pseudo_labels(", "03": "evaluate_section(", "04": "analyse("}
#: plumbing: the run's paths and record, the values glued into the prose
PLUMBING = ("start_run(", "finish_run(", "glue_all(")


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text("utf-8"))["cells"]


def text(cell: dict) -> str:
    return "".join(cell["source"])


def tags(cell: dict) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def test_four_notebooks():
    assert [p.name[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name[:2])
def test_prerequisites_follow_the_overview_and_whats_next_ends_the_page(path):
    cs = cells(path)
    assert text(cs[0]).startswith("# ") and "Overview" in text(cs[0])
    pre = text(cs[1])
    assert cs[1]["cell_type"] == "markdown" and pre.startswith("## Prerequisites\n")
    assert "| Concepts | Importance | Notes |" in pre and "**Time to run:**" in pre
    assert "parameters" in tags(cs[2])  # the parameters cell right after, as before
    shown = [c for c in cs if not (c["cell_type"] == "code" and tags(c) & {"remove-cell", "parameters"})]
    last = text(shown[-1])
    assert shown[-1]["cell_type"] == "markdown" and last.startswith("## What's next?\n")
    assert re.search(r"\{doc\}`[^`]+`", last)  # sends the reader to a page of the book


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name[:2])
def test_time_to_run_names_results_files_that_hold_the_times_and_types_none(path):
    """The times change with every measurement: the chapter names the results files that hold them (each exists
    and holds a section's seconds) and types no number itself (hand-written prose says only what no run
    changes)."""
    pre = text(cells(path)[1])
    line = pre.split("**Time to run:**", 1)[1].split("\n- **", 1)[0]
    files = re.findall(r"`(benchmarks/results/[\w.]+\.txt)`", line)
    assert "benchmarks/results/make_book.txt" in files, line
    for f in files:
        assert re.search(r"section 0\d\b.*\d+\.\d s", (ROOT / f).read_text("utf-8")), f
    assert not re.search(r"\d", re.sub(r"`[^`]*`", "", line)), line  # no number typed outside the file names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name[:2])
def test_key_code_is_shown_and_plumbing_is_removed(path):
    code = [c for c in cells(path) if c["cell_type"] == "code"]
    key = [c for c in code if KEY_CALLS[path.name[:2]] in text(c)]
    assert len(key) == 1 and not tags(key[0]) & HIDDEN, KEY_CALLS[path.name[:2]]
    for c in code:
        src = text(c)
        if "parameters" in tags(c):
            continue
        if src.startswith(("from ", "import ")) and "start_run" not in src:
            assert tags(c) == {"hide-input"}, src[:60]  # the imports: one click away
        elif any(p in src for p in PLUMBING) and not any(k in src for k in ("_view(", "fig_")):
            assert "remove-cell" in tags(c), src[:60]
    # a table or figure is made by one visible (or one click away) library call, none removed
    for c in code:
        if re.search(r"\b(?:table_view|fig_\w+|\w+_view|player_gallery|\w+_players)\(", text(c)):
            assert not tags(c) & {"remove-input", "remove-cell"}, text(c)[:60]
