"""CSV files a reviewer opens in a spreadsheet: a text cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or
a carriage return is written behind a single quote, so a spreadsheet shows it as text and never runs it as a
formula (``=HYPERLINK(...)`` in a word's text); reading the file back removes that quote, so the values round
trip exactly.

OWASP's "CSV Injection" page (owasp.org/www-community/attacks/CSV_Injection, read 2026-12) names these first
characters and the single-quote prefix. Only text is touched: a number is written as a number (``-0.5`` in a
numeric column stays a number). To round trip, a text that already begins with quotes before one of those
characters gets one quote more.

>>> inert("=HYPERLINK(\\"http://x\\")"), inert("-"), inert("'=1"), inert("'tis")
('\\'=HYPERLINK("http://x")', "'-", "''=1", "'tis")
>>> all(restored(inert(v)) == v for v in ("=1", "'=1", "''+2", "'tis", "plain", "@a", "\\t"))
True
"""

from __future__ import annotations

import os

import pandas as pd

from inkground_lib.core.files import atomic_write_text

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""First characters with which a spreadsheet reads a cell as a formula (OWASP, above)."""


def _quoted_formula(text: str) -> bool:
    return text.lstrip("'").startswith(FORMULA_STARTS)


def inert(value):
    """``value`` as written to a CSV cell: text a spreadsheet would run as a formula behind one quote more."""
    return "'" + value if isinstance(value, str) and _quoted_formula(value) else value


def restored(value):
    """A cell's value as it was before :func:`inert`."""
    return value[1:] if isinstance(value, str) and value.startswith("'") and _quoted_formula(value) else value


def _text_columns(df: pd.DataFrame) -> list:
    return [c for c in df.columns if df[c].dtype == object or isinstance(df[c].dtype, pd.StringDtype)]


def csv_text(df: pd.DataFrame) -> str:
    """``df`` as CSV text (no index), its text cells made :func:`inert`."""
    out = df.copy()
    for c in _text_columns(out):
        out[c] = out[c].map(inert, na_action="ignore")
    return out.to_csv(index=False)


def write_csv(path: str | os.PathLike, df: pd.DataFrame):
    """:func:`csv_text` of ``df`` written atomically to ``path``."""
    return atomic_write_text(path, csv_text(df))


def read_csv(path: str | os.PathLike, **kwargs) -> pd.DataFrame:
    """``pd.read_csv(path, **kwargs)`` with the text cells :func:`restored` (a file :func:`write_csv` wrote reads
    back as the table it was given)."""
    df = pd.read_csv(path, **kwargs)
    for c in _text_columns(df):
        df[c] = df[c].map(restored, na_action="ignore")
    return df
