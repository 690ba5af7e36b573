""":class:`StyleModel`: a trained writer classifier (a network, or the backbone and a head) with its classes and
how it was made."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from inkground_lib.components.style.determinism import torch_state
from inkground_lib.components.style.inputs import inks_tensor
from inkground_lib.components.style.metric import softmax_rows
from inkground_lib.components.style.network import in_layout, network_logits
from inkground_lib.components.style.params import StyleError, StyleParams
from inkground_lib.components.style.precision import check_precision
from inkground_lib.core.progress import bar
from inkground_lib.core.ink import InkLike


@dataclass
class StyleModel:
    """A trained writer classifier: its classes (sorted writer labels), how it was made, and either a network
    (``model``: a whole ResNet-18, trained from random weights or fine-tuned from the backbone) or the backbone
    and a head fitted on its features (``backbone``, ``head``: ``StyleParams.fit == "head"``, ``model`` None).

    ``trained`` is True when this object was trained by the call that returned it, False when it was
    loaded from ``out_dir``. ``losses`` = mean training loss per epoch; ``train_seconds`` = time it took.
    """

    model: object
    classes: list[str]
    params: StyleParams
    input_hash: str
    trained: bool = False
    losses: list[float] = field(default_factory=list)
    train_seconds: float = 0.0
    out_dir: Path | None = None
    backbone: object = None
    head: object = None

    def features(self, inks: Sequence[InkLike]) -> np.ndarray:
        """The frozen backbone's features (n, 512) of each ink's render (a classifier with a head only)."""
        from inkground_lib.components.style.inputs import inks_darkness

        if self.head is None:
            raise StyleError("features: this classifier has no frozen backbone (fit is not 'head')")
        return self.backbone.features(inks_darkness(list(inks), self.params, where="ink"), self.params)

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    def n_parameters(self) -> int:
        """The classifier's parameters (for a head on a frozen backbone: the backbone's and the head's)."""
        if self.head is not None:
            return int(sum(p.numel() for p in self.backbone.body.parameters()) + self.head.weight.size
                       + self.head.bias.size)
        return int(sum(p.numel() for p in self.model.parameters()))

    def class_index(self, label: str, where: str = "label") -> int:
        try:
            return self.classes.index(label)
        except ValueError:
            raise StyleError(f"{where}: writer {label!r} is not one of the classifier's "
                             f"{len(self.classes)} classes") from None

    def logits(self, inks: Sequence[InkLike], progress: bool = False) -> np.ndarray:
        """Raw class scores (n, K), float64, in :attr:`classes` order; batched, eval mode, no gradients."""
        inks = list(inks)
        if self.head is not None:
            return self.head.logits(self.features(inks)) if inks else np.zeros((0, self.n_classes))
        out = np.zeros((len(inks), self.n_classes))
        bs = int(self.params.eval_batch_size)
        check_precision(self.params.precision, "Style classifier")
        self.model = in_layout(self.model, self.params)
        self.model.eval()
        with torch_state(self.params.threads, None), torch.no_grad():
            for b in bar(range(0, len(inks), bs), desc="Style", unit="batch", leave=False,
                         enabled=progress and len(inks) > bs):
                x = inks_tensor(inks[b:b + bs], self.params, where="ink")
                out[b:b + len(x)] = network_logits(self.model, x, self.params).double().numpy()
        return out

    def proba(self, inks: Sequence[InkLike], progress: bool = False) -> np.ndarray:
        """Softmax probabilities (n, K), float64, rows summing to 1, in :attr:`classes` order
        (:func:`~inkground_lib.components.style.metric.softmax_rows` of :meth:`logits`)."""
        return softmax_rows(self.logits(inks, progress))

    def predict(self, inks: Sequence[InkLike]) -> list[str]:
        """The most probable writer of each ink."""
        return [self.classes[int(i)] for i in np.argmax(self.logits(inks), axis=1)]
