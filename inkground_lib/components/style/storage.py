"""A saved Style classifier: its folder (weights in safetensors, a JSON record), written atomically, loaded
with checks, and reused when it was trained on the same items with the same settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np
import safetensors
import torch
from safetensors.torch import load_file, save

from inkground_lib.components.style.items import check_items, items_hash
from inkground_lib.components.style.model import StyleModel
from inkground_lib.components.style.network import build_resnet18, import_transformers
from inkground_lib.components.style.params import FORMAT, StyleError, StyleParams
from inkground_lib.core.files import atomic_write_bytes, atomic_write_json, sha256_file
from inkground_lib.core.ink import InkLike

WEIGHTS_FILE = "style_model.safetensors"
META_FILE = "style_model.json"
CHECKPOINT_FILE = "style_training.pt"
"""A training's last state in its model folder
(:func:`~inkground_lib.components.style.checkpoints.save_checkpoint`); removed when the model is saved."""


def _meta_matches(meta: dict, params: StyleParams, h: str) -> bool:
    return (meta.get("format") == FORMAT and meta.get("input_hash") == h
            and meta.get("params") == json.loads(json.dumps(params.to_dict()))
            and meta.get("backbone_sha256") == _backbone_sha(params))


def _backbone_sha(params: StyleParams) -> str | None:
    """The sha256 of the backbone a classifier of ``params`` starts from (None: from random weights): a classifier
    made from another backbone is never reused."""
    if params.start != "backbone":
        return None
    from inkground_lib.components.style.backbone import SHIPPED_SHA256

    return SHIPPED_SHA256


def load_style(out_dir: str | Path) -> StyleModel:
    """Load a model written by :func:`~inkground_lib.components.style.training.train_style`; raises
    StyleError naming the file at fault."""
    out_dir = Path(out_dir)
    mp, wp = out_dir / META_FILE, out_dir / WEIGHTS_FILE
    try:
        meta = json.loads(mp.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StyleError(f"{mp}: no style model here") from None
    except json.JSONDecodeError as e:
        raise StyleError(f"{mp}: not valid JSON ({e})") from None
    if meta.get("format") != FORMAT:
        raise StyleError(f"{mp}: format {meta.get('format')!r}, expected {FORMAT!r}")
    if not wp.is_file():
        raise StyleError(f"{wp}: weights file missing")
    if sha256_file(wp) != meta.get("weights_sha256"):
        raise StyleError(f"{wp}: weights do not match the SHA-256 recorded in {mp.name}")
    params = StyleParams.from_dict(meta["params"])
    classes = list(meta["classes"])
    state = load_file(str(wp))
    common = dict(classes=classes, params=params, input_hash=meta["input_hash"], trained=False,
                  losses=list(meta.get("losses", [])), train_seconds=float(meta.get("train_seconds", 0.0)),
                  out_dir=out_dir)
    if params.fit == "head":
        return StyleModel(model=None, backbone=_backbone_of(meta, mp), head=_head_of(state, classes, wp), **common)
    model = build_resnet18(len(classes), params.seed)
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise StyleError(f"{wp}: weights do not fit the model (missing {list(missing)[:3]}, "
                         f"unexpected {list(unexpected)[:3]})")
    model.eval()
    return StyleModel(model=model, **common)


def _backbone_of(meta: dict, mp: Path):
    """The shipped backbone, if it is the one the head in ``meta`` was fitted on (StyleError otherwise)."""
    from inkground_lib.components.style.backbone import load_backbone

    bb = load_backbone()
    if meta.get("backbone_sha256") != bb.sha256:
        raise StyleError(f"{mp}: the head was fitted on backbone {str(meta.get('backbone_sha256'))[:12]}, not on "
                         f"the shipped one ({bb.sha256[:12]})")
    return bb


def _head_of(state: dict, classes: list, wp: Path):
    """The :class:`~inkground_lib.components.style.head.LinearHead` of a head file's tensors."""
    from inkground_lib.components.style.head import LinearHead

    try:
        arrays = {k: state[k].double().numpy() for k in ("mean", "scale", "weight", "bias")}
    except KeyError as e:
        raise StyleError(f"{wp}: no head tensor {e}") from None
    if arrays["weight"].shape[0] != len(classes):
        raise StyleError(f"{wp}: the head has {arrays['weight'].shape[0]} rows for {len(classes)} classes")
    return LinearHead(classes=tuple(classes), **arrays)


def saved_style(out_dir: str | Path, train_items: Sequence[tuple[InkLike, str]],
                params: StyleParams = StyleParams()) -> StyleModel | None:
    """The model in ``out_dir`` if it was trained on exactly ``train_items`` (in order) with ``params``
    (``trained`` False), else None (absent, other inputs, or damaged: the caller retrains)."""
    inks, labels = check_items(train_items)
    mp = Path(out_dir) / META_FILE
    if not mp.is_file():
        return None
    try:
        meta = json.loads(mp.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, OSError, UnicodeDecodeError):
        return None
    if not (isinstance(meta, dict) and _meta_matches(meta, params, items_hash(inks, labels))):
        return None
    try:
        return load_style(out_dir)
    except StyleError:
        return None


def save_style(sm: StyleModel, out_dir: str | Path, n_items: int) -> None:
    """Write ``sm`` to ``out_dir`` (weights first, then the JSON record, each atomically) and point
    ``sm.out_dir`` there; :func:`load_style` and :func:`saved_style` read it back."""
    out_dir = Path(out_dir)
    sm.out_dir = out_dir
    transformers = import_transformers()  # for its version
    if sm.head is not None:  # the head's arrays, in float64 (the backbone is the shipped file, named by its sha256)
        state = {k: torch.from_numpy(np.ascontiguousarray(v, dtype=np.float64)) for k, v in sm.head.arrays().items()}
    else:
        state = {k: v.detach().contiguous().clone() for k, v in sm.model.state_dict().items()}
    data = save(state, metadata={"format": FORMAT})
    wp = atomic_write_bytes(out_dir / WEIGHTS_FILE, data)
    meta = {"format": FORMAT, "params": sm.params.to_dict(), "classes": sm.classes, "input_hash": sm.input_hash,
            "n_items": n_items, "losses": [float(v) for v in sm.losses], "train_seconds": float(sm.train_seconds),
            "weights_sha256": sha256_file(wp), "n_parameters": sm.n_parameters(),
            "backbone_sha256": _backbone_sha(sm.params),
            "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                         "safetensors": safetensors.__version__}}
    atomic_write_json(out_dir / META_FILE, meta)
    (out_dir / CHECKPOINT_FILE).unlink(missing_ok=True)  # the finished training's last state, if it was kept
