"""Section-03 run folders read back for section 04 (scores, facts, summaries)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from inkground_lib.core.defaults import N_BOOT
from inkground_lib.evaluation.scores import scores_frame, summarize

STRING_COLUMNS = {c: "string" for c in ("system", "dataset", "page_id", "word_id", "text", "status", "ocr_text",
                                    "split", "label", "kind")}


@dataclass
class EvalRun:
    """One section-03 run folder read for one reference ("reference" or "true")."""

    run_dir: Path
    reference: str
    scores: pd.DataFrame
    facts: dict
    summary: pd.DataFrame | None = None

    @property
    def dataset(self) -> str:
        return str(self.facts.get("dataset") or (self.scores["dataset"].iloc[0] if len(self.scores) else "?"))

    @property
    def settings(self) -> dict:
        return dict(self.facts.get("settings") or {})

    @property
    def dataset_dir(self) -> Path | None:
        """The dataset folder the run scored (facts "dataset_dir", when section 03 records it)."""
        d = self.facts.get("dataset_dir")
        return Path(d) if d else None

    @property
    def chance(self) -> float:
        return float((self.facts.get("style") or {}).get("chance", float("nan")))


def load_run(run_dir: str | Path, reference: str = "reference") -> EvalRun:
    """Read ``scores-<reference>.csv`` and ``facts-<reference>.json`` (and the summary, if present) of a
    section-03 run folder. Raises FileNotFoundError naming the file and what writes it."""
    run_dir = Path(run_dir)
    sp, fp = run_dir / f"scores-{reference}.csv", run_dir / f"facts-{reference}.json"
    for p in (sp, fp):
        if not p.is_file():
            raise FileNotFoundError(f"{p}: not found; section 03 (notebooks/03_model_evaluation) writes it "
                                    f"(run it first, or point eval_runs at its run folder)")
    raw = pd.read_csv(sp, dtype=STRING_COLUMNS, keep_default_na=True)
    # a blank render is read as '' by the OCR; CSV stores it as an empty field: restore '' where the edit
    # counts exist (OCR ran) so "not run" (NA) and "read nothing" ('') stay apart
    if "ocr_text" in raw.columns:
        ran = raw["N"].notna()
        raw.loc[ran & raw["ocr_text"].isna(), "ocr_text"] = ""
    try:
        scores = scores_frame(raw)
    except ValueError as e:
        raise ValueError(f"{sp}: {e}") from None
    try:
        facts = json.loads(fp.read_text("utf-8"))
    except ValueError as e:
        raise ValueError(f"{fp}: not valid JSON: {e}") from None
    sm = run_dir / f"summary-{reference}.csv"
    summary = pd.read_csv(sm) if sm.is_file() and sm.stat().st_size > 1 else None
    return EvalRun(run_dir, reference, scores, facts, summary)


def load_runs(run_dirs: Iterable[str | Path], reference: str = "reference") -> list[EvalRun]:
    return [load_run(d, reference) for d in run_dirs]


def summary_table(runs: Sequence[EvalRun], n_boot: int = N_BOOT, seed: int = 0, ci: float = 0.95) -> pd.DataFrame:
    """evaluate.summarize of every run (page bootstrap with ``n_boot`` replicates and ``seed``), one row per
    (dataset, system), with label, kind, the style classifier's chance level and top-1 accuracy."""
    frames = []
    for r in runs:
        if not len(r.scores):
            continue
        s = summarize(r.scores, n_boot=n_boot, seed=seed, ci=ci)
        meta = r.scores.drop_duplicates("system").set_index("system")
        s.insert(0, "dataset", r.dataset)
        s.insert(2, "label", s["system"].map(meta["label"]) if "label" in meta else s["system"])
        s.insert(3, "kind", s["system"].map(meta["kind"]) if "kind" in meta else "")
        st = r.facts.get("style") or {}
        s["chance"] = float(st.get("chance", np.nan))
        s["n_classes"] = st.get("n_classes", np.nan)
        s["style_top1"] = float(st.get("top1", np.nan))
        frames.append(s)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
