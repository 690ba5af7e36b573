"""Tables of ours beside the paper's."""

from __future__ import annotations

import math

import pandas as pd

from inkground_lib.core.defaults import METRIC_LABELS
from inkground_lib.core.paper import paper_numbers
from inkground_lib.core.text import short_reason
from inkground_lib.report.format import count_or_rounded, value_with_interval


def beside_paper(ours: dict, rows: list[tuple[str, str, str | None]], *, paper: pd.DataFrame | None = None,
                 decimals: int = 3, also: dict[str, dict] | None = None) -> pd.DataFrame:
    """A table with our value beside the paper's.

    ``rows``: (label, key in ``ours``, id in reported.csv or None where the paper gives no number).
    Columns: quantity, ours (measured here), paper (reported), ratio ours / paper; ``also``: {column name:
    values} of other measured datasets, shown after the paper's column (e.g. the recorded set).
    """
    paper = paper_numbers() if paper is None else paper
    out = []
    for label, key, pid in rows:
        v = ours.get(key, float("nan"))
        p = float(paper.loc[pid, "value"]) if pid is not None else float("nan")
        row = {"quantity": label, "ours (measured)": count_or_rounded(v, decimals),
               "paper (reported)": count_or_rounded(p, decimals),
               "ours / paper": round(float(v) / p, 2) if p and not math.isnan(p) else float("nan")}
        for column, values in (also or {}).items():
            row[column] = count_or_rounded(values.get(key, float("nan")), decimals)
        out.append(row)
    return pd.DataFrame(out, dtype=object).set_index("quantity")


# The paper's systems by their names in reported.csv, with the reported.csv id prefix per dataset.
PAPER_ROWS = {
    "inkGround": [("Gemini-3.1-Pro", "gemini_ink"), ("Claude-Opus-4.8", "claude_ink"), ("Kimi-K3", "kimi_ink"),
                  ("Qwen3-VL-32B", "qwen_ink")],
    "IAM-OnDB": [("InkSight", "inksight_iam"), ("Gemini-3.1-Pro", "gemini_iam"), ("Qwen3-VL-32B", "qwen_iam"),
                 ("Molmo-7B-D", "molmo_iam")],
}


_METRICS = [(label, key) for key, label in METRIC_LABELS.items()]


def results_table(summary: pd.DataFrame, paper_dataset: str | None, *, paper: pd.DataFrame | None = None) -> pd.DataFrame:
    """The paper-style results table: one row per system that ran here (measured, with 95% page-bootstrap
    intervals in brackets), then the paper's reported rows for ``paper_dataset`` ("inkGround" or
    "IAM-OnDB"; None for none). Columns: source, DTW, Chamfer, AR, CR, Style, valid rate."""
    paper = paper_numbers() if paper is None else paper
    rows = []
    for _, r in summary.iterrows():
        rec = {"system": r.get("label", r["system"]), "source": "ours (measured)"}
        for col, key in _METRICS:
            rec[col] = value_with_interval(r, key)
        rec["valid rate"] = f"{r['valid_rate']:.2f}"
        rows.append(rec)
    for label, prefix in PAPER_ROWS.get(paper_dataset, []):
        rec = {"system": label, "source": "paper (reported)"}
        for col, key in _METRICS:
            pid = f"{prefix}_{key}"
            rec[col] = f"{float(paper.loc[pid, 'value']):.3f}" if pid in paper.index else "–"
        rec["valid rate"] = "–"
        rows.append(rec)
    df = pd.DataFrame(rows).fillna("")
    return df.set_index("system")


def unavailable_table(unavailable: dict) -> pd.DataFrame:
    """The systems that could not run here, each with what it needs (never a secret value)."""
    rows = [{"system": n, "why it did not run here": short_reason(r)} for n, r in unavailable.items()]
    return pd.DataFrame(rows, columns=["system", "why it did not run here"]).set_index("system")


