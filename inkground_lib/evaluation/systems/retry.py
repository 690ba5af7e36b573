"""Retrying transport failures with backoff (never a model's answer)."""

from __future__ import annotations

import email.utils
import random
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable, Optional


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
"""HTTP statuses retried (and every 5xx), as the openai and anthropic SDKs do (``_should_retry`` in their
``_base_client.py``, read 2026-11-30); a server's ``x-should-retry`` header overrides: see :func:`should_retry`."""


def should_retry(code: int | None, headers) -> bool:
    """Whether an HTTP error is retried: the server's ``x-should-retry: true|false`` header decides when present
    (the SDKs honour it first: openai-python and anthropic-sdk-python ``_base_client.py``, ``_should_retry``:
    "If the server explicitly says whether or not to retry, obey", read 2026-11-30); otherwise 408, 409, 429
    and 5xx are retried.

    >>> should_retry(400, {"x-should-retry": "true"}), should_retry(503, {"x-should-retry": "false"})
    (True, False)
    >>> should_retry(429, {}), should_retry(404, None)
    (True, False)
    """
    try:
        hint = headers.get("x-should-retry") if headers is not None else None
    except Exception:
        hint = None
    if hint == "true":
        return True
    if hint == "false":
        return False
    return code in RETRY_STATUS or (code is not None and code >= 500)


DAY_SECONDS = 86400.0


class RateLimiter:
    """At most ``rpm`` requests started per minute: request k may start no earlier than k * 60 / rpm seconds
    after the first (shared by every thread of one system); and, with ``rpd``, at most ``rpd`` requests started
    in any 24 hours (wall clock, so the starts of an earlier run can be counted in with :meth:`seed`).
    ``wait(stop)`` blocks until the next slot, or returns False at once if ``stop`` (a threading.Event) is set
    meanwhile; :meth:`acquire` also says when the daily limit is full for longer than a caller will wait."""

    def __init__(self, rpm: int | None, rpd: int | None = None):
        self.interval = 60.0 / rpm if rpm else 0.0
        self.rpd = int(rpd) if rpd else None
        self._next = 0.0
        self._day: deque = deque()  # wall-clock start times of the last 24 hours (with rpd)
        self._lock = threading.Lock()

    def seed(self, starts) -> None:
        """Count in requests already started (wall-clock seconds, e.g. from a cache's records) for ``rpd``."""
        if not self.rpd:
            return
        cutoff = time.time() - DAY_SECONDS
        with self._lock:
            self._day = deque(sorted([float(t) for t in starts if float(t) > cutoff] + list(self._day)))

    def wait(self, stop: threading.Event | None = None) -> bool:
        return self.acquire(stop)[0]

    def acquire(self, stop: threading.Event | None = None, max_wait: float | None = None
                ) -> tuple[bool, Optional[str]]:
        """Take the next slot: (True, None) when taken (after waiting for it), (False, None) when ``stop`` was set
        while waiting, (False, reason) at once when the daily limit (``rpd``) would make the wait longer than
        ``max_wait`` seconds (the reason says until when)."""
        if not self.interval and not self.rpd:
            return True, None
        with self._lock:
            now, wall = time.monotonic(), time.time()
            delay = max(self._next - now, 0.0)
            if self.rpd:
                while self._day and self._day[0] <= wall - DAY_SECONDS:
                    self._day.popleft()
                if len(self._day) >= self.rpd:
                    free = self._day[-self.rpd] + DAY_SECONDS - wall  # when the window has room again
                    if max_wait is not None and free > max_wait:
                        at = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(wall + free))
                        return False, (f"the daily pace (registry field rpd: {self.rpd} requests in 24 hours) is "
                                       f"reached; the next request may start at {at}")
                    delay = max(delay, free)
                self._day.append(wall + delay)
            self._next = now + delay + self.interval
        if delay > 0:
            if stop is not None:
                return (not stop.wait(delay)), None
            time.sleep(delay)
        return True, None


def retry_after_seconds(headers) -> Optional[float]:
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
