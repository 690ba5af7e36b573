"""Retrying transport failures with backoff (never a model's answer)."""

from __future__ import annotations

import email.utils
import random
import time
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
