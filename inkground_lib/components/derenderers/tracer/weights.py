"""The tracer's weights on disk: an .npz of the network's tensors and a JSON record (no pickle), checked
against a sha256 at load."""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from typing import Optional

import numpy as np

from inkground_lib.components.derenderers.base import DerenderError
from inkground_lib.core.files import atomic_write_bytes
from inkground_lib.core.layout import DATA

SHIPPED_WEIGHTS = DATA / "models" / "tracer.npz"
"""The weights the repository ships (model card: data/models/MODEL.md)."""
SHIPPED_SHA256 = "c70adc21c6fc4062a4eac0826106eb91fbfa5d614416c7e92d6a518f62963428"
"""sha256 of :data:`SHIPPED_WEIGHTS`; loading them checks it."""
SHIPPED_CURVES = DATA / "models" / "tracer-curves.csv"
"""The training and validation curves of the run that made :data:`SHIPPED_WEIGHTS` (its ``curves.csv``)."""


def state_arrays(state: dict, prefix: str = "") -> dict[str, np.ndarray]:
    """A torch state dict (or any dict of tensors) as {prefix + name: numpy array}."""
    return {prefix + k: v.detach().cpu().numpy() for k, v in state.items()}


def npz_bytes(arrays: dict[str, np.ndarray], record: dict) -> bytes:
    """The bytes of an .npz holding ``arrays`` and ``record`` (JSON, under the name ``record``);
    identical inputs give identical bytes (no time stamps in np.savez's zip entries)."""
    buf = io.BytesIO()
    np.savez(buf, record=np.array(json.dumps(record, sort_keys=True)), **arrays)
    return buf.getvalue()


def save_weights(path: str | os.PathLike, net, record: dict) -> str:
    """Write the network's parameters and ``record`` (config, provenance) to ``path``; return its sha256."""
    data = npz_bytes(state_arrays(net.state_dict(), "param/"), {"net": net.cfg.as_dict(), **record})
    atomic_write_bytes(Path(path), data)
    return hashlib.sha256(data).hexdigest()


def read_npz(path: str | os.PathLike, sha256: Optional[str] = None) -> tuple[dict, dict[str, np.ndarray]]:
    """(record, arrays) of an .npz written by :func:`npz_bytes`; DerenderError if the file is missing or its
    sha256 is not ``sha256`` (when given)."""
    p = Path(path)
    if not p.is_file():
        raise DerenderError(f"{p}: tracer weights not found")
    data = p.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if sha256 is not None and digest != sha256:
        raise DerenderError(f"{p}: sha256 {digest} is not the expected {sha256} (damaged or other weights)")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            record = json.loads(str(z["record"]))
            arrays = {k: z[k] for k in z.files if k != "record"}
    except (ValueError, KeyError, OSError) as e:
        raise DerenderError(f"{p}: not a tracer weights file ({e})") from None
    record["sha256"] = digest
    return record, arrays


def load_net(path: str | os.PathLike | None = None, sha256: Optional[str] = None):
    """(TracerNet in eval mode, record) from ``path`` (default: the shipped weights, checked against
    :data:`SHIPPED_SHA256`)."""
    import torch  # heavy: only where a network is built

    from inkground_lib.components.derenderers.tracer.model import NetConfig, TracerNet

    if path is None:
        path, sha256 = SHIPPED_WEIGHTS, SHIPPED_SHA256
    record, arrays = read_npz(path, sha256)
    try:
        net = TracerNet(NetConfig(**record["net"]))
        state = {k[len("param/"):]: torch.from_numpy(np.array(v)) for k, v in arrays.items()
                 if k.startswith("param/")}
        net.load_state_dict(state, strict=True)
    except (KeyError, TypeError, RuntimeError) as e:
        raise DerenderError(f"{path}: the weights do not fit the tracer network ({e})") from None
    net.eval()
    return net, record
