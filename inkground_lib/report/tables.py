"""Tables of ours beside the paper's.

No table prints a raw NaN or None: a missing number is an em dash with its reason
(:func:`inkground_lib.report.format.missing`, e.g. "— no valid output", "— not reported"). A quantity we set
(a parameter, or a statistic the synthetic generator was set to) is never shown as measured nor divided by
the paper's value.
"""

from __future__ import annotations

import math
import re

import pandas as pd

from inkground_lib.core.metric_table import METRICS
from inkground_lib.core.paper import paper_numbers
from inkground_lib.core.text import short_reason
from inkground_lib.report.format import cell, format_interval, is_missing, missing

MEASURED = "ours (measured)"
SET = "ours (set, not measured)"
PAPER = "paper (reported)"
RATIO = "ours / paper"
SET_TO_PAPER = "set to the paper's value"


def set_note(value, paper_value) -> str:
    """Why a set row has no ratio: "set to the paper's value" when ``value`` equals the paper's, else says
    that this run set another value."""
    try:
        same = not is_missing(paper_value) and math.isclose(float(value), float(paper_value), rel_tol=1e-9)
    except (TypeError, ValueError):
        same = False
    return SET_TO_PAPER if same else "set by this run, not the paper's value"


def beside_paper(ours: dict, rows: list[tuple], *, paper: pd.DataFrame | None = None, decimals: int = 3,
                 also: dict[str, dict] | None = None, set_values: dict[str, tuple] | None = None,
                 not_comparable: dict[str, str] | None = None) -> pd.DataFrame:
    """A table with our value beside the paper's.

    ``rows``: (label, key in ``ours``, id in reported.csv or None where the paper gives no number[, why ours
    can be missing]). Columns: quantity, ours (measured here), paper (reported), ratio ours / paper; ``also``:
    {column name: values} of other measured datasets, shown after the ratio (e.g. the recorded set).

    ``set_values``: {key: (value, note)} for the quantities we SET rather than measured (a run parameter, or
    a statistic the generator was set to match; ``note`` says so, e.g. :data:`SET_TO_PAPER`). Their value goes
    in the column "ours (set, not measured)", their measured cell and their ratio say "— set, not measured" /
    "— <note>": a set value divided by the paper's is 1 by construction and measures nothing.

    ``not_comparable``: {key: reason} for measured quantities that cannot be set beside the paper's number (a
    count of a run of very different size, a rate of simulated raters): their ratio cell says
    "— not comparable: <reason>" instead of a ratio.
    """
    paper = paper_numbers() if paper is None else paper
    set_values = set_values or {}
    out = []
    for label, key, pid, *why in rows:
        why = why[0] if why else "not measured here"
        p = float(paper.loc[pid, "value"]) if pid is not None and pid in paper.index else float("nan")
        row = {"quantity": label}
        if key in set_values:
            value, note = set_values[key]
            row[MEASURED] = missing("set, not measured")
            row[SET] = cell(value, decimals, "not set")
            row[PAPER] = cell(p, decimals, "not reported")
            row[RATIO] = missing(note)
        else:
            v = ours.get(key)
            row[MEASURED] = cell(v, decimals, why)
            if set_values:
                row[SET] = missing("measured")
            row[PAPER] = cell(p, decimals, "not reported")
            if is_missing(p):
                row[RATIO] = missing("not reported")
            elif is_missing(v):
                row[RATIO] = missing("no measured value")
            elif key in (not_comparable or {}):
                row[RATIO] = missing(f"not comparable: {not_comparable[key]}")
            elif p == 0:
                row[RATIO] = missing("the paper's value is 0")
            else:
                row[RATIO] = round(float(v) / p, 2)
        for column, values in (also or {}).items():
            row[column] = cell(values.get(key), decimals, "not measured")
        out.append(row)
    return pd.DataFrame(out, dtype=object).set_index("quantity")


# The paper's systems by their names in reported.csv, with the reported.csv id prefix per dataset.
PAPER_ROWS = {
    "inkGround": [("Gemini-3.1-Pro", "gemini_ink"), ("Claude-Opus-4.8", "claude_ink"), ("Kimi-K3", "kimi_ink"),
                  ("Qwen3-VL-32B", "qwen_ink")],
    "IAM-OnDB": [("InkSight", "inksight_iam"), ("Gemini-3.1-Pro", "gemini_iam"), ("Qwen3-VL-32B", "qwen_iam"),
                 ("Molmo-7B-D", "molmo_iam")],
}

VALID_ONLY = " (valid only)"


def result_columns() -> list[tuple[str, str]]:
    """(column, summary key) of the results table: each metric of the metric table
    (:data:`inkground_lib.core.metric_table.METRICS`, in its order) under its label, with its valid-only mean
    beside it where it has one, then the valid rate.

    >>> [c for c, _ in result_columns()][:3], result_columns()[-1]
    (['DTW', 'DTW (valid only)', 'Chamfer'], ('valid rate', 'valid_rate'))
    """
    out = []
    for m in METRICS.values():
        out.append((m.label, m.name))
        if m.valid_mean:
            out.append((m.label + VALID_ONLY, f"{m.name}_valid"))
    return out + [("valid rate", "valid_rate")]


CENTRE_DOT_NOTE = ("An output that cannot be used is scored by the centre-dot rule (a dot at the page centre for "
                   "DTW and Chamfer, a blank render for AR, CR and Style): this book's choice, as the paper's text "
                   "does not say how it scores such outputs.")


def drop_repeated_valid_only(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """A :func:`results_table` without the columns that repeat others: the "(valid only)" columns when each
    one's text equals its all-words column on every measured row (the paper reports neither; all of them or
    none), and then the valid rate too when it is 1 for every measured system. Returns (table, notes), the notes saying what was left out and why.

    >>> t = pd.DataFrame({"source": [MEASURED, PAPER], "DTW": ["0.287", "0.105"],
    ...                   "DTW (valid only)": ["0.287", "— not reported"], "valid rate": ["1.000", "— not reported"]})
    >>> out, notes = drop_repeated_valid_only(t)
    >>> list(out.columns), len(notes)
    (['source', 'DTW'], 1)
    """
    ours = df["source"] == MEASURED
    if not ours.any():
        return df, []
    drop = [c for c in df.columns if c.endswith(VALID_ONLY) and c[:-len(VALID_ONLY)] in df.columns
            and (df.loc[ours, c].astype(str) == df.loc[ours, c[:-len(VALID_ONLY)]].astype(str)).all()]
    if not drop or len(drop) < sum(c.endswith(VALID_ONLY) for c in df.columns):
        return df, []  # all or none: a table with valid-only means beside some metrics only would mislead
    all_valid = "valid rate" in df.columns and all(
        re.fullmatch(r"1(?:\.0+)?(?: \[1(?:\.0+)?, 1(?:\.0+)?\])?", str(v)) for v in df.loc[ours, "valid rate"])
    names = ", ".join(c[:-len(VALID_ONLY)] for c in drop)
    if all_valid:
        note = (f"Every system here gave a usable output for every word (valid rate 1.000), so the valid-only "
                f"means equal the means over all words: the valid-only columns ({names}) and the valid rate are "
                f"not shown.")
        drop.append("valid rate")
    else:
        note = (f"The valid-only means of {names} equal the means over all words for every system here and are "
                f"not shown.")
    return df.drop(columns=drop), [note]


def _count(r, key: str):
    v = r.get(key)
    return None if is_missing(v) else int(v)


def _why_missing(r, key: str) -> str:
    """Why a measured summary statistic is NaN, from the row's counts."""
    if _count(r, "n_words") == 0:
        return "no words"
    if key.endswith("_valid") and _count(r, "n_valid") == 0:
        return "no valid output"
    rec = METRICS.get(key.removesuffix("_valid"))
    computed = rec.computed if rec is not None else None
    if computed == "style" and _count(r, "n_style") == 0:
        return f"no {rec.label} value (no held-out words)"
    if computed == "ocr" and _count(r, "n_ocr") == 0:
        return "no OCR reading"
    return "not computed"


def results_table(summary: pd.DataFrame, paper_dataset: str | None, *, paper: pd.DataFrame | None = None,
                  not_run: dict | None = None) -> pd.DataFrame:
    """The paper-style results table: one row per system that ran here (measured, with 95% page-bootstrap
    intervals in brackets), then the paper's reported rows for ``paper_dataset`` ("inkGround" or
    "IAM-OnDB"; None for none), then the systems of ``not_run`` ({name: reason}; "— not run").

    Columns: source, then :func:`result_columns` (DTW, DTW (valid only), Chamfer, Chamfer (valid only), AR, CR,
    Style, Style (valid only), valid rate). DTW, Chamfer and Style are means over all words (invalid outputs
    scored by the invalid-output rule); "(valid only)" over the words whose output was valid. Each value prints at the
    precision of its own interval (:func:`inkground_lib.report.format.format_interval`); a missing value is
    an em dash with its reason. The paper does not report valid-only means nor valid rates."""
    paper = paper_numbers() if paper is None else paper
    columns = result_columns()
    rows = []
    for _, r in summary.iterrows():
        rec = {"system": r.get("label", r["system"]), "source": MEASURED}
        for col, key in columns:
            rec[col] = format_interval(r.get(key), r.get(f"{key}_lo"), r.get(f"{key}_hi"),
                                       missing_reason=_why_missing(r, key))
        rows.append(rec)
    for label, prefix in PAPER_ROWS.get(paper_dataset, []):
        rec = {"system": label, "source": PAPER}
        for col, key in columns:
            pid = f"{prefix}_{key}"
            rec[col] = f"{float(paper.loc[pid, 'value']):.3f}" if pid in paper.index else missing("not reported")
        rows.append(rec)
    for name in not_run or {}:
        rec = {"system": name, "source": "not run here"}
        rec.update({col: missing("not run") for col, _ in columns})
        rows.append(rec)
    df = pd.DataFrame(rows, columns=["system", "source"] + [c for c, _ in columns])
    return df.set_index("system")


def unavailable_table(unavailable: dict) -> pd.DataFrame:
    """The systems that could not run here, each with what it needs (never a secret value)."""
    rows = [{"system": n, "why it did not run here": short_reason(r)} for n, r in unavailable.items()]
    return pd.DataFrame(rows, columns=["system", "why it did not run here"]).set_index("system")


def results_view(summary: pd.DataFrame, paper_dataset: str | None, caption: str, *,
                 paper: pd.DataFrame | None = None, not_run: dict | None = None, made_references: str | None = None):
    """:func:`results_table` as the book shows it (:func:`inkground_lib.report.table_view.table_view`): one
    caption, the paper's reported rows shaded under a rule, the systems that did not run in a footnote
    instead of a row of dashes each, no column that repeats another (:func:`drop_repeated_valid_only`), rows
    equal in every column shown once with a note naming them
    (:func:`inkground_lib.report.table_view.merge_identical_rows`), and a note that the centre-dot rule is
    this book's choice. ``made_references``: the derenderer mode that made the references
    (:func:`inkground_lib.report.prose.labels_maker`); the row of the system that runs it says so in its name,
    and a note says what that row is (:func:`inkground_lib.report.names.maker_note`)."""
    from inkground_lib.report.names import maker_note
    from inkground_lib.report.table_view import table_view

    marked = []
    if made_references and len(summary):
        summary = summary.copy()
        if "label" not in summary.columns:
            summary["label"] = summary["system"]
        for i, r in summary.iterrows():
            note = maker_note(made_references, str(r["system"]))
            if note:
                summary.loc[i, "label"] = f"{r['label']} ({note})"
                marked.append(str(summary.loc[i, "label"]))
    df = results_table(summary, paper_dataset, paper=paper)
    df, notes = drop_repeated_valid_only(df)
    paper_rows = [i for i, src in enumerate(df["source"]) if src == PAPER]
    if (df["source"] == MEASURED).any():
        notes.append(CENTRE_DOT_NOTE)
    if paper_rows:
        notes.append("Our rows score only words whose text occurs once on their page (our target rule: a request "
                     "names its word by its text); the paper's rows are its reported numbers on its own pages.")
    for label in marked:
        notes.append(f"{label}: scored against references its own derenderer made, so its row says how far it "
                     f"lies from its own labels, not how well it traces; the sentence under the table counts the "
                     f"words where they differ.")
    if not_run:
        notes.append("Not run here (no numbers): " + ", ".join(sorted(not_run)) +
                     "; the table of systems that could not run says why.")
    return table_view(df, caption, index_name="system", paper_rows=paper_rows, notes=notes, merge_identical=True)


def unavailable_view(unavailable: dict, caption: str):
    """:func:`unavailable_table` as the book shows it (captioned, long reasons wrapped, not cut); when every
    system ran, one sentence under the caption's name instead of an empty table."""
    from inkground_lib.report.table_view import table_view

    if not unavailable:
        from IPython.display import Markdown

        name = caption.split(":", 1)[0]
        return Markdown(f"*{name}: none. Every system named in `systems` ran here.*")

    return table_view(unavailable_table(unavailable), caption, fold=False)
