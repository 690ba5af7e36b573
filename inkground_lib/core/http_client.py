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
* **Where the key goes.** The base URL's host name is resolved when the client is made (:func:`resolve`, the
  system resolver; again at the first connection if it could not be resolved then) and every address it resolves
  to is checked (:func:`~inkground_lib.core.secrets.address_problem`): never a cloud metadata service or a
  link-local address, and for a provider's own URL (a registry's ``default_base_url``) only public addresses (no
  private, loopback, shared or reserved one). One bad address refuses the host (:class:`AddressRefused`, before
  any request, so the key is never sent). Every connection to the host then goes to a checked address (pinned:
  a DNS answer that changes after the check, "DNS rebinding", is never used); TLS still verifies the host name.
  Through a proxy (below) the proxy connects, so the addresses are checked but cannot be pinned.

Proxies: the environment's (``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``NO_PROXY``, read by the standard library's
``urllib.request.getproxies``) for the base URL, as the SDKs' own clients take them.

Sources (read 2026-12-01 in the pinned packages): openai 3.57 and anthropic 2.14 build their clients on
``httpx2`` (``_base_client.py``: ``_DefaultHttpxClient`` sets ``follow_redirects=True``; a transport's
``httpx2.TimeoutException`` becomes ``APITimeoutError``; any other transport error ``APIConnectionError``,
with the original as ``__cause__``); httpcore2 (``_sync/connection.py``) connects through the pool's
``network_backend`` and passes each read and write its timeout (``NetworkStream.read(max_bytes, timeout)``).
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
import urllib.request
import zlib
from urllib.parse import urlsplit

import httpcore2
import httpx2

from inkground_lib.core.defaults import MAX_ANSWER_BYTES
from inkground_lib.core.secrets import CredentialError, address_problem, host_address

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


def cause_of(e: BaseException, kind: type):
    """The exception of type ``kind`` behind ``e`` (itself, or its ``__cause__`` / ``__context__`` chain, as the
    SDKs wrap it; at most 10 deep), or None."""
    seen = 0
    while e is not None and seen < 10:
        if isinstance(e, kind):
            return e
        e = e.__cause__ or e.__context__
        seen += 1
    return None


def oversize_in(e: BaseException) -> AnswerTooLarge | None:
    """The :class:`AnswerTooLarge` behind ``e``, or None."""
    return cause_of(e, AnswerTooLarge)


# ------------------------------------------------------------------------------------- where the key goes

class AddressRefused(CredentialError):
    """A base URL's host resolves to an address no key may be sent to; the message names the address and
    why (never the URL: it may be private). Not an httpx error: the SDKs wrap it in their connection error, and
    the API adapters stop the run on it (never retried)."""


def resolve(host: str, port: int) -> list[str]:
    """Every address the system resolver gives ``host`` (TCP), in its order, each once. The one place a base
    URL's host is resolved (tests replace it to resolve a name to any address without DNS)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def checked_addresses(host: str, port: int, public: bool) -> list[str]:
    """The addresses ``host`` resolves to (an IP literal: itself), each checked with
    :func:`~inkground_lib.core.secrets.address_problem` (``public``: a provider's URL, public addresses only);
    :class:`AddressRefused` when any of them is refused or there is none; the resolver's ``OSError`` (no such
    name, no network) passes."""
    literal = host_address(host)
    addrs = [str(literal)] if literal is not None else resolve(host, port)
    if not addrs:
        raise AddressRefused("the base URL's host resolves to no address")
    for a in addrs:
        bad = address_problem(ipaddress.ip_address(a.split("%", 1)[0]), public)
        if bad:
            what = "is" if literal is not None else f"resolves to {a}, which is"
            raise AddressRefused(f"the base URL's host {what} {bad}: refused before any request, the key is not "
                                 f"sent there")
    return addrs


def address_refused_in(e: BaseException) -> AddressRefused | None:
    """The :class:`AddressRefused` behind ``e``, or None."""
    return cause_of(e, AddressRefused)


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
    """The pool's network backend, its connections bounded by the request's deadline; a connection to the
    base URL's host goes to its checked addresses only (see :class:`GuardedTransport`)."""

    def __init__(self, inner: httpcore2.NetworkBackend, target: tuple | None = None, public: bool = False):
        self._inner = inner
        self.target, self.public = target, public  # (host, port) of the base URL, or None
        self.pinned: list[str] | None = None  # its checked addresses, once resolved
        self._lock = threading.Lock()

    def pin(self) -> list[str]:
        """The base URL host's checked addresses (resolved and checked once, then kept)."""
        with self._lock:
            if self.pinned is None:
                self.pinned = checked_addresses(self.target[0], self.target[1], self.public)
            return self.pinned

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        hosts = [host]
        if self.target is not None and (str(host).strip("[]").lower(), int(port)) == self.target:
            hosts = self.pin()  # the checked addresses, in the resolver's order: the first that answers
        for k, h in enumerate(hosts):
            t = _time_left(timeout, httpcore2.ConnectTimeout, "connecting")
            try:
                return _DeadlineStream(self._inner.connect_tcp(h, port, t, local_address, socket_options))
            except httpcore2.ConnectError:
                if k == len(hosts) - 1:
                    raise

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
    (``max_bytes``), no compressed answers asked for, and connections to the base URL's host (``target``,
    (host, port)) only to its checked addresses (``public``: public ones only; see the module doc)."""

    def __init__(self, max_bytes: int = MAX_ANSWER_BYTES, proxy: str | None = None, target: tuple | None = None,
                 public: bool = False):
        super().__init__(proxy=proxy)
        pool = self._pool  # httpx2 keeps its httpcore2 pool here (pinned httpx2 2.16.2, _transports/default.py)
        if not isinstance(getattr(pool, "_network_backend", None), httpcore2.NetworkBackend):
            raise RuntimeError("httpx2's connection pool has no network backend to bound: this httpx2 release is "
                               "not the pinned one (requirements.txt)")
        self.backend = _DeadlineBackend(pool._network_backend, target, public)
        pool._network_backend = self.backend
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


def guarded_http_client(base_url: str, timeout: float, max_bytes: int = MAX_ANSWER_BYTES, *,
                        public: bool = False) -> httpx2.Client:
    """The ``http_client`` to give an openai / anthropic SDK client of ``base_url``: :class:`GuardedTransport`,
    redirects not followed, ``timeout`` seconds per request (the SDK passes its own per request too). The base
    URL's host is resolved and its addresses checked now (``public``: a provider's URL, public addresses only):
    :class:`AddressRefused` before any request; a name that cannot be resolved now is resolved and checked at
    the first connection instead."""
    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    transport = GuardedTransport(max_bytes, proxy=environment_proxy(base_url),
                                 target=(str(parts.hostname).lower(), port), public=public)
    try:
        transport.backend.pin()  # AddressRefused: refused before any request
    except OSError:  # not resolvable now (no network here): resolved and checked when it connects
        pass
    return httpx2.Client(transport=transport, follow_redirects=False, timeout=timeout, trust_env=False)
