"""The OCR engines, one row each: where its class is and its card (what the book and ``make clean`` say about it).
The readability metrics, the OCR filter and section 04's variants build them here by name: a new engine is its
module plus one row of :data:`ENGINES`. Standard library only at import (``make clean`` reads the cards): an
engine's module is imported when one is built."""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass

from inkground_lib.core.registry import Card, lookup


@dataclass(frozen=True)
class Engine:
    """One OCR engine: its class (``module``, ``cls``: imported when one is built) and its ``card``."""

    module: str
    cls: str
    card: Card

    def engine_class(self):
        return getattr(importlib.import_module(f"inkground_lib.components.ocr.{self.module}"), self.cls)


ENGINES: dict[str, Engine] = {
    "rapidocr": Engine("rapidocr", "RapidOCREngine", Card(
        free=True, stands_in="DeepSeek-OCR",
        text="RapidOCR (PP-OCR recogniser on CPU; inkground's offline stand-in for DeepSeek-OCR, which runs on a GPU "
             "server (vLLM) that inkground calls when DEEPSEEK_OCR_BASE_URL is set)")),
    "deepseek-ocr": Engine("deepseek", "DeepSeekOCREngine", Card(
        text="DeepSeek-OCR (the paper's OCR)")),
    "tesseract": Engine("tesseract", "TesseractEngine", Card(
        free=True, text="tesseract (an offline alternative; the paper used DeepSeek-OCR)")),
}
"""Engine name -> :class:`Engine` (its class and card): the one table of OCR engines."""


def engine_names() -> list[str]:
    """Names :func:`make_engine` accepts."""
    return sorted(ENGINES)


def make_engine(name: str, progress: bool | None = None, **kw):
    """Build the OCR engine ``name`` ("rapidocr", "deepseek-ocr", "tesseract") with keyword settings ``kw``.

    ``progress`` (show a progress bar) is passed to the engines that have one and ignored by the others.
    Raises :class:`~inkground_lib.core.registry.UnknownComponent` (a ValueError) for an unknown name and
    :class:`~inkground_lib.components.ocr.base.OCRUnavailable` when the engine cannot run here.
    """
    factory = lookup(ENGINES, name, "OCR engine", engine_names()).engine_class()
    if progress is not None and "progress" in inspect.signature(factory).parameters:
        kw["progress"] = progress
    return factory(**kw)
