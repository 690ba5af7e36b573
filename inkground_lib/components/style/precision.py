"""The arithmetic the Style classifier trains and predicts in: ``StyleParams.precision``, one recorded choice
(never the CPU's), and whether this machine can run it at full speed.

``"fp32"`` (the default): float32 throughout, at full speed on every x86-64 CPU. (Its weights still depend on
the instruction set oneDNN picks: AVX-512 and AVX2 kernels sum in other orders, so a book built on a CPU
without AVX-512 agrees with one built with it on Style within its noise, not bit for bit - measured in
``benchmarks/results/style_train.txt``.)
``"bf16"``: torch's CPU autocast to bfloat16 for the ResNet body (its last layer, the BatchNorm statistics,
the loss and AdamW's state stay float32), in training, BatchNorm recalibration and inference alike. It trains
about 2x faster than float32 on a CPU with native bfloat16 instructions, but torch emulates bfloat16 on CPUs
without them: 11x slower training and 25x slower inference than float32 with AVX2 alone (both measured in
``benchmarks/results/style_train.txt``). GitHub's hosted x86 runners have no AVX-512 (actions/runner#1069,
2021; still none exposed on their AMD EPYC 7763 and 9V74 VMs in IPNP-BIPN/bwa-mem4#44, 2026-08). So a bf16
classifier is trained or run only where ``/proc/cpuinfo`` lists ``avx512_bf16`` or ``amx_bf16``, and refused
elsewhere with a :class:`~inkground_lib.components.style.params.StyleError` instead of running silently
slowly. A bf16 model's weights and Style differ from an fp32 one's; the precision is part of the model's
identity (its params in ``style_model.json``, hence its cache key).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import torch

from inkground_lib.components.style.params import PRECISIONS, StyleError

BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")
"""``/proc/cpuinfo`` flags of x86 CPUs with native bfloat16 arithmetic (AVX-512 BF16, AMX)."""

CPUINFO = Path("/proc/cpuinfo")


def cpu_flags(path: Path = CPUINFO) -> frozenset[str]:
    """The CPU feature flags of the first ``flags`` line of ``path`` (Linux' ``/proc/cpuinfo``); empty when the
    file is missing or unreadable (another OS: no native bfloat16 is assumed)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def native_bf16() -> bool:
    """Whether this CPU has native bfloat16 arithmetic (:data:`BF16_CPU_FLAGS` in :func:`cpu_flags`)."""
    return bool(set(BF16_CPU_FLAGS) & cpu_flags())


def check_precision(precision: str, where: str = "Style") -> None:
    """StyleError when ``precision`` is "bf16" and this CPU has no native bfloat16 (:func:`native_bf16`)."""
    if precision == "bf16" and not native_bf16():
        raise StyleError(f"{where}: precision 'bf16' needs a CPU with native bfloat16 arithmetic (one of the "
                         f"flags {', '.join(BF16_CPU_FLAGS)} in {CPUINFO}); this one has none, and torch would "
                         f"emulate it 10-25x slower than float32. Use precision 'fp32' (the default), or train "
                         f"and score this classifier on a CPU with AVX-512 BF16 or AMX")


def autocast(precision: str):
    """The context the classifier's forward passes run in: torch's CPU bfloat16 autocast for ``"bf16"``
    (after :func:`check_precision`), nothing for ``"fp32"``."""
    check_precision(precision)
    if precision not in PRECISIONS:
        raise StyleError(f"Style: precision must be one of {list(PRECISIONS)}, got {precision!r}")
    if precision == "bf16":
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()
