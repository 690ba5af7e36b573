"""TracerDerenderer: the skeleton's strokes, put in the writer's order and direction by the tracer network."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from inkground_lib.components.derenderers.base import Box, DerenderError, as_gray, check_box
from inkground_lib.components.derenderers.skeleton import SkeletonDerenderer, SkeletonParams, page_ink
from inkground_lib.components.derenderers.tracer.features import stroke_features, text_ids
from inkground_lib.core.files import sha256_json, sources_sha256
from inkground_lib.core.ink import Ink


TEXT_MODES = {
    "recognize": "recognize and derender: given the OCR reading of the word's crop (the paper's InkSight prompt)",
    "text": "derender with text: given the word's true text (InkSight's own name for that mode)",
    "none": "no text: the strokes alone",
}
"""The tracer's text modes: what the network is given besides the strokes. The derenderer reads the ``text``
it is called with in the modes "recognize" and "text" (the caller decides which text that is: the pseudo-label
stage passes the OCR reading of the crop in "recognize", :func:`~inkground_lib.pseudo.derender_stage.
word_text`) and ignores it in "none"."""


TRACER_GEOMETRY = SkeletonParams(work_height=160)
"""The tracer's own geometry: the skeleton's tracing with the crop resized to 160 work pixels tall instead of the
skeleton derenderer's 80 (every other setting the same, so the smoothing, spur and merge lengths shrink in page
units). Measured on the 1,228 words of the 46 held-out writers (issue 37, ``benchmarks/results/tracer_eval.txt``):
median Chamfer 0.0161 -> 0.0139 word heights and median DTW of the tracer (recognize) 0.085 -> ~0.07, with the
network trained on 80-pixel traces unchanged. The price: the skeleton derenderer's trace of a crop is no longer
the tracer's (each is traced once at its own resolution) and tracing costs ~1.7x the time."""


CODE_FILES = ("skeleton.py", "tracer/features.py", "tracer/inference.py", "tracer/model.py", "tracer/derenderer.py")
"""The source files (under components/derenderers/) whose code decides a traced ink besides the weights."""


def code_sha256() -> str:
    """sha256 over :data:`CODE_FILES`: part of what identifies the tracer's output (a cached pseudo-label or
    prediction is made again when the code that made it changed)."""
    root = Path(__file__).resolve().parents[1]
    return sources_sha256((name, root / name) for name in CODE_FILES)


def _trace_chunk(job) -> list:
    """Pool job: (skeleton, gray crops) -> [(strokes in crop pixels, seconds it took), ...]."""
    skeleton, grays = job
    out = []
    for g in grays:
        t0 = time.perf_counter()
        strokes = skeleton.trace(g)
        out.append((strokes, time.perf_counter() - t0))
    return out


class TracerDerenderer:
    """Word crop (+ its text) -> ink in page pixels, in pen order with direction (see the package doc).

    The crop is traced by :class:`~inkground_lib.components.derenderers.skeleton.SkeletonDerenderer` with
    ``skeleton_params`` (geometry; default :data:`TRACER_GEOMETRY`, the tracer's own resolution); the network (weights: ``weights`` path, default the shipped ones, sha256-checked) orders
    and directs the strokes, conditioned on ``text`` where given. t is synthesised as the skeleton does
    (``skeleton_params.speed`` ink heights per second along the path and the pen-up gaps). ``threads``:
    torch threads while the network runs (default 1: the network is tiny, and torch's threads spin badly
    on a shared CPU: 2 threads were 10x slower there; torch's setting is restored after each call).
    :meth:`derender_batch` traces many words with one network call per ``batch_size`` words. With a trace store
    (``traces=``, :mod:`~inkground_lib.components.derenderers.traces`) the skeleton's trace of a crop and the
    network's arrangement of it are read where the store holds their keys (the skeleton derenderer's trace of
    the same crop included, whichever ran first) and kept there when made.
    """

    name = "tracer"
    parallel = True  # picklable (the network is reloaded, sha256-checked, in each worker): page-parallel
    uses_traces = True  # derender(..., traces=): answers read from and kept in a trace store

    def __init__(self, weights: str | os.PathLike | None = None, sha256: Optional[str] = None,
                 skeleton_params: SkeletonParams = TRACER_GEOMETRY, threads: int = 1,
                 batch_size: int = 256, text_mode: Optional[str] = None):
        from inkground_lib.components.derenderers.tracer.weights import load_net

        self._net, record = load_net(weights, sha256)
        self._weights = weights
        self.weights_sha256 = record["sha256"]
        self.code_sha256 = code_sha256()
        self.skeleton_params = skeleton_params
        self.batch_size = int(batch_size)
        self._skeleton = SkeletonDerenderer(skeleton_params)
        reads_text = bool(record["net"].get("use_text", True))
        mode = text_mode if text_mode is not None else ("text" if reads_text else "none")
        if mode not in TEXT_MODES:
            raise DerenderError(f"tracer: text_mode {mode!r} is not one of {', '.join(TEXT_MODES)}")
        if mode != "none" and not reads_text:
            raise DerenderError(f"tracer: weights {weights or 'shipped'} were trained without text; text_mode "
                                f"{mode!r} needs weights that read it (use 'none')")
        self.text_mode = mode
        self._use_text = mode != "none"
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

    def arrangement_key(self, trace_key: str, text: Optional[str]) -> str:
        """The trace store key of the network's arrangement of the skeleton trace of key ``trace_key``: that key,
        the weights and code digests, the text mode (:data:`TEXT_MODES`) and the text given (None in the mode
        "none", which does not read it)."""
        return sha256_json({"arrange": "tracer", "of": trace_key, "weights": self.weights_sha256,
                            "code": self.code_sha256, "mode": self.text_mode,
                            "text": text if self._use_text else None})

    def orders(self, strokes_list: Sequence[Sequence[np.ndarray]], texts: Sequence[Optional[str]]) -> list:
        """Per word: (order, reverse) the network gives its strokes (pixels; see
        :func:`~inkground_lib.components.derenderers.tracer.inference.predict`); a word without strokes gets
        empty ones without a network call."""
        # torch (through inference): loaded when a word is traced, not when the factory is imported
        import torch

        from inkground_lib.components.derenderers.tracer.inference import predict

        out = [(np.zeros(0, np.int64), np.zeros(0, bool))] * len(strokes_list)
        todo = [i for i, s in enumerate(strokes_list) if len(s) > 0]
        if todo:
            feats = [stroke_features(strokes_list[i]) for i in todo]
            tids = [text_ids(texts[i]) if self._use_text else np.zeros(0, np.int64) for i in todo]
            before = torch.get_num_threads()
            torch.set_num_threads(self.threads)
            try:
                pred = predict(self._net, feats, tids, self.batch_size)
            finally:
                torch.set_num_threads(before)
            for i, p in zip(todo, pred):
                out[i] = p
        return out

    def arrange(self, strokes_list: Sequence[Sequence[np.ndarray]], texts: Sequence[Optional[str]]):
        """Each word's strokes (pixels) in the network's order and direction."""
        from inkground_lib.components.derenderers.tracer.inference import arrange

        return [arrange(s, o, r) if len(s) else list(s)
                for s, (o, r) in zip(strokes_list, self.orders(strokes_list, texts))]

    def _page_ink(self, strokes: Sequence[np.ndarray], box: Box, shape) -> Ink:
        return page_ink(strokes, box, shape, self.skeleton_params, "tracer output")

    def derender_batch(self, items: Sequence[tuple], workers: int = 1, traces=None) -> list[Ink]:
        """Inks of many words: ``items`` = [(crop, crop_box, text), ...] (text may be None). With ``workers``
        > 1 the skeleton traces the crops in that many processes (:func:`inkground_lib.core.parallel.
        ordered_map`, chunks of 64 words; same result); the network runs here, once for all the words whose
        arrangement is not in ``traces`` (a trace store; None: one for this call only, so equal crops given the
        same text are traced and arranged once)."""
        from inkground_lib.components.derenderers.traces import (
            TraceStore,
            arrangement_entry,
            crop_digest,
            entry_strokes,
            strokes_entry,
        )
        from inkground_lib.components.derenderers.tracer.inference import arrange
        from inkground_lib.core.parallel import ordered_map

        traces = TraceStore() if traces is None else traces
        boxes = [check_box(box) for _, box, _ in items]
        grays = [as_gray(crop) for crop, _, _ in items]
        texts = [it[2] for it in items]
        tkeys = [self._skeleton.trace_key(crop_digest(g)) for g in grays]
        akeys = [self.arrangement_key(k, t) for k, t in zip(tkeys, texts)]
        found = {k: e for k in dict.fromkeys(akeys) if (e := traces.get(k)) is not None}
        base: dict[str, list] = {}
        for k in dict.fromkeys(tkeys):
            e = traces.get(k)
            if e is not None:
                base[k] = entry_strokes(e)
        first = {}  # the first word of each crop not traced yet, in item order
        for i, k in enumerate(tkeys):
            if k not in base:
                first.setdefault(k, i)
        new = list(first.values())
        chunks = [(self._skeleton, [grays[i] for i in new[a:a + 64]]) for a in range(0, len(new), 64)]
        made = [t for part in ordered_map(_trace_chunk, chunks, workers=workers, min_jobs=2) for t in part]
        for i, (strokes, secs) in zip(new, made):
            traces.put(strokes_entry(tkeys[i], strokes, secs))
            base[tkeys[i]] = strokes
        ask = {}
        for i, k in enumerate(akeys):
            if k not in found and k not in ask:
                ask[k] = i
        if ask:
            idx = list(ask.values())
            t0 = time.perf_counter()
            got = self.orders([base[tkeys[i]] for i in idx], [texts[i] for i in idx])
            secs = (time.perf_counter() - t0) / len(idx)
            for i, (order, reverse) in zip(idx, got):
                e = arrangement_entry(akeys[i], tkeys[i], order, reverse, secs)
                traces.put(e)
                found[akeys[i]] = e
        out = []
        for i, (b, g) in enumerate(zip(boxes, grays)):
            e, strokes = found[akeys[i]], base[tkeys[i]]
            arranged = arrange(strokes, e["order"], [bool(r) for r in e["reverse"]]) if strokes else []
            out.append(self._page_ink(arranged, b, g.shape))
        return out

    def derender(self, crop: np.ndarray, crop_box: Box, text: Optional[str] = None, traces=None) -> Ink:
        """Ink in page pixels of one word (see the class doc); a blank crop gives an empty ink. ``traces``: a
        trace store (see :meth:`derender_batch`)."""
        return self.derender_batch([(crop, crop_box, text)], traces=traces)[0]
