"""`inkground check` end to end against the loopback fake server: model listed, model missing, 401, timeout,
a live request, a missing variable; exit status non-zero when a named system is not ready."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakeserver import FakeServer, http_error, ok, slow  # noqa: E402

from inkground_lib.cli import main  # noqa: E402

KEY = "sk-check-SECRET-42"


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-someone-elses-SECRET")  # must never be sent to a self-hosted server
    reg = tmp_path / "systems.yaml"
    reg.write_text(
        "vl: {adapter: openai, model: org/Fake-VL, api_key_env: T_KEY, base_url_env: T_URL}\n"
        "cl: {adapter: anthropic, model: fake-claude, api_key_env: T_KEY, base_url_env: T_AURL}\n"
        "selfhosted: {adapter: openai, model: org/Fake-VL, api_key_env: T_NOKEY, base_url_env: T_URL, "
        "key_optional: true}\n"
        "needs-key: {adapter: openai, model: m, api_key_env: T_UNSET_KEY, base_url_env: T_URL}\n")
    monkeypatch.setenv("INKGROUND_SYSTEMS", str(reg))
    monkeypatch.delenv("T_NOKEY", raising=False)
    monkeypatch.delenv("T_UNSET_KEY", raising=False)
    with FakeServer(models=["org/Fake-VL", "fake-claude"]) as srv:
        monkeypatch.setenv("T_KEY", KEY)
        monkeypatch.setenv("T_URL", srv.openai_url)
        monkeypatch.setenv("T_AURL", srv.anthropic_url)
        yield srv


def run(capsys, *args):
    code = main(["check", *args])
    out, err = capsys.readouterr()
    assert KEY not in out + err and "SECRET" not in out + err
    return code, out, err


def line(out: str, system: str) -> str:
    return next(row for row in out.splitlines() if row.split()[:1] == [system])


def test_ready_systems_and_a_live_request(env, capsys):
    code, out, _ = run(capsys, "--systems", "vl", "cl", "selfhosted", "box", "--live")
    assert code == 0
    for name in ("vl", "cl", "selfhosted"):
        assert "answers" in line(out, name) and " yes " in line(out, name) and "parsed ok" in line(out, name)
    assert "local system: runs here" in line(out, "box")
    posts = [r for r in env.requests if r.protocol != "get"]
    assert len(posts) == 3  # one small real request per API system
    gets = [r for r in env.requests if r.protocol == "get"]
    assert posts[0].headers["authorization"] == f"Bearer {KEY}"
    # key_optional without its variable: no Authorization header at all (not OPENAI_API_KEY, not a placeholder)
    assert posts[-1].headers.get("authorization") is None and gets[-1].headers.get("authorization") is None


def test_model_not_served_is_not_ready(env, capsys):
    env.models = ["org/Other-VL"]
    code, out, err = run(capsys, "--systems", "vl")
    assert code == 1 and "not ready: vl" in err
    assert "model 'org/Fake-VL' is not in the endpoint's list (org/Other-VL)" in line(out, "vl")
    assert not [r for r in env.requests if r.protocol != "get"]  # nothing sent without --live


def test_401_and_timeout_are_named_without_the_key(env, capsys):
    env.script(http_error(401, echo_auth=True), match="GET")
    code, out, _ = run(capsys, "--systems", "vl")
    assert code == 1 and "HTTP 401" in line(out, "vl") and "no answer" in line(out, "vl")
    env.script(slow(3), match="GET")
    code, out, _ = run(capsys, "--systems", "vl", "--timeout", "0.5")
    assert code == 1 and "no answer within the timeout" in line(out, "vl")


def test_missing_variable_named_and_a_live_garbage_answer_is_not_ready(env, capsys):
    code, out, _ = run(capsys, "--systems", "needs-key")
    assert code == 1 and "set T_UNSET_KEY" in line(out, "needs-key") and env.hits() == 0
    env.script(ok("The word says ink."), match="messages")
    code, out, _ = run(capsys, "--systems", "vl", "--live")
    assert code == 1 and "parsed unparseable" in line(out, "vl")


def test_live_check_of_a_local_system_runs_it_once(env, capsys):
    code, out, _ = run(capsys, "--systems", "font", "--live")
    assert code == 0 and "ok:" in line(out, "font") and " points" in line(out, "font")
