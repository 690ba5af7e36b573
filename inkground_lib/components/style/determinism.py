"""torch's process-wide state (thread count, seed, deterministic algorithms) set for a block, one block at a
time: what makes the Style classifier's weights independent of the machine and of other threads."""

from __future__ import annotations

import contextlib
import threading

import torch

TORCH_STATE_LOCK = threading.RLock()
"""torch's thread count, seed and deterministic flags are global to the process: blocks that set them run one
at a time (the Style classifiers' epoch threads assemble their models in one process); transformers' first
lazy imports are made under it too (two threads resolving ``transformers.ResNetConfig`` at once: one got an
AttributeError)."""


@contextlib.contextmanager
def torch_state(threads: int | None, seed: int | None):
    """Seed torch, enable deterministic algorithms and set CPU threads for the block; restore afterwards.
    One such block runs at a time in a process (:data:`TORCH_STATE_LOCK`)."""
    with TORCH_STATE_LOCK:
        yield from _torch_state_unlocked(threads, seed)


def _torch_state_unlocked(threads: int | None, seed: int | None):
    old_threads = torch.get_num_threads()
    old_det = torch.are_deterministic_algorithms_enabled()
    old_fill = torch.utils.deterministic.fill_uninitialized_memory
    try:
        if threads is not None:
            torch.set_num_threads(int(threads))
        torch.use_deterministic_algorithms(True)
        # deterministic mode also fills every new tensor with NaN (a guard for code reading memory it never
        # wrote); 7% of a training step, and the weights are bit-identical without it (measured)
        torch.utils.deterministic.fill_uninitialized_memory = False
        if seed is not None:
            torch.manual_seed(int(seed))
        yield
    finally:
        torch.utils.deterministic.fill_uninitialized_memory = old_fill
        torch.use_deterministic_algorithms(old_det)
        torch.set_num_threads(old_threads)
