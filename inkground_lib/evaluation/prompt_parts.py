"""Every word's request built from parts made once: the in-context example's grid image once per run, each
page's grid image once per page; a word's request and its key are composed from them.

:func:`~inkground_lib.evaluation.prompt.build_request` makes one request from scratch (two grid images drawn and
PNG-encoded). A run asks about every word of a page on the same page image, grid and example, so a
:class:`PromptBuilder` draws each grid image once, digests its pixels once (:func:`~inkground_lib.evaluation.prompt.
pixel_digest`, the digest :func:`~inkground_lib.evaluation.prompt.request_hash` reads back from the PNG) and
encodes its PNG only when a request is really sent. A word's :class:`RequestSpec` holds the request's text and
these shared images: its key (:meth:`RequestSpec.hashed_parts` with :func:`~inkground_lib.evaluation.prompt.
hash_parts`) and its request (:meth:`RequestSpec.build`) are those of ``build_request``, byte for byte, so the
caches of earlier runs stay valid. Page images are cached by the photo's content (its file's sha256), never by
the page id alone; at most :data:`PAGE_IMAGES` pages are kept, so a run of thousands of pages holds a few.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from inkground_lib.core.defaults import GRID
from inkground_lib.evaluation.prompt import (
    CAPTIONS,
    DEFAULT_FONT_SIZE,
    DEFAULT_MAX_SIDE,
    SYSTEM_PROMPT,
    Example,
    GridLayout,
    PromptError,
    PromptRequest,
    check_request,
    compose_grid,
    example_answer,
    pixel_digest,
    png_bytes,
    request_meta,
    request_parts,
    variant_images,
)

PAGE_IMAGES = 8
"""Page grid images a :class:`PromptBuilder` keeps (least recently used dropped first): a run works page by page,
so a few cover the pages whose requests are in flight; each is about 2.6 MB of pixels, or its PNG once sent."""


class PromptImage:
    """One grid image of a prompt, made once: ``size`` (W, H pixels), ``digest`` (:func:`~inkground_lib.evaluation.
    prompt.pixel_digest`), ``layouts`` (where each photo sits in it) and its PNG (:meth:`png`, encoded on first use
    and kept; the pixels are dropped then)."""

    def __init__(self, pixels: np.ndarray, layouts: list[GridLayout]):
        self.size = (int(pixels.shape[1]), int(pixels.shape[0]))
        self.digest = pixel_digest(pixels)
        self.layouts = list(layouts)
        self._pixels: Optional[np.ndarray] = pixels
        self._png: Optional[bytes] = None
        self._lock = threading.Lock()

    @property
    def encoded(self) -> bool:
        return self._png is not None

    def png(self) -> bytes:
        """The image as :func:`~inkground_lib.evaluation.prompt.png_bytes` encodes it (once; thread-safe)."""
        with self._lock:
            if self._png is None:
                self._png = png_bytes(self._pixels)
                self._pixels = None
            return self._png


@dataclass(frozen=True)
class RequestSpec:
    """One word's request before its images are encoded: the system prompt, ``pieces`` in order (("text", str) or
    ("image", :class:`PromptImage`)), ``meta`` as :func:`~inkground_lib.evaluation.prompt.build_request` records
    it. Usable as an :class:`~inkground_lib.evaluation.systems.base.Item`'s ``request``: calling it with a variant
    builds the :class:`~inkground_lib.evaluation.prompt.PromptRequest`."""

    system: str
    pieces: tuple
    meta: dict

    @property
    def variant(self) -> str:
        return self.meta["variant"]

    def images(self) -> list[PromptImage]:
        return [v for kind, v in self.pieces if kind == "image"]

    def texts(self) -> list[str]:
        return [v for kind, v in self.pieces if kind == "text"]

    def hashed_parts(self) -> list:
        """The parts as :func:`~inkground_lib.evaluation.prompt.hash_parts` takes them (images by digest)."""
        return [(kind, v.digest if kind == "image" else v) for kind, v in self.pieces]

    def text_bytes(self) -> int:
        """UTF-8 bytes of the system prompt and the text parts (what a request's size limit leaves images)."""
        return len((self.system or "").encode()) + sum(len(t.encode()) for t in self.texts())

    def spec(self, variant: str) -> "RequestSpec":
        """This spec (built for one variant, :attr:`variant`: a system checks it is the one it needs)."""
        return self

    def build(self) -> PromptRequest:
        """The request to send: its images as PNG bytes (each encoded once, shared by the requests holding it)."""
        parts = [(kind, v.png() if kind == "image" else v) for kind, v in self.pieces]
        return PromptRequest(system=self.system, parts=parts, meta=dict(self.meta))

    def __call__(self, variant: str) -> PromptRequest:
        return self.build()


class _Example:
    """The example's parts for one variant: its answer text and its grid image (two-image: the image sent;
    one-image: the captioned grid kept to paste beside each page)."""

    def __init__(self, example: Example, variant: str, builder: "PromptBuilder"):
        self.example = example
        self.answer = example_answer(example, builder.grid)
        self.grid_image = compose_grid(example.photo, builder.grid, max_side=builder.max_side,
                                       font_size=builder.font_size,
                                       caption=CAPTIONS[0] if variant == "one-image" else None)
        self.image = PromptImage(self.grid_image[0], [self.grid_image[1]]) if variant == "two-image" else None


class PromptBuilder:
    """Builds the requests of a run from shared parts (see the module doc): grid settings ``grid``, ``max_side``,
    ``font_size`` as :func:`~inkground_lib.evaluation.prompt.build_request` takes them. Thread-safe."""

    def __init__(self, grid: int = GRID, max_side: Optional[int] = DEFAULT_MAX_SIDE,
                 font_size: int = DEFAULT_FONT_SIZE, page_images: int = PAGE_IMAGES):
        self.grid, self.max_side, self.font_size = grid, max_side, font_size
        self.page_images = int(page_images)
        self._init_state()

    def _init_state(self) -> None:
        self._lock = threading.RLock()
        self._examples: dict = {}  # (id(example), variant) -> _Example (the example object is held, so ids stay unique)
        self._pages: OrderedDict = OrderedDict()  # (photo content, variant, example key) -> PromptImage
        self._content: dict = {}  # (path, inode, size, mtime) -> sha256 of the photo file

    def __getstate__(self):  # sent to a worker process: settings only, its caches are made there
        return {"grid": self.grid, "max_side": self.max_side, "font_size": self.font_size,
                "page_images": self.page_images}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._init_state()

    # ------------------------------------------------------------------ parts
    def _example(self, example: Example, variant: str) -> _Example:
        key = (id(example), variant)
        with self._lock:
            ex = self._examples.get(key)
            if ex is None:
                ex = self._examples[key] = _Example(example, variant, self)
            return ex

    def photo_content(self, path) -> str:
        """sha256 of the photo file ``path`` (read once per file version in this builder)."""
        try:
            st = os.stat(path)
            key = (str(path), st.st_ino, st.st_size, st.st_mtime_ns)
            with self._lock:
                digest = self._content.get(key)
            if digest is None:
                h = hashlib.sha256()
                with open(path, "rb") as f:
                    for chunk in iter(lambda: f.read(1 << 20), b""):
                        h.update(chunk)
                digest = h.hexdigest()
        except OSError as e:
            raise PromptError(f"{path}: the page photo cannot be read ({e})") from None
        with self._lock:
            self._content[key] = digest
        return digest

    def page_image(self, content: str, load: Callable[[], np.ndarray], variant: str, ex: _Example) -> PromptImage:
        """The page's image of ``variant`` (its grid, beside the example's for one-image) for the photo whose
        content digest is ``content`` (``load`` reads it); made once while it is among the last
        :attr:`page_images` used."""
        key = (content, variant, id(ex) if variant == "one-image" else None)
        with self._lock:
            im = self._pages.get(key)
            if im is not None:
                self._pages.move_to_end(key)
                return im
        caption = CAPTIONS[1] if variant == "one-image" else None
        target = compose_grid(load(), self.grid, max_side=self.max_side, font_size=self.font_size, caption=caption)
        if variant == "two-image":
            im = PromptImage(target[0], [target[1]])
        else:
            (pixels,), layouts = variant_images(variant, ex.grid_image, target)
            im = PromptImage(pixels, layouts)
        with self._lock:
            im = self._pages.setdefault(key, im)  # another thread may have made it meanwhile: keep one
            self._pages.move_to_end(key)
            while len(self._pages) > self.page_images:
                self._pages.popitem(last=False)
        return im

    # ------------------------------------------------------------------ requests
    def spec(self, content: str, load: Callable[[], np.ndarray], page_size, target_word: str, example: Example,
             variant: str = "two-image", page_id: str = "", word_id: str = "") -> RequestSpec:
        """The :class:`RequestSpec` of :func:`~inkground_lib.evaluation.prompt.build_request` (same arguments; the
        page photo as its content digest ``content`` and a function ``load`` reading it)."""
        page_size = check_request(page_size, target_word, example, variant)
        ex = self._example(example, variant)
        page = self.page_image(content, load, variant, ex)
        images = [ex.image, page] if variant == "two-image" else [page]
        layouts = [lay for im in images for lay in im.layouts]
        pieces = request_parts(variant, self.grid, example.word, ex.answer, target_word, images)
        meta = request_meta(variant, self.grid, self.max_side, self.font_size, page_size, target_word, example,
                            [im.size for im in images], layouts, page_id, word_id)
        return RequestSpec(SYSTEM_PROMPT, tuple(pieces), meta)

    def word(self, page, word, example: Example, load: Optional[Callable[[], np.ndarray]] = None) -> "WordPrompt":
        """The request source of one word of a dataset page (an Item's ``request``); ``load`` reads the page's
        photo (default ``page.load_image``)."""
        return WordPrompt(self, page.image, load or page.load_image, (float(page.width), float(page.height)),
                          word.text, example, page.id, word.id)


class WordPrompt:
    """An :class:`~inkground_lib.evaluation.systems.base.Item`'s ``request`` for one word: its
    :class:`RequestSpec` for the variant a system asks (:meth:`spec`), or, called with a variant, the built
    request. Holds no image itself: the builder's shared parts do."""

    def __init__(self, builder: PromptBuilder, photo, load: Callable[[], np.ndarray], page_size, text: str,
                 example: Example, page_id: str, word_id: str):
        self.builder, self.photo, self.load, self.page_size = builder, photo, load, page_size
        self.text, self.example, self.page_id, self.word_id = text, example, page_id, word_id

    def spec(self, variant: str) -> RequestSpec:
        return self.builder.spec(self.builder.photo_content(self.photo), self.load, self.page_size, self.text,
                                 self.example, variant, self.page_id, self.word_id)

    def __call__(self, variant: str) -> PromptRequest:
        return self.spec(variant).build()
