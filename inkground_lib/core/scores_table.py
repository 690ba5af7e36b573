"""The per-word scores table of a section-03 run (``scores-<reference>.csv``): its columns, their dtypes and the
checks a table must pass. A file format, so it lives at the lowest layer: section 03 writes the table, the
run-folder loaders (:mod:`inkground_lib.core.run_files`) read it back, section 03's summary
(:mod:`inkground_lib.evaluation.scores`) and section 04 use it."""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from inkground_lib.core.metric_table import metric_names

_GEOMETRY, _OCR, _STYLE = (metric_names(computed=c) for c in ("geometry", "ocr", "style"))

SCORE_DTYPES: dict[str, str] = {
    "system": "string", "dataset": "string", "page_id": "string", "word_id": "string", "text": "string",
    "status": "string", "valid": "bool", **{m: "float64" for m in _GEOMETRY}, "ocr_text": "string",
    "S": "Int64", "D": "Int64", "I": "Int64", "N": "Int64", **{m: "float64" for m in _OCR},
    **{m: "float64" for m in _STYLE},
}


SCORE_COLUMNS: tuple[str, ...] = tuple(SCORE_DTYPES)
"""Columns of the per-word scores table, in order."""


STATUSES: tuple[str, ...] = ("ok", "partial", "truncated", "no_strokes", "unparseable", "refusal", "empty",
                             "too_large", "error", "invalid", "missing")
"""Known status values (informational: other strings are accepted)."""


_REQUIRED = ("system", "dataset", "page_id", "word_id", "valid", *_GEOMETRY)


_OPTIONAL_DEFAULTS = {"text": pd.NA, "status": pd.NA, "ocr_text": pd.NA, "S": pd.NA, "D": pd.NA, "I": pd.NA,
                      "N": pd.NA, **{m: np.nan for m in _OCR + _STYLE}}


def empty_scores() -> pd.DataFrame:
    """An empty scores table with the schema's columns and dtypes."""
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in SCORE_DTYPES.items()})


def scores_frame(records: Iterable[Mapping] | pd.DataFrame) -> pd.DataFrame:
    """A scores table from dicts (or a DataFrame): schema order and dtypes, optional columns filled.

    Required: system, dataset, page_id, word_id, valid, dtw, chamfer. Missing optional columns become NA
    / NaN. Extra columns are kept after the schema's. Raises ValueError naming what is wrong (via
    :func:`check_scores`).
    """
    df = records.copy() if isinstance(records, pd.DataFrame) else pd.DataFrame(list(records))
    if len(df) == 0 and not len(df.columns):
        return empty_scores()
    missing = [c for c in _REQUIRED if c not in df.columns]
    if missing:
        raise ValueError(f"scores: missing required column(s) {missing}")
    for c, v in _OPTIONAL_DEFAULTS.items():
        if c not in df.columns:
            df[c] = v
    for c, t in SCORE_DTYPES.items():
        try:
            if t == "bool":
                bad = df[c].isna() | ~df[c].isin([True, False])
                if bad.any():
                    raise ValueError(f"row {int(np.flatnonzero(bad.to_numpy())[0])}: {df[c][bad].iloc[0]!r}")
                df[c] = df[c].astype(bool)
            elif t == "Int64":
                df[c] = pd.to_numeric(df[c]).astype("Int64")
            else:
                df[c] = df[c].astype(t)
        except (TypeError, ValueError) as e:
            raise ValueError(f"scores: column {c!r} cannot be read as {t}: {e}") from None
    extra = [c for c in df.columns if c not in SCORE_DTYPES]
    df = df[list(SCORE_COLUMNS) + extra].reset_index(drop=True)
    check_scores(df)
    return df


def check_scores(df: pd.DataFrame) -> None:
    """Raise ValueError if ``df`` is not a usable scores table (columns, keys, counts, duplicates)."""
    missing = [c for c in SCORE_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"scores: missing column(s) {missing}")
    for c in ("system", "dataset", "page_id", "word_id"):
        if df[c].isna().any():
            i = int(np.flatnonzero(df[c].isna().to_numpy())[0])
            raise ValueError(f"scores: row {i} has no {c}")
    for c in ("S", "D", "I", "N"):
        v = pd.to_numeric(df[c]).astype("Float64")
        if (v < 0).any():
            i = int(np.flatnonzero((v < 0).fillna(False).to_numpy())[0])
            raise ValueError(f"scores: row {i} has a negative {c}")
    sdin = df[["S", "D", "I", "N"]].isna()
    part = sdin.any(axis=1) & ~sdin.all(axis=1)
    if part.any():
        raise ValueError(f"scores: row {int(np.flatnonzero(part.to_numpy())[0])} has some of S, D, I, N but not all")
    dup = df.duplicated(["system", "dataset", "page_id", "word_id"])
    if dup.any():
        r = df[dup].iloc[0]
        raise ValueError(f"scores: duplicate row for system {r['system']!r}, dataset {r['dataset']!r}, "
                         f"page {r['page_id']!r}, word {r['word_id']!r}")
