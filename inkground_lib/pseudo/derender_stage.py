"""Stage 1: derender every word of every candidate page (cached per page, resumable)."""

from __future__ import annotations

import time
from concurrent.futures import Executor
from typing import Optional

from inkground_lib.components.derenderers.factory import make_derenderer
from inkground_lib.components.derenderers.traces import TraceStore, run_store
from inkground_lib.core.dataset import Dataset
from inkground_lib.core.files import append_jsonl, sha256_json
from inkground_lib.core.ink import Ink, ink_from_lists, ink_to_lists
from inkground_lib.core.parallel import ordered_map
from inkground_lib.core.run_files import DERENDER_SCHEMA, derender_jsonl, traces_jsonl
from inkground_lib.pseudo.keys import (
    CROP_GROW,
    PseudoError,
    derenderer_config,
    iter_records,
    page_base_key,
    reused_records,
)


TEXT_SOURCES = {"recognize": "the OCR reading of the word's crop", "text": "the word's true text",
                "none": "no text"}
"""What a derenderer is given as the word's text, by its ``text_mode`` (a derenderer without one: "text")."""


def text_mode(der) -> str:
    """The derenderer's text mode (:data:`TEXT_SOURCES`): its ``text_mode`` attribute, else "text"."""
    mode = getattr(der, "text_mode", "text")
    if mode not in TEXT_SOURCES:
        raise PseudoError(f"derenderer {getattr(der, 'name', der)!r}: text_mode {mode!r} is not one of "
                          f"{', '.join(TEXT_SOURCES)}")
    return mode


def word_texts(page, mode: str, readings=None) -> list:
    """The text each word of ``page`` is derendered with in text mode ``mode``: its OCR reading (``readings``, a
    :class:`~inkground_lib.pseudo.crop_readings.CropReadings`) in "recognize", its transcription in "text",
    None in "none"."""
    if mode == "none":
        return [None] * len(page.words)
    if mode == "text":
        return [w.text for w in page.words]
    if readings is None:
        raise PseudoError("derender: the derenderer's text mode is 'recognize' but no OCR readings of the crops "
                          "were given (pseudo.crop_readings.read_crops)")
    missing = [w.id for w in page.words if w.id not in readings.texts]
    if missing:
        raise PseudoError(f"derender: page {page.id}: no OCR reading of {len(missing)} word(s), e.g. {missing[:3]}")
    return [readings.texts[w.id] for w in page.words]


def derender_page(job) -> tuple[dict, list[dict]]:
    """One page's cache record and the trace store entries made for it: ``job`` = (page, derenderer object,
    record key[, trace store entries already made on this page's photo[, the text each word is given]]; without
    texts, each word's transcription). Runs in a pool worker or here;
    the record is {schema, key, page, derenderer, text_mode, words: {word id: ink lists}, errors, seconds},
    ``seconds``
    the time derendering the page took, counting each answer read from the trace store at the seconds it took
    to make (:attr:`~inkground_lib.components.derenderers.traces.TraceStore.reused_seconds`)."""
    from inkground_lib.components.derenderers.base import DerenderError, crop_word
    from inkground_lib.components.derenderers.traces import TraceStore, run_store

    page, der, key = job[:3]
    store = TraceStore(entries=job[3] if len(job) > 3 else ()) if getattr(der, "uses_traces", False) else None
    texts = job[4] if len(job) > 4 else [w.text for w in page.words]
    t0 = time.perf_counter()
    photo = page.load_image() if page.words else None
    inks, errors = {}, {}
    cropper = getattr(der, "crop", None)  # a derenderer with its own crop rule (InkSight's notebook)
    crops = {}
    for w, text in zip(page.words, texts):
        try:
            crops[w.id] = (*(cropper(photo, w.box) if cropper else crop_word(photo, w.box, grow=CROP_GROW)), text)
        except DerenderError as e:
            errors[w.id] = str(e)
    batch = getattr(der, "derender_batch", None)  # the tracer: one network call for the page's words
    made = None
    if batch is not None and crops:
        try:
            made = dict(zip(crops, batch(list(crops.values()), traces=store)))
        except DerenderError:
            made = None  # a word the derenderer refuses: each word alone below, so only that one fails
    for w in page.words:
        if w.id in errors:
            ink = Ink()
        elif made is not None:
            ink = made[w.id]
        else:
            crop, cbox, text = crops[w.id]
            try:
                ink = (der.derender(crop, cbox, text) if store is None
                       else der.derender(crop, cbox, text, traces=store))
            except DerenderError as e:
                ink, errors[w.id] = Ink(), str(e)
        inks[w.id] = ink_to_lists(ink)
    seconds = time.perf_counter() - t0 + (store.reused_seconds if store is not None else 0.0)
    rec = {"schema": DERENDER_SCHEMA, "key": key, "page": page.id, "derenderer": derenderer_config(der)["name"],
           "text_mode": text_mode(der), "words": inks, "errors": errors, "seconds": round(seconds, 4)}
    return rec, (store.take_new() if store is not None else [])


def derender_dataset(ds: Dataset, derenderer, run_dir, progress: bool = True,
                     workers: Optional[int] = None, executor: Optional[Executor] = None,
                     traces=None, readings=None) -> dict[str, Ink]:
    """Pseudo-labels of every word of every page of ``ds``: {word id: ink in page pixels}.

    Each word is cut out with the derenderer's own ``crop(photo, box)`` where it has one (InkSight: the public
    notebook's crop), else :func:`~inkground_lib.components.derenderers.base.crop_word` (box grown by 10%, at
    least 2 px), and derendered with the text its text mode asks for (:func:`word_texts`: "recognize", the tracer's
    ``tracer-recognize``, is given the OCR reading of the crop in ``readings``, a
    :class:`~inkground_lib.pseudo.crop_readings.CropReadings`; "text" the word's transcription; "none" nothing;
    the skeleton derenderer ignores the text); the mode is part of each page's key and written in its record.
    Results go page by page
    to ``run_dir/derender-<name>.jsonl`` (one record per page: key, inks rounded to 0.01 px, per-word
    errors, seconds); pages whose record (same key, see the module doc) exists there, or in the same log of an
    earlier run (:func:`~inkground_lib.pseudo.keys.reused_records`: the book's run, a rerun's; appended to this
    one), are not recomputed. A word
    whose box lies outside the photo gets an empty ink and its error is recorded. Inks are always returned
    as stored (rounded), so a fresh run and a resumed one give identical pseudo-labels. Pages are derendered
    in ``workers`` processes (:mod:`inkground_lib.core.parallel`; None: every core) when the derenderer
    says it can run there (``parallel = True``, e.g. skeleton); records are written here, in page order, so the cache file is the same for any
    number of workers. ``executor`` (:func:`inkground_lib.core.parallel.executor`: a pool or a Dask
    cluster) replaces the pool of ``workers`` when given.

    A derenderer that keeps its answers in a trace store (``uses_traces``: the skeleton, the tracer;
    :mod:`inkground_lib.components.derenderers.traces`) reads them from ``traces`` (a path or a
    :class:`~inkground_lib.components.derenderers.traces.TraceStore`; None: ``run_dir/traces.jsonl``; a path
    reads on in the earlier runs' stores, :func:`~inkground_lib.components.derenderers.traces.run_store`) where
    the store holds their content keys, and the answers it makes are appended there, one line per page (each
    worker is sent the entries made on its page's photo). So a crop the skeleton traced is not traced again
    by the tracer, nor the other way round, and a derender log rebuilt from the store costs no trace.
    """
    from inkground_lib.core.progress import bar as progress_bar

    der = make_derenderer(derenderer)
    dcfg = derenderer_config(der)
    path = derender_jsonl(run_dir, dcfg["name"])
    mode = text_mode(der)
    bases = {page.id: page_base_key(page) for page in ds.pages}
    texts = {page.id: word_texts(page, mode, readings) for page in ds.pages}
    # the texts given are part of the key only where they are not the page's own (already in its base key)
    keys = {page.id: sha256_json({"base": bases[page.id], "derenderer": dcfg, **(
        {"texts": texts[page.id], "reader": readings.engine} if mode == "recognize" else
        {"texts": None} if mode == "none" else {})}) for page in ds.pages}
    page_of = {keys[page.id]: page for page in ds.pages}
    # {key: {word id: Ink}}: each record's inks as arrays at once - as JSON lists (a Python list per point)
    # the 2,984 pages' ~15M points took ~2 GB - and the records of pages not in ``ds`` are not kept
    done: dict[str, dict[str, Ink]] = {}

    def keep(rec: dict) -> None:
        page = page_of[rec["key"]]
        done[rec["key"]] = {w.id: ink_from_lists(rec["words"][w.id], f"{path}: page {page.id}: word {w.id}")
                            for w in page.words}

    for r in reused_records(path, DERENDER_SCHEMA, page_of):  # one page's record at a time; earlier runs' too
        keep(r)
    todo = [page for page in ds.pages if keys[page.id] not in done]
    store = None
    if todo and getattr(der, "uses_traces", False):
        store = traces if isinstance(traces, TraceStore) else run_store(traces_jsonl(run_dir) if traces is None
                                                                         else traces)
    jobs = [(page, der, keys[page.id], store.for_photo(bases[page.id]["image"]) if store is not None else [],
             texts[page.id]) for page in todo]
    if not getattr(der, "parallel", False):  # e.g. a TensorFlow model: loaded once, here
        workers, executor = 1, None
    with progress_bar(total=ds.n_words, desc=f"derender ({dcfg['name']})", unit="word", enabled=progress) as bar:
        bar.update(sum(len(p.words) for p in ds.pages) - sum(len(p.words) for p in todo))
        for page, (rec, made) in zip(todo, ordered_map(derender_page, jobs, workers=workers, executor=executor)):
            if made:  # before the page's record: a run killed between the two finds the answers made
                store.append(made, bases[page.id]["image"])
            append_jsonl(path, rec)
            keep(rec)
            bar.update(len(page.words))
    out: dict[str, Ink] = {}
    for page in ds.pages:
        inks = done[keys[page.id]]
        for w in page.words:
            out[w.id] = inks[w.id]
    return out


def recorded_seconds(run_dir, derenderer, ds: Dataset) -> float:
    """Derendering time of the pages of ``ds`` as recorded in the derender log of ``derenderer`` in ``run_dir``
    (seconds; the last record of each page counts; an answer read from the trace store counts the seconds it
    took to make, so the time does not depend on which derenderer ran first)."""
    pages = {p.id for p in ds.pages}
    last = {r.get("page"): float(r.get("seconds", 0.0))
            for r in iter_records(derender_jsonl(run_dir, derenderer_config(derenderer)["name"]), DERENDER_SCHEMA)
            if r.get("page") in pages}
    return float(sum(last.values()))


def derender_errors(run_dir, derenderer) -> dict[str, str]:
    path = derender_jsonl(run_dir, derenderer_config(derenderer)["name"])
    errs: dict[str, str] = {}
    for r in iter_records(path, DERENDER_SCHEMA):
        errs.update(r.get("errors", {}))
    return errs
