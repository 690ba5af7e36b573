"""A Style training's state on disk after each epoch (:data:`~inkground_lib.components.style.storage.CHECKPOINT_FILE`
in the model folder): a killed long training resumes at its last finished epoch."""

from __future__ import annotations

import io
import json
from dataclasses import asdict
from pathlib import Path
from typing import Sequence

import torch

from inkground_lib.components.style.items import check_items, items_hash
from inkground_lib.components.style.params import FORMAT, StyleParams
from inkground_lib.components.style.storage import CHECKPOINT_FILE
from inkground_lib.components.style.training import TrainState
from inkground_lib.core.files import atomic_write_bytes
from inkground_lib.core.ink import InkLike


def save_checkpoint(out_dir: str | Path, state: TrainState, train_items: Sequence[tuple[InkLike, str]],
                    params: StyleParams = StyleParams()) -> Path:
    """Write ``state`` to ``out_dir/style_training.pt`` (atomically, with the input hash and params it
    belongs to)."""
    inks, labels = check_items(train_items)
    buf = io.BytesIO()
    torch.save({"format": FORMAT, "input_hash": items_hash(inks, labels), "params": params.to_dict(),
                "state": asdict(state)}, buf)
    return atomic_write_bytes(Path(out_dir) / CHECKPOINT_FILE, buf.getvalue())


def load_checkpoint(out_dir: str | Path, train_items: Sequence[tuple[InkLike, str]],
                    params: StyleParams = StyleParams()) -> TrainState | None:
    """The state saved by :func:`save_checkpoint` for these items and params, or None (absent, another
    training's, or damaged: the training starts over). Read with ``weights_only`` (tensors and plain data;
    nothing in the file is run)."""
    p = Path(out_dir) / CHECKPOINT_FILE
    if not p.is_file():
        return None
    inks, labels = check_items(train_items)
    try:
        d = torch.load(p, map_location="cpu", weights_only=True)
        if not (isinstance(d, dict) and d.get("format") == FORMAT and d.get("input_hash") == items_hash(inks, labels)
                and d.get("params") == json.loads(json.dumps(params.to_dict()))):
            return None
        state = TrainState(**d["state"])
    except Exception:  # a torn or foreign file: start over rather than fail a long run
        return None
    return state if 0 < int(state.epoch) < int(params.epochs) else None
