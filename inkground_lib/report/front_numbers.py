"""The numbers of the book's front page, collected from files (rendered by :mod:`inkground_lib.report.front`):
the section-02 run summary (pseudo-labels against the writers' true trajectories), the section-03 run summaries
and facts, the claim statuses computed exactly as the reviewers' page computes them, the systems registry, the shipped
UNIPEN subset, CITATION.cff and _config.yml. What cannot be read is left out (None or a ``reason``), never guessed.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Iterable, Mapping

import pandas as pd
import yaml

from inkground_lib.analysis.claims import STATUSES, claim_status, load_claims, paper_system_names
from inkground_lib.analysis.run_conditions import load_run_infos
from inkground_lib.analysis.tradeoffs import RankFlip, median_gap, reference_flips
from inkground_lib.core.layout import PSEUDO_RUN, ROOT, UNIPEN_SUBSET
from inkground_lib.core.metric_table import metric_names
from inkground_lib.core.paper import CLAIMS_CSV, PAPER_CSV, paper_numbers
from inkground_lib.core.run_files import REFERENCES, facts_json, pages_csv, summary_csv, words_csv
from inkground_lib.core.run_loaders import load_eval_run, load_pseudo_summary
from inkground_lib.evaluation.systems.registry import load_registry
from inkground_lib.report.format import finite
from inkground_lib.report.reproducibility import executed_notebooks, git_state, section_records
from inkground_lib.report.reviewers import default_inputs

UNIPEN_JSON = UNIPEN_SUBSET.relative_to(ROOT).as_posix()
"""The shipped UNIPEN subset, relative to the repository root."""


@dataclass
class EvalRunNumbers:
    """One section-03 run (one reference) as the front page shows it."""

    run_dir: str
    dataset: str
    reference: str  # "reference" (pseudo-labels / recorded reference inks) or "true" (the writers' true inks)
    ocr_engine: str
    rows: list[dict]  # per system: system, label, kind, n_words, n_pages, dtw, chamfer, ar, style (+ _lo, _hi)
    unavailable: dict[str, str]  # system -> why it did not run
    style_chance: float | None = None
    kind: str = ""  # the dataset's kind: benchmark, recorded, synth, ...


@dataclass
class FrontNumbers:
    """Everything the generated front page shows, read from files (see :func:`front_page_numbers`)."""

    pseudo: dict | None  # the section-02 run summary.json, or None when it was not run
    pseudo_dir: str  # where it was looked for
    truth_words: int | None  # words whose pseudo-label was compared with a true trajectory
    runs: list[EvalRunNumbers]
    claims: dict[str, int] | None  # status -> number of claims; None when the claims could not be read
    claims_reason: str
    statuses: list[str]
    registry: dict[str, dict]
    repo_url: str | None
    citation: dict  # title, version, date, authors, license, or reason
    unipen: dict  # samples, writers, or reason
    fonts: dict  # version, license, or reason
    code_license: str | None
    paper_vlms: int | None = None  # the paper's number of VLMs (data/paper/reported.csv n_vlms)
    python: str | None = None  # requires-python of pyproject.toml
    notes: list[str] = field(default_factory=list)
    flips: list[RankFlip] = field(default_factory=list)  # rankings the choice of reference reverses
    flip_datasets: list[str] = field(default_factory=list)  # datasets scored against both references
    filters: dict = field(default_factory=dict)  # the filters against the truth (filter_numbers)
    sections: list[dict] = field(default_factory=list)  # this build's section records (run times)
    repo_source: str = ""  # the file that configures repo_url
    reported: dict = field(default_factory=dict)  # the paper's numbers by id (data/paper/reported.csv)
    commit: str = ""  # the commit this book was built from (git_state), "" where unknown


def _read_json(p: Path):
    try:
        return json.loads(p.read_text("utf-8"))
    except (OSError, ValueError):
        return None


def _pseudo_summary(run_dir) -> dict | None:
    """A pseudo-label run's summary, or None where it has none or it cannot be read."""
    try:
        return load_pseudo_summary(run_dir)
    except (OSError, ValueError):
        return None


def _read_text(p: Path) -> str:
    try:
        return p.read_text("utf-8")
    except OSError:
        return ""


def _rel(p, root: Path) -> str:
    try:
        return Path(p).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return Path(p).name if Path(p).is_absolute() else str(p)


def eval_run_numbers(run_dir, root: Path) -> list[EvalRunNumbers]:
    """The summaries of one section-03 run folder: one entry per reference it was scored against."""
    out = []
    d = Path(run_dir)
    for ref in REFERENCES:
        if not facts_json(d, ref).is_file() or not summary_csv(d, ref).is_file():
            continue
        try:
            run = load_eval_run(d, ref, scores=False)
        except (OSError, ValueError):  # unreadable facts: left out, as a run that was not made
            continue
        facts = run.facts
        rows = []
        keys = ["system", "label", "kind", "n_words", "n_pages"] + [
            f"{m}{x}" for m in metric_names(reported=True) for x in ("", "_lo", "_hi")]
        for r in (run.summary.to_dict("records") if run.summary is not None else []):  # None: no system scored
            rows.append({k: r.get(k) for k in keys})
        out.append(EvalRunNumbers(
            run_dir=_rel(d, root), dataset=str(facts.get("dataset", "?")), reference=ref,
            ocr_engine=str((facts.get("settings") or {}).get("ocr_engine", "?")), rows=rows,
            unavailable=dict(facts.get("unavailable") or {}),
            style_chance=finite((facts.get("style") or {}).get("chance")), kind=str(facts.get("dataset_kind", ""))))
    return out


def run_flips(runs: list[EvalRunNumbers]) -> tuple[list[RankFlip], list[str]]:
    """The rankings the choice of reference reverses (:func:`inkground_lib.analysis.tradeoffs.reference_flips`)
    in every run folder scored against both references, and the datasets of those folders."""
    flips, datasets = [], []
    by_dir: dict[str, dict[str, EvalRunNumbers]] = {}
    for r in runs:
        by_dir.setdefault(r.run_dir, {})[r.reference] = r
    for refs in by_dir.values():
        if set(REFERENCES) <= set(refs) and refs["reference"].rows and refs["true"].rows:
            ds = refs["reference"].dataset
            frames = [pd.DataFrame(refs[x].rows).assign(dataset=ds) for x in REFERENCES]
            flips += reference_flips(frames[0], frames[1], "reference")
            datasets.append(ds)
    return flips, datasets


FILTER_GROUPS = {"ocr": ("passed", "failed"), "raters": ("kept", "rejected")}


def filter_numbers(run_dir, n_boot: int = 1000, seed: int = 0) -> dict:
    """Whether section 02's filters kept pseudo-labels nearer the truth, from its pages.csv (one row per
    candidate page: ocr_pass, stage, kept and dtw, the page's mean DTW to the true trajectories): for the OCR
    filter (pages that passed against pages that failed) and the rater filter (kept against rejected, among
    the pages that passed OCR), the median of the page means in each group, the number of pages and the
    difference of medians with a bootstrap 95% interval (:func:`inkground_lib.analysis.tradeoffs.median_gap`).
    {} where the run has no pages.csv or no distance to the truth."""
    p = pages_csv(Path(run_dir))
    try:
        t = pd.read_csv(p, dtype={"page": str})
    except (OSError, ValueError):
        return {}
    if "dtw" not in t.columns or not t["dtw"].notna().any() or "ocr_pass" not in t.columns:
        return {}
    ocr = t["ocr_pass"].astype(str).str.lower().eq("true")
    kept = t["kept"].astype(str).str.lower().eq("true") if "kept" in t.columns else pd.Series(False, index=t.index)
    groups = {"ocr": (t.loc[ocr, "dtw"], t.loc[~ocr, "dtw"]), "raters": (t.loc[ocr & kept, "dtw"],
                                                                       t.loc[ocr & ~kept, "dtw"])}
    out = {}
    for name, (a, b) in groups.items():
        a, b = a.dropna(), b.dropna()
        d, lo, hi = median_gap(a.to_numpy(float), b.to_numpy(float), n_boot=n_boot, seed=seed)
        out[name] = {"n_a": int(len(a)), "n_b": int(len(b)), "median_a": finite(a.median()) if len(a) else None,
                     "median_b": finite(b.median()) if len(b) else None, "gap": finite(d), "lo": finite(lo),
                     "hi": finite(hi)}
    return out


def claim_counts(eval_runs: Iterable, pseudo_run, dataset_stats: Mapping | None, root: Path
                 ) -> tuple[dict[str, int] | None, str]:
    """Claims per status, computed exactly as the reviewers' page computes them (the same rules, claims,
    reported numbers and runs); (None, reason) when the claims cannot be read."""
    try:
        reported = paper_numbers(Path(root) / PAPER_CSV.relative_to(ROOT))
        claims = load_claims(Path(root) / CLAIMS_CSV.relative_to(ROOT), reported)
    except (OSError, ValueError) as e:
        return None, f"the paper's claims could not be read: {e}"
    runs = load_run_infos([Path(r) for r in eval_runs])
    pseudo = _pseudo_summary(pseudo_run) if pseudo_run is not None else None
    as_paper = paper_system_names()
    counts: dict[str, int] = {}
    for _, c in claims.iterrows():
        st = claim_status(c, reported, runs, pseudo, dict(dataset_stats or {}), as_paper).status
        counts[st] = counts.get(st, 0) + 1
    return counts, ""


def citation_numbers(path: Path) -> dict:
    try:
        d = yaml.safe_load(path.read_text("utf-8")) or {}
    except (OSError, yaml.YAMLError) as e:
        return {"reason": f"CITATION.cff cannot be read ({e.__class__.__name__})"}
    authors = ", ".join(str(a.get("name") or " ".join(filter(None, [a.get("given-names"), a.get("family-names")])))
                        for a in d.get("authors") or [])
    return {"title": d.get("title"), "version": d.get("version"), "date": str(d.get("date-released") or ""),
            "authors": authors, "license": d.get("license")}


def unipen_numbers(path: Path) -> dict:
    d = _read_json(path)
    if not isinstance(d, dict) or not isinstance(d.get("samples"), list):
        return {"reason": f"{path.name} is not in the repository"}
    s = d["samples"]
    return {"samples": len(s), "writers": len({x.get("writer_id") for x in s})}


def font_numbers() -> dict:
    try:
        m = metadata.metadata("Hershey-Fonts")
    except metadata.PackageNotFoundError:
        return {"reason": "the Hershey-Fonts package is not installed"}
    return {"version": m.get("Version"), "license": m.get("License") or "not stated in its metadata"}


WELL_KNOWN_SOURCE_LABELS = ("source", "repository", "sourcecode", "github", "gitlab")
"""Project-URL labels that name a project's source repository once normalised (ASCII punctuation and
whitespace removed, lower case): the packaging guide's "Well-known Project URLs in Metadata"
(https://packaging.python.org/en/latest/specifications/well-known-project-urls/, checked 2026-12-01)."""


def configured_repository(root: Path) -> tuple[str | None, str]:
    """The repository's address where the repository configures one, and the file that does: CITATION.cff's
    ``repository-code`` (the Citation File Format 1.2.0 key for "the URL of the work's source code
    repository", its schema guide, checked 2026-12-01), pyproject.toml's ``[project.urls]`` entry with a
    well-known source label (:data:`WELL_KNOWN_SOURCE_LABELS`), then ``repository.url`` of _config.yml;
    (None, "") where none does."""
    root = Path(root)
    try:
        cff = yaml.safe_load((root / "CITATION.cff").read_text("utf-8")) or {}
    except (OSError, yaml.YAMLError):
        cff = {}
    url = cff.get("repository-code") if isinstance(cff, dict) else None
    if isinstance(url, str) and url.strip():
        return url.strip(), "CITATION.cff"
    try:
        urls = (tomllib.loads((root / "pyproject.toml").read_text("utf-8")).get("project") or {}).get("urls") or {}
    except (OSError, tomllib.TOMLDecodeError):
        urls = {}
    for label, u in urls.items():
        norm = re.sub(r"[\s!-/:-@\[-`{-~]", "", str(label)).lower()
        if norm in WELL_KNOWN_SOURCE_LABELS and isinstance(u, str) and u.strip():
            return u.strip(), "pyproject.toml"
    url = repository_url(root / "_config.yml")
    return (url, "_config.yml") if url else (None, "")


def build_sections(root: Path, executed: Iterable | None = None) -> list[dict]:
    """This build's section records (:func:`inkground_lib.report.reproducibility.section_records` of the
    executed notebooks ``executed``, default those under ``root``), the same records the reproducibility page
    shows; [] where none."""
    try:
        return section_records(executed_notebooks(root) if executed is None else list(executed), root)
    except (OSError, ValueError):
        return []


def repository_url(config: Path) -> str | None:
    """``repository.url`` of the book's _config.yml, or None where it configures none."""
    try:
        cfg = yaml.safe_load(config.read_text("utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return None
    url = (cfg.get("repository") or {}).get("url") if isinstance(cfg.get("repository"), dict) else None
    return str(url).strip() or None if url else None


def front_page_numbers(root: Path = ROOT, *, eval_runs: Iterable | None = None, pseudo_run=None,
                       dataset_stats: Mapping | None = None, registry: dict | None = None,
                       executed: Iterable | None = None, defaults: dict | None = None) -> FrontNumbers:
    """The front page's inputs, read from files under ``root``.

    Without ``eval_runs``, ``pseudo_run`` and ``dataset_stats`` the book's default run outputs under ``root``
    are used (:func:`inkground_lib.report.reviewers.default_inputs`, the same inputs as the reviewers' page);
    given any of them, only what is given (a test book's runs). ``pseudo_run``: a section-02 run folder;
    ``executed``: the executed section notebooks whose run times the page gives (default: ``root``'s);
    ``defaults``: those default outputs when the caller has read them already (``make book``: for both pages)."""
    root = Path(root)
    if eval_runs is None and pseudo_run is None and dataset_stats is None:
        inp = default_inputs(root) if defaults is None else defaults
        eval_runs, dataset_stats = inp["eval_runs"], inp["dataset_stats"]
        pseudo_run = root / PSEUDO_RUN
    eval_runs = [Path(r) for r in (eval_runs or [])]
    pseudo_dir = Path(pseudo_run) if pseudo_run is not None else root / PSEUDO_RUN
    pseudo = _pseudo_summary(pseudo_dir)
    truth_words = None
    if pseudo is not None and words_csv(pseudo_dir).is_file():
        w = pd.read_csv(words_csv(pseudo_dir), usecols=lambda c: c == "dtw")
        truth_words = int(w["dtw"].notna().sum()) if "dtw" in w else 0
    runs = [x for r in eval_runs for x in eval_run_numbers(r, root)]
    flips, flip_datasets = run_flips(runs)
    counts, reason = claim_counts(eval_runs, pseudo_dir if pseudo is not None else None, dataset_stats, root)
    if registry is None:
        registry = load_registry()
    lic = root / "LICENSE"
    try:
        code_license = lic.read_text("utf-8").splitlines()[0].strip()
    except (OSError, IndexError):
        code_license = None
    paper_vlms, reported = None, {}
    try:
        rep = paper_numbers(root / PAPER_CSV.relative_to(ROOT))
        reported = {str(k): float(v) for k, v in rep["value"].items()}
        paper_vlms = int(reported["n_vlms"])
    except (OSError, KeyError, ValueError, TypeError):
        pass
    python = None
    m = re.search(r'^requires-python\s*=\s*"([^"]+)"', _read_text(root / "pyproject.toml"), re.M)
    if m:
        python = m.group(1)
    repo_url, repo_source = configured_repository(root)
    return FrontNumbers(
        paper_vlms=paper_vlms, python=python, pseudo=pseudo, pseudo_dir=_rel(pseudo_dir, root), truth_words=truth_words, runs=runs, claims=counts,
        claims_reason=reason, statuses=list(STATUSES), registry=registry,
        repo_url=repo_url,
        citation=citation_numbers(root / "CITATION.cff"), unipen=unipen_numbers(root / UNIPEN_JSON),
        fonts=font_numbers(), code_license=code_license, flips=flips, flip_datasets=flip_datasets,
        filters=filter_numbers(pseudo_dir) if pseudo is not None else {}, sections=build_sections(root, executed),
        repo_source=repo_source, reported=reported, commit=git_state(root))
