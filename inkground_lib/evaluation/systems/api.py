"""Vision-language models behind an API: the OpenAI-compatible and the native Anthropic adapter."""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
from typing import Optional

from inkground_lib.core.defaults import DEADLINE_FAILURES, MAX_ANSWER_BYTES
from inkground_lib.core.openai_client import openai_client
from inkground_lib.core.secrets import CredentialError, check_base_url, check_key, scrub_secrets, url_secrets
from inkground_lib.evaluation.systems.base import (
    BaseSystem,
    Item,
    Prepared,
    RawOutput,
    SystemConfigError,
    variant_mismatch,
)
from inkground_lib.evaluation.systems.providers import (
    api_version_of,
    provider_of,
    quota_marker,
    rule_problems,
    sampling_for,
)
from inkground_lib.evaluation.systems.retry import (
    RateLimiter,
    RetryPolicy,
    retry_after_seconds,
    should_retry,
)


def _env(var: Optional[str], what: str, system: str, required: bool = True, default: Optional[str] = None):
    if not var:
        if required and default is None:
            raise SystemConfigError(f"system {system}: field {what}_env: missing (name the environment variable "
                                    f"that holds the {what.replace('_', ' ')})")
        return default
    value = os.environ.get(var)
    if value:
        try:  # a key with a line break or a non-ASCII character: named here, not as "Connection error"
            return check_key(value, var) if what == "api_key" else check_base_url(value, var)
        except CredentialError as e:
            raise SystemConfigError(f"system {system}: {e}") from None
    if default is not None:
        return default
    if required:
        raise SystemConfigError(f"system {system}: environment variable {var} is not set (it must hold the "
                                f"{what.replace('_', ' ')}); set it in the environment, never in a notebook "
                                f"parameter or a config file")
    return None


class ApiSystem(BaseSystem):
    """Common part of the OpenAI-compatible and Anthropic adapters: config, secrets, retries."""

    kind = "api"
    hashed_fields = ("temperature", "max_tokens", "variant", "extra_body")
    default_concurrency = 4
    key_env_default = None
    base_env_default = None

    def __init__(self, name: str, cfg: dict, retry: Optional[RetryPolicy] = None, client=None,
                 offline: bool = False):
        """``offline``: built to plan a run (``predict --dry-run``): no key or base URL is read, no client made, and
        :meth:`predict` refuses; request keys and image sizes are those of the system built to send."""
        super().__init__(name, cfg)
        if not self.model:
            raise SystemConfigError(f"system {name}: field model: missing")
        # what the provider accepts (providers.yaml): a setting it rejects is refused here, before any request
        self.provider = provider_of(cfg, f"system {name}")
        self.api_version = api_version_of(cfg, self.provider, f"system {name}")
        problems = rule_problems(cfg, f"system {name}")
        if problems:
            raise SystemConfigError("; ".join(problems))
        self.sampling_sent = sampling_for(cfg, self.provider)
        self.temperature = self.sampling_sent.get("temperature")
        self.system_message = cfg.get("system_message", True) is not False
        self.image_limits = self.provider.images
        self.max_tokens = int(cfg.get("max_tokens") or 16384)
        self.timeout = float(cfg.get("timeout") or 600.0)  # a total deadline per request (core.http_client)
        self.max_answer_bytes = int(cfg.get("max_answer_bytes") or MAX_ANSWER_BYTES)
        self.variant = cfg.get("variant") or "two-image"
        self.extra_body = dict(cfg.get("extra_body") or {})
        self.api_key_env = cfg.get("api_key_env", self.key_env_default)
        self.base_url_env = cfg.get("base_url_env", self.base_env_default)
        self.key_optional = bool(cfg.get("key_optional", False))
        self.rpm = cfg.get("rpm")
        self.rpd = cfg.get("rpd")
        self.limiter = RateLimiter(self.rpm, self.rpd)
        self.exhausted: Optional[str] = None  # set when sending must stop: the run stops (asking.run_predictions)
        self.exhausted_by: Optional[str] = None  # what stopped it: "quota" or "deadlines"
        # K requests in a row that got no complete answer within the deadline (timeout): the run stops as on a
        # spent quota (core.defaults.DEADLINE_FAILURES; the entry's max_deadline_failures)
        self.max_deadline_failures = int(cfg.get("max_deadline_failures") or DEADLINE_FAILURES)
        self._deadline_misses = 0
        self._deadline_lock = threading.Lock()
        self.prices = (cfg.get("price_input_per_mtok"), cfg.get("price_output_per_mtok"))
        self.sampling = cfg.get("sampling")
        self.image_token_formula = cfg.get("image_token_formula")
        self.offline = bool(offline)
        self.retry = retry or RetryPolicy(max_attempts=int(cfg.get("max_attempts") or 6),
                                          base_delay=float(cfg.get("backoff_base") or 2.0),
                                          max_delay=float(cfg.get("backoff_max") or 60.0))
        self._secrets: list = []
        if offline:
            self._client = None
            return
        # secrets: read now, so a missing variable fails before any request (a self-hosted server without
        # keys - vLLM's default - needs none: key_optional, and no key is sent when the variable is unset)
        api_key = _env(self.api_key_env, "api_key", name, required=not self.key_optional)
        base_url = _env(self.base_url_env, "base_url", name, default=cfg.get("default_base_url"))
        if base_url and base_url == cfg.get("default_base_url"):
            try:
                check_base_url(base_url, f"{self.base_url_env or 'base_url_env'} (default_base_url)")
            except CredentialError as e:
                raise SystemConfigError(f"system {name}: {e}") from None
        self._secrets = [(self.api_key_env, api_key)] if api_key else []
        if base_url and self.base_url_env and os.environ.get(self.base_url_env):
            self._secrets += url_secrets(self.base_url_env, base_url)
        # the registry's default URL is a provider's: only public addresses (an environment's may be self-hosted)
        self.public_url = not (self.base_url_env and os.environ.get(self.base_url_env))
        try:
            self._client = client if client is not None else self._make_client(api_key, base_url)
        except CredentialError as e:  # its host resolves to an address no key may go to
            raise SystemConfigError(f"system {name}: {e}") from None

    def answer_params(self) -> dict:
        """Settings that change the answer (hashed into the request key). top_p, top_k and the message shape
        appear only when set, so the keys of requests made before they existed stay the same."""
        p = {"adapter": self.adapter, "temperature": self.temperature, "max_tokens": self.max_tokens,
             "variant": self.variant, "extra_body": self.extra_body}
        p.update({k: v for k, v in self.sampling_sent.items() if k != "temperature"})
        if not self.system_message:
            p["system_message"] = False
        return p

    def describe(self) -> dict:
        d = super().describe()
        d.update({"api_key_env": self.api_key_env, "base_url_env": self.base_url_env,
                  "key_optional": self.key_optional, "concurrency": self.concurrency, "rpm": self.rpm,
                  "rpd": self.rpd, "provider": self.provider.name, "api_version": self.api_version,
                  "sampling_sent": dict(self.sampling_sent), "timeout": self.timeout,
                  "max_answer_bytes": self.max_answer_bytes, "max_attempts": self.retry.max_attempts,
                  "sampling": self.sampling,
                  "price_input_per_mtok": self.prices[0], "price_output_per_mtok": self.prices[1],
                  "image_token_formula": self.image_token_formula,
                  "max_deadline_failures": self.max_deadline_failures})
        return d

    def scrub(self, text) -> str:
        return scrub_secrets(text, self._secrets)

    def list_models(self, timeout: float) -> Optional[list[str]]:
        """The model ids the endpoint serves (its model list), or None where it has none; raises the SDK's
        errors (HTTP status, timeout, connection)."""
        page = self._client.with_options(timeout=timeout, max_retries=0).models.list(
            **getattr(self, "auth_extra", {}))
        return [str(getattr(m, "id", "")) for m in page]

    def close(self) -> None:
        """Close the SDK client (its connection pool)."""
        close = getattr(self._client, "close", None)
        if close is not None:
            close()

    def request_key(self, item: Item) -> str:
        return self.prepare(item).key

    def prepare(self, item: Item) -> Prepared:
        """The item's key and the item to ask with (:class:`~inkground_lib.evaluation.systems.base.Prepared`). An
        item whose request is built from shared parts (:class:`~inkground_lib.evaluation.prompt_parts.WordPrompt`)
        is keyed from its images' pixel digests, encoding nothing unless only encoding can tell whether an image
        fits the provider's limits (:func:`~inkground_lib.evaluation.image_fit.fit_prompt_images`); the item
        returned holds its parts, so asking encodes each image once. The key is that of the built request."""
        source = item.request
        if not hasattr(source, "spec"):  # a PromptRequest as it is (or a function building one)
            req = self._request(item)
            sent = self.sent_images(req)
            text = (req.system or "") + "".join(str(v) for k, v in req.parts if k == "text")
            return Prepared(self._hash(req, sent), item, [tuple(im.size) for im in sent], text,
                            sum(1 for im in sent if im.changed))
        from inkground_lib.evaluation.image_fit import ImageFitError, fit_prompt_images
        from inkground_lib.evaluation.prompt import hash_parts

        spec = source.spec(self.variant)
        if spec.variant != self.variant:
            raise variant_mismatch(self.name, item.word_id, self.variant, spec.variant)
        images = spec.images()
        try:
            sent = fit_prompt_images(images, self.image_limits, spec.text_bytes())
        except ImageFitError as e:
            raise SystemConfigError(f"system {self.name}: provider {self.provider.name}: {e}") from None
        params = self.answer_params()
        if sent is not None and any(im.changed for im in sent):  # re-encoded to fit: another request
            params["images_sent"] = [im.record() for im in sent]
        key = hash_parts(spec.system, spec.hashed_parts(), self.model, params)
        sizes = [im.size for im in images] if sent is None else [tuple(im.size) for im in sent]
        return Prepared(key, dataclasses.replace(item, request=spec), sizes, spec.system + "".join(spec.texts()),
                        0 if sent is None else sum(1 for im in sent if im.changed), sent is not None)

    def _hash(self, req, sent=None) -> str:
        from inkground_lib.evaluation.prompt import request_hash

        params = self.answer_params()
        sent = self.sent_images(req) if sent is None else sent
        if any(im.changed for im in sent):  # re-encoded to fit the provider's limits: another request
            params["images_sent"] = [im.record() for im in sent]
        return request_hash(req, self.model, params)

    def sent_images(self, req) -> list:
        """Each image of ``req`` as it is sent: fitted to the provider's limits
        (:func:`inkground_lib.evaluation.image_fit.fit_request_images`; the PNG as built when it fits)."""
        from inkground_lib.evaluation.image_fit import ImageFitError, fit_request_images

        parts = self._parts(req)
        text = len((req.system or "").encode()) + sum(len(str(v).encode()) for k, v in parts if k == "text")
        try:
            return fit_request_images([v for k, v in parts if k == "image"], self.image_limits, text)
        except ImageFitError as e:
            raise SystemConfigError(f"system {self.name}: provider {self.provider.name}: {e}") from None

    def _turns(self, req, content: list) -> tuple[Optional[str], list]:
        """(system prompt to send apart, or None; the user turn's content): a model whose chat template refuses
        a system message (``system_message: false``) gets the instructions as the first text of its user turn."""
        if req.system and not self.system_message:
            return None, [self._text_block(req.system)] + content
        return (req.system or None), content

    def _text_block(self, text: str) -> dict:
        return {"type": "text", "text": str(text)}

    def _request(self, item: Item):
        return item.request_for(self.variant, self.name)

    def _parts(self, req) -> list:
        parts = list(req.parts)
        for i, p in enumerate(parts):
            if not (isinstance(p, (tuple, list)) and len(p) == 2 and p[0] in ("text", "image")):
                raise SystemConfigError(f"system {self.name}: request part {i} must be ('text', str) or "
                                        f"('image', png_bytes)")
            if p[0] == "image" and not isinstance(p[1], (bytes, bytearray)):
                raise SystemConfigError(f"an image part must be PNG bytes, got {type(p[1]).__name__}")
        return parts

    def _content(self, req, image_block) -> tuple[list, list]:
        """(content blocks of the user turn, the records of the images sent): text parts as text blocks,
        images fitted to the provider's limits through ``image_block(SentImage)``."""
        sent = iter(self.sent_images(req))
        content, records = [], []
        for kind, value in self._parts(req):
            if kind == "text":
                content.append(self._text_block(value))
            else:
                im = next(sent)
                content.append(image_block(im))
                records.append(im.record())
        return content, records

    # --- subclass hooks
    def _make_client(self, api_key: str, base_url: Optional[str]):  # pragma: no cover - abstract
        raise NotImplementedError

    def _call(self, req) -> RawOutput:  # pragma: no cover - abstract
        raise NotImplementedError

    def _status_error_types(self):  # (APIStatusError, APIConnectionError, APITimeoutError)
        raise NotImplementedError

    def predict(self, item: Item) -> RawOutput:
        if self.offline:
            raise SystemConfigError(f"system {self.name}: built offline (to plan a run): it sends nothing")
        shared = hasattr(item.request, "spec")  # built from shared parts: keyed from digests made once (cheap)
        key = self.prepare(item).key if shared else None
        req = self._request(item)
        key = key or self._hash(req)  # seeds the backoff jitter
        pv = (getattr(req, "meta", None) or {}).get("prompt_version")
        out = self._predict(req, item, key)
        out.prompt_version = None if pv is None else str(pv)
        return out

    def _predict(self, req, item: Item, key: str) -> RawOutput:
        status_err, conn_err, timeout_err = self._status_error_types()
        attempt, last_error = 0, None
        t0 = time.monotonic()
        while attempt < self.retry.max_attempts:
            if self.stopping.is_set():  # Ctrl-C: no new request, no retry
                return RawOutput(status="interrupted", error=last_error or "interrupted before it was sent",
                                 attempts=attempt, latency=time.monotonic() - t0)
            ok, full = self.limiter.acquire(self.stopping, self.retry.max_retry_after)  # rpm / rpd; Ctrl-C ends it
            if full:
                return self._exhaust(full, attempt, last_error, t0)
            if not ok:
                continue
            attempt += 1
            t0 = time.monotonic()
            retry_after = None
            try:
                try:
                    out = self._call(req)
                except Exception as e:  # an answer over the size limit is an answer: kept cut, not retried
                    out = self._oversize(e)
                out.attempts = attempt
                out.latency = time.monotonic() - t0
                out.error = self.scrub(out.error) if out.error else None
                if out.text:  # a model echoing the key (or URL) must not carry it into the cache either
                    out.text = scrub_secrets(out.text, self._secrets, patterns=())
                out.status = answer_status(out.status, out.text)
                self._deadline_met()
                return out
            except status_err as e:
                self._deadline_met()  # the server answered in time (with an error)
                from inkground_lib.core.http_client import redirect_note  # httpx2: loaded with the SDK

                code = getattr(e, "status_code", None)
                last_error = f"{type(e).__name__}: HTTP {code}: {self.scrub(_message(e))}"
                headers = getattr(getattr(e, "response", None), "headers", None)
                retryable = should_retry(code, headers)
                note = redirect_note(e)
                if note:  # never followed (the request carries the key and the photos), never retried
                    last_error, retryable = f"{type(e).__name__}: {self.scrub(note)}", False
                retry_after = retry_after_seconds(headers)
                spent = self._quota(e, code, retry_after)
                if spent:
                    return self._exhaust(spent, attempt, last_error, t0)
            except timeout_err as e:
                last_error = (f"{type(e).__name__}: no complete answer within {self.timeout:g} s (the registry's "
                              f"timeout: a deadline for connecting, sending and the whole answer)")
                retryable = True
                if self._deadline_missed():
                    k = self.max_deadline_failures
                    return self._exhaust(
                        f"{k} request{'s' if k != 1 else ''} in a row got no complete answer within the {self.timeout:g} "
                        f"s deadline (registry field timeout): the server answers too slowly or not at all (the "
                        f"stop comes after max_deadline_failures = {k}; set it in the entry or with "
                        f"--max-deadline-failures)", attempt, last_error, t0, by="deadlines")
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
            delay = self.retry.delay(attempt, key, retry_after)
            if self.retry.sleep is time.sleep:
                self.stopping.wait(delay)  # Ctrl-C ends the wait at once
            else:
                self.retry.sleep(delay)
        return RawOutput(text=None, status="error", error=last_error, attempts=attempt,
                         latency=time.monotonic() - t0)

    def _quota(self, e, code, retry_after) -> Optional[str]:
        """What is exhausted when an HTTP error means a spent quota, not a short rate limit: one of the
        provider's quota errors (providers.yaml ``quota_errors``) in the answer, or a 429 whose retry-after is
        longer than the retry budget (``RetryPolicy.max_retry_after``). None otherwise."""
        body = getattr(e, "body", None)
        try:
            text = f"{_message(e)} {json.dumps(body, default=str)}"
        except (TypeError, ValueError):
            text = _message(e)
        marker = quota_marker(self.provider, text)
        if marker:
            return f"{self.provider.name} quota ({marker}): HTTP {code}: {self.scrub(_message(e))[:200]}"
        if code == 429 and retry_after is not None and retry_after > self.retry.max_retry_after:
            return (f"rate limit: HTTP 429 asks to wait {retry_after:,.0f} s, longer than the retry budget of "
                    f"{self.retry.max_retry_after:g} s (a daily or monthly quota)")
        return None

    def _oversize(self, e: Exception) -> RawOutput:
        """The output of an answer over the size limit (``max_answer_bytes``): status "too_large", its first
        bytes kept (scrubbed) as the raw text. A base URL refused when it was first resolved (at this first
        connection) stops the run (SystemConfigError: every request would go there; none was sent); any other
        exception is raised again."""
        from inkground_lib.core.http_client import address_refused_in, oversize_in  # httpx2: loaded with the SDK

        refused = address_refused_in(e)
        if refused is not None:
            raise SystemConfigError(f"system {self.name}: {self.scrub(str(refused))}") from None
        big = oversize_in(e)
        if big is None:
            raise e
        head = self.scrub(big.head.decode("utf-8", "replace"))
        return RawOutput(text=head, status="too_large", images_sent=[],
                         error=f"the answer is over the size limit of {big.limit:,} bytes (max_answer_bytes); not "
                               f"read past it: raw_text keeps its first {len(big.head):,} bytes (the response body)")

    def _deadline_missed(self) -> bool:
        """Count an attempt that got no complete answer within the deadline; True at the K-th in a row
        (``max_deadline_failures``), when the run must stop."""
        with self._deadline_lock:
            self._deadline_misses += 1
            return self._deadline_misses >= self.max_deadline_failures

    def _deadline_met(self) -> None:
        """The server answered within the deadline (an answer or an HTTP error): the count starts again."""
        with self._deadline_lock:
            self._deadline_misses = 0

    def _exhaust(self, what: str, attempt: int, last_error, t0: float, by: str = "quota") -> RawOutput:
        """Sending must stop (a quota is spent, or ``by`` "deadlines": K deadlines missed in a row): no more
        requests from this system (every thread stops; the run ends cleanly)."""
        if self.exhausted is None:
            self.exhausted, self.exhausted_by = what, by
        self.stopping.set()
        return RawOutput(status="interrupted", error=f"not answered: {what}", attempts=attempt,
                         latency=time.monotonic() - t0)

    def seed_pace(self, starts) -> None:
        """Count requests an earlier run started (wall-clock seconds) into the daily pace (``rpd``)."""
        self.limiter.seed(starts)


def answer_status(status: str, text) -> str:
    """The status of an answer the server returned with ``status`` (from its finish / stop reason): an answer
    with no content is "empty" (even when cut by the token limit: nothing is left to salvage), a
    plain-words refusal (:func:`inkground_lib.evaluation.parse.answer_kind`) of a finished answer is
    "refusal"; anything else keeps ``status``.

    >>> answer_status("ok", None), answer_status("truncated", " "), answer_status("ok", "I cannot do that.")
    ('empty', 'empty', 'refusal')
    >>> answer_status("ok", "<strokes></strokes>"), answer_status("refusal", "")
    ('ok', 'refusal')
    """
    from inkground_lib.evaluation.parse import answer_kind

    if status not in ("ok", "truncated"):
        return status
    kind = answer_kind(text)
    if kind == "empty" or (kind == "refusal" and status == "ok"):
        return kind
    return status


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
    auth_extra: dict = {}

    def __init__(self, name, cfg, retry=None, client=None, offline: bool = False):
        self.max_tokens_param = cfg.get("max_tokens_param") or "max_tokens"
        if self.max_tokens_param not in ("max_tokens", "max_completion_tokens"):
            raise SystemConfigError(f"system {name}: field max_tokens_param: must be max_tokens or "
                                    f"max_completion_tokens, got {self.max_tokens_param!r}")
        super().__init__(name, cfg, retry, client, offline)

    def _make_client(self, api_key, base_url):
        if not base_url:
            raise SystemConfigError(f"system {self.name}: no base URL (set base_url_env, e.g. VLLM_BASE_URL)")
        # no key (key_optional): every request omits the Authorization header (auth_extra), never the SDK's
        # fallback OPENAI_API_KEY; retries are this adapter's own (RetryPolicy), not the SDK's
        client, headers = openai_client(base_url, api_key, timeout=self.timeout, max_retries=0,
                                        max_answer_bytes=self.max_answer_bytes,
                                        base_url_env=self.base_url_env or "base_url_env", public=self.public_url)
        self.auth_extra = {"extra_headers": headers} if headers else {}
        return client

    def _status_error_types(self):
        import openai

        return openai.APIStatusError, openai.APIConnectionError, openai.APITimeoutError

    def messages(self, req) -> list[dict]:
        return self._messages(req)[0]

    def _messages(self, req) -> tuple[list[dict], list]:
        content, records = self._content(req, lambda im: {
            "type": "image_url", "image_url": {"url": f"data:{im.media_type};base64," + im.b64()}})
        system, content = self._turns(req, content)
        msgs = [{"role": "system", "content": system}] if system else []
        msgs.append({"role": "user", "content": content})
        return msgs, records

    def _call(self, req) -> RawOutput:
        msgs, records = self._messages(req)
        kwargs = {"model": self.model, "messages": msgs, self.max_tokens_param: self.max_tokens}
        body = dict(self.extra_body)
        for k, v in self.sampling_sent.items():  # only what the provider accepts (providers.yaml)
            if k == "top_k":
                body[k] = v  # not an OpenAI parameter: vLLM takes it in the body
            else:
                kwargs[k] = v
        if body:
            kwargs["extra_body"] = body
        resp = self._client.chat.completions.create(**kwargs, **self.auth_extra)
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
                         usage=_usage(getattr(resp, "usage", None)), served_model=getattr(resp, "model", None),
                         images_sent=records)


class AnthropicSystem(ApiSystem):
    """Claude through the native Messages API (``anthropic`` SDK)."""

    adapter = "anthropic"
    key_env_default = "ANTHROPIC_API_KEY"

    def _make_client(self, api_key, base_url):
        import anthropic

        from inkground_lib.core.http_client import guarded_http_client  # httpx2: loaded with the SDK

        # the API version: the pinned SDK's unless the entry names another one the provider table lists
        headers = {"anthropic-version": self.api_version} if self.api_version else None
        base_url = base_url or "https://api.anthropic.com"
        # a total deadline per request, an answer size limit, no redirects (core.http_client)
        return anthropic.Anthropic(api_key=api_key, base_url=base_url, max_retries=0, timeout=self.timeout,
                                   default_headers=headers,
                                   http_client=guarded_http_client(base_url, self.timeout, self.max_answer_bytes,
                                                                   public=self.public_url))

    def _status_error_types(self):
        import anthropic

        return anthropic.APIStatusError, anthropic.APIConnectionError, anthropic.APITimeoutError

    def messages(self, req) -> list[dict]:
        return self._messages(req)[0]

    def _messages(self, req) -> tuple[list[dict], list, Optional[str]]:
        content, records = self._content(req, lambda im: {
            "type": "image", "source": {"type": "base64", "media_type": im.media_type, "data": im.b64()}})
        system, content = self._turns(req, content)
        return [{"role": "user", "content": content}], records, system

    def _call(self, req) -> RawOutput:
        msgs, records, system = self._messages(req)
        kwargs = {"model": self.model, "max_tokens": self.max_tokens, "messages": msgs}
        if system:
            kwargs["system"] = system
        body = dict(self.extra_body)
        # sampling only where the provider table allows it (not typed SDK arguments any more: sent in the body)
        body.update(self.sampling_sent)
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
                         served_model=getattr(resp, "model", None), images_sent=records)
