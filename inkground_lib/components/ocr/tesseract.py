"""tesseract (optional): the command-line program, one subprocess per word image."""

from __future__ import annotations

import shutil
import subprocess
from typing import Callable, Sequence

import cv2
import numpy as np

from inkground_lib.components.ocr.base import OCRError, OCRUnavailable, check_images, to_bgr
from inkground_lib.core.progress import bar as progress_bar


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
        imgs = check_images(images)
        out = []
        for i, im in enumerate(progress_bar(imgs, desc="tesseract", unit="img", leave=False,
                                            enabled=bool(self.progress and imgs))):
            ok, png = cv2.imencode(".png", im if im.ndim == 2 else to_bgr(im))
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
