"""The HTTP client under every API request (the API systems, ``inkground check``, the DeepSeek-OCR engine):
a total deadline per request, a size limit on answers, no redirects, and base URLs without credentials.

* **Deadline.** The SDKs' timeouts (httpx) bound each read, not the request: a server that trickles its
  answer (a byte a second, endless chunked white space) keeps a request alive for ever. Here the request's
  timeout (the registry's ``timeout``, as the SDK passes it) is also a deadline for the whole request:
  connecting, sending and reading the whole answer. Each socket operation gets the time left, and one past
  the deadline raises the transport's timeout, which the SDKs turn into their ``APITimeoutError``.
* **Answer size.** A response body (after decompression) over ``max_bytes`` is not read further: the read
  raises :class:`AnswerTooLarge` carrying the first :data:`OVERSIZE_KEPT_BYTES` bytes, and the adapter stores
  them with the status "too_large". The request asks for an uncompressed answer (``Accept-Encoding:
  identity``); a gzip or deflate answer sent anyway is decompressed here, under the same limit (a small
  compressed answer cannot unpack into gigabytes), any other encoding is an error.
* **Redirects.** Never followed (the SDKs follow them by default, re-sending the key and the page photos to
  wherever the server points): a 3xx answer reaches the adapter as an HTTP error, and
  :func:`redirect_note` names it and where it pointed.
* **Credentials in URLs.** :func:`~inkground_lib.core.secrets.check_base_url` refuses a base URL with user info
  (``user:KEY@host``: httpx would send it as Basic auth in place of the key).

Proxies: the environment's (``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``NO_PROXY``, read by the standard library's
``urllib.request.getproxies``) for the base URL, as the SDKs' own clients take them.

Sources (read 2026-12-01 in the pinned packages): openai 3.57 and anthropic 2.14 build their clients on
``httpx2`` (``_base_client.py``: ``_DefaultHttpxClient`` sets ``follow_redirects=True``; a transport's
``httpx2.TimeoutException`` becomes ``APITimeoutError``; any other transport error ``APIConnectionError``,
with the original as ``__cause__``); httpcore2 (``_sync/connection.py``) connects through the pool's
``network_backend`` and passes each read and write its timeout (``NetworkStream.read(max_bytes, timeout)``).
"""

from __future__ import annotations

import threading
import time
import urllib.request
import zlib
from urllib.parse import urlsplit

import httpcore2
import httpx2

from inkground_lib.core.defaults import MAX_ANSWER_BYTES

OVERSIZE_KEPT_BYTES = 65536
"""How much of an answer over the size limit is kept (its first bytes), for the record."""


class AnswerTooLarge(Exception):
    """A response body over the size limit; ``head``: its first :data:`OVERSIZE_KEPT_BYTES` bytes (decoded),
    ``limit``: the limit in bytes. Not an httpx error, so the SDKs do not retry it."""

    def __init__(self, head: bytes, limit: int):
        super().__init__(f"answer over the size limit of {limit:,} bytes; not read past it")
        self.head, self.limit = head, limit


def redirect_note(e) -> str | None:
    """For an SDK's HTTP status error that is a redirect (3xx): a sentence naming the status and where it
    pointed (the ``location`` header, scrub it before showing); None for any other error."""
    code = getattr(e, "status_code", None)
    if not (isinstance(code, int) and 300 <= code < 400):
        return None
    headers = getattr(getattr(e, "response", None), "headers", None)
    try:
        where = headers.get("location") if headers is not None else None
    except Exception:  # noqa: BLE001 - a broken header object: no location to name
        where = None
    return (f"the server answered HTTP {code}, a redirect to {where or '(no location given)'}; redirects are not "
            f"followed for API requests (the request carries the key and the page photos): point the base URL "
            f"at the final address")


def oversize_in(e: BaseException) -> AnswerTooLarge | None:
    """The :class:`AnswerTooLarge` behind ``e`` (itself, or its ``__cause__`` / ``__context__`` chain, as the
    SDKs wrap it), or None."""
    seen = 0
    while e is not None and seen < 10:
        if isinstance(e, AnswerTooLarge):
            return e
        e = e.__cause__ or e.__context__
        seen += 1
    return None


# ------------------------------------------------------------------------------------------- the deadline

_REQUEST = threading.local()  # .deadline (time.monotonic()) of the request this thread is sending / reading


def _time_left(timeout, error, what: str):
    """The timeout of one socket operation: ``timeout`` capped by the time left before this thread's request
    deadline; ``error`` (an httpcore2 timeout) once the deadline has passed."""
    deadline = getattr(_REQUEST, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise error(f"the request's total deadline passed while {what} (the server sends its answer too slowly)")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore2.NetworkStream):
    """A connection whose every read and write ends by the request's deadline."""

    def __init__(self, inner: httpcore2.NetworkStream):
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _time_left(timeout, httpcore2.ReadTimeout, "reading"))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _time_left(timeout, httpcore2.WriteTimeout, "sending"))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None):
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname,
                                                     _time_left(timeout, httpcore2.ConnectTimeout, "connecting")))

    def get_extra_info(self, info: str):
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore2.NetworkBackend):
    """The pool's network backend, its connections bounded by the request's deadline."""

    def __init__(self, inner: httpcore2.NetworkBackend):
        self._inner = inner

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        t = _time_left(timeout, httpcore2.ConnectTimeout, "connecting")
        return _DeadlineStream(self._inner.connect_tcp(host, port, t, local_address, socket_options))

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        t = _time_left(timeout, httpcore2.ConnectTimeout, "connecting")
        return _DeadlineStream(self._inner.connect_unix_socket(path, t, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _request_seconds(request) -> float | None:
    """The request's timeout (httpx puts it in ``extensions["timeout"]``): the longest of its parts."""
    parts = (request.extensions or {}).get("timeout") or {}
    values = [float(v) for v in parts.values() if v is not None]
    return max(values) if values else None


class _GuardedBody(httpx2.SyncByteStream):
    """A response body read by the request's deadline, decompressed here (gzip, deflate) and cut at the size
    limit (:class:`AnswerTooLarge`)."""

    def __init__(self, inner, deadline, limit: int, encoding: str):
        self._inner, self._deadline, self._limit = inner, deadline, limit
        self._decoder = None
        if encoding in ("gzip", "x-gzip"):
            self._decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._decoder = zlib.decompressobj()

    def __iter__(self):
        total, head = 0, bytearray()
        chunks = iter(self._inner)
        while True:
            prev, _REQUEST.deadline = getattr(_REQUEST, "deadline", None), self._deadline
            try:
                chunk = next(chunks, None)
            finally:
                _REQUEST.deadline = prev
            if chunk is None:
                if self._decoder is None:
                    break
                chunk, self._decoder = self._decoder.flush(), None  # what the decoder still holds
            elif self._decoder is not None:
                try:  # never more than the limit (and a byte) unpacked from one chunk
                    chunk = self._decoder.decompress(chunk, self._limit + 1 - total)
                except zlib.error as e:
                    raise httpx2.DecodingError(f"the answer's compressed body cannot be decoded ({e})") from None
                if self._decoder.unconsumed_tail:
                    total = self._limit + 1  # more than the limit is waiting in this chunk
            total += len(chunk)
            if len(head) < OVERSIZE_KEPT_BYTES:
                head += chunk[:OVERSIZE_KEPT_BYTES - len(head)]
            if total > self._limit:
                raise AnswerTooLarge(bytes(head), self._limit)
            yield chunk

    def close(self) -> None:
        self._inner.close()


class GuardedTransport(httpx2.HTTPTransport):
    """httpx's transport with a total deadline per request (its timeout), a size limit on the answer
    (``max_bytes``) and no compressed answers asked for (see the module doc)."""

    def __init__(self, max_bytes: int = MAX_ANSWER_BYTES, proxy: str | None = None):
        super().__init__(proxy=proxy)
        pool = self._pool  # httpx2 keeps its httpcore2 pool here (pinned httpx2 2.16.2, _transports/default.py)
        if not isinstance(getattr(pool, "_network_backend", None), httpcore2.NetworkBackend):
            raise RuntimeError("httpx2's connection pool has no network backend to bound: this httpx2 release is "
                               "not the pinned one (requirements.txt)")
        pool._network_backend = _DeadlineBackend(pool._network_backend)
        self.max_bytes = int(max_bytes)

    def handle_request(self, request):
        seconds = _request_seconds(request)
        deadline = None if seconds is None else time.monotonic() + seconds
        request.headers["Accept-Encoding"] = "identity"
        prev, _REQUEST.deadline = getattr(_REQUEST, "deadline", None), deadline
        try:
            resp = super().handle_request(request)
        finally:
            _REQUEST.deadline = prev
        encoding = resp.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("identity", "", "gzip", "x-gzip", "deflate"):
            resp.close()
            raise httpx2.DecodingError(f"the server answered with Content-Encoding {encoding!r}, which inkground "
                                       f"does not read (it asked for an uncompressed answer)")
        headers = [(k, v) for k, v in resp.headers.multi_items() if k.lower() != "content-encoding"]
        if encoding not in ("identity", ""):
            headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
        return httpx2.Response(resp.status_code, headers=headers,
                               stream=_GuardedBody(resp.stream, deadline, self.max_bytes, encoding),
                               extensions=resp.extensions)


def environment_proxy(base_url: str) -> str | None:
    """The proxy the environment names for ``base_url`` (``HTTPS_PROXY`` / ``HTTP_PROXY``, unless ``NO_PROXY``
    covers its host), or None."""
    parts = urlsplit(base_url)
    if not parts.hostname or urllib.request.proxy_bypass(parts.hostname):
        return None
    return urllib.request.getproxies().get(parts.scheme)


def guarded_http_client(base_url: str, timeout: float, max_bytes: int = MAX_ANSWER_BYTES) -> httpx2.Client:
    """The ``http_client`` to give an openai / anthropic SDK client of ``base_url``: :class:`GuardedTransport`,
    redirects not followed, ``timeout`` seconds per request (the SDK passes its own per request too)."""
    return httpx2.Client(transport=GuardedTransport(max_bytes, proxy=environment_proxy(base_url)),
                         follow_redirects=False, timeout=timeout, trust_env=False)
