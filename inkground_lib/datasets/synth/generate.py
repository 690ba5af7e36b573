"""Generating a synthetic dataset folder, page by page, seeded, resumable and in parallel."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from inkground_lib.core.dataset import (
    Page,
    Word,
    write_manifest,
    write_page_inks,
)
from inkground_lib.core.defaults import MAX_PAGE_SIDE
from inkground_lib.core.files import atomic_write_bytes, atomic_write_json, modules_sha256
from inkground_lib.core.folders import (
    check_claims,
    check_output_folder,
    claim_files,
    folder_lock,
    may_delete_own_files,
)
from inkground_lib.core.ink import Ink
from inkground_lib.core.parallel import ordered_map
from inkground_lib.datasets.remade import say_remade
from inkground_lib.datasets.synth.page_layout import clean_page, layout_page
from inkground_lib.datasets.synth.photo import (
    PhotoEffects,
    apply_homography,
    encode_jpeg,
    photograph,
)
from inkground_lib.datasets.synth.texts import (
    message_words,
    sample_word_count,
    split_words,
)
from inkground_lib.datasets.synth.writers import WriterStyle, sample_writer

GENERATOR_VERSION = "synth-1"
"""The name of the generator's file layout (``meta["generator"]``). What identifies the code that drew the pages
is :func:`code_sha256`, never this name: nobody has to remember to bump it."""

GENERATOR_CODE = (
    "inkground_lib",
    "inkground_lib.core",
    "inkground_lib.core.dataset",
    "inkground_lib.core.defaults",
    "inkground_lib.core.files",
    "inkground_lib.core.folders",
    "inkground_lib.core.ink",
    "inkground_lib.core.manifest_schema",
    "inkground_lib.core.parallel",
    "inkground_lib.core.progress",
    "inkground_lib.core.render",
    "inkground_lib.datasets",
    "inkground_lib.datasets.remade",
    "inkground_lib.datasets.synth",
    "inkground_lib.datasets.synth.generate",
    "inkground_lib.datasets.synth.glyphs",
    "inkground_lib.datasets.synth.page_layout",
    "inkground_lib.datasets.synth.photo",
    "inkground_lib.datasets.synth.texts",
    "inkground_lib.datasets.synth.writers",
)
"""Every library module the generator may run (its static import closure; a test keeps the two equal): their
code digest is part of the dataset's meta, so pages drawn by other code are drawn again."""


def code_sha256() -> str:
    """sha256 over the source files of :data:`GENERATOR_CODE`
    (:func:`~inkground_lib.core.files.modules_sha256`)."""
    return modules_sha256(GENERATOR_CODE)


@dataclass(frozen=True)
class SynthParams:
    """Parameters of a synthetic dataset (all of them go into the manifest's meta).

    pages: number of pages; seed: page i is drawn from default_rng([seed, i]); words_min / words_max /
    words_mean: words per page (right-skewed distribution, see :func:`sample_word_count`); width / height:
    photo size in px; writers: distinct writers (None = one per page; page i uses writer i mod writers);
    effects: :class:`PhotoEffects`; jpeg_quality: 1-100; punctuation: attach , . ! to words; jitter: scale of
    the per-letter jitter (1 = default, 0 = the font's shapes); size: scale of the x-height (default ~1.9% of
    the page width); sample_hz: pen samples per second (t step 1000 / sample_hz ms)."""

    pages: int = 16
    seed: int = 0
    words_min: int = 2
    words_max: int = 140
    words_mean: float = 35.0
    width: int = 1000
    height: int = 1300
    writers: Optional[int] = None
    effects: PhotoEffects = field(default_factory=PhotoEffects)
    jpeg_quality: int = 88
    punctuation: bool = True
    jitter: float = 1.0
    size: float = 1.0
    sample_hz: float = 100.0

    def validate(self) -> "SynthParams":
        def bad(name, why):
            raise ValueError(f"SynthParams.{name}: {why}, got {getattr(self, name)!r}")
        for k in ("pages", "seed", "words_min", "words_max", "width", "height", "jpeg_quality"):
            v = getattr(self, k)
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
                bad(k, "must be an integer")
        if self.pages < 1:
            bad("pages", "must be >= 1")
        if self.seed < 0:
            bad("seed", "must be >= 0")
        if not 1 <= self.words_min <= self.words_max <= 999:
            bad("words_min", "need 1 <= words_min <= words_max <= 999")
        if not self.words_min <= self.words_mean <= self.words_max:
            bad("words_mean", "must lie in [words_min, words_max]")
        if self.width < 200 or self.height < 200:
            bad("width", "page must be at least 200 x 200 px")
        if self.width > MAX_PAGE_SIDE or self.height > MAX_PAGE_SIDE:
            bad("width" if self.width > MAX_PAGE_SIDE else "height",
                f"page sides are at most {MAX_PAGE_SIDE} px (a 100,000 px page needs tens of GB)")
        if not 1 <= self.jpeg_quality <= 100:
            bad("jpeg_quality", "must be in 1..100")
        if self.writers is not None and not (isinstance(self.writers, int) and self.writers >= 1):
            bad("writers", "must be None or an integer >= 1")
        if not (0 <= self.jitter <= 5 and 0.2 <= self.size <= 5 and 10 <= self.sample_hz <= 1000):
            bad("jitter", "jitter in [0, 5], size in [0.2, 5], sample_hz in [10, 1000] required")
        if not isinstance(self.effects, PhotoEffects):
            bad("effects", "must be a PhotoEffects")
        return self

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["effects"] = dataclasses.asdict(self.effects)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "SynthParams":
        d = dict(d)
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"SynthParams: unknown parameters {sorted(unknown)}")
        if isinstance(d.get("effects"), dict):
            d["effects"] = PhotoEffects(**d["effects"])
        return cls(**d).validate()


def page_id(i: int, pages: int) -> str:
    return f"p{i:0{max(4, len(str(pages - 1)))}d}"


def _streams(seed: int, i: int):
    """(text, writer-hand, photo) generators of page i: children of default_rng([seed, i])."""
    return tuple(np.random.default_rng([seed, i]).spawn(3))


def _page_text(params: SynthParams, i: int):
    t_rng, _, _ = _streams(params.seed, i)
    n = sample_word_count(t_rng, params.words_min, params.words_max, params.words_mean)
    words = message_words(t_rng, n, params.punctuation)
    splits = split_words(t_rng, len(words))
    return words, splits


def _writer(params: SynthParams, i: int) -> tuple[str, WriterStyle]:
    if params.writers is None:
        w = i
        rng = _streams(params.seed, i)[1].spawn(1)[0]
        nw = params.pages
    else:
        w = i % params.writers
        rng = np.random.default_rng([params.seed, w, 7])
        nw = params.writers
    return f"w{w:0{max(4, len(str(nw - 1)))}d}", sample_writer(rng, params.width, params.jitter, params.size)


def page_writer(params: SynthParams, i: int) -> tuple[str, WriterStyle]:
    """(writer id, style) of page ``i`` of the dataset ``params`` describes (without drawing the page)."""
    return _writer(params, i)


def make_page(params: SynthParams, i: int) -> tuple[Page, np.ndarray]:
    """Page ``i`` of the dataset described by ``params``: (Page with words and exact inks, photo RGB uint8).
    The page's image path is ``pages/<id>.jpg`` (relative; :func:`generate` writes it)."""
    pid = page_id(i, params.pages)
    words, splits = _page_text(params, i)
    writer, style = _writer(params, i)
    _, hand_rng, photo_rng = _streams(params.seed, i)
    size = (params.width, params.height)
    inks = layout_page(words, style, hand_rng, size, params.sample_hz)
    gray = clean_page(inks, size, style.pen_width_px)
    photo, Hm = photograph(gray, photo_rng, params.effects, ink_rgb=style.ink_rgb)
    out_words = []
    for j, ((text, _), ink, split) in enumerate(zip(words, inks, splits)):
        true = apply_homography(ink, Hm, decimals=2)
        x0, y0, x1, y1 = true.bbox()
        if x0 < 0 or y0 < 0 or x1 > params.width - 1 or y1 > params.height - 1:
            raise ValueError(f"make_page: page {pid} word {j} ({text!r}) leaves the {params.width} x "
                             f"{params.height} page (box {x0:.1f}, {y0:.1f}, {x1:.1f}, {y1:.1f}); use a smaller "
                             f"SynthParams.size")
        out_words.append(Word(f"{pid}-w{j:03d}", text, (x0, y0, x1, y1), true, pid, split, true))
    page = Page(pid, Path("pages") / f"{pid}.jpg", writer, params.width, params.height, out_words)
    return page, photo


def _page_job(args) -> tuple[Page, bytes]:
    """Worker: make page i; return (page with its inks, JPEG bytes of its photo). Workers write nothing: the
    caller writes both files (so a cluster worker needs no access to the output folder)."""
    params_d, i = args
    params = SynthParams.from_dict(params_d)
    page, photo = make_page(params, i)
    return page, encode_jpeg(photo, params.jpeg_quality)


def _write_page(root: Path, page: Page, jpeg: bytes) -> Page:
    """Write one page's photo and inks (atomically) into ``root``; returns the page without inks."""
    atomic_write_bytes(root / page.image, jpeg)
    page.image = root / page.image
    write_page_inks(root, page)
    return _light(page)


def _light(page: Page) -> Page:
    return Page(page.id, page.image, page.writer, page.width, page.height,
                [dataclasses.replace(w, ink=Ink(), true_ink=None) for w in page.words])


def _resume_page(params: SynthParams, root: Path, i: int) -> Optional[Page]:
    """Rebuild the record of a page already written (image + inks present), or None."""
    pid = page_id(i, params.pages)
    img, inks_path = root / "pages" / f"{pid}.jpg", root / "inks" / f"{pid}.json"
    if not (img.is_file() and inks_path.is_file()):
        return None
    try:
        data = json.loads(inks_path.read_text("utf-8"))
        words, splits = _page_text(params, i)
        writer, _ = _writer(params, i)
        recs = data["words"]
        out = []
        for j, ((text, _), split) in enumerate(zip(words, splits)):
            wid = f"{pid}-w{j:03d}"
            pts = np.array([p[:2] for s in recs[wid]["true"] for p in s], float)
            box = (float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()), float(pts[:, 1].max()))
            out.append(Word(wid, text, box, Ink(), pid, split, None))
        if len(recs) != len(out):
            return None
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    return Page(pid, img, writer, params.width, params.height, out)


def _is_synth_manifest(mpath: Path) -> bool:
    try:
        return json.loads(mpath.read_text("utf-8")).get("kind") == "synth"
    except (OSError, ValueError, AttributeError):
        return False


def _meta(params: SynthParams) -> dict:
    return {"generator": GENERATOR_VERSION, "code_sha256": code_sha256(), "params": params.as_dict()}


def generate(out_dir: str | os.PathLike, params: SynthParams = SynthParams(), progress: bool = True,
             workers: Optional[int] = None, pool_min_pages: int = 8, name: str = "synth",
             overwrite: bool = False, executor: Optional[Executor] = None) -> Path:
    """Write the synthetic dataset ``params`` describes into ``out_dir`` and return the folder.

    Files: ``pages/<id>.jpg`` (photo), ``inks/<id>.json`` (true = reference inks), ``manifest.json`` (kind
    "synth", reference "true ink", meta = {"generator": layout name, "code_sha256": :func:`code_sha256`, "params":
    params}), written last.
    * If a synth manifest with identical meta exists and every file it names is present, the folder is
      returned untouched at once (files are not re-validated: :func:`load_dataset` does that). A folder made
      with other parameters or by other code (another :func:`code_sha256`) is made again, and a line on
      standard error says why (:func:`~inkground_lib.datasets.remade.remade_because`).
    * Otherwise ``generator.json`` records the meta first; pages already complete under the same meta (an
      interrupted run) are reused, all others are (re)written, and page files of ours (``p<digits>``) not in
      the new dataset are removed.
    * ``workers`` processes (default min(2, cpu count)) when there are >= ``pool_min_pages`` pages, or
      ``executor`` (:func:`inkground_lib.core.parallel.executor`: a pool or a Dask cluster) when given.
      Workers return each page's photo bytes and inks; this process writes every file, in page order.
    * A non-empty folder that is not a synthetic dataset (no ``generator.json``, no synth manifest) is
      refused with FolderError, so nothing else is overwritten, unless ``overwrite`` (then pages are written
      into it, but nothing there is deleted or replaced: a file of the name the generator would write that it
      did not write itself, a user's ``manifest.json`` or ``pages/p0000.jpg``, is refused with FolderError
      naming it, before anything is written). The folder is locked while pages are written
      (:mod:`inkground_lib.core.folders`).
    Deterministic: the same params give byte-identical files.
    """
    params.validate()
    root = check_output_folder(out_dir, "a synthetic dataset", _is_own, overwrite)
    if root.is_dir():  # before the lock file is made: a refused --overwrite leaves the folder as it was
        check_claims(root, _names(params), _is_own(root))
    with folder_lock(root, "synth"):
        return _generate(root, params, progress, workers, pool_min_pages, name, executor)


def _names(params: SynthParams) -> list[str]:
    """Every file the generator writes (relative to the dataset folder)."""
    ids = [page_id(i, params.pages) for i in range(params.pages)]
    return ["manifest.json", "generator.json"] + [f"pages/{p}.jpg" for p in ids] + [f"inks/{p}.json" for p in ids]


def _is_own(root: Path) -> bool:
    return (root / "generator.json").is_file() or _is_synth_manifest(root / "manifest.json")


def _generate(root: Path, params: SynthParams, progress: bool, workers: Optional[int], pool_min_pages: int,
              name: str, executor: Optional[Executor] = None) -> Path:
    meta = _meta(params)
    mpath = root / "manifest.json"
    old_meta = None
    if mpath.is_file():
        try:
            m = json.loads(mpath.read_text("utf-8"))
            old_meta = m.get("meta") if m.get("kind") == "synth" else None
            if (m.get("meta") == json.loads(json.dumps(meta)) and m.get("kind") == "synth"
                    and all((root / pr[k]).is_file() for pr in m["pages"] for k in ("image", "inks"))):
                return root
        except (json.JSONDecodeError, OSError, KeyError, TypeError, AttributeError):
            pass
    gpath = root / "generator.json"
    if isinstance(old_meta, dict):
        say_remade(root, "synthetic", old_meta, json.loads(json.dumps(meta)))
    claim_files(root, _names(params), _is_own(root))  # --overwrite: none of the user's files is replaced
    own = may_delete_own_files(root, _is_own(root))  # else an --overwrite of someone's folder: delete nothing
    same = False
    if gpath.is_file():
        try:
            same = json.loads(gpath.read_text("utf-8")) == json.loads(json.dumps(meta))
        except (json.JSONDecodeError, OSError):
            same = False
    if own and mpath.exists():
        mpath.unlink()  # a stale manifest must not describe the pages being rewritten
    atomic_write_json(gpath, meta)
    ids = {page_id(i, params.pages) for i in range(params.pages)}
    for sub, ext in (("pages", ".jpg"), ("inks", ".json")):
        d = root / sub
        if own and d.is_dir():
            for f in d.iterdir():
                if re.fullmatch(r"p\d+", f.stem) and f.suffix == ext and (f.stem not in ids or not same):
                    f.unlink()
    pages: dict[int, Page] = {}
    todo = []
    for i in range(params.pages):
        p = _resume_page(params, root, i) if same else None
        if p is None:
            todo.append(i)
        else:
            pages[i] = p
    pd_ = params.as_dict()
    jobs = [(pd_, i) for i in todo]
    nw = workers if workers is not None else min(2, os.cpu_count() or 1)
    bar = None
    if progress:
        from inkground_lib.core.progress import bar as progress_bar

        bar = progress_bar(total=len(jobs), desc="synth pages", unit="page")
    try:
        for i, (page, jpeg) in zip(todo, ordered_map(_page_job, jobs, workers=nw, min_jobs=pool_min_pages,
                                                      executor=executor)):
            pages[i] = _write_page(root, page, jpeg)
            if bar:
                bar.update(1)
    finally:
        if bar:
            bar.close()
    ordered = [pages[i] for i in range(params.pages)]
    for p in ordered:
        p.image = root / "pages" / f"{p.id}.jpg"
    write_manifest(root, name, "synth", "true ink", meta, ordered, write_inks=False)
    return root
