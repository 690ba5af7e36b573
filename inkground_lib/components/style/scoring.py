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
