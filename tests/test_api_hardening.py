"""Issue 11, cases 3, 5 and 6: what a server sends back cannot leak the key into the cache; empty answers and
refusals get their own statuses and are asked again only on request; Ctrl-C keeps the answers that arrive."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakeserver import FakeServer, no_content, ok, refusal, slow  # noqa: E402
from test_systems import KEY, REG, make_item  # noqa: E402

from inkground_lib.evaluation.cache import (  # noqa: E402
    cache_path,
    failures_path,
    load_cache,
    run_predictions,
)
from inkground_lib.evaluation.systems.registry import get_system  # noqa: E402
from inkground_lib.evaluation.systems.retry import RetryPolicy  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def env(monkeypatch):
    with FakeServer() as srv:
        monkeypatch.setenv("T_KEY", KEY)
        monkeypatch.setenv("T_OPENAI_URL", srv.openai_url)
        monkeypatch.setenv("T_ANTHROPIC_URL", srv.anthropic_url)
        yield srv


def system(name):
    return get_system(name, registry=REG, retry=RetryPolicy(max_attempts=2, base_delay=0.01, sleep=lambda s: None))


@pytest.mark.parametrize("name", ["oa", "an"])
def test_a_server_echoing_the_key_into_every_field_leaves_no_trace(env, tmp_path, name):
    """Case 3: the key echoed into model, usage (value, nested value, key name), finish reason,
    system_fingerprint / stop_sequence: nothing of it reaches the cache; the usage counters are kept."""
    # an echoing answer for every attempt: under load a 0.5 s timeout can make the client retry, and a retry
    # that got the unscripted default answer would carry no echoed usage to check (failed once at load 6)
    env.script(*[ok(echo_auth=True)] * 4)
    run_dir = tmp_path / "run"
    recs = run_predictions(system(name), [make_item("alpha", 0), make_item("beta", 1)], cache_path(run_dir, name),
                           progress=False)
    assert [r["status"] for r in recs] == ["ok", "ok"]
    blob = b"".join(p.read_bytes() for p in run_dir.rglob("*") if p.is_file())
    assert b"w0-alpha" in blob  # the answers were written
    assert KEY.encode() not in blob and b"SECRET" not in blob
    rec = load_cache(cache_path(run_dir, name))[recs[0]["request_hash"]]
    assert rec["served_model"] and KEY not in rec["served_model"]
    usage = rec["usage"]
    assert all(isinstance(v, (int, float, dict)) for v in usage.values())  # numbers only, no text
    assert "note" not in usage and "service_tier" not in usage
    if name == "oa":
        assert usage["prompt_tokens"] > 0 and usage["completion_tokens_details"] == {"reasoning_tokens": 7}
    else:
        assert usage["input_tokens"] > 0 and usage["server_tool_use"] == {"web_search_requests": 0}


@pytest.mark.parametrize("name", ["oa", "an"])
def test_empty_answers_and_plain_refusals_have_their_own_status_and_are_retried_on_request(env, tmp_path, name):
    """Case 6: null content, "" and a refusal in plain words were cached as ok (and reported unparseable
    for ever). They are cached as empty / refusal; a rerun skips them; retry_refusals asks again and the
    new answer replaces the old one."""
    sysm = system(name)
    items = [make_item(w, i) for i, w in enumerate(["alpha", "beta", "gamma", "delta"])]
    env.script(no_content(null=True), match="alpha")
    env.script(no_content(null=False), match="beta")
    env.script(ok("I'm sorry, but I can't help with tracing this handwriting."), match="gamma")
    env.script(refusal("I won't."), match="delta")
    path = cache_path(tmp_path / "run", name)
    first = run_predictions(sysm, items, path, progress=False)
    assert [r["status"] for r in first] == ["empty", "empty", "refusal", "refusal"]
    assert env.hits() == 4
    again = run_predictions(sysm, items, path, progress=False)
    assert env.hits() == 4 and [r["status"] for r in again] == ["empty", "empty", "refusal", "refusal"]
    retried = run_predictions(sysm, items, path, progress=False, retry_refusals=True)  # default answers now
    assert env.hits() == 8 and [r["status"] for r in retried] == ["ok"] * 4
    assert all(r["raw_text"].startswith("<strokes>") for r in retried)
    assert [r["status"] for r in run_predictions(sysm, items, path, progress=False)] == ["ok"] * 4
    assert env.hits() == 8  # the ok answers are final
    assert len(path.read_text().splitlines()) == 8  # append-only: the old answers are kept in the file
    rep = get_system("replay", path=str(path), source=name)  # replaying the cache gives the retried answers
    assert [rep.predict(it).text for it in items] == [r["raw_text"] for r in retried]


def test_a_refusal_is_scored_as_refusal_not_unparseable():
    from inkground_lib.evaluation.items import record_ink

    assert record_ink({"status": "empty", "raw_text": ""}, (200, 100)) == (None, "empty")
    assert record_ink({"status": "refusal", "raw_text": "I cannot do that."}, (200, 100)) == (None, "refusal")


@pytest.mark.slow  # a killed subprocess (SIGINT)
def test_ctrl_c_keeps_answers_arriving_within_the_grace_and_exits_130(tmp_path):
    """Case 5: Ctrl-C waited for every request in flight (with its retries) and then threw the answers away.
    Now: no new request, answers arriving within the grace are cached, the rest logged as interrupted,
    exit 130 with a one-line summary, a few seconds after Ctrl-C."""
    from conftest import make_tiny_dataset

    ds = make_tiny_dataset(tmp_path / "ds", pages=3, words=3, unique_texts=True)  # 9 requests
    extra = tmp_path / "systems.yaml"
    extra.write_text("slow-vl: {adapter: openai, model: m, api_key_env: T_KEY, base_url_env: T_URL, timeout: 120, "
                     "concurrency: 4, max_attempts: 3}\n")
    run = tmp_path / "run"
    with FakeServer() as srv:
        srv.script(slow(3.0), slow(3.0), slow(60), slow(60))  # the first four requests, in arrival order
        env = dict(os.environ, INKGROUND_SYSTEMS=str(extra), T_KEY=KEY, T_URL=srv.openai_url)
        proc = subprocess.Popen([sys.executable, "-m", "inkground_lib.cli", "predict", "--system", "slow-vl",
                                 "--dataset", str(ds), "--run", str(run), "--quiet"], cwd=ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while srv.hits() < 4 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        assert srv.hits() == 4, proc.communicate()
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        elapsed = time.monotonic() - t0
        hits = srv.hits()
    assert proc.returncode == 130, err
    assert elapsed < 12, elapsed  # the 5 s grace, not the 60 s answers
    assert hits == 4  # nothing new was sent after Ctrl-C
    cached = load_cache(run / "predictions" / "slow-vl.jsonl")
    assert sorted(r["status"] for r in cached.values()) == ["ok", "ok"]  # the answers that arrived are kept
    failures = [json.loads(line) for line in failures_path(run / "predictions" / "slow-vl.jsonl").read_text().splitlines()]
    assert sorted(r["status"] for r in failures) == ["interrupted", "interrupted"]
    summary = [line for line in err.splitlines() if "interrupted" in line]
    assert len(summary) == 1 and "ok 2" in summary[0] and "2 in flight logged as interrupted" in summary[0]
    assert "5 not sent" in summary[0] and KEY not in err


@pytest.mark.parametrize("name", ["oa", "an"])
def test_x_should_retry_is_obeyed_as_the_sdks_do(env, name):
    """The SDKs obey a server's x-should-retry header before their own rules; so does our retry loop."""
    from fakeserver import http_error

    sysm = get_system(name, registry=REG, retry=RetryPolicy(max_attempts=3, base_delay=0.01, sleep=lambda s: None))
    env.script(http_error(400, headers={"x-should-retry": "true"}), ok())
    out = sysm.predict(make_item("alpha", 0))
    assert out.status == "ok" and out.attempts == 2  # a 400 retried because the server said so
    env.script(http_error(503, headers={"x-should-retry": "false"}), ok())
    out = sysm.predict(make_item("beta", 1))
    assert out.status == "error" and out.attempts == 1  # a 503 not retried because the server said so


def test_rpm_paces_requests(env, tmp_path):
    """rpm: at most that many requests start per minute (120 rpm: one every 0.5 s), across threads."""
    reg = {"paced": dict(REG["oa"], rpm=120, concurrency=4)}
    sysm = get_system("paced", registry=reg)
    items = [make_item(w, i) for i, w in enumerate(["a", "b", "c", "d"])]
    t0 = time.monotonic()
    run_predictions(sysm, items, cache_path(tmp_path, "paced"), progress=False)
    starts = sorted(r.time for r in env.requests)
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert len(starts) == 4 and min(gaps) > 0.4 and time.monotonic() - t0 >= 1.4
