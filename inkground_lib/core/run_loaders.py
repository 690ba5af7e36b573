"""Reading the run folders of sections 02 and 03 (the names of their files are :mod:`inkground_lib.core.run_files`).

:func:`load_eval_run` reads a section-03 run for one reference (scores typed by
:mod:`inkground_lib.core.scores_table`, facts, summary); :func:`load_pseudo_run` is the rating app's view of a
pseudo-label run; :func:`load_pseudo_summary` reads a pseudo-label run's summary. The loaders only read.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

import pandas as pd

from inkground_lib.core.csv_cells import read_csv
from inkground_lib.core.dataset import Dataset, DatasetError, dataset_hash, load_dataset
from inkground_lib.core.defaults import PAGE_SETS
from inkground_lib.core.files import JSONLError, read_jsonl
from inkground_lib.core.folders import LOCK_FILE, RUN_MARK, is_locked
from inkground_lib.core.ink import Ink, InkError, ink_from_lists
from inkground_lib.core.repo_paths import repo_path
from inkground_lib.core.run_files import (
    DERENDER_SCHEMA,
    derender_jsonl,
    facts_json,
    pages_csv,
    pseudo_summary_json,
    scores_csv,
    summary_csv,
    words_csv,
)
from inkground_lib.core.scores_table import scores_frame

PathLike = str | os.PathLike


# ------------------------------------------------------------------------------ loading an evaluation run

SCORE_READ_DTYPES = {c: "string" for c in ("system", "dataset", "page_id", "word_id", "text", "status", "ocr_text",
                                          "split", "label", "kind")}
"""The text columns of a scores file, read as strings (ids that look like numbers stay ids)."""


@dataclass
class EvalRun:
    """One section-03 run folder read for one reference ("reference" or "true"); ``scores`` is None when the
    run was loaded without them (:func:`load_eval_run`)."""

    run_dir: Path
    reference: str
    scores: pd.DataFrame | None
    facts: dict
    summary: pd.DataFrame | None = None

    @property
    def dataset(self) -> str:
        return str(self.facts.get("dataset") or (self.scores["dataset"].iloc[0]
                                                 if self.scores is not None and len(self.scores) else "?"))

    @property
    def settings(self) -> dict:
        return dict(self.facts.get("settings") or {})

    @property
    def dataset_dir(self) -> Path | None:
        """The dataset folder the run scored (facts "dataset_dir", when section 03 records it; recorded relative to
        the repository root, so read from there wherever the process runs)."""
        d = self.facts.get("dataset_dir")
        return repo_path(d) if d else None

    @property
    def chance(self) -> float:
        return float((self.facts.get("style") or {}).get("chance", float("nan")))


def _need(path: Path) -> Path:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not found; section 03 (notebooks/03_model_evaluation) writes it "
                                f"(run it first, or point eval_runs at its run folder)")
    return path


def load_eval_run(run_dir: PathLike, reference: str = "reference", *, scores: bool = True) -> EvalRun:
    """Read ``scores-<reference>.csv`` (unless ``scores`` is False) and ``facts-<reference>.json`` (and the
    summary, if present and not empty) of a section-03 run folder. Raises FileNotFoundError naming the file and
    what writes it; ValueError naming the file when a table or the facts cannot be read."""
    run_dir = Path(run_dir)
    sp = _need(scores_csv(run_dir, reference)) if scores else None
    fp = _need(facts_json(run_dir, reference))
    table = None
    if sp is not None:
        raw = read_csv(sp, dtype=SCORE_READ_DTYPES, keep_default_na=True)
        # a blank render is read as '' by the OCR; CSV stores it as an empty field: restore '' where the edit
        # counts exist (OCR ran) so "not run" (NA) and "read nothing" ('') stay apart
        if "ocr_text" in raw.columns:
            ran = raw["N"].notna()
            raw.loc[ran & raw["ocr_text"].isna(), "ocr_text"] = ""
        try:
            table = scores_frame(raw)
        except ValueError as e:
            raise ValueError(f"{sp}: {e}") from None
    try:
        facts = json.loads(fp.read_text("utf-8"))
    except ValueError as e:
        raise ValueError(f"{fp}: not valid JSON: {e}") from None
    sm = summary_csv(run_dir, reference)
    summary = read_csv(sm) if sm.is_file() and sm.stat().st_size > 1 else None
    return EvalRun(run_dir, reference, table, facts, summary)


def load_eval_runs(run_dirs: Iterable[PathLike], reference: str = "reference") -> list[EvalRun]:
    """:func:`load_eval_run` of each folder."""
    return [load_eval_run(d, reference) for d in run_dirs]


# ---------------------------------------------------------------------------- loading a pseudo-label run

class RunError(ValueError):
    """A folder that is not a usable pseudo-label run; the message names the folder and the file."""


def load_pseudo_summary(path: PathLike) -> dict | None:
    """The summary.json of a pseudo-label run (``path``: the run folder, or the summary file itself); None
    where there is none. RunError naming the file when it is not JSON."""
    p = Path(path)
    p = pseudo_summary_json(p) if p.is_dir() else p
    if not p.is_file():
        return None
    try:
        return json.loads(p.read_text("utf-8"))
    except ValueError as e:
        raise RunError(f"{p}: not valid JSON: {e}") from None


@dataclass
class PseudoRun:
    """A pseudo-label run as a rating session shows it: its candidate pages, the pages offered, each word's
    pseudo-label and each page's OCR filter outcome."""

    run: Path
    candidates: Path
    dataset: Dataset
    offered: list[str]  # page ids offered to raters, in the run's order
    all_pages: list[str]  # every candidate page of the run
    pseudo: dict[str, Ink]  # word id -> pseudo-label (page pixels)
    derenderer: str
    ocr_pass: dict[str, bool]
    ocr_threshold: Optional[float] = None  # the OCR filter's threshold the run used (its summary.json)

    def page(self, page_id: str):
        return self.dataset.page(page_id)


def _need_file(run: Path, path: Path) -> Path:
    if not path.is_file():
        raise RunError(f"{run}: not a pseudo-label run folder ({path.name} is missing); give the folder that "
                       f"`inkground pseudo --run` or section 02 wrote")
    return path


def find_candidates(run: Path, params: dict, candidates: Optional[PathLike] = None) -> Path:
    """The candidate dataset of a run: ``candidates`` if given, else the run's ``params.candidates``,
    absolute, or relative to the folder the run was made from (the run folder's path minus the run's own
    recorded ``run_dir``), or to the current folder."""
    if candidates is not None:
        return Path(candidates)
    rec = params.get("candidates")
    if not isinstance(rec, str) or not rec:
        raise RunError(f"{pseudo_summary_json(run)}: field params.candidates: missing; pass --candidates DIR")
    rec_path = Path(rec)
    if rec_path.is_absolute():
        return rec_path
    tries = []
    run_rec = params.get("run_dir")
    if isinstance(run_rec, str) and run_rec and not Path(run_rec).is_absolute():
        parts = Path(run_rec).parts
        res = run.resolve()
        if res.parts[-len(parts):] == parts:
            tries.append(Path(*res.parts[:-len(parts)]) / rec_path)
    tries.append(Path.cwd() / rec_path)
    for t in tries:
        if (t / "manifest.json").is_file():
            return t
    raise RunError(f"{pseudo_summary_json(run)}: field params.candidates: the candidate pages {rec!r} are not found "
                   f"(tried {', '.join(map(str, tries))}); pass --candidates DIR")


def load_pseudo_run(run_dir: PathLike, candidates: Optional[PathLike] = None, pages: str = "ocr-passed") -> PseudoRun:
    """Open a pseudo-label run for rating. RunError (naming the folder and the file) if ``run_dir`` is not a
    finished pseudo-label run of inkground's, a pipeline is writing it now, its candidate pages cannot be
    found or have changed since the run (dataset hash), or its pseudo-labels are missing."""
    run = Path(run_dir)
    if not run.is_dir():
        raise RunError(f"{run}: not a folder; give a pseudo-label run folder (section 02's run_dir)")
    if pages not in PAGE_SETS:
        raise RunError(f"--pages: {pages!r} is not one of {PAGE_SETS}")
    mark = run / RUN_MARK
    if mark.is_file():
        try:
            by = json.loads(mark.read_text("utf-8")).get("created_by")
        except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
            by = None
        if by != "pseudo":
            raise RunError(f"{run}: a run folder of `inkground {by}`, not a pseudo-label run")
    if (run / LOCK_FILE).is_file() and is_locked(run):
        raise RunError(f"{run}: a pipeline is writing this run folder now; wait for it to finish")
    summary = load_pseudo_summary(_need_file(run, pseudo_summary_json(run)))
    params, comps = summary.get("params") or {}, summary.get("components") or {}
    if not isinstance(params, dict) or "derenderer" not in comps:
        raise RunError(f"{pseudo_summary_json(run)}: not a pseudo-label run summary (fields params, components "
                       f"missing)")
    page_tab = read_csv(_need_file(run, pages_csv(run)), dtype={"page": str})
    word_tab = read_csv(_need_file(run, words_csv(run)), dtype={"page": str, "word_id": str}, keep_default_na=False)
    for tab, path, cols in ((page_tab, pages_csv(run), ("page", "ocr_pass")),
                            (word_tab, words_csv(run), ("page", "word_id", "strokes", "points"))):
        missing = [c for c in cols if c not in tab.columns]
        if missing:
            raise RunError(f"{path}: columns {missing} missing; not a pseudo-label run table")
    der = str(comps["derenderer"])
    cache = _need_file(run, derender_jsonl(run, der))
    cand = find_candidates(run, params, candidates)
    try:
        ds = load_dataset(cand)
    except DatasetError as e:
        raise RunError(f"candidate pages of {run}: {e}") from None
    want = summary.get("candidates_hash")
    if want and dataset_hash(cand) != want:
        raise RunError(f"{cand}: the candidate pages changed since the run {run} was made (dataset hash differs "
                       f"from {pseudo_summary_json(run).name}); rerun section 02 or pass the right --candidates")
    try:
        recs = [r for _, r in read_jsonl(cache, lambda r: isinstance(r, dict) and r.get("schema") == DERENDER_SCHEMA,
                                         repair=False, what="derender record")]
    except JSONLError as e:
        raise RunError(str(e)) from None
    expect: dict[str, dict[str, tuple[int, int]]] = {}
    for w in word_tab.itertuples(index=False):
        expect.setdefault(w.page, {})[w.word_id] = (int(w.strokes), int(w.points))
    ids = [str(p) for p in page_tab["page"]]
    known = {p.id for p in ds.pages}
    lost = [p for p in ids if p not in known]
    if lost:
        raise RunError(f"{pages_csv(run)}: pages {lost[:5]} are not in the candidate pages {cand}")
    pseudo: dict[str, Ink] = {}
    for pid in ids:
        page = ds.page(pid)
        chosen = None
        for r in reversed(recs):  # the newest record of the page whose inks are the ones the run used
            if r.get("page") != pid or not isinstance(r.get("words"), dict):
                continue
            try:
                inks = {w.id: ink_from_lists(r["words"][w.id], f"{cache}: page {pid}: word {w.id}")
                        for w in page.words}
            except (KeyError, InkError):
                continue
            if all((len(inks[w]), inks[w].n_points) == sp for w, sp in expect.get(pid, {}).items()):
                chosen = inks
                break
        if chosen is None:
            raise RunError(f"{cache}: no pseudo-labels of page {pid} match {words_csv(run)}; the run folder is "
                           f"incomplete (rerun section 02)")
        pseudo.update(chosen)
    passed = dict(zip(ids, page_tab["ocr_pass"].astype(str).str.lower().eq("true")))
    offered = [p for p in ids if passed[p]] if pages == "ocr-passed" else list(ids)
    thr = params.get("ocr_threshold")
    return PseudoRun(run, cand, ds, offered, ids, pseudo, der, passed,
                     float(thr) if isinstance(thr, (int, float)) and not isinstance(thr, bool) else None)
