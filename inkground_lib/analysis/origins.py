"""Where each number on our side of a claim comes from (its origin), read from the records of the run or dataset
that made it: a measurement, or a number we set (a parameter, a seeded split, a requested count) or that follows
from others by arithmetic. Only a measurement counts towards a claim's status
(:func:`inkground_lib.analysis.claims.claim_status`); the others are shown as set, never as measured.

Three record kinds carry numbers for claims: a dataset's statistics (section 01: the dataset's kind and its
manifest's ``meta`` say which statistics its builder set), a pseudo-label run's summary.json (section 02: its
``params`` and ``components`` say which numbers are inputs) and a section-03 run's writer-classifier facts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

MEASUREMENT = "measurement"
SETTING = "setting"
SEEDED_SPLIT = "seeded split"
REQUESTED = "requested count"
IDENTITY = "arithmetic identity"
PAPERS_OWN = "the paper's own number"
REPLACED = "system and data replaced"

ORIGINS = {
    MEASUREMENT: "measured on our pages or in our runs (with the stand-ins named); the only origin that counts "
                 "towards a claim's status",
    SETTING: "a parameter we set (a threshold, a generator's target, floor or cap, a layout size, the pool of "
             "simulated raters): it measures nothing",
    SEEDED_SPLIT: "the share a seeded split of the words gave: fixed by the split's rule, not measured",
    REQUESTED: "how many pages a run was asked to make or was given: the size of our run, not a measurement",
    IDENTITY: "follows from other numbers by arithmetic or by construction (one writer class per page: as many "
              "classes as pages)",
    REPLACED: "a per-system score measured here with a stand-in system on stand-in data: it measures neither the "
              "paper's system nor its data, so it does not count",
    PAPERS_OWN: "the paper's number stated again: a check that two places of the paper give the same number only "
                "restates it",
}
"""Origin kind -> what it means; defined once, the reviewers' page shows it."""

COUNTED = frozenset({MEASUREMENT})
"""The origins that count towards a claim's status."""


@dataclass(frozen=True)
class Origin:
    """Where one number comes from: ``kind`` (a key of :data:`ORIGINS`), ``how`` (in words, with the setting:
    "the generator's target mean, 35") and ``not_comparable`` (why our number cannot be divided by the paper's,
    e.g. a count of a run of another size; empty when the two are comparable)."""

    kind: str
    how: str
    not_comparable: str = ""

    def __post_init__(self):
        if self.kind not in ORIGINS:
            raise ValueError(f"Origin.kind: {self.kind!r} is not one of {tuple(ORIGINS)}")

    @property
    def counts(self) -> bool:
        """True when the number is a measurement (it may count towards a status)."""
        return self.kind in COUNTED


MEASURED_ON_PAGES = Origin(MEASUREMENT, "measured on the dataset's pages")


def _g(v) -> str:
    """A setting as text: 158 -> "158", 1291 -> "1,291", 35.0 -> "35", "?" as it is."""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return f"{v:g}" if isinstance(v, float) else str(v)


def dataset_origins(kind: str | None, meta: Mapping | None) -> dict[str, Origin]:
    """The origin of each statistic of :func:`inkground_lib.datasets.statistics.statistics` for a dataset of
    ``kind`` with manifest ``meta``: what its builder set (the synthetic generator's page count, words-per-page
    floor, cap and target mean and its letter size, tuned to the paper's median box; the recorded builder's
    words per page and layout), the rest measured on its pages.

    >>> o = dataset_origins("synth", {"params": {"pages": 158, "words_min": 2, "words_max": 140, "words_mean": 35.0,
    ...                                          "size": 1.0}})
    >>> o["pages"].kind, o["words_per_page_mean"].how, o["strokes_per_page_mean"].kind
    ('requested count', "the generator's target mean, 35", 'measurement')
    """
    meta = dict(meta or {})
    params = dict(meta.get("params") or {})
    out = {k: MEASURED_ON_PAGES for k in ("words", "words_per_page_mean", "words_per_page_min",
                                          "words_per_page_max", "strokes_per_page_mean", "points_per_stroke_mean",
                                          "box_width_median", "box_height_median")}
    if kind == "synth":
        out["pages"] = Origin(REQUESTED, f"the generator was asked for {_g(params.get('pages', '?'))} pages")
        for key, param, what in (("words_per_page_min", "words_min", "floor"), ("words_per_page_max", "words_max", "cap"),
                                 ("words_per_page_mean", "words_mean", "target mean")):
            if param in params:
                out[key] = Origin(SETTING, f"the generator's {what}, {_g(params[param])}")
        if "size" in params:
            box = Origin(SETTING, f"the generator's letter size ({_g(params['size'])}) was tuned so that the median "
                                  f"word box matches the paper's")
            out["box_width_median"] = out["box_height_median"] = box
        out["words"] = Origin(REQUESTED, "the pages asked for times the words drawn for each")
        out["points_per_stroke_mean"] = Origin(SETTING, "follows from the generator's resampling of every stroke "
                                                        "at a fixed step along its length (a sampling rate we set, "
                                                        "not a writer's)")
    elif kind == "recorded":
        n = params.get("pages")
        out["pages"] = Origin(REQUESTED, f"the builder was asked for {_g(n)} pages" if n is not None else
                              f"one page per writer of the source ({_g(meta.get('writers', '?'))} writers)")
        wpp = params.get("words_per_page")
        if isinstance(wpp, (list, tuple)) and len(wpp) == 2:
            how = f"the builder draws {_g(wpp[0])} to {_g(wpp[1])} words a page"
            for key in ("words_per_page_min", "words_per_page_max", "words_per_page_mean"):
                out[key] = Origin(SETTING, how)
        lay = params.get("layout") or {}
        if lay:
            box = Origin(SETTING, f"follows from the builder's layout (x-height {_g(lay.get('core_px', '?'))} px on "
                                  f"a page {_g(lay.get('page_width', '?'))} px wide)")
            out["box_width_median"] = out["box_height_median"] = box
        out["words"] = Origin(REQUESTED, "the pages built times the words drawn for each")
    elif kind == "benchmark":
        out["pages"] = Origin(MEASUREMENT, "the candidate pages the filters kept",
                              "a count of a run of another size: it grows with the candidate pages the run was given")
    else:
        out["pages"] = Origin(REQUESTED, "the pages of the dataset read: its size, not a measurement")
    return out


def pseudo_origins(summary: Mapping) -> dict[str, Origin]:
    """The origin of each number of a pseudo-label run's summary.json (``numbers``): the candidate pages it was
    given (requested), its inputs (OCR threshold, keep score; with simulated raters also their pool and the raters
    per pair: settings), and the rest measured, where counts of a run of another size and what simulated raters
    did are not comparable with the paper's.

    >>> o = pseudo_origins({"numbers": {"candidates": 158, "ocr_pass_rate": 0.7}, "params": {"ocr_threshold": 0.85},
    ...                     "components": {"ratings_source": "simulated"}})
    >>> o["candidates"].kind, o["ocr_threshold"].kind, o["rater_agreement"].not_comparable
    ('requested count', 'setting', 'simulated raters (a stated model, not people)')
    """
    nums = dict(summary.get("numbers") or {})
    params = dict(summary.get("params") or {})
    simulated = str((summary.get("components") or {}).get("ratings_source", "")) == "simulated"
    n = nums.get("candidates")
    size = (f"a count of a run of {_g(n)} candidate pages: it grows with the pages the run was given"
            if n is not None else "a count of a run of another size")
    sim = "simulated raters (a stated model, not people)"
    out = {k: Origin(MEASUREMENT, "measured in the pseudo-label run") for k in nums}
    out["candidates"] = Origin(REQUESTED, f"the candidate pages the run was given ({_g(n) if n is not None else '?'})")
    out["words"] = Origin(REQUESTED, "the words of the candidate pages the run was given")
    out["ocr_threshold"] = Origin(SETTING, f"the run's parameter ocr_threshold, {_g(params.get('ocr_threshold', '?'))}")
    out["keep_score"] = Origin(SETTING, "the score every rater must give to keep a page (a constant of the filter)")
    for k in ("ocr_pass_pages", "ratings"):
        out[k] = Origin(MEASUREMENT, "measured in the pseudo-label run", size)
    for k in ("benchmark_pages", "n_raters"):
        out[k] = Origin(MEASUREMENT, "measured in the pseudo-label run", f"{size}; {sim}" if simulated else size)
    if simulated:
        pool = params.get("n_raters", "?")
        per = params.get("raters_per_pair") or ["?"]
        out["rater_pool"] = Origin(SETTING, f"the simulated raters' pool, the run's parameter n_raters ({_g(pool)})")
        for k in ("raters_per_pair_min", "raters_per_pair_max", "raters_per_pair_mean"):
            out[k] = Origin(SETTING, f"the run's parameter raters_per_pair ({', '.join(_g(v) for v in per)})")
        for k in ("rater_agreement", "rater_alpha", "benchmark_rate", "benchmark_share"):
            out[k] = Origin(MEASUREMENT, "measured on the simulated ratings", sim)
    return out


def style_origins(style: Mapping, dataset: str = "") -> dict[str, Origin]:
    """The origin of each writer-classifier fact of a section-03 run (facts ``style``): its classes are the
    data's writers (each page is its own writer: as many classes as pages, an identity, and chance = 1 / classes),
    its train share is what the data's seeded 75% / 25% split of each page's words gave, and its top-1 accuracy
    is measured.

    >>> o = style_origins({"n_classes": 41, "n_train": 970, "n_test": 321})
    >>> o["n_classes"].kind, o["train_share"].kind, o["top1"].kind
    ('arithmetic identity', 'seeded split', 'measurement')
    """
    n, tr, te = style.get("n_classes"), style.get("n_train"), style.get("n_test")
    on = f" of {dataset}" if dataset else ""
    return {
        "n_classes": Origin(IDENTITY, f"one class per writer with training words: the count of writers in the "
                                      f"data{on} ({_g(n) if n is not None else '?'}), not a measurement"),
        "chance": Origin(IDENTITY, "1 / the number of classes"),
        "train_share": Origin(SEEDED_SPLIT, f"the data's seeded split of each page's words into train and test gave "
                                            f"{_g(tr) if tr is not None else '?'} of "
                                            f"{_g(tr + te) if tr is not None and te is not None else '?'} words"),
        "n_train": Origin(SEEDED_SPLIT, "the data's seeded split of each page's words"),
        "n_test": Origin(SEEDED_SPLIT, "the data's seeded split of each page's words"),
        "top1": Origin(MEASUREMENT, "measured on the held-out words"),
    }


def with_origins(stats: Mapping, kind: str | None, meta: Mapping | None) -> dict:
    """A dataset's statistics with their origins under "origins" (:func:`dataset_origins`), the form in which
    :func:`inkground_lib.analysis.claims.claim_status` takes them."""
    return {**dict(stats), "origins": dataset_origins(kind, meta)}
