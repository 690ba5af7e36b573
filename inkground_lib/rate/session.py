"""A rating session: the run and its ratings file, checked to belong together (:func:`open_session`), the ledger
replayed from the file, and what the ratings file stores about a browser (:func:`session_hash`)."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from inkground_lib.core.defaults import RATERS_PER_PAIR, RESERVE_SECONDS
from inkground_lib.core.folders import LOCK_FILE, RUN_MARK
from inkground_lib.core.run_loaders import PseudoRun, load_pseudo_run
from inkground_lib.pseudo.raters import RatingsError
from inkground_lib.pseudo.ratings_log import RatingsLog
from inkground_lib.rate.assign import Ledger, RateError


log = logging.getLogger("inkground.rate")


def session_hash(token: str) -> str:
    """What the ratings file stores about a browser session: a hash of its cookie, never the cookie."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()[:16]


def check_ratings_path(ratings, run: PseudoRun) -> Path:
    """The ratings file must lie outside every folder a pipeline command writes: not in the run folder, not
    in the candidate pages, not under any inkground run or dataset folder; its folder must exist."""
    p = Path(ratings)
    if p.exists() and not p.is_file():
        raise RateError(f"--ratings {p}: exists and is not a file")
    parent = p.resolve().parent
    if not parent.is_dir():
        raise RateError(f"--ratings {p}: its folder {parent} does not exist; create it first")
    target = parent / p.name
    for root in (run.run.resolve(), run.candidates.resolve()):
        if target == root or root in target.parents:
            raise RateError(f"--ratings {p}: inside {root}, a folder the pipeline writes; keep ratings outside "
                            f"every run and dataset folder (e.g. ratings/{p.name} at the top of your project)")
    for d in target.parents:
        if (d / RUN_MARK).exists() or (d / LOCK_FILE).exists() or (d / "manifest.json").exists():
            raise RateError(f"--ratings {p}: inside {d}, a folder inkground writes (run or dataset); keep ratings "
                            f"outside it")
    return p


@dataclass
class Session:
    """Everything the handlers share."""

    run: PseudoRun
    ledger: Ledger
    log: RatingsLog
    ratings_path: Path
    token: Optional[str]
    allowed_hosts: Optional[set]  # None: any Host header (wildcard bind; the token protects)
    current: dict  # session hash -> rater name in use
    sessions_last: dict  # session hash -> rater of the session's latest row in the file


def open_session(run_dir, ratings, k: Optional[int] = None, *, candidates=None, pages: str = "ocr-passed",
                 reserve_s: float = RESERVE_SECONDS, token: Optional[str] = None,
                 allowed_hosts: Optional[set] = None) -> Session:
    """Load the run and the ratings file (created with its header if new) and check they belong together:
    every page in the file is a page of the run, and the file's K (raters per page) is ``k``. ``k`` None:
    the file's K, or :data:`inkground_lib.core.defaults.RATERS_PER_PAIR` for a new file."""
    run = load_pseudo_run(run_dir, candidates, pages)
    path = check_ratings_path(ratings, run)
    rows: list[dict] = []
    try:
        rlog = RatingsLog(path, on_event=lambda row, line: rows.append(row))
    except RatingsError as e:
        raise RateError(str(e)) from None
    if rlog.repaired:
        log.warning(rlog.repaired)
    ks = {r["raters_per_page"] for r in rows}
    if len(ks) > 1:
        raise RateError(f"{path}: rows were written with different raters per page {sorted(ks)}")
    file_k = int(next(iter(ks))) if ks else None
    if k is None:
        k = file_k or RATERS_PER_PAIR
    if file_k is not None and int(k) != file_k:
        raise RateError(f"{path}: this file was collected with {file_k} raters per page; use "
                        f"--raters-per-pair {file_k} (K is fixed for a ratings file)")
    alien = sorted({r["page"] for r in rows} - set(run.all_pages))
    if alien:
        raise RateError(f"{path}: rates pages {alien[:5]} that are not pages of the run {run.run}; is it the "
                        f"ratings file of another run?")
    ledger = Ledger(list(run.offered), int(k), reserve_s=reserve_s)
    last: dict = {}
    for n, row in enumerate(rows):
        ledger.apply(row, n)
        if row["session"]:
            last[row["session"]] = row["rater"]

    def on_event(row, line):
        ledger.apply(row, line)
        if row["session"]:
            last[row["session"]] = row["rater"]

    rlog.on_event = on_event
    return Session(run, ledger, rlog, path, token, allowed_hosts, {}, last)
