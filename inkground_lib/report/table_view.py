"""How a table is shown in the book: captioned, fitted to the page, human column names, one footnote per
repeated reason, rows that repeat another said once, the paper's rows set apart from ours.

:func:`table_view` turns a DataFrame (the computation's own table: keep it for tests and CSVs) into an HTML
table rendered by pandas' Styler, inside a box that scrolls sideways on a narrow screen instead of
overflowing the page (the book's CSS, ``book/_static/inkground.css``, styles the classes named here; on a
narrow screen ``book/_static/inkground.js`` sets a table that does not fit one block per row). Nothing is
truncated: every row and column is printed (no "..."), long cells wrap between words. The caption and the
notes are Markdown (inline: code, emphasis, links), rendered here, so a caption never shows raw backticks. Every
cell and column name is text, escaped (:mod:`~inkground_lib.report.escape`): a dataset's name or a system's label
never becomes markup, and a note made of cells shows them literally.
"""

from __future__ import annotations

import numbers
import re
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
import pandas as pd

from inkground_lib.report.escape import html_attr, inline_markdown, md_escape, plain_text

FIGURE_CLASS = "ink-table-figure"  # caption, scroll box and notes
WRAP_CLASS = "ink-table-wrap"  # the scroll box (overflow-x: auto)
TABLE_CLASS = "ink-table"
PAPER_ROW_CLASS = "ink-paper-row"  # a row of the paper's reported numbers
FIRST_PAPER_ROW_CLASS = "ink-first-paper-row"  # the first of them: a rule above it
NOTES_CLASS = "ink-table-notes"
REPEATED_MIN_CHARS = 24  # a cell text at least this long that repeats becomes a footnote
MARKS = "*†‡§¶"


def merge_identical_rows(df: pd.DataFrame, label: str, start: int = 0) -> tuple[pd.DataFrame, list[str]]:
    """Rows equal in every column but ``label`` are shown once: the first keeps its place, its label joins
    the labels of all of them with " / " and a footnote mark (marks counted from ``start``), and a note says
    which rows they are. Returns (table, notes). A reader still finds every row's label in the table.

    >>> t = pd.DataFrame({"system": ["ref", "box", "skeleton"], "DTW": ["0.000", "0.287", "0.000"]})
    >>> m, notes = merge_identical_rows(t, "system")
    >>> list(m["system"]), notes
    (['ref / skeleton *', 'box'], ['* ref and skeleton: the same in every column, shown once.'])
    """
    others = [c for c in df.columns if c != label]
    if not others or len(df) < 2:
        return df, []
    keys = [tuple(map(str, row)) for row in df[others].itertuples(index=False)]
    groups: dict[tuple, list[int]] = {}
    for pos, key in enumerate(keys):
        groups.setdefault(key, []).append(pos)
    keep, notes, labels = [], [], list(df[label])
    k = start
    for pos, key in enumerate(keys):
        members = groups[key]
        if pos != members[0]:
            continue
        keep.append(pos)
        if len(members) > 1:
            mark = footnote_mark(k)
            k += 1
            names = [str(labels[i]) for i in members]
            labels[pos] = " / ".join(names) + f" {mark}"
            listed = ", ".join(map(md_escape, names[:-1])) + " and " + md_escape(names[-1])
            notes.append(f"{mark} {listed}: the same in every column, shown once.")
    if not notes:
        return df, []
    out = df.copy()
    out[label] = labels
    return out.iloc[keep], notes


def footnote_mark(k: int) -> str:
    """The k-th footnote mark (0-based): *, †, ‡, §, ¶, then [6], [7], ...

    >>> [footnote_mark(k) for k in (0, 1, 5)]
    ['*', '†', '[6]']
    """
    return MARKS[k] if k < len(MARKS) else f"[{k + 1}]"


def fold_repeated(df: pd.DataFrame, min_chars: int = REPEATED_MIN_CHARS,
                  start: int = 0) -> tuple[pd.DataFrame, list[str]]:
    """Cells whose text (at least ``min_chars`` characters) occurs more than once are replaced by a short
    mark; returns (table, notes) where ``notes[k]`` explains mark k (marks counted from ``start``). An em-dash reason keeps its dash:
    "— torch.cuda.is_available() is False" becomes "— *".

    >>> t, notes = fold_repeated(pd.DataFrame({"a": ["— needs a GPU with CUDA 12", "— needs a GPU with CUDA 12", "1"]}))
    >>> list(t["a"]), notes
    (['— *', '— *', '1'], ['* needs a GPU with CUDA 12'])
    """
    texts = pd.Series([v for col in df.columns for v in df[col] if isinstance(v, str) and len(v) >= min_chars])
    repeated = [t for t, n in texts.value_counts(sort=False).items() if n > 1]
    if not repeated:
        return df, []
    order = list(dict.fromkeys(t for col in df.columns for t in df[col] if t in set(repeated)))
    marks, notes = {}, []
    for k, text in enumerate(order, start):
        mark = footnote_mark(k)
        dash = text.startswith("— ")
        marks[text] = f"— {mark}" if dash else mark
        notes.append(f"{mark} {md_escape(text[2:] if dash else text)}")
    out = df.copy()
    for col in out.columns:
        out[col] = [marks.get(v, v) if isinstance(v, str) else v for v in out[col]]
    return out, notes


def number_text(v, decimals: int = 3) -> str:
    """A cell as text: integers (and whole floats) with thousands separators; other numbers at ``decimals``
    decimals below 10, one fewer below 100 and one decimal from 100 on (two significant digits below 0.001);
    text as it is.

    >>> [number_text(v) for v in (2984, 1.0, 0.85, 34.89, 462.357, 0.00042, "— not run", True)]
    ['2,984', '1', '0.850', '34.89', '462.4', '0.00042', '— not run', 'True']
    """
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or v != v:
        return "—" if isinstance(v, float) else str(v)
    if float(v).is_integer():
        return f"{int(v):,}"
    a = abs(v)
    if a < 0.001:
        return f"{v:.2g}"
    d = decimals if a < 10 else (max(decimals - 1, 1) if a < 100 else 1)
    return f"{v:,.{d}f}"


@dataclass
class TableView:
    """A table as the book shows it; ``data`` is the table behind it (after renaming and folding)."""

    data: pd.DataFrame
    caption: str  # Markdown (inline)
    notes: list[str] = field(default_factory=list)  # Markdown, each its own paragraph
    paper_rows: list[int] = field(default_factory=list)  # positions of the paper's reported rows
    formatters: dict[str, Callable] = field(default_factory=dict)
    show_index: bool = True
    table_id: str = "t"

    def to_html(self) -> str:
        styler = self.data.style
        styler = styler.set_uuid(self.table_id)  # fixed ids: two builds give identical pages
        # every cell: no 1.000000, no 462.3570; text escaped (a value from a dataset or config is never markup)
        styler = styler.format(number_text, na_rep="—", escape="html")
        if self.formatters:
            styler = styler.format(self.formatters, na_rep="—", escape="html")
        styler = styler.format_index(escape="html", axis=0).format_index(escape="html", axis=1)
        styler = styler.set_table_attributes(f'class="{TABLE_CLASS}" aria-describedby="{self.table_id}-caption"')
        if self.paper_rows:
            classes = pd.DataFrame("", index=self.data.index, columns=self.data.columns)
            for k, pos in enumerate(self.paper_rows):
                classes.iloc[pos, :] = PAPER_ROW_CLASS + (f" {FIRST_PAPER_ROW_CLASS}" if k == 0 else "")
            styler = styler.set_td_classes(classes)
        if not self.show_index:
            styler = styler.hide(axis="index")
        table = styler.to_html(doctype_html=False)
        notes = "".join(f"<p>{inline_markdown(n)}</p>" for n in self.notes)
        notes = f'<div class="{NOTES_CLASS}">{notes}</div>' if notes else ""
        # the caption sits outside the scroll box, so it wraps at the page's width however wide the table is
        return (f'<figure class="{FIGURE_CLASS}"><figcaption id="{self.table_id}-caption">'
                f'{inline_markdown(self.caption)}</figcaption><div class="{WRAP_CLASS}" tabindex="0" role="region" '
                f'aria-label={html_attr(plain_text(self.caption))}>{table}</div>{notes}</figure>')

    def _repr_html_(self) -> str:
        return self.to_html()


def table_id(caption: str) -> str:
    """A stable id from a caption ("Table 1: the benchmark set" -> "table-1-the-benchmark-set").

    >>> table_id("Table 1: ours, beside the paper's")
    'table-1-ours-beside-the-paper-s'
    """
    return re.sub(r"[^a-z0-9]+", "-", plain_text(caption).lower()).strip("-")[:60] or "t"


def table_view(df: pd.DataFrame, caption: str, *, columns: Optional[dict[str, str]] = None,
               index_name: Optional[str] = None, decimals: Optional[dict[str, int]] = None,
               paper_rows: Optional[list[int]] = None, notes: Optional[list[str]] = None,
               fold: bool = True, show_index: bool = True, merge_identical: bool = False) -> TableView:
    """``df`` as the book shows it.

    ``columns`` renames columns to human names ({"n_words": "words"}); the index is shown as the first column
    (``show_index``), headed ``index_name`` (default: the index's own name); ``decimals`` {column (after renaming): digits} formats numbers (integers are
    printed as integers: 1.000000 never appears); ``paper_rows`` are row positions of the paper's reported
    numbers (shaded, a rule above the first); ``notes`` are printed under the table, after the footnotes that
    ``fold`` makes of repeated long cells (:func:`fold_repeated`). ``merge_identical`` shows rows that are
    equal in every column but the first once (:func:`merge_identical_rows`), with a note naming them. The
    caption and ``notes`` are inline Markdown (:func:`inline_markdown`); cells are text.
    """
    out = df.rename(columns=columns or {})
    if show_index:  # the index becomes the first column: one header row, no pandas index name row
        name = index_name if index_name is not None else (out.index.name or "")
        out = out.reset_index(names=[name] if out.index.nlevels == 1 else None)
    merge_notes: list[str] = []
    if merge_identical and len(out.columns):
        out, merge_notes = merge_identical_rows(out.reset_index(drop=True), out.columns[0])
        kept = set(paper_rows or [])  # the index holds each kept row's old position
        paper_rows = [pos for pos, old in enumerate(out.index) if old in kept]
        out = out.reset_index(drop=True)
    folded, fold_notes = fold_repeated(out, start=len(merge_notes)) if fold else (out, [])
    fmts = {}
    for col, d in (decimals or {}).items():
        if col in folded.columns:
            fmts[col] = (lambda v, d=d: v if isinstance(v, str) else
                         ("—" if pd.isna(v) else (f"{int(v):,}" if float(v).is_integer() and d == 0 else f"{v:.{d}f}")))
    return TableView(folded, caption, notes=merge_notes + fold_notes + list(notes or []), paper_rows=list(paper_rows or []),
                     formatters=fmts, show_index=False, table_id=table_id(caption))
