"""The tracer network at inference: the order and direction it gives each word's strokes, and the strokes
arranged by them."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from inkground_lib.components.derenderers.tracer.features import MAX_STROKES, batch_inputs


def predict(net, feats: Sequence[np.ndarray], texts: Sequence[np.ndarray], batch_size: int = 256):
    """Per word: (order (a permutation of its strokes), reverse (bool per stroke, in the skeleton's
    order)). Strokes past MAX_STROKES keep the skeleton's order after the others, unreversed."""
    out = []
    with torch.inference_mode():
        for a in range(0, len(feats), batch_size):
            x, sm, c, cm = batch_inputs(feats[a:a + batch_size], texts[a:a + batch_size], multiple=16)
            score, rev = net(*(torch.from_numpy(v) for v in (x, sm, c, cm)))
            score, rev = score.numpy(), rev.numpy()
            for b, f in enumerate(feats[a:a + batch_size]):
                n = len(f)
                k = min(n, MAX_STROKES)
                order = np.concatenate([np.argsort(score[b, :k], kind="stable"), np.arange(k, n)])
                reverse = np.concatenate([rev[b, :k] > 0, np.zeros(n - k, bool)])
                out.append((order.astype(np.int64), reverse))
    return out


def arrange(strokes: Sequence[np.ndarray], order, reverse) -> list[np.ndarray]:
    """The strokes in ``order``, each reversed where ``reverse`` (indexed by the original stroke)."""
    return [strokes[i][::-1] if reverse[i] else strokes[i] for i in order]
