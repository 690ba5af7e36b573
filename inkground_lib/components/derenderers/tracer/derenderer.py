"""TracerDerenderer: the skeleton's strokes, put in the writer's order and direction by the tracer network."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from inkground_lib.components.derenderers.base import Box, as_gray, check_box
from inkground_lib.components.derenderers.skeleton import SkeletonDerenderer, SkeletonParams, page_ink
from inkground_lib.components.derenderers.tracer.features import stroke_features, text_ids
from inkground_lib.core.ink import Ink


CODE_FILES = ("skeleton.py", "tracer/features.py", "tracer/inference.py", "tracer/model.py", "tracer/derenderer.py")
"""The source files (under components/derenderers/) whose code decides a traced ink besides the weights."""


def code_sha256() -> str:
    """sha256 over :data:`CODE_FILES`: part of what identifies the tracer's output (a cached pseudo-label or
    prediction is made again when the code that made it changed)."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for name in CODE_FILES:
        h.update(name.encode() + b"\0" + (root / name).read_bytes())
    return h.hexdigest()


def _trace_chunk(job) -> list:
    skeleton, grays = job
    return [skeleton.trace(g) for g in grays]


class TracerDerenderer:
    """Word crop (+ its text) -> ink in page pixels, in pen order with direction (see the package doc).

    The crop is traced by :class:`~inkground_lib.components.derenderers.skeleton.SkeletonDerenderer`
    (geometry); the network (weights: ``weights`` path, default the shipped ones, sha256-checked) orders
    and directs the strokes, conditioned on ``text`` where given. t is synthesised as the skeleton does
    (``skeleton_params.speed`` ink heights per second along the path and the pen-up gaps). ``threads``:
    torch threads while the network runs (default 1: the network is tiny, and torch's threads spin badly
    on a shared CPU: 2 threads were 10x slower there; torch's setting is restored after each call).
    :meth:`derender_batch` traces many words with one network call per ``batch_size`` words.
    """

    name = "tracer"
    parallel = True  # picklable (the network is reloaded, sha256-checked, in each worker): page-parallel

    def __init__(self, weights: str | os.PathLike | None = None, sha256: Optional[str] = None,
                 skeleton_params: SkeletonParams = SkeletonParams(), threads: int = 1,
                 batch_size: int = 256):
        from inkground_lib.components.derenderers.tracer.weights import load_net

        self._net, record = load_net(weights, sha256)
        self._weights = weights
        self.weights_sha256 = record["sha256"]
        self.code_sha256 = code_sha256()
        self.skeleton_params = skeleton_params
        self.batch_size = int(batch_size)
        self._skeleton = SkeletonDerenderer(skeleton_params)
        self._use_text = bool(record["net"].get("use_text", True))
        self.threads = int(threads)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_net")
        return state

    def __setstate__(self, state: dict) -> None:
        import torch

        from inkground_lib.components.derenderers.tracer.weights import load_net

        self.__dict__.update(state)
        torch.set_num_threads(1)  # one worker process a core
        self._net, _ = load_net(self._weights, self.weights_sha256)

    def arrange(self, strokes_list: Sequence[Sequence[np.ndarray]], texts: Sequence[Optional[str]]):
        """Each word's strokes (pixels) in the network's order and direction."""
        # torch (through inference): loaded when a word is traced, not when the factory is imported
        import torch

        from inkground_lib.components.derenderers.tracer.inference import arrange, predict

        feats = [stroke_features(s) for s in strokes_list]
        tids = [text_ids(t) if self._use_text else np.zeros(0, np.int64) for t in texts]
        todo = [i for i, s in enumerate(strokes_list) if len(s) > 0]
        out = [list(s) for s in strokes_list]
        if todo:
            before = torch.get_num_threads()
            torch.set_num_threads(self.threads)
            try:
                pred = predict(self._net, [feats[i] for i in todo], [tids[i] for i in todo], self.batch_size)
            finally:
                torch.set_num_threads(before)
            for i, (order, reverse) in zip(todo, pred):
                out[i] = arrange(strokes_list[i], order, reverse)
        return out

    def _page_ink(self, strokes: Sequence[np.ndarray], box: Box, shape) -> Ink:
        return page_ink(strokes, box, shape, self.skeleton_params, "tracer output")

    def derender_batch(self, items: Sequence[tuple], workers: int = 1) -> list[Ink]:
        """Inks of many words: ``items`` = [(crop, crop_box, text), ...] (text may be None). With ``workers``
        > 1 the skeleton traces the crops in that many processes (:func:`inkground_lib.core.parallel.
        ordered_map`, chunks of 64 words; same result); the network runs here."""
        from inkground_lib.core.parallel import ordered_map

        boxes = [check_box(box) for _, box, _ in items]
        grays = [as_gray(crop) for crop, _, _ in items]
        chunks = [(self._skeleton, grays[a:a + 64]) for a in range(0, len(grays), 64)]
        traced = [t for part in ordered_map(_trace_chunk, chunks, workers=workers, min_jobs=2) for t in part]
        grays = [g.shape for g in grays]
        arranged = self.arrange(traced, [it[2] for it in items])
        return [self._page_ink(s, b, g) for s, b, g in zip(arranged, boxes, grays)]

    def derender(self, crop: np.ndarray, crop_box: Box, text: Optional[str] = None) -> Ink:
        """Ink in page pixels of one word (see the class doc); a blank crop gives an empty ink."""
        return self.derender_batch([(crop, crop_box, text)])[0]
