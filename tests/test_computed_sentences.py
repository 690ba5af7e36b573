"""Issue 34: the book says only what its runs show.

* Hand-written Markdown in the notebooks names no registered system, derenderer or OCR engine (except beside
  its citation) and holds no number outside a short allow-list: everything a run can change is glued.
* Section 02 run with each derenderer, and section 03 with two different system lists: every computed sentence
  agrees with that run's own records (the benchmark's manifest says which derenderer made the references, the
  run's facts say which systems ran and which could not).
"""
import ast
import json
import re
from pathlib import Path

import pytest

from inkground_lib.core.layout import ROOT
from inkground_lib.evaluation.systems.registry import load_registry

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# names a run can change: local systems (registry entries the paper does not report), derenderers, OCR engines
RUN_NAMES = r"(?i)\b(skeleton|tracer|font baseline|box baseline|reference ink|rapidocr|tesseract)\b"
# numbers hand-written Markdown may hold: section and table numbers, the 95% interval level and the paper's
# rating scale (0 to 10); every other number is glued from a run or from data/paper/reported.csv
ALLOWED_NUMBERS = {"0", "1", "2", "3", "4", "10", "95"}


def _markdown(nb: Path) -> list[tuple[int, str]]:
    cells = json.loads(nb.read_text("utf-8"))["cells"]
    return [(i, "".join(c["source"])) for i, c in enumerate(cells) if c["cell_type"] == "markdown"]


def _hand_written(text: str) -> str:
    """The Markdown as typed: glued values, roles (a citation, a term, a reference) and math taken out; a name
    right before its citation is a citation of that work, not a statement about a run."""
    text = re.sub(r"[\w-]+(?:\s[\w-]+)?\s\{cite\}`[^`]*`", " ", text)
    return re.sub(r"\{(?:glue:text|cite|term|ref|doc)\}`[^`]*`|\$[^$]*\$", " ", text)


def test_the_patterns_catch_what_they_are_for():
    assert re.search(RUN_NAMES, _hand_written("The skeleton derenderer made the pseudo-labels"))
    assert not re.search(RUN_NAMES, _hand_written("RapidOCR {cite}`rapidocr` and {glue:text}`s03_x`"))
    assert re.findall(r"(?<![\w.-])\d[\d,.]*\d|(?<![\w.-])\d", _hand_written("chooses among 537 pages")) == ["537"]


def test_hand_written_markdown_names_no_component_and_types_no_number():
    registry = load_registry()
    local = {k for k, v in registry.items() if not v.get("reported_as")}
    assert {"skeleton", "tracer", "font", "box", "reference"} <= local  # the pattern covers the local systems
    problems = []
    for nb in NOTEBOOKS:
        for i, text in _markdown(nb):
            typed = _hand_written(text)
            problems += [f"{nb.name} cell {i}: names {m.group(0)!r}" for m in re.finditer(RUN_NAMES, typed)]
            for num in re.findall(r"(?<![\w.-])\d[\d,.]*\d|(?<![\w.-])\d", typed):
                if num.rstrip(".,") not in ALLOWED_NUMBERS:
                    problems.append(f"{nb.name} cell {i}: types the number {num!r}")
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------------- sections run, sentences checked

def glued(nb: Path) -> dict:
    """{name: text} of every value an executed notebook glued (myst-nb's ``scrapbook`` metadata)."""
    out = {}
    for c in json.loads(nb.read_text("utf-8"))["cells"]:
        for o in c.get("outputs", []):
            name = (o.get("metadata") or {}).get("scrapbook", {}).get("name")
            if name:  # display=False glues under a prefixed mime type; text/plain is the value's repr
                text = next((v for k, v in o.get("data", {}).items() if k.endswith("text/plain")), "")
                text = "".join(text) if isinstance(text, list) else text
                try:
                    out[name] = str(ast.literal_eval(text))
                except (ValueError, SyntaxError):
                    out[name] = text
    return out


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from inkground_lib.datasets.synth.generate import SynthParams, generate
    from inkground_lib.core.dataset import load_dataset

    tmp = tmp_path_factory.mktemp("sentences")
    ds_dir = generate(tmp / "ds", SynthParams(pages=2, words_min=3, words_max=5, words_mean=4, width=600,
                                              height=800), progress=False)
    ds = load_dataset(ds_dir)
    ratings = tmp / "ratings.csv"  # every page kept once it passes the OCR filter
    ratings.write_text("page,rater,score\n" + "".join(f"{p.id},r{k},10\n" for p in ds.pages for k in (1, 2)))
    return tmp, ds_dir, ratings


def _run_02(tiny, derenderer: str) -> tuple[Path, Path]:
    from inkground_lib.publish.notebook_runner import run_section

    tmp, ds_dir, ratings = tiny
    run_dir = tmp / f"run02-{derenderer}"
    path, ran = run_section("02", {"candidates": str(ds_dir), "run_dir": str(run_dir), "derenderer": derenderer,
                                   "compare_derenderers": [derenderer], "recorded": "", "ratings": str(ratings),
                                   "ocr_threshold": 0.0}, out_dir=tmp / f"sections-02-{derenderer}")
    assert ran
    return path, run_dir


@pytest.mark.slow  # executes section 02 twice on a two-page book
@pytest.mark.parametrize("derenderer", ["skeleton", "tracer"])
def test_section_02_names_the_derenderer_its_run_used(tiny, derenderer):
    from inkground_lib.report.prose import DERENDERER_TEXT

    path, run_dir = _run_02(tiny, derenderer)
    g = glued(path)
    summary = json.loads((run_dir / "summary.json").read_text())
    manifest = json.loads((run_dir / "benchmark" / "manifest.json").read_text())
    used = summary["components"]["derenderer"]
    assert used == manifest["meta"]["derenderer"] == derenderer
    other = ({"skeleton", "tracer"} - {used}).pop()
    # the mode by its one displayed name ("tracer": the tracer given the word's true text), then what it is
    assert g["s02_derenderer_text"] == DERENDERER_TEXT[used] and g["s02_derenderer_text"].startswith(used)
    assert g["s02_derenderers_compared_text"].startswith("This run compares 1 derenderer that run")
    assert DERENDERER_TEXT[used] in g["s02_derenderers_compared_text"]
    assert DERENDERER_TEXT[other] not in g["s02_derenderers_compared_text"]
    assert f"the {used} derenderer" in g["s02_stands_in_text"] or used in g["s02_stands_in_text"]


@pytest.mark.slow  # executes section 02 once and section 03 twice on a two-page book
@pytest.mark.parametrize("systems", [["reference", "skeleton", "font", "box"], ["skeleton", "font", "tracer"]])
def test_section_03_sentences_follow_its_run(tiny, systems):
    from inkground_lib.publish.notebook_runner import run_section
    from inkground_lib.report.prose import system_label

    tmp, _, _ = tiny
    run02 = tmp / "run02-tracer"
    if not (run02 / "benchmark" / "manifest.json").is_file():
        _run_02(tiny, "tracer")
    tag = "-".join(systems)
    path, ran = run_section("03", {"benchmark": str(run02 / "benchmark"), "recorded": "",
                                   "bench_run": str(tmp / f"run03-{tag}"), "recorded_run": str(tmp / f"rec03-{tag}"),
                                   "systems": systems, "n_boot": 20}, out_dir=tmp / f"sections-03-{tag}")
    assert ran
    g = glued(path)
    facts = json.loads((tmp / f"run03-{tag}" / "facts-reference.json").read_text())
    maker = json.loads((run02 / "benchmark" / "manifest.json").read_text())["meta"]["derenderer"]
    not_run = set(facts.get("unavailable", {}))
    ran_systems = [s for s in systems if s not in not_run and s != "reference"]
    registry = load_registry()
    stands = g["s03_stands_in_text"]
    n = len(ran_systems)
    assert stands.startswith(f"{n} system{'s' if n != 1 else ''} ran here")
    assert ("besides the reference ink" in stands) == ("reference" in systems)
    for s in registry:
        if s in ran_systems:
            assert system_label(s, registry) in stands, s
        elif s not in not_run:
            assert system_label(s, registry) not in stands, f"{s} did not run, yet is named"
    # the derenderer that made the labels, from the benchmark's manifest, never a typed name
    row = g["s03_maker_row_text"]
    assert row.startswith(f"The pseudo-labels were made by {maker}")
    assert ("no system of this run runs that derenderer" in row) == (maker not in systems)
    assert "by construction" not in row
    assert g["s03_both_sides_a"] == f"the {maker} derenderer"
    assert ("box baseline" in g["s03_baselines_ar_text"]) == ("box" in ran_systems)
    assert ("font baseline" in g["s03_baselines_ar_text"]) == ("font" in ran_systems)
    assert g["s03_summary_text"].startswith(f"{n} system{'s' if n != 1 else ''} ran here")
    left_out = g["s03_gallery_left_out_text"]
    assert ("Reference ink" in left_out) == ("reference" in systems)
    # issue 45: the run renders whole, whatever systems it was given: no glued sentence or number says nan, and no
    # table is empty (Table 3.2 with every system run is one sentence instead)
    nan = re.compile(r"\b(?:nan|NaN|None)\b")
    sentences = {k: v for k, v in g.items() if " " in v}  # glued numbers are checked where the prose shows them
    assert not [k for k, v in sentences.items() if nan.search(v)], sentences
    nb = json.loads(path.read_text("utf-8"))
    shown_numbers = {m.group(1) for c in nb["cells"] if c["cell_type"] == "markdown"
                     for m in re.finditer(r"\{glue:text\}`(\w+):[^`]+`", "".join(c["source"]))}
    assert shown_numbers and all(g[k] not in ("nan", "") for k in shown_numbers)
    for c in nb["cells"]:
        for o in c.get("outputs", []):
            html = "".join(o.get("data", {}).get("text/html", ""))
            if "<table" in html:
                assert "<td" in html, "an empty table"
    if not not_run:
        assert any("Table 3.2: none. Every system named in `systems` ran here." in "".join(o.get("data", {}).get(
            "text/markdown", "")) for c in nb["cells"] for o in c.get("outputs", []))
