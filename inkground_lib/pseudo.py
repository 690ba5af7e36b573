"""The pseudo-label pipeline (paper Sec. 2): derender every word, keep pages the OCR filter and the raters pass.

Stages (each a library function; :func:`run_pipeline` chains them):

1. :func:`derender_dataset` - every word of every candidate page is cut out (:func:`~inkground_lib.derender.
   crop_word`, box grown 10%) and derendered; the result (the *pseudo-label*) is an ink in page pixels
   (origin top-left, y down). The paper uses InkSight Small-p; the offline default is the skeleton derenderer.
2. :func:`ocr_filter` - a word *matches* when the OCR of its original crop equals the OCR of the render
   (:func:`~inkground_lib.render.render_ink`) of its pseudo-label after :func:`~inkground_lib.metrics.
   normalise_text` (NFC, edge punctuation stripped, casefold). A page *passes* when matched / words >=
   ``threshold`` (0.85). **A page with no words never passes** (its match rate is undefined, NaN: there is
   nothing to check). The paper uses DeepSeek-OCR; the offline default is RapidOCR.
3. Raters - :func:`read_ratings` reads a ratings table (page, rater, score 0-10), :func:`rater_filter`
   keeps a page only if **every** rating it got is 10 (**a page with no rating is not kept**),
   :func:`agreement` measures how often the raters of a page agree on accept (10) / reject, plus
   Krippendorff's alpha. Without real ratings :func:`simulate_ratings` draws them from the stated
   :class:`RaterModel`; such ratings carry ``source = "simulated"`` in every table they appear in.
4. :func:`build_benchmark` - the kept pages as a dataset (kind "benchmark", reference "pseudo-label:
   <derenderer>"), the pseudo-labels as reference inks, true inks kept where the candidates had them.

Resuming and reuse: derendering and OCR results are appended per page to JSONL files in the run folder
(one record per page, flushed and fsynced). Each record carries a *key*: a hash of everything that
changes the result (page image bytes, word ids / texts / boxes, crop growth, the derenderer's name,
settings and source file; for OCR also the engine, its source file, the renderer settings and source).
A rerun reuses every record whose key matches and computes only the rest; a torn last line (a run killed
mid-write) is ignored and cut off before the next append. Everything else (ratings, filters, metrics,
tables) is cheap and recomputed.

Comparison with the truth (synthetic and recorded candidates only, where the true ink is known):
DTW and Chamfer of the pseudo-label against the true ink (:mod:`~inkground_lib.metrics`, units of the true
word height), and :func:`stroke_order_check` (whether the pseudo-label visits the word in a different stroke
order, or runs a stroke in the opposite direction).
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import math
import os
import re
import shutil
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

import numba as nb
import numpy as np
import pandas as pd

from .dataset import Dataset, DatasetError, Page, dataset_hash, load_dataset, write_manifest
from .files import JSONLError, append_jsonl, atomic_write_json, atomic_write_text, sha256_file
from .files import read_jsonl as files_read_jsonl
from .ink import Ink, ink_from_lists, ink_to_lists

__all__ = [
    "PseudoError", "RatingsError", "RaterModel", "OCRFilterResult", "PipelineResult",
    "make_derenderer", "derender_dataset", "ocr_filter", "read_ratings", "rater_filter", "agreement",
    "krippendorff_alpha_nominal", "pair_defect", "simulate_ratings", "stroke_order_check", "subsequence_dtw", "truth_metrics",
    "build_benchmark", "run_pipeline", "summary_numbers", "funnel_table", "truth_by_stage_table",
    "fig_examples", "fig_truth_by_stage", "provenance", "KEEP_SCORE",
]

KEEP_SCORE = 10       # a pair is kept only if every rater gives this score
SCORE_RANGE = (0, 10)
DERENDER_SCHEMA = "inkground-pseudo-derender"
OCR_SCHEMA = "inkground-pseudo-ocr"
CROP_GROW = 0.1       # word box growth before derendering and OCR (as InkSight's full-page use)


class PseudoError(ValueError):
    """Bad input to the pseudo-label pipeline, or a run folder that cannot be used."""


class RatingsError(PseudoError):
    """A ratings table that cannot be used; the message names the file, the row and the field."""


# ------------------------------------------------------------------------------------------- helpers

def _sha(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


def _source_hash(obj) -> str:
    """sha256 of the source file defining ``obj``'s class (so a code change invalidates cached results)."""
    try:
        path = inspect.getsourcefile(type(obj))
    except TypeError:
        path = None
    return sha256_file(path)[:16] if path and os.path.isfile(path) else "unknown"


def _simple_attrs(obj) -> dict:
    out = {}
    for k, v in sorted(vars(obj).items()):
        if k.startswith("_") or k in ("last_text", "progress"):
            continue
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            out[k] = dataclasses.asdict(v)
        elif isinstance(v, (str, int, float, bool, type(None))):
            out[k] = v
    return out


def derenderer_config(der) -> dict:
    """What identifies a derenderer's output: name, settings (public simple attributes, dataclass params),
    and a hash of the source file of its class."""
    return {"name": getattr(der, "name", type(der).__name__), "settings": _simple_attrs(der),
            "source": _source_hash(der)}


def engine_config(engine) -> dict:
    """What identifies an OCR engine's output: its name and the source file of its class (batch size,
    threads and progress do not change what it reads)."""
    return {"name": getattr(engine, "name", type(engine).__name__), "source": _source_hash(engine)}


def make_derenderer(spec="skeleton"):
    """A derenderer from a name or an object with ``derender(crop, crop_box, text)``.

    Names: "skeleton" (the offline stand-in for InkSight), "inksight-small-p:<model folder>" (needs the
    optional TensorFlow extra; see :class:`~inkground_lib.derender.InkSightDerenderer`).
    """
    from . import derender as D

    if not isinstance(spec, str):
        if not callable(getattr(spec, "derender", None)):
            raise PseudoError(f"derenderer: {spec!r} has no derender(crop, crop_box, text) method")
        return spec
    reg = getattr(D, "get_derenderer", None)
    if spec == "skeleton":
        return D.SkeletonDerenderer()
    if spec.startswith(("inksight-small-p:", "inksight:")):
        return D.InkSightDerenderer(spec.split(":", 1)[1])
    if reg is not None:
        return reg(spec)
    raise PseudoError(f"derenderer: unknown name {spec!r}; use 'skeleton' or 'inksight-small-p:<model folder>'")


def _make_engine(spec="rapidocr", progress: bool = False):
    from .ocr import get_engine

    if not isinstance(spec, str):
        if not callable(getattr(spec, "read", None)):
            raise PseudoError(f"ocr engine: {spec!r} has no read(images) method")
        return spec
    try:
        return get_engine(spec, progress=progress)
    except TypeError:  # an engine without a progress setting
        return get_engine(spec)


def _page_base_key(page: Page) -> dict:
    return {"page": page.id, "image": sha256_file(page.image),
            "words": [[w.id, w.text, [round(float(v), 2) for v in w.box]] for w in page.words],
            "grow": CROP_GROW}


# ---- append-only JSONL with torn-line handling

def read_jsonl(path: Path, schema: str) -> list[dict]:
    """Valid records of an append-only JSONL log (:func:`inkground_lib.files.read_jsonl`: a torn last line
    from an interrupted run is dropped and cut off the file; any other invalid line raises PseudoError
    naming the file and the line)."""
    try:
        return [rec for _, rec in files_read_jsonl(
            path, lambda r: isinstance(r, dict) and r.get("schema") == schema and isinstance(r.get("key"), str),
            what=f"{schema} record")]
    except JSONLError as err:
        raise PseudoError(f"{err}; the file is corrupt (delete it to recompute)") from None


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "x"


# ------------------------------------------------------------------------------------- 1. derender

def derender_dataset(ds: Dataset, derenderer, run_dir, progress: bool = True) -> dict[str, Ink]:
    """Pseudo-labels of every word of every page of ``ds``: {word id: ink in page pixels}.

    Each word is cut out with :func:`~inkground_lib.derender.crop_word` (box grown by 10%, at least 2 px)
    and derendered (the word's text is passed; the skeleton derenderer ignores it). Results go page by page
    to ``run_dir/derender-<name>.jsonl`` (one record per page: key, inks rounded to 0.01 px, per-word
    errors, seconds); pages whose record (same key, see the module doc) exists are not recomputed. A word
    whose box lies outside the photo gets an empty ink and its error is recorded. Inks are always returned
    as stored (rounded), so a fresh run and a resumed one give identical pseudo-labels.
    """
    from tqdm.auto import tqdm

    from .derender import DerenderError, crop_word

    der = make_derenderer(derenderer)
    dcfg = derenderer_config(der)
    path = Path(run_dir) / f"derender-{_safe_name(dcfg['name'])}.jsonl"
    done = {r["key"]: r for r in read_jsonl(path, DERENDER_SCHEMA)}
    out: dict[str, Ink] = {}
    with tqdm(total=ds.n_words, desc=f"derender ({dcfg['name']})", unit="word", disable=not progress) as bar:
        for page in ds.pages:
            key = _sha({"base": _page_base_key(page), "derenderer": dcfg})
            rec = done.get(key)
            if rec is None:
                t0 = time.perf_counter()
                photo = page.load_image() if page.words else None
                inks, errors = {}, {}
                for w in page.words:
                    try:
                        crop, cbox = crop_word(photo, w.box, grow=CROP_GROW)
                        ink = der.derender(crop, cbox, w.text)
                    except DerenderError as e:
                        ink, errors[w.id] = Ink(), str(e)
                    inks[w.id] = ink_to_lists(ink)
                rec = {"schema": DERENDER_SCHEMA, "key": key, "page": page.id, "derenderer": dcfg["name"],
                       "words": inks, "errors": errors, "seconds": round(time.perf_counter() - t0, 4)}
                append_jsonl(path, rec)
                done[key] = rec
            for w in page.words:
                out[w.id] = ink_from_lists(rec["words"][w.id], f"{path}: page {page.id}: word {w.id}")
            bar.update(len(page.words))
    return out


def _derender_errors(run_dir, derenderer) -> dict[str, str]:
    path = Path(run_dir) / f"derender-{_safe_name(derenderer_config(derenderer)['name'])}.jsonl"
    errs: dict[str, str] = {}
    for r in read_jsonl(path, DERENDER_SCHEMA):
        errs.update(r.get("errors", {}))
    return errs


# ------------------------------------------------------------------------------------- 2. OCR filter

@dataclass
class OCRFilterResult:
    """``pages``: page, words, matched, match_rate (NaN without words), ocr_pass. ``words``: page, word_id,
    text, ocr_original, ocr_rendered, match. ``threshold``: the pass threshold (share of words)."""

    pages: pd.DataFrame
    words: pd.DataFrame
    threshold: float


def ocr_filter(ds: Dataset, pseudo: Mapping[str, Ink], engine="rapidocr", threshold: float = 0.85,
               run_dir=None, progress: bool = True) -> OCRFilterResult:
    """The OCR filter (module doc): per word, OCR of the original crop vs OCR of the render of its
    pseudo-label, equal after normalisation = match; a page passes when matched / words >= ``threshold``;
    a page with no words never passes. With ``run_dir``, the OCR texts are cached per page in
    ``run_dir/ocr-<engine>-<derenderer key>.jsonl`` (resumable like :func:`derender_dataset`)."""
    from tqdm.auto import tqdm

    from .derender import DerenderError, crop_word
    from .metrics import normalise_text
    from .render import DEFAULT_RENDER, render_ink

    if not (isinstance(threshold, (int, float)) and 0.0 <= float(threshold) <= 1.0):
        raise PseudoError(f"ocr_filter: threshold must be a share in [0, 1], got {threshold!r}")
    eng = _make_engine(engine)
    ecfg = engine_config(eng)
    import inkground_lib.render as R
    rcfg = {"spec": dataclasses.asdict(DEFAULT_RENDER), "source": sha256_file(R.__file__)[:16]}
    missing = [w.id for w in ds.words() if w.id not in pseudo]
    if missing:
        raise PseudoError(f"ocr_filter: no pseudo-label for {len(missing)} word(s), e.g. {missing[:3]}")
    path = None
    done: dict[str, dict] = {}
    if run_dir is not None:
        path = Path(run_dir) / f"ocr-{_safe_name(ecfg['name'])}.jsonl"
        done = {r["key"]: r for r in read_jsonl(path, OCR_SCHEMA)}
    page_rows, word_rows = [], []
    with tqdm(total=ds.n_words, desc=f"OCR filter ({ecfg['name']})", unit="word", disable=not progress) as bar:
        for page in ds.pages:
            inks = [pseudo[w.id] for w in page.words]
            key = _sha({"base": _page_base_key(page), "engine": ecfg, "render": rcfg,
                        "inks": hashlib.sha256(json.dumps([ink_to_lists(k) for k in inks]).encode()).hexdigest()})
            rec = done.get(key)
            if rec is None:
                t0 = time.perf_counter()
                originals, renders = [], []
                if page.words:
                    photo = page.load_image()
                    for w, ink in zip(page.words, inks):
                        try:
                            crop, _ = crop_word(photo, w.box, grow=CROP_GROW)
                            originals.append(np.ascontiguousarray(crop))
                        except DerenderError:
                            originals.append(np.full((8, 8), 255, np.uint8))  # a box off the page: blank
                        renders.append(render_ink(ink))
                texts_o = list(eng.read(originals)) if originals else []
                texts_r = list(eng.read(renders)) if renders else []
                if len(texts_o) != len(originals) or len(texts_r) != len(renders):
                    raise PseudoError(f"OCR engine {ecfg['name']}: returned a wrong number of texts")
                rec = {"schema": OCR_SCHEMA, "key": key, "page": page.id, "engine": ecfg["name"],
                       "original": [str(t) for t in texts_o], "rendered": [str(t) for t in texts_r],
                       "seconds": round(time.perf_counter() - t0, 4)}
                if path is not None:
                    append_jsonl(path, rec)
                done[key] = rec
            matched = 0
            for w, a, b in zip(page.words, rec["original"], rec["rendered"]):
                m = normalise_text(a) == normalise_text(b)
                matched += m
                word_rows.append({"page": page.id, "word_id": w.id, "text": w.text, "ocr_original": a,
                                  "ocr_rendered": b, "match": bool(m)})
            n = len(page.words)
            rate = matched / n if n else float("nan")
            page_rows.append({"page": page.id, "words": n, "matched": int(matched), "match_rate": rate,
                              "ocr_pass": bool(n > 0 and rate >= threshold)})
            bar.update(n)
    pages = pd.DataFrame(page_rows, columns=["page", "words", "matched", "match_rate", "ocr_pass"])
    words = pd.DataFrame(word_rows, columns=["page", "word_id", "text", "ocr_original", "ocr_rendered", "match"])
    return OCRFilterResult(pages, words, float(threshold))


# ---------------------------------------------------------------------------------------- 3. raters

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
    if not path.is_file():
        raise RatingsError(f"{path}: ratings file is missing")
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
    return _ratings_frame(out)


def _ratings_frame(rows) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=["page", "rater", "score", "source"])
    df["page"] = df["page"].astype(str)
    df["rater"] = df["rater"].astype(str)
    df["score"] = df["score"].astype(int)
    df["source"] = df["source"].astype(str)
    return df


def write_ratings(df: pd.DataFrame, path) -> Path:
    """Write a ratings table as CSV (page, rater, score, source), atomically."""
    return atomic_write_text(path, df[["page", "rater", "score", "source"]].to_csv(index=False))


def _check_ratings(ratings: pd.DataFrame) -> pd.DataFrame:
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
    _check_ratings(ratings)
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
    _check_ratings(ratings)
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


def _per_pair(per_pair) -> tuple[int, int]:
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
    lo, hi = _per_pair(per_pair)
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
    return _ratings_frame(rows)


# ------------------------------------------------------------------------------ comparison with truth

@nb.njit(cache=True)
def _subseq_dtw(Q, R):
    n, m = Q.shape[0], R.shape[0]
    D = np.empty((n, m))
    for i in range(n):
        for j in range(m):
            c = math.sqrt((Q[i, 0] - R[j, 0]) ** 2 + (Q[i, 1] - R[j, 1]) ** 2)
            if i == 0:
                best = 0.0  # open begin: the query may start anywhere in R
            elif j == 0:
                best = D[i - 1, 0]
            else:
                best = min(D[i - 1, j - 1], D[i - 1, j], D[i, j - 1])
            D[i, j] = c + best
    jend = 0
    for j in range(1, m):
        if D[n - 1, j] < D[n - 1, jend]:
            jend = j
    idx = np.empty(n, np.int64)
    i, j = n - 1, jend
    idx[i] = j
    while i > 0:
        if j > 0:
            a, b, c = D[i - 1, j - 1], D[i - 1, j], D[i, j - 1]
            if a <= b and a <= c:
                i -= 1
                j -= 1
            elif b <= c:
                i -= 1
            else:
                j -= 1
        else:
            i -= 1
        idx[i] = j
    return D[n - 1, jend], idx


def subsequence_dtw(Q: np.ndarray, R: np.ndarray) -> tuple[float, np.ndarray]:
    """Open-begin, open-end DTW of a query sequence Q (n, 2) inside a reference sequence R (m, 2):
    (accumulated Euclidean cost of the best path from Q's first to Q's last point, starting and ending
    anywhere in R; steps (1, 0), (0, 1), (1, 1); a first-row horizontal run costs only its last cell),
    and for each query point the index of the reference point it is aligned to (non-decreasing)."""
    Q = np.ascontiguousarray(Q, dtype=np.float64)
    R = np.ascontiguousarray(R, dtype=np.float64)
    if Q.ndim != 2 or R.ndim != 2 or Q.shape[1] != 2 or R.shape[1] != 2 or not len(Q) or not len(R):
        raise ValueError(f"subsequence_dtw: need non-empty (n, 2) arrays, got {Q.shape} and {R.shape}")
    cost, idx = _subseq_dtw(Q, R)
    return float(cost), idx


def stroke_order_check(pseudo: Ink, true: Ink, spacing: float = 0.05, min_length: float = 0.2,
                       order_tol: float = 0.02, direction_tol: float = 0.02) -> tuple[Optional[bool], Optional[bool]]:
    """(order differs, direction differs) of a pseudo-label against the true ink; None where undefined.

    Definition (inks in page pixels; lengths in units of the true word height h, :func:`~inkground_lib.
    metrics.word_height`):

    1. Both inks are scaled by 1 / h and resampled along each stroke every ``spacing``. The true points,
       in writing order (strokes concatenated), get a *progress* pi = index / (N - 1) in [0, 1].
    2. Each pseudo stroke is matched to the true stroke whose points are nearest on average (mean over the
       pseudo stroke's points of the distance to that true stroke's nearest point), and aligned to it by
       :func:`subsequence_dtw`, both as drawn and reversed; the alignment with the lower cost gives each of
       its points an aligned true point.
    3. **Direction differs** when some pseudo stroke at least ``min_length`` long (and of at least 3
       points) aligns better reversed: (forward cost - reversed cost) / its number of points >
       ``direction_tol``. A retraced path (same line down and up) aligns equally well both ways and does
       not count. Undefined (None) when no stroke is that long.
    4. **Order differs** when the median progress of some pseudo stroke's aligned points is below that of
       the previous pseudo stroke by more than ``order_tol`` (the pseudo strokes do not visit the word in
       the writer's order; e.g. an i-dot placed right after its letter where the writer dotted at the
       end of the word).

    Both are None for an empty pseudo-label or an empty true ink.
    """
    from scipy.spatial import cKDTree

    from .ink import resample
    from .metrics import word_height

    if pseudo.n_points == 0 or true.n_points == 0:
        return None, None
    h = word_height(true)
    T = [s[:, :2] for s in resample(true.transformed(1.0 / h), spacing).strokes]
    P = [s[:, :2] for s in resample(pseudo.transformed(1.0 / h), spacing).strokes]
    n_true = sum(len(s) for s in T)
    starts = np.cumsum([0] + [len(s) for s in T])
    prog = np.arange(n_true) / max(n_true - 1, 1)
    trees = [cKDTree(s) for s in T]
    medians, backwards = [], []
    for s in P:
        j = int(np.argmin([t.query(s)[0].mean() for t in trees]))
        fwd, ia = subsequence_dtw(s, T[j])
        rev, ib = subsequence_dtw(s[::-1], T[j])
        aligned = ia if fwd <= rev else ib
        medians.append(float(np.median(prog[starts[j] + aligned])))
        length = float(np.hypot(*np.diff(s, axis=0).T).sum()) if len(s) > 1 else 0.0
        if length >= min_length and len(s) >= 3:
            backwards.append(bool((fwd - rev) / len(s) > direction_tol))
    order = bool(np.any(np.diff(medians) < -order_tol)) if len(medians) > 1 else False
    direction = bool(any(backwards)) if backwards else None
    return order, direction


def truth_metrics(ds: Dataset, pseudo: Mapping[str, Ink], spacing: float = 0.05) -> pd.DataFrame:
    """Per word with a true ink: page, word_id, dtw, chamfer (pseudo-label vs true ink, units of the true
    word height; an empty pseudo-label is scored as the design's invalid output, a dot at the page centre),
    order_differs, direction_differs (:func:`stroke_order_check`; NaN where undefined)."""
    from .metrics import geometry_batch

    cols = ["page", "word_id", "dtw", "chamfer", "order_differs", "direction_differs"]
    items = [(p, w) for p in ds.pages for w in p.words if w.true_ink is not None and w.true_ink.n_points]
    if not items:
        return pd.DataFrame(columns=cols)
    geo = geometry_batch([(pseudo[w.id], w.true_ink, (p.width, p.height)) for p, w in items], spacing=spacing,
                         progress=False)
    rows = []
    for (p, w), (d, c) in zip(items, geo):
        o, r = stroke_order_check(pseudo[w.id], w.true_ink, spacing=spacing)
        rows.append({"page": p.id, "word_id": w.id, "dtw": float(d), "chamfer": float(c),
                     "order_differs": np.nan if o is None else float(o),
                     "direction_differs": np.nan if r is None else float(r)})
    return pd.DataFrame(rows, columns=cols)


# ----------------------------------------------------------------------------------- 4. benchmark

def _link_or_copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def build_benchmark(ds: Dataset, pseudo: Mapping[str, Ink], kept_pages: Iterable[str], out_dir, *,
                    meta: Optional[dict] = None, name: Optional[str] = None) -> Path:
    """Write the benchmark set: the kept pages of ``ds`` (in candidate order) as a dataset in ``out_dir``.

    Kind "benchmark"; reference "pseudo-label: <derenderer>" (``meta["derenderer"]``); each word's
    reference ink is its pseudo-label, its true ink is kept where ``ds`` had one. Words whose pseudo-label
    is empty (nothing derendered) are left out (a reference must have ink); their number is recorded in
    meta["dropped_empty_words"]. Page photos are hard-linked (copied across file systems). ``meta`` is
    stored in the manifest (the pipeline records the candidates' name, path and hash, the OCR threshold,
    the derenderer, the OCR engine and the ratings source). The dataset is built in a temporary folder
    and moved into place, so ``out_dir`` always holds a complete dataset. If ``out_dir`` holds a benchmark
    with the same meta and pages, it is left untouched.
    """
    out = Path(out_dir)
    kept = set(kept_pages)
    unknown = kept - {p.id for p in ds.pages}
    if unknown:
        raise PseudoError(f"build_benchmark: kept pages not in the candidates: {sorted(unknown)[:5]}")
    meta = dict(meta or {})
    meta.setdefault("derenderer", "unknown")
    pages_in = [p for p in ds.pages if p.id in kept]
    dropped = sum(1 for p in pages_in for w in p.words if pseudo[w.id].n_points == 0)
    meta["dropped_empty_words"] = dropped
    meta["pages_kept"] = [p.id for p in pages_in]
    meta["pseudo_labels"] = hashlib.sha256(json.dumps(
        [[w.id, ink_to_lists(pseudo[w.id])] for p in pages_in for w in p.words]).encode()).hexdigest()
    meta = json.loads(json.dumps(meta))
    mpath = out / "manifest.json"
    if out.exists():
        try:
            m = json.loads(mpath.read_text("utf-8"))
        except (OSError, json.JSONDecodeError, UnicodeDecodeError):
            m = None
        if not isinstance(m, dict) or m.get("kind") != "benchmark":
            if m is not None or any(out.iterdir()):
                raise PseudoError(f"build_benchmark: {out} exists and is not a benchmark dataset; refusing to "
                                  f"replace it (choose another folder or delete it)")
        elif m.get("meta") == meta:
            try:
                load_dataset(out, check_images=True)
                return out
            except DatasetError:
                pass  # damaged: rebuild
    tmp = out.with_name(f".{out.name}.building")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    pages = []
    for p in pages_in:
        img = tmp / "pages" / f"{p.id}{Path(p.image).suffix.lower() or '.jpg'}"
        _link_or_copy(Path(p.image), img)
        words = [dataclasses.replace(w, ink=pseudo[w.id]) for w in p.words if pseudo[w.id].n_points]
        pages.append(Page(p.id, img, p.writer, p.width, p.height, words))
    write_manifest(tmp, name or f"{ds.name}-benchmark", "benchmark", f"pseudo-label: {meta['derenderer']}",
                   meta, pages)
    old = out.with_name(f".{out.name}.old")
    if old.exists():
        shutil.rmtree(old)
    if out.exists():
        os.replace(out, old)
    os.replace(tmp, out)
    if old.exists():
        shutil.rmtree(old)
    return out


# --------------------------------------------------------------------------------------- pipeline

PAGE_COLUMNS = ["page", "words", "matched", "match_rate", "ocr_pass", "n_ratings", "all_ten", "kept",
                "mean_score", "defect", "dtw", "chamfer", "order_differs", "direction_differs", "stage"]
STAGES = ("failed OCR filter", "rejected by raters", "kept")


@dataclass
class PipelineResult:
    """What :func:`run_pipeline` produced.

    * ``funnel``: one row per stage (candidates, OCR filter, rater filter): pages, share of candidates,
      share of the previous stage.
    * ``pages``: one row per candidate page: page, words, matched, match_rate, ocr_pass, n_ratings,
      all_ten (rated and every score 10), kept (benchmark page), mean_score, defect (visible defect used
      by simulated raters; NaN with real ratings), and where true inks exist the page means of dtw,
      chamfer, order_differs, direction_differs (shares of words), and stage (failed OCR filter /
      rejected by raters / kept).
    * ``words``: one row per word: the OCR texts and match, the pseudo-label's strokes and points, any
      derender error, and the truth comparison where known.
    * ``ratings`` (source column "simulated" or the file), ``agreement`` (:func:`agreement`),
      ``benchmark`` (the benchmark dataset folder), ``params``, ``components`` (which derenderer, OCR
      engine and ratings produced the numbers), ``timings`` (seconds per stage), ``has_truth``.
    """

    funnel: pd.DataFrame
    pages: pd.DataFrame
    words: pd.DataFrame
    ratings: pd.DataFrame
    agreement: dict
    benchmark: Path
    run_dir: Path
    candidates: Path
    params: dict
    components: dict
    timings: dict
    has_truth: bool
    pseudo: dict = field(default_factory=dict, repr=False)


def run_pipeline(candidates_dir, run_dir, *, derenderer="skeleton", ocr="rapidocr", ocr_threshold: float = 0.85,
                 ratings=None, n_raters: int = 85, raters_per_pair=2, rater_model: Optional[RaterModel] = None,
                 n_candidates: Optional[int] = None, seed: int = 0, progress: bool = True) -> PipelineResult:
    """Candidate pages -> pseudo-labels -> OCR filter -> rater filter -> benchmark set (``run_dir/benchmark``).

    ``derenderer``: a name (:func:`make_derenderer`) or object; ``ocr``: an engine name
    (:func:`~inkground_lib.ocr.get_engine`) or object; ``ratings``: a CSV path (:func:`read_ratings`) or
    None = simulated raters (:func:`simulate_ratings` with ``n_raters``, ``raters_per_pair`` (int or
    (min, max)), ``rater_model`` and ``seed``) over the pages that passed the OCR filter;
    ``n_candidates``: use the first N pages only. Writes to ``run_dir``: the derender and OCR caches,
    ratings.csv, pages.csv, words.csv, funnel.csv, summary.json and the benchmark dataset. A rerun with the
    same inputs reuses every derendered and OCR'd page (nothing expensive is recomputed).
    """
    timings: dict[str, float] = {}
    t = time.perf_counter()
    cand = Path(candidates_dir)
    run = Path(run_dir)
    run.mkdir(parents=True, exist_ok=True)
    ds = load_dataset(cand)
    if n_candidates is not None:
        if int(n_candidates) < 1:
            raise PseudoError(f"n_candidates: must be >= 1 or None, got {n_candidates!r}")
        ds.pages = ds.pages[: int(n_candidates)]
    model = rater_model or RaterModel()
    der = make_derenderer(derenderer)
    timings["load"] = time.perf_counter() - t

    t = time.perf_counter()
    pseudo = derender_dataset(ds, der, run, progress=progress)
    timings["derender"] = time.perf_counter() - t
    t = time.perf_counter()
    eng = _make_engine(ocr)
    o = ocr_filter(ds, pseudo, eng, ocr_threshold, run_dir=run, progress=progress)
    timings["ocr"] = time.perf_counter() - t

    t = time.perf_counter()
    truth = truth_metrics(ds, pseudo)
    has_truth = len(truth) > 0
    errors = _derender_errors(run, der)
    words = o.words.copy()
    words["strokes"] = [len(pseudo[w]) for w in words["word_id"]]
    words["points"] = [pseudo[w].n_points for w in words["word_id"]]
    words["derender_error"] = [errors.get(w, "") for w in words["word_id"]]
    words = words.merge(truth.drop(columns="page"), on="word_id", how="left")
    for c in ("dtw", "chamfer", "order_differs", "direction_differs"):
        words[c] = words[c].astype(float)
    timings["truth"] = time.perf_counter() - t

    pages = o.pages.copy()
    passed = pages.loc[pages["ocr_pass"], "page"].tolist()
    defect = pair_defect(words, model.chamfer_tol)
    if ratings is None:
        lo, hi = _per_pair(raters_per_pair)
        rt = simulate_ratings(passed, defect, n_raters=n_raters, per_pair=(lo, hi), seed=seed, model=model)
        ratings_source = "simulated"
        write_ratings(rt, run / "ratings.csv")
    else:
        rt = read_ratings(ratings)
        ratings_source = f"file: {Path(ratings).name}"
    all_ids = set(pages["page"])
    outside = int((~rt["page"].isin(all_ids)).sum())
    rated = rt[rt["page"].isin(set(passed))]
    ag = agreement(rated)
    ag["ratings_outside_candidates"] = outside
    ag["ratings_of_failed_pages"] = int((rt["page"].isin(all_ids) & ~rt["page"].isin(set(passed))).sum())
    kept = rater_filter(rated, passed)
    g = rated.groupby("page")["score"]
    pages["n_ratings"] = pages["page"].map(g.size()).fillna(0).astype(int)
    pages["all_ten"] = pages["page"].map(g.min() == KEEP_SCORE).eq(True)
    pages["kept"] = pages["page"].isin(set(kept))
    pages["mean_score"] = pages["page"].map(g.mean()).astype(float)
    pages["defect"] = pages["page"].map(defect).astype(float) if ratings is None else np.nan
    wt = words.groupby("page")[["dtw", "chamfer", "order_differs", "direction_differs"]].mean()
    for c in wt.columns:
        pages[c] = pages["page"].map(wt[c]).astype(float)
    pages["stage"] = np.where(~pages["ocr_pass"], STAGES[0], np.where(pages["kept"], STAGES[2], STAGES[1]))
    pages = pages[PAGE_COLUMNS]

    n0, n1, n2 = len(pages), int(pages["ocr_pass"].sum()), int(pages["kept"].sum())
    funnel = pd.DataFrame([
        {"stage": "candidate pages", "pages": n0, "share of candidates": 1.0 if n0 else np.nan,
         "share of previous stage": np.nan},
        {"stage": f"OCR filter (>= {ocr_threshold:g} of words match)", "pages": n1,
         "share of candidates": n1 / n0 if n0 else np.nan, "share of previous stage": n1 / n0 if n0 else np.nan},
        {"stage": "rater filter (every score 10)", "pages": n2, "share of candidates": n2 / n0 if n0 else np.nan,
         "share of previous stage": n2 / n1 if n1 else np.nan},
    ])
    dcfg, ecfg = derenderer_config(der), engine_config(eng)
    components = {"derenderer": dcfg["name"], "ocr_engine": ecfg["name"], "ratings_source": ratings_source}
    params = {"candidates": str(cand), "run_dir": str(run), "derenderer": dcfg["name"], "ocr": ecfg["name"],
              "ocr_threshold": float(ocr_threshold), "ratings": None if ratings is None else str(ratings),
              "n_raters": int(n_raters) if ratings is None else None,
              "raters_per_pair": list(_per_pair(raters_per_pair)) if ratings is None else None,
              "rater_model": dataclasses.asdict(model) if ratings is None else None,
              "n_candidates": n_candidates, "seed": int(seed)}
    t = time.perf_counter()
    cand_hash = dataset_hash(cand)
    bench = build_benchmark(ds, pseudo, kept, run / "benchmark", meta={
        "candidates": {"name": ds.name, "path": str(cand), "hash": cand_hash, "pages_used": n0},
        "ocr_threshold": float(ocr_threshold), "derenderer": dcfg["name"], "derenderer_config": dcfg,
        "ocr_engine": ecfg["name"], "ratings_source": ratings_source, "params": params})
    timings["benchmark"] = time.perf_counter() - t

    pages.to_csv(run / "pages.csv.tmp", index=False)
    os.replace(run / "pages.csv.tmp", run / "pages.csv")
    words.to_csv(run / "words.csv.tmp", index=False)
    os.replace(run / "words.csv.tmp", run / "words.csv")
    funnel.to_csv(run / "funnel.csv.tmp", index=False)
    os.replace(run / "funnel.csv.tmp", run / "funnel.csv")
    res = PipelineResult(funnel, pages, words, rt, ag, bench, run, cand, params, components,
                         {k: round(v, 3) for k, v in timings.items()}, has_truth, pseudo)
    atomic_write_json(run / "summary.json", _json_safe({
        "numbers": summary_numbers(res), "components": components, "params": params, "timings": res.timings,
        "agreement": ag, "candidates_hash": cand_hash}))
    return res


def _json_safe(obj):
    if isinstance(obj, dict):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


# ------------------------------------------------------------------------------- numbers and tables

def summary_numbers(res: PipelineResult) -> dict:
    """The section's headline numbers (plain Python numbers; keys match data/paper/reported.csv ids where
    the paper reports the same quantity): candidates, ocr_pass_pages, ocr_pass_rate, ocr_threshold,
    benchmark_pages, benchmark_rate (of OCR-passed pages), benchmark_share (of candidates), n_raters
    (raters who gave at least one rating), rater_pool (the simulated pool, else n_raters), raters_per_pair_min / _max / _mean, ratings, rater_agreement,
    rater_alpha, words, word_match_rate, and where the truth is known the medians (over pages) of dtw,
    chamfer and the shares of words with a different stroke order / direction, per stage."""
    p = res.pages
    n0, n1, n2 = len(p), int(p["ocr_pass"].sum()), int(p["kept"].sum())
    rated = p.loc[p["ocr_pass"], "n_ratings"]
    rt = res.ratings[res.ratings["page"].isin(set(p.loc[p["ocr_pass"], "page"]))]
    out = {
        "candidates": n0, "ocr_pass_pages": n1, "ocr_pass_rate": n1 / n0 if n0 else float("nan"),
        "ocr_threshold": float(res.params["ocr_threshold"]), "benchmark_pages": n2,
        "benchmark_rate": n2 / n1 if n1 else float("nan"), "benchmark_share": n2 / n0 if n0 else float("nan"),
        "n_raters": int(rt["rater"].nunique()),
        "rater_pool": int(res.params["n_raters"]) if res.params.get("n_raters") else int(rt["rater"].nunique()),
        "raters_per_pair_min": int(rated.min()) if len(rated) else 0,
        "raters_per_pair_max": int(rated.max()) if len(rated) else 0,
        "raters_per_pair_mean": float(rated.mean()) if len(rated) else float("nan"),
        "ratings": int(len(rt)), "rater_agreement": float(res.agreement["agreement"]),
        "rater_alpha": float(res.agreement["alpha"]), "words": int(len(res.words)),
        "word_match_rate": float(res.words["match"].mean()) if len(res.words) else float("nan"),
        "words_per_page_mean": float(p["words"].mean()) if n0 else float("nan"),
    }
    if res.has_truth:
        w = res.words
        out.update({"word_dtw_median": float(w["dtw"].median()), "word_chamfer_median": float(w["chamfer"].median()),
                    "word_order_differs_share": float(w["order_differs"].mean()),
                    "word_direction_differs_share": float(w["direction_differs"].mean())})
        groups = {"ocr_fail": p[~p["ocr_pass"]], "ocr_pass": p[p["ocr_pass"]],
                  "rejected": p[p["ocr_pass"] & ~p["kept"]], "kept": p[p["kept"]]}
        for g, d in groups.items():
            for m in ("dtw", "chamfer", "order_differs", "direction_differs"):
                out[f"{g}_{m}_median"] = float(d[m].median()) if len(d) else float("nan")
    return {k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in out.items()}


def funnel_table(res: PipelineResult, paper: Optional[pd.DataFrame] = None) -> pd.DataFrame:
    """The funnel beside the paper's reported numbers (:func:`inkground_lib.book.beside_paper`)."""
    from .book import beside_paper

    return beside_paper(summary_numbers(res), [
        ("candidate pages", "candidates", "candidates"),
        ("OCR match threshold (share of words)", "ocr_threshold", "ocr_threshold"),
        ("pages passing the OCR filter", "ocr_pass_pages", "ocr_pass_pages"),
        ("share of candidates passing the OCR filter", "ocr_pass_rate", "ocr_pass_rate"),
        ("raters (pool)", "rater_pool", "n_raters"),
        ("raters who rated a pair here", "n_raters", None),
        ("raters per pair (min)", "raters_per_pair_min", "raters_per_pair_min"),
        ("pages kept by the raters (benchmark)", "benchmark_pages", "benchmark_pages"),
        ("share of OCR-passed pages kept", "benchmark_rate", None),
        ("rater agreement on accept / reject", "rater_agreement", "rater_agreement"),
        ("Krippendorff's alpha (accept / reject)", "rater_alpha", None),
    ], paper=paper)


_TRUTH_METRICS = [("dtw", "DTW (word heights)"), ("chamfer", "Chamfer (word heights)"),
                  ("order_differs", "words with a different stroke order"),
                  ("direction_differs", "words with a stroke in the opposite direction")]


def truth_by_stage_table(res: PipelineResult) -> pd.DataFrame:
    """Median over pages of each truth metric (page means over words), for pages that failed / passed the
    OCR filter and, among those that passed, were rejected / kept by the raters. Lower is better."""
    p = res.pages
    groups = [("failed OCR filter", p[~p["ocr_pass"]]), ("passed OCR filter", p[p["ocr_pass"]]),
              ("passed OCR, rejected by raters", p[p["ocr_pass"] & ~p["kept"]]), ("kept (benchmark)", p[p["kept"]])]
    rows = []
    for name, d in groups:
        r = {"pages": int(len(d))}
        for m, label in _TRUTH_METRICS:
            r[f"median {label}"] = round(float(d[m].median()), 3) if len(d) and d[m].notna().any() else float("nan")
        rows.append(pd.Series(r, name=name, dtype=object))
    return pd.DataFrame(rows).rename_axis("stage outcome")


def fig_truth_by_stage(res: PipelineResult):
    """Per-page distributions (page means over words) of DTW, Chamfer and the shares of words with a
    different stroke order / direction, for each stage outcome; points jittered, medians as bars."""
    import matplotlib.pyplot as plt

    p = res.pages
    fig, axes = plt.subplots(1, 4, figsize=(13, 3.2), constrained_layout=True)
    colours = {"failed OCR filter": "#c44e52", "rejected by raters": "#dd8452", "kept": "#55a868"}
    rng = np.random.default_rng(0)
    for ax, (m, label) in zip(axes, _TRUTH_METRICS):
        for i, st in enumerate(STAGES):
            v = p.loc[p["stage"] == st, m].dropna().to_numpy()
            if len(v):
                ax.scatter(i + rng.uniform(-0.15, 0.15, len(v)), v, s=14, alpha=0.7, color=colours[st])
                ax.hlines(np.median(v), i - 0.3, i + 0.3, color="black", lw=2)
        ax.set_xticks(range(len(STAGES)), ["failed\nOCR", "rejected\nby raters", "kept"], fontsize=8)
        ax.set_xlim(-0.6, len(STAGES) - 0.4)
        ax.set_title(label, fontsize=9)
    axes[0].set_ylabel("page mean (pseudo-label vs truth)")
    return fig


def _pick_examples(res: PipelineResult, n_per_row: int):
    w, p = res.words, res.pages.set_index("page")
    w = w.assign(stage=w["page"].map(p["stage"]))
    rows = []
    for st, want_match in (("failed OCR filter", False), ("rejected by raters", None), ("kept", True)):
        d = w[w["stage"] == st]
        if want_match is not None:
            d = pd.concat([d[d["match"] == want_match], d[d["match"] != want_match]])
        else:
            d = pd.concat([d[~d["match"]], d[d["match"]]])
        d = d[d["points"] > 0] if (d["points"] > 0).any() else d
        if len(d):
            idx = np.unique(np.linspace(0, len(d) - 1, min(n_per_row, len(d))).round().astype(int))
            rows.append((st, d.iloc[idx]))
    return rows


def fig_examples(res: PipelineResult, ds: Optional[Dataset] = None, n_per_row: int = 3):
    """Example pairs for each stage outcome (rows: page failed the OCR filter / rejected by the raters /
    kept): for each word the original crop and the pseudo-label drawn over it with its stroke order
    (colour runs from the first to the last point; dots mark stroke starts, numbers the stroke order),
    titled with the two OCR readings."""
    import matplotlib.pyplot as plt

    from .render import crop_box, plot_overlay

    ds = ds or load_dataset(res.candidates)
    rows = _pick_examples(res, n_per_row)
    if not rows:
        fig, ax = plt.subplots(figsize=(4, 1))
        ax.text(0.5, 0.5, "no pages", ha="center")
        ax.set_axis_off()
        return fig
    ncol = 2 * n_per_row
    fig, axes = plt.subplots(len(rows), ncol, figsize=(2.2 * ncol, 1.9 * len(rows)), squeeze=False,
                             constrained_layout=True)
    photos: dict[str, np.ndarray] = {}
    for r, (st, d) in enumerate(rows):
        for c, (_, wr) in enumerate(d.iterrows()):
            page = ds.page(wr["page"])
            if page.id not in photos:
                photos[page.id] = page.load_image()
            photo = photos[page.id]
            word = next(x for x in page.words if x.id == wr["word_id"])
            cb = crop_box(word.box, (page.width, page.height), margin=0.15)
            img = photo[cb[1]:cb[3], cb[0]:cb[2]]
            a0, a1 = axes[r, 2 * c], axes[r, 2 * c + 1]
            a0.imshow(img, extent=(cb[0] - 0.5, cb[2] - 0.5, cb[3] - 0.5, cb[1] - 0.5))
            a0.set_title(f"photo; OCR: {wr['ocr_original']!r}", fontsize=7)
            faded = (255 - (255 - img.astype(np.float32)) * 0.35).astype(np.uint8)
            plot_overlay(a1, res.pseudo[word.id], image=faded, extent_box=cb, lw=1.2, number_strokes=True)
            mark = "match" if wr["match"] else "no match"
            a1.set_title(f"strokes; OCR: {wr['ocr_rendered']!r} ({mark})", fontsize=7)
            for a in (a0, a1):
                a.set_xticks([])
                a.set_yticks([])
        for c in range(len(d), n_per_row):
            axes[r, 2 * c].set_axis_off()
            axes[r, 2 * c + 1].set_axis_off()
        axes[r, 0].set_ylabel(st, fontsize=8)
    return fig


_DERENDERER_TEXT = {
    "skeleton": "the skeleton derenderer (binarise, skeletonise, trace and order strokes; inkground's offline "
                "stand-in for InkSight Small-p, which needs TensorFlow and its weights)",
    "inksight-small-p": "InkSight Small-p (the paper's derenderer)",
}
_OCR_TEXT = {
    "rapidocr": "RapidOCR (PP-OCR recogniser on CPU; inkground's offline stand-in for DeepSeek-OCR, which needs "
                "a GPU and its weights)",
    "deepseek-ocr": "DeepSeek-OCR (the paper's OCR)",
    "tesseract": "tesseract (an offline alternative; the paper used DeepSeek-OCR)",
}


def provenance(res: PipelineResult, ds: Optional[Dataset] = None) -> dict:
    """Sentences saying which component produced the numbers (for the book's prose): dataset, derenderer,
    ocr, ratings (says plainly when the ratings are simulated, with the model's parameters), truth."""
    from .book import describe_dataset

    ds = ds or load_dataset(res.candidates, check_images=False)
    c = res.components
    if c["ratings_source"] == "simulated":
        m = res.params["rater_model"]
        lo, hi = res.params["raters_per_pair"]
        per = f"{lo}" if lo == hi else f"{lo} to {hi}"
        ratings = (f"SIMULATED raters, not people: {res.params['n_raters']} simulated raters, {per} per pair, each "
                   f"with a strictness drawn from Normal({m['strictness_mean']:g}, {m['strictness_sd']:g}); a rater "
                   f"gives 10 when strictness x visible defect + Normal(0, {m['noise_sd']:g}) noise is below "
                   f"{m['tau']:g} (visible defect = share of the page's words whose OCR readings differ or, where "
                   f"the truth is known, whose strokes miss the ink by more than {m['chamfer_tol']:g} word "
                   f"heights, Chamfer)")
    else:
        ratings = f"ratings read from {c['ratings_source'].removeprefix('file: ')}"
    truth = ("the candidate pages come with their true trajectories, so the pseudo-labels can be compared with "
             "the truth" if res.has_truth else
             "the candidate pages have no true trajectories, so the comparison with the truth is empty here")
    return {"dataset": describe_dataset(ds), "dataset_name": ds.name,
            "derenderer": _DERENDERER_TEXT.get(c["derenderer"], f"the derenderer {c['derenderer']!r}"),
            "ocr": _OCR_TEXT.get(c["ocr_engine"], f"the OCR engine {c['ocr_engine']!r}"),
            "ratings": ratings, "truth": truth}
