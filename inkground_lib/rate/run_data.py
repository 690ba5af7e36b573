"""What a rating session shows: the pages of a pseudo-label run (section 02's run folder), each page photo
with its words and their pseudo-labels. Read-only: nothing in the run folder or the dataset is written."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pandas as pd

from inkground_lib.core.dataset import Dataset, DatasetError, dataset_hash, load_dataset
from inkground_lib.core.files import JSONLError, read_jsonl
from inkground_lib.core.folders import LOCK_FILE, RUN_MARK, is_locked
from inkground_lib.core.ink import Ink, InkError, ink_from_lists

from .assign import RateError

PAGE_SETS = ("ocr-passed", "all")
"""Which pages a session offers: those that passed the OCR filter (the paper's funnel: raters only see
those), or every candidate page of the run."""


class RunError(RateError):
    """A folder that is not a usable pseudo-label run; the message names the folder and the file."""


@dataclass
class RunPages:
    run: Path
    candidates: Path
    dataset: Dataset
    offered: list[str]  # page ids offered to raters, in the run's order
    all_pages: list[str]  # every candidate page of the run
    pseudo: dict[str, Ink]  # word id -> pseudo-label (page pixels)
    derenderer: str
    ocr_pass: dict[str, bool]

    def page(self, page_id: str):
        return self.dataset.page(page_id)


def _need_file(run: Path, name: str) -> Path:
    p = run / name
    if not p.is_file():
        raise RunError(f"{run}: not a pseudo-label run folder ({name} is missing); give the folder that "
                       f"`inkground pseudo --run` or section 02 wrote")
    return p


def find_candidates(run: Path, params: dict, candidates: Optional[str | Path] = None) -> Path:
    """The candidate dataset of a run: ``candidates`` if given, else the run's ``params.candidates``,
    absolute, or relative to the folder the run was made from (the run folder's path minus the run's own
    recorded ``run_dir``), or to the current folder."""
    if candidates is not None:
        return Path(candidates)
    rec = params.get("candidates")
    if not isinstance(rec, str) or not rec:
        raise RunError(f"{run}/summary.json: field params.candidates: missing; pass --candidates DIR")
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
    raise RunError(f"{run}/summary.json: field params.candidates: the candidate pages {rec!r} are not found "
                   f"(tried {', '.join(map(str, tries))}); pass --candidates DIR")


def load_run(run_dir, candidates: Optional[str | Path] = None, pages: str = "ocr-passed") -> RunPages:
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
    summary = json.loads(_need_file(run, "summary.json").read_text("utf-8"))
    params, comps = summary.get("params") or {}, summary.get("components") or {}
    if not isinstance(params, dict) or "derenderer" not in comps:
        raise RunError(f"{run}/summary.json: not a pseudo-label run summary (fields params, components missing)")
    page_tab = pd.read_csv(_need_file(run, "pages.csv"), dtype={"page": str})
    word_tab = pd.read_csv(_need_file(run, "words.csv"), dtype={"page": str, "word_id": str},
                           keep_default_na=False)
    for tab, name, cols in ((page_tab, "pages.csv", ("page", "ocr_pass")),
                            (word_tab, "words.csv", ("page", "word_id", "strokes", "points"))):
        missing = [c for c in cols if c not in tab.columns]
        if missing:
            raise RunError(f"{run}/{name}: columns {missing} missing; not a pseudo-label run table")
    from inkground_lib.pseudo.keys import DERENDER_SCHEMA, safe_name

    der = str(comps["derenderer"])
    cache = _need_file(run, f"derender-{safe_name(der)}.jsonl")
    cand = find_candidates(run, params, candidates)
    try:
        ds = load_dataset(cand)
    except DatasetError as e:
        raise RunError(f"candidate pages of {run}: {e}") from None
    want = summary.get("candidates_hash")
    if want and dataset_hash(cand) != want:
        raise RunError(f"{cand}: the candidate pages changed since the run {run} was made (dataset hash differs "
                       f"from summary.json); rerun section 02 or pass the right --candidates")
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
        raise RunError(f"{run}/pages.csv: pages {lost[:5]} are not in the candidate pages {cand}")
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
            raise RunError(f"{cache}: no pseudo-labels of page {pid} match {run}/words.csv; the run folder is "
                           f"incomplete (rerun section 02)")
        pseudo.update(chosen)
    passed = dict(zip(ids, page_tab["ocr_pass"].astype(str).str.lower().eq("true")))
    offered = [p for p in ids if passed[p]] if pages == "ocr-passed" else list(ids)
    return RunPages(run, cand, ds, offered, ids, pseudo, der, passed)
