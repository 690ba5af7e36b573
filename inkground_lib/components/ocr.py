"""OCR engines behind one small interface (used for AR / CR readability and for the pseudo-label OCR filter).

``get_engine`` builds an engine by name: "rapidocr" (the offline default), "deepseek-ocr" or "tesseract";
each reads a list of word images into a list of raw strings. The design page of the book has the details.
"""

from __future__ import annotations

import inspect
import logging
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Callable, Protocol, Sequence, runtime_checkable

import cv2
import numpy as np
from tqdm.auto import tqdm

from inkground_lib.core.files import sha256_file

__all__ = [
    "OCREngine", "OCRUnavailable", "OCRInputError", "OCRError", "get_engine", "engine_names",
    "RapidOCREngine", "DeepSeekOCREngine", "TesseractEngine", "rapidocr_rec_model", "deepseek_preflight",
    "tesseract_command", "as_ocr_image",
]


class OCRUnavailable(RuntimeError):
    """An OCR engine that cannot run here: program, model file, weights or hardware missing."""


class OCRInputError(ValueError):
    """An image an OCR engine cannot take (wrong type, dtype, shape, or empty)."""


class OCRError(RuntimeError):
    """An OCR engine that failed while reading (e.g. tesseract exiting with an error)."""


@runtime_checkable
class OCREngine(Protocol):
    """Anything with a name that reads a sequence of word images to one string per image."""

    name: str

    def read(self, images: Sequence[np.ndarray]) -> list[str]:
        ...


# ----------------------------------------------------------------------------------------------------------
# input images


def as_ocr_image(img, where: str = "image") -> np.ndarray:
    """Validate a word image and return it as a uint8 grayscale (rows, cols) or RGB (rows, cols, 3) array.

    Accepted: uint8 arrays (rows, cols), (rows, cols, 1), (rows, cols, 3) = RGB, (rows, cols, 4) = RGBA
    (composited over white). Anything else raises :class:`OCRInputError` naming ``where``.
    """
    if not isinstance(img, np.ndarray):
        raise OCRInputError(f"{where}: expected a numpy array, got {type(img).__name__}")
    if img.dtype != np.uint8:
        raise OCRInputError(f"{where}: expected dtype uint8, got {img.dtype}")
    if img.ndim == 3 and img.shape[2] == 1:
        img = img[:, :, 0]
    if img.ndim == 3 and img.shape[2] == 4:
        a = img[:, :, 3:4].astype(np.float32) / 255.0
        img = np.round(img[:, :, :3] * a + 255.0 * (1.0 - a)).astype(np.uint8)
    if not (img.ndim == 2 or (img.ndim == 3 and img.shape[2] == 3)):
        raise OCRInputError(f"{where}: expected shape (rows, cols) or (rows, cols, 1|3|4), got {img.shape}")
    if img.shape[0] == 0 or img.shape[1] == 0:
        raise OCRInputError(f"{where}: empty image of shape {img.shape}")
    return np.ascontiguousarray(img)


def _to_bgr(img: np.ndarray) -> np.ndarray:
    """A validated grayscale / RGB image as the 3-channel BGR array OpenCV-based engines expect."""
    if img.ndim == 2:
        return cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    return cv2.cvtColor(img, cv2.COLOR_RGB2BGR)


def _check_images(images: Sequence[np.ndarray]) -> list[np.ndarray]:
    if isinstance(images, np.ndarray) and images.ndim in (2, 3) and images.dtype == np.uint8 \
            and (images.ndim == 2 or images.shape[2] in (1, 3, 4)):
        raise OCRInputError("read() takes a sequence of images, not a single image: wrap it in a list")
    return [as_ocr_image(im, f"image {i}") for i, im in enumerate(images)]


# ----------------------------------------------------------------------------------------------------------
# RapidOCR (offline default)

RAPIDOCR_PARAMS = {"Global.use_det": False, "Global.use_cls": False, "Global.use_rec": True,
                   "Global.log_level": "warning"}
_RAPID_LOCK = threading.Lock()
_RAPID_CACHE: dict[tuple, object] = {}


def rapidocr_rec_model(verify_sha256: bool = True) -> Path:
    """Path of the recognition model RapidOCR uses by default, checked to be present in the installed wheel.

    Resolved the way RapidOCR resolves it (its config.yaml + default_models.yaml: file name of the model
    URL, inside ``rapidocr/models``), but without ever downloading: a missing file (or, with
    ``verify_sha256``, a file whose SHA-256 differs from the one rapidocr lists) raises
    :class:`OCRUnavailable`.
    """
    try:
        import rapidocr
        from rapidocr.inference_engine.base import FileInfo, InferSession
        from rapidocr.main import DEFAULT_CFG_PATH
        from rapidocr.utils.parse_parameters import ParseParams
    except ImportError as e:  # pragma: no cover - rapidocr is a pinned requirement
        raise OCRUnavailable(f"rapidocr is not installed ({e}); install the pinned requirements.txt") from e
    cfg = ParseParams.load(DEFAULT_CFG_PATH).Rec
    info = InferSession.get_model_url(FileInfo(engine_type=cfg.engine_type, ocr_version=cfg.ocr_version,
                                               task_type=cfg.task_type, lang_type=cfg.lang_type,
                                               model_type=cfg.model_type))
    path = Path(rapidocr.__file__).resolve().parent / "models" / Path(str(info["model_dir"])).name
    if not path.is_file():
        raise OCRUnavailable(
            f"RapidOCR recognition model {path.name} is missing from the installed rapidocr package "
            f"({path.parent}); inkground never lets RapidOCR download it. Reinstall the pinned wheel "
            f"(pip install --force-reinstall rapidocr==3.10.0).")
    if verify_sha256 and info.get("SHA256") and sha256_file(path) != str(info["SHA256"]):
        raise OCRUnavailable(f"RapidOCR recognition model {path} does not have the SHA-256 rapidocr expects "
                             f"({info['SHA256']}); reinstall the pinned rapidocr wheel.")
    return path


def _rapidocr_instance(threads: int | None):
    """The process-wide RapidOCR object (recognition only) for ``threads``; built on first use."""
    model = rapidocr_rec_model()
    key = (str(model), threads)
    with _RAPID_LOCK:
        eng = _RAPID_CACHE.get(key)
        if eng is None:
            from rapidocr import RapidOCR

            logging.getLogger("RapidOCR").setLevel(logging.WARNING)
            params = dict(RAPIDOCR_PARAMS)
            params["Rec.model_path"] = str(model)
            params["Rec.rec_batch_num"] = 1 << 30  # never split our batches: we form them ourselves
            if threads is not None:
                params["EngineConfig.onnxruntime.intra_op_num_threads"] = int(threads)
                params["EngineConfig.onnxruntime.inter_op_num_threads"] = 1
            eng = RapidOCR(params=params)
            eng._load_rec_model()  # load now: errors surface at construction, not mid-run
            _RAPID_CACHE[key] = eng
        return eng


class RapidOCREngine:
    """RapidOCR recognition only (see module doc).

    ``batch_size``: images per ONNX Runtime run (images of one batch share a padded width); ``threads``:
    ONNX Runtime intra-op threads (None: RapidOCR's default, all cores); ``progress``: tqdm bar. Defaults
    are the fastest measured on a shared 2-core CPU: one thread (1.7x faster than two, whose spinning
    starves under load) and batches of one (batching the 48 x 320 recogniser gained nothing on CPU:
    46 vs 37-42 words/s); larger batches can pay with another ONNX Runtime provider.
    """

    name = "rapidocr"
    parallel = True  # light (one 10 MB recogniser per process): page-parallel stages may run one per worker

    def __init__(self, batch_size: int = 1, threads: int | None = 1, progress: bool = True):
        if int(batch_size) < 1:
            raise ValueError(f"RapidOCREngine: batch_size must be >= 1, got {batch_size}")
        self.batch_size = int(batch_size)
        self.threads = threads
        self.progress = progress
        self._ocr = _rapidocr_instance(threads)
        shape = list(self._ocr.cfg.Rec.rec_img_shape)
        self._rec_h, self._min_ratio = int(shape[1]), float(shape[2]) / float(shape[1])

    def _pad_width(self, img: np.ndarray) -> int:
        """Width RapidOCR pads ``img`` to when it is recognised alone (rec_img_shape 48 x 320 by default)."""
        h, w = img.shape[:2]
        return int(self._rec_h * max(self._min_ratio, w / float(h)))

    def read_scored(self, images: Sequence[np.ndarray]) -> list[tuple[str, float]]:
        """(text, recogniser confidence in [0, 1]) per image; ``("", 0.0)`` when nothing is read."""
        from rapidocr.ch_ppocr_rec import TextRecInput

        imgs = _check_images(images)
        prepped = [self._ocr.preprocess_img(_to_bgr(im))[0] for im in imgs]
        groups: dict[int, list[int]] = {}
        for i, im in enumerate(prepped):
            groups.setdefault(self._pad_width(im), []).append(i)
        batches = [idx[k:k + self.batch_size] for _, idx in sorted(groups.items())
                   for k in range(0, len(idx), self.batch_size)]
        out: list[tuple[str, float]] = [("", 0.0)] * len(imgs)
        with tqdm(total=len(imgs), desc="RapidOCR", unit="img", disable=not self.progress or not imgs,
                  leave=False) as bar:
            for b in batches:
                r = self._ocr.text_rec(TextRecInput(img=[prepped[i] for i in b], return_word_box=False))
                for i, t, s in zip(b, r.txts, r.scores):
                    out[i] = (str(t).strip(), float(s) if str(t).strip() else 0.0)
                bar.update(len(b))
        return out

    def read(self, images: Sequence[np.ndarray]) -> list[str]:
        return [t for t, _ in self.read_scored(images)]


# ----------------------------------------------------------------------------------------------------------
# DeepSeek-OCR (GPU, optional)

DEEPSEEK_REPO = "deepseek-ai/DeepSeek-OCR"
DEEPSEEK_PROMPT = "<image>\nFree OCR."
_DEEPSEEK_CACHE: dict[tuple, tuple] = {}


def _cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def deepseek_preflight(path: str | Path | None = None, cache_dir: str | Path | None = None) -> Path:
    """Check that DeepSeek-OCR can run here, without loading it or touching the network.

    Needs CUDA (the model's code calls ``.cuda()``) and its weights: ``path`` (a folder holding
    ``config.json``) or, when ``path`` is None, a snapshot of ``deepseek-ai/DeepSeek-OCR`` in the Hugging
    Face cache (``cache_dir`` or the default cache; looked up with ``local_files_only=True``). Returns the
    weights folder; raises :class:`OCRUnavailable` listing everything that is missing.
    """
    problems = []
    if not _cuda_available():
        problems.append("CUDA is not available (torch.cuda.is_available() is False); DeepSeek-OCR runs on "
                        "an NVIDIA GPU only")
    weights = None
    if path is not None:
        p = Path(path).expanduser()
        if not (p / "config.json").is_file():
            problems.append(f"no DeepSeek-OCR weights at {p} (expected a folder with config.json and the "
                            f"safetensors files)")
        else:
            weights = p
    else:
        try:
            from huggingface_hub import snapshot_download

            weights = Path(snapshot_download(DEEPSEEK_REPO, local_files_only=True,
                                             cache_dir=None if cache_dir is None else str(cache_dir)))
            if not (weights / "config.json").is_file():
                raise FileNotFoundError(weights / "config.json")
        except Exception as e:  # LocalEntryNotFoundError, FileNotFoundError, ...
            weights = None
            problems.append(f"the DeepSeek-OCR weights are not in the Hugging Face cache "
                            f"({cache_dir or 'default cache'}; {type(e).__name__}); the hub is never contacted: "
                            f"download {DEEPSEEK_REPO} on a connected machine and pass its folder as path=")
    if problems:
        raise OCRUnavailable("deepseek-ocr cannot run here: " + "; ".join(problems) + ".")
    assert weights is not None
    return weights


class DeepSeekOCREngine:
    """DeepSeek-OCR (~3B, bf16, CUDA) reading each image with ``prompt``; ``base_size`` / ``image_size`` /
    ``crop_mode`` are its resolution settings (640 / 640 / False = its "Small" mode, ample for a word).
    Construction runs :func:`deepseek_preflight` first, then loads the model once per process."""

    name = "deepseek-ocr"
    parallel = False  # one 6.7 GB model on one GPU: never one per worker

    def __init__(self, path: str | Path | None = None, cache_dir: str | Path | None = None,
                 prompt: str = DEEPSEEK_PROMPT, base_size: int = 640, image_size: int = 640,
                 crop_mode: bool = False, progress: bool = True):
        if "<image>" not in prompt:
            raise ValueError("DeepSeekOCREngine: the prompt must contain the <image> placeholder")
        self.weights = deepseek_preflight(path, cache_dir)
        self.prompt, self.base_size, self.image_size, self.crop_mode = prompt, base_size, image_size, crop_mode
        self.progress = progress
        key = (str(self.weights),)
        if key not in _DEEPSEEK_CACHE:
            import torch
            from transformers import AutoModel, AutoTokenizer

            try:
                tok = AutoTokenizer.from_pretrained(str(self.weights), trust_remote_code=True,
                                                    local_files_only=True)
                model = AutoModel.from_pretrained(str(self.weights), trust_remote_code=True,
                                                  use_safetensors=True, local_files_only=True)
            except Exception as e:
                raise OCRUnavailable(f"deepseek-ocr: loading {self.weights} failed ({type(e).__name__}: {e}); "
                                     f"its remote code expects the transformers 4.46-era API") from e
            model = model.eval().cuda().to(torch.bfloat16)
            _DEEPSEEK_CACHE[key] = (tok, model)
        self._tok, self._model = _DEEPSEEK_CACHE[key]

    def read(self, images: Sequence[np.ndarray]) -> list[str]:
        imgs = _check_images(images)
        out = []
        with tempfile.TemporaryDirectory(prefix="inkground-dsocr-") as tmp:
            for i, im in enumerate(tqdm(imgs, desc="DeepSeek-OCR", unit="img", leave=False,
                                        disable=not self.progress or not imgs)):
                f = Path(tmp) / f"word{i}.png"
                cv2.imwrite(str(f), im if im.ndim == 2 else _to_bgr(im))
                res = self._model.infer(self._tok, prompt=self.prompt, image_file=str(f), output_path=tmp,
                                        base_size=self.base_size, image_size=self.image_size,
                                        crop_mode=self.crop_mode, save_results=False, test_compress=False,
                                        eval_mode=True)
                out.append("" if res is None else str(res).strip())
        return out


# ----------------------------------------------------------------------------------------------------------
# tesseract (optional command-line program)


def tesseract_command(binary: str = "tesseract", psm: int = 8, lang: str = "eng",
                      oem: int | None = None, extra: Sequence[str] = ()) -> list[str]:
    """argv reading one PNG from stdin and writing the text to stdout (tesseract >= 4).

    ``psm`` = page segmentation mode (8: the image is a single word; 7: a single line); ``oem`` = OCR engine
    mode (None: tesseract's default); ``extra`` = more arguments appended verbatim (e.g. ``["-c",
    "tessedit_char_whitelist=abc"]``).
    """
    if not 0 <= int(psm) <= 13:
        raise ValueError(f"tesseract_command: psm must be in 0..13, got {psm}")
    cmd = [str(binary), "stdin", "stdout", "--psm", str(int(psm)), "-l", str(lang)]
    if oem is not None:
        cmd += ["--oem", str(int(oem))]
    return cmd + [str(a) for a in extra]


class TesseractEngine:
    """The ``tesseract`` program (found on PATH, or ``binary``), one subprocess per image; see
    :func:`tesseract_command` for ``psm`` / ``lang`` / ``oem`` / ``extra``. ``timeout`` in seconds per image."""

    name = "tesseract"
    parallel = True  # a subprocess per call

    def __init__(self, binary: str | None = None, psm: int = 8, lang: str = "eng", oem: int | None = None,
                 extra: Sequence[str] = (), timeout: float = 60.0, progress: bool = True,
                 which: Callable[[str], str | None] = shutil.which):
        found = which(binary or "tesseract")
        if not found:
            raise OCRUnavailable(
                f"tesseract: the program {binary or 'tesseract'!r} is not on PATH. It is optional: install it "
                f"with your system's package manager (e.g. apt-get install tesseract-ocr) or use the "
                f"'rapidocr' engine.")
        self.command = tesseract_command(found, psm, lang, oem, extra)
        self.timeout, self.progress = float(timeout), progress

    def read(self, images: Sequence[np.ndarray]) -> list[str]:
        imgs = _check_images(images)
        out = []
        for i, im in enumerate(tqdm(imgs, desc="tesseract", unit="img", leave=False,
                                    disable=not self.progress or not imgs)):
            ok, png = cv2.imencode(".png", im if im.ndim == 2 else _to_bgr(im))
            if not ok:  # pragma: no cover - cv2 encodes any valid uint8 image
                raise OCRError(f"tesseract: image {i} could not be PNG-encoded")
            try:
                r = subprocess.run(self.command, input=png.tobytes(), capture_output=True,
                                   timeout=self.timeout, check=False)
            except subprocess.TimeoutExpired as e:
                raise OCRError(f"tesseract: image {i} timed out after {self.timeout} s") from e
            if r.returncode != 0:
                err = r.stderr.decode("utf-8", "replace").strip()[-500:]
                raise OCRError(f"tesseract failed on image {i} (exit {r.returncode}): {err}")
            out.append(r.stdout.decode("utf-8", "replace").strip())
        return out


# ----------------------------------------------------------------------------------------------------------
# registry

_ENGINES: dict[str, Callable[..., OCREngine]] = {
    "rapidocr": RapidOCREngine,
    "deepseek-ocr": DeepSeekOCREngine,
    "tesseract": TesseractEngine,
}


def engine_names() -> list[str]:
    """Names :func:`get_engine` accepts."""
    return sorted(_ENGINES)


def get_engine(name: str, progress: bool | None = None, **kw) -> OCREngine:
    """Build the OCR engine ``name`` ("rapidocr", "deepseek-ocr", "tesseract") with keyword settings ``kw``.

    ``progress`` (show a progress bar) is passed to the engines that have one and ignored by the others.
    Raises ValueError for an unknown name and :class:`OCRUnavailable` when the engine cannot run here.
    """
    try:
        factory = _ENGINES[name]
    except KeyError:
        raise ValueError(f"unknown OCR engine {name!r}; known: {', '.join(engine_names())}") from None
    if progress is not None and "progress" in inspect.signature(factory).parameters:
        kw["progress"] = progress
    return factory(**kw)
