"""A provider protocol is one adapter registered in one place (issue 47): a toy protocol, defined and registered in
this test only (an ApiSystem subclass speaking plain JSON over HTTP, no SDK, plus one row of registry.ADAPTERS),
answers through the loopback fake server and passes ``inkground check``: the check, the provider table and
building a system ask the registry, never a list of adapter names."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakeserver import FakeServer  # noqa: E402

from inkground_lib.cli import main  # noqa: E402
from inkground_lib.evaluation.systems import registry  # noqa: E402
from inkground_lib.evaluation.systems.api import ApiSystem  # noqa: E402
from inkground_lib.evaluation.systems.base import RawOutput, SystemConfigError  # noqa: E402
from inkground_lib.evaluation.systems.providers import provider_of  # noqa: E402

KEY = "sk-toy-SECRET-47"


class ToyHTTPError(Exception):
    """A non-2xx answer of the toy protocol (what the retry loop reads: ``status_code``, ``message``)."""

    def __init__(self, status_code: int, message: str):
        super().__init__(message)
        self.status_code, self.message = status_code, message


class ToySystem(ApiSystem):
    """The toy protocol: the Messages wire format sent as plain JSON with the guarded HTTP client (no SDK), the
    key in ``x-toy-key``. Everything else (provider rules, image fitting, retries, caching keys) is ApiSystem's."""

    adapter = "toy"

    def _make_client(self, api_key, base_url):
        from inkground_lib.core.http_client import guarded_http_client

        self._base, self._key = base_url.rstrip("/"), api_key
        return guarded_http_client(base_url, self.timeout, self.max_answer_bytes, public=self.public_url)

    def _status_error_types(self):
        import httpx2

        return ToyHTTPError, httpx2.TransportError, httpx2.TimeoutException

    def _get(self, path: str, **kw):
        r = self._client.get(self._base + path, headers={"x-toy-key": self._key}, **kw)
        if r.status_code >= 400:
            raise ToyHTTPError(r.status_code, r.text[:200])
        return r.json()

    def list_models(self, timeout: float):
        return [str(m["id"]) for m in self._get("/v1/models", timeout=timeout)["data"]]

    def _call(self, req) -> RawOutput:
        content, records = self._content(req, lambda im: {
            "type": "image", "source": {"type": "base64", "media_type": im.media_type, "data": im.b64()}})
        system, content = self._turns(req, content)
        body = {"model": self.model, "max_tokens": self.max_tokens, "messages": [{"role": "user", "content": content}],
                **({"system": system} if system else {}), **self.sampling_sent}
        r = self._client.post(self._base + "/v1/messages", json=body, headers={"x-toy-key": self._key})
        if r.status_code >= 400:
            raise ToyHTTPError(r.status_code, r.text[:200])
        d = r.json()
        text = "".join(b.get("text", "") for b in d.get("content") or [] if b.get("type") == "text")
        stop = d.get("stop_reason")
        return RawOutput(text=text, status={"max_tokens": "truncated", "refusal": "refusal"}.get(stop, "ok"),
                         finish_reason=stop, usage=d.get("usage") or {}, served_model=d.get("model"),
                         images_sent=records)


TOY = registry.Adapter(lambda n, c, r, **o: ToySystem(n, c, retry=r, **o), "api", frozenset(registry.API_FIELDS))


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy adapter registered (one row of ADAPTERS, undone after the test), a registry file with a model on
    it, and the fake server it talks to."""
    monkeypatch.setitem(registry.ADAPTERS, "toy", TOY)
    reg = tmp_path / "systems.yaml"
    reg.write_text("toy-vl: {adapter: toy, model: fake-toy, api_key_env: T_KEY, base_url_env: T_URL}\n"
                   "toy-on-vllm: {adapter: toy, model: fake-toy, api_key_env: T_KEY, base_url_env: T_URL, "
                   "provider: vllm}\n")
    monkeypatch.setenv("INKGROUND_SYSTEMS", str(reg))
    with FakeServer(models=["fake-toy"]) as srv:
        monkeypatch.setenv("T_KEY", KEY)
        monkeypatch.setenv("T_URL", srv.url)
        yield srv


def check(capsys, *args):
    code = main(["check", *args])
    out, err = capsys.readouterr()
    assert KEY not in out + err
    return code, out, err


def row(out: str, system: str) -> str:
    return next(r for r in out.splitlines() if r.split()[:1] == [system])


def test_the_adapter_is_unknown_until_registered():
    assert "toy" not in registry.provider_adapters()
    with pytest.raises(SystemConfigError, match="field adapter: 'toy' is not one of"):
        registry.validate_entry("toy-vl", {"adapter": "toy", "model": "m"})


def test_a_toy_provider_adapter_answers_through_the_fake_server_and_passes_check(toy, capsys):
    assert registry.provider_adapters() == ("openai", "anthropic", "toy")
    code, out, _ = check(capsys, "--systems", "toy-vl", "--live")
    line = row(out, "toy-vl")
    assert code == 0, out
    assert " toy " in line and "answers" in line and " yes " in line and "parsed ok" in line
    gets = [r for r in toy.requests if r.protocol == "get"]
    posts = [r for r in toy.requests if r.protocol != "get"]
    assert len(gets) == 1 and len(posts) == 1  # the model list, then one small real request
    assert posts[0].path == "/v1/messages" and posts[0].headers["x-toy-key"] == KEY
    assert posts[0].body["model"] == "fake-toy" and "authorization" not in posts[0].headers
    # no provider named and none marked default for the toy adapter in providers.yaml: a provider of its own
    # name with no rules known, so nothing is sent that a table would have added (no default temperature)
    p = provider_of({"adapter": "toy"})
    assert (p.name, p.adapter, p.rules, p.defaults) == ("toy", "toy", (), {})
    assert "temperature" not in posts[0].body


def test_check_reads_the_provider_table_for_the_toy_adapter(toy, capsys):
    """The provider table is asked for the toy adapter as for the shipped ones: a provider spoken to by another
    adapter is refused offline, before any request."""
    code, out, err = check(capsys, "--systems", "toy-on-vllm")
    assert code == 1 and "not ready: toy-on-vllm" in err
    assert "provider: vllm is spoken to by the openai adapter, not toy" in row(out, "toy-on-vllm")
    assert toy.hits() == 0
