"""DeepSeek-OCR (optional): a client of an OpenAI-compatible server running it, e.g. vLLM on a GPU machine."""

from __future__ import annotations

import base64
import os
import re
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Sequence

import cv2
import numpy as np

from inkground_lib.components.ocr.base import OCRError, OCRUnavailable, check_images, to_bgr
from inkground_lib.core.openai_client import openai_client
from inkground_lib.core.progress import bar as progress_bar
from inkground_lib.core.secrets import CredentialError, check_base_url, check_key, scrub_secrets, url_secrets

# Sources (checked 2026-11-30):
# * vLLM recipe, https://github.com/vllm-project/recipes/blob/main/DeepSeek/DeepSeek-OCR.md (commit 8959cf6,
#   2026-08-21; also docs.vllm.ai/projects/recipes/en/latest/DeepSeek/DeepSeek-OCR.html), "Online OCR serving":
#   "vllm serve deepseek-ai/DeepSeek-OCR --logits_processors
#   vllm.model_executor.models.deepseek_ocr:NGramPerReqLogitsProcessor --no-enable-prefix-caching
#   --mm-processor-cache-gb 0"; its client sends one user message whose content is an "image_url" part followed
#   by a "text" part "Free OCR.", with temperature 0.0 and extra_body {"skip_special_tokens": False,
#   "vllm_xargs": {"ngram_size": 30, "window_size": 90, "whitelist_token_ids": [128821, 128822]}}
#   ("whitelist: <td>, </td>"), api_key "EMPTY". Offline, the same recipe writes the prompt "<image>\nFree OCR.".
# * vLLM (github.com/vllm-project/vllm), vllm/model_executor/models/deepseek_ocr.py (commit 029329a;
#   get_placeholder_str: "<image>") and vllm/entrypoints/chat_utils.py
#   (_get_full_multimodal_text_prompt: "we always add missing placeholders at the front of the prompt", joined
#   with "\n"): the chat form above therefore reaches the model as "<image>\nFree OCR.", the documented prompt.
#   Its template, vllm/transformers_utils/chat_templates/template_deepseek_ocr.jinja (commit 10efe94),
#   concatenates the raw content after bos_token.
# * vLLM, vllm/transformers_utils/processors/deepseek_ocr.py (commit 02b3747): the server runs "Gundam"
#   (BASE_SIZE = 1024, IMAGE_SIZE = 640, CROP_MODE = True); an image over 640 px is cut into tiles after
#   `image.resize((target_width, target_height))` to the closest tile grid (a wide word is stretched to fit it),
#   and with image_size <= 640 and no cropping `image.resize((self.image_size, self.image_size))` squashes it.
#   A square input keeps its aspect ratio in every mode, hence the white square padding below.
# * github.com/deepseek-ai/DeepSeek-OCR (commit e4ac34e, 2025-10-25), DeepSeek-OCR-master/DeepSeek-OCR-vllm/:
#   config.py lists "without layouts: <image>\nFree OCR."; run_dpsk_ocr_pdf.py drops '<｜end▁of▁sentence｜>'
#   from the output text (generated with skip_special_tokens=False); run_dpsk_ocr_image.py finds grounding spans
#   with the pattern r'(<\|ref\|>(.*?)<\|/ref\|><\|det\|>(.*?)<\|/det\|>)' and removes the non-image ones.
# * The openai SDK's retries, timeouts and credentials: inkground_lib/core/openai_client.py.
# * vLLM serve arguments (docs.redhat.com/en/documentation/red_hat_ai_inference_server/3.1/html/
#   vllm_server_arguments): "--api-key: If provided, the server will require this key to be presented in the
#   header. Default: None" - a server started without it needs no key.

DEEPSEEK_MODEL = "deepseek-ai/DeepSeek-OCR"
DEEPSEEK_PROMPT = "Free OCR."  # chat form of "<image>\nFree OCR." (the server puts "<image>\n" in front)
DEEPSEEK_BASE_URL_ENV = "DEEPSEEK_OCR_BASE_URL"
DEEPSEEK_API_KEY_ENV = "DEEPSEEK_OCR_API_KEY"
DEEPSEEK_MODEL_ENV = "DEEPSEEK_OCR_MODEL"
DEEPSEEK_EXTRA_BODY = {"skip_special_tokens": False,
                       "vllm_xargs": {"ngram_size": 30, "window_size": 90, "whitelist_token_ids": [128821, 128822]}}
_DS_GROUNDING = re.compile(r"<\|ref\|>.*?<\|/ref\|><\|det\|>.*?<\|/det\|>", re.DOTALL)
_DS_SPECIAL = re.compile(r"<｜[^｜<>]*｜>")  # '<｜end▁of▁sentence｜>', '<｜▁pad▁｜>', ...


def square_pad(img: np.ndarray) -> np.ndarray:
    """``img`` (grayscale or RGB uint8) centred on a white square of side max(rows, cols), never resized."""
    h, w = img.shape[:2]
    side = max(h, w)
    out = np.full((side, side) + img.shape[2:], 255, np.uint8)
    y, x = (side - h) // 2, (side - w) // 2
    out[y:y + h, x:x + w] = img
    return out


def clean_deepseek_text(text: str | None) -> str:
    """DeepSeek-OCR output as one line of text: grounding spans (``<|ref|>..<|/ref|><|det|>..<|/det|>``) and
    special tokens (``<｜end▁of▁sentence｜>``) removed, white space runs made one space, ends stripped."""
    if not text:
        return ""
    text = _DS_SPECIAL.sub("", _DS_GROUNDING.sub(" ", str(text)))
    return " ".join(text.split())


class DeepSeekOCREngine:
    """DeepSeek-OCR behind an OpenAI-compatible chat.completions server (vLLM: see the sources above and the
    README for the server command). One request per word image: the image padded to a white square (its aspect
    ratio survives whatever resolution mode the server runs), sent as a PNG data URL before the text ``prompt``.

    Settings come from the environment: ``DEEPSEEK_OCR_BASE_URL`` (required, e.g. http://localhost:8000/v1),
    ``DEEPSEEK_OCR_API_KEY`` (optional: sent as a bearer token only when set; no Authorization header
    otherwise, which a vLLM server started without --api-key accepts), ``DEEPSEEK_OCR_MODEL`` (default
    ``deepseek-ai/DeepSeek-OCR``, the id vLLM serves it under). ``concurrency``: requests in flight at once
    (a thread pool); ``max_retries``: the openai SDK's retries (connection errors, timeouts, 408 / 409 / 429 /
    5xx, with backoff); ``timeout``: seconds per request; ``max_tokens``: answer length cap (a word needs few);
    ``extra_body``: vLLM sampling extras (default: the recipe's n-gram logits-processor arguments).
    """

    name = "deepseek-ocr"
    # never one per worker: the engine already keeps ``concurrency`` requests in flight, and page-parallel
    # stages running one engine per worker would multiply that bound by the number of workers
    parallel = False

    def __init__(self, prompt: str = DEEPSEEK_PROMPT, concurrency: int = 8, max_retries: int = 3,
                 timeout: float = 120.0, max_tokens: int = 128, extra_body: dict | None = None,
                 progress: bool = True):
        env = os.environ  # the key is read from the environment only, never from a parameter
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError(f"DeepSeekOCREngine: prompt must be a non-empty string, got {prompt!r}")
        if int(concurrency) < 1:
            raise ValueError(f"DeepSeekOCREngine: concurrency must be >= 1, got {concurrency}")
        if int(max_retries) < 0:
            raise ValueError(f"DeepSeekOCREngine: max_retries must be >= 0, got {max_retries}")
        if not float(timeout) > 0:
            raise ValueError(f"DeepSeekOCREngine: timeout must be > 0 seconds, got {timeout}")
        if int(max_tokens) < 1:
            raise ValueError(f"DeepSeekOCREngine: max_tokens must be >= 1, got {max_tokens}")
        base_url = (env.get(DEEPSEEK_BASE_URL_ENV) or "").strip()
        if not base_url:
            raise OCRUnavailable(
                f"deepseek-ocr: the environment variable {DEEPSEEK_BASE_URL_ENV} is not set; it must hold the base "
                f"URL of an OpenAI-compatible server running {DEEPSEEK_MODEL} (e.g. http://localhost:8000/v1 for "
                f"`vllm serve {DEEPSEEK_MODEL} ...`, see the README), or use the 'rapidocr' engine.")
        try:
            import openai
        except ImportError as e:  # pragma: no cover - openai is a pinned requirement
            raise OCRUnavailable(f"deepseek-ocr: the openai package is not installed ({e}); install the pinned "
                                 f"requirements.txt") from e
        key = env.get(DEEPSEEK_API_KEY_ENV) or None
        try:  # named here, not "Connection error" or a UnicodeEncodeError at the first request
            if key is not None:
                check_key(key, DEEPSEEK_API_KEY_ENV)
            check_base_url(base_url, DEEPSEEK_BASE_URL_ENV)
        except CredentialError as e:
            raise OCRUnavailable(f"deepseek-ocr: {e}") from None
        self.model = (env.get(DEEPSEEK_MODEL_ENV) or "").strip() or DEEPSEEK_MODEL
        self.prompt, self.progress = prompt, progress
        self.concurrency, self.max_retries = int(concurrency), int(max_retries)
        self.timeout, self.max_tokens = float(timeout), int(max_tokens)
        self.extra_body = dict(DEEPSEEK_EXTRA_BODY if extra_body is None else extra_body)
        # values kept out of every error message, replaced by the name of their variable
        self._secrets = [(DEEPSEEK_API_KEY_ENV, key or "")] + url_secrets(DEEPSEEK_BASE_URL_ENV, base_url)
        self._errors = openai
        # a bearer token when the key is set, else no Authorization header at all; the OpenAI organisation /
        # project headers the SDK would take from OPENAI_ORG_ID / OPENAI_PROJECT_ID are never sent either; each
        # request has a total deadline of ``timeout`` and an answer size limit, redirects are not followed
        try:  # its host resolving to a metadata or link-local address: refused before any request
            self._client, self._headers = openai_client(base_url, key, timeout=self.timeout,
                                                        max_retries=self.max_retries,
                                                        base_url_env=DEEPSEEK_BASE_URL_ENV)
        except CredentialError as e:
            raise OCRUnavailable(f"deepseek-ocr: {e}") from None

    def _scrub(self, text: str) -> str:
        return scrub_secrets(text, self._secrets)

    def request(self, img: np.ndarray) -> dict:
        """The chat.completions arguments that read one validated word image."""
        sq = square_pad(img)
        ok, png = cv2.imencode(".png", sq if sq.ndim == 2 else to_bgr(sq))
        if not ok:  # pragma: no cover - cv2 encodes any valid uint8 image
            raise OCRError("deepseek-ocr: an image could not be PNG-encoded")
        url = "data:image/png;base64," + base64.b64encode(png.tobytes()).decode("ascii")
        return {"model": self.model, "temperature": 0.0, "max_tokens": self.max_tokens,
                "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}},
                                                          {"type": "text", "text": self.prompt}]}],
                "extra_body": self.extra_body, "extra_headers": self._headers}

    def _read_one(self, i: int, img: np.ndarray) -> str:
        err = self._errors
        from inkground_lib.core.http_client import oversize_in, redirect_note  # httpx2: loaded with the SDK

        try:
            resp = self._client.chat.completions.create(**self.request(img))
        except err.APIStatusError as e:
            note = redirect_note(e)
            if note:
                raise OCRError(f"deepseek-ocr: crop {i}: {self._scrub(note)} ({DEEPSEEK_BASE_URL_ENV})") from None
            hint = f" (check {DEEPSEEK_API_KEY_ENV})" if e.status_code in (401, 403) else ""
            raise OCRError(f"deepseek-ocr: crop {i}: the server at {DEEPSEEK_BASE_URL_ENV} answered HTTP "
                           f"{e.status_code}{hint}: {self._scrub(_api_message(e))}") from None
        except err.APITimeoutError:
            raise OCRError(f"deepseek-ocr: crop {i}: no complete answer within {self.timeout:g} s (a deadline for "
                           f"the whole request) from the server at {DEEPSEEK_BASE_URL_ENV} ({self.max_retries} "
                           f"retries)") from None
        except err.APIConnectionError as e:
            big = oversize_in(e)
            if big is not None:
                raise OCRError(f"deepseek-ocr: crop {i}: the answer of the server at {DEEPSEEK_BASE_URL_ENV} is over "
                               f"the size limit of {big.limit:,} bytes; not read past it") from None
            cause = e.__cause__ or e
            raise OCRError(f"deepseek-ocr: crop {i}: cannot reach the server at {DEEPSEEK_BASE_URL_ENV} "
                           f"({self.max_retries} retries; {type(cause).__name__}: {self._scrub(str(cause))})") from None
        except err.APIError as e:  # e.g. an answer that is not the JSON of a chat completion
            raise OCRError(f"deepseek-ocr: crop {i}: bad answer from the server at {DEEPSEEK_BASE_URL_ENV} "
                           f"({type(e).__name__}: {self._scrub(str(e))[:500]})") from None
        choices = getattr(resp, "choices", None)
        if not choices:
            raise OCRError(f"deepseek-ocr: crop {i}: malformed answer from the server at {DEEPSEEK_BASE_URL_ENV} "
                           f"(no choices)")
        return clean_deepseek_text(getattr(choices[0].message, "content", None))

    def read(self, images: Sequence[np.ndarray]) -> list[str]:
        imgs = check_images(images)
        out = [""] * len(imgs)
        if not imgs:
            return out
        pool = ThreadPoolExecutor(max_workers=min(self.concurrency, len(imgs)), thread_name_prefix="deepseek-ocr")
        try:
            futures = {pool.submit(self._read_one, i, im): i for i, im in enumerate(imgs)}
            with progress_bar(total=len(imgs), desc="DeepSeek-OCR", unit="img", leave=False,
                              enabled=self.progress) as bar:
                for f in as_completed(futures):
                    out[futures[f]] = f.result()  # the first failure raises; the rest are cancelled below
                    bar.update(1)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        return out

    def close(self) -> None:
        """Close the SDK client (its connection pool)."""
        self._client.close()


def _api_message(e) -> str:
    """The server's error message of an openai APIStatusError (its JSON ``error.message`` when there is one)."""
    body = getattr(e, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:500]
    return str(getattr(e, "message", "") or e)[:500]
