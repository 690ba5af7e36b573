"""What the writer-style backbone is worth on writers it never saw (the card's numbers,
``inkground style-backbone eval``).

* **Validation writers** (UNIPEN and synthetic writers split off the training pool, never trained on): a head fitted
  on 75% of each writer's words (:func:`~inkground_lib.components.style.items.split_by_writer`, seed 0) and
  scored on the rest, for each regularisation in ``HEAD_CS``; the best is the default ``head_c``.
* **Held-out writers** (the 46 writers of ``data/unipen_eval_writers.txt`` kept for checks, the tracer's held-out
  set): the same 75/25 split, the head with the chosen ``head_c``, against the earlier recipe (a ResNet-18 trained
  from random weights on the same 75%, :class:`~inkground_lib.components.style.params.StyleParams` with
  ``start="random"``): top-1, mean true-writer probability, 95% writer-bootstrap intervals (writers are the
  clusters, 1000 replicates, seed 0) and the paired differences. Two word sets of their CURSIVE words
  (:func:`heldout_sets`): one recorded page a writer, as the book composes pages (20-50 words: a benchmark's
  regime), and every cursive word (a few hundred a writer).
"""

from __future__ import annotations

import os
from dataclasses import asdict, replace

import numpy as np

from inkground_lib.components.style.backbone import load_backbone
from inkground_lib.components.style.head import fit_head
from inkground_lib.components.style.inputs import inks_darkness
from inkground_lib.components.style.items import split_by_writer
from inkground_lib.components.style.metric import true_writer_probability
from inkground_lib.components.style.params import StyleParams
from inkground_lib.components.style.scoring import writer_interval

HEAD_CS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
"""The head regularisations compared on the validation writers."""
N_BOOT = 1000


def head_scores(features, labels, c: float, seed: int = 0) -> dict:
    """A head fitted on the 75% split of ``features`` / ``labels`` and scored on the rest: {"correct": (m,) bool,
    "proba": (m,) true-writer probabilities, "writers": (m,) labels of the held-out items}."""
    labels = list(labels)
    tr, te = split_by_writer(labels, 0.75, seed)
    head = fit_head(features[tr], [labels[i] for i in tr], c, seed)
    z = head.logits(features[te])
    y = np.array([head.classes.index(labels[i]) for i in te])
    return {"correct": z.argmax(axis=1) == y, "proba": true_writer_probability(z, y),
            "writers": np.array([labels[i] for i in te])}


def summarise(sc: dict) -> dict:
    """Top-1, mean true-writer probability, their intervals and the counts of :func:`head_scores`' output."""
    return {"top1": float(sc["correct"].mean()), "top1_ci": writer_interval(sc["correct"], sc["writers"], N_BOOT),
            "mean_true_proba": float(sc["proba"].mean()),
            "mean_true_proba_ci": writer_interval(sc["proba"], sc["writers"], N_BOOT),
            "n_test": int(len(sc["correct"])), "writers": int(len(set(sc["writers"]))),
            "chance": 1.0 / len(set(sc["writers"]))}


def choose_head_c(features, labels, cs=HEAD_CS) -> tuple[float, list[dict]]:
    """(the regularisation whose head gives the validation writers' held-out words the highest mean log
    probability of their true writer - the log score, the proper scoring rule for the probability Style reports;
    ties: the higher top-1, then the smaller C -, every candidate's figures: log score, top-1, mean true-writer
    probability)."""
    rows = []
    for c in cs:
        s = head_scores(features, labels, c)
        rows.append({"head_c": c, "log_score": float(np.mean(np.log(np.maximum(s["proba"], 1e-300)))),
                     "top1": float(s["correct"].mean()), "mean_true_proba": float(s["proba"].mean())})
    best = max(rows, key=lambda r: (round(r["log_score"], 6), round(r["top1"], 6), -r["head_c"]))
    return best["head_c"], rows


def scratch_scores(inks, labels, params: StyleParams, seed: int = 0) -> dict:
    """:func:`head_scores`' output for the earlier recipe: a ResNet-18 from random weights trained on the same 75%
    split and scored on the rest."""
    from inkground_lib.components.style.training import train_style

    labels = list(labels)
    tr, te = split_by_writer(labels, 0.75, seed)
    model = train_style([(inks[i], labels[i]) for i in tr], params, None, progress=False)
    z = model.logits([inks[i] for i in te])
    y = np.array([model.classes.index(labels[i]) for i in te])
    return {"correct": z.argmax(axis=1) == y, "proba": true_writer_probability(z, y),
            "writers": np.array([labels[i] for i in te])}


def paired_difference(a: dict, b: dict, key: str = "correct") -> dict:
    """Mean of ``a[key] - b[key]`` over the same held-out items, with its writer-bootstrap interval."""
    d = a[key].astype(float) - b[key].astype(float)
    return {"difference": float(d.mean()), "ci": writer_interval(d, a["writers"], N_BOOT)}


def heldout_sets(words, words_per_page: tuple[int, int] = (20, 50), seed: int = 0) -> dict:
    """{"pages": [(ink, writer)], "cursive": [(ink, writer)]} of the held-out writers' CURSIVE words (module doc):
    ``pages`` one recorded page per writer as the book composes them (:func:`~inkground_lib.datasets.recorded.
    plan_pages`: ``words_per_page`` words, a seeded choice; writers with fewer are left out), the regime of a
    benchmark's classifier (a few tens of words a writer); ``cursive`` every cursive word of every writer (a few
    hundred words a writer)."""
    from inkground_lib.components.derenderers.tracer.eval_writers import read_eval_writers
    from inkground_lib.datasets.recorded import plan_pages

    held = read_eval_writers(group="held-out")
    cursive = [w for w in words if w.writer in held and w.meta.get("style") == "CURSIVE"]
    n_writers = len({w.writer for w in cursive})
    plan = plan_pages(cursive, n_writers, words_per_page, np.random.default_rng(seed)) if n_writers else []
    pages = [(w.ink, wr) for wr, ws in plan for w in ws]
    every = [(w.ink, w.writer) for w in cursive]
    # a writer needs a word on each side of the split
    return {name: [it for it in items if _counts(items)[it[1]] >= 2] for name, items in
            (("pages", pages), ("cursive", every))}


def _counts(items) -> dict:
    out: dict[str, int] = {}
    for _, wr in items:
        out[wr] = out.get(wr, 0) + 1
    return out


def evaluate_backbone(unipen_dir: str | os.PathLike, path: str | os.PathLike | None = None, *, corpus=None,
                      val_renders=None, words=None, recipe, scratch=("pages",),
                      progress: bool = True) -> dict:
    """The card's figures for the backbone at ``path`` (module doc). ``corpus``/``val_renders``/``words``/``recipe``:
    what the training already holds (read again from ``unipen_dir`` when not given); ``recipe``: the
    backbone's :class:`~inkground_lib.components.style.backbone_training.BackboneRecipe` (its input and corpus
    settings; the shipped one for the shipped backbone). ``scratch``: the held-out sets
    on which the from-random recipe is trained too (every cursive word: ~45 CPU-minutes)."""
    if words is None:
        from inkground_lib.components.derenderers.tracer.data import read_release_words

        words, _ = read_release_words(unipen_dir, progress=progress)
    bb = load_backbone(path) if path is not None else load_backbone()
    params = replace(recipe.input, threads=recipe.threads)
    out: dict = {"backbone_sha256": bb.sha256}
    if corpus is not None:
        if val_renders is None:
            raise ValueError("evaluate_backbone: corpus given without its val renders")
        vf = bb.features(val_renders, params)
        vl = [wr for _, wr in corpus.val]
        c, rows = choose_head_c(vf, vl)
        out["validation"] = {"head_c": c, "candidates": rows, "writers": len(set(vl)), "items": len(vl)}
    else:
        c = StyleParams().head_c
    out["head_c"] = c
    scratch_params = StyleParams(start="random", fit="all")
    for name, items in heldout_sets(words).items():
        inks, labels = [k for k, _ in items], [w for _, w in items]
        if len(set(labels)) < 2:
            out[f"heldout_{name}"] = {"not_measured": f"{len(set(labels))} held-out writer(s) with two or more "
                                                      f"{name} words in this release"}
            continue
        f = bb.features(inks_darkness(inks, params, where=f"held-out {name} word"), params)
        mine = head_scores(f, labels, c)
        res = {"backbone_head": summarise(mine)}
        if name in scratch:
            base = scratch_scores(inks, labels, scratch_params)
            res["from_random"] = summarise(base)
            res["difference_top1"] = paired_difference(mine, base)
            res["difference_mean_true_proba"] = paired_difference(mine, base, "proba")
        out[f"heldout_{name}"] = res
    out["scratch_params"] = asdict(scratch_params) if scratch else None
    out["scratch_sets"] = list(scratch)
    return out
