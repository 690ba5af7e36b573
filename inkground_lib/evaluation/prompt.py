"""The request sent to every vision-language model: page photos with a numbered grid, instructions and one
in-context example, in SketchAgent's numbered-grid stroke format (answers are parsed by ``parse``).

Holds the grid image (``grid_image``), the request and its variants ("two-image", "one-image",
``build_request``) and its hash (``request_hash``). The design page of the book has the details.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from inkground_lib.core.defaults import GRID as DEFAULT_GRID
from inkground_lib.core.files import atomic_write_bytes
from inkground_lib.core.ink import InkLike, as_ink
from inkground_lib.evaluation.parse import format_cell_strokes, to_cells

PROMPT_VERSION = "inkground-grid-1"
HASH_SCHEME = "inkground-request-hash-1"
VARIANTS = ("two-image", "one-image")
DEFAULT_MAX_SIDE = 1024
DEFAULT_FONT_SIZE = 12
EXAMPLE_TOLERANCE = 0.35  # cells: Douglas-Peucker tolerance used to thin the example's strokes
CAPTIONS = ("EXAMPLE", "YOUR PAGE")

SYSTEM_PROMPT = ("You are an expert in handwriting and digital ink. You look at photographs of handwritten "
                 "pages and reconstruct how the writer moved the pen.")

_BG = (255, 255, 255)
_INK = (0, 0, 0)
_TICK = (90, 90, 90)
_FRAME = (150, 150, 150)
_NICE = (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000)


class PromptError(ValueError):
    """Bad input to the prompt builder: the message names the argument at fault."""


# --------------------------------------------------------------------------------------------- images

def _as_rgb(photo, what: str) -> np.ndarray:
    a = np.asarray(photo)
    if a.ndim == 2:
        a = np.repeat(a[:, :, None], 3, axis=2)
    if a.ndim != 3 or a.shape[2] not in (3, 4) or a.shape[0] < 1 or a.shape[1] < 1:
        raise PromptError(f"{what}: expected an (H, W, 3) RGB image array, got shape {a.shape}")
    if a.dtype != np.uint8:
        raise PromptError(f"{what}: expected dtype uint8, got {a.dtype}")
    return np.ascontiguousarray(a[:, :, :3])


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _text_size(font, s: str) -> tuple[int, int]:
    x0, y0, x1, y1 = font.getbbox(s)
    return int(np.ceil(x1 - x0)), int(np.ceil(y1 - y0))


def _label_every(cell: float, extent: int, grid: int, gap: int = 3) -> int:
    for k in _NICE:
        if k >= grid:
            return grid
        if k * cell >= extent + gap:
            return k
    return grid


def _labelled(grid: int, k: int, cell: float, extent: int, gap: int = 3) -> list[int]:
    """Cells 1 and G, and the multiples of k that keep ``extent + gap`` pixels from both ends."""
    if grid == 1:
        return [1]
    room = extent + gap
    inner = [j for j in range(k, grid, k) if j > 1 and (j - 1) * cell >= room and (grid - j) * cell >= room]
    ends = [1, grid] if (grid - 1) * cell >= room else [grid]
    return sorted(set(ends[:1] + inner + ends[1:]))


@dataclass(frozen=True)
class GridLayout:
    """Where the photo sits in a composed grid image (all in composed-image pixels).

    ``photo_box`` = (x0, y0, x1, y1): the photo occupies columns x0..x1-1 and rows y0..y1-1;
    ``scale`` = drawn photo size / original photo size (<= 1); ``col_labels`` / ``row_labels`` the labelled
    cells; ``image_size`` = (width, height) of the composed image."""

    grid: int
    photo_box: tuple[int, int, int, int]
    scale: float
    col_labels: tuple[int, ...]
    row_labels: tuple[int, ...]
    image_size: tuple[int, int]

    def cell_center(self, j: float, i: float) -> tuple[float, float]:
        """Composed-image position (x, y; pixel-centre convention as page pixels) of cell ``xJyI``."""
        x0, y0, x1, y1 = self.photo_box
        g = self.grid
        return x0 + (j - 0.5) * (x1 - x0) / g, y0 + (g - i + 0.5) * (y1 - y0) / g

    def shifted(self, dx: int, dy: int, image_size: tuple[int, int]) -> "GridLayout":
        x0, y0, x1, y1 = self.photo_box
        return GridLayout(self.grid, (x0 + dx, y0 + dy, x1 + dx, y1 + dy), self.scale, self.col_labels,
                          self.row_labels, image_size)


def downscale(photo: np.ndarray, max_side: Optional[int]) -> tuple[np.ndarray, float]:
    """Downscale (Lanczos) so the long side is at most ``max_side`` px; returns (image, scale <= 1)."""
    photo = _as_rgb(photo, "photo")
    h, w = photo.shape[:2]
    if max_side is None or max(h, w) <= max_side:
        return photo, 1.0
    if max_side < 1:
        raise PromptError(f"max_side must be a positive integer or None, got {max_side!r}")
    s = max_side / max(h, w)
    nw, nh = max(1, round(w * s)), max(1, round(h * s))
    im = Image.fromarray(photo).resize((nw, nh), Image.Resampling.LANCZOS)
    return np.asarray(im), s


def compose_grid(photo_rgb: np.ndarray, grid: int = DEFAULT_GRID, margin: int = 4,
                 max_side: Optional[int] = DEFAULT_MAX_SIDE, font_size: int = DEFAULT_FONT_SIZE,
                 caption: Optional[str] = None) -> tuple[np.ndarray, GridLayout]:
    """The photo with a numbered ``grid`` drawn in margins around it (see module doc) and its layout.

    ``margin``: blank pixels beyond the labels on every side; ``caption``: optional text above the photo.
    Returns a uint8 (rows, cols, 3) RGB array and a :class:`GridLayout`."""
    if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or grid < 1:
        raise PromptError(f"grid must be a positive integer, got {grid!r}")
    if margin < 0 or font_size < 4:
        raise PromptError("margin must be >= 0 and font_size >= 4")
    photo, scale = downscale(photo_rgb, max_side)
    ph, pw = photo.shape[:2]
    font = _font(font_size)
    lw, lh = _text_size(font, str(grid))
    long_tick, short_tick, gap = 6, 3, 2
    cap_h = (_text_size(font, caption)[1] + 2 * gap) if caption else 0
    left = margin + lw + gap + long_tick + 1
    bottom = margin + lh + gap + long_tick + 1 + 2
    top = margin + cap_h + 1
    right = margin + (lw + 1) // 2 + 1
    W, H = left + pw + right, top + ph + bottom
    canvas = Image.new("RGB", (W, H), _BG)
    canvas.paste(Image.fromarray(photo), (left, top))
    d = ImageDraw.Draw(canvas)
    d.rectangle((left - 1, top - 1, left + pw, top + ph), outline=_FRAME)
    cw, ch = pw / grid, ph / grid
    kc = _label_every(cw, lw, grid)
    kr = _label_every(ch, lh, grid)
    cols = _labelled(grid, kc, cw, lw)
    rows = _labelled(grid, kr, ch, lh)
    yb = top + ph + 1  # first margin row below the photo
    xl = left - 2      # last margin column left of the photo (left - 1 is the frame)
    for j in (range(1, grid + 1) if cw >= 2 else cols):
        x = left + (j - 0.5) * cw - 0.5
        t = long_tick if j in cols else short_tick
        d.line([(round(x), yb), (round(x), yb + t - 1)], fill=_TICK)
    for i in (range(1, grid + 1) if ch >= 2 else rows):
        y = top + (grid - i + 0.5) * ch - 0.5
        t = long_tick if i in rows else short_tick
        d.line([(xl - t + 1, round(y)), (xl, round(y))], fill=_TICK)
    for j in cols:
        x = left + (j - 0.5) * cw
        d.text((x, yb + long_tick + gap), str(j), fill=_INK, font=font, anchor="mt")
    for i in rows:
        y = top + (grid - i + 0.5) * ch
        d.text((xl - long_tick - gap + 1, y), str(i), fill=_INK, font=font, anchor="rm")
    if caption:
        d.text((left, margin + gap), caption, fill=_INK, font=font, anchor="lt")
    out = np.asarray(canvas).copy()
    out[top:top + ph, left:left + pw] = photo  # labels never touch the photo; make that exact
    layout = GridLayout(int(grid), (left, top, left + pw, top + ph), scale, tuple(cols), tuple(rows), (W, H))
    return out, layout


def grid_image(photo_rgb: np.ndarray, grid: int = DEFAULT_GRID, margin: int = 4,
               max_side: Optional[int] = DEFAULT_MAX_SIDE, font_size: int = DEFAULT_FONT_SIZE,
               caption: Optional[str] = None) -> np.ndarray:
    """The photo with a numbered grid in its margins (uint8 RGB); see :func:`compose_grid`."""
    return compose_grid(photo_rgb, grid, margin, max_side, font_size, caption)[0]


def side_by_side(images: Sequence[np.ndarray], layouts: Sequence[GridLayout], gap: int = 32
                 ) -> tuple[np.ndarray, list[GridLayout]]:
    """Panels left to right, tops aligned, ``gap`` white pixels apart; layouts shifted accordingly."""
    H = max(im.shape[0] for im in images)
    W = sum(im.shape[1] for im in images) + gap * (len(images) - 1)
    out = np.full((H, W, 3), 255, np.uint8)
    new, x = [], 0
    for im, lay in zip(images, layouts):
        out[:im.shape[0], x:x + im.shape[1]] = im
        new.append(lay.shifted(x, 0, (W, H)))
        x += im.shape[1] + gap
    return out, new


def png_bytes(image: np.ndarray) -> bytes:
    """Deterministic PNG encoding (RGB, zlib level 6, no optimisation, no metadata)."""
    buf = io.BytesIO()
    Image.fromarray(_as_rgb(image, "image")).save(buf, format="PNG", compress_level=6, optimize=False)
    return buf.getvalue()


def decode_png(data: bytes) -> np.ndarray:
    """PNG bytes -> uint8 RGB array."""
    with Image.open(io.BytesIO(data)) as im:
        return np.asarray(im.convert("RGB"))


# --------------------------------------------------------------------------------------------- request

@dataclass
class Example:
    """The in-context example: a page photo (uint8 RGB), the word to trace on it and its strokes in page
    pixels of that photo (origin top-left, y down). ``page_size`` (W, H) defaults to the photo's size."""

    photo: np.ndarray
    word: str
    strokes: InkLike
    page_size: Optional[tuple[float, float]] = None
    page_id: str = ""
    word_id: str = ""

    def size(self) -> tuple[float, float]:
        if self.page_size is not None:
            return (float(self.page_size[0]), float(self.page_size[1]))
        a = np.asarray(self.photo)
        return (float(a.shape[1]), float(a.shape[0]))


def example_from_page(page, word) -> Example:
    """An :class:`Example` from a dataset Page and one of its Words (reference ink as the strokes)."""
    return Example(photo=page.load_image(), word=word.text, strokes=word.ink,
                   page_size=(float(page.width), float(page.height)), page_id=page.id, word_id=word.id)


@dataclass
class PromptRequest:
    """One request: a system prompt, then ``parts`` in order, each ("text", str) or ("image", png_bytes);
    ``meta`` records how it was built (prompt version, grid, variant, page / word ids, target page size)."""

    system: str
    parts: list[tuple[str, object]]
    meta: dict = field(default_factory=dict)

    @property
    def images(self) -> list[bytes]:
        return [p for kind, p in self.parts if kind == "image"]

    @property
    def text(self) -> str:
        """All text parts joined (images as ``[image k]``)."""
        out, k = [], 0
        for kind, p in self.parts:
            if kind == "text":
                out.append(p)
            else:
                k += 1
                out.append(f"[image {k}]")
        return "\n\n".join(out)


def simplify_cells(cells: np.ndarray, tolerance: float = EXAMPLE_TOLERANCE) -> np.ndarray:
    """Douglas-Peucker thinning of one stroke in cell units; end points kept; tolerance 0 keeps every point.

    The points kept are those of scikit-image's ``skimage.measure.approximate_polygon`` (0.26, its
    measure/_polygon.py: the same distances, computed the same way, and the same choice of the farthest point; a
    test compares the two), done here because that module imports scipy.signal (about 2.5 CPU-seconds at every
    start of ``predict``), and because the example's answer is part of every request key: an upgrade of
    scikit-image must not change it (it would make every cached answer unreachable)."""
    c = np.asarray(cells, dtype=np.float64)
    if len(c) < 3 or tolerance <= 0:
        return c
    keep = np.zeros(len(c), bool)
    keep[0] = keep[-1] = True
    dists = np.zeros(len(c))
    stack = [(0, len(c) - 1)]
    while stack:
        start, end = stack.pop()
        (r0, c0), (r1, c1) = c[start], c[end]
        dr, dc = r1 - r0, c1 - c0
        angle = -np.arctan2(dr, dc)
        offset = c0 * np.sin(angle) + r0 * np.cos(angle)
        inner, d = c[start + 1:end], dists[start + 1:end]
        dr0, dc0 = inner[:, 0] - r0, inner[:, 1] - c0
        dr1, dc1 = inner[:, 0] - r1, inner[:, 1] - c1
        # the distance to the segment's line where a point projects inside the segment, else to its nearer end
        perp = np.logical_and(dr0 * dr + dc0 * dc > 0, -dr1 * dr - dc1 * dc > 0)
        ends = np.logical_not(perp)
        d[perp] = np.abs(inner[perp, 0] * np.cos(angle) + inner[perp, 1] * np.sin(angle) - offset)
        d[ends] = np.minimum(np.sqrt(dc0[ends] ** 2 + dr0[ends] ** 2), np.sqrt(dc1[ends] ** 2 + dr1[ends] ** 2))
        if np.any(d > tolerance):
            far = start + int(np.argmax(d)) + 1
            stack.append((far, end))
            stack.append((start, far))
            keep[far] = True
    return c[keep, :]


def example_answer(example: Example, grid: int = DEFAULT_GRID, decimals: int = 1,
                   tolerance: float = EXAMPLE_TOLERANCE) -> str:
    """The example's answer text (``<answer><strokes>...</strokes></answer>``): its strokes in cells,
    thinned by Douglas-Peucker (``tolerance`` cells), rounded to ``decimals``, repeated points dropped, with
    arc-length t values."""
    ink = as_ink(example.strokes, where=f"example {example.page_id} {example.word_id} strokes")
    if ink.n_points == 0:
        raise PromptError(f"example {example.page_id} {example.word_id}: the example has no strokes")
    cells = [simplify_cells(to_cells(s, grid, example.size()), tolerance) for s in ink.strokes]
    body = format_cell_strokes(cells, decimals=decimals, t_values="arc", dedupe=True)
    return f"<answer>\n{body}\n</answer>"


def instructions(grid: int, variant: str) -> str:
    """The task, grid and answer-format instructions (first text part)."""
    g = grid
    one = variant == "one-image"
    where = ("The image below shows two pages side by side, each with its own grid and its own labels: on the "
             f"left, captioned {CAPTIONS[0]}, a solved example; on the right, captioned {CAPTIONS[1]}, the page "
             "for your task. Coordinates always refer to the grid of the page they are on.\n\n") if one else ""
    return (
        "Task: a photographed page of cursive handwriting is shown. Trace the pen path of one named word "
        "on it, as the writer wrote it.\n\n"
        + where +
        f"The grid: each page photo is shown with a numbered {g} x {g} grid whose labels are drawn in the "
        "margins outside the photo (nothing is drawn on the photo itself). Columns are numbered 1 to "
        f"{g} from left to right (labels along the bottom edge). Rows are numbered 1 to {g} from bottom "
        f"to top (labels down the left edge: row 1 is the bottom row, row {g} the top row). Where labels "
        "would not fit, only every few cells are labelled; small ticks mark the cells. The grid covers "
        f"exactly the photo. A point is written x<column>y<row>: 'x12y30' is the centre of the cell in "
        "column 12, row 30. Decimals are allowed for finer positions ('x12.5y30.25'); x0.5 is the left "
        f"edge of the photo, x{g}.5 its right edge, y0.5 its bottom edge and y{g}.5 its top edge.\n\n"
        "How to trace: follow the pen as the writer moved it, in writing order. Give one stroke for each "
        "time the pen touches the paper (pen down) until it lifts (pen up); letters joined in cursive "
        "belong to one stroke. Dots (i, j) and crosses (t, x) come last, each as its own stroke. Give "
        "enough points to follow every loop and turn of the letters (consecutive points are joined by "
        "straight lines). Trace only the named word, nothing else on the page.\n\n"
        "Answer format: give the strokes exactly like this, inside <answer> tags:\n"
        "<answer>\n<strokes>\n"
        "<s1><points>'x..y..', 'x..y..', ...</points><t_values>0, ..., 1</t_values></s1>\n"
        "<s2><points>...</points><t_values>...</t_values></s2>\n"
        "</strokes>\n</answer>\n"
        "<sK> is the K-th stroke in writing order; <points> lists its points in the order the pen passes "
        "them; <t_values> gives one value per point: its position along the stroke from 0 (pen down) to "
        "1 (pen up)."
    )


def _quote(word: str) -> str:
    return '"' + word.replace('"', "'") + '"'


def check_request(page_size, target_word: str, example: Example, variant: str) -> tuple[float, float]:
    """PromptError naming the argument at fault, else the target page's size (W, H) as floats."""
    if variant not in VARIANTS:
        raise PromptError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if not isinstance(target_word, str) or not target_word.strip():
        raise PromptError(f"target_word must be a non-empty string, got {target_word!r}")
    if not isinstance(example.word, str) or not example.word.strip():
        raise PromptError(f"example word must be a non-empty string, got {example.word!r}")
    try:
        pw, ph = (float(v) for v in page_size)
    except (TypeError, ValueError):
        raise PromptError(f"page_size must be (width, height), got {page_size!r}") from None
    if not (pw > 0 and ph > 0):
        raise PromptError(f"page_size must be positive, got {page_size!r}")
    return pw, ph


def request_parts(variant: str, grid: int, example_word: str, answer: str, target_word: str,
                  images: Sequence) -> list[tuple[str, object]]:
    """The parts of a request in order: the instructions, the example (its image, word and ``answer``), the
    target page's image and the task. ``images`` are the variant's images (two-image: example, page; one-image:
    both side by side), as whatever the caller sends or hashes (PNG bytes, or
    :class:`~inkground_lib.evaluation.prompt_parts.PromptImage`)."""
    intro = instructions(grid, variant)
    ex_text = (f"In the example, the word to trace is {_quote(example_word)}. The correct answer for it is:\n"
               f"{answer}")
    task = (f"Now your task: trace the word {_quote(target_word.strip())} on "
            + ("the page on the right (captioned " + CAPTIONS[1] + ")" if variant == "one-image"
               else "this page") +
            ". Answer in the same format, inside <answer> tags.")
    if variant == "two-image":
        ex_image, tg_image = images
        return [("text", intro), ("text", "Example page:"), ("image", ex_image), ("text", ex_text),
                ("text", "Your page:"), ("image", tg_image), ("text", task)]
    (image,) = images
    return [("text", intro), ("image", image), ("text", ex_text), ("text", task)]


def variant_images(variant: str, example_grid: tuple[np.ndarray, GridLayout], target_grid: tuple[np.ndarray, GridLayout]
                   ) -> tuple[list[np.ndarray], list[GridLayout]]:
    """(the variant's images, the layouts of both photos in them) from the example's and the page's grid images
    (:func:`compose_grid`, captioned for one-image): two-image sends both, one-image both side by side."""
    (ex_img, ex_lay), (tg_img, tg_lay) = example_grid, target_grid
    if variant == "two-image":
        return [ex_img, tg_img], [ex_lay, tg_lay]
    img, layouts = side_by_side([ex_img, tg_img], [ex_lay, tg_lay])
    return [img], layouts


def request_meta(variant: str, grid: int, max_side, font_size: int, page_size: tuple[float, float],
                 target_word: str, example: Example, sizes: Sequence, layouts: Sequence[GridLayout],
                 page_id: str = "", word_id: str = "") -> dict:
    """How a request was built (its ``meta``): prompt version, settings, ids, sizes (W, H) of its images and the
    photo boxes in them."""
    return {
        "prompt_version": PROMPT_VERSION, "grid": int(grid), "variant": variant, "max_side": max_side,
        "font_size": font_size, "page_id": page_id, "word_id": word_id, "target_word": target_word.strip(),
        "page_size": [float(page_size[0]), float(page_size[1])], "example_page_id": example.page_id,
        "example_word_id": example.word_id, "example_word": example.word, "example_page_size": list(example.size()),
        "image_sizes": [[int(a), int(b)] for a, b in sizes],
        "photo_boxes": [list(lay.photo_box) for lay in layouts],
    }


def build_request(page_photo: np.ndarray, page_size: tuple[float, float], target_word: str,
                  example: Example, grid: int = DEFAULT_GRID, variant: str = "two-image",
                  max_side: Optional[int] = DEFAULT_MAX_SIDE, font_size: int = DEFAULT_FONT_SIZE,
                  page_id: str = "", word_id: str = "") -> PromptRequest:
    """The request asking a model to trace ``target_word`` on ``page_photo`` (uint8 RGB), with ``example``
    as the one in-context example. ``page_size`` (W, H) is the target page's size in page pixels (recorded
    in ``meta["page_size"]``; parse the answer with it). See the module doc for the variants. A run builds its
    requests from parts made once per page instead (:mod:`~inkground_lib.evaluation.prompt_parts`: the same
    requests, byte for byte)."""
    page_size = check_request(page_size, target_word, example, variant)
    answer = example_answer(example, grid)
    caps = CAPTIONS if variant == "one-image" else (None, None)
    images, layouts = variant_images(
        variant, compose_grid(example.photo, grid, max_side=max_side, font_size=font_size, caption=caps[0]),
        compose_grid(page_photo, grid, max_side=max_side, font_size=font_size, caption=caps[1]))
    parts = request_parts(variant, grid, example.word, answer, target_word, [png_bytes(im) for im in images])
    meta = request_meta(variant, grid, max_side, font_size, page_size, target_word, example,
                        [im.shape[1::-1] for im in images], layouts, page_id, word_id)
    return PromptRequest(system=SYSTEM_PROMPT, parts=parts, meta=meta)


def _image_digest(data: bytes) -> str:
    with Image.open(io.BytesIO(data)) as im:
        im.load()
        h = hashlib.sha256(f"{im.mode}:{im.size[0]}x{im.size[1]}:".encode())
        h.update(im.tobytes())
    return h.hexdigest()


def pixel_digest(image: np.ndarray) -> str:
    """The digest :func:`request_hash` gives an image sent as :func:`png_bytes` encodes it, read from its pixels
    without encoding: sha256 over ``RGB:<W>x<H>:`` and the uint8 RGB pixels row by row (PNG is lossless, so the
    decoded PNG holds these bytes).

    >>> img = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    >>> pixel_digest(img) == _image_digest(png_bytes(img))
    True
    """
    a = _as_rgb(image, "image")
    h = hashlib.sha256(f"RGB:{a.shape[1]}x{a.shape[0]}:".encode())
    h.update(a.tobytes())
    return h.hexdigest()


def hash_parts(system: str, parts: Sequence, model: str, params: dict) -> str:
    """The request hash (:func:`request_hash`) of a request whose parts are given already digested:
    ``[("text", str) | ("image", pixel digest)]`` in order."""
    if not isinstance(model, str) or not model:
        raise PromptError(f"model must be a non-empty string, got {model!r}")
    try:
        payload = json.dumps({"scheme": HASH_SCHEME, "model": model, "params": params,
                              "system": system, "parts": [[kind, v] for kind, v in parts]},
                             sort_keys=True, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        raise PromptError(f"params must be JSON-serialisable without NaN: {e}") from None
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def request_hash(request: PromptRequest, model: str, params: dict) -> str:
    """sha256 (hex) over everything that changes the answer: the model name, the sampling ``params``
    (JSON, sorted keys), the system prompt, every text part and every image's decoded pixels (mode, size,
    bytes), in order. ``meta`` is not hashed: two requests that send the same thing share an answer."""
    if not isinstance(model, str) or not model:
        raise PromptError(f"model must be a non-empty string, got {model!r}")
    parts = []
    for k, (kind, p) in enumerate(request.parts):
        if kind == "text":
            parts.append(("text", p))
        elif kind == "image":
            parts.append(("image", _image_digest(p)))
        else:
            raise PromptError(f"request part {k}: unknown kind {kind!r}")
    return hash_parts(request.system, parts, model, params)


# --------------------------------------------------------------------------------------------- display

def request_images(request: PromptRequest) -> list[np.ndarray]:
    """The request's images, decoded (uint8 RGB), in order."""
    return [decode_png(b) for b in request.images]


def save_request_images(request: PromptRequest, folder: str | Path, stem: str = "request") -> list[Path]:
    """Write each image as ``<folder>/<stem>_image<k>.png`` (k from 1, atomically); returns the paths."""
    return [atomic_write_bytes(Path(folder) / f"{stem}_image{k}.png", b)
            for k, b in enumerate(request.images, start=1)]


def render_request_markdown(request: PromptRequest, image_links: Optional[Sequence[str]] = None) -> str:
    """Markdown showing exactly what is sent: the system prompt and each text part verbatim in fenced
    blocks (so tags such as ``<strokes>`` show as text), images as links (``image_links``, e.g. from
    :func:`save_request_images`) or as placeholders with size and digest."""
    texts = [request.system] + [p for kind, p in request.parts if kind == "text"]
    # a fence longer than any run of backticks in the texts (a word's text may hold some): nothing closes it early
    fence = "`" * max([4] + [len(run) + 1 for t in texts for run in re.findall(r"`+", t)])
    out = ["**System**", "", f"{fence}text", request.system, fence, ""]
    k = 0
    for kind, p in request.parts:
        if kind == "text":
            out += [f"{fence}text", p, fence, ""]
        else:
            k += 1
            if image_links is not None:
                out += [f"![image {k}]({image_links[k - 1]})", ""]
            else:
                with Image.open(io.BytesIO(p)) as im:
                    w, h = im.size
                out += [f"*[image {k}: {w} x {h} px PNG, {len(p)} bytes, "
                        f"sha256 {hashlib.sha256(p).hexdigest()[:12]}]*", ""]
    meta = {key: request.meta[key] for key in ("prompt_version", "grid", "variant") if key in request.meta}
    out.append(" · ".join(f"{a}: `{b}`" for a, b in meta.items()))
    return "\n".join(out) + "\n"
