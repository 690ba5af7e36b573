"""Stage 3: ratings (read, write, simulate), the all-raters-give-10 filter and rater agreement (the file
``inkground rate`` appends to: :mod:`inkground_lib.pseudo.ratings_log`)."""

from __future__ import annotations

import math
import re
import unicodedata
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional, Sequence

import numpy as np
import pandas as pd

from inkground_lib.core.defaults import KEEP_SCORE, SCORE_RANGE
from inkground_lib.core.files import atomic_write_text
from inkground_lib.pseudo.keys import PseudoError


class RatingsError(PseudoError):
    """A ratings table that cannot be used; the message names the file, the row and the field."""


class RatingsFileGone(RatingsError):
    """The ratings file a :class:`RatingsLog` opened was moved, deleted, replaced or cut since: nothing is
    written until it is back."""


_INT_RE = re.compile(r"^[+-]?\d+(\.0*)?$")

REAL = "real"
"""The ``source`` of a rating given by a person (written by ``inkground rate``)."""

LOG_COLUMNS = ("page", "rater", "score", "source", "time", "action", "session", "raters_per_page")
"""The columns of a ratings file written by ``inkground rate`` (:class:`RatingsLog`), one row per event:

* page, rater, score (0-10), source (``real``);
* time: when the row was written, ISO 8601 UTC (``2026-11-30T19:40:12Z``);
* action: ``rate``, or ``undo`` = the rater withdrew their standing rating of that page (score repeats the
  withdrawn score); a missing or empty action is ``rate``;
* session: a hash of the browser session that gave the rating (never the session cookie itself);
* raters_per_page: K, the number of raters each page was meant to get when the row was written.

The first three are the plain format section 02 has always read (``page,rater,score``); the others are
optional there."""

ACTIONS = ("rate", "undo")

RATER_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
"""A rater name: a letter or digit, then letters, digits, ``_``, ``.`` or ``-``; 1-32 characters."""


def rater_key(name: str) -> str:
    """A rater's identity: the name NFC-normalised and casefolded, so names a person would read as one (``Ann``
    and ``ann``; a letter with a combining mark and its composed form) are one rater wherever ratings are
    counted (the rating app's assignment and the ratings file reader alike).

    >>> rater_key("Zoe\u0308") == rater_key("zo\u00eb") == rater_key("ZO\u00cb")
    True
    """
    return unicodedata.normalize("NFC", name).casefold()


def check_rater_name(name, where: str = "rater") -> str:
    """``name`` if it satisfies :data:`RATER_RULE`, else :class:`RatingsError` naming ``where`` and the rule.

    >>> check_rater_name("ann_1")
    'ann_1'
    """
    if not isinstance(name, str) or not RATER_RULE.fullmatch(name):
        raise RatingsError(f"{where}: {str(name)!r:.40} is not a valid rater name (1-32 characters: a letter or "
                           f"digit, then letters, digits, '_', '.' or '-')")
    return name


def parse_score(s, where: str) -> int:
    """An integer score 0-10 from text (``7``, ``10``, ``10.0``; not ``7.5``, ``ten``, ``11``), else
    :class:`RatingsError` naming ``where``. The digits are read as an integer, never through a float, so a
    huge number (``10**400``) is refused as outside 0-10 rather than overflowing.

    >>> parse_score("10.0", "x"), parse_score("+07", "x")
    (10, 7)
    """
    s = str(s).strip()
    if not _INT_RE.match(s):
        raise RatingsError(f"{where}: field score: {s!r:.40} is not an integer score 0-10")
    sign, digits = (-1 if s[0] == "-" else 1), s.lstrip("+-").split(".")[0].lstrip("0") or "0"
    score = sign * int(digits) if len(digits) <= 3 else sign * 1000
    if not SCORE_RANGE[0] <= score <= SCORE_RANGE[1]:
        raise RatingsError(f"{where}: field score: {s.split('.')[0]:.40} is outside 0-10")
    return score


class RatingsStanding:
    """The ratings standing after a sequence of rate / undo events: one per (page, rater); a second rating
    of the same page by the same rater is an error unless an undo withdrew the first."""

    def __init__(self):
        self.rows: dict[tuple[str, str], dict] = {}  # (page, rater) -> row, in order of the rating
        self.line: dict[tuple[str, str], int] = {}

    def apply(self, row: dict, where: str, line: int) -> None:
        k = (row["page"], rater_key(row["rater"]))
        if row.get("action", "rate") == "undo":
            if k not in self.rows:
                raise RatingsError(f"{where}: field action: undo of a rating rater {k[1]!r} did not give for page "
                                   f"{k[0]!r}")
            del self.rows[k]
            del self.line[k]
            return
        if k in self.rows:
            first = self.rows[k]["rater"]
            same = "" if first == row["rater"] else f" (as {first!r}: the same rater once case and Unicode " \
                                                    "normalisation are set aside)"
            raise RatingsError(f"{where}: field rater: rater {row['rater']!r} already rated page {k[0]!r} "
                               f"(line {self.line[k]}){same}")
        self.rows[k] = row
        self.line[k] = line


@dataclass(frozen=True)
class RatingsFile:
    """A ratings file as section 02 reads it (:func:`load_ratings`).

    * ``ratings``: the standing ratings (:func:`read_ratings`'s DataFrame);
    * ``k``: the raters each page is meant to get, as the file records it (the ``raters_per_page`` column
      that ``inkground rate`` writes), or None for a file that does not say (a plain ``page,rater,score``
      file);
    * ``sha256``: the hash of the bytes read (what a section's fingerprint and the run's summary record);
    * ``rows``: the rows read (rate and undo events; a plain file: one per rating)."""

    path: Path
    ratings: pd.DataFrame
    k: Optional[int]
    sha256: str
    rows: int
    page_lines: dict = field(default_factory=dict)
    """{page: the line of the file's first row for it}, to name the row when a page is refused."""

    @property
    def name(self) -> str:
        return self.path.name


def check_rating_pages(rfile: "RatingsFile", pages: Iterable[str]) -> None:
    """RatingsError naming the file, the line and the field ``page`` for the first row whose page is not one of
    ``pages`` (the run's candidate pages): a rating of another dataset's page is refused, never counted."""
    known = set(pages)
    for page, line in sorted(rfile.page_lines.items(), key=lambda kv: kv[1]):
        if page not in known:
            raise RatingsError(f"{rfile.path}: line {line}: field page: {page!r:.60} is not a page of this run's "
                               f"candidates ({len(known)} pages); a ratings file rates the pages of one run")


def read_ratings(path) -> pd.DataFrame:
    """A ratings table: a CSV file with a header row holding ``page``, ``rater``, ``score`` (any order;
    optional ``source``, ``time``, ``action`` and ``raters_per_page`` columns, see :data:`LOG_COLUMNS`; other
    columns are ignored). One row per rating; in a file written by ``inkground rate``, a row with action
    ``undo`` withdraws that rater's earlier rating of that page.

    Returns a DataFrame (page, rater, score, source, and time when the file has that column) of the ratings
    that stand: page and rater as strings, score as int, source from the file's ``source`` column or
    ``"file: <name>"``. Raises :class:`RatingsError` naming the file, the row (line number, header = line 1)
    and the field for: a missing column, an empty cell, a score that is not an integer (``7``, ``10`` and
    ``10.0`` are integers; ``7.5``, ``ten`` are not), a score outside 0-10, the same rater rating the same
    page twice (without an undo between), an undo of a rating that was not given, an unknown action, a
    ``raters_per_page`` that is not an integer >= 1 or differs between rows. A rater who gave no score for a
    page simply has no row for it. Rater names are held to the rating app's own rule (:data:`RATER_RULE`, 1-32
    characters) and one rater is one :func:`rater_key` (case and Unicode normalisation aside): "Ann" and "ann"
    rating the same page is the same rater rating it twice.

    A file written by ``inkground rate`` (it has a ``time`` column) whose last line has no newline and is
    not a complete row was cut by a crash while being written (the rating was never confirmed to the
    rater): that line is left out, with a warning.
    """
    return load_ratings(path).ratings


def load_ratings(path) -> RatingsFile:
    """Read a ratings file (:func:`read_ratings`) with the K it records and the hash of its content."""
    import csv
    import hashlib
    import io
    import warnings

    path = Path(path)
    if not path.exists():
        raise RatingsError(f"{path}: ratings file is missing")
    if not path.is_file():
        raise RatingsError(f"{path}: not a regular file; give a ratings CSV file")
    data = path.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    try:
        text = data.decode("utf-8-sig", errors="strict") if data else ""
    except UnicodeDecodeError as e:
        raise RatingsError(f"{path}: not UTF-8 text (byte {e.start}); give a ratings CSV file") from None
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows:
        raise RatingsError(f"{path}: ratings file is empty (expected a header row: page,rater,score)")
    header = [h.strip().lower() for h in rows[0]]
    for col in ("page", "rater", "score"):
        if col not in header:
            raise RatingsError(f"{path}: line 1: field {col}: column missing (header is {rows[0]})")
    if "time" in header and text and not text.endswith("\n") and len(rows) > 1 and len(rows[-1]) < len(header):
        warnings.warn(f"{path}: line {len(rows)}: an incomplete last row (a write cut by a crash) is left out",
                      stacklevel=3)
        rows = rows[:-1]
    ix = {c: header.index(c) for c in ("page", "rater", "score")}
    opt = {c: header.index(c) for c in ("source", "time", "action", "raters_per_page") if c in header}
    standing = RatingsStanding()
    k, k_line, n_rows = None, 0, 0
    page_lines: dict[str, int] = {}
    for n, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue  # blank line
        n_rows += 1
        where = f"{path}: line {n}"
        vals = {}
        for col, i in ix.items():
            v = row[i].strip() if i < len(row) else ""
            if not v:
                raise RatingsError(f"{where}: field {col}: missing value")
            vals[col] = v
        o = {c: (row[i].strip() if i < len(row) else "") for c, i in opt.items()}
        action = o.get("action") or "rate"
        if action not in ACTIONS:
            raise RatingsError(f"{where}: field action: {action!r:.40} is not one of {ACTIONS}")
        if o.get("raters_per_page"):
            kk = o["raters_per_page"]
            if not (kk.isdigit() and len(kk) <= 6 and int(kk) >= 1):
                raise RatingsError(f"{where}: field raters_per_page: {kk!r:.40} is not an integer >= 1")
            if k is not None and int(kk) != k:
                raise RatingsError(f"{where}: field raters_per_page: {kk} differs from {k} (line {k_line}); a "
                                   f"ratings file is collected with one K")
            k, k_line = int(kk), k_line or n
        check_rater_name(vals["rater"], f"{where}: field rater")  # the rating app's own rule
        page_lines.setdefault(vals["page"], n)
        rec = {"page": vals["page"], "rater": vals["rater"], "score": parse_score(vals["score"], where),
               "source": o.get("source") or f"file: {path.name}", "action": action}
        if "time" in opt:
            rec["time"] = o["time"]
        standing.apply(rec, where, n)
    out = list(standing.rows.values())
    return RatingsFile(path, ratings_frame(out, with_time="time" in opt), k, sha, n_rows, page_lines)


def ratings_frame(rows, with_time: bool = False) -> pd.DataFrame:
    cols = ["page", "rater", "score", "source"] + (["time"] if with_time else [])
    df = pd.DataFrame([{c: r.get(c, "") for c in cols} for r in rows], columns=cols)
    df["page"] = df["page"].astype(str)
    df["rater"] = df["rater"].astype(str)
    df["score"] = df["score"].astype(int)
    df["source"] = df["source"].astype(str)
    if with_time:
        df["time"] = df["time"].astype(str)
    return df


def write_ratings(df: pd.DataFrame, path) -> Path:
    """Write a ratings table as CSV (page, rater, score, source, and time when ``df`` has it), atomically."""
    cols = ["page", "rater", "score", "source"] + (["time"] if "time" in df.columns else [])
    return atomic_write_text(path, df[cols].to_csv(index=False))


def check_ratings(ratings: pd.DataFrame) -> pd.DataFrame:
    for c in ("page", "rater", "score"):
        if c not in ratings.columns:
            raise RatingsError(f"ratings: column {c} missing")
    sc = ratings["score"]
    if len(sc) and (not np.issubdtype(sc.dtype, np.integer) or sc.min() < 0 or sc.max() > 10):
        raise RatingsError("ratings: scores must be integers 0-10 (use read_ratings to find the bad row)")
    return ratings


def rater_filter(ratings: pd.DataFrame, pages: Optional[Iterable[str]] = None, min_ratings: int = 1) -> list[str]:
    """Pages kept by the raters: every rating of the page is 10 (:data:`KEEP_SCORE`) and it has at least
    ``min_ratings`` ratings (the kept pages of :func:`rater_outcome` with K = ``min_ratings``). **A page with no
    rating is not kept.** ``pages`` (e.g. the pages that passed the OCR filter) restricts and orders the result;
    by default, pages in order of first appearance."""
    check_ratings(ratings)
    order = list(dict.fromkeys(ratings["page"])) if pages is None else list(pages)
    return rater_outcome(ratings, order, max(int(min_ratings), 1)).kept


def krippendorff_alpha_nominal(units: Sequence[Sequence]) -> float:
    """Krippendorff's alpha for nominal data; ``units`` = one sequence of values per unit (the values the
    raters of that unit gave; any number of raters per unit, missing ratings simply absent).

    Units with fewer than two values are not pairable and are dropped. With the coincidence matrix
    o_ck = sum_u (n_uc n_uk - [c == k] n_uc) / (m_u - 1) and n_c = sum_k o_ck, n = sum_c n_c:
    alpha = 1 - (n - 1) * sum_{c != k} o_ck / sum_{c != k} n_c n_k. NaN when fewer than two values are
    pairable or only one category occurs (no variation: alpha is undefined).
    """
    units = [list(u) for u in units if len(u) >= 2]
    if not units:
        return float("nan")
    cats = sorted({v for u in units for v in u}, key=repr)
    idx = {c: i for i, c in enumerate(cats)}
    N = np.zeros((len(units), len(cats)))
    for i, u in enumerate(units):
        for v in u:
            N[i, idx[v]] += 1
    m = N.sum(axis=1)
    w = 1.0 / (m - 1.0)
    O = (N * w[:, None]).T @ N - np.diag((N * w[:, None]).sum(axis=0))
    nc = O.sum(axis=1)
    n = nc.sum()
    expected = n * n - float((nc ** 2).sum())
    if expected <= 0:
        return float("nan")
    observed = float(O.sum() - np.trace(O))
    return float(1.0 - (n - 1.0) * observed / expected)


def agreement(ratings: pd.DataFrame) -> dict:
    """How much raters agree on accept (score 10) / reject (any other score).

    Over the pages with at least two ratings (a single rating cannot disagree; such pages are left out
    and counted): ``agreement`` = share of pages on which all raters make the same decision; ``alpha`` =
    Krippendorff's alpha (nominal) on the accept/reject decisions (NaN when every decision is the same);
    also ``pages`` (pages used), ``single_rated_pages``, ``ratings``, ``accept_share`` (share of accept
    decisions among all ratings used)."""
    check_ratings(ratings)
    if ratings.empty:
        return {"agreement": float("nan"), "alpha": float("nan"), "pages": 0, "single_rated_pages": 0,
                "ratings": 0, "accept_share": float("nan")}
    acc = (ratings["score"] == KEEP_SCORE).astype(int)
    groups = acc.groupby(ratings["page"], sort=False)
    size = groups.size()
    multi = size.index[size >= 2]
    dec = [groups.get_group(p).to_numpy() for p in multi]
    agree = [bool((d == d[0]).all()) for d in dec]
    used = np.concatenate(dec) if dec else np.zeros(0)
    return {"agreement": float(np.mean(agree)) if agree else float("nan"),
            "alpha": krippendorff_alpha_nominal(dec),
            "pages": int(len(multi)), "single_rated_pages": int((size < 2).sum()),
            "ratings": int(len(used)), "accept_share": float(used.mean()) if len(used) else float("nan")}


AWAITING = "awaiting ratings"
"""The stage of a page that has fewer than K standing ratings: not rated yet, neither kept nor rejected."""


@dataclass(frozen=True)
class RaterOutcome:
    """The rater filter over the pages section 02 uses (:func:`rater_outcome`).

    ``pages``: the pages used (the pages that passed the OCR filter), in order; ``k``: the ratings a page
    needs before it counts as rated; ``n_ratings``: standing ratings per page; ``kept`` (K or more ratings,
    every one 10), ``rejected`` (K or more ratings, one of them below 10) and ``awaiting`` (fewer than K: not
    rated yet, neither kept nor rejected) partition ``pages``; ``ratings``: the standing ratings of
    ``pages``; ``agreement``: :func:`agreement` over them (pages with two or more ratings, awaiting ones
    included: their raters did decide)."""

    pages: list[str]
    k: int
    n_ratings: dict[str, int]
    kept: list[str]
    rejected: list[str]
    awaiting: list[str]
    ratings: pd.DataFrame
    agreement: dict

    @property
    def mostly_unrated(self) -> bool:
        """More than half of the pages used have fewer than K standing ratings."""
        return 2 * len(self.awaiting) > len(self.pages)

    def stage(self, page: str) -> str:
        """"kept", "rejected by raters" or :data:`AWAITING` for a page of ``pages``."""
        return "kept" if page in set(self.kept) else (AWAITING if page in set(self.awaiting) else
                                                      "rejected by raters")


def rater_outcome(ratings: pd.DataFrame, pages: Sequence[str], k: int) -> RaterOutcome:
    """Section 02's rater filter: which of ``pages`` are kept, rejected or still await ratings, given the
    standing ``ratings`` (page, rater, score, ...) and ``k``, the ratings a page needs (the paper: at least
    two raters a pair, a pair kept only if all give 10). Ratings of other pages are ignored. The rating app's
    statistics page calls this too, over the same pages, so the two never disagree.

    >>> rt = ratings_frame([{"page": "a", "rater": "x", "score": 10}, {"page": "a", "rater": "y", "score": 10},
    ...                     {"page": "b", "rater": "x", "score": 10}, {"page": "c", "rater": "x", "score": 3},
    ...                     {"page": "c", "rater": "y", "score": 10}])
    >>> o = rater_outcome(rt, ["a", "b", "c", "d"], k=2)
    >>> o.kept, o.rejected, o.awaiting, o.agreement["agreement"]
    (['a'], ['c'], ['b', 'd'], 0.5)
    """
    k = int(k)
    if k < 1:
        raise RatingsError(f"raters per page (K): must be >= 1, got {k}")
    check_ratings(ratings)
    pages = list(dict.fromkeys(str(p) for p in pages))
    used = ratings[ratings["page"].isin(set(pages))]
    g = used.groupby("page", sort=False)["score"]
    size, low = g.size().to_dict(), g.min().to_dict()
    n = {p: int(size.get(p, 0)) for p in pages}
    kept = [p for p in pages if n[p] >= k and low[p] == KEEP_SCORE]
    rejected = [p for p in pages if n[p] >= k and low[p] != KEEP_SCORE]
    awaiting = [p for p in pages if n[p] < k]
    return RaterOutcome(pages, k, n, kept, rejected, awaiting, used.reset_index(drop=True), agreement(used))


def check_enough_ratings(outcome: RaterOutcome, source: str, allow_partial: bool = False) -> None:
    """Refuse to build a benchmark from ratings that leave more than half of the pages unrated (fewer than K
    standing ratings), unless ``allow_partial``: :class:`RatingsError` naming ``source``, the counts and the
    way out."""
    if allow_partial or not outcome.mostly_unrated:
        return
    n, a = len(outcome.pages), len(outcome.awaiting)
    raise RatingsError(
        f"{source}: {a} of the {n} pages that passed the OCR filter have fewer than K = {outcome.k} standing "
        f"ratings (they await ratings), more than half; a benchmark built now would hold only the "
        f"{len(outcome.kept)} kept of the {n - a} pages rated in full. Rate the rest (inkground rate --ratings "
        f"with this file) or build it anyway: inkground pseudo --allow-partial-ratings, or the section 02 "
        f"parameter allow_partial_ratings True")


@dataclass(frozen=True)
class RaterModel:
    """The simulated raters (stated model; all values are parameters).

    * Rater r has a strictness s_r ~ Normal(``strictness_mean``, ``strictness_sd``), clipped below at 0.05;
      the pool of raters is drawn once per seed.
    * A pair (page p: original photo and derendered strokes) has a visible defect d_p in [0, 1]
      (:func:`pair_defect`): the share of its words on which a rater can see a problem - OCR reads the
      rendered strokes differently from the photo, or (where the true ink is known) the strokes miss the
      written ink by more than ``chamfer_tol`` word heights (Chamfer to the true ink). Stroke order and
      direction are *not* visible (raters score a static pair).
    * Rater r perceives x = d_p * s_r + e, e ~ Normal(0, ``noise_sd``), and gives 10 when x < ``tau``;
      otherwise 9 - floor((x - tau) / ``score_step``), clipped to 0-9.
    * Each pair gets k raters, k uniform in ``per_pair`` (inclusive), drawn without replacement from the
      pool; the draws for a page depend only on (seed, page id), not on which other pages are rated.
    """

    strictness_mean: float = 1.0
    strictness_sd: float = 0.3
    noise_sd: float = 0.03
    tau: float = 0.08
    score_step: float = 0.04
    chamfer_tol: float = 0.1

    def __post_init__(self):
        for k in ("strictness_sd", "noise_sd", "tau", "score_step", "chamfer_tol"):
            v = getattr(self, k)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise PseudoError(f"RaterModel.{k}: must be a finite number >= 0, got {v!r}")
        if not (isinstance(self.strictness_mean, (int, float)) and self.strictness_mean > 0):
            raise PseudoError(f"RaterModel.strictness_mean: must be > 0, got {self.strictness_mean!r}")
        if self.score_step <= 0:
            raise PseudoError(f"RaterModel.score_step: must be > 0, got {self.score_step!r}")


def pair_defect(words: pd.DataFrame, chamfer_tol: float = 0.1) -> pd.Series:
    """Visible defect d_p of each page (see :class:`RaterModel`) from a per-word table with columns page,
    match (bool) and optionally chamfer (NaN where the truth is unknown). Indexed by page; a page without
    words has defect 1."""
    bad = ~words["match"].astype(bool)
    if "chamfer" in words.columns:
        bad = bad | (words["chamfer"].to_numpy(dtype=float) > chamfer_tol)
    return bad.astype(float).groupby(words["page"], sort=False).mean()


def per_pair_range(per_pair) -> tuple[int, int]:
    lo, hi = (per_pair, per_pair) if isinstance(per_pair, (int, np.integer)) else tuple(per_pair)
    lo, hi = int(lo), int(hi)
    if not 1 <= lo <= hi:
        raise PseudoError(f"raters per pair: need 1 <= min <= max, got {per_pair!r}")
    return lo, hi


def simulate_ratings(pages: Sequence[str], quality, n_raters: int = 85, per_pair=(2, 3), seed: int = 0,
                     model: RaterModel = RaterModel()) -> pd.DataFrame:
    """Simulated ratings of ``pages`` under :class:`RaterModel` ``model``: a DataFrame (page, rater, score,
    source="simulated").

    ``quality``: the visible defect d_p in [0, 1] per page (0 = perfect; a mapping or Series page -> d_p,
    e.g. from :func:`pair_defect`). ``per_pair``: raters per pair, an int or an inclusive (min, max).
    Raters are named r01..rNN. Deterministic in ``seed``."""
    lo, hi = per_pair_range(per_pair)
    if int(n_raters) < hi:
        raise PseudoError(f"simulate_ratings: {n_raters} raters cannot give {hi} ratings per pair")
    q = dict(quality.items()) if hasattr(quality, "items") else dict(quality)
    rng = np.random.default_rng([int(seed), 0xA7E])
    strict = np.maximum(rng.normal(model.strictness_mean, model.strictness_sd, int(n_raters)), 0.05)
    width = len(str(int(n_raters)))
    names = [f"r{i + 1:0{max(width, 2)}d}" for i in range(int(n_raters))]
    rows = []
    for p in pages:
        if p not in q:
            raise PseudoError(f"simulate_ratings: no quality (defect) for page {p!r}")
        d = float(q[p])
        if not (math.isfinite(d) and 0.0 <= d <= 1.0):
            raise PseudoError(f"simulate_ratings: page {p!r}: defect must be in [0, 1], got {d!r}")
        r = np.random.default_rng([int(seed), zlib.crc32(str(p).encode()), 1])
        k = int(r.integers(lo, hi + 1))
        who = np.sort(r.choice(int(n_raters), size=k, replace=False))
        x = d * strict[who] + r.normal(0.0, model.noise_sd, k) if model.noise_sd > 0 else d * strict[who]
        scores = np.where(x < model.tau, KEEP_SCORE,
                          np.clip(9 - np.floor((x - model.tau) / model.score_step), 0, 9)).astype(int)
        rows += [{"page": p, "rater": names[i], "score": int(s), "source": "simulated"} for i, s in zip(who, scores)]
    return ratings_frame(rows)
