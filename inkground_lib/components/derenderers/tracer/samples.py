"""Training samples for the tracer: recorded words drawn and photographed as recorded pages are, cut out
as the pseudo-label stage cuts them, traced by the skeleton derenderer, and labelled from the true ink.

A sample holds the word's text and writer, the skeleton's strokes and the true strokes (x, y in page
pixels, y down) and, per skeleton stroke, the targets (:func:`stroke_targets`): its *progress* in the
writer's trajectory, its *reversal gain* and its length. Pages are composed one writer a page with
:func:`inkground_lib.datasets.recorded_pages.compose_page` (the writer's scale as ``build_recorded`` takes it),
drawn by :func:`~inkground_lib.datasets.synth.page_layout.clean_page`, photographed, JPEG-encoded and decoded,
and each word is cut with :func:`~inkground_lib.components.derenderers.base.crop_word` around its true box
(box + 10%), as section 02 does. With :class:`RenderAug` the writer's size, pen width, slant, photo effects
and JPEG quality are drawn per page; without, the recorded builder's defaults are used (validation).
"""

from __future__ import annotations

import dataclasses
import io
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from inkground_lib.components.derenderers.base import crop_word
from inkground_lib.components.derenderers.skeleton import SkeletonDerenderer
from inkground_lib.components.metrics.order import stroke_alignment
from inkground_lib.core.defaults import CROP_GROW, SPACING
from inkground_lib.core.ink import Ink, as_ink
from inkground_lib.datasets.recorded_pages import Layout, compose_page
from inkground_lib.datasets.segmentation import core_height
from inkground_lib.datasets.synth.page_layout import clean_page
from inkground_lib.datasets.synth.photo import PhotoEffects, apply_homography, encode_jpeg, photograph


SAMPLE_CODE = (
    "inkground_lib.components.derenderers.tracer.samples",
    "inkground_lib.components.derenderers.skeleton",
    "inkground_lib.components.derenderers.base",
    "inkground_lib.components.metrics.order",
    "inkground_lib.core.ink",
    "inkground_lib.datasets.recorded_pages",
    "inkground_lib.datasets.segmentation",
    "inkground_lib.datasets.synth.page_layout",
    "inkground_lib.datasets.synth.photo",
)
"""The modules whose code decides a training sample (drawing, photographing, cutting, tracing, labelling)."""


def samples_code_sha256() -> str:
    """sha256 over the source files of :data:`SAMPLE_CODE` (name and bytes of each, in that order): part of the
    key of the training-sample cache, so samples made by older code are made again."""
    from inkground_lib.core.files import modules_sha256

    return modules_sha256(SAMPLE_CODE)


@dataclass(frozen=True)
class RenderAug:
    """Ranges (uniform) drawn once per page: ``core_px`` the writer's core height (page px; recorded pages
    use 24), ``pen_width`` (px; recorded pages 2.0-3.4), ``slant`` (x shear per unit of y), ``effects``
    (a factor on every PhotoEffects strength), ``jpeg_quality`` (recorded pages 88)."""

    core_px: tuple[float, float] = (19.0, 31.0)
    pen_width: tuple[float, float] = (1.6, 4.0)
    slant: tuple[float, float] = (-0.2, 0.2)
    effects: tuple[float, float] = (0.3, 1.6)
    jpeg_quality: tuple[int, int] = (65, 95)


@dataclass
class Sample:
    """One traced word: ``skel`` and ``true`` are lists of (n, 2) float64 arrays (page px); ``progress``,
    ``gain`` and ``length`` have one value per skeleton stroke (see :func:`stroke_targets`)."""

    text: str
    writer: str
    skel: list
    true: list
    progress: np.ndarray
    gain: np.ndarray
    length: np.ndarray


def stroke_targets(skel: Sequence[np.ndarray], true: Ink, spacing: float = SPACING):
    """Per skeleton stroke (page px): (progress, gain, length) as
    :func:`~inkground_lib.components.metrics.order.stroke_alignment` gives them, the values section 02's
    order and direction check (:func:`~inkground_lib.components.metrics.order.stroke_order_check`) reads."""
    n = len(skel)
    if n == 0 or true.n_points == 0:
        return np.zeros(n), np.zeros(n), np.zeros(n)
    pseudo = as_ink([np.column_stack([s[:, :2], np.full(len(s), np.nan)]) for s in skel], keep_empty=True)
    a = stroke_alignment(pseudo, true, spacing)
    return a.progress, a.gain, a.length


def _effects(rng: np.random.Generator, aug: Optional[RenderAug]) -> PhotoEffects:
    base = PhotoEffects()
    if aug is None:
        return base
    k = rng.uniform(*aug.effects, size=len(dataclasses.fields(base)))
    return PhotoEffects(**{f.name: getattr(base, f.name) * float(v)
                           for f, v in zip(dataclasses.fields(base), k)})


def _decode_jpeg(data: bytes) -> np.ndarray:
    from PIL import Image  # as Page.load_image reads the page photos

    with Image.open(io.BytesIO(data)) as im:
        return np.asarray(im.convert("RGB"))


def page_samples(job) -> list[Sample]:
    """The samples of one page: ``job`` = (writer, [(text, Ink in source units), ...], the writer's median
    core height (source units), seed (a sequence of ints), RenderAug or None). Words whose crop the
    skeleton finds blank are left out. Deterministic for its job."""
    writer, words, core, seed, aug = job
    layout_rng, photo_rng, aug_rng = np.random.default_rng(list(seed)).spawn(3)
    layout = Layout()
    quality = 88
    inks = [as_ink(ink) for _, ink in words]
    if aug is not None:
        layout = dataclasses.replace(layout, core_px=float(aug_rng.uniform(*aug.core_px)),
                                     pen_width=tuple(sorted(aug_rng.uniform(*aug.pen_width, 2))))
        slant = float(aug_rng.uniform(*aug.slant))
        inks = [Ink(tuple(np.column_stack([s[:, 0] - slant * s[:, 1], s[:, 1:]]) for s in k.strokes))
                for k in inks]
        quality = int(aug_rng.integers(aug.jpeg_quality[0], aug.jpeg_quality[1] + 1))
    eff = _effects(aug_rng, aug)
    from inkground_lib.formats.unipen import RecordedWord

    rw = [RecordedWord(str(i), writer, t, k) for i, ((t, _), k) in enumerate(zip(words, inks))]
    comp = compose_page(rw, layout.core_px / core, layout_rng, layout)
    gray = clean_page(comp.inks, (comp.width, comp.height), comp.pen_width)
    rgb, Hm = photograph(gray, photo_rng, eff)
    photo = _decode_jpeg(encode_jpeg(rgb, quality))
    der = SkeletonDerenderer()
    out = []
    for (text, _), ink in zip(words, comp.inks):
        true = apply_homography(ink, Hm, decimals=2)
        crop, (cx0, cy0, _, _) = crop_word(photo, true.bbox(), grow=CROP_GROW)
        skel = [s + [cx0, cy0] for s in der.trace(crop)]
        if not skel:
            continue
        prog, gain, length = stroke_targets(skel, true)
        out.append(Sample(text, writer, skel, [s[:, :2].copy() for s in true.strokes], prog, gain, length))
    return out


def page_jobs(words, seed: int, aug: Optional[RenderAug], words_per_page: tuple[int, int] = (20, 50)):
    """Jobs for :func:`page_samples` covering every word of ``words`` (RecordedWords) once: each writer's
    words shuffled and dealt to pages of ``words_per_page`` words (the last page may hold fewer), in writer
    order. The writer's scale uses the median core height of all its words, as ``build_recorded`` does."""
    rng = np.random.default_rng([int(seed), 7])
    by_writer: dict[str, list] = {}
    for w in words:
        if any(c.isalpha() for c in w.text):
            by_writer.setdefault(w.writer, []).append(w)
    jobs = []
    for wr in sorted(by_writer):
        ws = by_writer[wr]
        core = float(np.median([core_height(w.ink) for w in ws]))
        order = rng.permutation(len(ws))
        i = 0
        while i < len(ws):
            k = int(rng.integers(words_per_page[0], words_per_page[1] + 1))
            chunk = [ws[j] for j in order[i:i + k]]
            i += k
            jobs.append((wr, [(w.text, w.ink) for w in chunk], core, (int(seed), 11, len(jobs)), aug))
    return jobs


# ---------------------------------------------------------------------------------------------- storage

def _flat(lists):
    arrs = [np.asarray(s, np.float64).reshape(-1, 2) for ss in lists for s in ss]
    pts = np.concatenate(arrs) if arrs else np.zeros((0, 2))
    return pts, np.array([len(a) for a in arrs], np.int64), np.array([len(ss) for ss in lists], np.int64)


def _unflat(pts, slen, wlen):
    ends = np.cumsum(slen)
    strokes = [pts[e - n:e] for e, n in zip(ends, slen)]
    out, k = [], 0
    for n in wlen:
        out.append(strokes[k:k + n])
        k += n
    return out


def save_samples(path, samples: Sequence[Sample]) -> None:
    """Write samples to an .npz file (no pickle)."""
    sp, ss, sw = _flat([s.skel for s in samples])
    tp, ts, tw = _flat([s.true for s in samples])
    cat = lambda name: np.concatenate([getattr(s, name) for s in samples]) if samples else np.zeros(0)  # noqa
    with open(path, "wb") as f:
        np.savez(f, text=np.array([s.text for s in samples], dtype=str),
                 writer=np.array([s.writer for s in samples], dtype=str),
                 skel_pts=sp, skel_slen=ss, skel_wlen=sw, true_pts=tp, true_slen=ts, true_wlen=tw,
                 progress=cat("progress"), gain=cat("gain"), length=cat("length"))


def load_samples(path) -> list[Sample]:
    """Samples written by :func:`save_samples`."""
    with np.load(path, allow_pickle=False) as z:
        skel = _unflat(z["skel_pts"], z["skel_slen"], z["skel_wlen"])
        true = _unflat(z["true_pts"], z["true_slen"], z["true_wlen"])
        ends = np.cumsum(z["skel_wlen"])
        prog, gain, length = z["progress"], z["gain"], z["length"]
        return [Sample(str(t), str(w), sk, tr, prog[e - len(sk):e], gain[e - len(sk):e], length[e - len(sk):e])
                for t, w, sk, tr, e in zip(z["text"], z["writer"], skel, true, ends)]


def synth_words(n: int, seed: int, words_per_writer: int = 40):
    """``n`` synthetic words (RecordedWords, writers ``synth-<seed>-<k>``): greeting-card messages written
    in the Hershey script by :func:`~inkground_lib.datasets.synth.writers.sample_writer` styles, as the
    synthetic dataset writes them (x-height units, y down). Deterministic for (n, seed)."""
    from inkground_lib.datasets.synth.texts import message_words
    from inkground_lib.datasets.synth.writers import sample_writer, write_word
    from inkground_lib.formats.unipen import RecordedWord

    out = []
    k = 0
    while len(out) < n:
        rng = np.random.default_rng([int(seed), 23, k])
        style = sample_writer(rng)
        for j, (text, _) in enumerate(message_words(rng, words_per_writer)):
            if len(out) >= n:
                break
            out.append(RecordedWord(f"synth-{seed}-{k}-{j}", f"synth-{seed}-{k}", text, write_word(text, style, rng)))
        k += 1
    return out
