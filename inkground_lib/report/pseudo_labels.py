"""Section 02's tables, figures and provenance sentences."""

from __future__ import annotations

from typing import Optional

import pandas as pd

from inkground_lib.analysis.origins import pseudo_origins
from inkground_lib.core.dataset import Dataset, load_dataset
from inkground_lib.core.defaults import KEEP_SCORE
from inkground_lib.core.metric_table import METRICS
from inkground_lib.pseudo.run import STAGES, PipelineResult, summary_numbers
from inkground_lib.report.format import missing
from inkground_lib.report.names import summary_mode
from inkground_lib.report.prose import DERENDERER_TEXT as _DERENDERER_TEXT
from inkground_lib.report.prose import OCR_TEXT as _OCR_TEXT


def funnel_parameters(res: PipelineResult, paper: Optional[pd.DataFrame] = None) -> dict:
    """The funnel's quantities this run SET rather than measured: {key: (value, note)} for
    :func:`inkground_lib.report.tables.beside_paper`. Always the OCR threshold and the keep score; with
    simulated raters also the rater pool and the raters per pair (with a ratings file those are measured).
    ``note`` says whether the value is the paper's."""
    from inkground_lib.core.paper import paper_numbers
    from inkground_lib.report.tables import set_note

    paper = paper_numbers() if paper is None else paper

    def pv(pid):
        return float(paper.loc[pid, "value"]) if pid in paper.index else float("nan")

    out = {"ocr_threshold": float(res.params["ocr_threshold"]), "keep_score": KEEP_SCORE}
    if res.params.get("raters_per_page") is not None:
        out["raters_per_page"] = int(res.params["raters_per_page"])
    if res.params.get("n_raters") is not None:
        out["rater_pool"] = int(res.params["n_raters"])
    if res.params.get("raters_per_pair") is not None:
        out["raters_per_pair_min"] = int(res.params["raters_per_pair"][0])
    ids = {"rater_pool": "n_raters", "raters_per_page": "raters_per_pair_min"}
    return {k: (v, set_note(v, pv(ids.get(k, k)))) for k, v in out.items()}


def funnel_table(res: PipelineResult, paper: Optional[pd.DataFrame] = None) -> pd.DataFrame:
    """The funnel beside the paper's reported numbers (:func:`inkground_lib.report.tables.beside_paper`); the
    parameters of :func:`funnel_parameters` and the candidate pages the run was given are shown as set, not
    measured, and are not divided by the paper's; a count or rate that cannot be set beside the paper's (a run of
    another size, simulated raters: :func:`inkground_lib.analysis.origins.pseudo_origins`) gets no ratio, with
    the reason."""
    from inkground_lib.report.tables import beside_paper

    nums = {**summary_numbers(res), "ratings_kind": ratings_kind(res)}
    origins = pseudo_origins({"numbers": nums, "params": res.params, "components": res.components})
    set_values = funnel_parameters(res, paper)
    set_values.setdefault("candidates", (nums.get("candidates"), origins["candidates"].how))
    return beside_paper(nums, [
        ("ratings", "ratings_kind", None),
        ("candidate pages", "candidates", "candidates"),
        ("OCR match threshold (share of words)", "ocr_threshold", "ocr_threshold"),
        ("pages passing the OCR filter", "ocr_pass_pages", "ocr_pass_pages"),
        ("share of candidates passing the OCR filter", "ocr_pass_rate", "ocr_pass_rate", "no candidate pages"),
        ("raters (pool)", "rater_pool", "n_raters"),
        ("raters who rated a pair here", "n_raters", None),
        ("raters per pair (min)", "raters_per_pair_min", "raters_per_pair_min"),
        ("score every rater must give to keep a page", "keep_score", "keep_score"),
        ("ratings a page needs to count as rated (K)", "raters_per_page", "raters_per_pair_min"),
        ("OCR-passed pages awaiting ratings (fewer than K; neither kept nor rejected)", "pages_awaiting_ratings",
         None),
        ("pages kept by the raters (benchmark)", "benchmark_pages", "benchmark_pages"),
        ("share of OCR-passed pages kept", "benchmark_rate", None, "no page passed the OCR filter"),
        ("rater agreement on accept / reject", "rater_agreement", "rater_agreement", "no ratings"),
        ("Krippendorff's alpha (accept / reject)", "rater_alpha", None, "undefined for these ratings"),
    ], paper=paper, set_values=set_values,
        not_comparable={k: o.not_comparable for k, o in origins.items() if o.not_comparable})


TRUTH_METRICS = [*((m, f"{METRICS[m].label} ({METRICS[m].unit})") for m in ("dtw", "chamfer")),
                 ("order_differs", "words with a different stroke order"),
                 ("direction_differs", "words with a stroke in the opposite direction")]
"""(column of the truth comparison, label) of section 02's truth metrics: DTW and Chamfer (the columns
:mod:`inkground_lib.pseudo.truth` writes), labelled from their metric records, and the stroke-order checks."""


def truth_by_stage_table(res: PipelineResult) -> pd.DataFrame:
    """Median over pages of each truth metric (page means over words), for pages that failed / passed the
    OCR filter and, among those that passed, were rejected / kept by the raters. Lower is better."""
    p = res.pages
    groups = [("failed OCR filter", p[~p["ocr_pass"]]), ("passed OCR filter", p[p["ocr_pass"]]),
              ("passed OCR, rejected by raters", p[p["stage"] == STAGES[1]]), ("kept (benchmark)", p[p["kept"]])]
    rows = []
    for name, d in groups:
        r = {"pages": int(len(d))}
        for m, label in TRUTH_METRICS:
            r[f"median {label}"] = (round(float(d[m].median()), 3) if len(d) and d[m].notna().any() else
                                    missing("no pages" if not len(d) else "no true ink"))
        rows.append(pd.Series(r, name=name, dtype=object))
    return pd.DataFrame(rows).rename_axis("stage outcome")




def provenance(res: PipelineResult, ds: Optional[Dataset] = None) -> dict:
    """Sentences saying which component produced the numbers (for the book's prose): dataset, derenderer,
    ocr, ratings (says plainly when the ratings are simulated, with the model's parameters), truth."""
    from inkground_lib.report.dataset_prose import describe_dataset

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
        ratings = ratings_file_text(res)
    truth = ("the candidate pages come with their true trajectories, so the pseudo-labels can be compared with "
             "the truth" if res.has_truth else
             "the candidate pages have no true trajectories, so the comparison with the truth is empty here")
    return {"dataset": describe_dataset(ds), "dataset_name": ds.name,
            "derenderer": _DERENDERER_TEXT.get(_mode(res), f"the derenderer {_mode(res)!r}"),
            "ocr": _OCR_TEXT.get(c["ocr_engine"], f"the OCR engine {c['ocr_engine']!r}"),
            "ratings": ratings, "truth": truth}


def ratings_per_pair_text(lo: int, hi: int) -> str:
    """How many ratings each pair got, as prose: one number when every pair got the same, else a range.

    >>> ratings_per_pair_text(2, 2), ratings_per_pair_text(2, 3), ratings_per_pair_text(1, 1)
    ('2 ratings per pair', '2 to 3 ratings per pair', '1 rating per pair')
    """
    lo, hi = int(lo), int(hi)
    if lo == hi:
        return f"{lo} rating{'' if lo == 1 else 's'} per pair"
    return f"{lo} to {hi} ratings per pair"


def _mode(res) -> str:
    """The run's derenderer by its one displayed name (:func:`inkground_lib.report.names.summary_mode`)."""
    return summary_mode({"components": res.components, "params": getattr(res, "params", None) or {}})


def _is_papers(component: str, kind: str) -> bool:
    """Whether a section-02 component (a derenderer or OCR engine name) is the paper's own."""
    return component.startswith("inksight") if kind == "derenderer" else component == "deepseek-ocr"


def stands_in_text(res: PipelineResult) -> str:
    """Section 02's overview sentence on what stands in, from what this run ran: each component named as the
    paper's or as the stand-in for the paper's; simulated raters are said to see each word's distance to the
    writer's true ink, which no real rater can see. Plain text (it is glued).

    >>> from types import SimpleNamespace as NS
    >>> t = stands_in_text(NS(components={"derenderer": "skeleton", "ocr_engine": "rapidocr",
    ...     "ratings_source": "simulated"}, params={"rater_model": {"chamfer_tol": 0.1}}, has_truth=True))
    >>> t[:89]
    "The funnel's steps and rules are the paper's, but none of its components is: the skeleton"
    >>> "distance to the writer's true ink" in t and "no real rater can see" in t
    True
    """
    c = res.components
    der, ocr, src = c["derenderer"], c["ocr_engine"], c["ratings_source"]
    parts, papers = [], 0
    if _is_papers(der, "derenderer"):
        parts.append("InkSight Small-p, the paper's derenderer")
        papers += 1
    else:
        parts.append(f"the {_mode(res)} derenderer in place of InkSight Small-p")
    if _is_papers(ocr, "ocr"):
        parts.append("DeepSeek-OCR, the paper's OCR")
        papers += 1
    else:
        parts.append(f"{_OCR_NAME.get(ocr, ocr)} in place of DeepSeek-OCR")
    if src == "simulated":
        tol = float(res.params["rater_model"]["chamfer_tol"])
        sees = (f"each word's two OCR readings and its Chamfer distance to the writer's true ink (strokes that "
                f"miss the ink by more than {tol:g} word heights are a visible defect), a distance no real rater "
                f"can see, so their verdicts are not evidence about people" if res.has_truth else
                "whether each word's two OCR readings agree")
        parts.append(f"simulated raters (a stated model, not people) in place of the paper's raters: they see {sees}")
    else:
        parts.append(f"the ratings of {src.removeprefix('file: ')} in place of the paper's raters' ratings")
    lead = ("none of its components is" if papers == 0 else
            "the raters are not" if papers == 2 else
            "only the derenderer is the paper's" if _is_papers(der, "derenderer") else "only the OCR is the paper's")
    return f"The funnel's steps and rules are the paper's, but {lead}: " + "; ".join(parts) + "."


_OCR_NAME = {"rapidocr": "RapidOCR", "tesseract": "tesseract"}


def ratings_kind(res: PipelineResult) -> str:
    """What the ratings of a run are, in a few words for a table: "simulated", "real ratings (file NAME)"
    when every rating in it was given by a person (source ``real``, as ``inkground rate`` writes), else
    "ratings from file NAME".

    >>> from types import SimpleNamespace as NS
    >>> ratings_kind(NS(components={"ratings_source": "simulated"}))
    'simulated'
    """
    src = res.components["ratings_source"]
    if src == "simulated":
        return "simulated"
    name = src.removeprefix("file: ")
    real = len(res.ratings) and set(res.ratings["source"]) == {"real"}
    return f"real ratings (file {name})" if real else f"ratings from file {name}"


def awaiting_text(nums: dict) -> str:
    """Section 02's sentence on the pages that await ratings (fewer than K standing ratings), from
    :func:`inkground_lib.pseudo.run.summary_numbers`: none, some (neither kept nor rejected: the benchmark
    holds only pages rated in full), or more than half (the benchmark was built only because the run was told
    to, ``allow_partial_ratings``).

    >>> awaiting_text({"pages_awaiting_ratings": 0, "ocr_pass_pages": 5, "raters_per_page": 2})
    'Every page that passed the OCR filter has its ratings, so each is either kept or rejected.'
    >>> awaiting_text({"pages_awaiting_ratings": 4, "ocr_pass_pages": 5, "raters_per_page": 2})[:60]
    'More than half of the pages that passed the OCR filter await'
    """
    n_wait, n = int(nums.get("pages_awaiting_ratings") or 0), int(nums.get("ocr_pass_pages") or 0)
    if n_wait == 0:
        return "Every page that passed the OCR filter has its ratings, so each is either kept or rejected."
    them = "it is" if n_wait == 1 else "they are"
    base = (f"The {'page' if n_wait == 1 else 'pages'} awaiting ratings {'has' if n_wait == 1 else 'have'} "
            f"fewer standing ratings than a page needs, so {them} neither kept nor rejected: the benchmark set "
            f"holds only pages rated in full.")
    if 2 * n_wait > n:
        return ("More than half of the pages that passed the OCR filter await ratings; section 02 refuses to "
                "build a benchmark from so few and built this one only because it was told to "
                "(allow_partial_ratings). " + base)
    return base


def ratings_file_text(res: PipelineResult) -> str:
    """How the book names ratings read from a file: "N raters, real ratings (file ...)" when every rating
    in it was given by a person (source ``real``, as ``inkground rate`` writes), with the number of ratings
    of pages that passed the OCR filter; otherwise the file and the sources its rows name."""
    name = res.components["ratings_source"].removeprefix("file: ")
    rt = res.ratings
    sources = sorted(set(rt["source"])) if len(rt) else []
    k = int(res.params.get("raters_per_page") or 0)
    need = f"; a page counts as rated with {k} rating{'' if k == 1 else 's'}"
    if sources == ["real"]:
        nums = summary_numbers(res)
        n = nums["n_raters"]
        return (f"{n} rater{'' if n == 1 else 's'}, real ratings (file {name}: {nums['ratings']} ratings of the "
                f"pages that passed the OCR filter, given by people with `inkground rate`{need})")
    if not sources:
        return f"ratings read from {name} (it holds no rating of a page that passed the OCR filter)"
    if all(x.startswith("file: ") for x in sources):  # a plain page,rater,score file: who rated is not said
        return f"ratings read from {name}"
    return f"ratings read from {name} (sources: {', '.join(sources)})"


def filters_vs_truth(nums: dict) -> dict:
    """The numbers of section 02's sentence on whether the filters keep the better references, as shown: per stage
    outcome (failed / passed the OCR filter, rejected / kept by the raters) and truth metric (:data:`TRUTH_METRICS`),
    the median of the page means from :func:`inkground_lib.pseudo.run.summary_numbers` at 3 decimals, keyed
    ``<stage>_<metric>`` (the notebook's Markdown holds the sentence and glues each); a stage with no page reads as
    an em dash with the reason, never as NaN.

    >>> t = filters_vs_truth({"ocr_fail_dtw_median": float("nan"), "ocr_pass_dtw_median": 0.1234})
    >>> t["ocr_fail_dtw"], t["ocr_pass_dtw"]
    ('— (no page failed the OCR filter)', '0.123')
    """
    import math

    why = {"ocr_fail": "no page failed the OCR filter", "ocr_pass": "no page passed the OCR filter",
           "rejected": "the raters rejected no page", "kept": "no page was kept"}

    def v(stage: str, metric: str) -> str:
        x = nums.get(f"{stage}_{metric}_median")
        if x is None or (isinstance(x, float) and math.isnan(x)):
            return f"— ({why[stage]})"
        return f"{float(x):.3f}"

    return {f"{stage}_{m}": v(stage, m) for stage in why for m, _ in TRUTH_METRICS}


def alpha_text(alpha) -> str:
    """Krippendorff's alpha as prose: 3 decimals, or an em dash with the reason where it is undefined (every
    rating in one category, or too few ratings: no disagreement is possible to correct for chance).

    >>> alpha_text(0.41234), alpha_text(float("nan"))
    ('0.412', '— (undefined here: the ratings leave no disagreement to correct for chance)')
    """
    import math

    if alpha is None or (isinstance(alpha, float) and math.isnan(alpha)):
        return "— (undefined here: the ratings leave no disagreement to correct for chance)"
    return f"{float(alpha):.3f}"
