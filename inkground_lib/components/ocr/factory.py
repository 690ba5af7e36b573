"""Building an OCR engine from its name: the one factory the readability metrics and the OCR filter use."""

from __future__ import annotations

import inspect
from typing import Callable

from inkground_lib.components.ocr.base import OCREngine
from inkground_lib.components.ocr.deepseek import DeepSeekOCREngine
from inkground_lib.components.ocr.rapidocr import RapidOCREngine
from inkground_lib.components.ocr.tesseract import TesseractEngine

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
