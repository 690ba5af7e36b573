"""The writer classifier: a 1-channel ResNet-18 (transformers) and :class:`StyleModel`, the trained network
with its classes and how it was made."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from inkground_lib.components.style.determinism import TORCH_STATE_LOCK, torch_state
from inkground_lib.components.style.inputs import inks_tensor
from inkground_lib.core.progress import bar
from inkground_lib.components.style.metric import softmax_rows
from inkground_lib.components.style.params import StyleError, StyleParams
from inkground_lib.components.style.precision import autocast, check_precision
from inkground_lib.core.ink import InkLike


def quiet_notebook_progress() -> None:
    """Import ``tqdm.auto`` once without the warning it prints inside a Jupyter kernel (TqdmWarning "IProgress
    not found", ipywidgets being absent). transformers imports it through huggingface_hub, whose progress bars
    are for hub downloads that never happen here; the warning would only put the build machine's path into
    the executed notebooks. Called by :func:`import_transformers`, the one way this package imports
    transformers (nothing a pool job returns to the notebook's kernel holds a transformers object: training
    jobs return a :class:`~inkground_lib.components.style.training.TrainState` of plain tensors)."""
    import warnings

    from tqdm import TqdmWarning

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=TqdmWarning, message="IProgress not found")
        import tqdm.auto  # noqa: F401


def import_transformers():
    """``transformers`` (imported here, lazily: it is heavy), after :func:`quiet_notebook_progress`."""
    quiet_notebook_progress()
    import transformers

    return transformers


def build_resnet18(n_classes: int, seed: int = 0):
    """A randomly initialised 1-channel ResNet-18 (transformers) with ``n_classes`` outputs, seeded."""
    with TORCH_STATE_LOCK:  # transformers' lazy module is not safe to resolve from two threads at once
        transformers = import_transformers()
        ResNetConfig, ResNetForImageClassification = (transformers.ResNetConfig,
                                                      transformers.ResNetForImageClassification)

    if int(n_classes) < 2:
        raise StyleError(f"a writer classifier needs at least 2 writers, got {n_classes}")
    cfg = ResNetConfig(num_channels=1, embedding_size=64, hidden_sizes=[64, 128, 256, 512], depths=[2, 2, 2, 2],
                       layer_type="basic", hidden_act="relu", downsample_in_first_stage=False,
                       num_labels=int(n_classes))
    with torch_state(None, seed):
        model = ResNetForImageClassification(cfg)
    return model


def in_layout(t, params: StyleParams):
    """A network (a module) or a batch (n, 1, height, width) in the memory format of ``params``: torch's
    channels-last with ``params.channels_last`` (the default), else as it is (contiguous)."""
    if not params.channels_last:
        return t
    if isinstance(t, torch.nn.Module):
        return t.to(memory_format=torch.channels_last)
    return t.contiguous(memory_format=torch.channels_last)


def network_logits(model, x: torch.Tensor, params: StyleParams) -> torch.Tensor:
    """The classifier's raw class scores (n, K) for the float network input ``x`` (n, 1, height, width), in
    the arithmetic of ``params.precision``: float32 (the network's own forward pass), or the ResNet body
    under bfloat16 autocast and its last layer (average-pooled features to K scores) in float32, so the
    scores keep float32's resolution (bfloat16 keeps 8 significant bits: a score near 8 would be rounded to a
    multiple of 1/16, moving its softmax probability by up to ~3%). The layout is :func:`in_layout`'s."""
    x = in_layout(x, params)
    if params.precision == "fp32":
        return model(pixel_values=x).logits
    with autocast(params.precision):
        pooled = model.resnet(pixel_values=x).pooler_output
    return model.classifier(pooled.float())


def expected_param_count(n_classes: int, channels: int = 1) -> int:
    """torchvision resnet18's parameter count for ``channels`` inputs and ``n_classes`` outputs:
    11,689,512 (3 channels, 1000 classes) - 64*3*7*7 + 64*channels*7*7 - (512*1000 + 1000) + 512*K + K."""
    return 11_689_512 - 64 * 3 * 7 * 7 + 64 * channels * 7 * 7 - (512 * 1000 + 1000) + 512 * n_classes + n_classes


@dataclass
class StyleModel:
    """A trained writer classifier: the network, its classes (sorted writer labels) and how it was made.

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

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    def n_parameters(self) -> int:
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
