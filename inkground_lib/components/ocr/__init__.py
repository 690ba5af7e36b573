"""OCR engines behind one small interface (used for AR / CR readability and for the pseudo-label OCR filter).

``make_engine`` (``factory``) builds an engine by name: "rapidocr" (``rapidocr``, the offline
default), "deepseek-ocr" (``deepseek``: a client of an OpenAI-compatible server running DeepSeek-OCR, e.g. vLLM;
DEEPSEEK_OCR_BASE_URL) or "tesseract" (``tesseract``); each reads a list of word images into a list of raw
strings. ``base`` holds the protocol, the errors and the image checks; ``factory`` the engines' table and cards.
The design page of the book has the details; the names below are re-exported here, each imported on first use
(so ``make clean`` can read the cards without numpy).
"""

from __future__ import annotations

import importlib

_PUBLIC = {
    "OCREngine": "base", "OCRUnavailable": "base", "OCRInputError": "base", "OCRError": "base",
    "as_ocr_image": "base", "make_engine": "factory", "engine_names": "factory",
    "RapidOCREngine": "rapidocr", "rapidocr_rec_model": "rapidocr",
    "DeepSeekOCREngine": "deepseek", "clean_deepseek_text": "deepseek", "square_pad": "deepseek",
    "TesseractEngine": "tesseract", "tesseract_command": "tesseract",
}

__all__ = list(_PUBLIC)


def __getattr__(name: str):
    try:
        module = _PUBLIC[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(__all__)
