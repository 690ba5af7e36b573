"""Prediction cache: kill-and-resume in a subprocess, torn lines, failures kept out, duplicates, locking.

Run as a script (``python tests/test_cache.py <cache.jsonl> <n_items>``) this file is the worker the kill
test starts: it answers the test items with an OpenAI-compatible system whose key and base URL come from
the T_KEY / T_OPENAI_URL environment variables (the fake server of the parent test process).
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from fakeserver import FakeServer, http_error  # noqa: E402

from inkground_lib.evaluation import asking, cache
from inkground_lib.evaluation.systems.api import ApiSystem
from inkground_lib.evaluation.systems.base import Item, RawOutput
from inkground_lib.evaluation.systems.registry import make_system
from inkground_lib.evaluation.systems.retry import RetryPolicy

KEY = "sk-test-SECRET-123"
RESUME_KEY = "sk-test-RESUME-456"
THIRD_KEY = "sk-test-THIRD-789"
REG = {"oa": {"adapter": "openai", "model": "fake-vl", "api_key_env": "T_KEY", "base_url_env": "T_OPENAI_URL",
              "timeout": 5.0, "concurrency": 2}}


def _png() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (6, 6), (250, 250, 240)).save(buf, format="PNG")
    return buf.getvalue()


def make_items(n: int) -> list[Item]:
    from inkground_lib.evaluation.prompt import PromptRequest

    img = _png()
    out = []
    for i in range(n):
        req = PromptRequest("sys", [("text", f"Trace <<word{i:02d}>>"), ("image", img)], {"prompt_version": "t1"})
        out.append(Item(f"w{i:02d}", f"word{i:02d}", (1, 1, 5, 5), f"p{i // 4}", (6, 6), request=req))
    return out


def api_system(max_attempts: int = 3) -> ApiSystem:
    return make_system("oa", registry=REG, retry=RetryPolicy(max_attempts=max_attempts, base_delay=0.01,
                                                                  max_delay=0.02))


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


@pytest.fixture
def server(monkeypatch):
    with FakeServer() as srv:
        monkeypatch.setenv("T_KEY", KEY)
        monkeypatch.setenv("T_OPENAI_URL", srv.openai_url)
        yield srv


@pytest.mark.slow  # kill -9
def test_kill_and_resume_equals_uninterrupted_run(server, tmp_path, monkeypatch):
    n = 20
    server.delay = 0.2  # each answer takes a while, so the worker is killed mid-run
    killed = tmp_path / "killed" / "predictions" / "oa.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), str(killed), str(n)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            if killed.is_file() and killed.read_text().count("\n") >= 4:
                break
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    done_before = cache.load_cache(killed)
    assert 4 <= len(done_before) < n, "the worker must be killed mid-run"
    words_before = {r["word_id"] for r in done_before.values()}

    # resume in this process, with a key of its own: a request the killed worker had sent before SIGKILL may
    # still reach the server (and be counted) after this point, so the resumed run's requests are told apart
    # by their credential, not by when they arrived (counting by arrival failed 1 run in 6 under -n 2)
    monkeypatch.setenv("T_KEY", RESUME_KEY)
    items = make_items(n)
    resumed = asking.run_predictions(api_system(), items, killed, progress=False)
    asked_again = [r.text for r in server.requests if r.headers.get("authorization") == f"Bearer {RESUME_KEY}"]
    assert not any(f"<<word{w[1:]}>>" in t for w in words_before for t in asked_again), \
        "a request answered before the kill was asked again"
    assert len(asked_again) == n - len(done_before)

    # an uninterrupted run of the same items
    server.delay = 0.0
    fresh_path = tmp_path / "fresh" / "predictions" / "oa.jsonl"
    fresh = asking.run_predictions(api_system(), items, fresh_path, progress=False)
    assert cache.stable_view(resumed) == cache.stable_view(fresh)
    assert [r["word_id"] for r in resumed] == [it.word_id for it in items]
    # the files: no duplicate, no lost record, only complete lines
    for path in (killed, fresh_path):
        recs = lines(path)
        assert sorted(r["word_id"] for r in recs) == [it.word_id for it in items]
        assert len({r["request_hash"] for r in recs}) == n
    # a third run (its own key again) asks nothing
    monkeypatch.setenv("T_KEY", THIRD_KEY)
    again = asking.run_predictions(api_system(), items, killed, progress=False)
    assert not [r for r in server.requests if r.headers.get("authorization") == f"Bearer {THIRD_KEY}"]
    assert cache.stable_view(again) == cache.stable_view(fresh)


def test_torn_last_line_is_dropped_and_repaired(server, tmp_path):
    items = make_items(4)
    path = tmp_path / "oa.jsonl"
    asking.run_predictions(api_system(), items[:2], path, progress=False)
    good = path.read_bytes()
    path.write_bytes(good + b'{"schema": "inkground-prediction", "request_hash": "ab')  # killed mid-write
    assert len(cache.load_cache(path)) == 2 and path.read_bytes().endswith(b'"ab')  # load without repair: untouched
    hits = server.hits()
    recs = asking.run_predictions(api_system(), items, path, progress=False)
    assert server.hits() == hits + 2 and [r["status"] for r in recs] == ["ok"] * 4
    data = path.read_bytes()
    assert data.startswith(good) and data.endswith(b"\n") and len(lines(path)) == 4  # every line parses


def test_complete_last_line_without_newline_is_kept(server, tmp_path):
    items = make_items(3)
    path = tmp_path / "oa.jsonl"
    asking.run_predictions(api_system(), items[:2], path, progress=False)
    path.write_bytes(path.read_bytes().rstrip(b"\n"))  # killed between the record and its newline
    hits = server.hits()
    asking.run_predictions(api_system(), items, path, progress=False)
    assert server.hits() == hits + 1 and len(lines(path)) == 3


def test_corrupt_middle_line_is_an_error(tmp_path):
    path = tmp_path / "oa.jsonl"
    rec = {"schema": cache.SCHEMA, "request_hash": "h1", "word_id": "w", "system": "oa", "status": "ok"}
    path.write_text(json.dumps(rec) + "\n{not json\n" + json.dumps({**rec, "request_hash": "h2"}) + "\n")
    with pytest.raises(cache.CacheError, match="line 2"):
        cache.load_cache(path)


def test_the_cache_is_read_one_record_at_a_time(server, tmp_path, monkeypatch):
    """Issue 26, case 6: the loader read whole files into memory (a 157 MB cache at once). It reads line by line:
    nothing reads the whole file."""
    items = make_items(3)
    path = tmp_path / "oa.jsonl"
    asking.run_predictions(api_system(), items, path, progress=False)

    def whole(*a, **k):
        raise AssertionError("the whole file was read")

    monkeypatch.setattr(Path, "read_bytes", whole)
    monkeypatch.setattr(Path, "read_text", whole)
    assert len(cache.load_cache(path)) == 3
    hits = server.hits()
    asking.run_predictions(api_system(), items, path, progress=False)
    assert server.hits() == hits


def test_a_users_file_in_place_of_the_cache_is_not_called_corrupt(server, tmp_path):
    """Issue 26, case 5: predict --overwrite refused a user's predictions/<system>.jsonl calling it "the cache is
    corrupt". It says the file is not inkground's and is left alone; a damaged cache is still "corrupt"."""
    path = tmp_path / "oa.jsonl"
    path.write_text("my own notes about this model\n")
    with pytest.raises(cache.CacheError, match="not a prediction cache written by inkground") as e:
        asking.run_predictions(api_system(), make_items(1), path, progress=False)
    assert "corrupt" not in str(e.value) and path.read_text() == "my own notes about this model\n"


def test_a_cache_hard_linked_outside_the_run_folder_is_not_appended_to(server, tmp_path):
    """Issue 26, case 10: a cache hard-linked from elsewhere was appended to (so the other name changed too)."""
    run = tmp_path / "run" / "predictions"
    path = run / "oa.jsonl"
    items = make_items(3)
    asking.run_predictions(api_system(), items[:1], path, progress=False)
    outside = tmp_path / "elsewhere.jsonl"
    os.link(path, outside)
    before = outside.read_bytes()
    hits = server.hits()
    with pytest.raises(cache.CacheError, match=r"oa.jsonl: the file has 2 hard links .* does not append to it"):
        asking.run_predictions(api_system(), items, path, progress=False)
    assert outside.read_bytes() == before and server.hits() == hits
    os.unlink(outside)
    asking.run_predictions(api_system(), items, path, progress=False)
    assert len(lines(path)) == 3


def test_failures_never_stored_as_outputs(server, tmp_path):
    items = make_items(3)
    path = tmp_path / "predictions" / "oa.jsonl"
    server.script(*[http_error(500)] * 3, match="<<word01>>")  # all 3 attempts fail
    server.script(http_error(400), match="<<word02>>")  # not retried
    recs = asking.run_predictions(api_system(max_attempts=3), items, path, progress=False)
    assert [r["status"] for r in recs] == ["ok", "error", "error"]
    assert recs[1]["attempts"] == 3 and recs[2]["attempts"] == 1 and "HTTP 500" in recs[1]["error"]
    assert [r["word_id"] for r in lines(path)] == ["w00"]  # only the model output is cached
    fails = lines(cache.failures_path(path))
    assert sorted(r["word_id"] for r in fails) == ["w01", "w02"] and all(r["status"] == "error" for r in fails)
    assert not any(r["raw_text"] for r in fails)
    # a rerun asks the failed ones again (and only them); now they succeed and are cached
    hits = server.hits()
    recs = asking.run_predictions(api_system(), items, path, progress=False)
    assert server.hits() == hits + 2 and [r["status"] for r in recs] == ["ok"] * 3
    assert sorted(r["word_id"] for r in lines(path)) == ["w00", "w01", "w02"]
    assert len(cache.load_cache(path)) == 3  # the failures log is not read as predictions


def test_truncated_and_refused_answers_are_cached(server, tmp_path):
    from fakeserver import refusal, truncated

    items = make_items(2)
    server.script(truncated("<strokes><s1><points>'x1y1'"), match="<<word00>>")
    server.script(refusal("no"), match="<<word01>>")
    path = tmp_path / "oa.jsonl"
    recs = asking.run_predictions(api_system(), items, path, progress=False)
    assert [(r["status"], r["finish_reason"]) for r in recs] == [("truncated", "length"), ("refusal", "stop")]
    hits = server.hits()
    asking.run_predictions(api_system(), items, path, progress=False)
    assert server.hits() == hits  # model outputs: never asked again


def test_duplicates_first_wins(server, tmp_path):
    items = make_items(1)
    sysm = api_system()
    key = sysm.request_key(items[0])
    path = tmp_path / "oa.jsonl"
    base = cache.make_record(sysm, items[0], key, RawOutput(text="FIRST"))
    cache.append_record(path, base)
    cache.append_record(path, {**base, "raw_text": "SECOND"})
    assert cache.load_cache(path)[key]["raw_text"] == "FIRST"
    recs = asking.run_predictions(sysm, items, path, progress=False)
    assert recs[0]["raw_text"] == "FIRST" and server.hits() == 0
    # the same request twice in one run is asked once
    two = make_items(2)
    two[1].request = two[0].request
    recs = asking.run_predictions(sysm, two, tmp_path / "b.jsonl", progress=False)
    assert server.hits() == 1 and recs[0]["raw_text"] == recs[1]["raw_text"]
    assert [r["word_id"] for r in recs] == ["w00", "w01"]


def test_wrong_system_and_lock(tmp_path):
    items = make_items(2)
    path = cache.cache_path(tmp_path, "box")
    asking.run_predictions(make_system("box"), items, path, progress=False)
    with pytest.raises(cache.CacheError, match="wrong cache file"):
        asking.run_predictions(make_system("font"), items, path, progress=False)
    import fcntl

    with open(path.with_name("box.lock"), "w") as f:  # another run holds the lock (flock is per open file)
        fcntl.flock(f, fcntl.LOCK_EX)
        with pytest.raises(cache.CacheError, match="another run"):
            asking.run_predictions(make_system("box"), items, path, progress=False)
    assert len(asking.run_predictions(make_system("box"), items, path, progress=False)) == 2  # released
    with pytest.raises(cache.CacheError, match="is not a valid id"):
        cache.cache_path(tmp_path, "../evil")


class CountingBox:
    """The box system, counting its calls."""

    def __init__(self):
        self.inner = make_system("box")
        self.name, self.kind, self.label, self.adapter = "box", "local", "Box", "box"
        self.model, self.concurrency, self.calls = None, 1, 0

    def request_key(self, item):
        return self.inner.request_key(item)

    def predict(self, item):
        self.calls += 1
        return self.inner.predict(item)

    def describe(self):
        return self.inner.describe()


def test_local_system_outputs_cached_as_strokes(tmp_path, capsys):
    from inkground_lib.core.ink import ink_from_lists

    items = make_items(5)
    sysm = CountingBox()
    path = cache.cache_path(tmp_path, "box")
    recs = asking.run_predictions(sysm, items, path, progress=True)
    assert "predict box" in capsys.readouterr().err  # the tqdm bar
    assert sysm.calls == 5 and all(r["raw_text"] is None for r in recs)
    assert ink_from_lists(recs[2]["strokes"]) == make_system("box").predict(items[2]).strokes
    again = asking.run_predictions(sysm, items, path, progress=False)
    assert sysm.calls == 5 and cache.stable_view(again) == cache.stable_view(recs)


def test_a_local_systems_records_are_written_in_groups_an_api_systems_one_by_one(server, tmp_path, monkeypatch):
    """Each write of a prediction record is fsynced: a local system's (answered again in milliseconds) are
    appended in groups of LOCAL_RECORDS_PER_WRITE, a paid API answer the moment it arrives."""
    syncs = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (syncs.append(fd), real(fd))[1])
    n = asking.LOCAL_RECORDS_PER_WRITE + 3
    path = cache.cache_path(tmp_path, "box")
    recs = asking.run_predictions(CountingBox(), make_items(n), path, progress=False)
    assert sorted(r["word_id"] for r in lines(path)) == sorted(r["word_id"] for r in recs)  # all, each once
    assert len(syncs) == 2  # one full group, then the rest at the end
    syncs.clear()
    asking.run_predictions(api_system(), make_items(6), tmp_path / "oa.jsonl", progress=False)
    assert len(syncs) == 6 and len(lines(tmp_path / "oa.jsonl")) == 6


def test_concurrency_limit(server, tmp_path):
    server.delay = 0.1
    items = make_items(8)
    asking.run_predictions(api_system(), items, tmp_path / "oa.jsonl", concurrency=3, progress=False)
    assert 2 <= server.max_in_flight <= 3 and server.hits() == 8  # limited, and really concurrent


def test_record_fields(server, tmp_path):
    items = make_items(1)
    rec = asking.run_predictions(api_system(), items, tmp_path / "oa.jsonl", progress=False)[0]
    for k in ("request_hash", "word_id", "page_id", "system", "model", "raw_text", "status", "finish_reason",
              "usage", "error", "attempts", "timestamp", "prompt_version"):
        assert k in rec
    assert rec["prompt_version"] == "t1" and rec["model"] == "fake-vl" and rec["usage"]["total_tokens"] > 0
    assert rec["raw_text"].startswith("<strokes>") and rec["attempts"] == 1


if __name__ == "__main__":  # the worker of test_kill_and_resume_equals_uninterrupted_run
    asking.run_predictions(api_system(), make_items(int(sys.argv[2])), Path(sys.argv[1]), concurrency=2,
                      progress=False)
