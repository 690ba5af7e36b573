"""inkground's writer-style backbone: the body of the Style classifier's 1-channel ResNet-18 (everything but its
last layer), trained once for writer identification on writers outside every evaluation set
(:mod:`~inkground_lib.components.style.backbone_training`) and shipped in ``data/models/`` with a card
(``data/models/STYLE-BACKBONE.md``). Every benchmark's writer classifier starts from it
(:class:`~inkground_lib.components.style.params.StyleParams` ``start``).

The file is safetensors (no pickle) holding the body's tensors in half precision (storage only: they are
widened to float32 when loaded, and every computation is float32 unless ``precision`` says otherwise) and a JSON
record in its metadata (the recipe and what the training measured). Its sha256 is :data:`SHIPPED_SHA256`, checked
at every load. A render's features are the body's pooled output: 512 floats, the input of every head
(:mod:`~inkground_lib.components.style.head`).
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from inkground_lib.components.style.determinism import torch_state
from inkground_lib.components.style.inputs import as_float
from inkground_lib.components.style.network import in_layout, new_body
from inkground_lib.components.style.params import StyleError, StyleParams
from inkground_lib.components.style.precision import autocast, check_precision
from inkground_lib.core.files import atomic_write_bytes, sha256_file, sources_sha256
from inkground_lib.core.layout import DATA

SHIPPED_BACKBONE = DATA / "models" / "style-backbone.safetensors"
"""The backbone the repository ships (card: ``data/models/STYLE-BACKBONE.md``)."""
SHIPPED_SHA256 = "7b413c5635ab4195ecd6e8fb37500821e38ad1898454f167fbc9dda4cb0b6c31"
"""sha256 of :data:`SHIPPED_BACKBONE`; every load checks it."""
FEATURES = 512
"""Length of a render's feature vector (the ResNet-18's last stage width, average-pooled)."""
BACKBONE_FORMAT = "inkground-style-backbone/1"


def feature_key(backbone_sha256: str, params: StyleParams) -> tuple:
    """The key of a render's features besides its drawing: the backbone, every input setting that changes the
    pixels or the arithmetic (height, width, render, precision, layout) and the sha256 of the code that draws
    the input (:data:`INPUT_CODE`)."""
    return ("style-features", backbone_sha256, int(params.height), int(params.width), repr(params.render),
            params.precision, bool(params.channels_last), input_code_sha256())


INPUT_CODE = ("inputs.py", "../../core/render.py")
"""The code that turns an ink into the network's input (relative to this package)."""


@functools.lru_cache(maxsize=1)
def input_code_sha256() -> str:
    """sha256 of :data:`INPUT_CODE` (a change there makes every stored feature stale)."""
    here = Path(__file__).parent
    return sources_sha256((name, here / name) for name in INPUT_CODE)[:16]


@dataclass
class Backbone:
    """A loaded backbone: ``body`` (a transformers ``ResNetModel`` in eval mode, float32), the sha256 of its
    file (its identity in every key made from its features) and the file's record."""

    body: object
    sha256: str
    record: dict
    path: Path | None = None

    def features(self, darkness: torch.Tensor, params: StyleParams) -> np.ndarray:
        """Pooled features (n, :data:`FEATURES`) float32 of uint8 darkness images (n, 1, height, width)
        (:func:`~inkground_lib.components.style.inputs.inks_darkness`), in batches of ``eval_batch_size``, in
        ``params``' precision, layout and thread count; no gradients. An image's features do not depend on the other images of its batch, the batch size or the
        thread count (bit for bit, measured on this machine's oneDNN kernels and tested), so a render's
        features can be computed once and reused by its digest."""
        return body_features(self.body, darkness, params)


def body_features(body, darkness: torch.Tensor, params: StyleParams) -> np.ndarray:
    """:meth:`Backbone.features` for any ResNet body (a ``ResNetModel``)."""
    check_precision(params.precision, "Style features")
    n = len(darkness)
    out = np.zeros((n, FEATURES), np.float32)
    bs = int(params.eval_batch_size)
    body = in_layout(body, params)
    body.eval()
    with torch_state(params.threads, None), torch.no_grad():
        for b in range(0, n, bs):
            x = as_float(darkness[b:b + bs])
            m = len(x)
            if m == 1:  # oneDNN takes another path for a batch of one (last-bit differences): run it as two
                x = torch.cat([x, x])
            with autocast(params.precision):
                pooled = body(pixel_values=in_layout(x, params)).pooler_output
            out[b:b + m] = pooled.float().reshape(len(x), FEATURES)[:m].numpy()
    return out


def save_backbone(body, path: str | os.PathLike, record: dict) -> str:
    """Write ``body``'s tensors in half precision with ``record`` (JSON) to ``path`` (atomically); return the
    file's sha256. Identical tensors and record give identical bytes."""
    from safetensors.torch import save

    state = {k: v.detach().to(torch.float16).contiguous().clone() if v.is_floating_point() else v.detach().clone()
             for k, v in body.state_dict().items()}
    data = save(state, metadata={"format": BACKBONE_FORMAT, "record": json.dumps(record, sort_keys=True)})
    atomic_write_bytes(Path(path), _sorted_metadata(data))
    return sha256_file(path)


def _sorted_metadata(data: bytes) -> bytes:
    """``data`` (a safetensors file) with its header's ``__metadata__`` keys in sorted order. safetensors 0.8
    writes the metadata from a hash map, in an order that changes from call to call (measured: two saves of the
    same tensors differed in their header only); sorting the keys changes no length, so the 8-byte header size,
    its space padding and the tensors' offsets stay as written (the format: an unsigned little-endian 64-bit
    header size, then the JSON header: the safetensors crate's description, docs.rs/crate/safetensors, read
    2026-12-06)."""
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", None)
    if meta is None:
        return data
    text = json.dumps({"__metadata__": dict(sorted(meta.items())), **header}, separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")
    if len(text) > n:  # another JSON spelling than safetensors': keep its bytes rather than guess
        return data
    return data[:8] + text + b" " * (n - len(text)) + data[8 + n:]


_LOADED: dict[tuple[str, str], Backbone] = {}
"""Backbones loaded in this process, by (resolved path, sha256): a notebook's kernel and each pool worker
read the file once."""


def load_backbone(path: str | os.PathLike | None = None, sha256: str | None = None) -> Backbone:
    """The backbone at ``path`` (default: the shipped one, checked against :data:`SHIPPED_SHA256`; another path
    is checked against ``sha256`` when given). Raises StyleError naming the file when it is missing, damaged
    (another sha256) or not a backbone."""
    if path is None:
        path, sha256 = SHIPPED_BACKBONE, SHIPPED_SHA256
    p = Path(path)
    if not p.is_file():
        raise StyleError(f"{p}: the writer-style backbone is missing (it ships with the repository in "
                         f"data/models/; `inkground style-backbone train` makes it again from its card)")
    digest = sha256_file(p)
    if sha256 and digest != sha256:
        raise StyleError(f"{p}: sha256 {digest} is not the expected {sha256} (a damaged or other backbone)")
    key = (str(p.resolve()), digest)
    if key in _LOADED:
        return _LOADED[key]
    from safetensors import safe_open

    try:
        with safe_open(str(p), framework="pt") as f:
            meta = f.metadata() or {}
            state = {k: f.get_tensor(k) for k in f.keys()}
        state = {k: v.to(torch.float32) if v.is_floating_point() else v for k, v in state.items()}
        if meta.get("format") != BACKBONE_FORMAT:
            raise StyleError(f"{p}: format {meta.get('format')!r}, expected {BACKBONE_FORMAT!r}")
        record = json.loads(meta.get("record", "{}"))
    except StyleError:
        raise
    except Exception as e:  # a torn or foreign file
        raise StyleError(f"{p}: not a writer-style backbone ({type(e).__name__}: {e})") from None
    body = new_body()
    missing, unexpected = body.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise StyleError(f"{p}: tensors do not fit the ResNet-18 body (missing {list(missing)[:3]}, "
                         f"unexpected {list(unexpected)[:3]})")
    body.eval()
    bb = Backbone(body=body, sha256=digest, record=record, path=p)
    _LOADED.clear()  # one backbone at a time: ~45 MB each
    _LOADED[key] = bb
    return bb


def backbone_available() -> bool:
    """Whether the shipped backbone is present (the book's default Style recipe needs it)."""
    return SHIPPED_BACKBONE.is_file()
