"""The writer classifier's network: a 1-channel ResNet-18 (transformers), whole or its body (the backbone's
shape), in the layout and arithmetic of :class:`~inkground_lib.components.style.params.StyleParams`."""

from __future__ import annotations

import torch

from inkground_lib.components.style.determinism import TORCH_STATE_LOCK, torch_state
from inkground_lib.components.style.params import StyleError, StyleParams
from inkground_lib.components.style.precision import autocast


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


def resnet18_config(n_classes: int = 2):
    """The Style classifier's transformers ``ResNetConfig``: 1 channel, basic blocks, depths 2-2-2-2, widths
    64-128-256-512 (torchvision's resnet18), ``n_classes`` outputs."""
    with TORCH_STATE_LOCK:  # transformers' lazy module is not safe to resolve from two threads at once
        ResNetConfig = import_transformers().ResNetConfig
    return ResNetConfig(num_channels=1, embedding_size=64, hidden_sizes=[64, 128, 256, 512], depths=[2, 2, 2, 2],
                        layer_type="basic", hidden_act="relu", downsample_in_first_stage=False,
                        num_labels=int(n_classes))


def build_resnet18(n_classes: int, seed: int = 0):
    """A randomly initialised 1-channel ResNet-18 (transformers) with ``n_classes`` outputs, seeded."""
    if int(n_classes) < 2:
        raise StyleError(f"a writer classifier needs at least 2 writers, got {n_classes}")
    cfg = resnet18_config(n_classes)
    with TORCH_STATE_LOCK:
        ResNetForImageClassification = import_transformers().ResNetForImageClassification
    with torch_state(None, seed):
        return ResNetForImageClassification(cfg)


def new_body(seed: int = 0):
    """A randomly initialised ResNet-18 body (transformers ``ResNetModel``: the classifier without its last
    layer), seeded."""
    cfg = resnet18_config()
    with TORCH_STATE_LOCK:
        ResNetModel = import_transformers().ResNetModel
    with torch_state(None, seed):
        return ResNetModel(cfg)


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
