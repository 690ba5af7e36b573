"""Training items of the Style classifier: (ink, writer label) pairs checked, hashed, and split per writer."""

from __future__ import annotations

import hashlib
from typing import Iterable, Sequence

import numpy as np

from inkground_lib.components.style.params import FORMAT, StyleError
from inkground_lib.core.ink import InkLike, as_ink


def check_items(items) -> tuple[list, list[str]]:
    inks, labels = [], []
    for i, it in enumerate(items):
        try:
            ink, label = it
        except (TypeError, ValueError):
            raise StyleError(f"training item {i}: expected an (ink, writer_label) pair") from None
        if not isinstance(label, str) or not label:
            raise StyleError(f"training item {i}: the writer label must be a non-empty str, got {label!r}")
        inks.append(as_ink(ink, f"training item {i} ink"))
        labels.append(label)
    return inks, labels


def items_hash(inks: Iterable[InkLike], labels: Iterable[str]) -> str:
    """SHA-256 over the labels and the x, y coordinates (float64) of every stroke, in order (t is ignored:
    the renderer does not use it)."""
    h = hashlib.sha256(FORMAT.encode())
    for ink, lab in zip(inks, labels):
        ink = as_ink(ink)
        h.update(b"\x00W" + lab.encode("utf-8") + b"\x00" + len(ink).to_bytes(4, "little"))
        for s in ink.strokes:
            xy = np.ascontiguousarray(s[:, :2], dtype="<f8")
            h.update(len(xy).to_bytes(4, "little") + xy.tobytes())
    return h.hexdigest()


def split_by_writer(labels: Sequence[str], train_share: float = 0.75, seed: int = 0) -> tuple[list[int], list[int]]:
    """Seeded per-writer split of item indices into (train, held-out).

    For each writer, round(train_share * n) of its n items (at least 1, and at most n - 1 when n >= 2) go
    to train, chosen by a permutation seeded from ``seed`` and the writer label; the rest are held out.
    Both lists are sorted.
    """
    if not 0 < train_share < 1:
        raise StyleError(f"split_by_writer: train_share must be in (0, 1), got {train_share}")
    by: dict[str, list[int]] = {}
    for i, lab in enumerate(labels):
        by.setdefault(lab, []).append(i)
    train, test = [], []
    for lab in sorted(by):
        idx = by[lab]
        n = len(idx)
        k = n if n == 1 else min(max(int(round(train_share * n)), 1), n - 1)
        sub = int.from_bytes(hashlib.sha256(f"{seed}:{lab}".encode()).digest()[:8], "little")
        perm = np.random.default_rng(sub).permutation(n)
        train += [idx[j] for j in perm[:k]]
        test += [idx[j] for j in perm[k:]]
    return sorted(train), sorted(test)
