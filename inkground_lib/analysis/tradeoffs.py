"""Section 04: Pareto fronts, definition variants (the reference among them), ranking stability, the ranking
flips the choice of reference causes, correlations, Style chance. The variants re-score a run from its cached
predictions with :mod:`inkground_lib.analysis.rescoring`."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from inkground_lib.analysis.rescoring import casefold_counts, reocr_counts, rescore_geometries
from inkground_lib.analysis.runs import summary_table
from inkground_lib.analysis.ties import SHOWN_DECIMALS, shown, tied_ranks
from inkground_lib.core.defaults import N_BOOT, VARIANT_OCR_ENGINES, VARIANT_SPACINGS
from inkground_lib.core.metric_table import METRICS, metric_labels, metric_names
from inkground_lib.core.run_files import REFERENCES, facts_json, scores_csv
from inkground_lib.core.run_loaders import EvalRun, load_eval_run, load_eval_runs
from inkground_lib.core.text import short_reason


def paper_points(reported: pd.DataFrame) -> pd.DataFrame:
    """The paper's per-system scores (reported.csv rows whose metric is a metric's label and a named system),
    one row per (dataset, system) with a column per metric the paper reports per system (the metric table's
    ``reported``: dtw, chamfer, ar, style; NaN where the summary gives no number) and the reported ids they come
    from."""
    labels = {m.label: m.name for m in METRICS.values()}
    p = reported.reset_index() if "id" not in reported.columns else reported
    p = p[p["metric"].isin(labels) & p["system"].notna() & ~p["system"].astype(str).str.contains("VLMs")]
    rows = {}
    for _, r in p.iterrows():
        key = (r["dataset"], r["system"])
        row = rows.setdefault(key, {"dataset": r["dataset"], "system": r["system"], "ids": []})
        row[labels[r["metric"]]] = float(r["value"])
        row["ids"].append(r["id"])
    out = pd.DataFrame(list(rows.values()))
    for m in labels.values():
        if m not in out.columns:
            out[m] = np.nan
    return out[["dataset", "system", *metric_names(reported=True), "ids"]]


def pareto_front(x, y, x_better: str = "max", y_better: str = "max") -> np.ndarray:
    """Boolean mask of the non-dominated points.

    A point dominates another when it is at least as good on both coordinates and strictly better on one
    (``"max"``: higher is better, ``"min"``: lower is better). Points with a NaN coordinate are never on
    the front and dominate nothing. Coordinates are compared as the book shows them (rounded to
    :data:`~inkground_lib.analysis.ties.SHOWN_DECIMALS` decimals): points equal at that precision do not dominate
    each other (both stay on the front).

    >>> pareto_front([0.5, 0.5], [6e-7, 0.0]).tolist()
    [True, True]
    """
    for b in (x_better, y_better):
        if b not in ("max", "min"):
            raise ValueError(f"pareto_front: better must be 'max' or 'min', got {b!r}")
    x = np.atleast_1d(shown(np.asarray(x, float))) * (1 if x_better == "max" else -1)
    y = np.atleast_1d(shown(np.asarray(y, float))) * (1 if y_better == "max" else -1)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("pareto_front: x and y must be 1-D arrays of the same length")
    ok = ~(np.isnan(x) | np.isnan(y))
    front = ok.copy()
    for i in np.flatnonzero(ok):
        ge = (x[ok] >= x[i]) & (y[ok] >= y[i])
        gt = (x[ok] > x[i]) | (y[ok] > y[i])
        if (ge & gt).any():
            front[i] = False
    return front


def _corpus(df: pd.DataFrame) -> pd.DataFrame:
    """Each corpus rate of the metric table (AR, CR) per system from S, D, I, N: (N - its counts) / N."""
    g = df.dropna(subset=["N"]).groupby("system")[["S", "D", "I", "N"]].sum().astype(float)
    out = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        for m in metric_names(aggregate="corpus"):
            num = g["N"]
            for c in METRICS[m].counts:
                num = num - g[c]
            out[m] = num / g["N"].where(g["N"] > 0)
    return pd.DataFrame(out)


def point_values(scores: pd.DataFrame, metric: str, *, valid_only: bool = False, style_column: str = "style") -> pd.Series:
    """Per-system value of ``metric`` aggregated as its record says (a mean: dtw, chamfer, style, over the words
    that have a value, Style's in ``style_column``; a corpus rate: ar, cr), over all words (invalid ones scored
    by the centre-dot / blank rule) or, with ``valid_only``, over valid outputs only. Index: system (sorted)."""
    if metric not in METRICS:
        raise ValueError(f"point_values: unknown metric {metric!r}; known: {', '.join(METRICS)}")
    rec = METRICS[metric]
    df = scores[scores["valid"].astype(bool)] if valid_only else scores
    systems = sorted(scores["system"].astype(str).unique())
    if rec.aggregate == "corpus":
        v = _corpus(df)[metric] if len(df) else pd.Series(dtype=float)
    else:
        col = style_column if rec.computed == "style" else rec.scores_column
        v = df.groupby("system")[col].mean() if len(df) else pd.Series(dtype=float)
    v.index = v.index.astype(str)
    return v.reindex(systems).astype(float)


@dataclass
class Variant:
    """One definition of one metric: per-system values, or the reason it cannot be computed here."""

    metric: str
    name: str
    values: pd.Series | None = None
    reason: str = ""
    default: bool = False
    description: str = ""

    @property
    def available(self) -> bool:
        return self.values is not None


REFERENCE_METRICS = metric_names(reference=True)
"""The metrics whose value depends on the reference inks (the metric table's ``reference``: DTW and Chamfer
compare with them, Style's classifier is trained on them); AR and CR compare the OCR reading with the word's text,
the same against any reference. As loaded: :func:`definition_variants` and :func:`reference_flips` read the table
when they run."""

REFERENCE_NAMES = {"reference": "the pseudo-labels", "true": "the writers' true trajectories"}
"""What each reference of a section-03 run is, as prose (on a benchmark set: its pseudo-labels)."""


def other_reference(reference: str) -> str:
    """The reference a run was not read for: "true" for "reference" and the converse."""
    if reference not in REFERENCES:
        raise ValueError(f"reference must be one of {REFERENCES}, got {reference!r}")
    return REFERENCES[1 - REFERENCES.index(reference)]


def other_reference_run(run: EvalRun) -> EvalRun | None:
    """The same section-03 run folder read for the other reference (:func:`other_reference`), or None where
    section 03 scored it against one reference only (a recorded set, whose references are the recorded pen
    paths themselves: no scores-true.csv)."""
    other = other_reference(run.reference)
    if not (scores_csv(run.run_dir, other).is_file() and facts_json(run.run_dir, other).is_file()):
        return None
    return load_eval_run(run.run_dir, other)


def reference_variant_name(reference: str) -> str:
    """The rank tables' name of the variant scored against ``reference``."""
    return f"against {REFERENCE_NAMES[reference]}"


def definition_variants(run: EvalRun, *, spacings: Sequence[float] = VARIANT_SPACINGS,
                        ocr_engines: Sequence[str] = VARIANT_OCR_ENGINES, dataset_dir=None,
                        other: EvalRun | None = None, progress: bool = False) -> list[Variant]:
    """Every metric under the run's default definitions and under each variant:

    * the reference (DTW, Chamfer, Style: :data:`REFERENCE_METRICS`): ``other``, the same run scored against
      the other reference (:func:`other_reference_run`: the writers' true trajectories for a run read against
      its pseudo-labels, and the converse), where section 03 scored both;

    * invalid-output rule: all words with the centre-dot / blank rule (default) vs valid outputs only;
    * resample spacing (DTW, Chamfer): each of ``spacings`` (word heights) re-scored from the cached
      predictions (needs the dataset folder: ``dataset_dir`` or the run's facts);
    * OCR engine (AR, CR): each of ``ocr_engines`` other than the run's; an engine that cannot run here
      (:class:`inkground_lib.components.ocr.OCRUnavailable`) gives a variant with the reason instead of values;
    * casefolding (AR, CR): the stored OCR texts compared with the other casefold setting;
    * Style over the classifier's held-out words (default) vs all words (column style_any).
    """
    from inkground_lib.components.ocr import OCRError, OCRUnavailable, make_engine

    st = run.settings
    spacing0 = st.get("spacing", 0.05)
    engine0 = st.get("ocr_engine", "rapidocr")
    casefold0 = bool(st.get("casefold", True))
    s = run.scores
    out: list[Variant] = []
    alt = [sp for sp in spacings if spacing0 is None or not math.isclose(float(sp), float(spacing0))]
    try:
        geo_alt = rescore_geometries(run, alt, dataset_dir, progress=progress) if alt else {}
    except (FileNotFoundError, ValueError) as e:
        geo_alt = {sp: f"not available here: {e}" for sp in alt}
    out += _geometry_variants(s, spacing0, geo_alt, other)
    engines = {}
    for name in ocr_engines:
        if name == engine0:
            continue
        try:
            eng = make_engine(name)
        except OCRUnavailable as e:
            engines[name] = f"not available here: {e}"
            continue
        try:
            engines[name] = reocr_counts(run, eng, dataset_dir, casefold=casefold0, progress=progress)
        except (FileNotFoundError, ValueError, OCRError) as e:  # OCRError: a server that is down
            engines[name] = f"not available here: {e}"
    out += _ocr_variants(s, engine0, casefold0, engines)
    out += _style_and_word_variants(s, other)
    return out


def _against_other(other: EvalRun | None, m: str) -> list[Variant]:
    """Metric ``m`` of the same predictions scored against the other reference (``other``'s), for a metric
    read against a reference (:data:`REFERENCE_METRICS`) when that run exists; else nothing."""
    if other is not None and METRICS[m].reference:
        return [Variant(m, reference_variant_name(other.reference), point_values(other.scores, m),
                        description=f"the same predictions scored against {REFERENCE_NAMES[other.reference]}")]
    return []


def _geometry_variants(s: pd.DataFrame, spacing0, geo_alt: dict, other: EvalRun | None) -> list[Variant]:
    """The geometry metrics' variants from the scores ``s``: the default (resample spacing ``spacing0`` word
    heights, all words), the other reference, valid outputs only, and each other spacing's re-scored scores in
    ``geo_alt`` (spacing -> scores, or the reason they are not available here)."""
    out = []
    for m in metric_names(computed="geometry"):
        out.append(Variant(m, f"default (spacing {spacing0}, all words)", point_values(s, m), default=True,
                           description="centre-dot rule for invalid outputs"))
        out += _against_other(other, m)
        out.append(Variant(m, "valid outputs only", point_values(s, m, valid_only=True)))
        for sp, g in geo_alt.items():
            if isinstance(g, str):
                out.append(Variant(m, f"spacing {sp}", reason=g))
            else:
                out.append(Variant(m, f"spacing {sp}", point_values(g, m)))
    return out


def _ocr_variants(s: pd.DataFrame, engine0: str, casefold0: bool, engines: dict) -> list[Variant]:
    """The OCR metrics' variants from the scores ``s``: the default (OCR engine ``engine0``, casefolded or not
    as ``casefold0``, all words), valid outputs only, the other casefold setting, and each other engine's
    counts in ``engines`` (name -> counts, or the reason it is not available here)."""
    out = []
    cf = casefold_counts(s, not casefold0)
    for m in metric_names(computed="ocr"):
        out.append(Variant(m, f"default ({engine0}, {'casefolded' if casefold0 else 'case-sensitive'}, all words)",
                           point_values(s, m), default=True, description="blank render for invalid outputs"))
        out.append(Variant(m, "valid outputs only", point_values(s, m, valid_only=True)))
        out.append(Variant(m, "case-sensitive" if casefold0 else "casefolded", point_values(cf, m)))
        for name, c in engines.items():
            if isinstance(c, str):
                out.append(Variant(m, f"OCR {name}", reason=c))
            else:
                out.append(Variant(m, f"OCR {name}", _corpus(c)[m].reindex(sorted(s["system"].astype(str).unique()))))
    return out


def _style_and_word_variants(s: pd.DataFrame, other: EvalRun | None) -> list[Variant]:
    """The Style metric's variants (default: held-out words; the other reference; valid outputs only; all words,
    from the style_any column where the scores have it) and each per-word metric's (default, the other
    reference, valid outputs only)."""
    out = []
    for m in metric_names(computed="style"):
        out.append(Variant(m, "default (held-out words, all outputs)", point_values(s, m), default=True))
        out += _against_other(other, m)
        out.append(Variant(m, "valid outputs only", point_values(s, m, valid_only=True)))
        if "style_any" in s.columns:
            out.append(Variant(m, "all words (incl. classifier training words)",
                               point_values(s, m, style_column="style_any")))
        else:
            out.append(Variant(m, "all words (incl. classifier training words)",
                               reason="not available here: the scores have no style_any column"))
    for m in metric_names(computed="word"):  # a metric of its own kind: its default and valid outputs only
        out.append(Variant(m, "default (all words)", point_values(s, m), default=True))
        out += _against_other(other, m)
        out.append(Variant(m, "valid outputs only", point_values(s, m, valid_only=True)))
    return out


def _ranks(values: pd.Series, metric: str) -> pd.Series:
    """Ranks of ``values`` on ``metric`` as shown (:func:`~inkground_lib.analysis.ties.tied_ranks`)."""
    return tied_ranks(values, METRICS[metric].lower_is_better)


def rank_table(variants: Sequence[Variant], systems: Sequence[str] | None = None, *, with_values: bool = False) -> pd.DataFrame:
    """Ranks of every system under every variant: one row per (metric, variant), one column per system,
    plus Kendall's tau (and its p-value) between the metric's default ranking and the variant's
    (scipy.stats.kendalltau, tau-b, over the systems ranked by both; NaN with fewer than 2). Ranks are of the
    values as shown (:mod:`~inkground_lib.analysis.ties`): values equal at the shown precision are tied in the
    ranks and in tau. A variant that cannot
    be computed here has no row (:func:`not_run_variants` lists it once, with its reason). ``with_values``:
    cells "rank (value)"."""
    from scipy.stats import kendalltau

    systems = list(systems) if systems is not None else sorted({s for v in variants if v.available
                                                                 for s in v.values.index})
    defaults = {v.metric: v for v in variants if v.default}
    rows = []
    for v in variants:
        row = {"metric": metric_labels().get(v.metric, v.metric), "variant": v.name}
        if not v.available:
            continue
        else:
            r = _ranks(v.values.reindex(systems), v.metric)
            for s in systems:
                if pd.isna(r[s]):
                    row[s] = "n/a"
                elif with_values:
                    row[s] = f"{int(r[s])} ({shown(float(v.values[s])):.{SHOWN_DECIMALS}f})"
                else:
                    row[s] = int(r[s])
            d = defaults.get(v.metric)
            tau = p = np.nan
            if d is not None:
                r0 = _ranks(d.values.reindex(systems), v.metric)
                both = r0.notna() & r.notna()
                if both.sum() >= 2:
                    if v is d:
                        tau, p = 1.0, np.nan
                    else:
                        res = kendalltau(r0[both].to_numpy(), r[both].to_numpy())
                        tau, p = float(res.statistic), float(res.pvalue)
            row["Kendall tau vs default"] = tau
            row["p"] = p
        rows.append(row)
    cols = ["metric", "variant", *systems, "Kendall tau vs default", "p"]
    return pd.DataFrame(rows, columns=cols).set_index(["metric", "variant"])


def needs_phrase(reason: str) -> str:
    """What a variant that cannot run needs, from its reason (without the engine's "name: " prefix): "the
    environment variable X is not set" -> "X set to its server's address", "the program 'x' is not on PATH" ->
    "the program x on PATH"; any other reason is kept as it is. Plain text (section 04 glues it as text).

    >>> needs_phrase("deepseek-ocr: the environment variable DEEPSEEK_OCR_BASE_URL is not set")
    "DEEPSEEK_OCR_BASE_URL set to its server's address"
    >>> needs_phrase("tesseract: the program 'tesseract' is not on PATH")
    'the program tesseract on PATH'
    """
    r = re.sub(r"^[\w.-]+: ", "", short_reason(reason).strip())
    m = re.fullmatch(r"the environment variable (\w+) is not set", r)
    if m:
        return f"{m.group(1)} set to its server's address"
    m = re.fullmatch(r"the program '([^']+)' is not on PATH", r)
    if m:
        return f"the program {m.group(1)} on PATH"
    return r


def not_run_variants(variants: dict | Sequence[Variant]) -> dict[str, str]:
    """The variants that cannot run in this build, each once (over metrics and datasets): {variant name: what it
    needs}, the first clause of its reason without the "not available here: " prefix, in first-seen order.
    ``variants``: a list of :class:`Variant` or {dataset: list}."""
    groups = variants.values() if isinstance(variants, dict) else [variants]
    out: dict[str, str] = {}
    for vs in groups:
        for v in vs:
            if not v.available:
                out.setdefault(v.name, short_reason(v.reason.removeprefix("not available here: ")))
    return out


def kendall_table(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per dataset: the smallest Kendall tau over the non-default variants and which variant it is."""
    rows = []
    for ds, t in tables.items():
        tau = t["Kendall tau vs default"].drop(index=[i for i in t.index if i[1].startswith("default")])
        tau = tau.dropna()
        if len(tau):
            i = tau.idxmin()
            rows.append({"dataset": ds, "variants compared": int(len(tau)), "lowest tau": float(tau.min()),
                         "at": f"{i[0]}: {i[1]}", "variants with tau = 1": int((tau >= 1 - 1e-12).sum())})
        else:
            rows.append({"dataset": ds, "variants compared": 0, "lowest tau": np.nan, "at": "",
                         "variants with tau = 1": 0})
    return pd.DataFrame(rows).set_index("dataset")


@dataclass
class RankFlip:
    """Two systems of one dataset whose order on ``metric`` is opposite against the two references.

    ``ahead`` is the system ranked ahead (by point value) against ``reference`` (the run's own, e.g. the
    pseudo-labels), ``behind`` the other; ``values[ref][system]`` = (value, lo, hi) with the page-bootstrap 95%
    interval, and ``apart[ref]`` says whether the two intervals are apart (do not overlap) against ``ref``."""

    dataset: str
    metric: str
    reference: str
    other: str
    ahead: str
    behind: str
    labels: dict
    values: dict
    apart: dict

    @property
    def resolved(self) -> bool:
        """The flip is backed by intervals: against at least one reference the two intervals are apart."""
        return any(self.apart.values())


def _is_reference_itself(row) -> bool:
    return str(row["system"]) == "reference" or (pd.notna(row.get("dtw")) and shown(float(row["dtw"])) == 0.0)


def reference_flips(summary: pd.DataFrame, other_summary: pd.DataFrame, reference: str,
                    metrics: Sequence[str] | None = None) -> list[RankFlip]:
    """Every pair of systems whose order on a metric of ``metrics`` is strictly opposite against the two
    references of one dataset: ``summary`` scored against ``reference``, ``other_summary`` against the other
    one (section-03 summaries: columns system, label, <metric>, <metric>_lo, <metric>_hi, optional dataset);
    ``metrics`` None: those of the metric table whose value depends on the reference.
    The references themselves are left out (the system "reference", and a system at DTW 0 against either
    reference: its inks are that reference, so it ranks first by construction). Returns only the flips whose
    intervals are apart against at least one reference (:attr:`RankFlip.resolved`), in metric order, then by
    system names.

    >>> a = pd.DataFrame({"system": ["box", "font"], "label": ["Box", "Font"], "dtw": [0.29, 0.30],
    ...                   "dtw_lo": [0.28, 0.29], "dtw_hi": [0.291, 0.31]})
    >>> b = pd.DataFrame({"system": ["box", "font"], "label": ["Box", "Font"], "dtw": [0.255, 0.227],
    ...                   "dtw_lo": [0.251, 0.221], "dtw_hi": [0.258, 0.232]})
    >>> f = reference_flips(a, b, "reference", ["dtw"])[0]
    >>> f.ahead, f.behind, f.apart
    ('box', 'font', {'reference': False, 'true': True})
    """
    other = other_reference(reference)
    metrics = metric_names(reference=True) if metrics is None else metrics
    if not len(summary) or not len(other_summary):
        return []
    a = summary.set_index(summary["system"].astype(str), drop=False)
    b = other_summary.set_index(other_summary["system"].astype(str), drop=False)
    systems = sorted(s for s in a.index if s in b.index
                     and not _is_reference_itself(a.loc[s]) and not _is_reference_itself(b.loc[s]))
    dataset = str(a["dataset"].iloc[0]) if "dataset" in a.columns else ""
    out = []
    for m in metrics:
        if m not in a.columns or m not in b.columns:
            continue
        lower = METRICS[m].lower_is_better

        def cell(t, s):
            return tuple(float(t.loc[s, c]) if c in t.columns and pd.notna(t.loc[s, c]) else float("nan")
                         for c in (m, f"{m}_lo", f"{m}_hi"))

        for i, x in enumerate(systems):
            for y in systems[i + 1:]:
                vx, vy = cell(a, x), cell(a, y)
                wx, wy = cell(b, x), cell(b, y)
                if any(math.isnan(v) for v in (vx[0], vy[0], wx[0], wy[0])):
                    continue
                d_ref, d_other = shown(vx[0]) - shown(vy[0]), shown(wx[0]) - shown(wy[0])  # ties stay ties
                if d_ref == 0 or d_other == 0 or (d_ref > 0) == (d_other > 0):
                    continue
                ahead, behind = (x, y) if (d_ref < 0) == lower else (y, x)

                def apart(p, q):
                    return bool(p[2] < q[1] or q[2] < p[1]) if not any(map(math.isnan, p[1:] + q[1:])) else False

                f = RankFlip(dataset, m, reference, other, ahead, behind,
                             {s: str(a.loc[s, "label"]) if "label" in a.columns else s for s in (x, y)},
                             {reference: {x: vx, y: vy}, other: {x: wx, y: wy}},
                             {reference: apart(vx, vy), other: apart(wx, wy)})
                if f.resolved:
                    out.append(f)
    return out


def median_gap(a, b, n_boot: int = N_BOOT, seed: int = 0, ci: float = 0.95) -> tuple[float, float, float]:
    """The difference of medians median(a) - median(b) of two groups of values (NaN left out) with a
    percentile bootstrap interval at level ``ci`` (each group resampled with replacement, ``n_boot``
    replicates, numpy's default generator seeded with ``seed``). NaN where a group is empty.

    >>> d, lo, hi = median_gap([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], n_boot=200)
    >>> d, lo <= 0 <= hi
    (0.0, True)
    """
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    if not len(a) or not len(b):
        return float("nan"), float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    ia = rng.integers(0, len(a), size=(n_boot, len(a)))
    ib = rng.integers(0, len(b), size=(n_boot, len(b)))
    reps = np.median(a[ia], axis=1) - np.median(b[ib], axis=1)
    q = (1 - ci) / 2
    return float(np.median(a) - np.median(b)), float(np.quantile(reps, q)), float(np.quantile(reps, 1 - q))


def metric_correlations(scores: pd.DataFrame, metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """Spearman rank correlations between per-word metrics (``metrics``, default: every metric of the table),
    pooled over the systems of one dataset (pairwise complete words: Style exists only on held-out words, AR / CR
    where OCR ran and N > 0), labelled with the paper's names. DTW and Chamfer are lower-is-better, the others
    higher-is-better: a negative correlation between DTW and AR means the metrics agree."""
    metrics = metric_names() if metrics is None else metrics
    return scores[list(metrics)].astype(float).rename(columns=metric_labels()).corr(method="spearman")


def style_chance_table(summary: pd.DataFrame, reported: pd.DataFrame | None = None) -> pd.DataFrame:
    """Style beside its chance level: per (dataset, system) our Style with its CI, the classifier's chance
    level 1 / n_classes and top-1 accuracy, Style / chance; then the paper's reported Style values beside
    their chance level (1 / 537 pages on inkGround, 1 / 217 writers on IAM-OnDB: reported.csv ids
    style_classes_inkground / style_classes_iamondb)."""
    rows = []
    for _, r in summary.iterrows():
        rows.append({"source": "ours (measured)", "dataset": r["dataset"], "system": r["system"],
                     "Style": r["style"], "Style 95% CI": f"[{r['style_lo']:.3f}, {r['style_hi']:.3f}]",
                     "writer classes": r.get("n_classes", np.nan), "chance": r.get("chance", np.nan),
                     "classifier top-1": r.get("style_top1", np.nan),
                     "Style / chance": r["style"] / r["chance"] if r.get("chance") else np.nan})
    if reported is not None:
        rp = reported.reset_index() if "id" not in reported.columns else reported
        classes = {"inkGround": "style_classes_inkground", "IAM-OnDB": "style_classes_iamondb"}
        pts = paper_points(rp)
        vals = rp.set_index("id")["value"]
        for _, r in pts[pts["style"].notna()].iterrows():
            k = float(vals[classes[r["dataset"]]]) if r["dataset"] in classes and classes[r["dataset"]] in vals else np.nan
            ch = 1.0 / k if k else np.nan
            rows.append({"source": "paper (reported)", "dataset": r["dataset"], "system": r["system"],
                         "Style": r["style"], "Style 95% CI": "", "writer classes": k, "chance": ch,
                         "classifier top-1": np.nan, "Style / chance": r["style"] / ch if ch else np.nan})
    out = pd.DataFrame(rows)
    return out.set_index(["source", "dataset", "system"]) if len(out) else out


def prose_numbers(summary: pd.DataFrame, runs: list, variants: dict, taus: pd.DataFrame, corr: dict,
                  claim_tab: pd.DataFrame, reported: pd.DataFrame, n_boot: int) -> dict:
    """Everything section 04's prose cites, as plain values keyed for glue (prefix added by the caller):
    which systems form the Pareto fronts, whether any VLM was scored, how far the rankings move under the
    definition variants, the Spearman correlations between metrics, and Style's chance levels."""
    def names(mask, g):
        return ", ".join(str(s) for s in g.loc[mask, "system"]) or "none"

    def front(g, x, y):  # the Pareto front of two metrics, each in its record's direction
        return names(pareto_front(g[x], g[y], METRICS[x].better, METRICS[y].better), g)

    front_style, front_dtw = [], []
    for ds, g in summary.groupby("dataset", sort=False):
        front_style.append(f"{ds}: {front(g, 'ar', 'style')}")
        front_dtw.append(f"{ds}: {front(g, 'ar', 'dtw')}")
    api = summary[summary["kind"].astype(str).isin(["api", "replay"])]
    vlm_text = ("No VLM ran here (no API keys or model servers on this machine), so the paper's statements about "
                "VLMs are checked against its own reported numbers only; the systems measured here are the offline "
                "baselines of section 3." if not len(api) else
                f"VLM outputs were scored here: {', '.join(sorted(set(api['system'])))}.")
    unavailable = [f"{name}, not run here (needs {needs_phrase(why)})" for name, why in not_run_variants(variants).items()]
    not_run_text = ("Variants not in the tables: " + "; ".join(unavailable) + "." if unavailable
                    else "Every variant ran in this build.")
    tau_all = taus["lowest tau"].dropna()
    lab = metric_labels()
    spearman = ["{}: {}".format(ds, ", ".join(f"{lab[x]}-{lab[y]} {c.loc[lab[x], lab[y]]:.2f}"
                                              for x, y in (("dtw", "ar"), ("dtw", "style"), ("ar", "style"))))
                for ds, c in corr.items()]
    chance_text = "; ".join(f"{r.dataset}: {int(r.facts['style']['n_classes'])} writers, chance "
                            f"{r.chance:.3f}, classifier top-1 {r.facts['style']['top1']:.3f}" for r in runs)
    min_tau_at = "; ".join(f"{ds}: {row['at']} (tau {row['lowest tau']:.2f})" if row["lowest tau"] < 1 else
                           f"{ds}: no variant changes the ranking" for ds, row in taus.dropna().iterrows())
    return {
        "vlm_text": vlm_text, "n_runs": len(runs), "datasets_text": ", ".join(r.dataset for r in runs),
        "front_style_text": "; ".join(front_style), "front_dtw_text": "; ".join(front_dtw),
        "n_boot": n_boot, "n_variants": int(taus["variants compared"].sum()),
        "min_tau": float(tau_all.min()) if len(tau_all) else float("nan"),
        "min_tau_at": min_tau_at or "none",
        "unavailable_text": "; ".join(unavailable) or "none: every variant ran",
        "not_run_text": not_run_text,
        "spearman_text": "; ".join(spearman), "chance_text": chance_text,
        "n_paper_checks": int(claim_tab["check_ok"].notna().sum()),
        "n_paper_checks_ok": int((claim_tab["check_ok"] == True).sum()),  # noqa: E712
        "paper_chance_inkground": 1.0 / float(reported.loc["style_classes_inkground", "value"]),
        "paper_chance_iamondb": 1.0 / float(reported.loc["style_classes_iamondb", "value"]),
    }


TRADEOFF_CLAIMS = ["kimi_highest_style", "claude_readable_low_style", "gemini_best_fidelity_inkground",
                   "gemini_best_readability_inkground", "gemini_best_iamondb", "inksight_beats_vlms", "open_ar_range"]


@dataclass
class Analysis:
    """Everything section 04 shows: the runs of section 03, their summary with bootstrap intervals, the
    paper's points, the definition variants with their rank tables and Kendall taus, Spearman correlations
    between metrics over words, Style beside chance, and the paper's trade-off claims checked."""

    runs: list
    summary: pd.DataFrame
    reported: pd.DataFrame
    paper: pd.DataFrame
    variants: dict
    rank_tables: dict
    taus: pd.DataFrame
    corr: dict
    chance: pd.DataFrame
    claim_tab: pd.DataFrame
    prose: dict
    reference_summaries: dict = None  # dataset -> the summary against the other reference (both references scored)
    flips: list = None  # RankFlip: orders the choice of reference reverses, intervals apart on one side at least


def analyse(eval_runs, datasets=None, reference: str = "reference", n_boot: int = N_BOOT, seed: int = 0,
            spacings=VARIANT_SPACINGS, ocr_engines=VARIANT_OCR_ENGINES) -> Analysis:
    """Section 04's analysis of section-03 run folders ``eval_runs`` (a folder or a list); ``datasets``
    gives each run's dataset folder (None: as recorded in the run's facts json)."""
    from inkground_lib.analysis.claims import check_claims, load_claims
    from inkground_lib.core.paper import paper_numbers

    if isinstance(eval_runs, (str, Path)):
        eval_runs = [eval_runs]
    if datasets is not None and len(datasets) != len(eval_runs):
        raise ValueError(f"datasets: {len(datasets)} folders for {len(eval_runs)} eval_runs; give one per run (or None)")
    if reference not in REFERENCES:
        raise ValueError(f"reference must be 'reference' or 'true', got {reference!r}")
    runs = load_eval_runs(eval_runs, reference)
    summary = summary_table(runs, n_boot=n_boot, seed=seed)
    reported = paper_numbers()
    others = {r.dataset: other_reference_run(r) for r in runs}
    ref_summaries = {ds: summary_table([o], n_boot=n_boot, seed=seed) for ds, o in others.items() if o is not None}
    flips = [f for ds, o in ref_summaries.items()
             for f in reference_flips(summary[summary["dataset"] == ds], o, reference)]
    variants = {r.dataset: definition_variants(r, spacings=spacings, ocr_engines=ocr_engines,
                                               dataset_dir=None if datasets is None else datasets[i],
                                               other=others[r.dataset])
                for i, r in enumerate(runs)}
    rank_tables = {ds: rank_table(v) for ds, v in variants.items()}
    taus = kendall_table(rank_tables)
    corr = {r.dataset: metric_correlations(r.scores) for r in runs}
    claim_tab = check_claims(load_claims(reported=reported), reported).set_index("claim_id").loc[TRADEOFF_CLAIMS]
    prose = prose_numbers(summary, runs, variants, taus, corr, claim_tab, reported, n_boot)
    prose["reference_datasets_text"] = ", ".join(ref_summaries) or "none"
    return Analysis(runs, summary, reported, paper_points(reported), variants, rank_tables, taus, corr,
                    style_chance_table(summary, reported), claim_tab, prose, ref_summaries, flips)
