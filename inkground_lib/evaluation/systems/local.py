"""Systems that always run here: the reference itself, the box and font baselines, a derenderer."""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

import numpy as np

from inkground_lib.components.derenderers.base import DerenderError, crop_word
from inkground_lib.components.derenderers.factory import make_derenderer
from inkground_lib.core.files import sha256_json
from inkground_lib.core.ink import Ink, as_ink
from inkground_lib.evaluation.systems.base import (
    BaseSystem,
    Item,
    RawOutput,
    SystemConfigError,
    SystemUnavailable,
    file_sha,
)


def _box_of(item: Item, where: str) -> tuple[float, float, float, float]:
    x0, y0, x1, y1 = (float(v) for v in item.box)
    if not all(np.isfinite([x0, y0, x1, y1])) or x1 < x0 or y1 < y0:
        raise SystemConfigError(f"{where}: word {item.word_id}: bad box {item.box}")
    return x0, y0, x1, y1


class ReferenceSystem(BaseSystem):
    """The reference ink itself (sanity check: scores DTW 0)."""

    adapter = "reference"

    def _key_extra(self, item):
        ref = item.reference
        return {"ink": None if ref is None else sha256_json([np.round(s, 3).tolist() for s in as_ink(ref).strokes])}

    def predict(self, item: Item) -> RawOutput:
        if item.reference is None:
            return RawOutput(status="error", error=f"word {item.word_id}: no reference ink", attempts=0)
        return RawOutput(strokes=as_ink(item.reference), status="ok")


class BoxSystem(BaseSystem):
    """Knows where, not what: a line (default) or a zig-zag through the word box (see module doc)."""

    adapter = "box"
    hashed_fields = ("shape",)

    def __init__(self, name, cfg):
        super().__init__(name, cfg)
        self.shape = cfg.get("shape") or "line"
        if self.shape not in ("line", "zigzag"):
            raise SystemConfigError(f"system {name}: field shape: must be line or zigzag, got {self.shape!r}")

    def answer_params(self):
        return {"shape": self.shape}

    def predict(self, item: Item) -> RawOutput:
        return RawOutput(strokes=box_ink(_box_of(item, self.name), self.shape), status="ok")


def box_ink(box, shape: str = "line") -> Ink:
    """The box baseline's ink for ``box`` = (x0, y0, x1, y1) page pixels (see module doc)."""
    x0, y0, x1, y1 = box
    cy, h = (y0 + y1) / 2, max(y1 - y0, 1e-9)
    if shape == "line":
        pts = [[x0, cy], [x1, cy]]
    elif shape == "zigzag":
        n = max(int(round((x1 - x0) / (0.5 * h))), 1)
        xs = np.linspace(x0, x1, n + 1)
        ys = np.where(np.arange(n + 1) % 2 == 0, y0 + 0.75 * h, y0 + 0.25 * h)
        pts = np.column_stack([xs, ys])
    else:
        raise ValueError(f"box_ink: unknown shape {shape!r}")
    return as_ink([np.asarray(pts, float)], "box baseline")


class FontSystem(BaseSystem):
    """The word typed in a Hershey font, fitted into the word box (readable, no style)."""

    adapter = "font"
    hashed_fields = ("font",)

    def __init__(self, name, cfg):
        super().__init__(name, cfg)
        self.font = cfg.get("font") or "futural"
        from HersheyFonts import HersheyFonts

        if self.font not in HersheyFonts().default_font_names:
            raise SystemConfigError(f"system {name}: field font: {self.font!r} is not a Hershey font")

    def answer_params(self):
        return {"font": self.font}

    def predict(self, item: Item) -> RawOutput:
        ink = font_ink(item.text, _box_of(item, self.name), self.font)
        if ink.n_points == 0:
            return RawOutput(status="error", error=f"word {item.word_id}: the font has no glyph for "
                                                  f"{item.text!r}", attempts=0)
        return RawOutput(strokes=ink, status="ok")


@functools.lru_cache(maxsize=8)
def _hershey(font: str):
    from HersheyFonts import HersheyFonts

    f = HersheyFonts()
    f.load_default_font(font)
    f.normalize_rendering(100)
    return f


def font_ink(text: str, box, font: str = "futural") -> Ink:
    """``text`` typed in Hershey ``font``, scaled uniformly to fit inside ``box`` (page pixels) and centred.
    Hershey y points up; it is flipped to page y down. Returns an empty Ink when no glyph draws."""
    strokes = [np.asarray(s, float) for s in _hershey(font).strokes_for_text(text) if len(s)]
    if not strokes:
        return Ink(())
    strokes = [np.column_stack([s[:, 0], -s[:, 1]]) for s in strokes]
    allp = np.concatenate(strokes)
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    ext = np.maximum(hi - lo, 1e-9)
    x0, y0, x1, y1 = box
    bw, bh = max(x1 - x0, 1e-9), max(y1 - y0, 1e-9)
    scale = min(bw / ext[0], bh / ext[1])
    off = np.array([x0 + (bw - ext[0] * scale) / 2, y0 + (bh - ext[1] * scale) / 2])
    return as_ink([(s - lo) * scale + off for s in strokes], "font baseline")


class DerenderSystem(BaseSystem):
    """A derenderer (:mod:`inkground_lib.components.derenderers`) applied to the word crop cut by
    :func:`inkground_lib.components.derenderers.base.crop_word` (box grown by ``grow``, default 0.1 = +10% width and height, as
    InkSight's full-page use does); ``derender(crop, crop_box, text)`` returns the ink in page pixels. A
    derenderer that keeps its answers in a trace store (the skeleton, the tracer) reads them where the store of
    :func:`item_traces` holds their content key: section 02's answers on the benchmark's words, and the
    skeleton system's traces for the tracer system. The answer is the same either way, bit for bit."""

    kind = "specialist"
    hashed_fields = ("grow",)
    trace_logs: tuple = ()
    """Paths of more trace stores to read answers from (section 03 passes section 02's: the recorded pages it
    derendered); the answers are the same, so a system's request key does not depend on them."""

    def __init__(self, name, cfg, derenderer, adapter):
        super().__init__(name, cfg)
        self.adapter = adapter
        self.grow = float(cfg.get("grow", 0.1))
        self.derenderer = derenderer

    def answer_params(self):
        return {"grow": self.grow, "derenderer": type(self.derenderer).__name__,
                "derenderer_params": repr(getattr(self.derenderer, "params", None))}

    def _key_extra(self, item):
        # the photo's bytes and the derenderer's source code: a changed derenderer is asked again
        import inspect

        code = inspect.getsourcefile(type(self.derenderer))
        extra = {"code": file_sha(code) if code else None}
        if item.page_image is not None:
            extra["photo"] = file_sha(str(item.page_image))
        else:
            extra["photo"] = hashlib.sha256(np.ascontiguousarray(item.image).tobytes()).hexdigest()
        return extra

    def predict(self, item: Item) -> RawOutput:

        crop, cb = crop_word(item.load_image(), _box_of(item, self.name), grow=self.grow)
        crop = np.ascontiguousarray(crop)
        if getattr(self.derenderer, "uses_traces", False):
            ink = self.derenderer.derender(crop, cb, item.text, traces=item_traces(item, self.trace_logs))
        else:
            ink = self.derenderer.derender(crop, cb, item.text)
        return RawOutput(strokes=as_ink(ink, f"{self.name}: word {item.word_id}"), status="ok")


def item_traces(item: Item, logs=()):
    """Where a derenderer's answers on ``item``'s word crop are looked up (by content key, see
    :mod:`inkground_lib.components.derenderers.traces`) and kept: this process's own store (the skeleton and
    tracer systems share it), then the trace store of the pseudo-label run that made the item's dataset when it
    is a benchmark set (:func:`benchmark_traces`), then the stores at the paths ``logs``, each followed by the
    same store of the earlier runs of its folder (:func:`~inkground_lib.components.derenderers.traces.
    earlier_stores`: a rerun's benchmark reads the book's section 02 traces); each file once, only read."""
    from inkground_lib.components.derenderers.traces import StoreChain, earlier_stores, opened_store, process_store

    stores, seen = [process_store()], set()
    path = benchmark_traces(str(Path(item.page_image).parent)) if item.page_image is not None else None
    for p in ([path] if path else []) + list(logs):
        for st in [opened_store(p)] + earlier_stores(p):
            if st is not None and id(st) not in seen:
                seen.add(id(st))
                stores.append(st)
    return StoreChain(stores)


@functools.lru_cache(maxsize=64)
def benchmark_traces(folder: str):
    """The trace store (:func:`inkground_lib.core.run_files.traces_jsonl`) of the pseudo-label run whose benchmark
    set holds page photos in ``folder``: the dataset is the first of ``folder`` and its three parents holding a
    manifest; a manifest of kind "benchmark" is a benchmark set, made inside its run
    (:func:`~inkground_lib.core.run_files.benchmark_run_dir`). None when the dataset is not a benchmark set (the
    path is given for one whose run has no store: the earlier runs' stores may hold its answers)."""
    from inkground_lib.core.run_files import benchmark_run_dir, traces_jsonl
    from inkground_lib.core.validate import MANIFEST

    here = Path(folder)
    for root in (here, *list(here.parents)[:3]):
        manifest = root / MANIFEST
        if manifest.is_file():
            try:
                kind = json.loads(manifest.read_text("utf-8")).get("kind")
            except (OSError, ValueError, AttributeError):
                return None
            path = traces_jsonl(benchmark_run_dir(root))
            return path if kind == "benchmark" else None
    return None


def build_derenderer(adapter: str, name, cfg):
    """The section-03 system of the derenderer ``adapter`` (a row of
    :data:`~inkground_lib.components.derenderers.factory.DERENDERERS` whose card serves "03"): its own builder
    where it has one (:data:`SYSTEM_BUILDERS`: settings from the entry's fields), else the derenderer built by its
    name on the word crop (:class:`DerenderSystem`)."""
    own = SYSTEM_BUILDERS.get(adapter)
    if own is not None:
        return own(name, cfg)
    try:
        return DerenderSystem(name, cfg, make_derenderer(adapter), adapter)
    except DerenderError as e:
        raise SystemUnavailable(f"system {name}: the derenderer {adapter} cannot be loaded: {e}") from None


class TracerSystem(DerenderSystem):
    """inkground's learned tracer (:class:`~inkground_lib.components.derenderers.tracer.derenderer.
    TracerDerenderer`) on the word crop, given the word's text; its answer depends on the weights (their sha256)
    and on the tracer's code (:func:`~inkground_lib.components.derenderers.tracer.derenderer.code_sha256`)."""

    def answer_params(self):
        return dict(super().answer_params(), weights_sha256=self.derenderer.weights_sha256,
                    code_sha256=self.derenderer.code_sha256)


def build_tracer(name, cfg):
    """The ``tracer`` adapter: the shipped weights, or the .npz named by the entry's ``weights`` field."""
    weights = cfg.get("weights")
    try:
        return TracerSystem(name, cfg, make_derenderer(f"tracer:{weights}" if weights else "tracer"), "tracer")
    except DerenderError as e:
        raise SystemUnavailable(f"system {name}: the tracer cannot be loaded: {e}") from None


INKSIGHT_NEEDS = ("InkSight's own environment (requirements-inksight.txt: TensorFlow 2.17.0, tensorflow-text; "
                  "`make inksight-e2e` builds .venv-inksight), its python named by INKSIGHT_PYTHON, and the "
                  "InkSight-Small-p SavedModel on disk (Hugging Face Derendering/InkSight-Small-p), its folder "
                  "named by the environment variable in model_dir_env; use the 'skeleton' system as the "
                  "offline stand-in")


class InkSightSystem(DerenderSystem):
    """InkSight Small-p run as the public notebook runs it (see
    :mod:`inkground_lib.components.derenderers.inksight`): the word crop is the notebook's
    (:func:`~inkground_lib.components.derenderers.inksight.inksight_crop`: the box grown by ``grow``, default
    0.1, of its width and height on EACH side, clipped, truncated to whole pixels), the model is called in
    InkSight's environment through the worker, with the "Derender the ink." retry when the first answer has
    no ink. ``attempts`` of the output is the number of model calls (1, or 2 after the retry); an answer
    with no ink after the retry has status "empty"."""

    def __init__(self, name, cfg, derenderer):
        super().__init__(name, cfg, derenderer, "inksight")

    def answer_params(self):
        return dict(super().answer_params(), crop="inksight-notebook: grow per side, int-truncated")

    def predict(self, item: Item) -> RawOutput:
        from inkground_lib.components.derenderers.inksight import inksight_crop

        crop, cb = inksight_crop(item.load_image(), _box_of(item, self.name), grow=self.grow)
        ink, ans = self.derenderer.derender_answer(np.ascontiguousarray(crop), cb, item.text)
        ink = as_ink(ink, f"{self.name}: word {item.word_id}")
        return RawOutput(strokes=ink, status="ok" if ink.n_points else "empty", attempts=len(ans.prompts))

    def close(self) -> None:
        self.derenderer.close()


def build_inksight(name, cfg):
    from inkground_lib.components.derenderers.inksight import InkSightDerenderer

    var = cfg.get("model_dir_env") or "INKSIGHT_MODEL_DIR"
    model_dir = os.environ.get(var)
    if not model_dir:
        raise SystemUnavailable(f"system {name}: environment variable {var} is not set; InkSight needs "
                                f"{INKSIGHT_NEEDS}")
    try:
        # the registry's timeout: a deadline for each model call's whole answer (the worker's reply line)
        d = InkSightDerenderer(model_dir, **({"call_timeout": float(cfg["timeout"])} if cfg.get("timeout") else {}))
    except (DerenderError, ImportError, OSError) as e:
        raise SystemUnavailable(f"system {name}: InkSight cannot be loaded: {e}") from None
    return InkSightSystem(name, cfg, d)


SYSTEM_BUILDERS = {"tracer": build_tracer, "inksight": build_inksight}
"""Derenderers whose section-03 system reads settings of its registry entry (the tracer's ``weights``, InkSight's
``model_dir_env`` and ``timeout``): adapter name -> builder(name, cfg). Every other derenderer serving section 03
runs by its name alone (:func:`build_derenderer`)."""
