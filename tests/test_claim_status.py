"""The status rules of the reviewers' page: each rule driven to every status it can take, the run conditions
that decide "the paper's data / components", and checks that can fail."""

import itertools
import re
from pathlib import Path

import pandas as pd
import pytest

from inkground_lib.analysis.check_language import check_names, note_expressions, render_note
from inkground_lib.analysis.claims import (
    CONSISTENT,
    INCONCLUSIVE,
    INCONSISTENT,
    NOT_REPRODUCED,
    NOT_REPRODUCIBLE,
    PARTLY_CONSISTENT,
    REPRODUCED,
    SET_TO_PAPER,
    STAND_IN,
    STATED,
    STATUS_RULES,
    STATUSES,
    claim_status,
    load_claims,
    reported_values,
    score_verdict,
)
from inkground_lib.analysis.run_conditions import (
    PAPER_CONDITIONS,
    RunInfo,
    data_identity,
    run_conditions,
    unmet_conditions,
)
from inkground_lib.core.paper import SUMMARY_TXT, paper_numbers
from inkground_lib.report.flowchart import is_mermaid, readable_sentence
from inkground_lib.report.reviewers import reviewers_page

AS_PAPER = {"gemini-3.1-pro": "Gemini-3.1-Pro", "claude-opus-4.8": "Claude-Opus-4.8", "kimi-k3": "Kimi-K3",
            "qwen3-vl-32b": "Qwen3-VL-32B", "molmo-7b-d": "Molmo-7B-D", "inksight": "InkSight"}
# digits inside these names are not numbers
NAMES_WITH_DIGITS = ["Gemini-3.1-Pro", "Claude-Opus-4.8", "Kimi-K3", "Qwen3-VL-32B", "Molmo-7B-D", "ResNet-18"]


@pytest.fixture(scope="module")
def rep():
    return paper_numbers()


@pytest.fixture(scope="module")
def claims(rep):
    return load_claims(reported=rep).set_index("claim_id", drop=False)


def _row(system, half=0.005, **values):
    """A summary row: each metric's value with an interval of +-half (absolute) around it."""
    row = {"system": system}
    for k, v in values.items():
        row |= {k: v, f"{k}_lo": v - half, f"{k}_hi": v + half}
    return row


def _run(rows, dataset="inkGround", **cond):
    c = dict(PAPER_CONDITIONS[dataset]) | cond
    role = "recorded" if dataset == "IAM-OnDB" else "benchmark"
    ref = "true" if dataset == "IAM-OnDB" else "reference"
    return RunInfo(Path("/nowhere"), ref, "toy", pd.DataFrame(rows), {}, dataset, role, c)


def _gemini(**kw):
    vals = dict(dtw=0.105, chamfer=0.052, ar=0.812, style=0.861) | kw
    return vals


# ------------------------------------------------------------------------------------------- the rules

def test_score_verdict_rule():
    assert score_verdict(0.1, 0.095, 0.105) == REPRODUCED  # inside, half-width 0.005 <= 0.01
    assert score_verdict(0.1, 0.05, 0.15) == INCONCLUSIVE  # inside, half-width 0.05 > 0.01
    assert score_verdict(0.1, 0.2, 0.21) == NOT_REPRODUCED  # outside, however narrow
    assert score_verdict(0.1, 0.2, 0.6) == NOT_REPRODUCED  # outside, however wide
    assert score_verdict(0.1, float("nan"), float("nan")) == INCONCLUSIVE
    assert score_verdict(0.1, 0.05, 0.15, tolerance=0.5) == REPRODUCED


def test_score_claim_takes_every_status(rep, claims):
    c = claims.loc["gemini_inkground"]

    def status(runs):
        return claim_status(c, rep, runs, as_paper=AS_PAPER)

    assert status([_run([_row("gemini-3.1-pro", **_gemini())])]).status == REPRODUCED
    # a wide interval around the paper's value: inconclusive
    s = status([_run([_row("gemini-3.1-pro", half=0.2, **_gemini())])])
    assert s.status == INCONCLUSIVE and "wider than the tolerance" in s.reason
    # a disagreeing value: not reproduced, both values shown
    s = status([_run([_row("gemini-3.1-pro", **_gemini(dtw=0.3))])])
    assert s.status == NOT_REPRODUCED and "gemini_ink_dtw" in s.reason
    assert any("ours 0.300" in m.text and "vs paper 0.105" in m.text and "outside" in m.text for m in s.here)
    # only DTW measured: the other three numbers are named as missing
    s = status([_run([_row("gemini-3.1-pro", dtw=0.105)])])
    assert s.status == INCONCLUSIVE and "gemini_ink_ar" in s.reason
    # every condition must match: another OCR engine, another derenderer, simulated raters, our data
    for k, v in (("ocr_engine", "rapidocr"), ("derenderer", "skeleton"), ("raters", "simulated"),
                 ("data", "our synthetic pages")):
        s = status([_run([_row("gemini-3.1-pro", **_gemini())], **{k: v})])
        assert s.status == STAND_IN, k
        assert f"{k} {v} (the paper's: {PAPER_CONDITIONS['inkGround'][k]})" in s.here[0].text
    assert status([]).status == NOT_REPRODUCIBLE


def _closed(gemini, claude, kimi):
    return _run([_row("gemini-3.1-pro", **gemini), _row("claude-opus-4.8", **claude), _row("kimi-k3", **kimi)])


def test_ranking_is_recomputed_from_our_numbers(rep, claims):
    c = claims.loc["kimi_highest_style"]
    # the paper's check holds (partly consistent without runs) ...
    assert claim_status(c, rep, [], as_paper=AS_PAPER).status == PARTLY_CONSISTENT
    # ... our numbers give the same ranking: reproduced, whatever the paper's values are
    ok = _closed(dict(style=0.5, ar=0.9), dict(style=0.4, ar=0.8), dict(style=0.6, ar=0.3))
    s = claim_status(c, rep, [ok], as_paper=AS_PAPER)
    assert s.status == REPRODUCED and s.ours_check.ok
    # our numbers give another ranking: not reproduced, although the paper's own check still holds
    bad = _closed(dict(style=0.7, ar=0.9), dict(style=0.4, ar=0.8), dict(style=0.6, ar=0.3))
    s = claim_status(c, rep, [bad], as_paper=AS_PAPER)
    assert s.check.ok and s.status == NOT_REPRODUCED and not s.ours_check.ok
    assert "gemini_ink_style 0.7" in s.ours_check.detail
    # a ranking that needs a number no run can give (the open models' largest AR): inconclusive
    s = claim_status(claims.loc["gemini_best_readability_inkground"], rep, [ok], as_paper=AS_PAPER)
    assert s.status == INCONCLUSIVE and "open_ar_max" in s.reason
    # the same ranking from runs that miss a condition: stand-ins, never reproduced
    s = claim_status(c, rep, [_run(ok.summary.to_dict("records"), ocr_engine="rapidocr")], as_paper=AS_PAPER)
    assert s.status == PARTLY_CONSISTENT and {m.status for m in s.here} == {STAND_IN}


def test_check_rules_without_runs(rep, claims, tmp_path):
    st = {cid: claim_status(c, rep, [], as_paper={}).status for cid, c in claims.iterrows()}
    assert st["ocr_pass_rate"] == CONSISTENT
    assert st["inksight_beats_vlms"] == PARTLY_CONSISTENT and st["qwen_inkground"] == PARTLY_CONSISTENT
    assert st["gemini_best_fidelity_inkground"] == PARTLY_CONSISTENT
    assert st["n_vlms"] == STATED and st["raters_per_pair"] == STATED
    assert st["open_dtw_iamondb"] == NOT_REPRODUCIBLE and st["gemini_iamondb"] == NOT_REPRODUCIBLE
    # a partial check names what it does not check
    s = claim_status(claims.loc["kimi_highest_style"], rep, [], as_paper={})
    assert "IAM-OnDB half" in s.reason
    # a failing check: inconsistent, even with a reproduction
    df = pd.read_csv(Path(SUMMARY_TXT).parent / "reported.csv", dtype={"section": str})
    df.loc[df["id"] == "gemini_ink_dtw", "value"] = 0.5
    df.to_csv(tmp_path / "reported.csv", index=False)
    rep2 = paper_numbers(tmp_path / "reported.csv")
    s = claim_status(claims.loc["gemini_best_fidelity_inkground"], rep2, [], as_paper={})
    assert s.status == INCONSISTENT


def test_parameters_are_set_never_measured(rep, claims):
    pseudo = {"numbers": {"rater_pool": 85, "raters_per_pair_min": 2, "ocr_threshold": 0.85, "ocr_pass_pages": 9},
              "components": {"derenderer": "skeleton", "ocr_engine": "rapidocr", "ratings_source": "simulated"},
              "params": {"candidates": "data/datasets/synth"}}
    for cid in ("raters", "raters_per_pair"):
        s = claim_status(claims.loc[cid], rep, [], pseudo, as_paper={})
        assert s.here and {m.status for m in s.here} == {SET_TO_PAPER}, cid
        assert s.status == STATED, cid  # inputs never make a claim "measured"
    s = claim_status(claims.loc["raters"], rep, [], dict(pseudo, numbers={"rater_pool": 40}), as_paper={})
    assert "set to 40 (the paper's value is 85)" in s.here[0].text
    s = claim_status(claims.loc["funnel_counts"], rep, [], pseudo, as_paper={})
    assert {m.status for m in s.here} == {SET_TO_PAPER, STAND_IN}


# ------------------------------------------------------------------------------------- run conditions

def test_run_conditions_from_what_a_run_records(tmp_path):
    facts = {"settings": {"ocr_engine": "deepseek-ocr"}}
    ink = {"kind": "inkground", "meta": {}}
    # a manifest field anyone can type never makes data the paper's; only a reader's recorded origin does
    assert [u.split()[0] for u in unmet_conditions(run_conditions(facts, "reference", ink), "inkGround")] == ["data"]
    assert not unmet_conditions(run_conditions(dict(facts, data_origin="inkGround"), "reference", ink), "inkGround")
    # our own builder's pages from IAM-OnDB words are never the paper's IAM-OnDB
    built = {"kind": "recorded", "meta": {"builder": "inkground_lib.datasets.recorded.build_recorded",
                                          "sources": [{"kind": "iamondb"}]}}
    cond = run_conditions(facts, "reference", built)
    assert cond["reference"] == "recorded" and "composed by our builder from iamondb" in cond["data"]
    assert [u.split()[0] for u in unmet_conditions(cond, "IAM-OnDB")] == ["data"]
    # a benchmark set made here: derenderer, raters and OCR engine as recorded
    bench = {"kind": "benchmark", "meta": {"derenderer": "skeleton", "ratings_source": "simulated",
                                           "candidates": {"name": "synth"}}}
    cond = run_conditions({"settings": {"ocr_engine": "rapidocr"}}, "reference", bench)
    assert {u.split()[0] for u in unmet_conditions(cond, "inkGround")} == {"data", "ocr_engine", "derenderer", "raters"}
    # no manifest: never the paper's data
    assert run_conditions(facts, "reference", {})["data"].startswith("unknown")
    # data_identity reads the manifest the facts name
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "manifest.json").write_text('{"kind": "recorded", "meta": {"builder": "b", '
                                                   '"sources": [{"kind": "iamondb"}]}}')
    assert data_identity({"dataset_dir": str(tmp_path / "ds")}) == (None, "recorded")


@pytest.mark.slow  # runs sections 03 and 04 end to end
def test_recorded_runs_here_reach_the_page_as_stand_ins(rep, claims, tmp_path):
    """A recorded set built here (our own page composer over the shipped UNIPEN words) scored in a real
    section-03 run: the skeleton stand-in reaches inksight_iamondb as "measured with stand-ins"."""
    from inkground_lib.analysis.run_conditions import load_run_infos
    from inkground_lib.datasets.recorded import build_recorded
    from inkground_lib.evaluation.run import evaluate_dataset
    from inkground_lib.evaluation.settings import EvalSettings

    rec = build_recorded(tmp_path / "rec", pages=4, progress=False)
    evaluate_dataset(rec, ["reference", "skeleton"], tmp_path / "run", EvalSettings(n_boot=50), progress=False)
    runs = load_run_infos([tmp_path / "run"])
    assert runs and all(r.role == "recorded" and r.data_identity is None for r in runs)
    s = claim_status(claims.loc["inksight_iamondb"], rep, runs)
    assert s.status == STAND_IN and s.here and all(m.status == STAND_IN for m in s.here)


# ------------------------------------------------------------------------- checks that could have failed

def _perturbations(values: dict, names: list[str]):
    """(label, perturbed values): each name x0.5 and x2, and each pair of names swapped."""
    for n in names:
        for f in (0.5, 2.0):
            yield f"{n} x{f}", values | {n: values[n] * f}
    for a, b in itertools.combinations(names, 2):
        if values[a] != values[b]:
            yield f"swap {a}, {b}", values | {a: values[b], b: values[a]}


def test_every_consistent_check_can_fail(rep, claims):
    """Every reported value a (partly) consistent check rests on is load-bearing: some perturbation of it (x0.5,
    x2, or swapped with another value of the check) flips the claim's status."""
    values = reported_values(rep)
    tested, dead = 0, []
    for cid, c in claims.iterrows():
        before = claim_status(c, rep, [], as_paper={}).status
        if before not in (CONSISTENT, PARTLY_CONSISTENT):
            continue
        names = sorted(check_names(c["check"]))
        for n in names:
            flips = False
            for label, vals in _perturbations(values, names):
                if n not in label:
                    continue
                rep2 = rep.copy()
                rep2["value"] = [vals[i] for i in rep2.index]
                if claim_status(c, rep2, [], as_paper={}).status != before:
                    flips = True
                    break
            tested += 1
            if not flips:
                dead.append(f"{cid}: {n}")
    assert tested >= 20
    assert not dead, f"values no perturbation flips (true by construction?): {dead}"


def test_notes_carry_no_typed_numbers(claims):
    for cid, c in claims.iterrows():
        for col in ("note", "unchecked"):
            text = re.sub(r"\{\{.+?\}\}", " ", c[col])
            for name in NAMES_WITH_DIGITS:
                text = text.replace(name, " ")
            assert not re.search(r"\d", text), f"{cid}.{col}: typed number in {text!r}"
    # the placeholders are computed from reported.csv
    rep = paper_numbers()
    n = claims.loc["words_per_page", "note"]
    assert ("pages * words_per_page_mean", None) in note_expressions(n)
    assert "about 18,736 words" in render_note(n, reported_values(rep))
    rep.loc["pages", "value"] = 100
    assert "about 3,489 words" in render_note(n, reported_values(rep))


def test_flowchart_lines_read_as_prose(claims):
    text = Path(SUMMARY_TXT).read_text("utf-8")
    from inkground_lib.report.flowchart import flowchart_labels

    labels = flowchart_labels(text)
    assert labels["E"] == "537 benchmark pages"
    mermaid = [s for s in claims["sentence"] if is_mermaid(s)]
    assert len(mermaid) == 4
    for s in mermaid:
        r = readable_sentence(s, labels)
        assert r.startswith("Flowchart: ") and "-->" not in r and not re.search(r"\b[A-Z][\[{]", r)
    assert readable_sentence("C -- yes, 777 pages --> D{All raters score 10/10?}", labels) == (
        "Flowchart: “DeepSeek-OCR: render vs original, >=85% words match?” (yes, 777 pages) → “All raters score 10/10?”")
    assert readable_sentence("Raters agree.", labels) == "Raters agree."


def test_page_shows_the_vocabulary_with_rules_and_counts(rep, claims):
    md = reviewers_page(claims.reset_index(drop=True), rep, as_paper={})
    rows = re.findall(r"^\| \*\*(.+?)\*\* \| (.+?) \| (\d+) \|$", md, flags=re.M)
    assert [r[0] for r in rows] == list(STATUSES)
    assert all(STATUS_RULES[s].split(":")[0].replace("'", "'") in r.replace("\\", "") for s, r, _ in rows)
    assert sum(int(n) for *_, n in rows) == len(claims)
    shown = dict(re.findall(r"^### `(\w+)`: (.+)$", md, flags=re.M))
    assert {s: sum(v == s for v in shown.values()) for s in STATUSES} == {s: int(n) for s, _, n in rows}
    assert "Measured here:** nothing" in md and "set to the paper's value" in md
