"""Keeping API keys and private endpoints out of every output: the one secret scrubber every client uses (the
DeepSeek-OCR engine, the API systems, ``inkground check``), and the checks a key and a base URL pass before a
client is built (keys come only from the variables a registry entry names: never from a URL's user info)."""

from __future__ import annotations

import ipaddress
import re
import socket
from typing import Optional, Sequence
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


# Cloud metadata services, which hand out an instance's credentials to whatever asks from inside it (checked
# 2026-12-02 through public code that blocks them: aikido-dev firewall-node's IMDS list - AWS 169.254.169.254 and
# fd00:ec2::254, Alibaba Cloud 100.100.100.200 - and defenseunicorns/uds-core cloudMetadata.ts - AWS, GCP, Azure,
# DigitalOcean all at 169.254.169.254; GCP's name metadata.google.internal; AWS's instance-data). Link-local
# ranges (169.254.0.0/16, fe80::/10) hold them and nothing a provider serves.
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200"))
METADATA_HOSTS = ("metadata.google.internal", "metadata.goog", "metadata", "instance-data",
                  "instance-data.ec2.internal")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def host_address(host: str) -> Optional[ipaddress._BaseAddress]:
    """The IP address a URL's host spells, in every spelling a resolver takes without asking DNS: dotted IPv4,
    IPv6 (a zone id dropped), and the legacy IPv4 forms ``inet_aton`` reads (a decimal ``2852039166``, hex
    ``0xa9fea9fe``, octal or per-part hex ``0251.0xfe.0251.0376``, short ``169.254.43518``); None for a name."""
    h = host.strip("[]").split("%", 1)[0].rstrip(".")
    try:
        return ipaddress.ip_address(h)
    except ValueError:
        pass
    if re.fullmatch(r"[0-9a-fA-FxX.]+", h) and re.search(r"[0-9]", h):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(h))
        except OSError:
            return None
    return None


def _embedded_v4(addr: ipaddress._BaseAddress) -> list:
    """The IPv4 addresses an IPv6 address carries (IPv4-mapped ::ffff:a.b.c.d, 6to4, Teredo, NAT64 64:ff9b::)."""
    out = []
    if isinstance(addr, ipaddress.IPv6Address):
        for v in (addr.ipv4_mapped, addr.sixtofour, addr.teredo[1] if addr.teredo else None):
            if v is not None:
                out.append(v)
        if addr in _NAT64:
            out.append(ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF))
    return out


def metadata_problem(host: Optional[str]) -> Optional[str]:
    """Why a base URL's host must never be sent a key (a cloud metadata service or a link-local address), in
    any spelling, or None. Pure parsing: nothing is resolved or connected to.

    >>> metadata_problem("0xa9fea9fe")
    'a link-local address (169.254.169.254, a cloud metadata service)'
    >>> metadata_problem("192.168.1.20") is None
    True
    """
    if not host:
        return None
    name = host.strip("[]").rstrip(".").lower()
    if name in METADATA_HOSTS:
        return f"a cloud metadata service's host name ({name})"
    addr = host_address(host)
    return None if addr is None else address_problem(addr, public=False)


def address_problem(addr: ipaddress._BaseAddress, public: bool) -> Optional[str]:
    """Why a key must never be sent to the address ``addr`` (an IPv4 carried in an IPv6 address checked too),
    or None: a cloud metadata service or a link-local address, always; with ``public`` (a provider's URL) also
    any address that is not public (private, loopback, shared, reserved).

    >>> address_problem(ipaddress.ip_address("10.0.0.7"), public=False) is None
    True
    >>> address_problem(ipaddress.ip_address("127.0.0.1"), public=True)
    'not a public address (127.0.0.1)'
    """
    for a in [addr] + _embedded_v4(addr):
        meta = ", a cloud metadata service" if a in METADATA_ADDRESSES else ""
        if a.is_link_local:
            return f"a link-local address ({a}{meta})"
        if meta:
            return f"a cloud metadata service's address ({a})"
    if public:
        for a in [addr] + _embedded_v4(addr):
            if not a.is_global:
                return f"not a public address ({a})"
    return None


def public_url_problem(url: str) -> Optional[str]:
    """Why ``url`` is not a public https:// URL (a registry's ``default_base_url``), or None: not https, no host,
    user info, a metadata or link-local host (:func:`metadata_problem`), or an address that is not public
    (private, loopback, shared, reserved, in any spelling; IPv4 carried in IPv6 included). A self-hosted server on
    a private network is named through an environment variable instead (``base_url_env``)."""
    try:
        parts = urlsplit(str(url))
        host = parts.hostname
    except ValueError as e:
        return f"not a URL ({e})"
    if parts.scheme != "https" or not host:
        return "not an https:// URL with a host"
    if "@" in parts.netloc:
        return "the URL carries user info"
    bad = metadata_problem(host)
    if bad:
        return f"its host is {bad}"
    addr = host_address(host)
    if addr is not None:
        bad = address_problem(addr, public=True)
        if bad:
            return f"its host is {bad}"
    elif "." not in host.rstrip(".") or host.rstrip(".").endswith((".internal", ".local", ".localhost")) \
            or host in ("localhost",):
        return f"its host {host!r} is not a public name"
    return None


def check_base_url(url: str, env_name: str) -> str:
    """``url`` (read from the variable ``env_name``, or a registry default) if it carries no user info, is
    printable ASCII and names no cloud metadata service or link-local address (:func:`metadata_problem`; private
    networks are allowed: a self-hosted server); :class:`CredentialError` naming ``env_name`` otherwise, without
    repeating the URL (its user info may be a key).

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
    bad = metadata_problem(parts.hostname)
    if bad:  # refused before any connection; a self-hosted server on a private network stays possible
        raise CredentialError(f"environment variable {env_name}: the base URL's host is {bad}: the key would be "
                              f"sent to it; give the provider's or your own server's address")
    return url
