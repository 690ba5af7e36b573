"""OCR engines behind one small interface (used for AR / CR readability and for the pseudo-label OCR filter).

``get_engine`` (``factory``) builds an engine by name: "rapidocr" (``rapidocr``, the offline default),
"deepseek-ocr" (``deepseek``: a client of an OpenAI-compatible server running DeepSeek-OCR, e.g. vLLM;
DEEPSEEK_OCR_BASE_URL) or "tesseract" (``tesseract``); each reads a list of word images into a list of raw
strings. ``base`` holds the protocol, the errors and the image checks. The design page of the book has the
details; the names below are re-exported here.
"""

from __future__ import annotations

from inkground_lib.components.ocr.base import (
    OCREngine,
    OCRError,
    OCRInputError,
    OCRUnavailable,
    as_ocr_image,
)
from inkground_lib.components.ocr.deepseek import DeepSeekOCREngine, clean_deepseek_text, square_pad
from inkground_lib.components.ocr.factory import engine_names, get_engine
from inkground_lib.components.ocr.rapidocr import RapidOCREngine, rapidocr_rec_model
from inkground_lib.components.ocr.tesseract import TesseractEngine, tesseract_command

__all__ = [
    "OCREngine", "OCRUnavailable", "OCRInputError", "OCRError", "get_engine", "engine_names",
    "RapidOCREngine", "DeepSeekOCREngine", "TesseractEngine", "rapidocr_rec_model", "clean_deepseek_text",
    "square_pad", "tesseract_command", "as_ocr_image",
]
