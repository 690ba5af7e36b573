"""Issue 45: the book a reader trusts at a glance.

* Every comparative sentence is computed from the numbers it compares, at the precision shown, ties said as ties:
  section 02's choice of derenderer (the issue's 0.094 against 0.094), section 03's row of the system whose
  network made the references (counted, never "identical by construction"), the tracer page's writers (36
  evaluated on, 46 held out: never "82 this book evaluates on"), the front page's links (no section that does not
  exist).
* One displayed name per derenderer mode (tracer-recognize, tracer, tracer-no-text) on every page.
* A section-03 run of a subset of systems renders whole: no "nan" in a sentence, no empty table.
* A status that cannot fail is not called a measurement.
* The results archive is anchored: its manifest's sha256 on the reviewers' page, and the page's command, which
  needs only Python's standard library, refuses a tampered file and a tampered manifest.
"""
import hashlib
import itertools
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace as NS

import pandas as pd
import pytest

from inkground_lib.core.layout import ROOT

NAN_WORD = re.compile(r"\b(?:nan|NaN|None)\b")


# ----------------------------------------------------------------------------------- section 02: ties are ties

def _cmp(values: dict[str, dict[str, float]]) -> pd.DataFrame:
    """A comparison table: {set: {derenderer: median DTW}}."""
    return pd.DataFrame([{"set": s, "derenderer": d, "dtw_median": v, "words": 10, "pages": 2}
                         for s, by in values.items() for d, v in by.items()])


def test_the_issues_tie_is_said_as_a_tie_never_closer():
    from inkground_lib.report.derenderer_table import choice_text, closest_derenderer

    # Table 2.3 of the issue: 0.094 against 0.094 and 0.059 against 0.059 (the raw values differ below the print)
    cmp = _cmp({"candidate pages": {"skeleton": 0.1206, "tracer-recognize": 0.09391, "tracer": 0.09372},
                "recorded pages": {"skeleton": 0.1069, "tracer-recognize": 0.05912, "tracer": 0.05888}})
    text = choice_text(cmp, "tracer-recognize")
    assert "closer" not in text.split(": no derenderer")[0]
    assert "on the candidate pages, a tie at 0.094 between the tracer-recognize and tracer" in text
    assert "on the recorded pages, a tie at 0.059 between the tracer-recognize and tracer" in text
    assert text.endswith("no derenderer compared here is closer to the truth than the tracer-recognize on any set")
    assert closest_derenderer(cmp) is None  # a tie has no single closest derenderer


@pytest.mark.parametrize("a,b", list(itertools.product([0.0931, 0.0938, 0.0944, 0.0951], repeat=2)))
def test_the_choice_sentence_follows_the_shown_values(a, b):
    """Whatever the values, the sentence says "closer" exactly where the other derenderer's value, as Table 2.3
    prints it, is below the used one's on that set, and names a tie exactly where the printed values are equal."""
    from inkground_lib.report.derenderer_table import choice_text

    cmp = _cmp({"set A": {"skeleton": 0.12, "tracer-recognize": a, "tracer": b}})
    text = choice_text(cmp, "tracer-recognize")
    sa, sb = f"{a:.3f}", f"{b:.3f}"
    if sa == sb:
        assert f"a tie at {sa} between the tracer-recognize and tracer" in text
        assert "no derenderer compared here is closer" in text
    elif float(sb) < float(sa):
        assert f"the tracer alone ({sb})" in text
        assert f"closer than the tracer-recognize on every set compared: the set A (tracer {sb} against {sa})" in text
    else:
        assert f"the tracer-recognize alone ({sa})" in text and "no derenderer compared here is closer" in text


def test_a_ratio_sentence_never_calls_equal_shown_values_lower():
    from inkground_lib.report.derenderer_table import comparison_sentences

    cmp = _cmp({"s": {"skeleton": 0.0942, "tracer": 0.0938}})
    cmp["order_differs"] = [0.30, 0.20]
    for k, (lo, hi) in {"dtw_median_ratio": (0.98, 0.999), "order_differs_ratio": (0.5, 0.8)}.items():
        cmp.loc[1, k], cmp.loc[1, k + "_lo"], cmp.loc[1, k + "_hi"] = (lo + hi) / 2, lo, hi
    s = comparison_sentences(cmp)[0]
    dtw, order = s.split("; its ")
    assert "is 0.094 against the skeleton's 0.094" in dtw and "(the same as shown: the paired interval lies below 1)" in dtw
    assert "lower" not in dtw
    assert "is 0.200 against the skeleton's 0.300" in order and "(lower, the interval below 1)" in order


# -------------------------------------------------------------- section 03: the row of the references' maker

def _bench(dtws: list[float], system="tracer"):
    scores = pd.DataFrame({"system": [system] * len(dtws), "dtw": dtws})
    summary = pd.DataFrame({"system": [system], "label": ["inkground tracer"], "dtw": [sum(dtws) / len(dtws)]})
    return NS(summary=summary, scores=scores)


def test_the_makers_row_is_counted_from_the_scores_never_identical_by_construction():
    from inkground_lib.report.prose import maker_row_text

    dtws = [0.0] * 2534 + [0.408, 0.2, 0.1, 0.05, 0.01, 0.0006]  # the issue's case: 6 of 2,540 words differ
    bench = _bench(dtws)
    true = NS(summary=pd.DataFrame({"system": ["tracer"], "dtw": [0.0941]}))
    text = maker_row_text(bench, true, "tracer-recognize", registry={})
    assert "by construction" not in text and "identical" not in text
    n_same = sum(round(d, 3) == 0 for d in dtws)
    assert f"on {n_same:,} of {len(dtws):,} words and differs on {len(dtws) - n_same:,} (DTW up to 0.408)" in text
    assert f"the row's mean DTW of {sum(dtws) / len(dtws):.3f}" in text
    assert "runs the same network given the word's true text, so it is scored against labels its own network made" in text
    assert "not tracing" in text and "score 0.094 (Table 2a)" in text
    same = maker_row_text(_bench([0.0, 0.0, 0.0], "skeleton"), None, "skeleton", registry={})
    assert "on all 3 words" in same and "labels it made itself" in same
    assert "no system of this run runs that derenderer" in maker_row_text(_bench([0.1], "font"), None, "skeleton")


def test_table_1_names_the_row_whose_network_made_the_references():
    from inkground_lib.report.tables import results_view

    summary = pd.DataFrame([{"system": s, "label": s.title(), "n_words": 3, "n_valid": 3, "dtw": v, "chamfer": v,
                             "ar": 0.5, "cr": 0.5, "style": 0.1, "valid_rate": 1.0}
                            for s, v in (("tracer", 0.0001), ("font", 0.2))])
    view = results_view(summary, None, "Table 1: x", made_references="tracer-recognize")
    labels = list(view.data["system"] if "system" in view.data.columns else view.data.index)
    assert "Tracer (its network made these references, as tracer-recognize)" in labels and "Font" in labels
    assert any("not how well it traces" in n for n in view.notes)
    plain = results_view(summary, None, "Table 1: x")
    assert "Tracer" in list(plain.data["system"] if "system" in plain.data.columns else plain.data.index)


# -------------------------------------------------------------------------------- the tracer page's writers

def test_the_tracer_page_says_which_left_out_writers_the_book_evaluates_on():
    from inkground_lib.components.derenderers.tracer.eval_writers import read_eval_writers
    from inkground_lib.components.derenderers.tracer.weights import SHIPPED_WEIGHTS, read_npz
    from inkground_lib.report.tracer_page import eval_writer_groups, record_text

    groups = eval_writer_groups()
    # the "shipped" group is exactly the writers of the recorded pages the book evaluates on
    samples = json.loads((ROOT / "data" / "unipen_cursive" / "unipen_cursive_dev.json").read_text())["samples"]
    assert read_eval_writers(group="shipped") == {s["writer_id"] for s in samples}
    record, _ = read_npz(SHIPPED_WEIGHTS)
    left = record["trained_on"]["eval_writers_excluded"]
    text = record_text(record, "", groups)
    assert "writers this book evaluates on were left out" not in text
    assert sum(groups.values()) == left
    assert (f"the {left} writers of the list no model trains on were left out" in text and
            f"the {groups['shipped']} writers of the recorded pages this book evaluates on and "
            f"{groups['held-out']} writers held out" in text)
    # a list that does not add up to the record's count: no split is claimed to be the record's
    other = record_text(record, "", {"shipped": groups["shipped"], "held-out": groups["held-out"] + 1})
    assert "so the tracer never saw any of them" not in other and "the list holds" in other


# -------------------------------------------------------------------- one displayed name per derenderer mode

RECOGNIZE = {"components": {"derenderer": "tracer", "derenderer_text": "the OCR reading of the word's crop",
                            "ocr_engine": "rapidocr", "ratings_source": "simulated"},
             "params": {"derenderer": "tracer", "derenderer_text_mode": "recognize", "candidates": "data/datasets/x"},
             "numbers": {"candidates": 172, "words": 5767, "ocr_pass_pages": 158, "ocr_threshold": 0.85,
                         "ocr_pass_rate": 0.919, "benchmark_pages": 107, "benchmark_share": 0.622,
                         "word_dtw_median": 0.0938, "rater_agreement": 0.777, "rater_alpha": 0.5, "ratings": 316}}


def _root(tmp: Path) -> Path:
    """A repository-like folder with the paper's numbers, a config, a licence and a citation (no runs)."""
    import shutil

    shutil.copytree(ROOT / "data" / "paper", tmp / "data" / "paper")
    (tmp / "_config.yml").write_text("title: x\n")
    (tmp / "LICENSE").write_text("MIT License\n")
    shutil.copy(ROOT / "CITATION.cff", tmp / "CITATION.cff")
    run = tmp / "run02"
    run.mkdir()
    (run / "summary.json").write_text(json.dumps(RECOGNIZE))
    return tmp


def test_every_page_names_the_tracer_given_the_ocr_reading_tracer_recognize(tmp_path):
    from inkground_lib.analysis.claims import load_claims
    from inkground_lib.core.paper import paper_numbers
    from inkground_lib.evaluation.systems.registry import load_registry
    from inkground_lib.report.derenderer_table import derenderer_label
    from inkground_lib.report.front import front_page
    from inkground_lib.report.front_numbers import front_page_numbers
    from inkground_lib.report.prose import DERENDERER_TEXT
    from inkground_lib.report.pseudo_labels import stands_in_text
    from inkground_lib.report.reviewers import reviewers_page

    root = _root(tmp_path)
    front = front_page(front_page_numbers(root, eval_runs=[], pseudo_run=root / "run02",
                                          registry=load_registry(use_env=False)))
    assert "`tracer-recognize`" in front and "`tracer`" not in front
    reported = paper_numbers()
    rev = reviewers_page(load_claims(reported=reported), reported, [], RECOGNIZE)
    assert "derenderer `tracer-recognize`" in rev and "derenderer tracer," not in rev
    res = NS(components=RECOGNIZE["components"], params={**RECOGNIZE["params"], "rater_model": {"chamfer_tol": 0.1}},
             has_truth=True)
    assert "the tracer-recognize derenderer in place of InkSight Small-p" in stands_in_text(res)
    for mode in ("skeleton", "tracer-recognize", "tracer"):  # the displayed name first, then what it is
        assert DERENDERER_TEXT[mode].startswith(mode) and derenderer_label(mode).startswith(mode + " (")


def test_a_benchmarks_maker_is_read_as_its_mode():
    from inkground_lib.report.prose import both_sides_names, labels_maker

    ds = NS(meta={"derenderer": "tracer", "derenderer_config": {"settings": {"text_mode": "recognize"}}})
    assert labels_maker(ds) == "tracer-recognize"
    assert both_sides_names(labels_maker(ds))["a"] == "the tracer-recognize derenderer"
    assert labels_maker(NS(meta={"derenderer": "skeleton", "derenderer_config": {"settings": {}}})) == "skeleton"


# ------------------------------------------------------------------------------------------ the front page

def test_the_front_page_links_only_to_what_exists_and_opens_with_our_numbers(tmp_path):
    from inkground_lib.evaluation.systems.registry import load_registry
    from inkground_lib.report.front import front_page
    from inkground_lib.report.front_numbers import front_page_numbers

    root = _root(tmp_path)
    text = front_page(front_page_numbers(root, eval_runs=[], pseudo_run=root / "run02",
                                         registry=load_registry(use_env=False)))
    headings = set(re.findall(r"^#+ (.+)$", text, flags=re.M))
    for ref in re.findall(r"(?:under|in|see) \*([^*]+)\* (?:above|below)", text):
        assert ref in headings, f"the front page sends the reader to *{ref}*, which it does not have"
    assert "At a glance" not in text
    glance = text.split("-->", 1)[1].split("## ", 1)[0]
    assert glance.index("**Our numbers beside the paper's:**") < glance.index("**Ran here")  # second, after the claims
    ours = re.search(r"\*\*Our numbers beside the paper's:\*\*[^\n]*", glance).group(0)
    assert "172 → 158 → 107 here (2,984 → 777 → 537 in the paper)" in ours
    assert "0.777 of the pairs rated at least twice (paper 0.817)" in ours and "0.094 word heights" in ours
    assert "**Found here:**" in glance and "?" not in glance.split("**Found here:**", 1)[1].split("**This build**")[0]


# --------------------------------------------------------------------- section 03: a subset of systems renders

def test_a_run_without_the_reference_ink_says_so_and_shows_no_nan():
    from inkground_lib.report.prose import reference_true_text
    from inkground_lib.report.tables import unavailable_view

    without = NS(summary=pd.DataFrame({"system": ["skeleton"], "dtw": [0.2]}))
    for text in (reference_true_text(without), reference_true_text(None)):
        assert not NAN_WORD.search(text) and "no row of Table 2a" in text
    assert "(mean DTW 0.123)" in reference_true_text(NS(summary=pd.DataFrame({"system": ["reference"], "dtw": [0.1234]})))
    empty = unavailable_view({}, "Table 3.2: systems that could not run")
    assert empty.data == "*Table 3.2: none. Every system named in `systems` ran here.*"
    shown = unavailable_view({"kimi-k3": "needs MOONSHOT_API_KEY"}, "Table 3.2: systems that could not run")
    assert list(shown.data["system"]) == ["kimi-k3"]


# -------------------------------------------------------------------------------------------------- statuses

def test_a_status_that_cannot_fail_is_not_called_a_measurement():
    from inkground_lib.analysis.claims import STAND_IN, STATUS_RULES
    from inkground_lib.analysis.origins import SETTING, dataset_origins

    assert "measured" not in STAND_IN and "cannot fail" in STATUS_RULES[STAND_IN]
    # points per stroke of synthetic pages follow from the generator's resampling step: set, not measured
    assert dataset_origins("synth", {"params": {}})["points_per_stroke_mean"].kind == SETTING
    assert dataset_origins("recorded", {"params": {}})["points_per_stroke_mean"].counts


def test_a_claim_decided_by_the_papers_numbers_shows_ours_as_beside_it():
    from inkground_lib.analysis.claims import CONSISTENT, STAND_IN, Measurement
    from inkground_lib.report.reviewers import _ours_summary

    here = [Measurement(STAND_IN, "rater agreement 0.777")]
    assert _ours_summary(here, CONSISTENT) == ("1 measured, shown beside (the status comes from the paper's own "
                                               "numbers)")
    assert _ours_summary(here, STAND_IN) == "1 measured"


# ------------------------------------------------------------------------------------ the archive, anchored

def _archive(tmp_path) -> Path:
    """The results archive of test_publish_results' small book (a run folder and section 04's notebook)."""
    from test_publish_results import _book

    from inkground_lib.publish import results

    _, ex = _book(tmp_path)
    out = tmp_path / "inkground-results.zip"
    results.pack(out, [ex])
    return out


def _page_command(archive: Path) -> tuple[list[str], str]:
    """The reviewers' page's command for ``archive``, as the page prints it: (argv after python3, the script)."""
    from inkground_lib.report.reviewers import archive_lines

    page = "\n".join(archive_lines(archive, archive.name))
    block = re.search(r"```bash\npython3 - (\S+) (\S+) <<'EOF'\n(.*?)\nEOF\n```", page, flags=re.S)
    assert block, page
    return [block.group(1), block.group(2)], block.group(3)


def _run_check(cwd: Path, args: list[str], script: str) -> subprocess.CompletedProcess:
    # -I -S: no site-packages, no user paths, no environment: Python's standard library only
    return subprocess.run([sys.executable, "-I", "-S", "-", *args], input=script, text=True, capture_output=True,
                          cwd=cwd, timeout=60)


def _rewrite(archive: Path, edit=None, manifest_too=False, dirs=False):
    with zipfile.ZipFile(archive) as z:
        items = [(i.filename, z.read(i.filename)) for i in z.infolist()]
    body = dict(items)
    manifest = json.loads(body["MANIFEST.json"])
    if edit:
        name = next(f["path"] for f in manifest["files"] if f["path"].endswith("summary-reference.csv"))
        body[name] = body[name].replace(b"0.123", b"0.012")
        if manifest_too:  # the attacker's move: the manifest's line made to match the edited file
            entry = next(f for f in manifest["files"] if f["path"] == name)
            entry["sha256"], entry["bytes"] = hashlib.sha256(body[name]).hexdigest(), len(body[name])
            body["MANIFEST.json"] = json.dumps(manifest, indent=1, sort_keys=True).encode()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as z:  # another zip: other order, no compression
        if dirs:
            for d in sorted({n.rsplit("/", 1)[0] + "/" for n in body if "/" in n}):
                z.writestr(d, b"")
        for name in sorted(body, reverse=True):
            z.writestr(name, body[name])


def test_the_reviewers_page_anchors_the_archive_and_its_standard_library_check_refuses_tampering(tmp_path):
    archive = _archive(tmp_path)
    args, script = _page_command(archive)
    with zipfile.ZipFile(archive) as z:
        assert args == [archive.name, hashlib.sha256(z.read("MANIFEST.json")).hexdigest()]
    assert "import inkground" not in script
    ok = _run_check(tmp_path, args, script)
    assert ok.returncode == 0 and ok.stdout.startswith("OK: MANIFEST.json is the book's"), ok.stderr
    _rewrite(archive, dirs=True)  # unpacked and zipped again (zip -r: folder entries): still checks
    again = _run_check(tmp_path, args, script)
    assert again.returncode == 0, again.stdout + again.stderr
    _rewrite(archive, edit=True)  # one value of one file edited
    bad = _run_check(tmp_path, args, script)
    assert bad.returncode == 1 and "summary-reference.csv: differs from MANIFEST.json" in bad.stdout
    _rewrite(archive, edit=True, manifest_too=True)  # the file and its manifest line edited together
    forged = _run_check(tmp_path, args, script)
    assert forged.returncode != 0 and "REFUSED: MANIFEST.json is not the manifest this book names" in forged.stderr
    from inkground_lib.report.reviewers import archive_lines

    assert "no manifest digest" in "\n".join(archive_lines(tmp_path / "none.zip"))


@pytest.mark.parametrize("ours", [{"a": 107, "b": 36}, {"big": 820}, {"a": 300}, {"a": 36, "big": 820}])
def test_section_04_compares_its_class_counts_with_the_papers_from_the_numbers(ours):
    from inkground_lib.report.tradeoffs import classes_compare_text

    paper = {"inkGround": (537, "pages"), "IAM-OnDB": (217, "writers")}
    text = classes_compare_text(ours, paper)
    fewer, more = all(n < 217 for n in ours.values()), all(n > 537 for n in ours.values())
    assert ("fewer classes than any of the paper's" in text) == fewer
    assert ("more classes than any of the paper's" in text) == more
    assert ("do not all lie on one side" in text) == (not fewer and not more)
    assert all(f"{ds}: {n} writers" in text for ds, n in ours.items())
