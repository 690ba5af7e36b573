"""The paper's claims (data/paper/claims.csv) and each claim's status against our runs, by the rules of
:data:`STATUS_RULES`; the checks are written in :mod:`~inkground_lib.analysis.check_language`, the runs'
conditions read by :mod:`~inkground_lib.analysis.run_conditions` and each of our numbers' origin (measured, or
set by us) by :mod:`~inkground_lib.analysis.origins`: only measurements count towards a status."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from inkground_lib.analysis.check_language import (
    CheckResult,
    ClaimsError,
    check_names,
    evaluate_check,
    format_number,
    note_expressions,
    render_note,
    split_restatements,
)
from inkground_lib.analysis.derenderer_modes import summary_mode
from inkground_lib.analysis.origins import (
    IDENTITY,
    MEASURED_ON_PAGES,
    MEASUREMENT,
    REPLACED,
    Origin,
    pseudo_origins,
    style_origins,
)
from inkground_lib.analysis.run_conditions import PAPER_CONDITIONS, RunInfo, unmet_conditions
from inkground_lib.core.defaults import KEEP_SCORE
from inkground_lib.core.metric_table import metric_of_label
from inkground_lib.core.paper import CLAIMS_CSV, paper_numbers
from inkground_lib.core.registry import LiveMapping
from inkground_lib.evaluation.systems.registry import adapters, load_registry

CLAIM_COLUMNS = ("claim_id", "section", "sentence", "about", "kind", "refs", "check", "unchecked", "measured_as", "needs",
                 "note")
"""about: what of the sentence the claim is about, where several claims share one sentence (each says a different
thing; empty otherwise); unchecked: what of the claim the check does not reach (empty: the check covers the
claim); note: text whose numbers are written as {{expression}} or {{expression:format}} over reported ids and
computed (never typed)."""


KINDS = ("number", "ranking", "arithmetic", "qualitative")


SOURCES = ("stats", "pseudo", "facts")


REPRODUCED = "reproduced"


INCONCLUSIVE = "measured, inconclusive"


NOT_REPRODUCED = "not reproduced"


STAND_IN = "stand-ins shown, not a test"


CONSISTENT = "consistent"


PARTLY_CONSISTENT = "partly consistent"


INCONSISTENT = "inconsistent"


STATED = "stated, not checkable"


SET_NOT_MEASURED = "set, not measured"


NOT_REPRODUCIBLE = "not reproducible here"


SET_TO_PAPER = "set to the paper's value"
"""Not a claim status: how a number we set that equals the paper's is described."""


TOLERANCE = 0.10
"""A reproduction agrees when the paper's value lies inside our 95% interval and the interval's half-width is
at most this share of the paper's value."""


STATUS_RULES = {
    INCONSISTENT: "a check over the paper's own numbers fails: they contradict the claim",
    REPRODUCED: "our value, measured with the paper's components on the paper's data (every recorded condition "
                "matches), agrees: the paper's value lies inside our 95% interval and the interval's half-width is "
                f"at most {TOLERANCE:.0%} of the paper's value; a ranking claim holds when recomputed from our numbers",
    INCONCLUSIVE: "measured under the paper's conditions, but the 95% interval is wider than the tolerance, or only "
                  "some of the claim's numbers were measured (the rest are named)",
    NOT_REPRODUCED: "measured under the paper's conditions and it disagrees: the paper's value lies outside our 95% "
                    "interval, or the ranking fails on our numbers (both values shown)",
    CONSISTENT: "a check over the paper's own numbers, relating different numbers (not one number stated twice), "
                "that could have failed and did not",
    PARTLY_CONSISTENT: "such a check holds for the parts the paper's numbers reach; the unchecked parts are named",
    STAND_IN: "the same quantity measured here with named stand-ins (our own pages, derenderer, OCR engine or "
              "simulated raters) and shown beside the paper's value: not comparable with it, so it tests nothing "
              "and this status cannot fail; it only says that no rule above applied and something was measured; "
              "numbers we set do not count",
    NOT_REPRODUCIBLE: "a measurable claim that nothing here measured: it needs data, weights or keys (named)",
    SET_NOT_MEASURED: "our numbers for it are ones we set (a parameter, a generator's target, a seeded split, the "
                      "pages a run was asked for), not measurements, and no check over the paper's numbers tests it",
    STATED: "a descriptive claim that no number of the paper can test and nothing here measures (our numbers for "
            "it, if any, follow by arithmetic from the data we chose)",
}
"""The status vocabulary: status -> the rule that assigns it, in the order :func:`claim_status` applies the rules
(the first that applies wins); defined once, the reviewers' page shows it."""


STATUSES = tuple(STATUS_RULES)


def stand_in_systems() -> dict[str, tuple[str, ...]]:
    """Paper system -> our systems that stand in for it offline: the adapters whose card says so (``stands_in``:
    the skeleton and the tracer for InkSight), in the registry's order.

    >>> stand_in_systems()
    {'InkSight': ('skeleton', 'tracer')}
    """
    out: dict[str, tuple[str, ...]] = {}
    for name, a in adapters().items():
        if a.card.stands_in:
            out[a.card.stands_in] = out.get(a.card.stands_in, ()) + (name,)
    return out


STAND_IN_SYSTEMS = LiveMapping(stand_in_systems)
"""Paper system -> our offline systems that stand in for it (:func:`stand_in_systems`: the cards, read when
asked)."""


PAPER_DATASET_ROLE = {"inkGround": "benchmark", "IAM-OnDB": "recorded"}
"""Paper dataset -> the role of our stand-in data: pseudo-label references (benchmark set) or recorded truth."""


def load_claims(path: str | Path | None = None, reported: pd.DataFrame | None = None) -> pd.DataFrame:
    """claims.csv as a DataFrame (empty strings for empty fields), validated: columns, unique ids, kinds,
    every ref and every check name an id of ``reported`` (default: data/paper/reported.csv), checks
    parseable, measured_as entries well formed."""
    path = Path(path or CLAIMS_CSV)
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    for optional in ("unchecked", "about"):
        if optional not in df.columns:
            df[optional] = ""
    missing = [c for c in CLAIM_COLUMNS if c not in df.columns]
    if missing:
        raise ClaimsError(f"{path}: missing column(s) {missing}")
    if not df["claim_id"].is_unique:
        raise ClaimsError(f"{path}: duplicate claim_id {df['claim_id'][df['claim_id'].duplicated()].tolist()}")
    shared = df.groupby("sentence")["about"].agg(list)
    for sentence, abouts in shared[shared.apply(len) > 1].items():
        if "" in abouts or len(set(abouts)) < len(abouts):
            ids_ = df.loc[df["sentence"] == sentence, "claim_id"].tolist()
            raise ClaimsError(f"{path}: claims {ids_} share a sentence: field about must tell each apart")
    reported = paper_numbers() if reported is None else reported
    ids = set(reported.index)
    for _, r in df.iterrows():
        where = f"{path}: claim {r['claim_id']}"
        if r["kind"] not in KINDS:
            raise ClaimsError(f"{where}: field kind: {r['kind']!r} is not one of {KINDS}")
        if not r["sentence"].strip():
            raise ClaimsError(f"{where}: field sentence is empty")
        bad = [i for i in r["refs"].split() if i not in ids]
        if bad:
            raise ClaimsError(f"{where}: field refs: {bad} not in reported.csv")
        if r["check"].strip():
            names = check_names(r["check"], where)
            bad = sorted(n for n in names if n not in ids)
            if bad:
                raise ClaimsError(f"{where}: field check: {bad} not in reported.csv")
        parse_measured_as(r["measured_as"], where)
        for expr, _ in note_expressions(r["note"]) + note_expressions(r["unchecked"]):
            bad = sorted(n for n in check_names(f"{expr} == 0", where) if n not in ids)
            if bad:
                raise ClaimsError(f"{where}: field note: {bad} not in reported.csv")
        if r["unchecked"].strip() and not r["check"].strip():
            raise ClaimsError(f"{where}: field unchecked: names unchecked parts of a claim without a check")
    return df


def parse_measured_as(text: str, where: str = "measured_as") -> list[tuple[str, str, str]]:
    """``name=source:key name=source:key`` -> [(name, source, key)]."""
    out = []
    for tok in text.split():
        m = re.fullmatch(r"([A-Za-z_]\w*)=(\w+):(\w+)", tok)
        if not m or m.group(2) not in SOURCES:
            raise ClaimsError(f"{where}: field measured_as: {tok!r} is not name=source:key with source in {SOURCES}")
        out.append(m.groups())
    return out


def reported_values(reported: pd.DataFrame) -> dict[str, float]:
    return {str(k): float(v) for k, v in reported["value"].items()}


def check_claims(claims: pd.DataFrame, reported: pd.DataFrame) -> pd.DataFrame:
    """Every claim's check over the reported numbers: claim_id, kind, check_ok (True / False / None),
    check_detail."""
    vals = reported_values(reported)
    rows = []
    for _, r in claims.iterrows():
        res = evaluate_check(r["check"], vals)
        rows.append({"claim_id": r["claim_id"], "kind": r["kind"], "sentence": r["sentence"],
                     "check_ok": res.ok, "check_detail": res.detail})
    return pd.DataFrame(rows)


def paper_system_names(registry: dict | None = None) -> dict[str, str]:
    """Our system name -> the paper's name for it (systems.yaml ``reported_as``)."""
    if registry is None:
        try:
            registry = load_registry()
        except Exception:  # a broken user registry must not break the page
            registry = {}
    return {k: v.get("reported_as") for k, v in registry.items() if v.get("reported_as")}


@dataclass
class Measurement:
    """One number on our side of a claim. ``status``: for a measurement, what it is for this one number
    (REPRODUCED ... STAND_IN); for a number we set, SET_NOT_MEASURED, its ``origin`` saying how it was set."""

    status: str
    text: str
    ours: float = float("nan")
    paper: float = float("nan")
    ref: str = ""  # the reported id
    origin: Origin = MEASURED_ON_PAGES

    @property
    def counts(self) -> bool:
        """True for a measurement: only measurements count towards a claim's status."""
        return self.origin.counts


RUN_MEASUREMENT = Origin(MEASUREMENT, "measured in a section-03 run")

ALL_REPLACED = Origin(REPLACED, "a stand-in system on stand-in data: it measures neither the paper's system nor its "
                                "data, so it does not count")
"""The origin of a per-system score measured here with the system and the data both replaced."""


def metric_key(label: str) -> str | None:
    """The paper's metric label ('Style (restated in the trade-off)' too) -> our column name, or None."""
    return metric_of_label(str(label).split(" (")[0].strip())


def is_score_ref(row: pd.Series) -> bool:
    """A per-system score of the paper (one system, one metric), i.e. a number a run can measure."""
    return bool(metric_key(row["metric"])) and isinstance(row["system"], str) and "VLMs" not in row["system"]


def score_verdict(paper: float, lo: float, hi: float, tolerance: float = TOLERANCE) -> str:
    """The rule for one number measured under the paper's conditions: the paper's value outside our 95%
    interval -> not reproduced; inside and the half-width within ``tolerance`` x |paper| -> reproduced;
    inside but wider -> inconclusive (also without an interval)."""
    if any(isinstance(x, float) and math.isnan(x) for x in (lo, hi)):
        return INCONCLUSIVE
    if not lo <= paper <= hi:
        return NOT_REPRODUCED
    return REPRODUCED if (hi - lo) / 2 <= tolerance * abs(paper) else INCONCLUSIVE


def _score_measurements(pid: str, row: pd.Series, runs: Sequence[RunInfo], as_paper: dict[str, str],
                        tolerance: float = TOLERANCE) -> list[Measurement]:
    """What we measured for one per-system score of the paper: under the paper's conditions (reproduced /
    inconclusive / not reproduced by :func:`score_verdict`) or with stand-ins (the same system or its
    stand-in, on data of the same role scored against the same kind of reference)."""
    if not is_score_ref(row):
        return []
    metric, system, dataset = metric_key(row["metric"]), row["system"], row["dataset"]
    paper_v = float(row["value"])
    want = PAPER_CONDITIONS.get(dataset, {})
    out = []
    for run in runs:
        for _, r in run.summary.iterrows():
            same_system = as_paper.get(str(r["system"])) == system
            stand_in = str(r["system"]) in STAND_IN_SYSTEMS.get(system, ())
            if not (same_system or stand_in) or metric not in r:
                continue
            v = float(r[metric])
            lo = float(r.get(f"{metric}_lo", float("nan")))
            hi = float(r.get(f"{metric}_hi", float("nan")))
            ci = "" if math.isnan(lo) else f" [{lo:.3f}, {hi:.3f}]"
            unmet = unmet_conditions(run.conditions, dataset)
            if same_system and not unmet:
                verdict = score_verdict(paper_v, lo, hi, tolerance)
                half = (hi - lo) / 2 if not math.isnan(lo) else float("nan")
                out.append(Measurement(verdict, f"{pid}: ours {v:.3f}{ci} (half-width {half:.3f}, tolerance "
                                       f"{tolerance * abs(paper_v):.3f}) vs paper {paper_v:.3f}: the paper's value is "
                                       f"{'inside' if lo <= paper_v <= hi else 'outside'} our 95% interval; "
                                       f"{r['system']} on {run.dataset}", v, paper_v, pid, RUN_MEASUREMENT))
            elif run.role == PAPER_DATASET_ROLE.get(dataset) and run.conditions.get("reference") == want.get("reference"):
                who = (f"{r['system']} (the {r['system']} derenderer stands in for {system})" if stand_in
                       else str(r["system"]))
                text = (f"{pid}: {who} on {run.dataset}: {row['metric']} {v:.3f}{ci} (paper {paper_v:.3f}); "
                        f"stand-ins: {'; '.join(unmet)}")
                if not same_system and any(u.startswith("data ") for u in unmet):
                    # another system on other data: neither the paper's system nor its data was measured
                    out.append(Measurement(NOT_REPRODUCIBLE, text + "; " + ALL_REPLACED.how, v, paper_v, pid,
                                           ALL_REPLACED))
                else:
                    out.append(Measurement(STAND_IN, text, v, paper_v, pid, RUN_MEASUREMENT))
    return out


def _source_values(source: str, key: str, runs: Sequence[RunInfo], pseudo: dict | None,
                   stats: Mapping[str, dict] | None) -> list[tuple[str, float, Origin]]:
    """(where, value, origin) of one measured_as entry. The origin is read from the records that made the value
    (:mod:`~inkground_lib.analysis.origins`): a dataset's statistics carry theirs under "origins"
    (:func:`~inkground_lib.analysis.origins.with_origins`; statistics without it count as measured on the
    pages), a pseudo-label run's from its summary's params and components, a writer classifier's from its facts."""
    out = []
    if source == "stats" and stats:
        for name, st in stats.items():
            if key in st and key != "origins":
                origin = (st.get("origins") or {}).get(key, MEASURED_ON_PAGES)
                out.append((f"on dataset {name} (our pages)", float(st[key]), origin))
    elif source == "pseudo" and pseudo:
        nums = dict(pseudo.get("numbers", {}))
        if key == "keep_score":
            nums["keep_score"] = KEEP_SCORE
        if key in nums and nums[key] is not None:
            comp = pseudo.get("components", {})
            origin = pseudo_origins(pseudo).get(key, Origin(MEASUREMENT, "measured in the pseudo-label run"))
            out.append((f"in the pseudo-label run on {Path(str(pseudo.get('params', {}).get('candidates', '?'))).name} "
                        f"(derenderer {summary_mode(pseudo)}, OCR {comp.get('ocr_engine', '?')}, ratings "
                        f"{comp.get('ratings_source', '?')})", float(nums[key]), origin))
    elif source == "facts":
        for run in runs:
            if run.reference != "reference":
                continue
            st = run.facts.get("style") or {}
            vals = dict(st)
            if st.get("n_train") is not None and st.get("n_test") is not None and (st["n_train"] + st["n_test"]):
                vals["train_share"] = st["n_train"] / (st["n_train"] + st["n_test"])
            if key in vals and vals[key] is not None:
                origin = style_origins(st, run.dataset).get(key, Origin(MEASUREMENT, "measured by the classifier"))
                out.append((f"in the writer classifier of {run.dataset}", float(vals[key]), origin))
    return out


@dataclass
class ClaimStatus:
    claim_id: str
    status: str
    check: CheckResult
    here: list = field(default_factory=list)  # Measurement
    needs: str = ""
    reason: str = ""  # why this status (the rule's outcome in words)
    ours_check: CheckResult | None = None  # a ranking recomputed from our numbers


def _combine_scores(score_refs: Sequence[str], same: Sequence[Measurement]) -> tuple[str, str]:
    """One status from the per-number verdicts measured under the paper's conditions."""
    measured = {m.ref for m in same}
    if any(m.status == NOT_REPRODUCED for m in same):
        bad = sorted({m.ref for m in same if m.status == NOT_REPRODUCED})
        return NOT_REPRODUCED, f"the paper's value lies outside our 95% interval for {', '.join(bad)}"
    missing = [r for r in score_refs if r not in measured]
    if missing:
        return INCONCLUSIVE, f"not measured here: {', '.join(missing)}"
    if all(m.status == REPRODUCED for m in same):
        return REPRODUCED, "every number agrees within the tolerance"
    wide = sorted({m.ref for m in same if m.status == INCONCLUSIVE})
    return INCONCLUSIVE, f"95% interval wider than the tolerance for {', '.join(wide)}"


def _value_text(name: str, reported: pd.DataFrame, v: float, where: str, origin: Origin) -> str:
    """One of our numbers in words: the paper's label for the quantity, its value, where it comes from and, for a
    number we set, how ("writer classes of the style classifier: 41 in the writer classifier of synth-benchmark;
    arithmetic identity: one class per writer ... (paper 537)")."""
    label = str(reported.loc[name, "metric"]) if name in reported.index else name.replace("_", " ")
    if label.replace(" ", "_") != name:
        label = f"{label} ({name})"
    paper_v = float(reported.loc[name, "value"]) if name in reported.index else float("nan")
    if origin.counts:
        ptxt = f" (paper {format_number(paper_v)})" if not math.isnan(paper_v) else ""
        why = f"; not comparable with the paper's: {origin.not_comparable}" if origin.not_comparable else ""
        return f"{label}: {format_number(v)} {where}{ptxt}{why}"
    if math.isnan(paper_v):
        ptxt = ""
    elif math.isclose(v, paper_v, rel_tol=1e-9):
        ptxt = f"; {SET_TO_PAPER} ({format_number(paper_v)})"
    else:
        ptxt = f" (paper {format_number(paper_v)})"
    return f"{label}: {format_number(v)} {where}; {origin.kind}: {origin.how}{ptxt}"


def claim_status(claim: Mapping, reported: pd.DataFrame, runs: Sequence[RunInfo], pseudo: dict | None = None,
                 stats: Mapping[str, dict] | None = None, as_paper: dict[str, str] | None = None,
                 tolerance: float = TOLERANCE) -> ClaimStatus:
    """The status of one claim by the rules of :data:`STATUS_RULES`, in this order: its check over the
    paper's numbers fails -> inconsistent; numbers measured under the paper's conditions -> reproduced /
    inconclusive / not reproduced (a ranking claim: its check recomputed from our numbers); its check holds,
    not counting clauses that only restate one number (``a == b``, see
    :func:`~inkground_lib.analysis.check_language.split_restatements`) -> consistent, or partly consistent when
    the claim names unchecked parts; stand-in measurements -> stand-ins shown, not a test; a per-system score nothing
    measured -> not reproducible here; numbers we set (a setting, a seeded split, a requested count) -> set, not
    measured; else stated, not checkable. Each of our numbers carries its origin
    (:mod:`~inkground_lib.analysis.origins`); only measurements count."""
    as_paper = paper_system_names() if as_paper is None else as_paper
    vals = reported_values(reported)
    chk = evaluate_check(claim["check"], vals)
    counted_check, restated = split_restatements(str(claim["check"]))
    counted = evaluate_check(counted_check, vals)
    here: list[Measurement] = []
    score_refs = []
    for pid in str(claim["refs"]).split():
        row = reported.loc[pid]
        if is_score_ref(row):
            score_refs.append(pid)
        here += _score_measurements(pid, row, runs, as_paper, tolerance)
    for name, source, key in parse_measured_as(claim["measured_as"], f"claim {claim['claim_id']}"):
        paper_v = float(reported.loc[name, "value"]) if name in reported.index else float("nan")
        for where, v, origin in _source_values(source, key, runs, pseudo, stats):
            status = STAND_IN if origin.counts else SET_NOT_MEASURED
            here.append(Measurement(status, _value_text(name, reported, v, where, origin), v, paper_v, name, origin))
    measured = [m for m in here if m.counts]
    same = [m for m in measured if m.status in (REPRODUCED, INCONCLUSIVE, NOT_REPRODUCED)]
    unchecked = render_note(str(claim.get("unchecked", "") or "").strip(), vals)
    restates = (f"; {' and '.join(restated)} only restates the paper (one number stated twice, a rate beside the "
                f"counts it is the ratio of, or the funnel's order, which any funnel has): it checks nothing"
                if restated else "")
    ours_chk = None
    if chk.ok is False:
        status, reason = INCONSISTENT, "the check over the paper's own numbers fails"
    elif same and claim["kind"] == "ranking" and str(claim["check"]).strip():
        ours = {m.ref: m.ours for m in same}
        missing = sorted(check_names(claim["check"]) - set(ours))
        if missing:
            status, reason = INCONCLUSIVE, f"the ranking needs numbers not measured here: {', '.join(missing)}"
        else:
            ours_chk = evaluate_check(claim["check"], ours)
            status = REPRODUCED if ours_chk.ok else NOT_REPRODUCED
            reason = f"the ranking recomputed from our numbers {'holds' if ours_chk.ok else 'fails'}: {ours_chk.detail}"
    elif same:
        status, reason = _combine_scores(score_refs, same)
    elif counted.ok:
        status = PARTLY_CONSISTENT if unchecked else CONSISTENT
        reason = (f"the check holds; unchecked: {unchecked}" if unchecked else "the check holds") + restates
        replaced = sorted({m.ref for m in here if m.origin.kind == REPLACED})
        if replaced:
            reason += (f"; over the paper's own numbers only: the numbers shown for {', '.join(replaced)} come from "
                       f"a stand-in system on stand-in data and do not count")
    elif measured:
        status, reason = STAND_IN, "measured only with stand-ins" + restates
        n_set = len(here) - len(measured)
        if n_set:
            reason += f" ({n_set} of our numbers for it are set, not measured, and do not count)"
    elif score_refs:
        status, reason = NOT_REPRODUCIBLE, f"nothing here measured {', '.join(score_refs)}"
        replaced = sorted({m.ref for m in here if m.origin.kind == REPLACED})
        if replaced:
            reason += (f" (the numbers shown for {', '.join(replaced)} replace the system and the data, the paper's "
                       f"OCR and writer classifier too: they do not count)")
    elif any(m.origin.kind != IDENTITY for m in here):
        kinds = sorted({m.origin.kind for m in here})
        status, reason = SET_NOT_MEASURED, (f"every number of ours for it is set, not measured ({', '.join(kinds)}), "
                                            f"and no check over the paper's numbers tests it" + restates)
    elif here:
        status, reason = STATED, ("no number of the paper tests it, and our numbers for it follow by arithmetic "
                                  "from the data we chose" + restates)
    else:
        status, reason = STATED, "no number of the paper tests it and nothing here measures it" + restates
    return ClaimStatus(claim["claim_id"], status, chk, here, claim.get("needs", ""), reason, ours_chk)
