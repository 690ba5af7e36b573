"""Keeping API keys and private endpoints out of every output: the one secret scrubber every client uses (the
DeepSeek-OCR engine, the API systems, ``inkground check``), and the checks a key and a base URL pass before a
client is built (keys come only from the variables a registry entry names: never from a URL's user info)."""

from __future__ import annotations

import re
from typing import Sequence
from urllib.parse import urlsplit

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
"""What an environment variable's name may look like (a config names variables, never holds values)."""

REDACTED = "<redacted>"

CREDENTIALS = (
    # a URL's user info (http://user:KEY@host): the scheme and host stay, the credential goes
    (re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^\s/@'\"<>]*@"), r"\1" + REDACTED + "@"),
    # an Authorization header's value, whatever its scheme (Bearer, Basic, a bare token)
    (re.compile(r"(?i)\b(authorization['\"]?\s*[:=]\s*['\"]?)(?:(bearer|basic|token)\s+)?[^\s'\",;}]+"),
     lambda m: m.group(1) + (m.group(2) + " " if m.group(2) else "") + REDACTED),
    # a key header or parameter: x-api-key (Anthropic), x-goog-api-key / key= (Google), api-key (Azure)
    (re.compile(r"(?i)\b((?:x-api-key|x-goog-api-key|api[-_]key|apikey)['\"]?\s*[:=]\s*['\"]?)[^\s'\",;&}]+"),
     r"\1" + REDACTED),
    (re.compile(r"(?i)([?&]key=)[^\s&'\"#]+"), r"\1" + REDACTED),
    # the two schemes where they stand alone (an echoed header value, "Basic dXNlcjpL...")
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9_\-\.\*~+/=:]{6,}"), lambda m: m.group(1) + " " + REDACTED),
    # key shapes: OpenAI-style (sk-...), Google (AIza...)
    (re.compile(r"\bsk-[A-Za-z0-9_\-\*\.]{6,}|\bAIza[A-Za-z0-9_\-]{10,}"), REDACTED),
)
"""Patterns of :func:`scrub_secrets` (``(regex, replacement)``): every credential form a server or an error
message can carry - a URL's user info, an Authorization header's value (Bearer, Basic or bare), an ``x-api-key``
/ ``x-goog-api-key`` / ``api-key`` header or a ``key=`` parameter, a Bearer or Basic credential on its own, and
OpenAI-style (``sk-``) and Google (``AIza``) keys - becomes ``<redacted>``. Hosts and URLs without a credential
are left as they are."""

KEYLIKE = CREDENTIALS
"""The default patterns of :func:`scrub_secrets` (the name earlier code used)."""


def scrub_secrets(text, secrets: Sequence[tuple[str, str]], patterns=CREDENTIALS) -> str:
    """``text`` with every secret value replaced by ``<NAME>`` (``secrets`` = [(NAME, value), ...]; longest
    values first; values under 4 characters are left alone) and then each ``(regex, replacement)`` of
    ``patterns`` applied (:data:`CREDENTIALS` by default, or ``()`` for none). None stays None.

    >>> scrub_secrets("key abcd1234 at https://h.example/v1/", [("MY_KEY", "abcd1234")], patterns=())
    'key <MY_KEY> at https://h.example/v1/'
    >>> scrub_secrets("Authorization: Bearer abc.def-123", ())
    'Authorization: Bearer <redacted>'
    >>> scrub_secrets("credential received: Basic dXNlcjpLRVk=", ())
    'credential received: Basic <redacted>'
    >>> scrub_secrets("{'x-api-key': 'k-123456'} at http://user:KEY@127.0.0.1:8000/v1", ())
    "{'x-api-key': '<redacted>'} at http://<redacted>@127.0.0.1:8000/v1"
    >>> scrub_secrets("cannot reach 127.0.0.1 (connection refused)", ())
    'cannot reach 127.0.0.1 (connection refused)'
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


def url_secrets(env_name: str, url: str) -> list[tuple[str, str]]:
    """The forms of a private base URL (read from the variable ``env_name``) that :func:`scrub_secrets` replaces
    by ``<env_name>``: the URL, the URL without its trailing slash and its ``host:port`` when it names a port. A
    host alone is never replaced (it is too plain: "127.0.0.1" would be rewritten wherever it stands).

    >>> url_secrets("VLLM_BASE_URL", "http://gpu7.lab:8000/v1/")  # doctest: +NORMALIZE_WHITESPACE
    [('VLLM_BASE_URL', 'http://gpu7.lab:8000/v1/'), ('VLLM_BASE_URL', 'http://gpu7.lab:8000/v1'),
     ('VLLM_BASE_URL', 'gpu7.lab:8000')]
    >>> url_secrets("X_URL", "http://127.0.0.1/v1")
    [('X_URL', 'http://127.0.0.1/v1'), ('X_URL', 'http://127.0.0.1/v1')]
    """
    parts = urlsplit(url)
    out = [(env_name, url), (env_name, url.rstrip("/"))]
    if parts.netloc and ":" in parts.netloc.rsplit("@", 1)[-1].rsplit("]", 1)[-1]:
        out.append((env_name, parts.netloc))
    return out


class CredentialError(ValueError):
    """A key or base URL that may not be used; the message names the variable, never the value."""


def check_key(value: str, env_name: str) -> str:
    """``value`` (a key read from the variable ``env_name``) if every character is printable ASCII without
    white space - what an HTTP header can carry unchanged; :class:`CredentialError` naming the variable, the
    kind of character and its position otherwise (never the key).

    >>> check_key("sk-abc123", "MY_KEY")
    'sk-abc123'
    >>> check_key("sk-abc\\n", "MY_KEY")
    Traceback (most recent call last):
    ...
    inkground_lib.core.secrets.CredentialError: environment variable MY_KEY: the key has a line break (CR or LF) at character 7 of 7; a key is printable ASCII without spaces or line breaks: set it again (e.g. without the file's trailing newline)
    """
    for i, ch in enumerate(str(value)):
        if "\x21" <= ch <= "\x7e":
            continue
        kind = ("a line break (CR or LF)" if ch in "\r\n" else "white space" if ch.isspace()
                else "a control character" if ord(ch) < 32 or ord(ch) == 127 else "a non-ASCII character")
        raise CredentialError(f"environment variable {env_name}: the key has {kind} at character {i + 1} of "
                              f"{len(value)}; a key is printable ASCII without spaces or line breaks: set it again "
                              f"(e.g. without the file's trailing newline)")
    return value


def check_base_url(url: str, env_name: str) -> str:
    """``url`` (read from the variable ``env_name``, or a registry default) if it carries no user info and is
    printable ASCII; :class:`CredentialError` naming ``env_name`` otherwise, without repeating the URL (its user
    info may be a key).

    >>> check_base_url("http://127.0.0.1:8000/v1", "VLLM_BASE_URL")
    'http://127.0.0.1:8000/v1'
    >>> check_base_url("http://user:KEY@127.0.0.1/v1", "VLLM_BASE_URL")
    Traceback (most recent call last):
    ...
    inkground_lib.core.secrets.CredentialError: environment variable VLLM_BASE_URL: the base URL carries user info (user:password@host), which would be sent as a credential in place of the key; give the URL without it, and the key in the key's own environment variable
    """
    url = str(url)
    try:
        parts = urlsplit(url)
    except ValueError as e:
        raise CredentialError(f"environment variable {env_name}: not a URL ({e})") from None
    if "@" in parts.netloc:
        raise CredentialError(f"environment variable {env_name}: the base URL carries user info (user:password@host), "
                              f"which would be sent as a credential in place of the key; give the URL without it, "
                              f"and the key in the key's own environment variable")
    bad = next((i for i, ch in enumerate(url) if not "\x21" <= ch <= "\x7e"), None)
    if bad is not None:
        raise CredentialError(f"environment variable {env_name}: the base URL has a space, line break or non-ASCII "
                              f"character at character {bad + 1}; set it again")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CredentialError(f"environment variable {env_name}: not an http:// or https:// URL with a host")
    return url
