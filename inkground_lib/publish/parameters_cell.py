"""The parameters cells of the section notebooks, read without a kernel: names, defaults, comments.

``inkground run --help`` lists them, a run's plan (:mod:`inkground_lib.publish.rerun_plan`) compares its values
with them, and a notebook can compare its own values with them. The cell is the one tagged ``parameters``
(papermill's convention); each top-level assignment in it is a parameter (``name = value`` or
``name: Annotation = value``), the comment at the end of its line (and comment lines below it) its help. What
values a parameter accepts is checked by :mod:`inkground_lib.publish.run_checks` from these.
"""

from __future__ import annotations

import ast
import io
import json
import tokenize
from dataclasses import dataclass
from pathlib import Path

from inkground_lib.core.layout import NOTEBOOKS


@dataclass(frozen=True)
class NotebookParameter:
    name: str
    default_text: str  # the default as written in the cell, e.g. '"data/datasets/synth"', '0.85'
    comment: str  # the help written beside it ("" if none)
    annotation: str = ""  # the annotation as written (``raters_per_pair: Union[int, list] = 2``), "" if none

    @property
    def default(self):
        """The default as a Python value (``ast.literal_eval``); its text when it is not a literal."""
        try:
            return ast.literal_eval(self.default_text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return self.default_text


def section_notebooks(folder: Path | None = None) -> dict[str, Path]:
    """{"01": notebooks/01_dataset_statistics.ipynb, ...}: the section notebooks present, in order."""
    return {p.stem[:2]: p for p in sorted(Path(folder or NOTEBOOKS).glob("[0-9][0-9]_*.ipynb"))}


def _comments(source: str) -> dict[int, str]:
    """{line number: comment text without '#'} for every comment in ``source``."""
    out = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.start[0]] = tok.string.lstrip("#").strip()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


def parameters_cell_source(notebook: str | Path) -> str:
    """The source of the notebook's cell tagged ``parameters``; ValueError naming the file if it has none."""
    nb = json.loads(Path(notebook).read_text("utf-8"))
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            src = cell.get("source", "")
            return "".join(src) if isinstance(src, list) else src
    raise ValueError(f"{notebook}: no code cell tagged 'parameters'")


def notebook_parameters(notebook: str | Path) -> list[NotebookParameter]:
    """The parameters of a notebook's parameters cell, in order (see the module doc).

    >>> src = 'x = 1  # one\\ny: int = 2\\n# y, more\\n'
    >>> [(p.name, p.default, p.comment) for p in parameters_from_source(src)]
    [('x', 1, 'one'), ('y', 2, 'y, more')]
    """
    return parameters_from_source(parameters_cell_source(notebook))


def parameters_from_source(source: str) -> list[NotebookParameter]:
    """:func:`notebook_parameters` of a parameters cell's source text."""
    tree = ast.parse(source)
    lines = source.splitlines()
    comments = _comments(source)
    nodes = [n for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))]
    starts = [n.lineno for n in tree.body] + [len(lines) + 1]
    out = []
    for node in nodes:
        target = node.targets[0] if isinstance(node, ast.Assign) else node.target
        if not isinstance(target, ast.Name) or node.value is None:
            continue
        nxt = min(s for s in starts if s > node.end_lineno)
        notes = [comments[ln] for ln in range(node.end_lineno, nxt) if ln in comments]
        annotation = ast.get_source_segment(source, node.annotation) if isinstance(node, ast.AnnAssign) else ""
        out.append(NotebookParameter(target.id, ast.get_source_segment(source, node.value) or "",
                                     " ".join(n for n in notes if n), annotation or ""))
    return out


def section_defaults(key: str, folder: Path | None = None) -> dict:
    """{name: default value} of section ``key``'s parameters cell (``"02"``)."""
    nbs = section_notebooks(folder)
    if key not in nbs:
        raise ValueError(f"no section {key!r}; sections are: {', '.join(nbs)}")
    return {p.name: p.default for p in notebook_parameters(nbs[key])}


def all_section_defaults(folder: Path | None = None) -> dict[str, dict]:
    """{section key: :func:`section_defaults`} of every section notebook, in order (what the reproducibility
    page shows a changed value beside)."""
    return {key: section_defaults(key, folder) for key in section_notebooks(folder)}
