"""InkSight Small-p: its prompts, input encoding, output token codec and the TensorFlow SavedModel loader."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from inkground_lib.components.derenderers.base import (
    Box,
    DerenderError,
    as_gray,
    check_box,
)
from inkground_lib.core.ink import Ink, as_ink

INKSIGHT_SIZE = 224


INKSIGHT_X_MAX = 224          # tokens 0..224 are x


INKSIGHT_Y_OFFSET = 225       # tokens 225..449 are y + 225


INKSIGHT_STROKE_START = 450   # token 450 starts a stroke


INKSIGHT_PROMPTS = {
    "recognize_and_derender": "Recognize and derender.",
    "derender": "Derender the ink.",
}


_TOKEN_RE = re.compile(r"<ink_token_(\d+)>")


def inksight_prompt(task: str = "recognize_and_derender", text: Optional[str] = None) -> str:
    """InkSight's prompt: "Recognize and derender." (default; the model also writes the text), "Derender
    the ink." (task "derender"), or "Derender the ink: <text>" (task "derender" with the word given)."""
    if task not in INKSIGHT_PROMPTS:
        raise DerenderError(f"inksight_prompt: task must be one of {sorted(INKSIGHT_PROMPTS)}, got {task!r}")
    if text is not None:
        if task != "derender":
            raise DerenderError("inksight_prompt: a text is only given with task 'derender'")
        return f"Derender the ink: {text}"
    return INKSIGHT_PROMPTS[task]


@dataclass(frozen=True)
class InkSightInput:
    """A crop prepared for InkSight: the 224 x 224 RGB canvas, its JPEG bytes, and the mapping
    x224 = u * ratio + dx, y224 = v * ratio + dy (u, v crop pixels); ``crop_size`` = (w, h)."""

    image: np.ndarray
    jpeg: bytes
    ratio: float
    dx: int
    dy: int
    crop_size: tuple[int, int]


def prepare_inksight_crop(crop: np.ndarray, jpeg_quality: int = 95) -> InkSightInput:
    """Scale the crop by ratio = min(224 / w, 224 / h) (Lanczos), centre it on a 224 x 224 canvas with
    BLACK padding (offsets dx, dy = floor of half the free space) and JPEG-encode it (RGB)."""
    from PIL import Image

    a = np.asarray(crop)
    gray = as_gray(a)  # validates
    rgb = np.repeat(gray[:, :, None], 3, axis=2) if a.ndim == 2 else np.ascontiguousarray(a[:, :, :3])
    h, w = gray.shape
    ratio = min(INKSIGHT_SIZE / w, INKSIGHT_SIZE / h)
    nw = min(max(int(w * ratio), 1), INKSIGHT_SIZE)
    nh = min(max(int(h * ratio), 1), INKSIGHT_SIZE)
    small = np.asarray(Image.fromarray(rgb).resize((nw, nh), Image.Resampling.LANCZOS))
    canvas = np.zeros((INKSIGHT_SIZE, INKSIGHT_SIZE, 3), np.uint8)
    dx, dy = (INKSIGHT_SIZE - nw) // 2, (INKSIGHT_SIZE - nh) // 2
    canvas[dy:dy + nh, dx:dx + nw] = small
    buf = io.BytesIO()
    Image.fromarray(canvas).save(buf, format="JPEG", quality=int(jpeg_quality))
    return InkSightInput(canvas, buf.getvalue(), float(ratio), int(dx), int(dy), (int(w), int(h)))


def split_inksight_output(text: str) -> tuple[str, list[np.ndarray]]:
    """(recognised text, strokes) of an InkSight output: the text before the first ink token (stripped;
    "" if none) and :func:`decode_ink_tokens` of the rest."""
    if not isinstance(text, str):
        raise DerenderError(f"InkSight output: expected a string, got {type(text).__name__}")
    m = _TOKEN_RE.search(text)
    head = text if m is None else text[:m.start()]
    return head.strip(), decode_ink_tokens(text)


def decode_ink_tokens(text: str) -> list[np.ndarray]:
    """Strokes, each an (n, 2) float array of x, y in the 224 x 224 canvas, from ``<ink_token_N>`` tokens.

    N in 0..224 is an x, 225..449 a y (N - 225), 450 starts a stroke; a point is an x followed by a y.
    An x without a following y, a y without a preceding x and any other N are dropped; tokens before the
    first 450 form a stroke too; empty strokes are dropped. Any non-token text is ignored.
    """
    if not isinstance(text, str):
        raise DerenderError(f"InkSight output: expected a string, got {type(text).__name__}")
    strokes: list[list[tuple[float, float]]] = [[]]
    pending_x: Optional[int] = None
    for m in _TOKEN_RE.finditer(text):
        n = int(m.group(1))
        if n == INKSIGHT_STROKE_START:
            strokes.append([])
            pending_x = None
        elif 0 <= n <= INKSIGHT_X_MAX:
            pending_x = n  # a previous unpaired x is dropped
        elif INKSIGHT_Y_OFFSET <= n < INKSIGHT_Y_OFFSET + INKSIGHT_SIZE + 1:
            if pending_x is not None:
                strokes[-1].append((float(pending_x), float(n - INKSIGHT_Y_OFFSET)))
            pending_x = None
        else:
            pending_x = None  # out of range: dropped (and it breaks a pending pair)
    return [np.asarray(s, np.float64).reshape(-1, 2) for s in strokes if s]


def inksight_to_page(strokes224: Sequence[np.ndarray], prep: InkSightInput, crop_box: Box) -> Ink:
    """Map 224-canvas strokes back to page pixels: u = (x224 - dx) / ratio (crop pixels), then
    x = x0 + u * (x1 - x0) / w; likewise for y. t is NaN (InkSight gives no times)."""
    x0, y0, x1, y1 = check_box(crop_box)
    w, h = prep.crop_size
    out = []
    for s in strokes224:
        s = np.asarray(s, np.float64).reshape(-1, 2)
        u = (s[:, 0] - prep.dx) / prep.ratio
        v = (s[:, 1] - prep.dy) / prep.ratio
        out.append(np.column_stack([x0 + u * (x1 - x0) / w, y0 + v * (y1 - y0) / h]))
    return as_ink(out, "InkSight output")


INKSIGHT_HELP = ("InkSight needs: pip install 'tensorflow>=2.15,<2.18' tensorflow-text, and the SavedModel "
                 "from https://huggingface.co/Derendering/InkSight-Small-p (e.g. `huggingface-cli download "
                 "Derendering/InkSight-Small-p --local-dir <dir>`), passed as model_path=<dir>.")


class InkSightDerenderer:
    """InkSight Small-p (TF SavedModel, signature serving_default) as a :class:`Derenderer`.

    The constructor imports tensorflow and tensorflow_text and loads ``model_path``; it raises
    :class:`DerenderError` naming what is missing and how to get it. Not runnable in the default
    (offline, TensorFlow-free) environment; the pure parts are module functions tested offline.
    """

    name = "inksight-small-p"
    parallel = False  # a TensorFlow model: loaded once, in one process

    def __init__(self, model_path: str | Path, task: str = "recognize_and_derender",
                 jpeg_quality: int = 95):
        self.prompt_task = task
        inksight_prompt(task)  # validates
        self.jpeg_quality = int(jpeg_quality)
        self.last_text: Optional[str] = None
        path = Path(model_path)
        if not (path / "saved_model.pb").is_file():
            raise DerenderError(f"InkSight: no SavedModel at {path} (saved_model.pb missing). {INKSIGHT_HELP}")
        missing = []
        try:
            import tensorflow as tf  # noqa: F401
        except ImportError:
            missing.append("tensorflow")
        try:
            import tensorflow_text  # noqa: F401  (registers the ops the SavedModel uses)
        except ImportError:
            missing.append("tensorflow-text")
        if missing:
            raise DerenderError(f"InkSight: missing package(s) {', '.join(missing)}. {INKSIGHT_HELP}")
        import tensorflow as tf

        self._tf = tf
        self._fn = tf.saved_model.load(str(path)).signatures["serving_default"]

    def run_model(self, jpeg: bytes, prompt: str) -> str:
        """One call of the SavedModel (input names from the public InkSight notebook): raw output text."""
        tf = self._tf
        out = self._fn(**{"input_text": tf.constant([prompt], dtype=tf.string),
                          "image/encoded": tf.reshape(tf.constant(jpeg, dtype=tf.string), (1, 1))})
        val = out["output_0"].numpy().reshape(-1)[0]
        return val.decode("utf-8") if isinstance(val, bytes) else str(val)

    def derender(self, crop: np.ndarray, crop_box: Box, text: Optional[str] = None) -> Ink:
        box = check_box(crop_box)
        prep = prepare_inksight_crop(crop, self.jpeg_quality)
        prompt = inksight_prompt("derender", text) if (text is not None and self.prompt_task == "derender") \
            else inksight_prompt(self.prompt_task)
        raw = self.run_model(prep.jpeg, prompt)
        self.last_text, strokes = split_inksight_output(raw)
        return inksight_to_page(strokes, prep, box)
