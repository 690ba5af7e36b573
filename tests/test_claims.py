"""The paper's numbers and claims as data (data/paper/reported.csv, claims.csv) and the reviewers' page."""

import hashlib
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from inkground_lib.analysis.check_language import ClaimsError, check_names, evaluate_check
from inkground_lib.analysis.claims import (
    CLAIMS_CSV,
    CONSISTENT,
    INCONSISTENT,
    NOT_REPRODUCIBLE,
    PARTLY_CONSISTENT,
    REPRODUCED,
    SET_NOT_MEASURED,
    STAND_IN,
    STATED,
    check_claims,
    claim_status,
    load_claims,
)
from inkground_lib.analysis.origins import with_origins
from inkground_lib.analysis.run_conditions import PAPER_CONDITIONS, RunInfo
from inkground_lib.core.paper import paper_numbers
from inkground_lib.report.reviewers import reviewers_page, write_default_reviewers_page

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "data" / "paper"
COPY = PAPER / "inkground-summary.txt"
SHARED = ROOT.parent / "shared" / "paper" / "inkground-summary.txt"
SUMMARY_SHA256 = "53e10b6658d13a3e933991fa4716b6777c958f7176855295a3c8c1f2fe4fbef9"

# Strings whose digits are not numbers of the paper: model names and a section number. Removed before the
# numbers are read.
EXCLUDED = ["Gemini-3.1-Pro", "Claude-Opus-4.8", "Kimi-K3", "Qwen3-VL-32B", "Molmo-7B-D", "ResNet-18", "Sec. 5.2"]
# Numbers written as words (not parsed from the text): phrase -> reported id.
NUMBER_WORDS = {"Of seven VLMs": "n_vlms", "The four open-source models": "n_open_models",
                "at least two raters": "raters_per_pair_min"}
# "10/10" is read as two numbers, 10 and 10 (the score every rater must give, on a scale to 10).
NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(%?)")


def summary_numbers(text: str) -> list[tuple[int, str, float]]:
    """(line number, token, value) of every number in the summary; percentages as fractions."""
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        for name in EXCLUDED:
            line = line.replace(name, " ")
        for m in NUMBER.finditer(line):
            v = float(m.group(1).replace(",", ""))
            out.append((i, m.group(0), round(v / 100, 12) if m.group(2) else v))
    return out


def test_number_parser_on_the_awkward_cases():
    got = [(t, v) for _, t, v in summary_numbers(
        "2,984 pages; only 26% pass; 81.7% agree; Qwen3-VL-32B at 0.222; score 10/10; Sec. 5.2; ResNet-18")]
    assert got == [("2,984", 2984.0), ("26%", 0.26), ("81.7%", 0.817), ("0.222", 0.222), ("10", 10.0), ("10", 10.0)]


def _check_every_number_present(path: Path):
    text = path.read_text("utf-8")
    rep = paper_numbers()
    lines = text.splitlines()
    missing = []
    for i, tok, v in summary_numbers(text):
        line = lines[i - 1]
        # a reported row for this number whose sentence comes from this line of the summary
        rows = rep[[abs(float(x) - v) <= 1e-9 * max(1.0, abs(v)) for x in rep["value"]]]
        here = [pid for pid, s in rows["sentence"].items()
                if s.replace(" (flowchart)", "").strip() in line or line.strip() in s]
        if not here:
            missing.append(f"line {i}: {tok} ({line.strip()[:60]})")
    assert not missing, f"numbers of {path} not in reported.csv: {missing}"
    for phrase, pid in NUMBER_WORDS.items():
        assert phrase in text, phrase
        assert pid in rep.index


def test_every_number_of_the_summary_copy_is_in_reported_csv():
    _check_every_number_present(COPY)


def test_the_summary_copy_is_verbatim():
    """The copy is byte for byte the paper's summary (sha256 of ../shared/paper/inkground-summary.txt, taken
    2026-11-30); where the shared folder sits beside the repository it is compared directly too."""
    assert hashlib.sha256(COPY.read_bytes()).hexdigest() == SUMMARY_SHA256, "data/paper/inkground-summary.txt changed"
    if SHARED.is_file():
        assert SHARED.read_bytes() == COPY.read_bytes(), "data/paper/inkground-summary.txt is not a verbatim copy"


def test_reported_sentences_come_from_the_summary():
    text = COPY.read_text("utf-8")
    rep = paper_numbers()
    bad = [pid for pid, s in rep["sentence"].items() if s.replace(" (flowchart)", "").strip() not in text]
    assert not bad


def test_claims_file_is_valid_and_complete():
    rep = paper_numbers()
    cl = load_claims(reported=rep)  # refs and check names exist in reported.csv (else ClaimsError)
    text = COPY.read_text("utf-8")
    assert all(s in text for s in cl["sentence"]), [s for s in cl["sentence"] if s not in text]
    used = {i for r in cl["refs"] for i in r.split()}
    assert set(rep.index) <= used, f"reported ids no claim rests on: {sorted(set(rep.index) - used)}"
    for _, c in cl.iterrows():
        assert check_names(c["check"]) <= set(c["refs"].split()) if c["check"] else True, c["claim_id"]
        assert c["needs"].strip(), f"{c['claim_id']}: says nothing about what reproducing it needs"
    # every ranking statement has a machine check
    assert (cl.loc[cl["kind"].isin(["ranking", "arithmetic"]), "check"].str.strip() != "").all()


def test_load_claims_rejects_unknown_ids_and_bad_checks(tmp_path):
    cl = pd.read_csv(CLAIMS_CSV, dtype=str, keep_default_na=False)
    bad = cl.copy()
    bad.loc[0, "refs"] = "n_vlms no_such_id"
    bad.to_csv(tmp_path / "c.csv", index=False)
    with pytest.raises(ClaimsError, match="no_such_id"):
        load_claims(tmp_path / "c.csv")
    bad = cl.copy()
    bad.loc[0, "check"] = "__import__('os').system('true') == 0"
    bad.to_csv(tmp_path / "c.csv", index=False)
    with pytest.raises(ClaimsError, match="not allowed|only"):
        load_claims(tmp_path / "c.csv")


def test_check_language():
    v = {"a": 777, "b": 2984, "r": 0.26, "x": 0.9, "y": 0.5, "z": 0.9}
    assert evaluate_check("a / b ~= r within 0.005", v).ok is True
    assert evaluate_check("a / b ~= r within 0.0001", v).ok is False
    r = evaluate_check("max over {x, y} is x", v)
    assert r.ok and "x 0.9" in r.detail
    assert evaluate_check("min over {x, y} is x", v).ok is False
    assert evaluate_check("max over {x, y, z} is z", v).ok is True  # ties: one of the extremes
    assert evaluate_check("y < x <= z and a - 777 == 0", v).ok is True
    assert evaluate_check("y < min(x, z) and y > x", v).ok is False
    assert evaluate_check("", v).ok is None


def test_paper_checks_hold_on_the_reported_numbers():
    rep = paper_numbers()
    t = check_claims(load_claims(reported=rep), rep).set_index("claim_id")
    assert (t["check_ok"].dropna() == True).all(), t.loc[t["check_ok"] == False, "check_detail"].tolist()  # noqa: E712
    assert "777 / 2,984 = 0.2604" in t.loc["ocr_pass_rate", "check_detail"]


# --------------------------------------------------------------------------------------- reviewers' page

def _statuses(md: str) -> dict:
    return dict(re.findall(r"^### `(\w+)`: (.+)$", md, flags=re.M))


def test_page_lists_every_claim_and_flips_to_inconsistent(tmp_path):
    rep = paper_numbers()
    cl = load_claims(reported=rep)
    md = reviewers_page(cl, rep)
    st = _statuses(md)
    assert set(st) == set(cl["claim_id"])
    # a rate beside the counts it is the ratio of restates the paper (issue 34): never "consistent"
    assert st["ocr_pass_rate"] == STATED and st["kimi_highest_style"] == PARTLY_CONSISTENT
    assert st["gemini_inkground"] == NOT_REPRODUCIBLE  # nothing ran, no check possible
    assert st["n_vlms"] == STATED and st["raters"] == STATED  # no run: nothing of ours, set or measured
    assert INCONSISTENT not in st.values()
    # a temp copy with a changed number: the arithmetic fails and the status follows
    df = pd.read_csv(PAPER / "reported.csv", dtype={"section": str})
    df.loc[df["id"] == "ocr_pass_rate", "value"] = 0.30
    df.loc[df["id"] == "kimi_ink_style", "value"] = 0.5
    df.to_csv(tmp_path / "reported.csv", index=False)
    rep2 = paper_numbers(tmp_path / "reported.csv")
    st2 = _statuses(reviewers_page(cl, rep2))
    assert st2["ocr_pass_rate"] == INCONSISTENT
    assert st2["kimi_highest_style"] == INCONSISTENT
    assert st2["claude_readable_low_style"] == CONSISTENT  # Claude still has the lowest style


def _run(system, identity, role="benchmark", reference="reference", dtw=0.104, lo=0.098, hi=0.111):
    """A toy run; identity "inkGround" / "IAM-OnDB" gives it the paper's conditions in full."""
    summ = pd.DataFrame([{"system": system, "dtw": dtw, "dtw_lo": lo, "dtw_hi": hi}
                         | {f"{k}{e}": v for k, v in (("chamfer", 0.052), ("ar", 0.812), ("style", 0.861), ("cr", 0.8))
                            for e in ("", "_lo", "_hi")}])
    cond = dict(PAPER_CONDITIONS[identity]) if identity else {
        "data": "our synthetic pages", "reference": "recorded" if reference == "true" or role == "recorded"
        else "pseudo-labels", "ocr_engine": "rapidocr", "derenderer": "skeleton", "raters": "simulated"}
    return RunInfo(Path("/nowhere"), reference, "toy", summ, {"style": {"n_classes": 4, "chance": 0.25,
                                                                           "n_train": 30, "n_test": 10}},
                     identity, role, cond)


def test_status_from_runs_reproduced_stand_in_and_not():
    rep = paper_numbers()
    cl = load_claims(reported=rep).set_index("claim_id", drop=False)
    as_paper = {"gemini-3.1-pro": "Gemini-3.1-Pro"}
    c = cl.loc["gemini_inkground"]
    # the paper's system on the paper's data: reproduced (only DTW ... all four metrics are in the summary row)
    s = claim_status(c, rep, [_run("gemini-3.1-pro", "inkGround")], as_paper=as_paper)
    assert s.status == REPRODUCED
    assert any("vs paper 0.105" in m.text and "inside" in m.text for m in s.here)
    # the same run with our OCR engine: every condition must match, so it is a stand-in
    r = _run("gemini-3.1-pro", "inkGround")
    r.conditions["ocr_engine"] = "rapidocr"
    s = claim_status(c, rep, [r], as_paper=as_paper)
    assert s.status == STAND_IN and "ocr_engine rapidocr (the paper's: deepseek-ocr)" in s.here[0].text
    # the same system on our synthetic benchmark: measured with stand-ins, never "reproduced"
    s = claim_status(c, rep, [_run("gemini-3.1-pro", None)], as_paper=as_paper)
    assert s.status == STAND_IN
    # another system only: nothing measured for Gemini
    assert claim_status(c, rep, [_run("font", None)], as_paper=as_paper).status == NOT_REPRODUCIBLE
    # InkSight's stand-in (the skeleton derenderer) on recorded data scored against the truth
    s = claim_status(cl.loc["inksight_iamondb"], rep, [_run("skeleton", None, "recorded", "true")], as_paper=as_paper)
    # ... replaces the system and the data (and the OCR): shown, but it measures nothing of the claim (issue 34)
    assert s.status == NOT_REPRODUCIBLE and "stands in for InkSight" in s.here[0].text and not s.here[0].counts
    # on a recorded set the reference inks are the recorded ones: the same, system and data replaced
    s = claim_status(cl.loc["inksight_iamondb"], rep, [_run("skeleton", None, "recorded", "reference")], as_paper=as_paper)
    assert s.status == NOT_REPRODUCIBLE and s.here
    # a run of the stand-in on pseudo-labels does not count for a recorded-truth number
    s = claim_status(cl.loc["inksight_iamondb"], rep, [_run("skeleton", None, "benchmark", "reference")], as_paper=as_paper)
    assert s.status == NOT_REPRODUCIBLE


def test_status_from_pseudo_run_and_stats():
    rep = paper_numbers()
    cl = load_claims(reported=rep).set_index("claim_id", drop=False)
    pseudo = {"numbers": {"candidates": 16, "ocr_pass_rate": 0.5625, "ocr_threshold": 0.85},
              "components": {"derenderer": "skeleton", "ocr_engine": "rapidocr", "ratings_source": "simulated"},
              "params": {"candidates": "data/datasets/synth"}}
    # the candidate pages are the run's size, asked for: set, never measured
    s = claim_status(cl.loc["funnel_candidates"], rep, [], pseudo, as_paper={})
    assert s.status == SET_NOT_MEASURED and "16" in s.here[0].text and "skeleton" in s.here[0].text
    assert s.here[0].origin.kind == "requested count" and not s.here[0].counts
    s = claim_status(cl.loc["ocr_pass_rate"], rep, [], pseudo, as_paper={})
    # 777 / 2,984 beside 26% restates the paper (issue 34): the rate measured here is what decides
    assert s.status == STAND_IN and any("0.5625" in m.text and "paper 0.26" in m.text for m in s.here)
    assert "only restates" in s.reason
    # the OCR threshold is an input set to the paper's value, never a measurement; the flowchart's threshold
    # equal to the text's only restates one number, so the claim is not "consistent"
    s = claim_status(cl.loc["funnel_ocr_threshold"], rep, [], pseudo, as_paper={})
    assert [m.status for m in s.here] == [SET_NOT_MEASURED] and "set to the paper's value (0.85)" in s.here[0].text
    assert s.status == SET_NOT_MEASURED and s.check.ok and "only restates" in s.reason
    # the train share is what the seeded split gave
    s = claim_status(cl.loc["style_train_share"], rep, [_run("font", None)], as_paper={})
    assert s.status == SET_NOT_MEASURED and "0.75" in s.here[0].text and "seeded split" in s.here[0].text
    # statistics without recorded origins are measured on the pages; with the generator's, its targets are set
    s = claim_status(cl.loc["words_per_page"], rep, [], None, {"synth": {"words_per_page_mean": 38.7}}, as_paper={})
    assert s.status == STAND_IN and any("38.7" in m.text and "34.89" in m.text for m in s.here)
    meta = {"params": {"pages": 16, "words_min": 2, "words_max": 140, "words_mean": 35.0, "size": 1.0}}
    stats = {"synth": with_origins({"words_per_page_mean": 33.1, "strokes_per_page_mean": 61.0}, "synth", meta)}
    s = claim_status(cl.loc["words_per_page"], rep, [], None, stats, as_paper={})
    assert s.status == STAND_IN  # the strokes per page are measured
    assert [m.status for m in s.here] == [SET_NOT_MEASURED, STAND_IN]
    assert "33.1 on dataset synth (our pages); setting: the generator's target mean, 35" in s.here[0].text


def test_write_default_reviewers_page_writes_the_page(tmp_path):
    shutil.copytree(PAPER, tmp_path / "data" / "paper")
    out = write_default_reviewers_page(tmp_path)
    assert out == tmp_path / "book" / "sections" / "reviewers.md"
    md = out.read_text("utf-8")
    assert set(_statuses(md)) == set(load_claims().claim_id)
    assert "no section-3 run outputs were found" in md
    # flowchart lines are shown as prose, never as Mermaid source
    assert "“2,984 candidate pages” → “InkSight Small-p derenders each word”" in md
    quotes = re.findall(r"^> (.*)$", md, flags=re.M)
    assert quotes and not [q for q in quotes if "--" in q or re.search(r"\b[A-Z]\\?[\[{]", q)]


def test_overview_gives_each_claims_sentence_status_and_a_link_to_its_details():
    rep = paper_numbers()
    cl = load_claims(reported=rep)
    md = reviewers_page(cl, rep, [_run("font", None)], as_paper={})
    overview = md.split("## Overview", 1)[1].split("## Claims", 1)[0]
    rows = re.findall(r"^\| (.+) \| (.+?) \| (.+?) \| \[(.+?)\]\(#(claim-[\w-]+)\) \|$", overview, flags=re.M)
    assert len(rows) == len(cl)
    st = _statuses(md)
    targets = set(re.findall(r"^\((claim-[\w-]+)\)=\n### `(\w+)`", md, flags=re.M))
    quotes = dict(re.findall(r"^### `(\w+)`: .+\n\n> (.+)$", md, flags=re.M))
    assert len(quotes) == len(cl)
    for (sentence, status, ours, cid, anchor), (_, c) in zip(rows, cl.iterrows()):
        assert cid.replace("\\_", "_") == c["claim_id"] and status == st[c["claim_id"]]
        assert (anchor, c["claim_id"]) in targets  # the link leads to the claim's own details
        assert sentence.startswith(quotes[c["claim_id"]])  # the claim's sentence, as its details quote it
    # claims that share a sentence say what each is about
    assert "*(best readability on inkGround: AR)*" in overview
    # our numbers by origin; the classifier's class count under a readable label
    share = next(r for r in rows if r[3].replace("\\_", "_") == "style_train_share")
    assert share[2] == "1 set (seeded split)"
    assert "writer classes of the style classifier (style\\_classes\\_inkground): 4 in the writer classifier of toy; " \
           "arithmetic identity" in md


def test_claims_sharing_a_sentence_must_say_what_each_is_about(tmp_path):
    cl = pd.read_csv(CLAIMS_CSV, dtype=str, keep_default_na=False)
    cl.loc[cl["claim_id"] == "n_vlms", "about"] = ""
    cl.to_csv(tmp_path / "c.csv", index=False)
    with pytest.raises(ClaimsError, match="share a sentence: field about"):
        load_claims(tmp_path / "c.csv")
