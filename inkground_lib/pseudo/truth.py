"""Pseudo-labels against the true trajectories, where the candidates have them."""

from __future__ import annotations

import functools
import hashlib
import os
import warnings
from pathlib import Path
from typing import Mapping, Optional

import numpy as np
import pandas as pd

from inkground_lib.components.metrics.order import stroke_order_check
from inkground_lib.components.metrics.trajectory import geometry_batch, geometry_columns
from inkground_lib.core.dataset import Dataset
from inkground_lib.core.defaults import SPACING
from inkground_lib.core.files import append_jsonl, sources_sha256
from inkground_lib.core.ink import Ink, ink_digest
from inkground_lib.core.parallel import ordered_map
from inkground_lib.core.run_files import TRUTH_SCHEMA
from inkground_lib.pseudo.keys import PseudoError, iter_records

CODE_FILES = ("components/metrics/order.py", "components/metrics/trajectory.py", "core/ink.py",
              "core/defaults.py", "pseudo/truth.py")
"""The source files (under inkground_lib/) whose code decides a truth comparison: a logged one is reused only
while they are unchanged."""

ORDER_CHUNK = 256
"""Words per job of the stroke-order checks (the part of a comparison that runs in Python, word by word)."""


@functools.lru_cache(maxsize=1)
def code_sha256() -> str:
    """sha256 over :data:`CODE_FILES` (read once per process)."""
    root = Path(__file__).resolve().parents[1]
    return sources_sha256((name, root / name) for name in CODE_FILES)


def comparison_key(ink: Ink, true: Ink, page_size, spacing: float) -> str:
    """What decides a word's truth comparison: the ink as drawn and the true ink (:func:`~inkground_lib.core.ink.
    ink_digest`: stroke order and direction included), the page size (an empty ink is scored as a dot at the
    page centre) and the resampling step."""
    return hashlib.sha256(f"{ink_digest(ink)} {ink_digest(true)} {tuple(page_size)} {spacing!r}".encode()).hexdigest()


def _order_rows(job) -> list:
    """Pool job: ([(ink, true ink), ...], spacing) -> [(order differs, direction differs), ...]."""
    pairs, spacing = job
    return [stroke_order_check(ink, true, spacing=spacing) for ink, true in pairs]


def _read_log(path, repair: bool = True) -> dict:
    code = code_sha256()
    rows: dict = {}
    for rec in iter_records(Path(path), TRUTH_SCHEMA, repair=repair):
        if rec["key"] == code and isinstance(rec.get("rows"), dict):
            rows.update(rec["rows"])
    return rows


def known_comparisons(log, keys) -> dict:
    """{comparison key: [dtw, chamfer, order differs, direction differs]} for those of ``keys`` that the truth log
    ``log`` holds for today's code, or the same log of an earlier run
    (:func:`~inkground_lib.core.earlier_runs.earlier_files`: the book's run, then every rerun's; only read, a
    corrupt one skipped with a warning). What came from an earlier run is appended to ``log`` as one record,
    so the run's own log holds every comparison its tables come from."""
    from inkground_lib.core.earlier_runs import earlier_files

    wanted = set(keys)
    own = _read_log(log)
    known = {k: own[k] for k in wanted if k in own}
    taken: dict = {}
    for other in earlier_files(log) if len(known) < len(wanted) else ():
        try:
            rows = _read_log(other, repair=False)
        except PseudoError as err:
            warnings.warn(f"{err}: not read for results to reuse", stacklevel=2)
            continue
        taken.update({k: rows[k] for k in wanted - known.keys() - taken.keys() if k in rows})
        if len(known) + len(taken) == len(wanted):
            break
    if taken:
        append_jsonl(log, {"schema": TRUTH_SCHEMA, "key": code_sha256(), "rows": taken})
    return {**known, **taken}


def truth_metrics(ds: Dataset, pseudo: Mapping[str, Ink], spacing: float = SPACING, *, workers: Optional[int] = 1,
                  executor=None, log: str | os.PathLike | None = None) -> pd.DataFrame:
    """Per word with a true ink: page, word_id, dtw, chamfer (pseudo-label vs true ink, units of the true
    word height; an empty pseudo-label is scored as the design's invalid output, a dot at the page centre),
    order_differs, direction_differs (:func:`stroke_order_check`; NaN where undefined).

    Each comparison is made once per content (:func:`comparison_key`): words whose inks are equal are compared
    once, and with ``log`` (a truth log, :func:`~inkground_lib.core.run_files.truth_jsonl`) the comparisons
    it holds for today's code (:data:`CODE_FILES`), or an earlier run's log holds (:func:`known_comparisons`),
    are read, not made, and those made here are appended to it
    (e.g. section 02's pseudo-labels and the same derenderer's row of its comparison of derenderers). The
    stroke-order checks run in ``workers`` processes or on ``executor`` (:func:`~inkground_lib.core.parallel.
    ordered_map`, :data:`ORDER_CHUNK` words a job); DTW and Chamfer in numba's threads. The table is the same
    whichever of these is used."""
    cols = ["page", "word_id", "dtw", "chamfer", "order_differs", "direction_differs"]
    items = [(p, w) for p in ds.pages for w in p.words if w.true_ink is not None and w.true_ink.n_points]
    if not items:
        return pd.DataFrame(columns=cols)
    keys = [comparison_key(pseudo[w.id], w.true_ink, (p.width, p.height), spacing) for p, w in items]
    known = known_comparisons(log, keys) if log is not None else {}
    first: dict[str, int] = {}
    for i, k in enumerate(keys):
        if k not in known:
            first.setdefault(k, i)
    todo = list(first.values())
    if todo:
        geo = geometry_columns(geometry_batch(
            [(pseudo[items[i][1].id], items[i][1].true_ink, (items[i][0].width, items[i][0].height)) for i in todo],
            spacing=spacing, progress=False))
        pairs = [(pseudo[items[i][1].id], items[i][1].true_ink) for i in todo]
        jobs = [(pairs[a:a + ORDER_CHUNK], spacing) for a in range(0, len(pairs), ORDER_CHUNK)]
        verdicts = [v for part in ordered_map(_order_rows, jobs, workers=workers, executor=executor, min_jobs=2)
                    for v in part]
        made = {keys[i]: [float(d), float(c), None if o is None else bool(o), None if r is None else bool(r)]
                for i, d, c, (o, r) in zip(todo, geo["dtw"], geo["chamfer"], verdicts)}
        known = {**known, **made}
        if log is not None:
            append_jsonl(log, {"schema": TRUTH_SCHEMA, "key": code_sha256(), "rows": made})
    rows = []
    for (p, w), k in zip(items, keys):
        d, c, o, r = known[k]
        rows.append({"page": p.id, "word_id": w.id, "dtw": float(d), "chamfer": float(c),
                     "order_differs": np.nan if o is None else float(o),
                     "direction_differs": np.nan if r is None else float(r)})
    return pd.DataFrame(rows, columns=cols)
