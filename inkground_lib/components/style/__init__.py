"""Style: a ResNet-18 writer classifier over renders of inks, and the Style score of a prediction (the
softmax probability of its true writer). The book's design page has the details.

One job per module: ``params`` (settings, error, record version), ``determinism`` (torch's global state, one
block at a time), ``inputs`` (the network's input images), ``items`` (training items: checks, hash, split),
``precision`` (float32 or bfloat16, and whether this CPU may run bfloat16), ``metric`` (the Style metric,
numpy only), ``model`` (the ResNet-18 and :class:`StyleModel`), ``scoring``
(Style of inks, the classifier's top-1), ``training`` (seeded, resumable training), ``storage`` (a saved
classifier's folder), ``checkpoints`` (a training's state on disk). The names below are re-exported here.
"""

from __future__ import annotations

from inkground_lib.components.style.checkpoints import load_checkpoint, save_checkpoint
from inkground_lib.components.style.inputs import ink_darkness, ink_tensor, inks_darkness, inks_tensor
from inkground_lib.components.style.items import items_hash, split_by_writer
from inkground_lib.components.style.metric import softmax_rows, true_writer_probability
from inkground_lib.components.style.model import StyleModel
from inkground_lib.components.style.network import build_resnet18, expected_param_count
from inkground_lib.components.style.params import FORMAT, PRECISIONS, StyleError, StyleParams
from inkground_lib.components.style.precision import check_precision, native_bf16
from inkground_lib.components.style.scoring import ClassifierEval, evaluate_classifier, style_scores
from inkground_lib.components.style.storage import (
    CHECKPOINT_FILE,
    META_FILE,
    WEIGHTS_FILE,
    load_style,
    save_style,
    saved_style,
)
from inkground_lib.components.style.training import TrainState, style_model_from_state, train_epochs, train_style

__all__ = ["StyleParams", "StyleModel", "ClassifierEval", "StyleError", "train_style", "load_style",
           "style_scores", "evaluate_classifier", "ink_tensor", "inks_tensor", "build_resnet18",
           "expected_param_count", "split_by_writer", "items_hash", "true_writer_probability", "softmax_rows",
           "ink_darkness", "inks_darkness", "TrainState", "train_epochs", "style_model_from_state",
           "save_style", "saved_style", "save_checkpoint", "load_checkpoint", "FORMAT", "WEIGHTS_FILE",
           "META_FILE", "CHECKPOINT_FILE", "PRECISIONS", "check_precision", "native_bf16"]
