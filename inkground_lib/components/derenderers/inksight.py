"""InkSight Small-p as the public notebook runs it: the word crop, the 224 x 224 input, its JPEG, the
prompts with the fallback retry, the ink-token decoding, the mapping back to the page, and the derenderer
that calls the model in InkSight's own environment through a worker process.

Source of every rule below: google-research/inksight, colab.ipynb (checked 2026-11-30; line numbers are
those of the .ipynb file at commit 4c5a66e). Conventions: page pixels, origin top-left, y down; the model's
canvas is 224 x 224 pixels, same orientation.

* crop (:func:`inksight_crop_box`): the full-page docTR path (the notebook's default segmenter, line 1176),
  lines 830-845 - the box in whole pixels, grown by 10% of its width and height on EACH side, clipped to the
  page, then ``int`` of x0, y0, width, height; ``rotate_crop_scale_and_pad`` then rotates by 0 degrees (an
  identity in Pillow) and crops that box (lines 769-773);
* scale (:func:`prepare_inksight_crop`): ``rotate_crop_scale_and_pad``, lines 764-790 - ratio =
  min(224 / w, 224 / h), new size ``int(w * ratio) x int(h * ratio)`` with PIL's ``Image.resize`` default
  filter, which is BICUBIC for RGB images (Pillow's Image.resize documentation);
* pad: black (``pad_black=True``, lines 812 and 859), the resized crop pasted at dx = (224 - new w) // 2,
  dy = (224 - new h) // 2;
* JPEG (:func:`inksight_jpeg`): ``tf.io.encode_jpeg(np.array(image)[:, :, :3])``, lines 971 and 1089, with the
  op's defaults (tensorflow core/ops/image_ops.cc, REGISTER_OP("EncodeJpeg")): quality 95, baseline,
  4:2:0 chroma subsampling, JFIF density 300 dpi; Pillow with those settings writes the same bytes (checked
  by ``make inksight-e2e`` against TensorFlow 2.17.0);
* prompts: "Recognize and derender." and, when its answer decodes to no stroke, one retry with "Derender the
  ink." on the same image (lines 1085-1099 and 1195-1220);
* tokens (:func:`decode_ink_tokens`): ``text_to_tokens`` and ``detokenize``, lines 882-921 - any token
  outside 0..450 raises; x and y are paired by POSITION; a pair whose x or y is out of range is dropped;
* back to the page (:func:`inksight_to_page`): ``unpad_unscale_unrotate_uncrop``, lines 996-1010 -
  x = (x224 - dx) / ratio + crop x0.
"""

from __future__ import annotations

import hashlib
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np

from inkground_lib.components.derenderers.base import (
    Box,
    DerenderError,
    check_box,
    check_image,
)
from inkground_lib.core.ink import Ink, as_ink
from inkground_lib.formats.inksight_canvas import (  # the canvas geometry, shared with the InkML reader
    INKSIGHT_SIZE,
    CanvasPlacement,
    canvas_placement,
    canvas_to_box,
)


INKSIGHT_X_MAX = 224          # tokens 0..224 are x


INKSIGHT_Y_OFFSET = 225       # tokens 225..449 are y + 225


INKSIGHT_STROKE_START = 450   # token 450 starts a stroke


INKSIGHT_VOCABULARY = 451     # valid tokens: 0..450


INKSIGHT_GROW = 0.1
"""The notebook's crop growth: this fraction of the box's width (height) added on each side."""


INKSIGHT_JPEG = {"quality": 95, "subsampling": "4:2:0", "dpi": (300, 300), "optimize": False,
                 "progressive": False}
"""Pillow save options that reproduce ``tf.io.encode_jpeg``'s defaults byte for byte."""


INKSIGHT_FIRST_PROMPT = "Recognize and derender."


INKSIGHT_FALLBACK_PROMPT = "Derender the ink."


INKSIGHT_PROMPTS = {
    "recognize_and_derender": INKSIGHT_FIRST_PROMPT,
    "derender": INKSIGHT_FALLBACK_PROMPT,
}


_TOKEN_RE = re.compile(r"<ink_token_(\d+)>")


def inksight_prompt(task: str = "recognize_and_derender", text: Optional[str] = None) -> str:
    """InkSight's prompt: "Recognize and derender." (default, the notebook's first prompt; the model also
    writes the text), "Derender the ink." (task "derender", the notebook's fallback), or "Derender the ink:
    <text>" (task "derender" with the word given; the paper's derender-with-text mode, not in the notebook)."""
    if task not in INKSIGHT_PROMPTS:
        raise DerenderError(f"inksight_prompt: task must be one of {sorted(INKSIGHT_PROMPTS)}, got {task!r}")
    if text is not None:
        if task != "derender":
            raise DerenderError("inksight_prompt: a text is only given with task 'derender'")
        return f"Derender the ink: {text}"
    return INKSIGHT_PROMPTS[task]


# ----------------------------------------------------------------------------------------- the input

def inksight_crop_box(box: Sequence[float], page_size: tuple[int, int],
                      grow: float = INKSIGHT_GROW) -> tuple[int, int, int, int]:
    """The notebook's word crop (x0, y0, x1, y1) in whole page pixels for ``box`` = (x0, y0, x1, y1) page
    pixels on a page of ``page_size`` = (W, H) pixels.

    As the notebook's docTR path: the box corners truncated to whole pixels (``int``), width w and height h,
    ``grow * w`` subtracted from x0 and added to x1 (``grow * h`` for y), clipped to [0, W] x [0, H], then
    ``int`` of x0, y0 and of the clipped width and height: x1 = int(x0) + int(width), so a fractional
    growth is lost on the right and bottom. Raises :class:`DerenderError` for a box that is not 4 finite
    numbers or whose crop is empty."""
    try:
        vals = [float(v) for v in box]
    except (TypeError, ValueError):
        raise DerenderError(f"inksight_crop_box: box must be 4 numbers (x0, y0, x1, y1), got {box!r}") from None
    if len(vals) != 4 or not all(math.isfinite(v) for v in vals):
        raise DerenderError(f"inksight_crop_box: box must be 4 finite numbers (x0, y0, x1, y1), got {box!r}")
    W, H = (int(v) for v in page_size)
    if not math.isfinite(grow) or grow < 0:
        raise DerenderError(f"inksight_crop_box: grow must be >= 0, got {grow}")
    x0, y0, x1, y1 = (int(v) for v in vals)
    w, h = x1 - x0, y1 - y0
    fx0, fy0 = max(0, x0 - w * grow), max(0, y0 - h * grow)
    fx1, fy1 = min(W, x1 + w * grow), min(H, y1 + h * grow)
    cx0, cy0, cw, ch = int(fx0), int(fy0), int(fx1 - fx0), int(fy1 - fy0)
    if cw < 1 or ch < 1:
        raise DerenderError(f"inksight_crop_box: box {tuple(box)} on the {W} x {H} page gives an empty crop "
                            f"({max(cw, 0)} x {max(ch, 0)} px)")
    return cx0, cy0, cx0 + cw, cy0 + ch


def inksight_crop(photo: np.ndarray, box: Sequence[float],
                  grow: float = INKSIGHT_GROW) -> tuple[np.ndarray, Box]:
    """``(crop, crop_box)``: the page ``photo`` ((H, W) or (H, W, 3) uint8, page pixels) cut at
    :func:`inksight_crop_box` (a view), and that box as floats."""
    photo = np.asarray(photo)
    if photo.ndim not in (2, 3):
        raise DerenderError(f"photo: expected an (H, W) or (H, W, 3) image, got shape {photo.shape}")
    H, W = photo.shape[:2]
    x0, y0, x1, y1 = inksight_crop_box(box, (W, H), grow)
    return photo[y0:y1, x0:x1], (float(x0), float(y0), float(x1), float(y1))


@dataclass(frozen=True)
class InkSightInput:
    """A crop prepared for InkSight: the 224 x 224 RGB canvas, its JPEG bytes, and the mapping
    x224 = u * ratio + dx, y224 = v * ratio + dy (u, v crop pixels); ``crop_size`` = (w, h) pixels."""

    image: np.ndarray
    jpeg: bytes
    ratio: float
    dx: int
    dy: int
    crop_size: tuple[int, int]


def _as_rgb(crop) -> np.ndarray:
    a = check_image(crop, "crop", min_side=1)  # an alpha channel dropped: the notebook's np.array(image)[:, :, :3]
    if a.ndim == 2:  # a gray page: the same values in R, G and B (the notebook's pages are RGB)
        a = np.repeat(a[:, :, None], 3, axis=2)
    return np.ascontiguousarray(a)


def inksight_jpeg(canvas: np.ndarray) -> bytes:
    """JPEG bytes of an RGB uint8 image as ``tf.io.encode_jpeg`` writes them with its defaults (quality 95,
    baseline, 4:2:0, JFIF 300 dpi), written with Pillow (:data:`INKSIGHT_JPEG`)."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(_as_rgb(canvas)).save(buf, format="JPEG", **INKSIGHT_JPEG)
    return buf.getvalue()


def prepare_inksight_crop(crop: np.ndarray) -> InkSightInput:
    """The notebook's model input for a word crop ((h, w) or (h, w, 3) uint8): scaled by ratio =
    min(224 / w, 224 / h) to ``int(w * ratio) x int(h * ratio)`` pixels with PIL's bicubic filter (the
    notebook's ``resize`` default), pasted on a black 224 x 224 canvas at dx = (224 - new w) // 2,
    dy = (224 - new h) // 2, JPEG-encoded by :func:`inksight_jpeg`. Raises :class:`DerenderError` when a
    side would scale to 0 pixels (the notebook's resize fails there too)."""
    from PIL import Image

    rgb = _as_rgb(crop)
    h, w = rgb.shape[:2]
    place = canvas_placement((w, h))
    (nw, nh), dx, dy = place.new_size, place.dx, place.dy
    if nw < 1 or nh < 1:
        raise DerenderError(f"crop: {w} x {h} px scales to {nw} x {nh} px on InkSight's {INKSIGHT_SIZE} px "
                            "canvas (aspect ratio too extreme)")
    small = np.asarray(Image.fromarray(rgb).resize((nw, nh), Image.Resampling.BICUBIC))
    canvas = np.zeros((INKSIGHT_SIZE, INKSIGHT_SIZE, 3), np.uint8)
    canvas[dy:dy + nh, dx:dx + nw] = small
    return InkSightInput(canvas, inksight_jpeg(canvas), place.ratio, int(dx), int(dy), (int(w), int(h)))


# ----------------------------------------------------------------------------------------- the output

def ink_tokens(text: str) -> list[tuple[int, int]]:
    """``(N, character offset)`` of every ``<ink_token_N>`` in ``text``, in order (the notebook's
    ``text_to_tokens``, with offsets for error messages); other text is ignored."""
    if not isinstance(text, str):
        raise DerenderError(f"InkSight output: expected a string, got {type(text).__name__}")
    return [(int(m.group(1)), m.start()) for m in _TOKEN_RE.finditer(text)]


def decode_ink_tokens(text: str, strict: bool = False) -> list[np.ndarray]:
    """Strokes, each an (n, 2) float array of x, y in the 224 x 224 canvas, from InkSight's answer, as the
    notebook's ``detokenize`` reads it.

    Token N: 0..224 is an x, 225..449 a y (N - 225), 450 starts a stroke. Any N outside 0..450 raises
    :class:`DerenderError` naming the token and where it is. Other tokens are read by position: a token
    followed by a token that is not 450 forms a pair (x = first, y = second - 225) and both are consumed;
    the pair becomes a point if 0 <= x <= 224 and 0 <= y <= 224, else it is dropped (with ``strict``:
    :class:`DerenderError` naming the pair). A token followed by 450 or by nothing is skipped (``strict``:
    error). Tokens before the first 450 form a stroke too; empty strokes are dropped."""
    toks = ink_tokens(text)
    for i, (n, at) in enumerate(toks):
        if not 0 <= n < INKSIGHT_VOCABULARY:
            raise DerenderError(f"InkSight output: token {i} (<ink_token_{n}> at character {at}) is outside "
                                f"the vocabulary 0..{INKSIGHT_VOCABULARY - 1}")
    strokes: list[list[tuple[float, float]]] = []
    cur: list[tuple[float, float]] = []
    i = 0
    while i < len(toks):
        n, at = toks[i]
        if n == INKSIGHT_STROKE_START:
            if cur:
                strokes.append(cur)
            cur = []
            i += 1
        elif i + 1 < len(toks) and toks[i + 1][0] != INKSIGHT_STROKE_START:
            x, y = n, toks[i + 1][0] - INKSIGHT_Y_OFFSET
            if 0 <= x <= INKSIGHT_X_MAX and 0 <= y <= INKSIGHT_X_MAX:
                cur.append((float(x), float(y)))
            elif strict:
                raise DerenderError(f"InkSight output: tokens {i}, {i + 1} (<ink_token_{n}><ink_token_"
                                    f"{toks[i + 1][0]}> at character {at}) are not an x then a y")
            i += 2
        else:
            if strict:
                raise DerenderError(f"InkSight output: token {i} (<ink_token_{n}> at character {at}) has no "
                                    "partner before the next stroke or the end")
            i += 1
    if cur:
        strokes.append(cur)
    return [np.asarray(s, np.float64).reshape(-1, 2) for s in strokes]


def split_inksight_output(text: str, strict: bool = False) -> tuple[str, list[np.ndarray]]:
    """(recognised text, strokes) of an InkSight output: the text before the first ink token (stripped;
    "" if none) and :func:`decode_ink_tokens` of the whole."""
    toks = ink_tokens(text)
    head = text if not toks else text[:toks[0][1]]
    return head.strip(), decode_ink_tokens(text, strict)


@dataclass(frozen=True)
class InkSightAnswer:
    """What InkSight answered for one word: the prompts sent (1, or 2 after the fallback retry), the raw
    answer to each, the recognised text (of the first answer) and the strokes (224 canvas pixels) of the
    last answer."""

    prompts: tuple[str, ...]
    raw: tuple[str, ...]
    text: str
    strokes: tuple[np.ndarray, ...]


def inksight_answer(call: Callable[[str, bytes], str], jpeg: bytes,
                    first_prompt: str = INKSIGHT_FIRST_PROMPT, strict: bool = False) -> InkSightAnswer:
    """Ask ``call(prompt, jpeg)`` (one model call, raw text back) as the notebook does: ``first_prompt``;
    if its answer decodes to no stroke, once more with "Derender the ink." (:data:`INKSIGHT_FALLBACK_PROMPT`).
    A token outside the vocabulary raises :class:`DerenderError` (as the notebook's ValueError)."""
    raw = call(first_prompt, jpeg)
    text, strokes = split_inksight_output(raw, strict)
    prompts, raws = [first_prompt], [raw]
    if not strokes:
        raw2 = call(INKSIGHT_FALLBACK_PROMPT, jpeg)
        prompts.append(INKSIGHT_FALLBACK_PROMPT)
        raws.append(raw2)
        strokes = decode_ink_tokens(raw2, strict)
    return InkSightAnswer(tuple(prompts), tuple(raws), text, tuple(strokes))


def inksight_to_page(strokes224: Sequence[np.ndarray], prep: InkSightInput, crop_box: Box) -> Ink:
    """Map 224-canvas strokes back to page pixels, as the notebook: u = (x224 - dx) / ratio (crop pixels),
    x = x0 + u (for a crop box as wide as the crop; a crop box of another size scales u by
    (x1 - x0) / w). Likewise for y. t is NaN (InkSight gives no times)."""
    box = check_box(crop_box)
    w, h = prep.crop_size
    place = CanvasPlacement(prep.ratio, prep.dx, prep.dy, (w, h), (int(w * prep.ratio), int(h * prep.ratio)))
    strokes = [np.asarray(s, np.float64).reshape(-1, 2) for s in strokes224]
    return as_ink(canvas_to_box(strokes, place, box), "InkSight output")


# ----------------------------------------------------------------------------------------- the model

INKSIGHT_HELP = ("InkSight needs its own environment and the SavedModel: `make inksight-e2e` builds "
                 ".venv-inksight (requirements-inksight.txt: TensorFlow 2.17.0, tensorflow-text 2.17.0); set "
                 "INKSIGHT_PYTHON=.venv-inksight/bin/python and INKSIGHT_MODEL_DIR to the folder of "
                 "https://huggingface.co/Derendering/InkSight-Small-p (e.g. `hf download "
                 "Derendering/InkSight-Small-p --local-dir <dir>`).")


def _file_sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class InkSightDerenderer:
    """InkSight Small-p (TF SavedModel, signature serving_default) as a :class:`Derenderer`.

    The model runs in a worker process started with ``python`` (default ``$INKSIGHT_PYTHON``), InkSight's
    own environment; this process needs no TensorFlow. The constructor checks ``model_path`` (a folder
    with saved_model.pb), starts the worker and waits for the model to load; it raises
    :class:`DerenderError` naming what is missing and where. ``task`` chooses the first prompt
    (:func:`inksight_prompt`; "derender" with the word's text sends "Derender the ink: <text>"); the
    fallback retry is always the notebook's. ``loader`` ("module:function") replaces the TensorFlow loader
    in the worker (tests). :meth:`close` stops the worker.
    """

    name = "inksight-small-p"
    parallel = False  # one model in one worker process

    def __init__(self, model_path: str | Path, task: str = "recognize_and_derender",
                 python: Optional[str] = None, loader: Optional[str] = None, strict_tokens: bool = False,
                 start_timeout: float = 900.0, call_timeout: float = 600.0):
        from inkground_lib.components.derenderers.inksight_client import InkSightWorker

        inksight_prompt(task)  # validates
        self.prompt_task = task
        self.strict_tokens = bool(strict_tokens)
        self.last_text: Optional[str] = None
        self.last_answer: Optional[InkSightAnswer] = None
        path = Path(model_path)
        if not (path / "saved_model.pb").is_file():
            what = "does not exist" if not path.exists() else "holds no saved_model.pb"
            raise DerenderError(f"InkSight: no SavedModel at {path} (the folder {what}). {INKSIGHT_HELP}")
        self.model_path = path
        self.model_sha = _file_sha(path / "saved_model.pb")
        self.params = {"model_sha256": self.model_sha, "task": task, "fallback": INKSIGHT_FALLBACK_PROMPT,
                       "strict_tokens": self.strict_tokens}
        self.worker = InkSightWorker(path, python=python, loader=loader, start_timeout=start_timeout,
                                     call_timeout=call_timeout)

    def run_model(self, prompt: str, jpeg: bytes) -> str:
        """One call of the SavedModel in the worker: its raw output text."""
        return self.worker.call(prompt, jpeg)

    def first_prompt(self, text: Optional[str] = None) -> str:
        if self.prompt_task == "derender" and text is not None:
            return inksight_prompt("derender", text)
        return inksight_prompt(self.prompt_task)

    def derender_answer(self, crop: np.ndarray, crop_box: Box,
                        text: Optional[str] = None) -> tuple[Ink, InkSightAnswer]:
        """The ink in page pixels and the :class:`InkSightAnswer` behind it (prompts sent, raw answers)."""
        box = check_box(crop_box)
        prep = prepare_inksight_crop(crop)
        ans = inksight_answer(self.run_model, prep.jpeg, self.first_prompt(text), self.strict_tokens)
        return inksight_to_page(ans.strokes, prep, box), ans

    def crop(self, photo: np.ndarray, box: Sequence[float]) -> tuple[np.ndarray, Box]:
        """The word crop as the public notebook cuts it (:func:`inksight_crop`); the pseudo-label stage uses
        it instead of its default crop."""
        return inksight_crop(photo, box)

    def derender(self, crop: np.ndarray, crop_box: Box, text: Optional[str] = None) -> Ink:
        ink, ans = self.derender_answer(crop, crop_box, text)
        self.last_answer, self.last_text = ans, ans.text
        return ink

    def close(self) -> None:
        """Stop the worker process (a later call starts it again)."""
        self.worker.close()
