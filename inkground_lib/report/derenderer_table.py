"""Section 02's table and sentence on the derenderers: each one's distance to the writers' true pen paths
(:func:`inkground_lib.pseudo.derenderer_comparison.derenderer_comparison`), with page-bootstrap intervals."""

from __future__ import annotations

import pandas as pd

from inkground_lib.report.format import fixed, join_names, value_with_interval
from inkground_lib.report.names import labelled, mode_name


def derenderer_label(spec: str) -> str:
    """How the table, the figures and the sentences name a derenderer spec: its mode's one displayed name with
    its gloss (:func:`inkground_lib.report.names.labelled`), e.g. "tracer-recognize (learned here; given the OCR
    reading of the word's crop)"."""
    return labelled(mode_name(spec))


_COLUMNS = (("dtw_median", "median DTW"), ("chamfer_median", "median Chamfer"),
            ("order_differs", "stroke order differs"), ("direction_differs", "direction differs"))


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
                mine, theirs = _point_text(r, key), _point_text(b, key)
                if mine == theirs:  # the same as printed: a tie, whatever the interval says
                    verdict = "the same as shown" + (": the paired interval lies below 1" if hi < 1 else
                                                     ": the paired interval lies above 1" if lo > 1 else "")
                else:
                    verdict = ("lower, the interval below 1" if hi < 1 else "higher, the interval above 1" if lo > 1
                               else "not distinguishable: the interval holds 1")
                parts.append(f"{what} is {mine} against the {mode_name(baseline)}'s {theirs}: "
                             f"{value_with_interval(r, key + '_ratio', 2)} times the {mode_name(baseline)}'s ({verdict})")
            out.append(f"On the {set_name} ({int(r['words']):,} words), the {mode_name(r['derenderer'])}'s "
                       + "; its ".join(parts) + ".")
    return out


def _point_text(row, key: str) -> str:
    """``row[key]`` as Table 2.3 prints it (the point value of :func:`value_with_interval`)."""
    return value_with_interval(row, key).split(" [", 1)[0]


def shown_value(row, key: str) -> float:
    """``row[key]`` as Table 2.3 prints it (the point value of :func:`value_with_interval`), as a number: every
    comparison the section states is made on these, so values that print the same are a tie."""
    text = _point_text(row, key)
    try:
        return float(text)
    except ValueError:
        return float("nan")


def lowest_by_set(cmp: pd.DataFrame, key: str = "dtw_median") -> dict[str, tuple[list[str], float]]:
    """Per set: (the derenderers tied for the lowest ``key`` as Table 2.3 shows it, that shown value). A set
    whose every value is missing is left out.

    >>> t = pd.DataFrame({"set": ["s", "s", "s"], "derenderer": ["skeleton", "tracer-recognize", "tracer"],
    ...                   "dtw_median": [0.121, 0.0938, 0.0941]})
    >>> lowest_by_set(t)
    {'s': (['tracer-recognize', 'tracer'], 0.094)}
    """
    out = {}
    for set_name, g in cmp.groupby("set", sort=False):
        vals = [(r["derenderer"], shown_value(r, key)) for _, r in g.iterrows()]
        vals = [(d, v) for d, v in vals if v == v]
        if vals:
            low = min(v for _, v in vals)
            out[set_name] = ([d for d, v in vals if v == low], low)
    return out


def closest_derenderer(cmp: pd.DataFrame) -> str | None:
    """The derenderer alone at the lowest median DTW (as shown) on every set, if there is one (else None: a
    tie, or another derenderer lowest on some set)."""
    best = lowest_by_set(cmp)
    names = {tuple(d) for d, _ in best.values()}
    if len(names) == 1:
        (only,) = names
        return only[0] if len(only) == 1 else None
    return None


def choice_text(cmp: pd.DataFrame, used: str) -> str:
    """Why this run's pseudo-labels come from ``used`` (the run's derenderer spec), from Table 2.3's median DTW
    to the writers' true pen paths as it shows them: per set, which derenderer is lowest, or which tie (values
    that print the same are a tie, never "closer"), and whether any derenderer compared is closer than the one
    used on every set, on some, or on none."""
    name = derenderer_label(used)
    if cmp.empty:
        return f"This run's pseudo-labels come from the {name}; no set with true pen paths was compared"
    if used not in set(cmp["derenderer"]):
        return f"This run's pseudo-labels come from the {name}, which was not among the derenderers compared"
    best = lowest_by_set(cmp)
    per_set, closer_on = [], []
    for set_name, (lead, low) in best.items():
        g = cmp[cmp["set"] == set_name]
        own = [shown_value(r, "dtw_median") for _, r in g[g["derenderer"] == used].iterrows()]
        if len(lead) == 1:
            per_set.append(f"on the {set_name}, the {mode_name(lead[0])} alone ({low:.3f})")
        else:
            per_set.append(f"on the {set_name}, a tie at {low:.3f} between the "
                           f"{join_names(mode_name(d) for d in lead)}")
        if used not in lead and own:
            closer_on.append(f"the {set_name} ({join_names(mode_name(d) for d in lead)} {low:.3f} against "
                             f"{own[0]:.3f})")
    s = (f"This run's pseudo-labels come from the {name}. The lowest median DTW to the writers' true pen paths in "
         f"Table 2.3 is " + "; ".join(per_set))
    if not closer_on:
        return s + f": no derenderer compared here is closer to the truth than the {mode_name(used)} on any set"
    if len(closer_on) == len(best):
        return s + f": another derenderer is closer than the {mode_name(used)} on every set compared: " + \
            "; ".join(closer_on)
    return s + f": another derenderer is closer than the {mode_name(used)} on " + "; ".join(closer_on)
