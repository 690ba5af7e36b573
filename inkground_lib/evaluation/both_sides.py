"""Is a derenderer flattered by references it made itself? The paper's "InkSight on both sides" limitation,
measured with two derenderers that really differ.

Derenderer A is the one that made the benchmark's pseudo-labels (the skeleton derenderer with its default
settings: its output on a word is the word's reference ink). Derenderer B is a second skeleton derenderer with
other binarisation, retracing and stroke-ordering rules (:data:`SECOND`), run on the same crops. Each is scored
against its own pseudo-labels (zero by construction), against the other's, and against the writers' true
trajectories, with DTW and Chamfer in reference word heights and page-bootstrap intervals. The two differ
enough for the test to mean something when their inks are at least half as far apart (DTW) as each is from the
truth: :attr:`BothSides.differ_enough` reports that condition, and the distances behind it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Optional

import pandas as pd

from inkground_lib.components.derenderers.skeleton import SkeletonParams
from inkground_lib.core.defaults import CROP_GROW, N_BOOT
from inkground_lib.core.metric_table import metric_names
from inkground_lib.core.run_files import both_sides_json

SECOND = SkeletonParams(threshold="otsu", max_retrace=0.0, marks_at="word_end", smooth_sigma=0.8)
"""Derenderer B: global (Otsu) binarisation, never retraces (lifts the pen instead), i-dots and t-crosses after
the whole word, lighter smoothing."""

@dataclass
class BothSides:
    """``table``: one row per (derenderer, reference) with DTW / Chamfer means and 95% page-bootstrap bounds
    and the number of words; ``d_ab`` mean DTW of B against A's labels, ``d_a_truth`` / ``d_b_truth`` each
    against the truth; ``differ_enough``: d_ab >= half of each distance to the truth; ``n_words`` scored
    (words where both derenderers drew ink), ``n_empty`` words left out."""

    table: pd.DataFrame
    d_ab: float
    d_a_truth: float
    d_b_truth: float
    differ_enough: bool
    n_words: int
    n_empty: int


def _derender_page(job) -> dict:
    """Pool job: (page, SkeletonParams as dict) -> {word id: ink lists} of derenderer B."""
    from inkground_lib.components.derenderers.base import DerenderError, crop_word
    from inkground_lib.components.derenderers.skeleton import SkeletonDerenderer
    from inkground_lib.core.ink import ink_to_lists

    page, params = job
    der = SkeletonDerenderer(SkeletonParams(**params))
    photo = page.load_image()
    out = {}
    for w in page.words:
        try:
            crop, cbox = crop_word(photo, w.box, grow=CROP_GROW)
            out[w.id] = ink_to_lists(der.derender(crop, cbox, w.text))
        except DerenderError:
            out[w.id] = []
    return out


def both_sides(dataset_dir, run_dir, *, second: SkeletonParams = SECOND, n_boot: int = N_BOOT, seed: int = 0,
               workers: Optional[int] = None) -> BothSides:
    """The measurement of the module doc on the benchmark set in ``dataset_dir`` (its reference inks are
    derenderer A's labels; its words need true inks). Derenderer B's inks are kept in
    ``run_dir/both_sides.json`` with the dataset hash and B's settings, so a rerun derenders nothing; a run
    without them reads them from the earlier runs of its folder where the key is the same
    (:func:`~inkground_lib.core.earlier_runs.earlier_files`)."""

    from inkground_lib.core.folders import folder_lock

    with folder_lock(run_dir, "both-sides"):
        return _both_sides(dataset_dir, run_dir, second, n_boot, seed, workers)


def _both_sides(dataset_dir, run_dir, second: SkeletonParams, n_boot: int, seed: int,
                workers: Optional[int]) -> BothSides:
    from inkground_lib.components.metrics.trajectory import chamfer, dtw
    from inkground_lib.core.dataset import dataset_hash, load_dataset
    from inkground_lib.core.earlier_runs import earlier_files
    from inkground_lib.core.files import atomic_write_json
    from inkground_lib.core.ink import ink_from_lists
    from inkground_lib.core.parallel import ordered_map
    from inkground_lib.core.scores_table import scores_frame
    from inkground_lib.evaluation.scores import summarize

    from inkground_lib.evaluation.items import target_dataset

    ds = target_dataset(load_dataset(dataset_dir))  # the words section 03 scores (one target, one question)
    path = both_sides_json(run_dir)
    key = {"dataset": dataset_hash(dataset_dir), "second": asdict(second), "grow": CROP_GROW}
    b_inks = None
    for i, saved_at in enumerate([path] + earlier_files(path)):  # this run's, else an earlier run's same measurement
        try:
            saved = json.loads(saved_at.read_text("utf-8"))
            b_inks = saved["inks"] if saved.get("key") == key else None
        except (OSError, ValueError, KeyError, TypeError):
            b_inks = None
        if b_inks is not None:
            if i:  # taken from an earlier run (the book's, a rerun's): kept in this one too
                atomic_write_json(path, {"key": key, "inks": b_inks}, indent=None)
            break
    if b_inks is None:
        jobs = [(p, asdict(second)) for p in ds.pages]
        b_inks = {}
        for res in ordered_map(_derender_page, jobs, workers=workers):
            b_inks.update(res)
        atomic_write_json(path, {"key": key, "inks": b_inks}, indent=None)
    rows, n_empty = [], 0
    for p in ds.pages:
        for w in p.words:
            if w.true_ink is None:
                raise ValueError(f"{dataset_dir}: word {w.id} has no true ink; the measurement needs the truth")
            a, b = w.ink, ink_from_lists(b_inks.get(w.id, []), f"{path.name}: {w.id}")
            if not a.n_points or not b.n_points:
                n_empty += 1
                continue
            refs = {"A's labels": a, "B's labels": b, "true trajectories": w.true_ink}
            for dname, pred in (("A (made the labels)", a), ("B (second derenderer)", b)):
                for rname, ref in refs.items():
                    rows.append({"system": f"{dname} | {rname}", "dataset": ds.name, "page_id": p.id,
                                 "word_id": w.id, "valid": True, "dtw": dtw(pred, ref), "chamfer": chamfer(pred, ref)})
    frame = scores_frame(rows)
    summ = summarize(frame, n_boot=n_boot, seed=seed)
    parts = summ["system"].str.split(" | ", regex=False, expand=True)
    table = pd.DataFrame({"derenderer": parts[0], "scored against": parts[1], "n_words": summ["n_words"]})
    for m in metric_names(computed="geometry"):
        for suf in ("", "_lo", "_hi"):
            table[m + suf] = summ[m + suf]
    order = {"A's labels": 0, "B's labels": 1, "true trajectories": 2}
    table = table.sort_values(["derenderer", "scored against"], key=lambda s: s.map(order).fillna(s)
                              if s.name == "scored against" else s).reset_index(drop=True)

    def mean(d, r):
        return float(table[(table["derenderer"] == d) & (table["scored against"] == r)]["dtw"].iloc[0])

    d_ab = mean("B (second derenderer)", "A's labels")
    d_at, d_bt = mean("A (made the labels)", "true trajectories"), mean("B (second derenderer)", "true trajectories")
    return BothSides(table, d_ab, d_at, d_bt, bool(d_ab >= 0.5 * d_at and d_ab >= 0.5 * d_bt),
                     int(frame["word_id"].nunique()) if len(frame) else 0, n_empty)


def glue_values(res: BothSides) -> dict:
    """The numbers the section's prose cites (plain floats / ints / text), each glued on its own; the two clauses
    are chosen by the numbers (``flattered``: does each derenderer score better against the other's labels,
    ``a_other`` and ``b_other``, than against the truth? ``verdict``: do the two differ enough for the test?)."""
    t = res.table.set_index(["derenderer", "scored against"])["dtw"]
    a_other, b_other = t[("A (made the labels)", "B's labels")], t[("B (second derenderer)", "A's labels")]
    both = a_other < res.d_a_truth and b_other < res.d_b_truth
    flattered = ("each looks closer to the other's labels than to the truth, so a benchmark whose references come "
                 "from a derenderer favours derenderers that share its biases") if both else (
                 "they do not both look closer to the other's labels than to the truth, so no flattering beyond the "
                 "zero of self-scoring is measured here")
    return {"flattered": flattered, "a_other": float(a_other), "b_other": float(b_other), "d_ab": res.d_ab,
            "d_a_truth": res.d_a_truth, "d_b_truth": res.d_b_truth, "n_words": res.n_words, "n_empty": res.n_empty,
            "verdict": ("they differ enough for the test to mean something (at least half as far apart as each "
                        "is from the truth)") if res.differ_enough else
                       ("they do NOT differ enough for the test to mean much (less than half as far apart as "
                        "each is from the truth)")}
