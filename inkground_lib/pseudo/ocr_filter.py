"""Stage 2: the OCR filter (original crop vs render of its pseudo-label; a page passes above a threshold)."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from concurrent.futures import Executor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from inkground_lib.core.dataset import Dataset
from inkground_lib.core.defaults import OCR_THRESHOLD
from inkground_lib.core.files import append_jsonl, sha256_json
from inkground_lib.core.ink import Ink, ink_to_lists
from inkground_lib.core.parallel import ordered_map
from inkground_lib.core.run_files import ocr_jsonl
from inkground_lib.pseudo.crop_readings import make_engine, page_crops
from inkground_lib.pseudo.keys import (
    OCR_SCHEMA,
    PseudoError,
    engine_config,
    page_base_key,
    reused_records,
)


@dataclass
class OCRFilterResult:
    """``pages``: page, words, matched, match_rate (NaN without words), ocr_pass. ``words``: page, word_id,
    text, ocr_original, ocr_rendered, match. ``threshold``: the pass threshold (share of words)."""

    pages: pd.DataFrame
    words: pd.DataFrame
    threshold: float


def ocr_page(job) -> dict:
    """One page's OCR record: ``job`` = (page, pseudo-label inks in word order, engine name or object, key[,
    the readings of the page's crops made already, in word order]). Reads the crop of every word (as
    :func:`~inkground_lib.pseudo.crop_readings.page_crops` cuts it) unless its reading is given, and the render
    of its pseudo-label. Runs in a pool worker or here."""
    from inkground_lib.core.render import render_ink

    page, inks, engine, key = job[:4]
    given = job[4] if len(job) > 4 else None
    eng = make_engine(engine)
    t0 = time.perf_counter()
    renders = [render_ink(ink) for ink in inks] if page.words else []
    if given is None:
        originals = page_crops(page)
        texts_o = list(eng.read(originals)) if originals else []
    else:
        texts_o = list(given)
    texts_r = list(eng.read(renders)) if renders else []
    return {"schema": OCR_SCHEMA, "key": key, "page": page.id, "engine": engine_config(eng)["name"],
            "original": [str(t) for t in texts_o], "rendered": [str(t) for t in texts_r],
            "seconds": round(time.perf_counter() - t0, 4)}


def ocr_filter(ds: Dataset, pseudo: Mapping[str, Ink], engine="rapidocr", threshold: float = OCR_THRESHOLD,
               run_dir=None, progress: bool = True, workers: int | None = None,
               executor: Executor | None = None, originals=None) -> OCRFilterResult:
    """The OCR filter (module doc): per word, OCR of the original crop vs OCR of the render of its
    pseudo-label, equal after normalisation = match; a page passes when matched / words >= ``threshold``;
    a page with no words never passes. With ``run_dir``, the OCR texts are cached per page in
    ``run_dir/ocr-<engine>.jsonl``, keyed by the page, the engine, the render settings and the inks (resumable
    like :func:`derender_dataset`, and read from an earlier run's log where it holds the key:
    :func:`~inkground_lib.pseudo.keys.reused_records`). An engine
    given by name whose class says ``parallel = True`` reads pages in ``workers`` processes (None: every core); records are written here in page
    order, so the cache is the same for any number of workers; ``executor`` (a pool or a Dask cluster,
    :func:`inkground_lib.core.parallel.executor`) replaces the pool of ``workers`` when given. ``originals``:
    the readings of the crops made already by the same engine (a
    :class:`~inkground_lib.pseudo.crop_readings.CropReadings`, e.g. those the tracer's "recognize" mode was
    given): the crops are then not read again (PseudoError when another engine made them)."""
    from inkground_lib.core.progress import bar as progress_bar

    from inkground_lib.components.metrics.readability import normalise_text
    from inkground_lib.core.render import render_config

    if not (isinstance(threshold, (int, float)) and 0.0 <= float(threshold) <= 1.0):
        raise PseudoError(f"ocr_filter: threshold must be a share in [0, 1], got {threshold!r}")
    eng = make_engine(engine)
    ecfg = engine_config(eng)
    rcfg = render_config()
    if originals is not None and originals.engine != ecfg:
        raise PseudoError(f"ocr_filter: the crop readings were made by {originals.engine.get('name')!r} "
                          f"({originals.engine}), not by this filter's engine ({ecfg})")
    missing = [w.id for w in ds.words() if w.id not in pseudo]
    if missing:
        raise PseudoError(f"ocr_filter: no pseudo-label for {len(missing)} word(s), e.g. {missing[:3]}")
    keys = {}
    for page in ds.pages:
        inks = [pseudo[w.id] for w in page.words]
        keys[page.id] = sha256_json({"base": page_base_key(page), "engine": ecfg, "render": rcfg,
                                     "inks": hashlib.sha256(json.dumps([ink_to_lists(k) for k in inks]).encode()).hexdigest()})
    path = None
    done: dict[str, dict] = {}
    if run_dir is not None:
        path = ocr_jsonl(run_dir, ecfg["name"])
        done = {r["key"]: r for r in reused_records(path, OCR_SCHEMA, keys.values())}
    # an engine given by name that can run one per worker (``parallel``) is rebuilt in each pool worker;
    # an engine object (or a heavy one, e.g. DeepSeek-OCR) reads here
    sendable = engine if isinstance(engine, str) and getattr(eng, "parallel", False) else None
    def given(page):
        return None if originals is None else [originals.texts[w.id] for w in page.words]

    todo = [(page, [pseudo[w.id] for w in page.words], sendable, keys[page.id], given(page))
            for page in ds.pages if keys[page.id] not in done]
    page_rows, word_rows = [], []
    with progress_bar(total=ds.n_words, desc=f"OCR filter ({ecfg['name']})", unit="word", enabled=progress) as bar:
        bar.update(ds.n_words - sum(len(j[0].words) for j in todo))
        if sendable is None:
            results = (ocr_page((page, inks, eng, key, g)) for page, inks, _, key, g in todo)
        else:
            results = ordered_map(ocr_page, todo, workers=workers, executor=executor)
        for job, rec in zip(todo, results):
            if len(rec["original"]) != len(job[0].words) or len(rec["rendered"]) != len(job[0].words):
                raise PseudoError(f"OCR engine {ecfg['name']}: returned a wrong number of texts")
            if path is not None:
                append_jsonl(path, rec)
            done[rec["key"]] = rec
            bar.update(len(job[0].words))
    for page in ds.pages:
        rec = done[keys[page.id]]
        matched = 0
        for w, a, b in zip(page.words, rec["original"], rec["rendered"]):
            m = normalise_text(a) == normalise_text(b)
            matched += m
            word_rows.append({"page": page.id, "word_id": w.id, "text": w.text, "ocr_original": a,
                              "ocr_rendered": b, "match": bool(m)})
        n = len(page.words)
        rate = matched / n if n else float("nan")
        page_rows.append({"page": page.id, "words": n, "matched": int(matched), "match_rate": rate,
                          "ocr_pass": bool(n > 0 and rate >= threshold)})
    pages = pd.DataFrame(page_rows, columns=["page", "words", "matched", "match_rate", "ocr_pass"])
    words = pd.DataFrame(word_rows, columns=["page", "word_id", "text", "ocr_original", "ocr_rendered", "match"])
    return OCRFilterResult(pages, words, float(threshold))
