"""Style under a trained classifier: the scores of inks (:func:`style_scores`, the metric of
:mod:`~inkground_lib.components.style.metric`) and the classifier's top-1 accuracy and chance level."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

from inkground_lib.components.style.items import check_items
from inkground_lib.components.style.metric import softmax_rows, true_writer_probability
from inkground_lib.components.style.model import StyleModel
from inkground_lib.components.style.params import StyleError
from inkground_lib.core.ink import InkLike


def style_scores(model: StyleModel, inks: Sequence[InkLike], true_labels: Sequence[str],
                 progress: bool = False) -> np.ndarray:
    """Style of each ink: the classifier's softmax probability of its true writer, in [0, 1], shape (n,)
    (:func:`~inkground_lib.components.style.metric.true_writer_probability` of the model's logits).

    Invalid or missing outputs should be passed as an empty ink (blank render), per the design's rule.
    """
    inks, true_labels = list(inks), list(true_labels)
    if len(inks) != len(true_labels):
        raise StyleError(f"style_scores: {len(inks)} inks but {len(true_labels)} labels")
    idx = [model.class_index(lab, f"style_scores label {i}") for i, lab in enumerate(true_labels)]
    return true_writer_probability(model.logits(inks, progress), idx)


@dataclass(frozen=True)
class ClassifierEval:
    """top1 = share of items whose most probable writer is the true one; chance = 1 / n_classes;
    mean_true_proba = mean probability of the true writer (the mean Style of these items)."""

    top1: float
    chance: float
    n: int
    n_classes: int
    mean_true_proba: float

    def to_dict(self) -> dict:
        return asdict(self)


def evaluate_classifier(model: StyleModel, items: Sequence[tuple[InkLike, str]],
                        progress: bool = False) -> ClassifierEval:
    """Top-1 accuracy, chance level (1/K) and mean true-writer probability on ``items`` (ink, writer)."""
    inks, labels = check_items(items)
    if not inks:
        raise StyleError("evaluate_classifier: no items")
    idx = np.array([model.class_index(lab, f"evaluate_classifier item {i}") for i, lab in enumerate(labels)])
    z = model.logits(inks, progress)
    return ClassifierEval(top1=float(np.mean(np.argmax(softmax_rows(z), axis=1) == idx)),
                          chance=1.0 / model.n_classes, n=len(inks), n_classes=model.n_classes,
                          mean_true_proba=float(np.mean(true_writer_probability(z, idx))))


def writer_interval(values, writers, n_boot: int = 1000, seed: int = 0, ci: float = 0.95) -> tuple[float, float]:
    """The ``ci`` percentile interval of the mean of ``values`` (n,) over cluster-bootstrap replicates whose
    clusters are the ``writers`` (n,) labels (each replicate draws writers with replacement and takes all their
    items; on a benchmark a page is a writer, so this is the book's page bootstrap).

    >>> lo, hi = writer_interval([1, 1, 0, 0], ["a", "a", "b", "b"], n_boot=200)
    >>> 0.0 <= lo <= 0.5 <= hi <= 1.0
    True
    """
    from inkground_lib.core.bootstrap import page_bootstrap_counts

    ids, inv = np.unique(np.asarray(writers), return_inverse=True)
    w = page_bootstrap_counts(len(ids), n_boot, seed)[:, inv]  # each item weighted by its writer's draws
    means = (w * np.asarray(values, float)).sum(axis=1) / w.sum(axis=1)
    a = (1 - ci) / 2
    return float(np.quantile(means, a)), float(np.quantile(means, 1 - a))


def classifier_figures(logits, true_class, writers, n_boot: int = 1000, seed: int = 0, ci: float = 0.95) -> dict:
    """Top-1 accuracy and mean true-writer probability of a classifier's ``logits`` (n, K) for items of true
    class ``true_class`` (n,), each with its writer-bootstrap interval (:func:`writer_interval`), and n."""
    z = np.asarray(logits, float)
    y = np.asarray(true_class, int)
    correct = (np.argmax(z, axis=1) == y).astype(float)
    proba = true_writer_probability(z, y)
    return {"top1": float(correct.mean()), "top1_ci": list(writer_interval(correct, writers, n_boot, seed, ci)),
            "mean_true_proba": float(proba.mean()),
            "mean_true_proba_ci": list(writer_interval(proba, writers, n_boot, seed, ci)), "n": int(len(y))}

