"""Datasets: words, pages, and a folder with a versioned JSON manifest, page photos and inks.

Loading validates everything and raises ``DatasetError`` naming the file, record and field at fault: the
manifest's fields against its JSON Schema (:mod:`inkground_lib.core.manifest_schema`, the one source of their
types), then what a schema cannot say (files exist, photo sizes, boxes inside their page, unique ids, inks).
The folder layout and the manifest schema (see MANIFEST_EXAMPLE below) are on the design page of the book.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import stat
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

import numpy as np

from inkground_lib.core import defaults
from inkground_lib.core.defaults import (
    MAX_INK_FILE_BYTES,
    MAX_INK_FILE_ENV,
    MAX_MANIFEST_BYTES,
    MAX_MANIFEST_ENV,
    MAX_PAGE_PIXELS,
    MAX_PAGE_SIDE,
)
from inkground_lib.core.files import PathError, atomic_write_json, confined, sha256_file
from inkground_lib.core.ink import Ink, InkError, ink_from_lists, ink_to_lists
from inkground_lib.core.manifest_schema import ID_RULE, KINDS, SCHEMA, SCHEMA_VERSION, schema_problems

INKS_SCHEMA = "inkground-inks"

MANIFEST_EXAMPLE = {
    "schema": SCHEMA, "schema_version": SCHEMA_VERSION, "name": "synth", "kind": "synth",
    "reference": "true ink",  # what the reference inks are: "true ink" or "pseudo-label: <derenderer>"
    "meta": {"seed": 0},
    "pages": [{"id": "p0000", "image": "pages/p0000.jpg", "inks": "inks/p0000.json", "writer": "w0000",
               "width": 1200, "height": 1600,
               "words": [{"id": "p0000-w000", "text": "Dear", "box": [10.0, 20.0, 110.0, 60.0],
                          "split": "train"}]}],
}


class DatasetError(ValueError):
    """A dataset that cannot be loaded or written; the message names file, record and field."""


@dataclass
class Word:
    """One word of a page. ``box`` is (x0, y0, x1, y1) in page pixels; ``ink`` the reference trajectory;
    ``true_ink`` the writer's real trajectory where known (synthetic and recorded data), else None;
    ``split`` "train" or "test" (the Style classifier trains on "train" words)."""

    id: str
    text: str
    box: tuple[float, float, float, float]
    ink: Ink
    page_id: str
    split: str = "train"
    true_ink: Optional[Ink] = None


@dataclass
class Page:
    """A page photo. ``image`` is the absolute path after loading (relative in the manifest); width and
    height are the photo's size in pixels; ``writer`` the writer id (on inkGround: the page itself)."""

    id: str
    image: Path
    writer: str
    width: int
    height: int
    words: list[Word] = field(default_factory=list)
    photo_decoded: bool = field(default=False, repr=False, compare=False)
    """True once :func:`check_photos` (or ``load_dataset(decode_images=True)``) decoded this page's photo whole:
    a Dataset object is checked once however many stages it is handed to."""

    def load_image(self) -> np.ndarray:
        """The page photo as a uint8 (H, W, 3) RGB array."""
        where = f"{self.image}: page {self.id}"
        problem = photo_file_problem(self.image)
        if problem:
            raise DatasetError(f"{where}: field image: {problem}")
        try:
            with open_photo(self.image, where) as im:
                return np.asarray(im.convert("RGB"))
        except OSError as e:
            raise DatasetError(f"{where}: field image: cannot be read ({e})") from None


@dataclass
class Dataset:
    root: Path
    name: str
    kind: str
    reference: str
    meta: dict
    pages: list[Page]

    def words(self) -> Iterator[Word]:
        for p in self.pages:
            yield from p.words

    def page(self, page_id: str) -> Page:
        for p in self.pages:
            if p.id == page_id:
                return p
        raise KeyError(page_id)

    @property
    def n_words(self) -> int:
        return sum(len(p.words) for p in self.pages)


# --------------------------------------------------------------------------------------------- writing

def page_record(page: Page, root: Path) -> dict:
    return {
        "id": page.id,
        "image": Path(page.image).resolve().relative_to(Path(root).resolve()).as_posix(),
        "inks": f"inks/{page.id}.json",
        "writer": page.writer,
        "width": int(page.width),
        "height": int(page.height),
        "words": [{"id": w.id, "text": w.text, "box": [round(float(v), 2) for v in w.box], "split": w.split}
                  for w in page.words],
    }


def write_page_inks(root: str | Path, page: Page) -> Path:
    """Write ``inks/<page>.json`` (atomically)."""
    data = {"schema": INKS_SCHEMA, "schema_version": SCHEMA_VERSION, "page": page.id,
            "words": {w.id: {"reference": ink_to_lists(w.ink),
                             "true": None if w.true_ink is None else ink_to_lists(w.true_ink)}
                      for w in page.words}}
    return atomic_write_json(Path(root) / "inks" / f"{page.id}.json", data, indent=None)


def check_id(value: str, where: str, error: type[Exception] | None = None) -> str:
    """``value`` if it satisfies :data:`~inkground_lib.core.manifest_schema.ID_RULE`, else ``error`` (default
    DatasetError) naming ``where`` and the rule. Every name that becomes a file name (page, word, system) goes
    through it where it enters.

    >>> check_id("p0001-w003", "m")
    'p0001-w003'
    >>> check_id("../x", "manifest.json: pages[0]: field id")
    Traceback (most recent call last):
    ...
    inkground_lib.core.dataset.DatasetError: manifest.json: pages[0]: field id: '../x' is not a valid id (a letter or digit, then letters, digits, '.', '_' or '-'; at most 128 characters)
    """
    if not isinstance(value, str) or not ID_RULE.fullmatch(value):
        raise (error or DatasetError)(f"{where}: {value!r:.60} is not a valid id (a letter or digit, then letters, digits, "
                           f"'.', '_' or '-'; at most 128 characters)")
    return value


def write_manifest(root: str | Path, name: str, kind: str, reference: str, meta: dict,
                   pages: list[Page], write_inks: bool = True) -> Path:
    """Write the inks of every page (unless already written) and then the manifest, atomically.

    Page images must already exist inside ``root``."""
    root = Path(root)
    if kind not in KINDS:
        raise DatasetError(f"{root / 'manifest.json'}: field kind: {kind!r} is not one of {KINDS}")
    ids = [check_id(p.id, f"{root / 'manifest.json'}: page {p.id!r:.60}: field id") for p in pages]
    for p in pages:
        for w in p.words:
            check_id(w.id, f"{root / 'manifest.json'}: page {p.id}: word {w.id!r:.60}: field id")
    if len(set(ids)) != len(ids):
        raise DatasetError(f"{root / 'manifest.json'}: field pages: duplicate page ids")
    if write_inks:
        for p in pages:
            write_page_inks(root, p)
    manifest = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "name": name, "kind": kind,
                "reference": reference, "meta": meta, "pages": [page_record(p, root) for p in pages]}
    return atomic_write_json(root / "manifest.json", manifest)


# --------------------------------------------------------------------------------------------- loading

def _mib(n: int) -> str:
    return f"{n:,} bytes ({n / 2**20:,.1f} MiB)"


def read_limit(max_bytes: Optional[int], default: int, env: str) -> int:
    """A read limit in bytes: ``max_bytes`` when given (a positive int), else the environment variable ``env``
    (a positive number of MiB, 2**20 bytes) when set, else ``default``. ValueError names a bad value.

    >>> read_limit(None, 100, "INKGROUND_TEST_UNSET_LIMIT"), read_limit(5, 100, "INKGROUND_TEST_UNSET_LIMIT")
    (100, 5)
    """
    if max_bytes is not None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes <= 0:
            raise ValueError(f"max_bytes: expected a positive number of bytes, got {max_bytes!r}")
        return max_bytes
    raw = os.environ.get(env, "").strip()
    if not raw:
        return default
    try:
        mib = float(raw)
    except ValueError:
        mib = math.nan
    if not (math.isfinite(mib) and mib > 0):
        raise ValueError(f"environment variable {env}={raw!r}: expected a positive number of MiB")
    return max(1, int(mib * 2**20))


def check_file_size(path: str | os.PathLike, max_bytes: Optional[int], default: int, env: str,
                    error: Optional[type[Exception]] = None, what: str = "file",
                    keyword: str = "max_bytes") -> int:
    """Refuse a file that is over its read limit, or is no regular file, before anything reads it.

    The limit (bytes) is :func:`read_limit` of ``max_bytes``, ``default`` and ``env``; the size comes from
    os.stat. Returns the size in bytes; raises ``error`` (default DatasetError) naming the file, its size,
    the limit and how to raise it (``env`` in MiB, or the reader's ``keyword`` in bytes). Shared by every
    reader of ink and manifest data (core.dataset and the format readers, with FormatError).
    """
    error = error or DatasetError
    limit = read_limit(max_bytes, default, env)
    try:
        st = os.stat(path)
    except ValueError as e:  # a NUL byte in the path
        raise error(f"{str(path)!r}: cannot be read ({e})") from None
    except OSError as e:
        raise error(f"{path}: cannot be read ({e.strerror or e})") from None
    if not stat.S_ISREG(st.st_mode):
        raise error(f"{path}: cannot be read (not a regular file)")
    if st.st_size > limit:
        raise error(f"{path}: {what} of {_mib(st.st_size)} is over the read limit of {_mib(limit)}; not read. "
                    f"If the file is genuine, raise the limit: set {env}={math.ceil(st.st_size / 2**20)} "
                    f"(MiB) in the environment, or pass {keyword}=<bytes>")
    return st.st_size


def _read_json(path: Path, what: str, max_bytes: Optional[int] = None, default: int = MAX_INK_FILE_BYTES,
               env: str = MAX_INK_FILE_ENV, keyword: str = "max_ink_bytes"):
    if not path.is_file():
        raise DatasetError(f"{path}: {what} is missing")
    check_file_size(path, max_bytes, default, env, DatasetError, what, keyword)
    try:
        return json.loads(path.read_text("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise DatasetError(f"{path}: {what} is not valid JSON ({e})") from None
    except RecursionError:
        raise DatasetError(f"{path}: {what} is nested too deeply to be a dataset file") from None
    except OSError as e:
        raise DatasetError(f"{path}: {what} cannot be read ({e.strerror or e})") from None


def _read_manifest(mpath: Path, max_bytes: Optional[int]):
    return _read_json(mpath, "manifest", max_bytes, MAX_MANIFEST_BYTES, MAX_MANIFEST_ENV, "max_manifest_bytes")


def _manifest_path(root: Path, value: str, where: str, field_name: str) -> Path:
    """A manifest's relative path field resolved inside ``root``; DatasetError names manifest, record and
    field (NUL bytes, absolute paths and paths that leave the folder)."""
    if isinstance(value, str) and "\x00" in value:
        raise DatasetError(f"{where}: field {field_name}: the path {value!r:.80} contains a NUL byte")
    try:
        return confined(root, value, f"{where}: field {field_name}")
    except PathError as e:
        raise DatasetError(str(e)) from None
    except (ValueError, OSError) as e:
        raise DatasetError(f"{where}: field {field_name}: the path {value!r:.80} cannot be used ({e})") from None


BOX_TOLERANCE = 1.0
"""How far (page px) a word box may reach past the page's edges (rounding of transformed inks)."""

def box_problem(ink: Ink, box) -> Optional[str]:
    """Why a word's ink does not lie at its ``box`` (x0, y0, x1, y1), or None: fewer than BOX_MIN_INSIDE (half)
    of its points in the box grown by BOX_TOLERANCE (10% of its width and height a side, InkSight's crop margin,
    :mod:`inkground_lib.core.defaults`). Such a word would be scored against ink of another place on the page.
    The one check of it, shared by :func:`load_dataset` (so every command that reads a dataset refuses such a
    word), ``validate`` (which lists every one) and section 02's benchmark writer (which leaves such a
    pseudo-label out). An empty ink has no place: None.

    >>> from inkground_lib.core.ink import as_ink
    >>> box_problem(as_ink([[[10, 10, 0], [20, 12, 1]]]), (8, 8, 22, 14)) is None
    True
    >>> box_problem(as_ink([[[500, 10, 0], [520, 12, 1]]]), (8, 8, 22, 14)).split(" grown")[0]
    "0% of its 2 points lie in the word's box [8, 8, 22, 14]"
    """
    pts = ink.points()
    if not len(pts):
        return None
    x0, y0, x1, y1 = (float(v) for v in box)
    mx, my = defaults.BOX_TOLERANCE * (x1 - x0), defaults.BOX_TOLERANCE * (y1 - y0)
    inside = ((pts[:, 0] >= x0 - mx) & (pts[:, 0] <= x1 + mx) & (pts[:, 1] >= y0 - my)
              & (pts[:, 1] <= y1 + my)).mean()
    if inside >= defaults.BOX_MIN_INSIDE:
        return None
    ix0, iy0, ix1, iy1 = ink.bbox()
    return (f"{inside:.0%} of its {len(pts)} points lie in the word's box [{x0:g}, {y0:g}, {x1:g}, {y1:g}] grown by "
            f"{defaults.BOX_TOLERANCE:.0%} a side (at least {defaults.BOX_MIN_INSIDE:.0%} must; the ink spans "
            f"[{ix0:.6g}, {iy0:.6g}, {ix1:.6g}, {iy1:.6g}])")


def off_box_words(ds: "Dataset") -> list[tuple["Page", "Word", str, str]]:
    """(page, word, field, why) for every word of ``ds`` whose reference ink (field ``ink``) or true ink
    (``true_ink``) fails :func:`box_problem`, in page and word order."""
    out = []
    for page in ds.pages:
        inks = [(w, name, ink) for w in page.words for name, ink in (("ink", w.ink), ("true_ink", w.true_ink))
                if ink is not None and ink.n_points]
        if not inks:
            continue
        # the shares inside, for the whole page at once (per word, numpy's per-call cost would dominate: ~1 s
        # for the book's 5,767 words); box_problem words the few that fail
        pts = np.concatenate([s for _, _, ink in inks for s in ink.strokes])[:, :2]
        n = np.array([ink.n_points for _, _, ink in inks])
        boxes = np.array([w.box for w, _, _ in inks], dtype=float)
        grow = defaults.BOX_TOLERANCE * (boxes[:, 2:] - boxes[:, :2])
        lo, hi = np.repeat(boxes[:, :2] - grow, n, axis=0), np.repeat(boxes[:, 2:] + grow, n, axis=0)
        inside = np.add.reduceat(((pts >= lo) & (pts <= hi)).all(axis=1), np.r_[0, np.cumsum(n)[:-1]]) / n
        for k in np.flatnonzero(inside < defaults.BOX_MIN_INSIDE):
            w, name, ink = inks[k]
            out.append((page, w, name, box_problem(ink, w.box)))
    return out


INK_MARGIN = 0.05
"""How far an ink point may lie past the page's edges, as a share of the page's width (x) and height (y): inks
are drawn on the page (the generators' and derenderers' lie inside it); a point far outside (1e308) would make
every mean of a table infinite."""


def photo_file_problem(image: Path) -> Optional[str]:
    """What is wrong with ``image`` as a page photo's file, or None: missing, a folder, a FIFO or another
    special file (each said as what it is, not "missing"). Symbolic links are followed."""
    try:
        st = os.stat(image)
    except FileNotFoundError:
        return f"file {image} is missing"
    except OSError as e:
        return f"file {image} cannot be read ({e.strerror or e})"
    if stat.S_ISREG(st.st_mode):
        return None
    kind = ("a folder" if stat.S_ISDIR(st.st_mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode)
            else "a socket" if stat.S_ISSOCK(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode)
            or stat.S_ISBLK(st.st_mode) else "not a regular file")
    return f"{image} is {kind}, not a photo file"


def check_ink_bounds(ink: Ink, width: int, height: int, where: str) -> None:
    """DatasetError naming ``where``, the stroke and the point when a point of ``ink`` is not finite or lies
    more than :data:`INK_MARGIN` of the page's size outside the ``width`` x ``height`` page."""
    mx, my = INK_MARGIN * width, INK_MARGIN * height
    for i, s in enumerate(ink.strokes):
        xy = s[:, :2]
        bad = ~np.isfinite(xy).all(axis=1)
        bad |= (xy[:, 0] < -mx) | (xy[:, 0] > width + mx) | (xy[:, 1] < -my) | (xy[:, 1] > height + my)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise DatasetError(f"{where} stroke {i} point {j}: ({xy[j, 0]:.6g}, {xy[j, 1]:.6g}) is not finite or "
                               f"lies off the {width} x {height} page (more than {INK_MARGIN:.0%} of its size "
                               f"outside it); ink points are page pixels")


def open_photo(image: Path, where: str):
    """A page photo opened lazily with PIL (header read, pixels not yet decoded), its sides at most
    MAX_PAGE_SIDE px; use it as a context manager. PIL's decompression-bomb limit
    (``PIL.Image.MAX_IMAGE_PIXELS``, process-wide) is set to MAX_PAGE_PIXELS here, so a page the generator may
    write opens without a warning and a larger one is refused by this function, not decoded. Raises
    DatasetError naming ``where`` (file and record) and the field; OSError when PIL cannot read the file."""
    from PIL import Image

    Image.MAX_IMAGE_PIXELS = MAX_PAGE_PIXELS
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            im = Image.open(image)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as e:
        raise DatasetError(f"{where}: field image: {image.name} is refused: {e} (pages are at most "
                           f"{MAX_PAGE_SIDE} x {MAX_PAGE_SIDE} px, MAX_PAGE_SIDE)") from None
    if im.width > MAX_PAGE_SIDE or im.height > MAX_PAGE_SIDE:
        im.close()
        raise DatasetError(f"{where}: field image: {image.name} is {im.width} x {im.height} px; pages are at "
                           f"most {MAX_PAGE_SIDE} x {MAX_PAGE_SIDE} px (MAX_PAGE_SIDE)")
    return im


def _check_photo_size(image: Path, width: int, height: int, where: str, decode: bool = False) -> None:
    """The photo's real size must be the manifest's (boxes, inks and the prompt's grid are in its pixels);
    with ``decode`` every pixel is decoded too (a truncated or damaged photo is refused, naming the file)."""
    from PIL import UnidentifiedImageError

    try:
        with open_photo(image, where) as im:  # reads the header only
            real = im.size
            if decode and real == (width, height):
                im.load()
    except (OSError, UnidentifiedImageError, SyntaxError, ValueError) as e:
        what = "cannot be decoded as an image" if decode else "cannot be read as an image"
        raise DatasetError(f"{where}: field image: {image} {what} ({e})") from None
    if real != (width, height):
        raise DatasetError(f"{where}: field width/height: the manifest says {width} x {height} but the photo "
                           f"{image.name} is {real[0]} x {real[1]} px")


def check_photos(ds: Dataset) -> Dataset:
    """Decode every page photo of ``ds`` (not only its header): DatasetError naming the first photo that cannot
    be decoded (a truncated JPEG, damaged data). Run before any request (``predict``, ``eval``, section 03), so
    a broken input stops the command instead of becoming a system's error. A page whose photo this object
    already decoded (:attr:`Page.photo_decoded`) is not decoded again: a command loads its dataset once and
    hands the object down. Returns ``ds``."""
    for p in ds.pages:
        if p.photo_decoded:
            continue
        where = f"{p.image}: page {p.id}"
        problem = photo_file_problem(p.image)
        if problem:
            raise DatasetError(f"{where}: field image: {problem}")
        _check_photo_size(p.image, p.width, p.height, where, decode=True)
        p.photo_decoded = True
    return ds


def manifest_link_problem(mpath: Path) -> Optional[str]:
    """"is a symbolic link ..." when ``mpath`` (a dataset's manifest.json) is one, else None: a manifest is a
    regular file inside its folder (as its photos and inks must be)."""
    if mpath.is_symlink():
        return (f"is a symbolic link (to {os.readlink(mpath)}); a dataset's manifest must be a regular file in "
                f"its folder: copy the file in its place")
    return None


def load_dataset(root: str | Path, check_images: bool = True, *, max_manifest_bytes: Optional[int] = None,
                 max_ink_bytes: Optional[int] = None, decode_images: bool = False,
                 check_boxes: bool = True) -> Dataset:
    """Load and validate a dataset folder. Raises DatasetError naming file, record and field: first the
    manifest against its JSON Schema (:func:`~inkground_lib.core.manifest_schema.schema_problems`, the first
    fault), then the files and what no schema can say (photos exist at the manifest's size, boxes ordered and
    inside their page, unique page and word ids, inks readable and non-empty).

    Files over their read limit are refused before they are read: ``manifest.json`` over
    ``max_manifest_bytes`` (default MAX_MANIFEST_BYTES, or $INKGROUND_MAX_MANIFEST_MB in MiB) and a page's
    inks over ``max_ink_bytes`` (default MAX_INK_FILE_BYTES, or $INKGROUND_MAX_INK_FILE_MB); page sides over
    MAX_PAGE_SIDE px are refused, in the manifest and in the photos. ``decode_images``: decode every photo too
    (:func:`check_photos`; ``validate`` does). Page and word ids that differ only in case are refused (they
    would name the same files on macOS and Windows); so are ink points off the page (:func:`check_ink_bounds`),
    a word whose reference or true ink does not lie at its box (:func:`box_problem`, what ``validate`` refuses:
    every command that reads a dataset refuses it too; ``check_boxes=False`` leaves that to the caller, as
    ``validate`` does to list every such word) and a manifest that is a symbolic link.
    """
    root = Path(root)
    mpath = root / "manifest.json"
    link = manifest_link_problem(mpath)
    if link:
        raise DatasetError(f"{mpath}: {link}")
    m = _read_manifest(mpath, max_manifest_bytes)
    where = str(mpath)
    faults = schema_problems(m, where, pointers=False)  # every field's type, range and pattern
    if faults:
        raise DatasetError(str(faults[0]))
    name, kind, reference, meta = m["name"], m["kind"], m["reference"], m.get("meta", {})
    pages, seen_pages, seen_words, folded_pages, folded_words, inks_of = [], set(), set(), {}, {}, {}
    for pr in m["pages"]:
        pid = pr["id"]
        pw = f"{where}: page {pid}"
        _check_new_id(pid, "page", pw, seen_pages, folded_pages)
        image = _manifest_path(root, pr["image"], pw, "image")
        inks_path = _manifest_path(root, pr["inks"], pw, "inks")
        if check_images:
            problem = photo_file_problem(image)
            if problem:
                raise DatasetError(f"{pw}: field image: {problem}")
        writer, width, height = pr["writer"], pr["width"], pr["height"]
        if check_images:
            _check_photo_size(image, width, height, pw, decode=decode_images)
        inks = _read_json(inks_path, f"inks of page {pid}", max_ink_bytes)
        inks_of[pid] = inks_path
        if not isinstance(inks, dict) or inks.get("schema") != INKS_SCHEMA or not isinstance(inks.get("words"), dict):
            raise DatasetError(f"{inks_path}: field schema/words: not an {INKS_SCHEMA} file")
        words = [_load_word(wr, pr, pw, inks, inks_path, seen_words, folded_words) for wr in pr["words"]]
        pages.append(Page(pid, image, writer, width, height, words, photo_decoded=check_images and decode_images))
    ds = Dataset(root, name, kind, reference, meta, pages)
    if check_boxes:
        for page, w, field_name, why in off_box_words(ds)[:1]:
            raise DatasetError(f"{inks_of[page.id]}: page {page.id} word {w.id}: "
                               f"field {field_name}: {why} (inkground validate {root} lists every such word)")
    return ds


def _check_new_id(ident: str, kind: str, where: str, seen: set, folded: dict) -> None:
    """DatasetError (naming ``where``) when the ``kind`` ("page", "word") id ``ident`` was seen before (``seen``)
    or differs from one only in case (``folded``: casefolded id -> id); else both are updated."""
    if ident in seen:
        raise DatasetError(f"{where}: field id: duplicate {kind} id")
    if ident.casefold() in folded:
        raise DatasetError(f"{where}: field id: differs from {kind} id {folded[ident.casefold()]} only in case "
                           f"(ids name files; they would collide on macOS and Windows)")
    seen.add(ident)
    folded[ident.casefold()] = ident


def _load_word(wr: dict, pr: dict, pw: str, inks: dict, inks_path: Path, seen_words: set,
               folded_words: dict) -> Word:
    """The word of manifest record ``wr`` on page record ``pr`` (``pw`` names the page in errors), with its
    reference and true inks from the page's inks file ``inks`` (read from ``inks_path``). Raises DatasetError
    for an id seen before (``seen_words``) or differing from one only in case (``folded_words``: casefolded
    id -> id; both updated), a box out of order, empty or off the page (page pixels, within
    :data:`BOX_TOLERANCE`), and a missing, unreadable or empty reference or an ink off the page."""
    width, height, pid = pr["width"], pr["height"], pr["id"]
    wid = wr["id"]
    ww = f"{pw} word {wid}"
    _check_new_id(wid, "word", ww, seen_words, folded_words)
    box = wr["box"]  # 4 finite numbers (the schema); their order and place are checked here
    if not (box[0] <= box[2] and box[1] <= box[3]):
        raise DatasetError(f"{ww}: field box: expected x0 <= x1 and y0 <= y1, got {box}")
    if box[0] == box[2] and box[1] == box[3]:
        raise DatasetError(f"{ww}: field box: empty (a single point), got {box}")
    if (box[0] < -BOX_TOLERANCE or box[1] < -BOX_TOLERANCE or box[2] > width + BOX_TOLERANCE
            or box[3] > height + BOX_TOLERANCE):
        raise DatasetError(f"{ww}: field box: {box} lies outside the {width} x {height} page")
    rec = inks["words"].get(wid)
    if not isinstance(rec, dict) or "reference" not in rec:
        raise DatasetError(f"{inks_path}: word {wid}: field reference: missing")
    try:
        ink = ink_from_lists(rec["reference"], f"{inks_path}: word {wid}: field reference")
        true = rec.get("true")
        true_ink = None if true is None else ink_from_lists(true, f"{inks_path}: word {wid}: field true")
    except InkError as e:
        raise DatasetError(str(e)) from None
    if ink.n_points == 0:
        raise DatasetError(f"{inks_path}: word {wid}: field reference: empty (a reference must have ink)")
    check_ink_bounds(ink, width, height, f"{inks_path}: word {wid}: field reference:")
    if true_ink is not None:
        check_ink_bounds(true_ink, width, height, f"{inks_path}: word {wid}: field true:")
    return Word(wid, wr["text"], tuple(float(v) for v in box), ink, pid, wr.get("split", "train"), true_ink)


def dataset_hash(root: str | Path, *, max_manifest_bytes: Optional[int] = None) -> str:
    """sha256 over the manifest and every file it references (images and inks), in manifest order.

    The manifest is read under the same limit as in :func:`load_dataset`; the files it names are hashed in
    1 MiB chunks."""
    root = Path(root)
    h = hashlib.sha256()
    mpath = root / "manifest.json"
    check_file_size(mpath, max_manifest_bytes, MAX_MANIFEST_BYTES, MAX_MANIFEST_ENV, DatasetError, "manifest",
                    "max_manifest_bytes")
    data = mpath.read_bytes()
    h.update(data)
    m = json.loads(data.decode("utf-8"))
    for i, p in enumerate(m.get("pages", [])):
        for key in ("image", "inks"):
            h.update(sha256_file(_manifest_path(root, p[key], f"{mpath}: pages[{i}]", key)).encode())
    return h.hexdigest()
