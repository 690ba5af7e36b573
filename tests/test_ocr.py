"""Tests of inkground_lib.components.ocr: RapidOCR (offline default) and tesseract; DeepSeek-OCR: test_ocr_deepseek.py."""

from __future__ import annotations

import logging
import stat
from pathlib import Path

import numpy as np
import pytest
from inks import hershey_ink

from inkground_lib.components import ocr
from inkground_lib.components.ocr.base import to_bgr
from inkground_lib.core.render import render_ink

WORDS = ["hello", "world", "the", "quick", "brown", "garden", "morning", "letter", "sunday", "thanks",
         "friend", "happy"]


@pytest.fixture(scope="module")
def engine():
    return ocr.make_engine("rapidocr", progress=False)


@pytest.fixture(scope="module")
def word_images():
    return [render_ink(hershey_ink(w)) for w in WORDS]


def test_rapidocr_reads_clean_script_words(engine, word_images):
    out = engine.read(word_images)
    assert len(out) == len(WORDS) and all(isinstance(t, str) for t in out)
    right = sum(o.casefold() == w for o, w in zip(out, WORDS))
    assert right >= 10, list(zip(WORDS, out))


def test_batched_read_equals_one_by_one_and_plain_rapidocr_call(engine, word_images):
    from rapidocr import RapidOCR

    from inkground_lib.components.ocr.rapidocr import RAPIDOCR_MIN_WIDTH, _rapidocr_default_rec_shape

    long_word = render_ink(hershey_ink("understanding everything"))  # wider than RapidOCR's 320/48 ratio
    imgs = [long_word] + word_images[:5] + [np.full((64, 64), 255, np.uint8)] + [long_word[:, : long_word.shape[1] // 2]]
    batched = ocr.make_engine("rapidocr", batch_size=3, progress=False).read(imgs)
    single = ocr.make_engine("rapidocr", batch_size=1, progress=False).read(imgs)
    assert batched == single
    base = {"Global.use_det": False, "Global.use_cls": False, "Global.use_rec": True, "Global.log_level": "warning"}

    def plain_reads(params):
        plain = RapidOCR(params=params)
        return [str(plain(im, use_det=False, use_cls=False, use_rec=True).txts[0]).strip() for im in imgs]

    # the default is RapidOCR's own minimum width, and reads as RapidOCR does
    assert RAPIDOCR_MIN_WIDTH == _rapidocr_default_rec_shape()[2] == 320 and batched == plain_reads(base)
    # a narrower minimum width is RapidOCR's own rec_img_shape setting, batched or not
    narrow = ocr.make_engine("rapidocr", min_width=96, batch_size=3, progress=False).read(imgs)
    assert narrow == plain_reads({**base, "Rec.rec_img_shape": [3, 48, 96]})


def test_min_width_is_part_of_the_engine_key_and_checked():
    from inkground_lib.pseudo.keys import engine_config

    narrow, wide = (ocr.make_engine("rapidocr", min_width=w, progress=False) for w in (96, 320))
    assert engine_config(narrow) != engine_config(wide)
    assert engine_config(narrow) == engine_config(ocr.make_engine("rapidocr", min_width=96, batch_size=4))
    with pytest.raises(ValueError, match="min_width"):
        ocr.make_engine("rapidocr", min_width=0)


def test_blank_image_reads_empty_and_garbage_is_a_string(engine):
    rng = np.random.default_rng(0)
    out = engine.read([np.full((64, 64), 255, np.uint8), rng.integers(0, 256, (64, 200), dtype=np.uint8)])
    assert out[0] == ""
    assert isinstance(out[1], str)
    assert engine.read([]) == []


def test_rgb_and_rgba_read_like_grayscale(engine, word_images):
    g = word_images[0]
    rgb = np.repeat(g[:, :, None], 3, axis=2)
    rgba = np.concatenate([rgb, np.full(g.shape + (1,), 255, np.uint8)], axis=2)
    out = engine.read([g, rgb, rgba, g[:, :, None]])
    assert out[0] == out[1] == out[2] == out[3] == "hello"


def test_rgb_channel_order_is_respected(engine):
    # red ink on white: RGB (255, 0, 0). Read as RGB it is dark enough in the red-insensitive channels.
    g = render_ink(hershey_ink("hello"))
    rgb = np.stack([np.full_like(g, 255), g, g], axis=2)
    assert to_bgr(rgb)[0, 0].tolist() == [255, 255, 255]
    ink_px = np.argwhere(g == 0)[0]
    assert to_bgr(rgb)[tuple(ink_px)].tolist() == [0, 0, 255]  # BGR order for OpenCV-based engines


def test_bad_images_raise_with_index(engine):
    good = np.full((32, 32), 255, np.uint8)
    with pytest.raises(ocr.OCRInputError, match="image 1: expected dtype uint8"):
        engine.read([good, good.astype(float)])
    with pytest.raises(ocr.OCRInputError, match="image 0: empty image"):
        engine.read([np.zeros((0, 5), np.uint8)])
    with pytest.raises(ocr.OCRInputError, match="image 0: expected shape"):
        engine.read([np.zeros((4, 4, 2), np.uint8)])
    with pytest.raises(ocr.OCRInputError, match="not a single image"):
        engine.read(good)
    with pytest.raises(ocr.OCRInputError, match="numpy array"):
        engine.read(["hello.png"])


def test_engine_is_cached_per_process_and_quiet(engine, capfd):
    again = ocr.make_engine("rapidocr", progress=False)
    assert again._ocr is engine._ocr
    assert ocr.make_engine("rapidocr", threads=None, progress=False)._ocr is not engine._ocr
    assert isinstance(engine, ocr.OCREngine)
    assert logging.getLogger("RapidOCR").getEffectiveLevel() >= logging.WARNING
    capfd.readouterr()
    engine.read([np.full((40, 120), 255, np.uint8)])
    err = capfd.readouterr().err
    assert "INFO" not in err and err == ""


def test_progress_bar_can_be_shown(word_images, capfd):
    capfd.readouterr()
    ocr.make_engine("rapidocr", progress=True).read(word_images[:2])
    assert "RapidOCR" in capfd.readouterr().err


def test_rapidocr_uses_the_wheel_model_explicitly(engine):
    import rapidocr

    path = ocr.rapidocr_rec_model()
    assert path.is_file() and path.parent == Path(rapidocr.__file__).resolve().parent / "models"
    assert Path(engine._ocr.cfg.Rec.model_path) == path


def test_missing_or_altered_model_raises_instead_of_downloading(monkeypatch, tmp_path):
    import rapidocr
    from rapidocr.utils import download_file

    def no_download(*a, **k):
        raise AssertionError("RapidOCR tried to download a model")

    real_name = ocr.rapidocr_rec_model(verify_sha256=False).name
    monkeypatch.setattr(download_file.DownloadFile, "run", classmethod(no_download))
    fake = tmp_path / "rapidocr"
    (fake / "models").mkdir(parents=True)
    monkeypatch.setattr(rapidocr, "__file__", str(fake / "__init__.py"))
    with pytest.raises(ocr.OCRUnavailable, match="missing from the installed rapidocr package"):
        ocr.make_engine("rapidocr", progress=False)
    (fake / "models" / real_name).write_bytes(b"not a model")
    with pytest.raises(ocr.OCRUnavailable, match="SHA-256"):
        ocr.rapidocr_rec_model()


def test_unknown_engine_name():
    assert ocr.engine_names() == ["deepseek-ocr", "rapidocr", "tesseract"]
    with pytest.raises(ValueError, match="unknown OCR engine 'easyocr'; known: deepseek-ocr, rapidocr"):
        ocr.make_engine("easyocr")


# DeepSeek-OCR (a client of an OpenAI-compatible server): tests/test_ocr_deepseek.py


# ---------------------------------------------------------------------------------------------- tesseract


def test_tesseract_missing_binary_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("PATH", "")
    with pytest.raises(ocr.OCRUnavailable, match="'tesseract' is not on PATH"):
        ocr.make_engine("tesseract")
    with pytest.raises(ocr.OCRUnavailable, match="'my-tess' is not on PATH"):
        ocr.TesseractEngine(binary="my-tess", which=lambda name: None)


def test_tesseract_command_construction():
    assert ocr.tesseract_command() == ["tesseract", "stdin", "stdout", "--psm", "8", "-l", "eng"]
    assert ocr.tesseract_command("/opt/t", psm=7, lang="eng+deu", oem=1, extra=["-c", "x=1"]) == \
        ["/opt/t", "stdin", "stdout", "--psm", "7", "-l", "eng+deu", "--oem", "1", "-c", "x=1"]
    with pytest.raises(ValueError, match="psm"):
        ocr.tesseract_command(psm=14)


def _fake_program(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_tesseract_engine_runs_the_program(tmp_path, word_images):
    # a stand-in "tesseract" that checks it got a PNG on stdin and its arguments, and prints a word
    log = tmp_path / "args.txt"
    prog = _fake_program(tmp_path / "tesseract", f'echo "$@" > {log}\n'
                         'magic=$(head -c 4 | od -An -c | tr -d " \\n")\n'
                         '[ "$magic" = "211PNG" ] || exit 3\necho "  word$magic  "\n')
    eng = ocr.make_engine("tesseract", binary=str(prog), progress=False)
    assert eng.read(word_images[:2] + [np.repeat(word_images[0][:, :, None], 3, axis=2)]) == ["word211PNG"] * 3
    assert log.read_text().split() == ["stdin", "stdout", "--psm", "8", "-l", "eng"]
    bad = _fake_program(tmp_path / "tess-bad", "echo 'Error: no language' >&2\nexit 1\n")
    with pytest.raises(ocr.OCRError, match="image 0 .exit 1.: Error: no language"):
        ocr.TesseractEngine(binary=str(bad), progress=False).read(word_images[:1])
