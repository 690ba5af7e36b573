"""Section 02's table and sentence on the derenderers: each one's distance to the writers' true pen paths
(:func:`inkground_lib.pseudo.derenderer_comparison.derenderer_comparison`), with page-bootstrap intervals."""

from __future__ import annotations

import pandas as pd

from inkground_lib.report.format import fixed, value_with_interval

DERENDERER_LABELS = {"skeleton": "skeleton (heuristic)", "tracer": "tracer (learned here; given the true text)",
                     "tracer-recognize": "tracer (learned here; given the OCR reading)",
                     "tracer-no-text": "tracer (learned here; given no text)"}
"""How the table names a derenderer spec (others are shown as given)."""

_COLUMNS = (("dtw_median", "median DTW"), ("chamfer_median", "median Chamfer"),
            ("order_differs", "stroke order differs"), ("direction_differs", "direction differs"))


def derenderer_label(spec: str) -> str:
    return DERENDERER_LABELS.get(spec, spec)


def derenderer_table(cmp: pd.DataFrame) -> pd.DataFrame:
    """One row per (set, derenderer): words, pages, the median DTW and Chamfer (word heights) and the shares of
    words whose stroke order or direction differs from the writer's, each "value [95% interval]", and the
    derendering time per word (seconds, as recorded in its cache on this machine)."""
    rows = []
    for _, r in cmp.iterrows():
        row = {"set": r["set"], "derenderer": derenderer_label(r["derenderer"]), "words": int(r["words"]),
               "pages": int(r["pages"])}
        for key, label in _COLUMNS:
            row[label] = value_with_interval(r, key)
        row["s / word"] = fixed(float(r["seconds_per_word"]), 3)
        rows.append(row)
    return pd.DataFrame(rows).set_index(["set", "derenderer"])


def comparison_sentences(cmp: pd.DataFrame, baseline: str = "skeleton") -> list[str]:
    """Per set, one sentence comparing every other derenderer with ``baseline`` (the first derenderer of the
    comparison) on the median DTW and the order share: both values and their ratio with its paired 95%
    interval, and whether that interval excludes 1 (computed, never typed)."""
    out = []
    for set_name, g in cmp.groupby("set", sort=False):
        base = g[g["derenderer"] == baseline]
        if base.empty:
            continue
        b = base.iloc[0]
        for _, r in g[g["derenderer"] != baseline].iterrows():
            parts = []
            for key, what in (("dtw_median", "median DTW to the writers' true pen paths"),
                              ("order_differs", "share of words traced in another stroke order than the "
                                                "writer's")):
                lo, hi = r.get(f"{key}_ratio_lo"), r.get(f"{key}_ratio_hi")
                verdict = ("lower, the interval below 1" if hi < 1 else "higher, the interval above 1" if lo > 1
                           else "not distinguishable: the interval holds 1")
                parts.append(f"{what} is {fixed(r[key], 3)} against the {baseline}'s {fixed(b[key], 3)}: "
                             f"{value_with_interval(r, key + '_ratio', 2)} times the {baseline}'s ({verdict})")
            out.append(f"On the {set_name} ({int(r['words']):,} words), the {r['derenderer']}'s "
                       + "; its ".join(parts) + ".")
    return out


def closest_derenderer(cmp: pd.DataFrame) -> str | None:
    """The derenderer with the lowest median DTW on every set, if one is lowest on all of them (else None)."""
    best = {s: g.loc[g["dtw_median"].idxmin(), "derenderer"] for s, g in cmp.groupby("set", sort=False)}
    names = set(best.values())
    return names.pop() if len(names) == 1 else None


def choice_text(cmp: pd.DataFrame, used: str) -> str:
    """Why this run's pseudo-labels come from ``used`` (the run's derenderer), from the comparison: whether it
    is the closest to the truth (lowest median DTW) on every set compared here, or which one is."""
    best = closest_derenderer(cmp)
    name = derenderer_label(used)
    sets = ", ".join(dict.fromkeys(cmp["set"]))
    if cmp.empty:
        return f"This run's pseudo-labels come from the {name}; no set with true pen paths was compared"
    if used not in set(cmp["derenderer"]):
        return f"This run's pseudo-labels come from the {name}, which was not among the derenderers compared"
    if best == used:
        return (f"This run's pseudo-labels come from the {name}, the derenderer closest to the writers' true pen "
                f"paths (lowest median DTW) on every set compared here ({sets})")
    if best is None:
        return (f"This run's pseudo-labels come from the {name}; no derenderer is the closest to the truth on "
                f"every set compared here ({sets})")
    return (f"This run's pseudo-labels come from the {name}, although the {derenderer_label(best)} is closer to "
            f"the writers' true pen paths (lower median DTW) on every set compared here ({sets})")
