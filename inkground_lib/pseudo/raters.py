"""Stage 3: ratings (read, write, simulate), the all-raters-give-10 filter and rater agreement."""

from __future__ import annotations

import math
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Sequence

import numpy as np
import pandas as pd

from inkground_lib.core.defaults import KEEP_SCORE, SCORE_RANGE
from inkground_lib.core.files import atomic_write_text
from inkground_lib.pseudo.keys import PseudoError


class RatingsError(PseudoError):
    """A ratings table that cannot be used; the message names the file, the row and the field."""


_INT_RE = re.compile(r"^[+-]?\d+(\.0*)?$")


def read_ratings(path) -> pd.DataFrame:
    """A ratings table: a CSV file with a header row holding ``page``, ``rater``, ``score`` (any order;
    an optional ``source`` column; other columns are ignored). One row per rating.

    Returns a DataFrame (page, rater, score, source): page and rater as strings, score as int, source from
    the file's ``source`` column or ``"file: <name>"``. Raises :class:`RatingsError` naming the file, the
    row (line number, header = line 1) and the field for: a missing column, an empty cell, a score that is
    not an integer (``7``, ``10`` and ``10.0`` are integers; ``7.5``, ``ten`` are not), a score outside
    0-10, the same rater rating the same page twice. A rater who gave no score for a page simply has no
    row for it.
    """
    import csv

    path = Path(path)
    if not path.exists():
        raise RatingsError(f"{path}: ratings file is missing")
    if not path.is_file():
        raise RatingsError(f"{path}: not a regular file; give a ratings CSV file")
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise RatingsError(f"{path}: ratings file is empty (expected a header row: page,rater,score)")
    header = [h.strip().lower() for h in rows[0]]
    for col in ("page", "rater", "score"):
        if col not in header:
            raise RatingsError(f"{path}: line 1: field {col}: column missing (header is {rows[0]})")
    ix = {c: header.index(c) for c in ("page", "rater", "score")}
    isrc = header.index("source") if "source" in header else None
    out, seen = [], {}
    for n, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue  # blank line
        vals = {}
        for col, i in ix.items():
            v = row[i].strip() if i < len(row) else ""
            if not v:
                raise RatingsError(f"{path}: line {n}: field {col}: missing value")
            vals[col] = v
        s = vals["score"]
        if not _INT_RE.match(s):
            raise RatingsError(f"{path}: line {n}: field score: {s!r} is not an integer score 0-10")
        score = int(float(s))
        if not SCORE_RANGE[0] <= score <= SCORE_RANGE[1]:
            raise RatingsError(f"{path}: line {n}: field score: {score} is outside 0-10")
        k = (vals["page"], vals["rater"])
        if k in seen:
            raise RatingsError(f"{path}: line {n}: field rater: rater {k[1]!r} already rated page {k[0]!r} "
                               f"(line {seen[k]})")
        seen[k] = n
        src = row[isrc].strip() if isrc is not None and isrc < len(row) and row[isrc].strip() else f"file: {path.name}"
        out.append({"page": vals["page"], "rater": vals["rater"], "score": score, "source": src})
    return ratings_frame(out)


def ratings_frame(rows) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=["page", "rater", "score", "source"])
    df["page"] = df["page"].astype(str)
    df["rater"] = df["rater"].astype(str)
    df["score"] = df["score"].astype(int)
    df["source"] = df["source"].astype(str)
    return df


def write_ratings(df: pd.DataFrame, path) -> Path:
    """Write a ratings table as CSV (page, rater, score, source), atomically."""
    return atomic_write_text(path, df[["page", "rater", "score", "source"]].to_csv(index=False))


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
    ``min_ratings`` ratings. **A page with no rating is not kept.** ``pages`` (e.g. the pages that passed
    the OCR filter) restricts and orders the result; by default, pages in order of first appearance."""
    check_ratings(ratings)
    g = ratings.groupby("page", sort=False)["score"]
    ok = (g.min() == KEEP_SCORE) & (g.size() >= max(int(min_ratings), 1))
    kept = set(ok.index[ok.to_numpy()])
    order = list(dict.fromkeys(ratings["page"])) if pages is None else list(pages)
    return [p for p in order if p in kept]


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
