"""The one place an OpenAI-compatible client is built (the DeepSeek-OCR engine and the API systems): base URL,
key, timeout and retries, and the headers every request must send so that no one else's credential leaves
this machine.

Sources (checked 2026-11-30): the openai-python README (github.com/openai/openai-python, commit 001dcd3),
"Retries": "Certain errors are automatically retried 2 times by default, with a short exponential backoff.
Connection errors ..., 408 Request Timeout, 409 Conflict, 429 Rate Limit, and >=500 Internal errors are all
retried by default" (``max_retries``); "Timeouts": "On timeout, an ``APITimeoutError`` is thrown". The installed
SDK (openai 3.57, lib/_client_auth.py) refuses an empty api_key ("Missing credentials") and falls back to
OPENAI_API_KEY when none is given, so a client without a key gets a placeholder and every request omits the
Authorization header (``openai.Omit()``); openai/_client.py takes the ``OpenAI-Organization`` /
``OpenAI-Project`` headers from OPENAI_ORG_ID / OPENAI_PROJECT_ID unless a request omits them: every request
here omits them (keys and account ids come only from the variables a registry entry names). The HTTP client
under it (deadline, answer size limit, no redirects, no user info in the URL): :mod:`inkground_lib.core.http_client`.
"""

from __future__ import annotations

from inkground_lib.core.defaults import MAX_ANSWER_BYTES
from inkground_lib.core.secrets import check_base_url

PLACEHOLDER_KEY = "no-key"
"""The api_key a client without a key is given (the SDK refuses none); never sent: see :func:`openai_client`."""


def openai_client(base_url: str, api_key: str | None, *, timeout: float, max_retries: int,
                  max_answer_bytes: int = MAX_ANSWER_BYTES, base_url_env: str = "base_url_env",
                  public: bool = False):
    """(client, headers): an ``openai.OpenAI`` client of the OpenAI-compatible server at ``base_url`` and the
    ``extra_headers`` each of its requests must send.

    ``api_key`` (read from the environment by the caller, never from a parameter file): sent as the SDK's
    bearer token; None: no Authorization header at all (never the SDK's fallback OPENAI_API_KEY, someone else's
    key), which a vLLM server started without ``--api-key`` accepts. ``timeout``: seconds per request, a
    total deadline (connect, send, the whole answer); ``max_retries``: the SDK's own retries (connection errors,
    timeouts, 408 / 409 / 429 / 5xx, with backoff); ``max_answer_bytes``: the answer's size limit. The OpenAI
    organisation / project headers the SDK would take from OPENAI_ORG_ID / OPENAI_PROJECT_ID are never sent.
    A base URL with user info is refused (:class:`~inkground_lib.core.secrets.CredentialError` naming
    ``base_url_env``, the variable that holds it), and so is one whose host resolves to an address no key may
    go to (``public``: a provider's URL, public addresses only; :class:`~inkground_lib.core.http_client.AddressRefused`).
    """
    import openai  # heavy (~0.5 s): only where a client is made

    from inkground_lib.core.http_client import guarded_http_client  # httpx2 (~0.3 s): as heavy, loaded by openai

    check_base_url(base_url, base_url_env)
    headers = {} if api_key else {"Authorization": openai.Omit()}
    headers.update({"OpenAI-Organization": openai.Omit(), "OpenAI-Project": openai.Omit()})
    client = openai.OpenAI(api_key=api_key or PLACEHOLDER_KEY, base_url=base_url, max_retries=int(max_retries),
                           timeout=timeout, http_client=guarded_http_client(base_url, timeout, max_answer_bytes,
                                                                             public=public))
    return client, headers
