"""Keeping API keys and private endpoints out of every output: scrubbing text."""

from __future__ import annotations

import re
from typing import Sequence

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


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


