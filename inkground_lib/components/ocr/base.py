"""What every OCR engine shares: the :class:`OCREngine` protocol, the errors, and the checks of the word
images it is given (uint8 grayscale, RGB or RGBA)."""

from __future__ import annotations

from typing import Protocol, Sequence, runtime_checkable

import cv2
import numpy as np


class OCRUnavailable(RuntimeError):
    """An OCR engine that cannot run here: program, model file or server setting missing."""


class OCRInputError(ValueError):
    """An image an OCR engine cannot take (wrong type, dtype, shape, or empty)."""


class OCRError(RuntimeError):
    """An OCR engine that failed while reading (e.g. tesseract exiting with an error, an OCR server down)."""


@runtime_checkable
class OCREngine(Protocol):
    """Anything with a name that reads a sequence of word images to one string per image."""

    name: str

    def read(self, images: Sequence[np.ndarray]) -> list[str]:
        ...


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


def to_bgr(img: np.ndarray) -> np.ndarray:
    """A validated grayscale / RGB image as the 3-channel BGR array OpenCV-based engines expect."""
    if img.ndim == 2:
        return cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    return cv2.cvtColor(img, cv2.COLOR_RGB2BGR)


def check_images(images: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Every image of ``images`` through :func:`as_ocr_image` (named "image i"); a single image instead of a
    sequence is refused."""
    if isinstance(images, np.ndarray) and images.ndim in (2, 3) and images.dtype == np.uint8 \
            and (images.ndim == 2 or images.shape[2] in (1, 3, 4)):
        raise OCRInputError("read() takes a sequence of images, not a single image: wrap it in a list")
    return [as_ocr_image(im, f"image {i}") for i, im in enumerate(images)]
