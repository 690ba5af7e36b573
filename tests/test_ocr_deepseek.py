"""DeepSeek-OCR as a client of an OpenAI-compatible server (vLLM), against the loopback fake server: the request
(documented prompt, one white-padded square PNG holding the crop unstretched), answers parsed and cleaned, the
optional key, retries, and errors that name the engine and the crop but never the key."""

from __future__ import annotations

import base64
import socket
import sys
import traceback
from pathlib import Path

import cv2
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakeserver import FakeServer, http_error, ok, slow  # noqa: E402

from inkground_lib.components import ocr  # noqa: E402

KEY = "sk-dsocr-SECRET-7731"


def _image_of(body: dict) -> np.ndarray:
    """The one image of a chat request, decoded (grayscale 2-D, or RGB)."""
    parts = body["messages"][0]["content"]
    urls = [p["image_url"]["url"] for p in parts if p.get("type") == "image_url"]
    assert len(urls) == 1
    head, data = urls[0].split(",", 1)
    assert head == "data:image/png;base64"
    img = cv2.imdecode(np.frombuffer(base64.b64decode(data), np.uint8), cv2.IMREAD_UNCHANGED)
    return img if img.ndim == 2 else cv2.cvtColor(img, cv2.COLOR_BGR2RGB)


def _ink_box(img: np.ndarray) -> tuple[int, int]:
    """(rows, cols) of the non-white part of an image."""
    ys, xs = np.nonzero((img if img.ndim == 2 else img.min(axis=2)) < 255)
    return int(ys.max() - ys.min() + 1), int(xs.max() - xs.min() + 1)


def _size_answer(body: dict) -> str:
    """A DeepSeek-OCR-shaped answer naming the size of the crop inside the image: a grounding span, the text
    over two lines, the end-of-sentence token (as generated with skip_special_tokens=False)."""
    h, w = _ink_box(_image_of(body))
    return f"<|ref|>text<|/ref|><|det|>[[10, 20, 300, 90]]<|/det|>\nh{h}\n w{w} <｜end▁of▁sentence｜>"


def _crop(rows: int, cols: int, seed: int, rgb: bool = False) -> np.ndarray:
    """A crop whose every pixel is ink (never white), so its extent in the padded image is exact."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, 250, (rows, cols, 3) if rgb else (rows, cols), dtype=np.uint8)


@pytest.fixture
def server():
    with FakeServer(responder=_size_answer) as s:
        yield s


@pytest.fixture
def env(server, monkeypatch):
    monkeypatch.setenv("DEEPSEEK_OCR_BASE_URL", server.openai_url)
    monkeypatch.delenv("DEEPSEEK_OCR_API_KEY", raising=False)
    monkeypatch.delenv("DEEPSEEK_OCR_MODEL", raising=False)
    return server


def _engine(**kw):
    kw.setdefault("progress", False)
    return ocr.make_engine("deepseek-ocr", **kw)


def test_request_has_the_documented_prompt_and_one_square_image_with_the_crop_unstretched(env):
    wide, tall = _crop(30, 121, 0), _crop(90, 20, 1, rgb=True)
    assert _engine().read([wide, tall]) == ["h30 w121", "h90 w20"]
    assert len(env.requests) == 2
    by_side = {}
    for r in env.requests:
        body = r.body
        assert r.path == "/v1/chat/completions"
        assert body["model"] == "deepseek-ai/DeepSeek-OCR"
        assert body["temperature"] == 0
        assert 1 <= body["max_tokens"] <= 1024
        # vLLM recipe: the chat form is an image part, then the text "Free OCR." ("<image>\nFree OCR." offline)
        content = body["messages"][0]["content"]
        assert [p["type"] for p in content] == ["image_url", "text"] and content[1]["text"] == "Free OCR."
        assert body["skip_special_tokens"] is False
        assert body["vllm_xargs"] == {"ngram_size": 30, "window_size": 90, "whitelist_token_ids": [128821, 128822]}
        img = _image_of(body)
        assert img.shape[0] == img.shape[1]
        by_side[img.shape[0]] = img
    assert sorted(by_side) == [90, 121]
    for crop, side in ((wide, 121), (tall, 90)):
        img = by_side[side]
        h, w = crop.shape[:2]
        y, x = (side - h) // 2, (side - w) // 2
        assert np.array_equal(img[y:y + h, x:x + w], crop)  # the crop itself, pixel for pixel: never resized
        pad = img.copy()
        pad[y:y + h, x:x + w] = 255
        assert (pad == 255).all()  # everything else is white padding


def test_square_pad_keeps_the_crop_and_centres_it():
    g = _crop(3, 8, 2)
    sq = ocr.square_pad(g)
    assert sq.shape == (8, 8) and np.array_equal(sq[2:5], g) and (sq[:2] == 255).all() and (sq[5:] == 255).all()
    t = _crop(7, 2, 3, rgb=True)
    sq = ocr.square_pad(t)
    assert sq.shape == (7, 7, 3) and np.array_equal(sq[:, 2:4], t) and (sq[:, :2] == 255).all()
    same = _crop(5, 5, 4)
    assert np.array_equal(ocr.square_pad(same), same)


def test_answers_come_back_in_order_with_bounded_concurrency(env):
    env.delay = 0.3
    crops = [_crop(10 + i, 40 + 7 * i, i) for i in range(7)]
    out = _engine(concurrency=3).read(crops)
    assert out == [f"h{10 + i} w{40 + 7 * i}" for i in range(7)]
    assert len(env.requests) == 7
    assert 2 <= env.max_in_flight <= 3
    assert _engine().read([]) == [] and len(env.requests) == 7


def test_output_cleaning_follows_the_documented_output():
    assert ocr.clean_deepseek_text("hello<｜end▁of▁sentence｜>") == "hello"
    assert ocr.clean_deepseek_text("<|ref|>text<|/ref|><|det|>[[1, 2, 3, 4]]<|/det|>\ngarden\n") == "garden"
    assert ocr.clean_deepseek_text("  two\nwords  ") == "two words"
    assert ocr.clean_deepseek_text(None) == "" and ocr.clean_deepseek_text("<｜end▁of▁sentence｜>") == ""


def test_no_authorization_header_without_the_key_and_a_bearer_token_with_it(env, monkeypatch):
    # someone else's OpenAI settings in the environment never reach this server
    monkeypatch.setenv("OPENAI_API_KEY", "sk-someone-else-0000")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-someone-else")
    _engine().read([_crop(8, 8, 0)])
    h = env.requests[-1].headers
    assert "authorization" not in h and "openai-organization" not in h
    assert "sk-someone-else-0000" not in env.requests[-1].raw
    monkeypatch.setenv("DEEPSEEK_OCR_API_KEY", KEY)
    _engine().read([_crop(8, 8, 0)])
    assert env.requests[-1].headers["authorization"] == f"Bearer {KEY}"


def test_model_id_from_the_environment(env, monkeypatch):
    monkeypatch.setenv("DEEPSEEK_OCR_MODEL", "my-dsocr")
    eng = _engine()
    eng.read([_crop(8, 8, 0)])
    assert env.requests[-1].body["model"] == "my-dsocr"
    assert eng.name == "deepseek-ocr" and "deepseek-ocr" in ocr.engine_names() and isinstance(eng, ocr.OCREngine)
    assert eng.parallel is False


def test_server_error_then_ok_is_retried(env):
    env.script(http_error(500), ok("hello<｜end▁of▁sentence｜>"))
    assert _engine(max_retries=2).read([_crop(8, 8, 0)]) == ["hello"]
    assert len(env.requests) == 2


def test_401_is_an_ocr_error_naming_the_crop_never_the_key(env, monkeypatch):
    monkeypatch.setenv("DEEPSEEK_OCR_API_KEY", KEY)
    env.script(ok("first"), http_error(401, echo_auth=True))  # the server puts the credential in its message
    with pytest.raises(ocr.OCRError) as e:
        _engine(concurrency=1, max_retries=2).read([_crop(8, 8, 0), _crop(8, 8, 1)])
    msg = str(e.value)
    assert msg.startswith("deepseek-ocr: crop 1: ") and "HTTP 401" in msg and "DEEPSEEK_OCR_API_KEY" in msg
    assert KEY not in msg and KEY not in "".join(traceback.format_exception(e.value))
    assert len(env.requests) == 2  # a 401 is not retried


def test_server_down_is_an_ocr_error_naming_the_crop(monkeypatch):
    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("DEEPSEEK_OCR_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("DEEPSEEK_OCR_API_KEY", KEY)
    with pytest.raises(ocr.OCRError, match=r"^deepseek-ocr: crop 0: cannot reach the server at DEEPSEEK_OCR_BASE_URL") as e:
        _engine(max_retries=0).read([_crop(8, 8, 0)])
    assert KEY not in str(e.value) and str(port) not in str(e.value)


def test_timeout_is_an_ocr_error(env):
    env.script(slow(3.0, "late"))
    with pytest.raises(ocr.OCRError, match=r"^deepseek-ocr: crop 0: no complete answer within 0.5 s"):
        _engine(timeout=0.5, max_retries=0).read([_crop(8, 8, 0)])


def test_unset_base_url_is_unavailable_naming_the_variable(monkeypatch):
    monkeypatch.delenv("DEEPSEEK_OCR_BASE_URL", raising=False)
    with pytest.raises(ocr.OCRUnavailable, match="DEEPSEEK_OCR_BASE_URL is not set"):
        ocr.make_engine("deepseek-ocr")


@pytest.mark.parametrize("kw, what", [({"concurrency": 0}, "concurrency"), ({"max_retries": -1}, "max_retries"),
                                      ({"timeout": 0}, "timeout"), ({"max_tokens": 0}, "max_tokens"),
                                      ({"prompt": " "}, "prompt")])
def test_bad_settings_are_named(env, kw, what):
    with pytest.raises(ValueError, match=f"DeepSeekOCREngine: {what}"):
        _engine(**kw)


def test_a_trickling_server_fails_within_the_deadline(env):
    """Issue 26, case 1: the DeepSeek-OCR client's timeout is a deadline for the whole request."""
    import time

    from fakeserver import trickle

    env.script(trickle(interval=0.2, seconds=60, chunked=True))
    t0 = time.monotonic()
    with pytest.raises(ocr.OCRError, match=r"no complete answer within 1 s \(a deadline for the whole request\)"):
        _engine(timeout=1, max_retries=0).read([_crop(8, 8, 0)])
    assert time.monotonic() - t0 < 15


def test_redirects_user_info_and_bad_keys_are_refused_by_name(env, monkeypatch):
    """Issue 26, cases 3, 7 and 10: a redirect is an error naming it (not followed); a base URL with user info
    and a key with a line break are refused naming their variable, before anything is sent."""
    from fakeserver import redirect

    env.script(redirect(302, "http://127.0.0.2:9/v1/chat/completions"))
    with pytest.raises(ocr.OCRError, match=r"HTTP 302, a redirect to http://127.0.0.2:9/v1/chat/completions; "
                                           r"redirects are not followed"):
        _engine(max_retries=0).read([_crop(8, 8, 0)])
    assert len(env.requests) == 1
    monkeypatch.setenv("DEEPSEEK_OCR_BASE_URL", env.openai_url.replace("http://", "http://u:URLSECRET77@"))
    with pytest.raises(ocr.OCRUnavailable, match="environment variable DEEPSEEK_OCR_BASE_URL: the base URL carries "
                                                 "user info") as e:
        _engine()
    assert "URLSECRET77" not in str(e.value)
    monkeypatch.setenv("DEEPSEEK_OCR_BASE_URL", env.openai_url)
    monkeypatch.setenv("DEEPSEEK_OCR_API_KEY", "sk-ok\n")
    with pytest.raises(ocr.OCRUnavailable, match=r"environment variable DEEPSEEK_OCR_API_KEY: the key has a line "
                                                 r"break"):
        _engine()
    assert len(env.requests) == 1
