"""The recorded dataset: photographed pages composed from real recorded handwriting, one writer per page.

``build_recorded`` writes the dataset from a UNIPEN-derived JSON file, a whole UNIPEN release (the original
``.dat`` format, :mod:`inkground_lib.formats.unipen_release`), an IAM-OnDB copy and / or a folder of word-level
InkML files (:mod:`inkground_lib.formats.inkml`), each page one writer's words laid out
(:mod:`~inkground_lib.datasets.recorded_pages`), drawn and photographed as synth does. The words of each source:
:func:`unipen_dir_words` here, :mod:`~inkground_lib.datasets.recorded_iamondb` and
:mod:`~inkground_lib.datasets.recorded_inkml`. The design page of the book has the details.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

from inkground_lib.core.dataset import (
    DatasetError,
    Page,
    Word,
    load_dataset,
    write_manifest,
)
from inkground_lib.core.files import atomic_write_bytes, atomic_write_json, modules_sha256, sha256_file
from inkground_lib.core.folders import (
    check_claims,
    check_output_folder,
    claim_files,
    folder_lock,
    may_delete_own_files,
)
from inkground_lib.core.layout import UNIPEN_SUBSET
from inkground_lib.core.repo_paths import portable_path
from inkground_lib.datasets.recorded_iamondb import iamondb_tree_sha256, iamondb_words
from inkground_lib.datasets.recorded_inkml import INKML_WRITERS, inkml_words
from inkground_lib.datasets.recorded_pages import Layout, compose_page, has_extent, plan_pages
from inkground_lib.datasets.remade import say_remade
from inkground_lib.datasets.segmentation import core_height
from inkground_lib.datasets.synth.page_layout import clean_page
from inkground_lib.datasets.synth.photo import (
    PhotoEffects,
    apply_homography,
    encode_jpeg,
    photograph,
)
from inkground_lib.datasets.synth.texts import split_words
from inkground_lib.formats.inkml import DIALECTS
from inkground_lib.formats.unipen import RecordedWord, read_unipen_json
from inkground_lib.formats.unipen_release import read_unipen_release

BUILDER_VERSION = 1
"""The version of the builder's file layout (``meta["builder_version"]``). What identifies the code that composed
the pages is :func:`code_sha256`, never this number: nobody has to remember to bump it."""
BUILDER_CODE = (
    "inkground_lib",
    "inkground_lib.core",
    "inkground_lib.core.dataset",
    "inkground_lib.core.defaults",
    "inkground_lib.core.files",
    "inkground_lib.core.folders",
    "inkground_lib.core.ink",
    "inkground_lib.core.layout",
    "inkground_lib.core.manifest_schema",
    "inkground_lib.core.progress",
    "inkground_lib.core.render",
    "inkground_lib.core.repo_paths",
    "inkground_lib.datasets",
    "inkground_lib.datasets.recorded",
    "inkground_lib.datasets.recorded_iamondb",
    "inkground_lib.datasets.recorded_inkml",
    "inkground_lib.datasets.recorded_pages",
    "inkground_lib.datasets.remade",
    "inkground_lib.datasets.segmentation",
    "inkground_lib.datasets.synth",
    "inkground_lib.datasets.synth.glyphs",
    "inkground_lib.datasets.synth.page_layout",
    "inkground_lib.datasets.synth.photo",
    "inkground_lib.datasets.synth.texts",
    "inkground_lib.datasets.synth.writers",
    "inkground_lib.formats",
    "inkground_lib.formats.iamondb",
    "inkground_lib.formats.iamondb_strokes",
    "inkground_lib.formats.iamondb_transcriptions",
    "inkground_lib.formats.inkml",
    "inkground_lib.formats.inkml_document",
    "inkground_lib.formats.inkml_traces",
    "inkground_lib.formats.inksight_canvas",
    "inkground_lib.formats.unipen",
    "inkground_lib.formats.unipen_dat",
    "inkground_lib.formats.unipen_release",
    "inkground_lib.formats.xmlsafe",
)
"""Every library module the builder may run, the readers of its sources included (its static import closure; a
test keeps the two equal): their code digest is part of the dataset's meta, so pages composed by other code are
composed again."""


def code_sha256() -> str:
    """sha256 over the source files of :data:`BUILDER_CODE` (:func:`~inkground_lib.core.files.modules_sha256`)."""
    return modules_sha256(BUILDER_CODE)
BUILDER_MARK = "recorded_builder.json"
"""Written into the output folder before any page: marks the folder as this builder's (resumable, rebuildable)."""
OWN_FILE = re.compile(r"p\d{4,}\.(jpg|json)")
"""The names of the page photos and ink files this builder writes (``p0000.jpg``, ``p0000.json``)."""

SUBSET_WORDS_PER_PAGE = (4, 8)
"""Words per page for the small sources (the JSON subset holds at most 8 words a writer)."""
PAPER_WORDS_PER_PAGE = (20, 50)
"""Words per page from a whole UNIPEN release: uniform in 20-50, mean 35, like the paper's pages (34.89 words
on average, 2-140)."""


def is_recorded_folder(out: Path) -> bool:
    """True if ``out`` is a recorded dataset this builder wrote (its builder mark, or a recorded manifest)."""
    if (out / BUILDER_MARK).is_file():
        return True
    try:
        return json.loads((out / "manifest.json").read_text("utf-8")).get("kind") == "recorded"
    except (OSError, ValueError, AttributeError):
        return False


def default_unipen_path() -> Path | None:
    """The UNIPEN subset shipped with the repository (``data/unipen_cursive/unipen_cursive_dev.json``), or
    None where it was deleted from the checkout."""
    return UNIPEN_SUBSET if UNIPEN_SUBSET.is_file() else None



# ============================================================================================ builder

def _effects(effects):
    if effects is None:
        return PhotoEffects()
    if isinstance(effects, str):
        if effects == "none":
            return PhotoEffects.none()
        if effects == "default":
            return PhotoEffects()
        raise ValueError(f"effects: {effects!r} is not 'default', 'none', a dict or a PhotoEffects")
    if isinstance(effects, dict):
        return PhotoEffects(**effects)
    return effects


def _effects_record(eff) -> dict:
    if dataclasses.is_dataclass(eff):
        d = dataclasses.asdict(eff)
    else:
        d = dict(vars(eff))
    return json.loads(json.dumps(d, default=str))


def unipen_dir_words(root: str | os.PathLike, *, category="6", style="CURSIVE", quality="!BAD",
                     progress: bool = False) -> tuple[list[RecordedWord], dict]:
    """Words of a whole UNIPEN release (:func:`inkground_lib.formats.unipen_release.read_unipen_release`,
    WORD segments) and the manifest source entry: path, sha256 over the files read, selection, counts and
    the read report. Words whose ink has no width or no height are left out (counted)."""
    r = Path(root)
    if not r.is_dir():
        raise DatasetError(f"{r}: UNIPEN release folder not found")
    words, report = read_unipen_release(r, category=category, style=style, quality=quality, progress=progress)
    usable = [w for w in words if has_extent(w)]
    source = {"kind": "unipen_dir", "path": portable_path(r), "sha256": report.digest(),
              "files": len(report.files), "selection": report.selection, "words": len(usable),
              "words_degenerate": len(words) - len(usable), **report.as_meta()}
    return usable, source


def _checked_options(words_per_page, pages, inkml_writer: str, inkml_dialect: str) -> tuple[int, int]:
    """``words_per_page`` as (min, max), after checking it and the other options :func:`build_recorded` takes
    as given."""
    lo, hi = (int(v) for v in words_per_page)
    if not (1 <= lo <= hi):
        raise ValueError(f"words_per_page: expected 1 <= min <= max, got {words_per_page!r}")
    if pages is not None and int(pages) < 1:
        raise ValueError(f"pages: expected a positive number or None, got {pages!r}")
    if inkml_writer not in INKML_WRITERS:
        raise ValueError(f"inkml_writer: expected one of {INKML_WRITERS}, got {inkml_writer!r}")
    if inkml_dialect not in DIALECTS:
        raise ValueError(f"inkml_dialect: expected one of {DIALECTS}, got {inkml_dialect!r}")
    return lo, hi


def _read_sources(*, unipen, unipen_dir, category, style, quality, iamondb, iamondb_split, inkml, inkml_writer,
                  inkml_dialect, inkml_symbols, gap_factor, progress) -> tuple[list[RecordedWord], list, list | None]:
    """The words of every source given to :func:`build_recorded`, each source's manifest entry, and IAM-OnDB's
    line report (None without IAM-OnDB); DatasetError when the sources hold no words."""
    words: list[RecordedWord] = []
    sources = []
    line_report = None
    if unipen is not None:
        up = Path(unipen)
        if not up.is_file():
            raise DatasetError(f"{up}: UNIPEN JSON file not found")
        uw = read_unipen_json(up)
        words += uw
        sources.append({"kind": "unipen", "path": portable_path(up), "sha256": sha256_file(up), "words": len(uw)})
    if unipen_dir is not None:
        dw, source = unipen_dir_words(unipen_dir, category=category, style=style, quality=quality,
                                      progress=progress)
        words += dw
        sources.append(source)
    if iamondb is not None:
        ip = Path(iamondb)
        iw, counts = iamondb_words(ip, iamondb_split, gap_factor=gap_factor, progress=progress)
        line_report = counts.pop("line_report")  # every line's outcome: written to sources.json, not the manifest
        words += iw
        extra = []
        if iamondb_split:
            extra = [p for p in (Path(iamondb_split), ip / f"{iamondb_split}.txt", ip / "task1" / f"{iamondb_split}.txt")]
        digest, n_files = iamondb_tree_sha256(ip, extra)
        sources.append({"kind": "iamondb", "path": portable_path(ip), "sha256": digest, "files": n_files,
                        "split": iamondb_split, "words": len(iw), **counts,
                        "note": "words cut from lines at pen-up gaps; a line is used only when the cut gives "
                                "the transcription's word count and fits the words' lengths; what each line got "
                                "is listed in sources.json (iamondb_lines)"})
    if inkml is not None:
        kw, source = inkml_words(inkml, writer=inkml_writer, dialect=inkml_dialect, symbols=inkml_symbols,
                                 progress=progress)
        words += kw
        sources.append(source)
    if not words:
        sel = "".join(f"; {s['path']}: selection {s['selection']}, {s['files_parsed']} files parsed, "
                      f"{s['files_failed']} failed" for s in sources if s["kind"] == "unipen_dir")
        sel += "".join(f"; {s['path']}: {s['files_parsed']} of {s['files_found']} InkML files read, "
                       f"{s['files_failed']} failed, groups left out: {s['words_skipped'] or 'none'}"
                       for s in sources if s["kind"] == "inkml")
        raise DatasetError(f"build_recorded: the sources hold no words ({[s['path'] for s in sources]}){sel}")
    return words, sources, line_report


def _writers_left_out(words: list[RecordedWord], plan: list, pages: int | None, words_per_page: tuple[int, int], *,
                      folder_hint: bool) -> list[tuple[str, int]]:
    """The writers with fewer words (with letters) than a page takes, as (writer, words), each named in a warning
    with the options that would keep them; DatasetError when no writer is left for a page."""
    lo, hi = words_per_page
    counts = Counter(w.writer for w in words if any(c.isalpha() for c in w.text))
    short = sorted((wr, n) for wr, n in counts.items() if n < lo)
    hint = ("; --words-per-page (words_per_page) with a lower minimum keeps them"
            + ("; with --inkml, --inkml-writer folder (inkml_writer='folder') puts a folder's files under one writer"
               if folder_hint else ""))
    listed = ", ".join(f"{wr} ({n})" for wr, n in short[:20]) + (" ..." if len(short) > 20 else "")
    if not plan:
        raise DatasetError(f"build_recorded: no writer has {lo} or more words with letters ({len(counts)} writers, "
                           f"{sum(counts.values())} words: {listed}){hint} (now {lo}-{hi})")
    if short:
        warnings.warn(f"build_recorded: {len(short)} writer(s) with fewer than {lo} words are left out: {listed}"
                      f"{hint}")
    if pages is not None and len(plan) < int(pages):
        warnings.warn(f"build_recorded: only {len(plan)} of the {pages} pages requested can be composed "
                      f"(writers run out of words for {lo}+ words per page)")
    return short


def _writer_scales(words: list[RecordedWord], layout: Layout) -> dict[str, float]:
    """Each writer's scale to the layout's common core height (the median core height of the writer's words)."""
    by_writer: dict[str, list[RecordedWord]] = {}
    for w in words:
        by_writer.setdefault(w.writer, []).append(w)
    return {wr: layout.core_px / float(np.median([core_height(w.ink) for w in ws])) for wr, ws in by_writer.items()}


def _write_pages(out: Path, name: str, meta: dict, plan: list, scales: dict[str, float], *, seed: int, eff,
                 layout: Layout, jpeg_quality: int, line_report: list | None, progress: bool) -> Path:
    """Compose, draw and photograph every planned page into ``out`` under its lock, with ``sources.json`` and the
    manifest; a folder whose manifest has the same meta is returned as it is."""
    from inkground_lib.core.progress import bar as progress_bar

    # an --overwrite of someone's folder replaces none of their files (refused, naming the file, before the lock
    # file is made)
    names = ["manifest.json", BUILDER_MARK, "sources.json"] + [f"{sub}/p{pi:04d}.{ext}" for pi in range(len(plan))
                                                              for sub, ext in (("pages", "jpg"), ("inks", "json"))]
    if out.is_dir():
        check_claims(out, names, is_recorded_folder(out))
    with folder_lock(out, "recorded"):
        claim_files(out, names, is_recorded_folder(out))
        own = may_delete_own_files(out, is_recorded_folder(out))
        mpath = out / "manifest.json"
        if mpath.is_file():
            try:
                old = json.loads(mpath.read_text("utf-8"))
                if isinstance(old, dict) and old.get("meta") == meta and old.get("name") == name:
                    load_dataset(out)
                    return out
                if isinstance(old, dict) and isinstance(old.get("meta"), dict):
                    say_remade(out, "recorded", old["meta"], meta)
            except (ValueError, OSError, DatasetError):
                pass
            if own:
                mpath.unlink()  # an interrupted rebuild must not leave a manifest that loads
        atomic_write_json(out / BUILDER_MARK, {"builder": "inkground_lib.datasets.recorded.build_recorded"})

        result_pages = []
        for pi, (writer, ws) in enumerate(progress_bar(plan, desc="recorded pages", enabled=progress)):
            layout_rng, split_rng, photo_rng = np.random.default_rng([int(seed), 1, pi]).spawn(3)
            comp = compose_page(ws, scales[writer], layout_rng, layout)
            gray = clean_page(comp.inks, (comp.width, comp.height), comp.pen_width)
            rgb, Hm = photograph(gray, photo_rng, eff)
            pid = f"p{pi:04d}"
            img_path = out / "pages" / f"{pid}.jpg"
            atomic_write_bytes(img_path, encode_jpeg(rgb, jpeg_quality))
            splits = split_words(split_rng, len(ws))
            page_words = []
            for j, (w, ink, sp) in enumerate(zip(ws, comp.inks, splits)):
                photo_ink = apply_homography(ink, Hm, decimals=2)
                page_words.append(Word(f"{pid}-w{j:03d}", w.text, photo_ink.bbox(), photo_ink, pid, sp, photo_ink))
            result_pages.append(Page(pid, img_path, writer, int(rgb.shape[1]), int(rgb.shape[0]), page_words))
        # provenance: which source word is each page word (not part of the manifest schema)
        provenance = {"page_words": {p.id: {w.id: src.id for w, src in zip(p.words, ws)}
                                     for p, (_, ws) in zip(result_pages, plan)}}
        if line_report is not None:
            provenance["iamondb_lines"] = line_report
        atomic_write_json(out / "sources.json", provenance)
        write_manifest(out, name, "recorded", "true ink", meta, result_pages)
        if not own:  # written with overwrite into someone else's folder: delete nothing there
            return out
        keep = {f"{p.id}.jpg" for p in result_pages} | {f"{p.id}.json" for p in result_pages}
        for sub in ("pages", "inks"):  # pages of an earlier, larger build: only files named as this builder names them
            for f in (out / sub).glob("*"):
                if f.is_file() and f.name not in keep and OWN_FILE.fullmatch(f.name):
                    f.unlink()
        return out


def build_recorded(out_dir: str | os.PathLike, *, unipen: str | os.PathLike | None = None,
                   unipen_dir: str | os.PathLike | None = None, category="6", style="CURSIVE",
                   quality="!BAD", iamondb: str | os.PathLike | None = None, iamondb_split: str | None = None,
                   inkml: str | os.PathLike | None = None, inkml_writer: str = "auto", inkml_dialect: str = "auto",
                   inkml_symbols: bool = False,
                   pages: int | None = None, words_per_page: tuple[int, int] | None = None, seed: int = 0,
                   effects=None, progress: bool = True, layout: Layout = Layout(), gap_factor: float = 0.6,
                   jpeg_quality: int = 88, name: str = "recorded", overwrite: bool = False) -> Path:
    """Build (or reuse) the recorded dataset in ``out_dir`` and return the folder.

    ``unipen``: a UNIPEN-format JSON file; ``unipen_dir``: the root of a whole UNIPEN release in the
    original format (e.g. train_r01_v07: ``data/``, ``include/``), from which ``category`` (``"6"``:
    isolated cursive or mixed words; a list or ``"6,7"`` for several), ``style`` (``.STYLE`` label(s),
    ``"CURSIVE"``, ``"CURSIVE,MIXED"``, None for any) and ``quality`` (``"!BAD"``: all but BAD;
    ``"GOOD,OK"``; None: any) select the WORD segments (see :func:`unipen_dir_words`); ``iamondb``: an
    IAM-OnDB root (``iamondb_split`` e.g. ``"trainset"`` keeps one task split; broken files are reported and
    skipped, see :func:`iamondb_words`); ``inkml``: a folder of word-level InkML files, ``inkml_writer``
    (``"auto"``: writer annotations, else the folder, else the file; ``"annotation"``, ``"file"`` or ``"folder"``),
    ``inkml_dialect`` as in :func:`~inkground_lib.formats.inkml.read_inkml` and ``inkml_symbols`` (keep texts that
    are not words as targets), see :func:`inkml_words`. Writers with fewer words than the page minimum are left
    out with a warning naming them and the options that would keep them (``writers_left_out`` in the meta).
    With none of them, the
    shipped UNIPEN subset is used (:func:`default_unipen_path`). ``pages``: number of pages (None: one per
    eligible writer; more pages take further words of the writers in turn until they run out);
    ``words_per_page``: (min, max) words per page, one writer per page (None: :data:`PAPER_WORDS_PER_PAGE`
    with ``unipen_dir``, else :data:`SUBSET_WORDS_PER_PAGE`); ``effects``: a
    :class:`inkground_lib.datasets.synth.photo.PhotoEffects`, a dict of its fields, ``"none"`` or None
    (defaults). Deterministic for a seed; a folder whose manifest has identical meta is returned as it is; one
    made with other sources, parameters or code (the meta's ``code_sha256``, :func:`code_sha256`) is made again,
    and a line on standard error says why.
    A non-empty folder that is not a recorded dataset is refused (FolderError) before anything is read, unless
    ``overwrite`` (pages are then written into it, and nothing of it is deleted); the folder is locked while
    pages are written. Raises DatasetError / FormatError naming the file at fault.

    Each source's ``path`` in the meta is stored relative to the repository root when the source lies inside it
    (:func:`~inkground_lib.core.repo_paths.portable_path`: the shipped subset is
    ``data/unipen_cursive/unipen_cursive_dev.json``), so a moved or renamed checkout finds its dataset as built
    (same meta, same :func:`~inkground_lib.core.dataset.dataset_hash`) while its ``sha256`` still rebuilds it
    when the source's content changes.
    """
    out = check_output_folder(out_dir, "a recorded dataset", is_recorded_folder, overwrite)
    if words_per_page is None:
        words_per_page = PAPER_WORDS_PER_PAGE if unipen_dir is not None else SUBSET_WORDS_PER_PAGE
    lo, hi = _checked_options(words_per_page, pages, inkml_writer, inkml_dialect)
    if unipen is None and iamondb is None and unipen_dir is None and inkml is None:
        unipen = default_unipen_path()
        if unipen is None:
            raise DatasetError("build_recorded: no source: give unipen=PATH (UNIPEN-format JSON), "
                               "unipen_dir=PATH (a UNIPEN release), iamondb=PATH (IAM-OnDB root) and/or "
                               f"inkml=PATH (a folder of InkML files); the shipped UNIPEN subset {UNIPEN_SUBSET} "
                               "is absent")

    words, sources, line_report = _read_sources(
        unipen=unipen, unipen_dir=unipen_dir, category=category, style=style, quality=quality, iamondb=iamondb,
        iamondb_split=iamondb_split, inkml=inkml, inkml_writer=inkml_writer, inkml_dialect=inkml_dialect,
        inkml_symbols=inkml_symbols, gap_factor=gap_factor, progress=progress)

    rng = np.random.default_rng([int(seed), 0])
    plan = plan_pages(words, None if pages is None else int(pages), (lo, hi), rng)
    short = _writers_left_out(words, plan, pages, (lo, hi),
                              folder_hint=inkml is not None and inkml_writer != "folder")
    scales = _writer_scales(words, layout)

    eff = _effects(effects)
    meta = {"builder": "inkground_lib.datasets.recorded.build_recorded", "builder_version": BUILDER_VERSION,
            "code_sha256": code_sha256(), "seed": int(seed), "sources": sources,
            "params": {"pages": None if pages is None else int(pages), "words_per_page": [lo, hi],
                       "layout": dataclasses.asdict(layout), "gap_factor": gap_factor,
                       "jpeg_quality": int(jpeg_quality), "iamondb_split": iamondb_split},
            "effects": _effects_record(eff), "pages_built": len(plan),
            "writers_left_out": [[wr, n] for wr, n in short[:50]],
            "writers": len({wr for wr, _ in plan})}
    meta = json.loads(json.dumps(meta))
    return _write_pages(out, name, meta, plan, scales, seed=seed, eff=eff, layout=layout, jpeg_quality=jpeg_quality,
                        line_report=line_report, progress=progress)
