"""The paper's claims: the check language over reported.csv and each claim's status against our runs."""

from __future__ import annotations

import ast
import json
import math
import operator
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import pandas as pd

from inkground_lib.core.defaults import N_BOOT, PAPER_METRIC
from inkground_lib.core.paper import CLAIMS_CSV, paper_numbers

CLAIM_COLUMNS = ("claim_id", "section", "sentence", "kind", "refs", "check", "measured_as", "needs", "note")


KINDS = ("number", "ranking", "arithmetic", "qualitative")


SOURCES = ("stats", "pseudo", "facts")


INCONSISTENT = "inconsistent with the paper's own numbers"


REPRODUCED = "reproduced here"


PARTLY_REPRODUCED = "partly reproduced here"


CONSISTENT = "consistent with the paper's own numbers"


STAND_IN = "measured here with stand-ins: not comparable"


NOT_REPRODUCIBLE = "not reproducible here"


STATUSES = (INCONSISTENT, REPRODUCED, PARTLY_REPRODUCED, CONSISTENT, STAND_IN, NOT_REPRODUCIBLE)


STAND_IN_SYSTEMS = {"InkSight": ("skeleton", "the skeleton derenderer stands in for InkSight")}
"""Paper system -> (our offline stand-in system, why)."""




PAPER_DATASET_ROLE = {"inkGround": "benchmark", "IAM-OnDB": "recorded"}
"""Paper dataset -> the role of our stand-in data: pseudo-label references (benchmark set) or recorded truth."""


class ClaimsError(ValueError):
    """claims.csv or a check that cannot be used (names the claim and the field)."""


def load_claims(path: str | Path | None = None, reported: pd.DataFrame | None = None) -> pd.DataFrame:
    """claims.csv as a DataFrame (empty strings for empty fields), validated: columns, unique ids, kinds,
    every ref and every check name an id of ``reported`` (default: data/paper/reported.csv), checks
    parseable, measured_as entries well formed."""
    path = Path(path or CLAIMS_CSV)
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in CLAIM_COLUMNS if c not in df.columns]
    if missing:
        raise ClaimsError(f"{path}: missing column(s) {missing}")
    if not df["claim_id"].is_unique:
        raise ClaimsError(f"{path}: duplicate claim_id {df['claim_id'][df['claim_id'].duplicated()].tolist()}")
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


@dataclass
class CheckResult:
    ok: bool | None  # None: no check
    detail: str


_AGG = re.compile(r"^(max|min)\s+over\s+\{([^}]*)\}\s+is\s+([A-Za-z_]\w*)$")


_APPROX = re.compile(r"^(.+?)~=(.+?)\s+within\s+([0-9.eE+-]+)$")


_BIN = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


_CMP = {ast.Lt: ("<", operator.lt), ast.LtE: ("<=", operator.le), ast.Gt: (">", operator.gt),
        ast.GtE: (">=", operator.ge), ast.Eq: ("==", None), ast.NotEq: ("!=", None)}


def _clauses(check: str) -> list[str]:
    return [c.strip() for c in re.split(r"\s+and\s+", check.strip()) if c.strip()]


def check_names(check: str, where: str = "check") -> set[str]:
    """The reported ids a check uses (raises ClaimsError when it does not parse)."""
    names: set[str] = set()
    for c in _clauses(check):
        m = _AGG.match(c)
        if m:
            names |= {n.strip() for n in m.group(2).split(",") if n.strip()} | {m.group(3)}
            continue
        m = _APPROX.match(c)
        parts = [m.group(1), m.group(2)] if m else [c]
        for p in parts:
            try:
                tree = ast.parse(p.strip(), mode="eval")
            except SyntaxError as e:
                raise ClaimsError(f"{where}: field check: cannot parse {c!r}: {e.msg}") from None
            _validate(tree.body, c, where)
            names |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id not in ("min", "max")}
    return names


def _validate(node, clause, where):
    ok = (ast.Compare, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Call, ast.Load, ast.USub, ast.UAdd,
          *tuple(_BIN), *tuple(_CMP))
    for n in ast.walk(node):
        if not isinstance(n, ok):
            raise ClaimsError(f"{where}: field check: {type(n).__name__} not allowed in {clause!r}")
        if isinstance(n, ast.Constant) and not isinstance(n.value, (int, float)):
            raise ClaimsError(f"{where}: field check: only numbers allowed as literals in {clause!r}")
        if isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id in ("min", "max") and not n.keywords):
            raise ClaimsError(f"{where}: field check: only min(...) / max(...) calls allowed in {clause!r}")


def format_number(v: float) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    v = float(v)
    if v.is_integer() and abs(v) >= 1:
        return f"{int(v):,}"
    return f"{v:.4g}" if abs(v) < 1 else f"{v:.4g}"


def _arith(node, values: Mapping[str, float]) -> float:
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Name):
        if node.id not in values:
            raise ClaimsError(f"check: no value for {node.id!r}")
        return float(values[node.id])
    if isinstance(node, ast.UnaryOp):
        v = _arith(node.operand, values)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        a, b = _arith(node.left, values), _arith(node.right, values)
        if isinstance(node.op, ast.Div) and b == 0:
            return float("nan")
        return _BIN[type(node.op)](a, b)
    if isinstance(node, ast.Call):
        args = [_arith(a, values) for a in node.args]
        return (min if node.func.id == "min" else max)(args)
    raise ClaimsError(f"check: cannot evaluate {ast.dump(node)}")


def _show(node, values) -> str:
    """An expression with its value: 'ocr_pass_pages / candidates = 777 / 2,984 = 0.2604'."""
    src = ast.unparse(node)
    v = _arith(node, values)
    if isinstance(node, ast.Constant):
        return format_number(v)
    if isinstance(node, ast.Name):
        return f"{src} = {format_number(v)}"

    class Sub(ast.NodeTransformer):
        def visit_Name(self, n):
            if n.id in values:
                return ast.Constant(values[n.id])
            return n

    filled = ast.unparse(Sub().visit(ast.parse(src, mode="eval")).body)
    filled = re.sub(r"\d+\.\d+|\d+", lambda m: format_number(float(m.group(0))), filled)
    return f"{src} = {filled} = {format_number(v)}"


def evaluate_check(check: str, values: Mapping[str, float]) -> CheckResult:
    """Evaluate a check (module docstring) over ``values`` (reported id -> number). Returns ok (True /
    False; None for an empty check) and a detail text with the numbers used."""
    if not str(check).strip():
        return CheckResult(None, "")
    oks, details = [], []
    for c in _clauses(check):
        m = _AGG.match(c)
        if m:
            names = [n.strip() for n in m.group(2).split(",") if n.strip()]
            vals = {n: float(values[n]) for n in names}
            best = (max if m.group(1) == "max" else min)(vals.values())
            ok = m.group(3) in vals and math.isclose(vals[m.group(3)], best, rel_tol=1e-12, abs_tol=0)
            listing = ", ".join(f"{n} {format_number(v)}" for n, v in vals.items())
            winners = [n for n, v in vals.items() if v == best]
            details.append(f"{m.group(1)} of {{{listing}}} is {', '.join(winners)} ({format_number(best)})"
                           + ("" if ok else f", not {m.group(3)}"))
            oks.append(ok)
            continue
        m = _APPROX.match(c)
        if m:
            a = ast.parse(m.group(1).strip(), mode="eval").body
            b = ast.parse(m.group(2).strip(), mode="eval").body
            tol = float(m.group(3))
            va, vb = _arith(a, values), _arith(b, values)
            ok = abs(va - vb) <= tol + 1e-12
            details.append(f"{_show(a, values)} vs {_show(b, values)}: |difference| {abs(va - vb):.4g} "
                           f"{'<=' if ok else '>'} {tol:g}")
            oks.append(ok)
            continue
        node = ast.parse(c, mode="eval").body
        if not isinstance(node, ast.Compare):
            raise ClaimsError(f"check: clause {c!r} is not a comparison, an approximation or an extreme")
        left = node.left
        parts = [_show(left, values)]
        ok = True
        va = _arith(left, values)
        for op, right in zip(node.ops, node.comparators):
            vb = _arith(right, values)
            sym, fn = _CMP[type(op)]
            if sym == "==":
                r = math.isclose(va, vb, rel_tol=1e-9, abs_tol=1e-12)
            elif sym == "!=":
                r = not math.isclose(va, vb, rel_tol=1e-9, abs_tol=1e-12)
            else:
                r = bool(fn(va, vb))
            ok = ok and r
            parts += [sym, _show(right, values)]
            va = vb
        details.append(f"{' '.join(parts)}: {'true' if ok else 'false'}")
        oks.append(ok)
    return CheckResult(all(oks), "; ".join(details))


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


@dataclass
class RunInfo:
    """One section-03 run (one reference) as the reviewers' page sees it."""

    run_dir: Path
    reference: str
    dataset: str
    summary: pd.DataFrame
    facts: dict
    data_identity: str | None  # "inkGround" / "IAM-OnDB" when the run scored the paper's data, else None
    role: str  # "benchmark" (pseudo-label references) or "recorded" (recorded truth)


def _manifest(dataset_dir) -> dict:
    try:
        return json.loads((Path(dataset_dir) / "manifest.json").read_text("utf-8"))
    except (OSError, ValueError, TypeError):
        return {}


def data_identity(facts: dict, dataset_dir=None) -> tuple[str | None, str]:
    """(the paper dataset this run's data IS, or None; the role of the data). Identity comes only from the
    dataset's manifest (facts "dataset_dir" or ``dataset_dir``): kind "inkground" is inkGround; a recorded
    dataset built from IAM-OnDB sources is IAM-OnDB. Without a manifest the data is never taken for the
    paper's; the role falls back to the dataset name."""
    d = dataset_dir or facts.get("dataset_dir")
    m = _manifest(d) if d else {}
    kind = m.get("kind") or facts.get("dataset_kind")
    sources = [s.get("kind") for s in (m.get("meta") or {}).get("sources", []) if isinstance(s, dict)]
    ident = None
    if kind == "inkground":
        ident = "inkGround"
    elif kind == "recorded" and sources and all(s == "iamondb" for s in sources):
        ident = "IAM-OnDB"
    if kind in ("recorded",) or (kind is None and "recorded" in str(facts.get("dataset", "")).lower()):
        role = "recorded"
    else:
        role = "benchmark"
    return ident, role


def load_run_infos(eval_runs: Iterable, references: Sequence[str] = ("reference", "true"),
                   n_boot: int | None = None) -> list[RunInfo]:
    """RunInfos of section-03 run folders (both references where present). The summary is the run's
    summary-<reference>.csv (recomputed from the scores with ``n_boot`` when given or when absent)."""
    from inkground_lib.analysis.runs import load_run
    from inkground_lib.evaluation.scores import summarize

    out = []
    for d in eval_runs:
        d = Path(d)
        for ref in references:
            if not (d / f"facts-{ref}.json").is_file() or not (d / f"scores-{ref}.csv").is_file():
                continue
            run = load_run(d, ref)
            summ = run.summary
            if summ is None or n_boot is not None or "ar" not in summ.columns:
                summ = summarize(run.scores, n_boot=n_boot or N_BOOT, seed=int(run.settings.get("seed", 0)))
                meta = run.scores.drop_duplicates("system").set_index("system")
                summ["label"] = summ["system"].map(meta["label"])
                summ["kind"] = summ["system"].map(meta["kind"])
            ident, role = data_identity(run.facts)
            out.append(RunInfo(d, ref, run.dataset, summ, run.facts, ident, role))
    return out


def paper_system_names(registry: dict | None = None) -> dict[str, str]:
    """Our system name -> the paper's name for it (systems.yaml ``reported_as``)."""
    if registry is None:
        from inkground_lib.evaluation.systems.registry import load_registry

        try:
            registry = load_registry()
        except Exception:  # a broken user registry must not break the page
            registry = {}
    return {k: v.get("reported_as") for k, v in registry.items() if v.get("reported_as")}


@dataclass
class Measurement:
    status: str  # REPRODUCED / STAND_IN
    text: str
    ours: float = float("nan")
    paper: float = float("nan")


def _score_measurements(pid: str, row: pd.Series, runs: Sequence[RunInfo], as_paper: dict[str, str]) -> list[Measurement]:
    """What we measured for one per-system score of the paper."""
    metric = PAPER_METRIC.get(str(row["metric"]))
    system = row["system"]
    if metric is None or not isinstance(system, str) or "VLMs" in system:
        return []
    paper_v = float(row["value"])
    ref_wanted = "reference" if row["dataset"] == "inkGround" else "true"
    out = []
    for run in runs:
        s = run.summary
        for _, r in s.iterrows():
            ours_paper_name = as_paper.get(str(r["system"]))
            same_system = ours_paper_name == system
            stand_in = STAND_IN_SYSTEMS.get(system, (None,))[0] == r["system"]
            if not (same_system or stand_in):
                continue
            v = float(r[metric])
            ci = f"[{r[f'{metric}_lo']:.3f}, {r[f'{metric}_hi']:.3f}]" if f"{metric}_lo" in r else ""
            if same_system and run.data_identity == row["dataset"] and run.reference == ref_wanted:
                inside = (f"{metric}_lo" in r and r[f"{metric}_lo"] <= paper_v <= r[f"{metric}_hi"])
                out.append(Measurement(REPRODUCED, f"ours {v:.3f} {ci} vs paper {paper_v:.3f} (difference "
                                       f"{v - paper_v:+.3f}; the paper's value is {'inside' if inside else 'outside'} "
                                       f"our 95% CI) on {run.dataset}, {r['system']}", v, paper_v))
            elif run.role == PAPER_DATASET_ROLE.get(row["dataset"]) and run.reference == ref_wanted:
                who = (f"{r['system']} ({STAND_IN_SYSTEMS[system][1]})" if stand_in else str(r["system"]))
                out.append(Measurement(STAND_IN, f"{who} on {run.dataset} (not {row['dataset']}): "
                                       f"{row['metric']} {v:.3f} {ci}", v, paper_v))
    return out


def _source_values(source: str, key: str, runs: Sequence[RunInfo], pseudo: dict | None,
                   stats: Mapping[str, dict] | None) -> list[tuple[str, float]]:
    """(where, value) pairs of one measured_as entry."""
    out = []
    if source == "stats" and stats:
        for name, st in stats.items():
            if key in st:
                out.append((f"dataset {name}", float(st[key])))
    elif source == "pseudo" and pseudo:
        nums = dict(pseudo.get("numbers", {}))
        if key == "keep_score":
            from inkground_lib.core.defaults import KEEP_SCORE

            nums["keep_score"] = KEEP_SCORE
        if key in nums and nums[key] is not None:
            comp = pseudo.get("components", {})
            out.append((f"pseudo-label run on {Path(str(pseudo.get('params', {}).get('candidates', '?'))).name} "
                        f"(derenderer {comp.get('derenderer', '?')}, OCR {comp.get('ocr_engine', '?')}, ratings "
                        f"{comp.get('ratings_source', '?')})", float(nums[key])))
    elif source == "facts":
        for run in runs:
            if run.reference != "reference":
                continue
            st = run.facts.get("style") or {}
            vals = dict(st)
            if st.get("n_train") is not None and st.get("n_test") is not None and (st["n_train"] + st["n_test"]):
                vals["train_share"] = st["n_train"] / (st["n_train"] + st["n_test"])
            if key in vals and vals[key] is not None:
                out.append((f"writer classifier on {run.dataset}", float(vals[key])))
    return out


@dataclass
class ClaimStatus:
    claim_id: str
    status: str
    check: CheckResult
    here: list = field(default_factory=list)  # Measurement
    needs: str = ""


def claim_status(claim: Mapping, reported: pd.DataFrame, runs: Sequence[RunInfo], pseudo: dict | None = None,
                 stats: Mapping[str, dict] | None = None, as_paper: dict[str, str] | None = None) -> ClaimStatus:
    """The status of one claim (module docstring) from its check over the reported numbers and what was
    measured here: the per-system scores of its refs (same system on the paper's data: reproduced; the
    same system or its stand-in on our data of the same role: stand-in) and its measured_as entries
    (always stand-ins: our data / components)."""
    as_paper = paper_system_names() if as_paper is None else as_paper
    chk = evaluate_check(claim["check"], reported_values(reported))
    here: list[Measurement] = []
    score_refs = []
    for pid in str(claim["refs"]).split():
        row = reported.loc[pid]
        if PAPER_METRIC.get(str(row["metric"])) and isinstance(row["system"], str) and "VLMs" not in row["system"]:
            score_refs.append(pid)
        ms = _score_measurements(pid, row, runs, as_paper)
        here += [Measurement(m.status, f"{pid}: {m.text}", m.ours, m.paper) for m in ms]
    for name, source, key in parse_measured_as(claim["measured_as"], f"claim {claim['claim_id']}"):
        paper_v = float(reported.loc[name, "value"]) if name in reported.index else float("nan")
        for where, v in _source_values(source, key, runs, pseudo, stats):
            ptxt = f" (paper {format_number(paper_v)})" if not math.isnan(paper_v) else ""
            here.append(Measurement(STAND_IN, f"{name}: {format_number(v)} on {where}{ptxt}", v, paper_v))
    reproduced = {m.text.split(":")[0] for m in here if m.status == REPRODUCED}
    if chk.ok is False:
        status = INCONSISTENT
    elif reproduced:
        status = REPRODUCED if score_refs and set(score_refs) <= reproduced else PARTLY_REPRODUCED
    elif chk.ok:
        status = CONSISTENT
    elif here:
        status = STAND_IN
    else:
        status = NOT_REPRODUCIBLE
    return ClaimStatus(claim["claim_id"], status, chk, here, claim.get("needs", ""))
