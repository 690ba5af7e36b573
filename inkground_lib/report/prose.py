"""Sentences saying what produced a number, computed from the run they describe: which dataset, which derenderer
made the references, which systems ran and which could not, which baselines are on the page. The notebooks glue
them (one call per sentence); hand-written Markdown keeps only what no run can change."""

from __future__ import annotations

import pandas as pd

from inkground_lib.analysis.ties import SHOWN_DECIMALS, shown
from inkground_lib.components.derenderers.factory import DERENDERERS
from inkground_lib.components.ocr.factory import ENGINES
from inkground_lib.core.registry import card_view
from inkground_lib.evaluation.systems.registry import ADAPTERS
from inkground_lib.report.format import join_names
from inkground_lib.report.names import manifest_mode

DERENDERER_TEXT = card_view(DERENDERERS, "text")
"""Derenderer mode (its one displayed name, :mod:`inkground_lib.report.names`) -> that name and what it is, in
words (section 02's provenance and every sentence naming a derenderer): the derenderers' cards, read when asked."""

OCR_TEXT = card_view(ENGINES, "text")
"""OCR engine name -> what it is, in words: the engines' cards."""

AGREEMENT_UNIT = "pairs (a page's photo and its pseudo-labels) rated at least twice"
"""What rater agreement is counted over, in words: the paper's pairs, which here are pages (one photo and its
pseudo-labels), those with at least two ratings (:func:`inkground_lib.pseudo.raters.agreement`). Section 02 and
the front page both say it this way."""

BASELINE_TEXT = card_view(ADAPTERS, "text", lambda a: a.kind == "local")
"""Baseline system name -> what it shows, in words (sections 03 and 04 name the baselines that ran): the cards of
the local adapters."""


def _registry(registry=None) -> dict:
    if registry is not None:
        return registry
    from inkground_lib.evaluation.systems.registry import load_registry

    try:
        return load_registry()
    except Exception:  # a broken user registry must not break a sentence: names stand for themselves
        return {}


def system_label(name: str, registry: dict | None = None) -> str:
    """A system's label from the registry (its name where the registry has none)."""
    return str((_registry(registry).get(name) or {}).get("label") or name)


def labels_maker(ds) -> str:
    """The derenderer mode that made a benchmark set's pseudo-labels, by its one displayed name
    (:func:`inkground_lib.report.names.manifest_mode` of the manifest's ``meta``, written by section 02:
    "tracer-recognize" for the tracer given the OCR reading); "unknown" where the manifest does not say."""
    return manifest_mode(getattr(ds, "meta", None) or {})


def derenderer_name_text(name: str) -> str:
    """A derenderer in a few words: "the tracer derenderer", "the skeleton derenderer", "InkSight Small-p"."""
    return "InkSight Small-p" if str(name).startswith("inksight") else f"the {name} derenderer"


def ran_and_not(res) -> tuple[list[str], list[str], bool]:
    """(the systems that ran, except the reference ink; the systems that could not run; whether the reference
    ink ran) of a section-03 result (``runs``, ``unavailable``), in the order of the run."""
    ran = [n for n in res.runs if n != "reference"]
    return ran, list(res.unavailable), "reference" in res.runs


def systems_stand_in_text(bench, ocr_engine: str, registry: dict | None = None) -> str:
    """Section 03's overview sentence on what ran and what stands in, from the run: how many systems ran (named,
    besides the reference ink when it ran), how many could not (named), which OCR engine read the renders, and
    that the rows measured here stand beside the paper's reported rows. Plain text (it is glued).

    >>> from types import SimpleNamespace as NS
    >>> t = systems_stand_in_text(NS(runs={"reference": 0, "skeleton": 0}, unavailable={"kimi-k3": "no key"}),
    ...                           "rapidocr", registry={})
    >>> t.split(";")[0]
    '1 system ran here besides the reference ink (skeleton)'
    """
    reg = _registry(registry)
    ran, not_run, ref = ran_and_not(bench)
    n = len(ran)
    s = (f"{n} system{'s' if n != 1 else ''} ran here{' besides the reference ink' if ref else ''} "
         f"({join_names(system_label(k, reg) for k in ran)})")
    m = len(not_run)
    s += (f"; {m} could not ({join_names(not_run)}: each needs what Table 3.2 names)" if m else
          "; every system named in `systems` ran")
    ocr = OCR_TEXT.get(ocr_engine, f"the OCR engine {ocr_engine!r}")
    s += f". The renders are read by {ocr}."
    if n:
        s += " The rows measured here stand beside the paper's reported rows, never in their place."
    return s


def maker_row_text(bench, bench_true, maker: str, registry: dict | None = None) -> str:
    """Section 03's sentence on the row of the system that runs the derenderer that made the pseudo-labels
    (``maker``: its mode, from the benchmark's manifest, :func:`labels_maker`; the system: the ``system`` of its
    row of :data:`~inkground_lib.components.derenderers.factory.DERENDERERS`). Nothing is claimed by
    construction: the sentence counts, from the run's per-word scores, on how many words that system's ink equals the labels (DTW 0 as shown) and
    how far it lies on the others, says that its Table 1 row is scored against labels its own network made (so
    it is not a measurement of tracing), and gives the same predictions' DTW against the true trajectories.

    >>> from types import SimpleNamespace as NS
    >>> sc = pd.DataFrame({"system": ["tracer"] * 4, "dtw": [0.0, 0.0, 0.0, 0.4]})
    >>> s = pd.DataFrame({"system": ["tracer"], "dtw": [0.1]})
    >>> t = maker_row_text(NS(summary=s, scores=sc), NS(summary=s.assign(dtw=[0.111])), "tracer-recognize", {})
    >>> print(t)  # doctest: +NORMALIZE_WHITESPACE
    The pseudo-labels were made by tracer-recognize; the tracer row of Table 1 runs the same network given the
    word's true text, so it is scored against labels its own network made, which measures agreement with itself,
    not tracing: its ink equals the labels (DTW 0.000 as shown) on 3 of 4 words and differs on 1 (DTW up to
    0.400), which gives the row's mean DTW of 0.100. Against the writers' true trajectories the same predictions
    score 0.111 (Table 2a).
    >>> maker_row_text(NS(summary=s, scores=sc), None, "skeleton", registry={})[:95]
    'The pseudo-labels were made by skeleton; no system of this run runs that derenderer, so no row '
    """
    def value(res, col="dtw"):
        if res is None or not len(res.summary):
            return None
        row = res.summary[res.summary["system"] == system]
        return float(row[col].iloc[0]) if len(row) and pd.notna(row[col].iloc[0]) else None

    system = DERENDERERS[maker].system if maker in DERENDERERS else ""
    own = value(bench) if system else None
    scores = getattr(bench, "scores", None)
    d = (scores.loc[scores["system"] == system, "dtw"].dropna()
         if system and scores is not None and len(scores) else pd.Series(dtype=float))
    if own is None or not len(d):
        return (f"The pseudo-labels were made by {maker}; no system of this run runs that derenderer, so no row "
                f"of Table 1 is scored against labels it made.")
    n, same = len(d), int((shown(d) == 0).sum())
    if system == maker:  # the system is the derenderer in the mode that made the labels
        how = "runs the same derenderer in the same mode, so it is scored against labels it made itself"
    else:
        how = (f"runs the same network {DERENDERERS[system].card.gloss.split('; ', 1)[-1]}, "
               f"so it is scored against labels its own network made")
    dd = SHOWN_DECIMALS
    s = f"The pseudo-labels were made by {maker}; the {system} row of Table 1 {how}, which measures agreement with " \
        f"itself, not tracing: "
    if same == n:
        s += (f"its ink equals the labels (DTW {0:.{dd}f} as shown) on all {n:,} words, so the row's mean DTW is "
              f"{shown(own):.{dd}f}.")
    else:
        s += (f"its ink equals the labels (DTW {0:.{dd}f} as shown) on {same:,} of {n:,} words and differs on "
              f"{n - same:,} (DTW up to {float(d.max()):.{dd}f}), which gives the row's mean DTW of "
              f"{shown(own):.{dd}f}.")
    true = value(bench_true)
    if true is not None:
        s += f" Against the writers' true trajectories the same predictions score {true:.{dd}f} (Table 2a)."
    return s


def reference_true_text(bench_true) -> str:
    """Section 03's sentence on Table 2a's *reference* row: the pseudo-labels scored against the writers' true
    trajectories, with its mean DTW, where the reference ink ran; else that no row of Table 2a measures it (and
    where it is measured). Plain text (it is glued).

    >>> from types import SimpleNamespace as NS
    >>> reference_true_text(NS(summary=pd.DataFrame({"system": ["reference"], "dtw": [0.1234]})))[-30:]
    'om the truth (mean DTW 0.123).'
    >>> reference_true_text(None)[:40]
    'The reference ink was not among the syst'
    """
    s = getattr(bench_true, "summary", None)
    row = s[s["system"] == "reference"] if s is not None and len(s) else None
    if row is not None and len(row) and pd.notna(row["dtw"].iloc[0]):
        return ("The reference system on the benchmark is the pseudo-label itself, so its row in Table 2a measures "
                f"how far the pseudo-labels are from the truth (mean DTW {float(row['dtw'].iloc[0]):.{SHOWN_DECIMALS}f}).")
    return ("The reference ink was not among the systems of this run, so no row of Table 2a measures how far the "
            "pseudo-labels are from the truth (section 2 measures it over every candidate word).")


def baselines_ar_text(bench) -> str:
    """Section 03's sentence on the font and box baselines' readability (AR, corpus rate), for those that ran
    (:data:`BASELINE_TEXT` says what each shows); says so when neither ran."""
    s = bench.summary if len(bench.summary) else pd.DataFrame({"system": []})
    parts = []
    for name in ("font", "box"):
        row = s[s["system"] == name]
        if len(row) and "ar" in row and pd.notna(row["ar"].iloc[0]):
            parts.append(f"{BASELINE_TEXT[name]}: AR {float(row['ar'].iloc[0]):.{SHOWN_DECIMALS}f}")
    if not parts:
        return "Neither the font nor the box baseline ran in this run."
    return "Of the baselines, " + "; ".join(parts) + "."


def baselines_text(names) -> str:
    """Section 04's sentence on the baselines among ``names`` (the systems scored), from :data:`BASELINE_TEXT`;
    says so when none is.

    >>> baselines_text(["skeleton", "box"])
    "Our baselines are not the paper's systems: the box baseline knows where the word is but not what it says."
    """
    parts = [BASELINE_TEXT[n] for n in BASELINE_TEXT if n in set(map(str, names))]
    if not parts:
        return "No baseline was scored in these runs."
    return "Our baselines are not the paper's systems: " + "; ".join(parts) + "."


def both_sides_names(maker: str) -> dict:
    """The two derenderers of section 03's "both sides" sentence, in a few words each (the notebook's Markdown
    holds the sentence and glues each): ``a`` made the benchmark's pseudo-labels (``maker``, from the benchmark's
    manifest), ``b`` is the skeleton derenderer with other binarisation, retracing and stroke-ordering rules
    (:data:`inkground_lib.evaluation.both_sides.SECOND`), "a second" one where A is the skeleton too.

    >>> both_sides_names("tracer-recognize")
    {'a': 'the tracer-recognize derenderer', 'b': 'the skeleton derenderer'}
    """
    return {"a": derenderer_name_text(maker),
            "b": "a second skeleton derenderer" if maker == "skeleton" else "the skeleton derenderer"}


def derenderers_compared_text(names, registry: dict | None = None) -> str:
    """Section 02's sentence naming the derenderers its comparison ran (``compare_derenderers``), each with what
    it is (:data:`DERENDERER_TEXT`); the first is the baseline of the ratios."""
    names = list(names)
    if not names:
        return "This run compares no derenderer."
    each = [DERENDERER_TEXT.get(n, derenderer_name_text(n)) for n in names]
    return (f"This run compares {len(names)} derenderer{'s' if len(names) != 1 else ''} that run offline: "
            f"{join_names(each)}; the first is the baseline of the ratios.")


def left_out_text(res, registry: dict | None = None) -> str:
    """Section 03's sentence on the systems its galleries leave out: those whose inks are the references themselves
    (DTW 0, as shown, on every word: the reference ink, and the derenderer that made the pseudo-labels where it
    ran), named from the run's scores."""
    from inkground_lib.report.evaluation import identical_to_reference

    out = [system_label(n, registry) for n in res.runs if identical_to_reference(res.scores, n)]
    if not out:
        return "No system's inks are the references themselves, so every system that ran has its row."
    return (f"Left out, because their inks are the references themselves (DTW 0 on every word, so their rows would "
            f"repeat the reference): {join_names(out)}.")


def style_classifier_text(style: dict | None, run_dir=None, reference: str = "reference") -> str:
    """What the writer classifier of a run is, as its facts record it (``style``: a section-03 run's style facts;
    ``run_dir``/``reference``: the classifier's own record, ``style-<reference>/style_model.json``, where the
    facts lack the recipe): where its weights start (the writer-style backbone, or random weights), what was
    fitted on this benchmark, its held-out top-1 with its page-bootstrap interval, and its numeric precision.

    >>> f = {"start": "backbone", "fit": "head", "head_c": 0.3, "top1": 0.41, "top1_ci": [0.37, 0.45],
    ...      "chance": 0.01, "precision": "fp32", "backbone": {"unipen_writers": 320, "synthetic_writers": 400}}
    >>> print(style_classifier_text(f))  # doctest: +NORMALIZE_WHITESPACE
    The writer classifier is inkground's writer-style backbone (trained once on 320 UNIPEN and 400 synthetic
    writers, none of them a writer this book evaluates), frozen, with a logistic-regression head (C = 0.3) fitted
    on the renders of the training words' reference inks; its top-1 accuracy on the held-out words is 0.410
    [0.370, 0.450] (chance 0.010). It runs in fp32.
    >>> style_classifier_text({"start": "random", "fit": "all", "top1": 0.16, "chance": 0.01})[:80]
    'The writer classifier is a ResNet-18 trained from random weights on the renders '
    >>> style_classifier_text({})
    'This run does not record how its writer classifier was made.'
    """
    import json

    f = dict(style or {})
    if run_dir is not None and not f.get("start"):
        from inkground_lib.components.style.storage import META_FILE
        from inkground_lib.core.run_files import style_dir

        try:
            meta = json.loads((style_dir(run_dir, reference) / META_FILE).read_text("utf-8"))
        except (OSError, ValueError):
            meta = {}
        params = meta.get("params") or {}
        f = {**{k: params[k] for k in ("start", "fit", "head_c", "precision") if k in params}, **f}
    if not f.get("start"):
        return "This run does not record how its writer classifier was made."
    refs = "true inks" if reference == "true" else "reference inks"
    if f["start"] == "random":
        what = f"a ResNet-18 trained from random weights on the renders of the training words' {refs}"
    else:
        bb = f.get("backbone") or {}
        origin = (f"trained once on {bb['unipen_writers']} UNIPEN and {bb['synthetic_writers']} synthetic writers, "
                  f"none of them a writer this book evaluates" if bb.get("unipen_writers")
                  else "trained once on writers outside every evaluation set")
        fitted = {"head": f"frozen, with a logistic-regression head (C = {f.get('head_c')}) fitted",
                  "last_stage": "with its last stage and a new last layer fine-tuned",
                  "all": "fine-tuned whole"}[f.get("fit", "head")]
        what = f"inkground's writer-style backbone ({origin}), {fitted} on the renders of the training words' {refs}"
    acc = ""
    top1 = f.get("top1")
    if top1 is not None and top1 == top1:
        ci = f.get("top1_ci")
        band = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
        acc = (f"; its top-1 accuracy on the held-out words is {top1:.3f}{band} "
               f"(chance {f.get('chance', float('nan')):.3f})")
    prec = f" It runs in {f['precision']}." if f.get("precision") else ""
    return f"The writer classifier is {what}{acc}.{prec}"
