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

from inkground_lib.evaluation.asking import run_predictions  # noqa: E402
from inkground_lib.evaluation.cache import (  # noqa: E402
    cache_path,
    failures_path,
    load_cache,
)
from inkground_lib.evaluation.systems.registry import make_system  # noqa: E402
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
    return make_system(name, registry=REG, retry=RetryPolicy(max_attempts=2, base_delay=0.01, sleep=lambda s: None))


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
    rep = make_system("replay", path=str(path), source=name)  # replaying the cache gives the retried answers
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
        # the first four requests, in arrival order; the first two answer 2 s after the fourth has arrived
        # (however slowly a loaded machine sends them: an earlier answer would let a fifth request start before
        # the check below), within the 5 s grace after Ctrl-C, which is sent as soon as the fourth is in
        srv.script(slow(2.0, after_hits=4), slow(2.0, after_hits=4), slow(60), slow(60))
        env = dict(os.environ, INKGROUND_SYSTEMS=str(extra), T_KEY=KEY, T_URL=srv.openai_url)
        proc = subprocess.Popen([sys.executable, "-m", "inkground_lib.cli", "predict", "--system", "slow-vl",
                                 "--dataset", str(ds), "--run", str(run), "--quiet"], cwd=ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                # Ctrl-C as in a terminal: a test run started in the background by a shell
                                # ignores SIGINT, the child would inherit that, and Python then installs no
                                # handler for it (the child ran on for its 60 s answers)
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
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

    sysm = make_system(name, registry=REG, retry=RetryPolicy(max_attempts=3, base_delay=0.01, sleep=lambda s: None))
    env.script(http_error(400, headers={"x-should-retry": "true"}), ok())
    out = sysm.predict(make_item("alpha", 0))
    assert out.status == "ok" and out.attempts == 2  # a 400 retried because the server said so
    env.script(http_error(503, headers={"x-should-retry": "false"}), ok())
    out = sysm.predict(make_item("beta", 1))
    assert out.status == "error" and out.attempts == 1  # a 503 not retried because the server said so


def test_rpm_paces_requests(env, tmp_path):
    """rpm: at most that many requests start per minute (120 rpm: one every 0.5 s), across threads."""
    reg = {"paced": dict(REG["oa"], rpm=120, concurrency=4)}
    sysm = make_system("paced", registry=reg)
    items = [make_item(w, i) for i, w in enumerate(["a", "b", "c", "d"])]
    t0 = time.time()  # the fake server stamps arrivals with time.time()
    run_predictions(sysm, items, cache_path(tmp_path, "paced"), progress=False)
    starts = sorted(r.time - t0 for r in env.requests)
    # request k may start no earlier than k * 0.5 s after the first could: a slow machine delays a request (a
    # gap between two arrivals can shrink when the earlier one was late) but never brings one forward
    assert len(starts) == 4, starts
    assert all(s >= k * 0.5 - 0.02 for k, s in enumerate(starts)), starts


# ------------------------------------------------------------------------------------------------- issue 26
# Cases 1, 3, 6 and 7: a total deadline per request, keys only from their variables, an answer size limit, no
# redirects.

def fast_system(name, **cfg):
    """``name`` of REG with ``cfg`` on top (a 1.5 s timeout by default), one attempt."""
    reg = {name: {**REG[name], "timeout": 1.5, **cfg}}
    return make_system(name, registry=reg, retry=RetryPolicy(max_attempts=1, base_delay=0.01, sleep=lambda s: None))


@pytest.mark.parametrize("name", ["oa", "an"])
@pytest.mark.parametrize("how", [{"chunked": False}, {"chunked": True}, {"headers": True}],
                         ids=["byte-a-second", "chunked-white-space", "trickled-headers"])
def test_a_trickling_server_fails_the_attempt_within_the_deadline(env, name, how):
    """Case 1: a server sending its answer one byte every 0.2 s (or endless chunked white space, or its headers
    byte by byte) hung predict for ever: each read got its own timeout. The registry's timeout (1.5 s here) is
    now a deadline for the whole request."""
    from fakeserver import trickle

    env.script(trickle(interval=0.2, seconds=25, **how))
    sysm = fast_system(name)
    t0 = time.monotonic()
    out = sysm.predict(make_item("alpha", 0))
    elapsed = time.monotonic() - t0
    assert out.status == "error" and out.attempts == 1, out
    assert "no complete answer within 1.5 s" in out.error
    assert 1.2 < elapsed < 6, elapsed  # the deadline, not the 25 s the server would go on for


def test_deadlines_missed_in_a_row_stop_predict_as_a_spent_quota_does(env, tmp_path, capsys, monkeypatch):
    """Issue 32: a server that trickles every answer was given up word by word (each attempt at its deadline, then
    its retries): hours for a benchmark. After K requests in a row missed the deadline (--max-deadline-failures
    here, 2) predict stops as on a spent quota: within seconds, exit 130, one line, answers kept, a rerun
    resumes."""
    from conftest import make_tiny_dataset
    from fakeserver import trickle

    from inkground_lib.cli import main

    ds = make_tiny_dataset(tmp_path / "ds", pages=3, words=3, unique_texts=True)  # 9 words
    reg = tmp_path / "systems.yaml"
    reg.write_text("slow-vl: {adapter: openai, model: m, api_key_env: T_KEY, base_url_env: T_OPENAI_URL, timeout: 1.5, "
                   "concurrency: 1, max_attempts: 3, backoff_base: 0.1}\n")
    monkeypatch.setenv("INKGROUND_SYSTEMS", str(reg))
    env.script(ok(), *[trickle(interval=0.2, seconds=30)] * 20)  # one answer, then every answer trickles
    argv = ["predict", "--system", "slow-vl", "--dataset", str(ds), "--run", str(tmp_path / "run"), "--quiet"]
    t0 = time.monotonic()
    code = main(argv + ["--max-deadline-failures", "2"])
    elapsed = time.monotonic() - t0
    err = capsys.readouterr().err
    assert code == 130, err
    line = [x for x in err.splitlines() if "stopped sending" in x]
    assert len(line) == 1 and "2 requests in a row got no complete answer within the 1.5 s deadline" in line[0]
    assert "1 of 9 words are answered and cached" in line[0] and "rerun when the server answers in time" in line[0]
    assert env.hits() == 3 and elapsed < 15, elapsed  # 1 answer + 2 deadlines (one retried), not 8 x 3 attempts
    env.script(*[ok()] * 20, match="messages")  # the server is well again: ahead of the trickles still queued
    assert main(argv) == 0 and env.hits() == 3 + 8  # the rerun asks only the 8 missing
    assert len(load_cache(cache_path(tmp_path / "run", "slow-vl"))) == 9


def test_an_answer_in_time_starts_the_count_of_deadlines_again(env, tmp_path):
    from fakeserver import trickle

    env.script(trickle(interval=0.2, seconds=30), ok(), trickle(interval=0.2, seconds=30), ok())
    sysm = fast_system("oa", concurrency=1, max_deadline_failures=2)
    assert sysm.max_deadline_failures == 2 and make_system("oa", registry=REG).max_deadline_failures == 3
    items = [make_item(w, i) for i, w in enumerate(["alpha", "beta", "gamma", "delta"])]
    recs = run_predictions(sysm, items, cache_path(tmp_path, "oa"), progress=False)
    assert [r["status"] for r in recs] == ["error", "ok", "error", "ok"] and sysm.exhausted is None


def test_check_live_against_a_trickling_server_says_not_ready_within_the_deadline(env):
    from fakeserver import trickle

    from inkground_lib.evaluation.systems.check import check_system

    env.script(trickle(interval=0.2, seconds=90, chunked=True), match="messages")  # the live request, not the list
    t0 = time.monotonic()
    row = check_system("oa", registry={"oa": dict(REG["oa"], timeout=1.5, max_attempts=1)}, live=True)
    assert time.monotonic() - t0 < 40  # building the system and the live item take seconds; the server 90 s
    assert not row.ready and row.endpoint == "answers" and "no complete answer within 1.5 s" in row.live


@pytest.mark.parametrize("name", ["oa", "an"])
def test_a_redirect_is_an_error_naming_it_and_is_not_followed(env, tmp_path, name):
    """Case 7: a 307 to another host re-sent the request (key and page photos) there and cached the answer as
    ok. Redirects are not followed: the attempt is an error naming the redirect, not retried, not cached."""
    from fakeserver import redirect

    env.script(redirect(307, "http://127.0.0.2:9/v1/chat/completions"))
    sysm = make_system(name, registry=REG, retry=RetryPolicy(max_attempts=3, base_delay=0.01, sleep=lambda s: None))
    recs = run_predictions(sysm, [make_item("alpha", 0)], cache_path(tmp_path, name), progress=False)
    assert recs[0]["status"] == "error" and recs[0]["attempts"] == 1
    assert "HTTP 307, a redirect to http://127.0.0.2:9/v1/chat/completions" in recs[0]["error"]
    assert "not followed" in recs[0]["error"] and env.hits() == 1
    assert load_cache(cache_path(tmp_path, name)) == {}


def test_check_live_is_not_ready_behind_a_redirect(env):
    from fakeserver import redirect

    from inkground_lib.evaluation.systems.check import check_system

    env.script(redirect(308, "http://127.0.0.2:9/v1/chat/completions"), match="messages")  # the live request
    row = check_system("oa", registry=REG, live=True)
    assert not row.ready and "a redirect to http://127.0.0.2:9" in row.live


@pytest.mark.parametrize("name", ["oa", "an"])
def test_an_answer_over_the_size_limit_is_kept_cut_with_its_own_status(env, tmp_path, name):
    """Case 6: a 50 MB answer was stored whole as ok. Over ``max_answer_bytes`` (the registry; 1 MiB by
    default) the answer is not read further: the cache keeps its first 64 KiB with status too_large, and it is
    never scored as an answer."""
    from inkground_lib.core.defaults import MAX_ANSWER_BYTES
    from inkground_lib.evaluation.items import record_ink

    assert MAX_ANSWER_BYTES == 2**20 and make_system(name, registry=REG).max_answer_bytes == 2**20
    big = "<strokes><s1><points>'x1y1', 'x2y2'</points><t_values>0, 1</t_values></s1></strokes>" + "x" * 300_000
    env.script(ok(big))
    sysm = fast_system(name, timeout=10, max_answer_bytes=100_000)
    recs = run_predictions(sysm, [make_item("alpha", 0)], cache_path(tmp_path, name), progress=False)
    rec = load_cache(cache_path(tmp_path, name))[recs[0]["request_hash"]]
    assert rec["status"] == "too_large" and "over the size limit of 100,000 bytes" in rec["error"]
    assert 60_000 < len(rec["raw_text"]) <= 65536 and "x" * 1000 in rec["raw_text"]
    assert cache_path(tmp_path, name).stat().st_size < 80_000
    assert record_ink(rec, (200, 100)) == (None, "too_large")


def test_a_compressed_answer_cannot_unpack_past_the_limit(env, tmp_path):
    """A gzip answer sent although the client asked for none: decompressed under the same limit (20 MB of
    answer in a ~20 kB body is cut at the limit, never unpacked whole); a small one reads normally."""
    from fakeserver import gzipped

    env.script(gzipped("<strokes></strokes>" + " " * 20_000_000), gzipped())
    sysm = fast_system("oa", timeout=10, max_answer_bytes=200_000)
    out = sysm.predict(make_item("alpha", 0))
    assert out.status == "too_large" and len(out.text) <= 65536
    assert env.requests[-1].headers.get("accept-encoding") == "identity"
    out = sysm.predict(make_item("beta", 1))
    assert out.status == "ok" and "w1-beta" in out.text or out.text.startswith("<strokes>")


@pytest.mark.parametrize("name", ["oa", "an"])
def test_a_base_url_with_user_info_is_refused_naming_the_variable(env, monkeypatch, name):
    """Case 3: http://user:KEY@host/v1 was sent as Basic auth in place of the Bearer key (and echoed into the
    failures log unscrubbed). Keys come only from their variables: the URL is refused, the variable named,
    nothing sent, the key not repeated."""
    from inkground_lib.evaluation.systems.base import SystemConfigError
    from inkground_lib.evaluation.systems.check import check_system

    var = "T_OPENAI_URL" if name == "oa" else "T_ANTHROPIC_URL"
    url = env.openai_url if name == "oa" else env.anthropic_url
    monkeypatch.setenv(var, url.replace("http://", "http://user:URLSECRET99@"))
    with pytest.raises(SystemConfigError, match=rf"system {name}: environment variable {var}: the base URL "
                                                r"carries user info") as e:
        make_system(name, registry=REG)
    assert "URLSECRET99" not in str(e.value)
    row = check_system(name, registry=REG)
    assert not row.ready and var in row.detail and "URLSECRET99" not in row.detail
    assert env.hits() == 0


@pytest.mark.parametrize("bad, kind", [("sk-abc\r\n", r"a line break \(CR or LF\)"), ("sk-ab\ncd", r"a line break \(CR or LF\)"),
                                       ("sk-äbc123", "a non-ASCII character"), ("sk abc", "white space")])
def test_a_key_with_a_line_break_or_a_non_ascii_character_names_the_variable(env, monkeypatch, bad, kind):
    """Case 10: such a key gave "Connection error" or a UnicodeEncodeError without naming the variable."""
    from inkground_lib.evaluation.systems.base import SystemConfigError

    monkeypatch.setenv("T_KEY", bad)
    with pytest.raises(SystemConfigError, match=rf"environment variable T_KEY: the key has {kind} at character") as e:
        make_system("oa", registry=REG)
    assert bad.strip() not in str(e.value) and env.hits() == 0


def test_the_scrubber_removes_every_credential_form_and_leaves_plain_hosts(env):
    """Case 3: a Basic credential echoed by a server reached the failures log and `inkground check` unscrubbed,
    while the host 127.0.0.1 was replaced by <T_OPENAI_URL> in every message."""
    from fakeserver import http_error

    from inkground_lib.core.secrets import scrub_secrets

    sysm = system("oa")
    for text, gone in [("Authorization: Basic dXNlcjpVUkxTRUNSRVQ5OQ==", "dXNlcjpVUkxTRUNSRVQ5OQ=="),
                       ("credential received: Basic dXNlcjpVUkxTRUNSRVQ5OQ==", "dXNlcjpVUkxTRUNSRVQ5OQ=="),
                       ("{'x-api-key': 'k-live-123456'}", "k-live-123456"),
                       ("x-goog-api-key: AQ.Ab8RN6abcdef", "AQ.Ab8RN6abcdef"),
                       ("GET https://h.example/v1/models?key=AQ.Ab8RN6abc", "AQ.Ab8RN6abc"),
                       ("see http://user:pa55word@gpu.example:8000/v1", "pa55word"),
                       ("Bearer tok.123-456", "tok.123-456")]:
        out = scrub_secrets(text, ())
        assert gone not in out and "<redacted>" in out, (text, out)
    assert sysm.scrub("connect to 127.0.0.1 refused") == "connect to 127.0.0.1 refused"
    assert sysm.scrub(f"POST {env.openai_url}/chat/completions") == "POST <T_OPENAI_URL>/chat/completions"
    env.script(http_error(401, echo_auth=True))
    out = sysm.predict(make_item("alpha", 0))
    assert out.status == "error" and KEY not in out.error and "Bearer <T_KEY>" in out.error


@pytest.mark.parametrize("name", ["oa", "an"])
def test_api_systems_never_send_someone_elses_openai_account_headers(env, monkeypatch, name):
    """OPENAI_ORG_ID / OPENAI_PROJECT_ID (the SDK's fallbacks) never reach an API system's endpoint: keys and
    account ids come only from the variables a registry entry names."""
    monkeypatch.setenv("OPENAI_ORG_ID", "org-someone-else")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj_someone_else")
    assert system(name).predict(make_item("alpha", 0)).status == "ok"
    h = env.requests[-1].headers
    assert "openai-organization" not in h and "openai-project" not in h
    assert "someone" not in json.dumps(h)
