"""The conditions a section-03 run ran under (its data, reference, OCR engine, derenderer and raters), read from
its run folder and its dataset's manifest, against the paper's own conditions."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import pandas as pd

from inkground_lib.analysis.derenderer_modes import manifest_mode
from inkground_lib.core.defaults import N_BOOT
from inkground_lib.core.repo_paths import repo_path
from inkground_lib.core.run_files import REFERENCES, facts_json, scores_csv
from inkground_lib.core.run_loaders import load_eval_run
from inkground_lib.evaluation.scores import summarize

PAPER_CONDITIONS = {
    "inkGround": {"data": "inkGround", "reference": "pseudo-labels", "ocr_engine": "deepseek-ocr",
                  "derenderer": "inksight", "raters": "real"},
    "IAM-OnDB": {"data": "IAM-OnDB", "reference": "recorded", "ocr_engine": "deepseek-ocr",
                 "derenderer": "none (recorded truth)", "raters": "none (recorded truth)"},
}
"""The conditions of the paper's runs, per paper dataset: a run reproduces only when all of its recorded
conditions match these."""


@dataclass
class RunInfo:
    """One section-03 run (one reference) as the reviewers' page sees it, with the conditions it ran under."""

    run_dir: Path
    reference: str
    dataset: str
    summary: pd.DataFrame
    facts: dict
    data_identity: str | None  # "inkGround" / "IAM-OnDB" when the run scored the paper's data, else None
    role: str  # "benchmark" (pseudo-label references) or "recorded" (recorded truth)
    conditions: dict = field(default_factory=dict)  # run_conditions(): data, reference, ocr_engine, derenderer, raters


def _manifest(dataset_dir) -> dict:
    try:
        return json.loads((repo_path(dataset_dir) / "manifest.json").read_text("utf-8"))
    except (OSError, ValueError, TypeError):
        return {}


def run_conditions(facts: dict, reference: str = "reference", manifest: dict | None = None) -> dict:
    """The conditions a section-03 run recorded, in the terms of :data:`PAPER_CONDITIONS`: the data's origin
    (facts "data_origin", which only a reader of the paper's own release may set - none exists here, as the
    paper's pages, split and segmentation are not public - so no manifest field anyone can type makes data the
    paper's; pages composed by our own builder, from IAM-OnDB or UNIPEN words, are never the paper's data), what the words are scored against, the OCR
    engine (facts settings), the derenderer that made pseudo-label references and whether their raters
    were real or simulated (the benchmark manifest)."""
    m = _manifest(facts.get("dataset_dir")) if manifest is None else manifest
    kind = m.get("kind") or facts.get("dataset_kind")
    meta = m.get("meta") or {}
    sources = sorted({str(s.get("kind")) for s in meta.get("sources", []) if isinstance(s, dict)})
    origin = facts.get("data_origin")  # set by a reader of the paper's release, never by a manifest field
    if origin in PAPER_CONDITIONS:
        data = origin
    elif kind == "inkground":
        data = "a dataset whose manifest says inkground (not read from the paper's release: not its data)"
    elif kind == "recorded":
        data = f"recorded pages composed by our builder from {', '.join(sources) or 'unnamed sources'}"
    elif kind == "benchmark":
        data = f"our benchmark set (pseudo-labels on {(meta.get('candidates') or {}).get('name', '?')})"
    elif kind == "synth":
        data = "our synthetic pages"
    else:
        data = "unknown (no dataset manifest)"
    recorded = reference == "true" or kind == "recorded"
    if recorded:
        derenderer = raters = "none (recorded truth)"
    elif kind == "inkground":
        derenderer, raters = "inksight", "real"
    else:
        derenderer = manifest_mode(meta)  # the mode by its one displayed name (tracer-recognize, tracer, ...)
        raters = str(meta.get("ratings_source") or "unknown")
    return {"data": data, "reference": "recorded" if recorded else "pseudo-labels",
            "ocr_engine": str((facts.get("settings") or {}).get("ocr_engine") or "unknown"),
            "derenderer": derenderer, "raters": raters}


def unmet_conditions(conditions: Mapping[str, str], paper_dataset: str) -> list[str]:
    """The conditions of a run that differ from the paper's on ``paper_dataset`` ('ocr_engine rapidocr, the
    paper's deepseek-ocr'); empty when the run ran under the paper's conditions."""
    want = PAPER_CONDITIONS.get(paper_dataset)
    if want is None:
        return [f"no recorded conditions for {paper_dataset}"]
    return [f"{k} {conditions.get(k, 'not recorded')} (the paper's: {v})" for k, v in want.items()
            if conditions.get(k) != v]


def data_identity(facts: dict, dataset_dir=None) -> tuple[str | None, str]:
    """(the paper dataset this run's data IS, or None; the role of the data: "recorded" or "benchmark")."""
    d = dataset_dir or facts.get("dataset_dir")
    m = _manifest(d) if d else {}
    cond = run_conditions(facts, "reference", m)
    ident = cond["data"] if cond["data"] in PAPER_CONDITIONS else None
    kind = m.get("kind") or facts.get("dataset_kind")
    role = "recorded" if kind == "recorded" or (kind is None and "recorded" in str(facts.get("dataset", "")).lower()) \
        else "benchmark"
    return ident, role


def load_run_infos(eval_runs: Iterable, references: Sequence[str] = REFERENCES,
                   n_boot: int | None = None) -> list[RunInfo]:
    """RunInfos of section-03 run folders (both references where present). The summary is the run's
    summary-<reference>.csv (recomputed from the scores with ``n_boot`` when given or when absent)."""
    out = []
    for d in eval_runs:
        d = Path(d)
        for ref in references:
            if not facts_json(d, ref).is_file() or not scores_csv(d, ref).is_file():
                continue
            run = load_eval_run(d, ref)
            summ = run.summary
            if summ is None or n_boot is not None or "ar" not in summ.columns:
                summ = summarize(run.scores, n_boot=n_boot or N_BOOT, seed=int(run.settings.get("seed", 0)))
                meta = run.scores.drop_duplicates("system").set_index("system")
                summ["label"] = summ["system"].map(meta["label"])
                summ["kind"] = summ["system"].map(meta["kind"])
            ident, role = data_identity(run.facts)
            out.append(RunInfo(d, ref, run.dataset, summ, run.facts, ident, role, run_conditions(run.facts, ref)))
    return out
