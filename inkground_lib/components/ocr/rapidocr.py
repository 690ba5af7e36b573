"""RapidOCR, recognition only: the offline default OCR engine (its recogniser ships in the pinned wheel and is
never downloaded)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from inkground_lib.components.ocr.base import OCRUnavailable, check_images, to_bgr
from inkground_lib.core.files import sha256_file
from inkground_lib.core.progress import bar as progress_bar

RAPIDOCR_PARAMS = {"Global.use_det": False, "Global.use_cls": False, "Global.use_rec": True,
                   "Global.log_level": "warning"}
RAPIDOCR_MIN_WIDTH = 320
"""The recogniser's minimum input width in pixels (at its 48-pixel height): RapidOCR's own (``Rec.rec_img_shape``
[3, 48, 320], PaddleOCR's training shape), so a word image narrower than 320/48 = 6.7 times its height - nearly
every word, ~90 pixels wide at 48 high - is padded to 320 and most of the network's work is on the padding. A
narrower minimum (``RapidOCREngine(min_width=96)``) reads 2.4-3.3x faster and reads the synthetic book's words
slightly better, but real handwriting worse: on renders of 2,000 UNIPEN words of 358 writers 55.3% right at 96
against 59.0% at 320 (150 words lost, 76 gained; McNemar p < 1e-6), on the recorded set's 228 words 92 against 104
(``benchmarks/bench_ocr_batch.py``, ``benchmarks/results/ocr_width.txt``). Real writing is what the readability
metrics are for, so the default stays RapidOCR's."""
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


def _rapidocr_default_rec_shape() -> list:
    """RapidOCR's own recogniser input shape [channels, height, minimum width] (its config.yaml)."""
    from rapidocr.main import DEFAULT_CFG_PATH
    from rapidocr.utils.parse_parameters import ParseParams

    return [int(v) for v in ParseParams.load(DEFAULT_CFG_PATH).Rec.rec_img_shape]


def _rapidocr_instance(threads: int | None, min_width: int = RAPIDOCR_MIN_WIDTH):
    """The process-wide RapidOCR object (recognition only) for ``threads`` and ``min_width``; built on first use."""
    model = rapidocr_rec_model()
    key = (str(model), threads, int(min_width))
    with _RAPID_LOCK:
        eng = _RAPID_CACHE.get(key)
        if eng is None:
            from rapidocr import RapidOCR

            logging.getLogger("RapidOCR").setLevel(logging.WARNING)
            params = dict(RAPIDOCR_PARAMS)
            params["Rec.model_path"] = str(model)
            params["Rec.rec_batch_num"] = 1 << 30  # never split our batches: we form them ourselves
            shape = list(_rapidocr_default_rec_shape())
            params["Rec.rec_img_shape"] = shape[:2] + [int(min_width)]  # RapidOCR's own: [3, 48, 320]
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
    ONNX Runtime intra-op threads (None: RapidOCR's default, all cores); ``min_width``: the recogniser's
    minimum input width in pixels at its 48-pixel height (:data:`RAPIDOCR_MIN_WIDTH`; 320 reads as RapidOCR
    does; it changes what is read, so it is part of the engine's key); ``progress``: tqdm bar. Defaults
    are the fastest measured on a shared 2-core CPU: one thread (1.7x faster than two, whose spinning
    starves under load) and batches of one (batching the recogniser at 48 x 320 gained nothing on CPU:
    46 vs 37-42 words/s); larger batches can pay with another ONNX Runtime provider.
    """

    name = "rapidocr"
    parallel = True  # light (one 10 MB recogniser per process): page-parallel stages may run one per worker

    def __init__(self, batch_size: int = 1, threads: int | None = 1, progress: bool = True,
                 min_width: int = RAPIDOCR_MIN_WIDTH):
        if int(batch_size) < 1:
            raise ValueError(f"RapidOCREngine: batch_size must be >= 1, got {batch_size}")
        if not 16 <= int(min_width) <= 4096:
            raise ValueError(f"RapidOCREngine: min_width must be 16-4096 pixels, got {min_width}")
        self.batch_size = int(batch_size)
        self.threads = threads
        self.progress = progress
        self.min_width = int(min_width)
        self._ocr = _rapidocr_instance(threads, self.min_width)
        shape = list(self._ocr.cfg.Rec.rec_img_shape)
        self._rec_h, self._min_ratio = int(shape[1]), float(shape[2]) / float(shape[1])

    def _pad_width(self, img: np.ndarray) -> int:
        """Width RapidOCR pads ``img`` to when it is recognised alone (at least ``min_width``)."""
        h, w = img.shape[:2]
        return int(self._rec_h * max(self._min_ratio, w / float(h)))

    def read_scored(self, images: Sequence[np.ndarray]) -> list[tuple[str, float]]:
        """(text, recogniser confidence in [0, 1]) per image; ``("", 0.0)`` when nothing is read."""
        from rapidocr.ch_ppocr_rec import TextRecInput

        imgs = check_images(images)
        prepped = [self._ocr.preprocess_img(to_bgr(im))[0] for im in imgs]
        groups: dict[int, list[int]] = {}
        for i, im in enumerate(prepped):
            groups.setdefault(self._pad_width(im), []).append(i)
        batches = [idx[k:k + self.batch_size] for _, idx in sorted(groups.items())
                   for k in range(0, len(idx), self.batch_size)]
        out: list[tuple[str, float]] = [("", 0.0)] * len(imgs)
        with progress_bar(total=len(imgs), desc="RapidOCR", unit="img", enabled=bool(self.progress and imgs),
                          leave=False) as bar:
            for b in batches:
                r = self._ocr.text_rec(TextRecInput(img=[prepped[i] for i in b], return_word_box=False))
                for i, t, s in zip(b, r.txts, r.scores):
                    out[i] = (str(t).strip(), float(s) if str(t).strip() else 0.0)
                bar.update(len(b))
        return out

    def read(self, images: Sequence[np.ndarray]) -> list[str]:
        return [t for t, _ in self.read_scored(images)]
