"""OCR of the renders of predicted inks (for AR / CR): each distinct drawing rendered once and each distinct render
read once, batches read on an executor where the engine allows it, texts reused from a memo, a benchmark's section-02 reads and a
render-OCR log (:mod:`inkground_lib.evaluation.render_ocr_log`)."""

from __future__ import annotations

from inkground_lib.components.ocr import make_engine
from inkground_lib.core.defaults import OCR_BATCH_WORDS
from inkground_lib.core.files import sha256_array
from inkground_lib.core.ink import drawing_digest, ink_digest
from inkground_lib.core.parallel import windowed_map
from inkground_lib.core.progress import bar as progress_bar
from inkground_lib.core.render import render_ink
from inkground_lib.evaluation.render_ocr_log import (
    append_render_texts,
    render_ocr_identity,
    render_ocr_log_path,
    reused_render_texts,
)
from inkground_lib.evaluation.settings import EvalSettings
from inkground_lib.pseudo.benchmark import reference_ocr_texts


RENDER_OF = "render of drawing"
"""``memo[(RENDER_OF, drawing digest)]``: the :func:`~inkground_lib.core.files.sha256_array` of the drawing's
render with the default :class:`~inkground_lib.core.render.RenderSpec`, noted by :func:`read_renders` for every
drawing it renders (:func:`~inkground_lib.evaluation.style_features.style_features` computes one render's features
once)."""


def _read_images(job) -> list[str]:
    """Worker: (OCR engine name, renders) -> the OCR text of each render."""
    name, images = job
    return [str(t) for t in make_engine(name, progress=False).read(images)]


def seed_texts(memo: dict, engine: str, inks, texts: dict) -> int:
    """Put into ``memo`` the texts ``texts`` ({:func:`ink_digest`: text}, e.g. a render-OCR log's or section 02's
    reads) holds for ``inks``, under each ink's drawing (:func:`drawing_digest`) unless the memo has it
    already; returns how many were added."""
    n = 0
    if not texts:
        return n
    for ink in inks:
        text = texts.get(ink_digest(ink))
        if text is not None:
            key = (engine, drawing_digest(ink))
            if key not in memo:
                memo[key] = text
                n += 1
    return n


def read_renders(ocr, inks, memo: dict | None = None, executor=None, progress: bool = False,
                 log=None) -> list[str]:
    """OCR of the render of each ink (an empty ink renders blank). Inks that draw the same strokes, in any
    order and direction (:func:`~inkground_lib.core.ink.drawing_digest`), are rendered once, and inks whose
    renders are the same image (:func:`~inkground_lib.core.files.sha256_array`: e.g. the box system's
    outlines of every word wider than four heights) are read once; ``memo`` ({(engine name, drawing digest):
    text} and {(engine name, "render", render digest): text}) carries texts between calls, systems and sections
    (e.g. the skeleton and the tracer, which draws the skeleton's strokes in its own order). ``executor``
    (:func:`inkground_lib.core.parallel.executor`): an engine that can run one per worker (``parallel``)
    reads batches of :data:`~inkground_lib.core.defaults.OCR_BATCH_WORDS` distinct renders there while this
    process renders the next ones (same texts), with a tqdm bar of the drawings resolved when ``progress``.
    ``log``: a render-OCR log (:mod:`inkground_lib.evaluation.render_ocr_log`, by ink digest) whose texts are
    reused and to which each batch read is appended (the inks of its renders known so far), in the same batches
    with or without an executor; the texts the same log of an earlier run holds are reused too
    (:func:`~inkground_lib.evaluation.render_ocr_log.reused_render_texts`), and at the end one more line gives
    the text of every ink the log still lacks (one found in ``memo``: drawn by another system, read in section
    02, or sharing a render), so the log answers a later run that asks for these inks alone."""
    memo = {} if memo is None else memo
    identity = None if log is None else render_ocr_identity(ocr)
    logged: dict = {}
    if log is not None:
        digests = [ink_digest(k) for k in inks]
        logged = reused_render_texts(log, ocr, set(digests))
        seed_texts(memo, ocr.name, inks, logged)
    keys = [(ocr.name, drawing_digest(k)) for k in inks]
    todo = {}
    for k, ink in zip(keys, inks):
        if k not in memo and k not in todo:
            todo[k] = ink
    sharing: dict = {}  # render key -> the drawing keys of this call whose render it is
    batches: list = []  # the render keys of each batch handed to the engine, in order
    parallel = executor is not None and getattr(ocr, "parallel", False)
    renders = _render_batches(todo, memo, sharing, batches, ocr.name)  # a generator: renders when asked
    if not todo:
        texts_of_batches = iter(())
    elif parallel:
        texts_of_batches = windowed_map(executor, _read_images, renders)
    else:
        texts_of_batches = (ocr.read(images) for _, images in renders)  # made str below
    with progress_bar(total=len(todo), desc=f"OCR of renders ({ocr.name})", unit="word",
                      enabled=bool(progress and parallel and todo)) as bar:
        for i, texts in enumerate(texts_of_batches):
            texts = [str(t) for t in texts]
            read_now = []
            for rk, text in zip(batches[i], texts):
                memo[rk] = text
                for k in sharing[rk]:
                    memo[k] = text
                    read_now.append((todo[k], text))
            if log is not None:
                append_render_texts(log, identity, [ink_digest(k) for k, _ in read_now], [t for _, t in read_now])
                logged.update((ink_digest(k), t) for k, t in read_now)
            bar.update(len(read_now))
    for rk, ks in sharing.items():  # drawings that met a render of a batch after it was sent
        for k in ks:
            memo.setdefault(k, memo[rk])
    if log is not None:
        rest = {d: memo[k] for d, k in zip(digests, keys) if d not in logged}
        if rest:
            append_render_texts(log, identity, list(rest), list(rest.values()))
    return [memo[k] for k in keys]


def _render_batches(todo: dict, memo: dict, sharing: dict, batches: list, engine: str):
    """Render each drawing to read (``todo``: drawing key -> ink) and yield ``(engine, images)`` batches of up
    to :data:`~inkground_lib.core.defaults.OCR_BATCH_WORDS` distinct renders, lazily (an executor reads a batch
    while the next is rendered). A render already read (in ``memo`` under ``(engine, "render", digest)``) gives
    its text at once, and one already on its way is not read again: ``sharing`` (render key -> drawing keys)
    records which drawings each render answers, ``batches`` the render keys of each batch yielded, in order; each
    drawing's render digest goes into ``memo`` under ``(RENDER_OF, drawing digest)`` (Style reads it once too)."""
    imgs: list = []
    for k, ink in todo.items():
        img = render_ink(ink)
        rd = sha256_array(img)
        memo[(RENDER_OF, k[1])] = rd  # the drawing's render: Style reads one render once too
        rk = (engine, "render", rd)
        if rk in memo:
            memo[k] = memo[rk]
            continue
        if rk not in sharing:
            imgs.append((rk, img))
        sharing.setdefault(rk, []).append(k)
        if len(imgs) == OCR_BATCH_WORDS:
            batches.append([r for r, _ in imgs])
            yield (engine, [i for _, i in imgs])
            imgs = []
    if imgs:
        batches.append([r for r, _ in imgs])
        yield (engine, [i for _, i in imgs])


def read_all_renders(dataset, runs, settings: EvalSettings, memo: dict, progress: bool = True, executor=None,
                     log_dir=None):
    """OCR of the renders of every run's inks with ``settings.ocr_engine`` (kept in each run's
    ``ocr_texts``), reusing ``memo`` and the texts a benchmark carries from section 02
    (:func:`~inkground_lib.pseudo.benchmark.reference_ocr_texts`; ``dataset``: the Dataset or its folder), which
    stand for every ink that draws what the ink section 02 read draws (:func:`read_renders`); ``executor``: see
    :func:`read_renders`; ``log_dir``: keep the texts read in a render-OCR log there (resumable). Returns the
    engine."""
    ocr = make_engine(settings.ocr_engine, progress=progress)
    runs = list(runs)
    inks = [[ink if ink is not None else [] for ink in run.inks] for run in runs]
    folder = getattr(dataset, "root", dataset)
    seed_texts(memo, ocr.name, (k for run_inks in inks for k in run_inks), reference_ocr_texts(folder, ocr.name))
    for run, run_inks in zip(runs, inks):
        if ocr.name not in run.ocr_texts:
            run.ocr_texts[ocr.name] = read_renders(
                ocr, run_inks, memo, executor, progress,
                None if log_dir is None else render_ocr_log_path(log_dir, ocr))
    return ocr
