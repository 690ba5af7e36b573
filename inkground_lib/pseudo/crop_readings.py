"""The OCR readings of the word crops of section 02's pages, read once: what the tracer's "recognize" mode is
given (the paper prompts InkSight "Recognize and derender.": the derenderer reads the word itself) and the
"original" side of the OCR filter (:func:`~inkground_lib.pseudo.ocr_filter.ocr_filter`), which reads the same
crops with the same engine.

Each word is cut as the OCR filter cuts it (:func:`~inkground_lib.components.derenderers.base.crop_word`, box
grown by :data:`~inkground_lib.core.defaults.CROP_GROW`; a box off the photo reads a blank 8 x 8 image). With a
run folder the readings are logged page by page in ``ocr-crops-<engine>.jsonl`` (:func:`~inkground_lib.core.
run_files.crop_ocr_jsonl`), keyed by the page (photo digest, word ids, texts and boxes) and the engine's
configuration, and a page whose key is there, or in the same log of an earlier run
(:func:`~inkground_lib.pseudo.keys.reused_records`), is not read again (resumable as every log of inkground).
"""

from __future__ import annotations

import time
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from inkground_lib.core.dataset import Dataset
from inkground_lib.core.files import append_jsonl, sha256_json
from inkground_lib.core.parallel import ordered_map
from inkground_lib.core.run_files import CROP_OCR_SCHEMA, crop_ocr_jsonl
from inkground_lib.pseudo.keys import CROP_GROW, PseudoError, engine_config, page_base_key, reused_records


def make_engine(spec="rapidocr", progress: bool = False):
    """An OCR engine from a name (:func:`~inkground_lib.components.ocr.make_engine`) or an object with
    ``read(images)``; PseudoError for an object without it."""
    from inkground_lib.components.ocr import make_engine

    if not isinstance(spec, str):
        if not callable(getattr(spec, "read", None)):
            raise PseudoError(f"ocr engine: {spec!r} has no read(images) method")
        return spec
    return make_engine(spec, progress=progress)


@dataclass(frozen=True)
class CropReadings:
    """``engine``: the configuration of the engine that read (:func:`~inkground_lib.pseudo.keys.engine_config`);
    ``texts``: {word id: the text it read on the word's crop}; ``seconds``: reading time of the pages read now
    plus the recorded time of those read from the log."""

    engine: dict
    texts: dict = field(default_factory=dict)
    seconds: float = 0.0


def page_crops(page) -> list[np.ndarray]:
    """The word crops of ``page`` as the OCR filter reads them (grey or colour as the photo; a box off the photo:
    a blank 8 x 8 image)."""
    from inkground_lib.components.derenderers.base import DerenderError, crop_word

    out = []
    if page.words:
        photo = page.load_image()
        for w in page.words:
            try:
                crop, _ = crop_word(photo, w.box, grow=CROP_GROW)
                out.append(np.ascontiguousarray(crop))
            except DerenderError:
                out.append(np.full((8, 8), 255, np.uint8))
    return out


def read_page(job) -> dict:
    """One page's record: ``job`` = (page, engine name or object, key). Runs in a pool worker or here."""
    page, engine, key = job
    eng = make_engine(engine)
    t0 = time.perf_counter()
    crops = page_crops(page)
    texts = [str(t) for t in eng.read(crops)] if crops else []
    if len(texts) != len(page.words):
        raise PseudoError(f"OCR engine {engine_config(eng)['name']}: read {len(texts)} texts for the "
                          f"{len(page.words)} words of page {page.id}")
    return {"schema": CROP_OCR_SCHEMA, "key": key, "page": page.id, "engine": engine_config(eng)["name"],
            "texts": dict(zip([w.id for w in page.words], texts)), "seconds": round(time.perf_counter() - t0, 4)}


def read_crops(ds: Dataset, engine="rapidocr", run_dir=None, progress: bool = True,
               workers: Optional[int] = None, executor: Optional[Executor] = None) -> CropReadings:
    """The OCR readings of every word crop of ``ds`` (module doc). ``engine``: a name
    (:func:`~inkground_lib.components.ocr.make_engine`) or an object with ``read(images)``; an engine given by name
    whose class says ``parallel = True`` reads pages in ``workers`` processes (or on ``executor``); records are
    written here in page order, so the log is the same for any number of workers."""
    from inkground_lib.core.progress import bar as progress_bar

    eng = make_engine(engine)
    ecfg = engine_config(eng)
    keys = {p.id: sha256_json({"base": page_base_key(p), "engine": ecfg, "read": "crops"}) for p in ds.pages}
    path = crop_ocr_jsonl(run_dir, ecfg["name"]) if run_dir is not None else None
    done: dict[str, dict] = {}
    if path is not None:
        done = {r["key"]: r for r in reused_records(path, CROP_OCR_SCHEMA, keys.values())}
    sendable = engine if isinstance(engine, str) and getattr(eng, "parallel", False) else None
    todo = [p for p in ds.pages if keys[p.id] not in done]
    with progress_bar(total=ds.n_words, desc=f"OCR of the crops ({ecfg['name']})", unit="word",
                      enabled=progress) as bar:
        bar.update(ds.n_words - sum(len(p.words) for p in todo))
        if sendable is None:
            results = (read_page((p, eng, keys[p.id])) for p in todo)
        else:
            results = ordered_map(read_page, [(p, sendable, keys[p.id]) for p in todo], workers=workers,
                                  executor=executor)
        for p, rec in zip(todo, results):
            if path is not None:
                append_jsonl(path, rec)
            done[rec["key"]] = rec
            bar.update(len(p.words))
    texts, seconds = {}, 0.0
    for p in ds.pages:
        rec = done[keys[p.id]]
        seconds += float(rec.get("seconds", 0.0))
        for w in p.words:
            if w.id not in rec["texts"]:
                raise PseudoError(f"{path}: page {p.id}: no reading of word {w.id} (delete the file to read again)")
            texts[w.id] = rec["texts"][w.id]
    return CropReadings(ecfg, texts, round(seconds, 4))
