"""Keeping API keys and private endpoints out of every output: the one secret scrubber every client uses (the
DeepSeek-OCR engine, the API systems, ``inkground check``)."""

from __future__ import annotations

import re
from typing import Sequence
from urllib.parse import urlsplit

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
"""What an environment variable's name may look like (a config names variables, never holds values)."""

KEYLIKE = ((re.compile(r"(?:\bsk-[A-Za-z0-9_\-\*\.]{6,}|\bAIza[A-Za-z0-9_\-]{10,}"
                       r"|(?i:bearer)\s+[A-Za-z0-9_\-\.\*~+/=]{6,})"), "<redacted>"),)
"""Patterns of :func:`scrub_secrets` by default: anything shaped like an OpenAI-style (``sk-``) or Google
(``AIza``) key or a bearer token becomes ``<redacted>``."""

BEARER = ((re.compile(r"(?i:bearer)\s+\S+"), "Bearer <redacted>"),)
"""Patterns the DeepSeek-OCR engine scrubs with: whatever follows "Bearer" becomes ``Bearer <redacted>``."""


def scrub_secrets(text, secrets: Sequence[tuple[str, str]], patterns=KEYLIKE) -> str:
    """``text`` with every secret value replaced by ``<NAME>`` (``secrets`` = [(NAME, value), ...]; longest
    values first; values under 4 characters are left alone) and then each ``(regex, replacement)`` of
    ``patterns`` applied (:data:`KEYLIKE` by default, :data:`BEARER`, or ``()`` for none). None stays None.

    >>> scrub_secrets("key abcd1234 at https://h.example/v1/", [("MY_KEY", "abcd1234")], patterns=())
    'key <MY_KEY> at https://h.example/v1/'
    >>> scrub_secrets("Authorization: Bearer abc.def-123", ())
    'Authorization: <redacted>'
    >>> scrub_secrets("Authorization: Bearer abc", (), patterns=BEARER)
    'Authorization: Bearer <redacted>'
    """
    if text is None:
        return None
    text = str(text)
    for name, value in sorted(secrets, key=lambda s: -len(s[1])):
        if value and len(value) >= 4:
            text = text.replace(value, f"<{name}>")
    for pattern, replacement in patterns:
        text = pattern.sub(replacement, text)
    return text


def url_secrets(env_name: str, url: str, hostname: bool = True) -> list[tuple[str, str]]:
    """The forms of a private base URL (read from the variable ``env_name``) that :func:`scrub_secrets` replaces
    by ``<env_name>``: the URL, the URL without its trailing slash, its ``host:port`` and, with ``hostname``, its
    host alone (the DeepSeek-OCR engine has never scrubbed the bare host; it still does not).

    >>> url_secrets("VLLM_BASE_URL", "http://gpu7.lab:8000/v1/")  # doctest: +NORMALIZE_WHITESPACE
    [('VLLM_BASE_URL', 'http://gpu7.lab:8000/v1/'), ('VLLM_BASE_URL', 'http://gpu7.lab:8000/v1'),
     ('VLLM_BASE_URL', 'gpu7.lab:8000'), ('VLLM_BASE_URL', 'gpu7.lab')]
    """
    parts = urlsplit(url)
    out = [(env_name, url), (env_name, url.rstrip("/"))]
    if parts.netloc:
        out.append((env_name, parts.netloc))
    if hostname and parts.hostname:
        out.append((env_name, parts.hostname))
    return out
