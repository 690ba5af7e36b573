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
    SET_NOT_MEASURED,
    STAND_IN,
    STATED,
    STATUS_RULES,
    STATUSES,
    claim_status,
    load_claims,
    reported_values,
    score_verdict,
)
from inkground_lib.analysis import claims as claims_module
from inkground_lib.analysis.origins import (
    IDENTITY,
    MEASUREMENT,
    ORIGINS,
    REQUESTED,
    SETTING,
    Origin,
    dataset_origins,
    pseudo_origins,
    with_origins,
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
    # issue 34: a rate beside the counts it is the ratio of, and the funnel's order, restate the paper
    assert st["ocr_pass_rate"] == STATED and st["funnel_counts"] == STATED
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
              "params": {"candidates": "data/datasets/synth", "n_raters": 85, "raters_per_pair": [2, 2]}}
    for cid in ("raters", "raters_per_pair"):
        s = claim_status(claims.loc[cid], rep, [], pseudo, as_paper={})
        assert s.here and {m.status for m in s.here} == {SET_NOT_MEASURED}, cid
        assert {m.origin.kind for m in s.here} == {SETTING} and not any(m.counts for m in s.here)
        assert s.status == SET_NOT_MEASURED, cid  # inputs never make a claim "measured"
        assert all("set to the paper's value" in m.text for m in s.here)
    s = claim_status(claims.loc["raters"], rep, [], dict(pseudo, numbers={"rater_pool": 40}), as_paper={})
    assert "40" in s.here[0].text and "(paper 85)" in s.here[0].text and "set to the paper's" not in s.here[0].text
    s = claim_status(claims.loc["funnel_counts"], rep, [], pseudo, as_paper={})
    assert {m.status for m in s.here} == {SET_NOT_MEASURED, STAND_IN}
    # with a ratings file the pool and the raters per pair are what the file holds: measured
    rated = dict(pseudo, components=dict(pseudo["components"], ratings_source="file: ratings.csv"))
    s = claim_status(claims.loc["raters_per_pair"], rep, [], rated, as_paper={})
    assert [m.status for m in s.here] == [STAND_IN, SET_NOT_MEASURED] and s.status == STAND_IN


def _inputs_for_every_source():
    """A pseudo-label run, the statistics of a synthetic dataset and a section-03 run's classifier facts, with the
    origins their records give."""
    pseudo = {"numbers": {"candidates": 158, "ocr_pass_pages": 114, "ocr_pass_rate": 0.72, "benchmark_pages": 41,
                          "rater_agreement": 0.62, "rater_pool": 85, "raters_per_pair_min": 2, "ocr_threshold": 0.85,
                          "word_order_differs_share": 0.39, "word_direction_differs_share": 0.31},
              "components": {"derenderer": "skeleton", "ocr_engine": "rapidocr", "ratings_source": "simulated"},
              "params": {"candidates": "data/datasets/synth", "ocr_threshold": 0.85, "n_raters": 85,
                         "raters_per_pair": [2, 2]}}
    meta = {"params": {"pages": 158, "words_min": 2, "words_max": 140, "words_mean": 35.0, "size": 1.0}}
    stats = {"synth": with_origins({"pages": 158, "words_per_page_mean": 33.1, "words_per_page_min": 2,
                                    "words_per_page_max": 128, "strokes_per_page_mean": 60.9,
                                    "points_per_stroke_mean": 44.7, "box_width_median": 0.0997,
                                    "box_height_median": 0.0354}, "synth", meta)}
    runs = [RunInfo(Path("/nowhere"), "reference", "toy", pd.DataFrame([{"system": "font"}]),
                    {"style": {"n_classes": 41, "chance": 1 / 41, "n_train": 970, "n_test": 321, "top1": 0.2}},
                    None, "benchmark", dict(PAPER_CONDITIONS["inkGround"], data="our synthetic pages"))]
    return pseudo, stats, runs


class _Every(dict):
    """Origins that give ``origin`` to every number."""

    def __init__(self, origin):
        super().__init__()
        self.origin = origin

    def __bool__(self):
        return True

    def get(self, key, default=None):
        return self.origin


def test_the_status_follows_the_origin_of_our_numbers(rep, claims, monkeypatch):
    """Every claim's status is derived from its numbers' origins, never from its id: made measurements, the numbers
    we set turn a claim "measured with stand-ins" (or "consistent", where a check of it that relates different
    numbers holds); made settings, no claim is measured any more. Which claims change follows from the data."""
    pseudo, stats, runs = _inputs_for_every_source()

    def statuses(origin=None):
        if origin is not None:
            monkeypatch.setattr(claims_module, "pseudo_origins", lambda summary: _Every(origin))
            monkeypatch.setattr(claims_module, "style_origins", lambda style, dataset="": _Every(origin))
        st = stats if origin is None else {k: {**v, "origins": _Every(origin)} for k, v in stats.items()}
        return {cid: claim_status(c, rep, runs, pseudo, st, as_paper={}) for cid, c in claims.iterrows()}

    before = statuses()
    set_only = [cid for cid, s in before.items() if s.here and not any(m.counts for m in s.here)]
    measured = [cid for cid, s in before.items() if any(m.counts for m in s.here)]
    assert len(set_only) >= 5 and measured
    assert {before[c].status for c in set_only} <= {SET_NOT_MEASURED, STATED, CONSISTENT, PARTLY_CONSISTENT}
    assert STAND_IN not in {before[c].status for c in set_only}

    after = statuses(Origin(MEASUREMENT, "measured (changed by the test)"))
    changed = [c for c in set_only if after[c].status != before[c].status]
    for cid in set_only:
        assert after[cid].status in (STAND_IN, CONSISTENT, PARTLY_CONSISTENT), (cid, after[cid].status)
        if before[cid].status in (SET_NOT_MEASURED, STATED):
            assert cid in changed
    assert sum(after[c].status == STAND_IN for c in set_only) >= 5

    after = statuses(Origin(SETTING, "set (changed by the test)"))
    assert STAND_IN not in {s.status for s in after.values()}
    for cid in measured:
        if before[cid].status == STAND_IN:
            assert after[cid].status == SET_NOT_MEASURED, cid
        assert not any(m.counts for m in after[cid].here)


def test_origins_are_read_from_the_records():
    """The origin of a number comes from the record that made it: a generator's parameter, a run's parameter,
    the pages a run was given, the ratings' source."""
    synth = dataset_origins("synth", {"params": {"pages": 158, "words_min": 2, "words_max": 140, "words_mean": 35.0,
                                                 "size": 1.0}})
    # points per stroke follow from the generator's resampling step (issue 45): set, not measured
    assert {k for k, o in synth.items() if o.counts} == {"strokes_per_page_mean"}
    assert synth["pages"].kind == REQUESTED and "158" in synth["pages"].how
    assert "tuned" in synth["box_width_median"].how and synth["words_per_page_max"].how == "the generator's cap, 140"
    # a dataset not built by us (the real pages): its statistics are measured on its pages, its size is not
    real = dataset_origins("inkground", {})
    assert real["words_per_page_mean"].counts and real["box_width_median"].counts and not real["pages"].counts
    rec = dataset_origins("recorded", {"writers": 36, "params": {"pages": None, "words_per_page": [4, 8],
                                                                 "layout": {"core_px": 24.0, "page_width": 1000}}})
    assert rec["pages"].how == "one page per writer of the source (36 writers)" and not rec["box_height_median"].counts
    sim = pseudo_origins({"numbers": {"candidates": 158}, "params": {"ocr_threshold": 0.85, "n_raters": 85},
                          "components": {"ratings_source": "simulated"}})
    assert sim["candidates"].kind == REQUESTED and sim["rater_pool"].kind == SETTING
    assert "158 candidate pages" in sim["benchmark_pages"].not_comparable
    assert "simulated raters" in sim["benchmark_pages"].not_comparable and sim["benchmark_pages"].counts
    real_ratings = pseudo_origins({"numbers": {"rater_pool": 12, "rater_agreement": 0.8}, "params": {}, "components": {"ratings_source": "file: r.csv"}})
    assert real_ratings["rater_pool"].counts and not real_ratings["rater_agreement"].not_comparable
    assert set(ORIGINS) >= {MEASUREMENT, SETTING, REQUESTED, IDENTITY}
    with pytest.raises(ValueError, match="not one of"):
        Origin("guess", "?")


def test_a_restatement_is_not_a_check(rep, claims, tmp_path):
    """A check that only says two numbers of the paper are equal restates one number: it cannot make a claim
    consistent, but a disagreement between the two places still makes it inconsistent."""
    c = dict(claims.iloc[0])
    c |= {"kind": "number", "refs": "benchmark_pages pages", "check": "benchmark_pages == pages", "measured_as": "",
          "unchecked": ""}
    assert claim_status(c, rep, [], as_paper={}).status == STATED
    # (benchmark_pages <= candidates would not do: any funnel keeps a subset, issue 34)
    c2 = dict(c, check="benchmark_pages == pages and benchmark_pages / ocr_pass_pages <= rater_agreement",
              refs="benchmark_pages pages ocr_pass_pages rater_agreement")
    s = claim_status(c2, rep, [], as_paper={})
    assert s.status == CONSISTENT and "only restates" in s.reason
    rep2 = rep.copy()
    rep2.loc["benchmark_pages", "value"] = 536
    assert claim_status(c, rep2, [], as_paper={}).status == INCONSISTENT


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
    section-03 run: the skeleton stand-in reaches inksight_iamondb, but a stand-in system on stand-in data measures
    neither the paper's system nor its data, so the claim stays "not reproducible here" (issue 34)."""
    from inkground_lib.analysis.run_conditions import load_run_infos
    from inkground_lib.datasets.recorded import build_recorded
    from inkground_lib.evaluation.run import evaluate_dataset
    from inkground_lib.evaluation.settings import EvalSettings

    rec = build_recorded(tmp_path / "rec", pages=4, progress=False)
    evaluate_dataset(rec, ["reference", "skeleton"], tmp_path / "run", EvalSettings(n_boot=50), progress=False)
    runs = load_run_infos([tmp_path / "run"])
    assert runs and all(r.role == "recorded" and r.data_identity is None for r in runs)
    s = claim_status(claims.loc["inksight_iamondb"], rep, runs)
    # the skeleton on recorded UNIPEN pages replaces both the system and the data: shown, never counted
    assert s.status == NOT_REPRODUCIBLE and s.here and all(m.status == NOT_REPRODUCIBLE and not m.counts for m in s.here)


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


# ------------------------------------------------------------------ issue 34: statuses follow from provenance

def _invented(rep, claims, **fields):
    c = dict(claims.iloc[0])
    c |= {"kind": "arithmetic", "refs": "", "check": "", "measured_as": "", "unchecked": "", "needs": ""} | fields
    return c


def test_one_invented_claim_per_status(rep, claims):
    """One invented claim per status the rules can give without a run of the paper's components, each from its
    provenance: what was measured here, what was replaced, and whether a check could have failed."""
    pseudo = {"numbers": {"ocr_pass_rate": 0.7, "ocr_pass_pages": 110, "candidates": 158, "ocr_threshold": 0.85},
              "params": {"ocr_threshold": 0.85}, "components": {"ratings_source": "simulated"}}
    recorded = _run([_row("skeleton", dtw=0.1, chamfer=0.05, ar=0.5, style=0.2)], "IAM-OnDB",
                    data="recorded UNIPEN pages composed here")
    cases = {
        # a rate beside the counts it is the ratio of restates the paper; the rate measured here with stand-ins
        STAND_IN: _invented(rep, claims, refs="ocr_pass_pages candidates ocr_pass_rate",
                            check="ocr_pass_pages / candidates ~= ocr_pass_rate within 0.005",
                            measured_as="ocr_pass_rate=pseudo:ocr_pass_rate"),
        # the same restatement with nothing measured: stated, never consistent
        STATED: _invented(rep, claims, refs="ocr_pass_pages candidates ocr_pass_rate",
                          check="ocr_pass_pages / candidates ~= ocr_pass_rate within 0.005"),
        # the funnel's order holds for any funnel; a relation between different numbers that could fail counts
        CONSISTENT: _invented(rep, claims, refs="benchmark_pages ocr_pass_pages candidates rater_agreement",
                              check="benchmark_pages <= ocr_pass_pages <= candidates and "
                                    "benchmark_pages / ocr_pass_pages <= rater_agreement"),
        # a stand-in system on stand-in data measures neither: not reproducible here, the numbers shown uncounted
        NOT_REPRODUCIBLE: _invented(rep, claims, kind="number",
                                    refs="inksight_iam_dtw inksight_iam_chamfer inksight_iam_ar inksight_iam_style"),
        SET_NOT_MEASURED: _invented(rep, claims, kind="number", refs="ocr_threshold",
                                    measured_as="ocr_threshold=pseudo:ocr_threshold"),
    }
    got = {want: claim_status(c, rep, [recorded], pseudo, as_paper=AS_PAPER) for want, c in cases.items()}
    assert {want: s.status for want, s in got.items()} == {want: want for want in cases}
    assert "only restates" in got[STAND_IN].reason and "only restates" in got[CONSISTENT].reason
    assert got[NOT_REPRODUCIBLE].here and not any(m.counts for m in got[NOT_REPRODUCIBLE].here)
    assert "do not count" in got[NOT_REPRODUCIBLE].reason
    # the funnel clause alone checks nothing: without the relation that could fail, no "consistent"
    only_order = _invented(rep, claims, refs="benchmark_pages ocr_pass_pages candidates",
                           check="benchmark_pages <= ocr_pass_pages <= candidates")
    assert claim_status(only_order, rep, [], as_paper={}).status == STATED
    # the paper's system on stand-in data still measures its system: measured with stand-ins
    gem = _run([_row("gemini-3.1-pro", dtw=0.1)], "IAM-OnDB", data="recorded UNIPEN pages composed here")
    s = claim_status(claims.loc["gemini_iamondb"], rep, [gem], as_paper=AS_PAPER)
    assert s.status == STAND_IN
