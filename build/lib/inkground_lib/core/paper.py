"""The paper's reported numbers and claims (data/paper/), loaded."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from inkground_lib.core.layout import PAPER_DIR

PAPER_CSV = PAPER_DIR / "reported.csv"
"""Every number of the paper summary, with the sentence it comes from."""
CLAIMS_CSV = PAPER_DIR / "claims.csv"
"""Every claim of the paper summary, with its machine check."""
SUMMARY_TXT = PAPER_DIR / "inkground-summary.txt"
"""The paper summary the claims quote."""


def paper_numbers(path: str | Path | None = None) -> pd.DataFrame:
    """The paper's reported numbers (one row per number), indexed by id."""
    df = pd.read_csv(path or PAPER_CSV, dtype={"section": str})
    if not df["id"].is_unique:
        raise ValueError(f"{path or PAPER_CSV}: duplicate ids {df['id'][df['id'].duplicated()].tolist()}")
    return df.set_index("id")


