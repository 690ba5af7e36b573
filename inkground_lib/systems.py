"""Systems that trace a word: API vision-language models, the specialist, local baselines, replay.

Every system answers one :class:`Item` (a named word on a page photo) with a :class:`RawOutput`: the raw
text of a model (parsed later by :mod:`inkground_lib.parse`) or, for local systems, strokes in **page
pixels** (origin top-left, y down). Systems are built by name from a YAML registry
(``inkground_lib/systems.yaml``, read with ``yaml.safe_load``) plus any extra YAML files named by the
``INKGROUND_SYSTEMS`` environment variable (paths separated by ``os.pathsep``) or passed to
:func:`load_registry` / :func:`get_system`. A further model is **one entry** of configuration::

    my-vlm: {adapter: openai, model: org/My-VL-7B, base_url_env: VLLM_BASE_URL, api_key_env: VLLM_API_KEY,
             label: My-VL-7B}
    my-gemini: {extends: gemini-3.1-pro, max_tokens: 32768}     # merge onto an existing entry

An entry with the name of an existing one replaces it entirely (unless it ``extends`` it).

Adapters (the ``adapter`` field) and their kind:

* ``openai`` (kind "api"): any OpenAI-compatible chat.completions endpoint (Gemini, Kimi, vLLM serving the
  open models) through the official ``openai`` SDK. Images are sent as ``data:image/png;base64`` URLs in
  ``image_url`` content parts; ``temperature`` (default 0) and a large ``max_tokens`` (default 16384; the
  request field is ``max_tokens_param``, default ``max_tokens``); ``finish_reason`` and ``usage`` recorded.
  ``variant: one-image`` pastes all images of a request side by side onto one canvas (Molmo handles two
  images poorly).
* ``anthropic`` (kind "api"): the native Messages API through the ``anthropic`` SDK (base64 image blocks,
  ``stop_reason`` recorded). Claude Opus 4.7 and later reject ``temperature`` (HTTP 400 "temperature is
  deprecated for this model"), so the Claude entry sets ``temperature: null`` (the field is then not sent);
  for older Claude models set ``temperature: 0``.
* ``skeleton`` (kind "specialist"): :class:`inkground_lib.derender.SkeletonDerenderer` on the word crop
  (:func:`inkground_lib.derender.crop_word`, box grown by ``grow`` = 10%); the offline stand-in for InkSight.
* ``inksight`` (kind "specialist"): :class:`inkground_lib.derender.InkSightDerenderer` on the same crop;
  needs TensorFlow 2.15-2.17, tensorflow-text and the SavedModel folder named by ``model_dir_env``
  (default ``INKSIGHT_MODEL_DIR``); where any is missing, building the system raises
  :class:`SystemUnavailable` saying what is missing.
* ``font`` (kind "local"): the target word typed in a Hershey font (``futural`` by default: readable, no
  style; ``scripts`` is the font the synthetic pages are built from, so it would flatter this baseline on
  synth data), scaled uniformly to fit inside the word box and centred. t is NaN.
* ``box`` (kind "local"): knows *where*, not *what*: ``shape: line`` (default) is one straight stroke
  through the box centre from its left to its right edge; ``shape: zigzag`` a single stroke alternating
  between 25% and 75% of the box height every half box height. t is NaN.
* ``reference`` (kind "local"): the word's reference ink itself (a sanity check: DTW 0).
* ``replay`` (kind "replay"): recorded raw outputs from a JSONL file (``path``, or the file named by the
  ``path_env`` variable): one record per line with ``word_id`` and ``raw_text`` (or ``text``, or
  ``strokes`` as [[[x, y, t], ...], ...] page-pixel lists), optionally ``status``, ``finish_reason`` and
  ``system``; ``source: <name>`` keeps only records whose ``system`` is that name, so a prediction cache
  file of :mod:`inkground_lib.cache` can be replayed as it is. The first usable record per word wins;
  records with status "error" are skipped. A word without a record gets status "error", "no recorded
  output": nothing is invented.

Secrets: API keys and base URLs come from the **environment only**; the registry names the variables
(``api_key_env``, ``base_url_env``; ``default_base_url`` may give a *public* endpoint). A literal
``api_key`` or ``base_url`` in a registry is refused. Building an API system with a variable unset raises
:class:`SystemConfigError` naming the variable, before any request. The values never reach a RawOutput,
a record or an exception message: every error text is passed through :meth:`ApiSystem.scrub`, which
replaces the key, the base URL (and its host) and anything shaped like an API key. The SDKs' own retries
are disabled (``max_retries=0``); ours are counted: 408, 409, 429, 5xx, timeouts and connection errors
are retried with exponential backoff and jitter (``Retry-After`` honoured), other 4xx are not, and at most
``max_attempts`` requests are made.

Output status (:attr:`RawOutput.status`): "ok" (the model or system finished normally), "truncated"
(finish_reason "length" / stop_reason "max_tokens": the text is kept and salvaged by the parser),
"refusal" (Anthropic stop_reason "refusal", OpenAI ``message.refusal`` or finish_reason
"content_filter"; the refusal text is kept), "error" (no model output: transport failure after retries,
a non-retryable HTTP error, a missing replay record, a local failure). Only the first three are model
outputs; :mod:`inkground_lib.cache` never stores "error" as a prediction.
"""

from __future__ import annotations

import base64
import email.utils
import functools
import hashlib
import json
import os
import random
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Protocol, Sequence, runtime_checkable

import numpy as np

from .ink import Ink, InkError, as_ink, ink_from_lists

REGISTRY_FILE = Path(__file__).with_name("systems.yaml")
ENV_EXTRA = "INKGROUND_SYSTEMS"

KINDS = ("api", "local", "replay", "specialist")
OUTPUT_STATUSES = ("ok", "truncated", "refusal", "error")
MODEL_OUTPUT_STATUSES = ("ok", "truncated", "refusal")  # what the cache stores as predictions

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class SystemConfigError(ValueError):
    """A registry entry or a system call that cannot work as configured (names the entry and field)."""


class SystemUnavailable(RuntimeError):
    """A system whose software, weights or hardware are missing here (e.g. InkSight without TensorFlow)."""


# ------------------------------------------------------------------------------------------------ data


@dataclass
class Item:
    """One request: the word ``text`` (id ``word_id``) inside ``box`` = (x0, y0, x1, y1) page pixels on page
    ``page_id`` whose photo is ``page_image`` (a path; or ``image``, an (H, W, 3) uint8 RGB array) of size
    ``page_size`` = (W, H) pixels. ``reference`` is the reference ink (page pixels); ``request`` the
    :class:`inkground_lib.prompt.PromptRequest` that API systems send."""

    word_id: str
    text: str
    box: tuple[float, float, float, float]
    page_id: str
    page_size: tuple[int, int]
    page_image: Optional[Path] = None
    reference: Optional[Ink] = None
    request: Any = None
    image: Optional[np.ndarray] = None

    @classmethod
    def from_word(cls, page, word, request=None) -> "Item":
        """An item from a :class:`~inkground_lib.dataset.Page` and one of its words."""
        return cls(word_id=word.id, text=word.text, box=tuple(float(v) for v in word.box), page_id=page.id,
                   page_size=(int(page.width), int(page.height)), page_image=Path(page.image),
                   reference=word.ink, request=request)

    def request_for(self, variant: str = "two-image", system: str = "?"):
        """The PromptRequest to send for prompt ``variant``. ``request`` is either a PromptRequest (its
        ``meta["variant"]``, when recorded, must be ``variant``) or a function ``variant -> PromptRequest``
        (see :meth:`with_prompt`), called at each use and not kept (a request holds megabytes of PNG; a
        run would otherwise hold every request in memory)."""
        req = self.request
        if req is None:
            raise SystemConfigError(f"system {system}: word {self.word_id}: the item carries no PromptRequest "
                                    f"(item.request); API systems need one")
        if callable(req) and not hasattr(req, "parts"):
            req = req(variant)  # built on demand and not kept: requests carry MBs of PNG
        got = (getattr(req, "meta", None) or {}).get("variant")
        if got is not None and got != variant:
            raise SystemConfigError(f"system {system}: word {self.word_id}: the system needs a {variant!r} prompt "
                                    f"but the item's request is {got!r}; build it with prompt.build_request(..., "
                                    f"variant={variant!r}) or give Item.request as a function of the variant "
                                    f"(Item.with_prompt)")
        return req

    @classmethod
    def with_prompt(cls, page, word, example, **prompt_kwargs) -> "Item":
        """An item whose request is built on demand by :func:`inkground_lib.prompt.build_request` for the
        variant each system asks for (``example``: a prompt.Example; ``prompt_kwargs``: grid, max_side,
        font_size)."""
        item = cls.from_word(page, word)

        def build(variant: str):
            from .prompt import build_request

            return build_request(item.load_image(), (float(page.width), float(page.height)), word.text, example,
                                 variant=variant, page_id=page.id, word_id=word.id, **prompt_kwargs)

        item.request = build
        return item

    def load_image(self) -> np.ndarray:
        """The page photo as a uint8 (H, W, 3) RGB array."""
        if self.image is not None:
            return np.asarray(self.image)
        if self.page_image is None:
            raise SystemConfigError(f"word {self.word_id}: the item has neither a page image path nor an array")
        return _read_rgb(str(self.page_image))


@functools.lru_cache(maxsize=2)
def _read_rgb(path: str) -> np.ndarray:
    from PIL import Image

    try:
        with Image.open(path) as im:
            a = np.asarray(im.convert("RGB"))
    except OSError as e:
        raise SystemConfigError(f"{path}: the page photo cannot be read ({e})") from None
    a.setflags(write=False)
    return a


@functools.lru_cache(maxsize=256)
def _file_sha(path: str) -> str:
    from .files import sha256_file

    return sha256_file(path)


@dataclass
class RawOutput:
    """What a system answered for one item. ``text`` is a model's raw answer (API and replay systems);
    ``strokes`` an :class:`Ink` in page pixels (local systems); ``status`` one of OUTPUT_STATUSES (see module
    doc); ``finish_reason`` as the API reported it; ``usage`` the token counts; ``error`` a scrubbed message
    (never a key or base URL); ``attempts`` requests made (1 = no retry; 0 = none); ``latency`` seconds of
    the last attempt; ``served_model`` the model name the server reported; ``prompt_version`` that of the
    request sent (API systems)."""

    text: Optional[str] = None
    strokes: Optional[Ink] = None
    status: str = "ok"
    finish_reason: Optional[str] = None
    usage: dict = field(default_factory=dict)
    error: Optional[str] = None
    attempts: int = 1
    latency: float = 0.0
    served_model: Optional[str] = None
    prompt_version: Optional[str] = None

    def __post_init__(self):
        if self.status not in OUTPUT_STATUSES:
            raise ValueError(f"RawOutput: status {self.status!r} is not one of {OUTPUT_STATUSES}")

    @property
    def is_model_output(self) -> bool:
        return self.status in MODEL_OUTPUT_STATUSES


@runtime_checkable
class System(Protocol):
    """What every system provides. ``request_key(item)`` is a hash of everything that changes the answer
    (the cache key); ``describe()`` a JSON-ready public description (no secret values)."""

    name: str
    kind: str
    label: str

    def predict(self, item: Item) -> RawOutput: ...

    def request_key(self, item: Item) -> str: ...

    def describe(self) -> dict: ...


def _sha(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode("utf-8")).hexdigest()


class _Base:
    adapter = "?"
    kind = "local"
    version = 1  # bump when a local system's output changes
    hashed_fields: tuple[str, ...] = ()
    default_concurrency = 1

    def __init__(self, name: str, cfg: dict):
        self.name = name
        self.cfg = dict(cfg)
        self.label = str(cfg.get("label") or name)
        self.reported_as = cfg.get("reported_as")
        self.model = cfg.get("model")
        self.concurrency = int(cfg.get("concurrency") or self.default_concurrency)

    def answer_params(self) -> dict:
        """Settings that change the answer (hashed into the request key)."""
        return {k: self.cfg.get(k) for k in self.hashed_fields}

    def request_key(self, item: Item) -> str:
        base = {"adapter": self.adapter, "version": self.version, "params": self.answer_params(),
                "word": item.word_id, "page": item.page_id, "text": item.text,
                "box": [round(float(v), 3) for v in item.box], "size": list(item.page_size)}
        base.update(self._key_extra(item))
        return _sha(base)

    def _key_extra(self, item: Item) -> dict:
        return {}

    def describe(self) -> dict:
        return {"name": self.name, "adapter": self.adapter, "kind": self.kind, "label": self.label,
                "reported_as": self.reported_as, "model": self.model, "params": self.answer_params()}

    def scrub(self, text: str) -> str:
        return scrub_secrets(text, ())

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} ({self.adapter})>"


# ------------------------------------------------------------------------------------------ scrubbing

_KEYLIKE = re.compile(r"(?:\bsk-[A-Za-z0-9_\-\*\.]{6,}|\bAIza[A-Za-z0-9_\-]{10,}|(?i:bearer)\s+[A-Za-z0-9_\-\.\*~+/=]{6,})")


def scrub_secrets(text, secrets: Sequence[tuple[str, str]], patterns: bool = True) -> str:
    """``text`` with every secret value replaced by ``<NAME>`` (``secrets`` = [(NAME, value), ...]; longest
    values first) and, with ``patterns``, anything shaped like an API key or bearer token replaced by
    ``<redacted>``."""
    if text is None:
        return None
    text = str(text)
    for name, value in sorted(secrets, key=lambda s: -len(s[1])):
        if value and len(value) >= 4:
            text = text.replace(value, f"<{name}>")
    return _KEYLIKE.sub("<redacted>", text) if patterns else text


# ------------------------------------------------------------------------------------------- retries


@dataclass
class RetryPolicy:
    """Exponential backoff: before retry k (k = 1, 2, ...) wait ``min(max_delay, base_delay * 2**(k-1))``
    seconds times ``1 + jitter * u`` (u uniform in [0, 1) from a generator seeded by ``seed``, the request
    key and k: reproducible, independent of thread scheduling), or the server's ``Retry-After`` if longer
    (capped at ``max_retry_after``). At most ``max_attempts`` requests in all. ``sleep`` is injectable."""

    max_attempts: int = 6
    base_delay: float = 2.0
    max_delay: float = 60.0
    jitter: float = 0.25
    max_retry_after: float = 120.0
    seed: int = 0
    sleep: Callable[[float], None] = time.sleep

    def delay(self, retry: int, key: str = "", retry_after: Optional[float] = None) -> float:
        rng = random.Random(f"{self.seed}:{key}:{retry}")
        d = min(self.max_delay, self.base_delay * 2 ** (retry - 1)) * (1.0 + self.jitter * rng.random())
        if retry_after is not None:
            d = max(d, min(float(retry_after), self.max_retry_after))
        return d


RETRY_STATUS = frozenset({408, 409, 429})


def _retry_after(headers) -> Optional[float]:
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(float(ms) / 1000.0, 0.0)
        v = headers.get("retry-after")
    except Exception:
        return None
    if v is None:
        return None
    try:
        return max(float(v), 0.0)
    except ValueError:
        try:
            t = email.utils.parsedate_to_datetime(v)
            return max(t.timestamp() - time.time(), 0.0)
        except (TypeError, ValueError):
            return None


# --------------------------------------------------------------------------------------- API systems


def _env(var: Optional[str], what: str, system: str, required: bool = True, default: Optional[str] = None):
    if not var:
        if required and default is None:
            raise SystemConfigError(f"system {system}: field {what}_env: missing (name the environment variable "
                                    f"that holds the {what.replace('_', ' ')})")
        return default
    value = os.environ.get(var)
    if value:
        return value
    if default is not None:
        return default
    if required:
        raise SystemConfigError(f"system {system}: environment variable {var} is not set (it must hold the "
                                f"{what.replace('_', ' ')}); set it in the environment, never in a notebook "
                                f"parameter or a config file")
    return None


def _png_b64(data: bytes) -> str:
    if not isinstance(data, (bytes, bytearray)):
        raise SystemConfigError(f"an image part must be PNG bytes, got {type(data).__name__}")
    return base64.b64encode(bytes(data)).decode("ascii")


class ApiSystem(_Base):
    """Common part of the OpenAI-compatible and Anthropic adapters: config, secrets, retries."""

    kind = "api"
    hashed_fields = ("temperature", "max_tokens", "variant", "extra_body")
    default_concurrency = 4
    key_env_default = None
    base_env_default = None

    def __init__(self, name: str, cfg: dict, retry: Optional[RetryPolicy] = None, client=None):
        super().__init__(name, cfg)
        if not self.model:
            raise SystemConfigError(f"system {name}: field model: missing")
        self.temperature = cfg.get("temperature", 0) if "temperature" in cfg else 0
        self.max_tokens = int(cfg.get("max_tokens") or 16384)
        self.timeout = float(cfg.get("timeout") or 600.0)
        self.variant = cfg.get("variant") or "two-image"
        self.extra_body = dict(cfg.get("extra_body") or {})
        self.api_key_env = cfg.get("api_key_env", self.key_env_default)
        self.base_url_env = cfg.get("base_url_env", self.base_env_default)
        # secrets: read now, so a missing variable fails before any request
        api_key = _env(self.api_key_env, "api_key", name)
        base_url = _env(self.base_url_env, "base_url", name, default=cfg.get("default_base_url"))
        self._secrets = [(self.api_key_env, api_key)]
        if base_url and self.base_url_env and os.environ.get(self.base_url_env):
            self._secrets.append((self.base_url_env, base_url))
            self._secrets.append((self.base_url_env, base_url.rstrip("/")))
            from urllib.parse import urlsplit

            parts = urlsplit(base_url)
            if parts.netloc:
                self._secrets.append((self.base_url_env, parts.netloc))
            if parts.hostname:
                self._secrets.append((self.base_url_env, parts.hostname))
        self.retry = retry or RetryPolicy(max_attempts=int(cfg.get("max_attempts") or 6),
                                          base_delay=float(cfg.get("backoff_base") or 2.0),
                                          max_delay=float(cfg.get("backoff_max") or 60.0))
        self._client = client if client is not None else self._make_client(api_key, base_url)

    def answer_params(self) -> dict:
        return {"adapter": self.adapter, "temperature": self.temperature, "max_tokens": self.max_tokens,
                "variant": self.variant, "extra_body": self.extra_body}

    def describe(self) -> dict:
        d = super().describe()
        d.update({"api_key_env": self.api_key_env, "base_url_env": self.base_url_env,
                  "concurrency": self.concurrency, "timeout": self.timeout,
                  "max_attempts": self.retry.max_attempts})
        return d

    def scrub(self, text) -> str:
        return scrub_secrets(text, self._secrets)

    def request_key(self, item: Item) -> str:
        return self._hash(self._request(item))

    def _hash(self, req) -> str:
        from .prompt import request_hash

        return request_hash(req, self.model, self.answer_params())

    def _request(self, item: Item):
        return item.request_for(self.variant, self.name)

    def _parts(self, req) -> list:
        parts = list(req.parts)
        for i, p in enumerate(parts):
            if not (isinstance(p, (tuple, list)) and len(p) == 2 and p[0] in ("text", "image")):
                raise SystemConfigError(f"system {self.name}: request part {i} must be ('text', str) or "
                                        f"('image', png_bytes)")
        return parts

    # --- subclass hooks
    def _make_client(self, api_key: str, base_url: Optional[str]):  # pragma: no cover - abstract
        raise NotImplementedError

    def _call(self, req) -> RawOutput:  # pragma: no cover - abstract
        raise NotImplementedError

    def _status_error_types(self):  # (APIStatusError, APIConnectionError, APITimeoutError)
        raise NotImplementedError

    def predict(self, item: Item) -> RawOutput:
        req = self._request(item)
        pv = (getattr(req, "meta", None) or {}).get("prompt_version")
        out = self._predict(req, item)
        out.prompt_version = None if pv is None else str(pv)
        return out

    def _predict(self, req, item: Item) -> RawOutput:
        status_err, conn_err, timeout_err = self._status_error_types()
        key = self._hash(req)  # seeds the backoff jitter
        attempt, last_error = 0, None
        while attempt < self.retry.max_attempts:
            attempt += 1
            t0 = time.monotonic()
            retry_after = None
            try:
                out = self._call(req)
                out.attempts = attempt
                out.latency = time.monotonic() - t0
                out.error = self.scrub(out.error) if out.error else None
                if out.text:  # a model echoing the key (or URL) must not carry it into the cache either
                    out.text = scrub_secrets(out.text, self._secrets, patterns=False)
                return out
            except status_err as e:
                code = getattr(e, "status_code", None)
                last_error = f"{type(e).__name__}: HTTP {code}: {self.scrub(_message(e))}"
                retryable = code in RETRY_STATUS or (code is not None and code >= 500)
                retry_after = _retry_after(getattr(getattr(e, "response", None), "headers", None))
            except timeout_err as e:
                last_error = f"{type(e).__name__}: request timed out after {self.timeout:g} s"
                retryable = True
            except conn_err as e:
                last_error = f"{type(e).__name__}: {self.scrub(_message(e))}"
                retryable = True
            except SystemConfigError:
                raise
            except Exception as e:  # malformed response or a bug: not a model output, not retried
                last_error = f"{type(e).__name__}: {self.scrub(_message(e))}"
                retryable = False
            if not retryable or attempt >= self.retry.max_attempts:
                break
            self.retry.sleep(self.retry.delay(attempt, key, retry_after))
        return RawOutput(text=None, status="error", error=last_error, attempts=attempt,
                         latency=time.monotonic() - t0)


def _message(e: BaseException) -> str:
    m = getattr(e, "message", None) or str(e) or type(e).__name__
    return str(m)[:600]


def _usage(u) -> dict:
    if u is None:
        return {}
    try:
        d = u.model_dump(exclude_none=True)
    except AttributeError:
        d = dict(u) if isinstance(u, dict) else {}
    return json.loads(json.dumps(d, default=str))


class OpenAISystem(ApiSystem):
    """OpenAI-compatible chat.completions (Gemini, Kimi, vLLM) through the ``openai`` SDK."""

    adapter = "openai"

    def __init__(self, name, cfg, retry=None, client=None):
        self.max_tokens_param = cfg.get("max_tokens_param") or "max_tokens"
        if self.max_tokens_param not in ("max_tokens", "max_completion_tokens"):
            raise SystemConfigError(f"system {name}: field max_tokens_param: must be max_tokens or "
                                    f"max_completion_tokens, got {self.max_tokens_param!r}")
        super().__init__(name, cfg, retry, client)

    def _make_client(self, api_key, base_url):
        import openai

        if not base_url:
            raise SystemConfigError(f"system {self.name}: no base URL (set base_url_env, e.g. VLLM_BASE_URL)")
        return openai.OpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=self.timeout)

    def _status_error_types(self):
        import openai

        return openai.APIStatusError, openai.APIConnectionError, openai.APITimeoutError

    def messages(self, req) -> list[dict]:
        content = []
        for kind, value in self._parts(req):
            if kind == "text":
                content.append({"type": "text", "text": str(value)})
            else:
                content.append({"type": "image_url",
                                "image_url": {"url": "data:image/png;base64," + _png_b64(value)}})
        msgs = []
        if req.system:
            msgs.append({"role": "system", "content": req.system})
        msgs.append({"role": "user", "content": content})
        return msgs

    def _call(self, req) -> RawOutput:
        kwargs = {"model": self.model, "messages": self.messages(req), self.max_tokens_param: self.max_tokens}
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        if self.extra_body:
            kwargs["extra_body"] = self.extra_body
        resp = self._client.chat.completions.create(**kwargs)
        if not getattr(resp, "choices", None):
            raise ValueError("malformed response: no choices")
        ch = resp.choices[0]
        msg = ch.message
        text, refusal = getattr(msg, "content", None), getattr(msg, "refusal", None)
        finish = ch.finish_reason
        if refusal or finish == "content_filter":
            status, text = "refusal", (refusal or text or "")
        elif finish == "length":
            status = "truncated"
        else:
            status = "ok"
        return RawOutput(text=text if text is not None else "", status=status, finish_reason=finish,
                         usage=_usage(getattr(resp, "usage", None)), served_model=getattr(resp, "model", None))


class AnthropicSystem(ApiSystem):
    """Claude through the native Messages API (``anthropic`` SDK)."""

    adapter = "anthropic"
    key_env_default = "ANTHROPIC_API_KEY"

    def _make_client(self, api_key, base_url):
        import anthropic

        return anthropic.Anthropic(api_key=api_key, base_url=base_url or "https://api.anthropic.com",
                                   max_retries=0, timeout=self.timeout)

    def _status_error_types(self):
        import anthropic

        return anthropic.APIStatusError, anthropic.APIConnectionError, anthropic.APITimeoutError

    def messages(self, req) -> list[dict]:
        content = []
        for kind, value in self._parts(req):
            if kind == "text":
                content.append({"type": "text", "text": str(value)})
            else:
                content.append({"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                            "data": _png_b64(value)}})
        return [{"role": "user", "content": content}]

    def _call(self, req) -> RawOutput:
        kwargs = {"model": self.model, "max_tokens": self.max_tokens, "messages": self.messages(req)}
        if req.system:
            kwargs["system"] = req.system
        body = dict(self.extra_body)
        if self.temperature is not None:
            body["temperature"] = self.temperature  # not a typed SDK argument any more: sent in the body
        if body:
            kwargs["extra_body"] = body
        resp = self._client.messages.create(**kwargs)
        blocks = getattr(resp, "content", None)
        if blocks is None:
            raise ValueError("malformed response: no content")
        text = "".join(getattr(b, "text", "") or "" for b in blocks if getattr(b, "type", None) == "text")
        stop = getattr(resp, "stop_reason", None)
        status = {"refusal": "refusal", "max_tokens": "truncated"}.get(stop, "ok")
        return RawOutput(text=text, status=status, finish_reason=stop, usage=_usage(getattr(resp, "usage", None)),
                         served_model=getattr(resp, "model", None))


# ------------------------------------------------------------------------------------- local systems


def _box_of(item: Item, where: str) -> tuple[float, float, float, float]:
    x0, y0, x1, y1 = (float(v) for v in item.box)
    if not all(np.isfinite([x0, y0, x1, y1])) or x1 < x0 or y1 < y0:
        raise SystemConfigError(f"{where}: word {item.word_id}: bad box {item.box}")
    return x0, y0, x1, y1


class ReferenceSystem(_Base):
    """The reference ink itself (sanity check: scores DTW 0)."""

    adapter = "reference"

    def _key_extra(self, item):
        ref = item.reference
        return {"ink": None if ref is None else _sha([np.round(s, 3).tolist() for s in as_ink(ref).strokes])}

    def predict(self, item: Item) -> RawOutput:
        if item.reference is None:
            return RawOutput(status="error", error=f"word {item.word_id}: no reference ink", attempts=0)
        return RawOutput(strokes=as_ink(item.reference), status="ok")


class BoxSystem(_Base):
    """Knows where, not what: a line (default) or a zig-zag through the word box (see module doc)."""

    adapter = "box"
    hashed_fields = ("shape",)

    def __init__(self, name, cfg):
        super().__init__(name, cfg)
        self.shape = cfg.get("shape") or "line"
        if self.shape not in ("line", "zigzag"):
            raise SystemConfigError(f"system {name}: field shape: must be line or zigzag, got {self.shape!r}")

    def answer_params(self):
        return {"shape": self.shape}

    def predict(self, item: Item) -> RawOutput:
        return RawOutput(strokes=box_ink(_box_of(item, self.name), self.shape), status="ok")


def box_ink(box, shape: str = "line") -> Ink:
    """The box baseline's ink for ``box`` = (x0, y0, x1, y1) page pixels (see module doc)."""
    x0, y0, x1, y1 = box
    cy, h = (y0 + y1) / 2, max(y1 - y0, 1e-9)
    if shape == "line":
        pts = [[x0, cy], [x1, cy]]
    elif shape == "zigzag":
        n = max(int(round((x1 - x0) / (0.5 * h))), 1)
        xs = np.linspace(x0, x1, n + 1)
        ys = np.where(np.arange(n + 1) % 2 == 0, y0 + 0.75 * h, y0 + 0.25 * h)
        pts = np.column_stack([xs, ys])
    else:
        raise ValueError(f"box_ink: unknown shape {shape!r}")
    return as_ink([np.asarray(pts, float)], "box baseline")


class FontSystem(_Base):
    """The word typed in a Hershey font, fitted into the word box (readable, no style)."""

    adapter = "font"
    hashed_fields = ("font",)

    def __init__(self, name, cfg):
        super().__init__(name, cfg)
        self.font = cfg.get("font") or "futural"
        from HersheyFonts import HersheyFonts

        if self.font not in HersheyFonts().default_font_names:
            raise SystemConfigError(f"system {name}: field font: {self.font!r} is not a Hershey font")

    def answer_params(self):
        return {"font": self.font}

    def predict(self, item: Item) -> RawOutput:
        ink = font_ink(item.text, _box_of(item, self.name), self.font)
        if ink.n_points == 0:
            return RawOutput(status="error", error=f"word {item.word_id}: the font has no glyph for "
                                                  f"{item.text!r}", attempts=0)
        return RawOutput(strokes=ink, status="ok")


@functools.lru_cache(maxsize=8)
def _hershey(font: str):
    from HersheyFonts import HersheyFonts

    f = HersheyFonts()
    f.load_default_font(font)
    f.normalize_rendering(100)
    return f


def font_ink(text: str, box, font: str = "futural") -> Ink:
    """``text`` typed in Hershey ``font``, scaled uniformly to fit inside ``box`` (page pixels) and centred.
    Hershey y points up; it is flipped to page y down. Returns an empty Ink when no glyph draws."""
    strokes = [np.asarray(s, float) for s in _hershey(font).strokes_for_text(text) if len(s)]
    if not strokes:
        return Ink(())
    strokes = [np.column_stack([s[:, 0], -s[:, 1]]) for s in strokes]
    allp = np.concatenate(strokes)
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    ext = np.maximum(hi - lo, 1e-9)
    x0, y0, x1, y1 = box
    bw, bh = max(x1 - x0, 1e-9), max(y1 - y0, 1e-9)
    scale = min(bw / ext[0], bh / ext[1])
    off = np.array([x0 + (bw - ext[0] * scale) / 2, y0 + (bh - ext[1] * scale) / 2])
    return as_ink([(s - lo) * scale + off for s in strokes], "font baseline")


class DerenderSystem(_Base):
    """A derenderer (:mod:`inkground_lib.derender`) applied to the word crop cut by
    :func:`inkground_lib.derender.crop_word` (box grown by ``grow``, default 0.1 = +10% width and height, as
    InkSight's full-page use does); ``derender(crop, crop_box, text)`` returns the ink in page pixels."""

    kind = "specialist"
    hashed_fields = ("grow",)

    def __init__(self, name, cfg, derenderer, adapter):
        super().__init__(name, cfg)
        self.adapter = adapter
        self.grow = float(cfg.get("grow", 0.1))
        self.derenderer = derenderer

    def answer_params(self):
        return {"grow": self.grow, "derenderer": type(self.derenderer).__name__,
                "derenderer_params": repr(getattr(self.derenderer, "params", None))}

    def _key_extra(self, item):
        # the photo's bytes and the derenderer's source code: a changed derenderer is asked again
        import inspect

        code = inspect.getsourcefile(type(self.derenderer))
        extra = {"code": _file_sha(code) if code else None}
        if item.page_image is not None:
            extra["photo"] = _file_sha(str(item.page_image))
        else:
            extra["photo"] = hashlib.sha256(np.ascontiguousarray(item.image).tobytes()).hexdigest()
        return extra

    def predict(self, item: Item) -> RawOutput:
        from .derender import crop_word

        crop, cb = crop_word(item.load_image(), _box_of(item, self.name), grow=self.grow)
        ink = as_ink(self.derenderer.derender(np.ascontiguousarray(crop), cb, item.text),
                     f"{self.name}: word {item.word_id}")
        return RawOutput(strokes=ink, status="ok")


def _skeleton(name, cfg):
    try:
        from .derender import SkeletonDerenderer
    except ImportError as e:
        raise SystemUnavailable(f"system {name}: inkground_lib.derender.SkeletonDerenderer is not "
                                f"available ({e})") from None
    return DerenderSystem(name, cfg, SkeletonDerenderer(), "skeleton")


INKSIGHT_NEEDS = ("TensorFlow 2.15-2.17 with tensorflow-text and the InkSight-Small-p SavedModel on disk "
                  "(Hugging Face Derendering/InkSight-Small-p), its folder named by the environment variable "
                  "in model_dir_env; use the 'skeleton' system as the offline stand-in")


def _inksight(name, cfg):
    try:
        from .derender import DerenderError, InkSightDerenderer
    except ImportError:
        raise SystemUnavailable(f"system {name}: InkSight is not available here (inkground_lib.derender has no "
                                f"InkSightDerenderer); it needs {INKSIGHT_NEEDS}") from None
    var = cfg.get("model_dir_env") or "INKSIGHT_MODEL_DIR"
    model_dir = os.environ.get(var)
    if not model_dir:
        raise SystemUnavailable(f"system {name}: environment variable {var} is not set; InkSight needs "
                                f"{INKSIGHT_NEEDS}")
    try:
        d = InkSightDerenderer(model_dir)
    except (DerenderError, ImportError, OSError) as e:
        raise SystemUnavailable(f"system {name}: InkSight cannot be loaded: {e}") from None
    return DerenderSystem(name, cfg, d, "inksight")


class ReplaySystem(_Base):
    """Recorded raw outputs from a JSONL file (see module doc)."""

    adapter = "replay"
    kind = "replay"

    def __init__(self, name, cfg):
        super().__init__(name, cfg)
        path = cfg.get("path")
        if not path and cfg.get("path_env"):
            path = os.environ.get(cfg["path_env"])
            if not path:
                raise SystemConfigError(f"system {name}: environment variable {cfg['path_env']} is not set (it "
                                        f"must name the JSONL file of recorded outputs)")
        if not path:
            raise SystemConfigError(f"system {name}: field path: missing (or name a variable in path_env)")
        self.path = Path(path)
        if not self.path.is_file():
            raise SystemConfigError(f"system {name}: replay file {self.path} does not exist")
        self.source = cfg.get("source")
        self.records = self._load()
        self.file_sha = _file_sha(str(self.path.resolve()))

    def _load(self) -> dict:
        out = {}
        with open(self.path, "r", encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    if not line.endswith("\n"):
                        break  # a torn last line (a writer killed mid-write): ignored
                    raise SystemConfigError(f"{self.path}: line {n}: not valid JSON") from None
                if not isinstance(rec, dict) or not isinstance(rec.get("word_id"), str):
                    raise SystemConfigError(f"{self.path}: line {n}: field word_id: missing or not a string")
                if self.source is not None and rec.get("system") != self.source:
                    continue
                if rec.get("status") == "error":
                    continue
                if rec.get("raw_text") is None and rec.get("text") is None and rec.get("strokes") is None:
                    continue
                out.setdefault(rec["word_id"], (n, rec))
        return out

    def answer_params(self):
        return {"source": self.source}

    def _key_extra(self, item):
        return {"file": self.file_sha}

    def predict(self, item: Item) -> RawOutput:
        hit = self.records.get(item.word_id)
        if hit is None:
            return RawOutput(status="error", error=f"no recorded output for word {item.word_id}", attempts=0)
        n, rec = hit
        status = rec.get("status") if rec.get("status") in MODEL_OUTPUT_STATUSES else "ok"
        common = dict(status=status, finish_reason=rec.get("finish_reason"), usage=rec.get("usage") or {},
                      attempts=0)
        if rec.get("strokes") is not None and rec.get("raw_text") is None and rec.get("text") is None:
            try:
                return RawOutput(strokes=ink_from_lists(rec["strokes"], f"{self.path}: line {n}: strokes"),
                                 **common)
            except InkError as e:
                return RawOutput(status="error", error=str(e), attempts=0)
        text = rec.get("raw_text") if rec.get("raw_text") is not None else rec.get("text")
        return RawOutput(text=str(text), **common)


# ------------------------------------------------------------------------------------------ registry

_COMMON = {"adapter", "label", "reported_as", "notes", "concurrency", "extends"}
_API = {"model", "api_key_env", "base_url_env", "default_base_url", "max_tokens", "temperature", "timeout",
        "max_attempts", "backoff_base", "backoff_max", "variant", "extra_body"}
ADAPTER_FIELDS = {
    "openai": _API | {"max_tokens_param"},
    "anthropic": _API,
    "skeleton": {"grow"},
    "inksight": {"grow", "model_dir_env", "model"},
    "font": {"font"},
    "box": {"shape"},
    "reference": set(),
    "replay": {"path", "path_env", "source", "model"},
}
ADAPTER_KIND = {"openai": "api", "anthropic": "api", "skeleton": "specialist", "inksight": "specialist",
                "font": "local", "box": "local", "reference": "local", "replay": "replay"}
_LITERAL_SECRETS = {"api_key": "api_key_env", "key": "api_key_env", "base_url": "base_url_env",
                    "token": "api_key_env", "url": "base_url_env"}


def validate_entry(name: str, cfg, where: str = "registry") -> dict:
    """Check one registry entry; raise SystemConfigError naming the file, the entry and the field."""
    w = f"{where}: system {name}"
    if not isinstance(name, str) or not name:
        raise SystemConfigError(f"{where}: system names must be non-empty strings, got {name!r}")
    if not isinstance(cfg, dict):
        raise SystemConfigError(f"{w}: expected a mapping of fields, got {type(cfg).__name__}")
    for k in cfg:
        if k in _LITERAL_SECRETS:
            raise SystemConfigError(f"{w}: field {k}: secrets and private URLs may not be written in a config "
                                    f"file; name the environment variable in {_LITERAL_SECRETS[k]} instead")
    adapter = cfg.get("adapter")
    if adapter not in ADAPTER_FIELDS:
        raise SystemConfigError(f"{w}: field adapter: {adapter!r} is not one of {sorted(ADAPTER_FIELDS)}")
    unknown = set(cfg) - _COMMON - ADAPTER_FIELDS[adapter]
    if unknown:
        raise SystemConfigError(f"{w}: unknown field(s) {sorted(unknown)} for adapter {adapter} (allowed: "
                                f"{sorted(_COMMON | ADAPTER_FIELDS[adapter])})")
    for k in ("api_key_env", "base_url_env", "path_env", "model_dir_env"):
        v = cfg.get(k)
        if v is not None and not (isinstance(v, str) and _ENV_NAME.match(v)):
            raise SystemConfigError(f"{w}: field {k}: {v!r} is not an environment variable name")
    for k in ("max_tokens", "concurrency", "max_attempts"):
        v = cfg.get(k)
        if v is not None and not (isinstance(v, int) and not isinstance(v, bool) and v > 0):
            raise SystemConfigError(f"{w}: field {k}: expected a positive integer, got {v!r}")
    for k in ("temperature", "timeout", "backoff_base", "backoff_max", "grow"):
        v = cfg.get(k)
        if v is not None and not (isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0):
            raise SystemConfigError(f"{w}: field {k}: expected a non-negative number, got {v!r}")
    if cfg.get("variant") not in (None, "two-image", "one-image"):
        raise SystemConfigError(f"{w}: field variant: must be two-image (default) or one-image, got "
                                f"{cfg.get('variant')!r}")
    if cfg.get("extra_body") is not None and not isinstance(cfg["extra_body"], dict):
        raise SystemConfigError(f"{w}: field extra_body: expected a mapping")
    dbu = cfg.get("default_base_url")
    if dbu is not None and not (isinstance(dbu, str) and dbu.startswith("https://")):
        raise SystemConfigError(f"{w}: field default_base_url: must be a public https:// URL (private URLs "
                                f"come from base_url_env)")
    return dict(cfg)


def _read_yaml(path: Path) -> dict:
    import yaml

    if not path.is_file():
        raise SystemConfigError(f"{path}: systems registry file does not exist")
    try:
        data = yaml.safe_load(path.read_text("utf-8"))
    except yaml.YAMLError as e:
        raise SystemConfigError(f"{path}: not valid YAML ({e})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SystemConfigError(f"{path}: expected a mapping of system name -> fields")
    return data


def load_registry(extra: str | os.PathLike | Sequence | None = None, use_env: bool = True) -> dict[str, dict]:
    """All system entries: the packaged ``systems.yaml``, then each file named by ``INKGROUND_SYSTEMS``
    (``os.pathsep``-separated; when ``use_env``), then ``extra`` (a path or a list of paths). Later entries
    replace earlier ones of the same name; an entry with ``extends: <name>`` is merged onto that entry.
    Every entry is validated."""
    files = [REGISTRY_FILE]
    if use_env and os.environ.get(ENV_EXTRA):
        files += [Path(p) for p in os.environ[ENV_EXTRA].split(os.pathsep) if p]
    if extra is not None:
        files += [Path(extra)] if isinstance(extra, (str, os.PathLike)) else [Path(p) for p in extra]
    reg: dict[str, dict] = {}
    for path in files:
        for name, cfg in _read_yaml(Path(path)).items():
            name = str(name)
            if isinstance(cfg, dict) and cfg.get("extends") is not None:
                base = cfg["extends"]
                if base not in reg:
                    raise SystemConfigError(f"{path}: system {name}: field extends: no system {base!r} defined "
                                            f"before it")
                own = {k: v for k, v in cfg.items() if k != "extends"}
                # a derived entry is not the paper's system: its label is its own name unless given, and it
                # is reported as nothing unless it says so
                cfg = {**reg[base], "label": name, "reported_as": None, **own}
            reg[name] = validate_entry(name, cfg, str(path))
    return reg


def list_systems(registry: Optional[dict] = None) -> list[str]:
    return list((registry or load_registry()).keys())


def system_kind(name: str, registry: Optional[dict] = None) -> str:
    reg = registry or load_registry()
    if name not in reg:
        raise SystemConfigError(f"unknown system {name!r}; known: {', '.join(reg)}")
    return ADAPTER_KIND[reg[name]["adapter"]]


def get_system(name: str, registry: Optional[dict] = None, extra=None, retry: Optional[RetryPolicy] = None,
               **overrides) -> System:
    """Build the system ``name`` from the registry (``load_registry(extra)`` unless ``registry`` is given),
    with ``overrides`` (registry fields, e.g. ``path=`` for replay, ``concurrency=``) merged on top.
    API systems read their key and base URL from the environment now: a missing variable raises
    SystemConfigError naming it. ``retry`` replaces the retry policy (tests inject ``sleep``)."""
    reg = registry if registry is not None else load_registry(extra)
    if name not in reg:
        raise SystemConfigError(f"unknown system {name!r}; known: {', '.join(reg)}")
    cfg = validate_entry(name, {**reg[name], **overrides}, "registry + overrides")
    adapter = cfg["adapter"]
    if adapter == "openai":
        return OpenAISystem(name, cfg, retry=retry)
    if adapter == "anthropic":
        return AnthropicSystem(name, cfg, retry=retry)
    if adapter == "reference":
        return ReferenceSystem(name, cfg)
    if adapter == "box":
        return BoxSystem(name, cfg)
    if adapter == "font":
        return FontSystem(name, cfg)
    if adapter == "replay":
        return ReplaySystem(name, cfg)
    if adapter == "skeleton":
        return _skeleton(name, cfg)
    if adapter == "inksight":
        return _inksight(name, cfg)
    raise SystemConfigError(f"system {name}: adapter {adapter!r} has no implementation")  # pragma: no cover
