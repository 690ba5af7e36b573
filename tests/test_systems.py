"""Systems: API adapters end to end through the real openai / anthropic SDK clients against a loopback fake
server (retries, timeouts, truncation, refusals, secrets), the registry, and the local systems."""

from __future__ import annotations

import base64
import io
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakeserver import FakeServer, drop, http_error, ok, refusal, slow, truncated  # noqa: E402

from inkground_lib.core.ink import Ink, as_ink  # noqa: E402
from inkground_lib.evaluation.asking import run_predictions  # noqa: E402
from inkground_lib.evaluation.cache import cache_path  # noqa: E402
from inkground_lib.evaluation.systems.base import (
    Item,
    SystemConfigError,
    SystemUnavailable,
)
from inkground_lib.evaluation.systems.registry import (
    REGISTRY_FILE,
    make_system,
    list_systems,
    load_registry,
    system_kind,
)
from inkground_lib.evaluation.systems.retry import RetryPolicy, retry_after_seconds
from inkground_lib.core.secrets import scrub_secrets

KEY = "sk-test-SECRET-123"


def png(color=(200, 10, 10), size=(8, 8)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return buf.getvalue()


def make_request(word: str = "hello", variant: str | None = None):
    from inkground_lib.evaluation.prompt import PromptRequest

    meta = {"prompt_version": "test-1"}
    if variant:
        meta["variant"] = variant
    return PromptRequest("You trace handwriting.", [("text", f"Trace the word {word}"), ("image", png()),
                                                    ("text", "Your page:"), ("image", png((0, 90, 0)))], meta)


def make_item(word: str = "hello", i: int = 0, **kw) -> Item:
    return Item(f"w{i}-{word}", word, (10.0, 20.0, 110.0, 60.0), "p0", (200, 100),
                  request=make_request(word, **kw))


@pytest.fixture
def server():
    with FakeServer() as srv:
        yield srv


@pytest.fixture
def env(server, monkeypatch):
    monkeypatch.setenv("T_KEY", KEY)
    monkeypatch.setenv("T_OPENAI_URL", server.openai_url)
    monkeypatch.setenv("T_ANTHROPIC_URL", server.anthropic_url)
    return server


REG = {
    "oa": {"adapter": "openai", "model": "fake-vl", "api_key_env": "T_KEY", "base_url_env": "T_OPENAI_URL",
           "timeout": 0.5, "max_tokens": 4096},
    "an": {"adapter": "anthropic", "model": "fake-claude", "api_key_env": "T_KEY",
           "base_url_env": "T_ANTHROPIC_URL", "timeout": 0.5, "max_tokens": 4096},
}


class Sleeps(list):
    def __call__(self, s):
        self.append(s)


def system(name, **kw):
    sleeps = Sleeps()
    pol = RetryPolicy(max_attempts=kw.pop("max_attempts", 5), base_delay=0.01, max_delay=0.05, sleep=sleeps)
    return make_system(name, registry=REG, retry=pol, **kw), sleeps


@pytest.mark.parametrize("name", ["oa", "an"])
def test_retries_429_500_timeout_then_ok(env, name):
    sysm, sleeps = system(name)
    env.script(http_error(429, retry_after=0), http_error(500), slow(1.5), ok())
    out = sysm.predict(make_item())
    assert out.status == "ok" and out.attempts == 4
    assert out.text.startswith("<strokes>") and out.error is None
    assert env.hits() == 4
    assert len(sleeps) == 3 and sleeps[0] < sleeps[1] < sleeps[2]  # exponential backoff
    assert out.usage and out.finish_reason in ("stop", "end_turn")
    # the SDKs' own retries are off: every attempt went out as retry 0 of the SDK
    assert {r.headers.get("x-stainless-retry-count", "0") for r in env.requests} == {"0"}


def test_openai_request_shape(env):
    sysm, _ = system("oa")
    out = sysm.predict(make_item())
    assert out.status == "ok"
    body = env.requests[-1].body
    assert body["temperature"] == 0 and body["max_tokens"] == 4096 and body["model"] == "fake-vl"
    assert body["messages"][0] == {"role": "system", "content": "You trace handwriting."}
    parts = body["messages"][1]["content"]
    imgs = [p for p in parts if p["type"] == "image_url"]
    assert len(imgs) == 2 and all(p["image_url"]["url"].startswith("data:image/png;base64,") for p in imgs)
    assert base64.b64decode(imgs[0]["image_url"]["url"].split(",", 1)[1]) == png()
    assert [p["type"] for p in parts] == ["text", "image_url", "text", "image_url"]
    assert env.requests[-1].headers["authorization"] == f"Bearer {KEY}"


def test_anthropic_request_shape(env):
    sysm, _ = system("an")
    assert sysm.predict(make_item()).status == "ok"
    r = env.requests[-1]
    assert r.path == "/v1/messages"
    body = r.body
    # the default for an Anthropic entry is "not sent": no sampling field at all (providers.yaml, anthropic)
    assert not {"temperature", "top_p", "top_k"} & set(body)
    assert body["max_tokens"] == 4096 and body["system"] == "You trace handwriting."
    assert r.headers["anthropic-version"] == "2026-10-21"  # the pinned SDK's API version
    blocks = body["messages"][0]["content"]
    imgs = [b for b in blocks if b["type"] == "image"]
    assert len(imgs) == 2 and imgs[1]["source"]["media_type"] == "image/png"
    assert base64.b64decode(imgs[1]["source"]["data"]) == png((0, 90, 0))
    assert KEY in (r.headers.get("x-api-key", "") + r.headers.get("authorization", ""))


def test_temperature_null_is_not_sent(env):
    sysm, _ = system("oa", temperature=None)
    assert sysm.predict(make_item()).status == "ok"
    assert "temperature" not in env.requests[-1].body


def test_an_anthropic_temperature_is_refused_before_any_request(env):
    for field in ("temperature", "top_p", "top_k"):
        with pytest.raises(SystemConfigError, match=f"refuses {field}.*anthropic-2026-10-21-no-sampling"):
            system("an", **{field: 0.5 if field != "top_k" else 5})
    assert env.hits() == 0
    # an older model on the previous API version takes it, in the body, with that version's header
    sysm, _ = system("an", api_version="2023-06-01", temperature=0)
    assert sysm.predict(make_item()).status == "ok"
    r = env.requests[-1]
    assert r.body["temperature"] == 0 and r.headers["anthropic-version"] == "2023-06-01"
    with pytest.raises(SystemConfigError, match="api_version"):
        system("an", api_version="2099-01-01")


@pytest.mark.parametrize("name,reason", [("oa", "length"), ("an", "max_tokens")])
def test_truncated_answer_kept(env, name, reason):
    sysm, _ = system(name)
    env.script(truncated("<strokes><s1><points>'x1y2', 'x3"))
    out = sysm.predict(make_item())
    assert out.status == "truncated" and out.finish_reason == reason and out.attempts == 1
    assert out.text == "<strokes><s1><points>'x1y2', 'x3" and out.is_model_output


@pytest.mark.parametrize("name", ["oa", "an"])
def test_refusal_recorded(env, name):
    sysm, _ = system(name)
    env.script(refusal("I won't trace that."))
    out = sysm.predict(make_item())
    assert out.status == "refusal" and out.text == "I won't trace that." and out.attempts == 1


@pytest.mark.parametrize("name", ["oa", "an"])
def test_retries_are_bounded(env, name):
    sysm, sleeps = system(name, max_attempts=3)
    env.script(*[http_error(503)] * 5)
    out = sysm.predict(make_item())
    assert out.status == "error" and out.attempts == 3 and env.hits() == 3 and len(sleeps) == 2
    assert "HTTP 503" in out.error and not out.is_model_output


@pytest.mark.parametrize("name", ["oa", "an"])
def test_4xx_not_retried_and_key_scrubbed(env, name):
    sysm, sleeps = system(name)
    env.script(http_error(401, echo_auth=True))
    out = sysm.predict(make_item())
    assert out.status == "error" and out.attempts == 1 and env.hits() == 1 and not sleeps
    assert "HTTP 401" in out.error
    assert KEY not in out.error and "SECRET" not in out.error and "<T_KEY>" in out.error
    assert str(env.port) not in out.error  # the (private) base URL is scrubbed too
    env.script(http_error(400))
    assert sysm.predict(make_item()).attempts == 1


def test_connection_drop_is_retried(env):
    sysm, sleeps = system("oa")
    env.script(drop(), ok("<strokes></strokes>"))
    out = sysm.predict(make_item())
    assert out.status == "ok" and out.attempts == 2 and out.text == "<strokes></strokes>" and len(sleeps) == 1


def test_retry_after_is_honoured():
    pol = RetryPolicy(base_delay=1.0, max_delay=60.0, jitter=0.25, max_retry_after=30.0)
    assert pol.delay(1, "k", retry_after=7.0) == 7.0
    assert pol.delay(1, "k", retry_after=500.0) == 30.0
    d1 = [pol.delay(k, "k") for k in (1, 2, 3)]
    assert d1 == [pol.delay(k, "k") for k in (1, 2, 3)]  # seeded: reproducible
    assert 1.0 <= d1[0] < 1.25 and 2.0 <= d1[1] < 2.5 and 4.0 <= d1[2] < 5.0
    assert retry_after_seconds({"retry-after-ms": "1500"}) == 1.5 and retry_after_seconds({"retry-after": "3"}) == 3.0


def test_missing_env_fails_before_any_request(server, monkeypatch):
    monkeypatch.delenv("T_KEY", raising=False)
    monkeypatch.setenv("T_OPENAI_URL", server.openai_url)
    with pytest.raises(SystemConfigError, match="environment variable T_KEY is not set"):
        make_system("oa", registry=REG)
    monkeypatch.setenv("T_KEY", KEY)
    monkeypatch.delenv("T_OPENAI_URL")
    with pytest.raises(SystemConfigError, match="T_OPENAI_URL") as e:
        make_system("oa", registry=REG)
    assert KEY not in str(e.value)
    assert server.hits() == 0


def test_no_secret_in_run_files_or_errors(env, tmp_path):
    """A run with successes and failures of every kind: neither the key nor the base URL reaches a file."""
    sysm, _ = system("oa", max_attempts=2)
    items = [make_item(w, i) for i, w in enumerate(["alpha", "beta", "gamma", "delta"])]
    env.script(http_error(401, echo_auth=True), match="beta")
    env.script(http_error(500, echo_auth=True), http_error(500, echo_auth=True), match="gamma")
    env.script(refusal(f"no (you sent {KEY})"), match="delta")  # even a model echoing the key is scrubbed
    run_dir = tmp_path / "run"
    recs = run_predictions(sysm, items, cache_path(run_dir, "oa"), progress=False)
    assert [r["status"] for r in recs] == ["ok", "error", "error", "refusal"]
    blob = b"".join(p.read_bytes() for p in run_dir.rglob("*") if p.is_file())
    assert b"alpha" in blob or b"w0-alpha" in blob  # the files were written
    assert KEY.encode() not in blob and b"SECRET" not in blob
    assert f"127.0.0.1:{env.port}".encode() not in blob
    assert all(KEY not in json.dumps(r) for r in recs)
    assert env.hits() >= 5 and all(r.headers["authorization"] == f"Bearer {KEY}" for r in env.requests)
    assert all(KEY not in json.dumps(sysm.describe()) and env.openai_url not in json.dumps(sysm.describe())
               for _ in [0])


def test_scrub_secrets_patterns():
    s = scrub_secrets("key sk-proj-abcdEFGH1234 and Bearer abc.def-123 and AIzaSyA1234567890abcdef url "
                        "http://10.0.0.5:8000/v1", [("URL", "http://10.0.0.5:8000/v1"), ("URL", "10.0.0.5")])
    assert "sk-proj" not in s and "abc.def" not in s and "AIza" not in s and "10.0.0.5" not in s
    assert "<URL>" in s and "<redacted>" in s


# ---------------------------------------------------------------------------------------------- registry

def test_packaged_registry_has_the_paper_systems():
    reg = load_registry(use_env=False)
    for name in ["gemini-3.1-pro", "claude-opus-4.8", "kimi-k3", "qwen3-vl-32b", "molmo-7b-d", "inksight",
                 "skeleton", "font", "box", "reference", "replay"]:
        assert name in reg
    assert reg["gemini-3.1-pro"]["reported_as"] == "Gemini-3.1-Pro"
    assert reg["molmo-7b-d"]["variant"] == "one-image"
    assert reg["claude-opus-4.8"]["temperature"] is None  # Opus >= 4.7 rejects temperature
    assert {system_kind(n, reg) for n in reg} == {"api", "local", "replay", "specialist"}
    text = REGISTRY_FILE.read_text()
    assert "sk-" not in text and "api_key:" not in text


def test_paper_entries_run_through_env(server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.anthropic_url)
    monkeypatch.setenv("VLLM_API_KEY", KEY)
    monkeypatch.setenv("VLLM_BASE_URL", server.openai_url)
    claude = make_system("claude-opus-4.8", retry=RetryPolicy(max_attempts=1))
    assert claude.predict(make_item()).status == "ok"
    b = server.requests[-1].body
    assert b["model"] == "claude-opus-4-8" and "temperature" not in b and b["max_tokens"] == 4096
    qwen = make_system("qwen3-vl-32b", retry=RetryPolicy(max_attempts=1))
    assert qwen.predict(make_item()).status == "ok"
    b = server.requests[-1].body
    assert b["model"] == "Qwen/Qwen3-VL-32B-Instruct" and b["temperature"] == 0 and b["max_tokens"] == 16384
    # Molmo is sent the one-image prompt variant; a two-image request is refused with a clear message
    molmo = make_system("molmo-7b-d", retry=RetryPolicy(max_attempts=1))
    with pytest.raises(SystemConfigError, match="one-image"):
        molmo.predict(make_item(variant="two-image"))
    built = []

    def builder(variant):
        built.append(variant)
        return make_request("hello", variant=variant)

    it = Item("w0", "hello", (10, 20, 110, 60), "p0", (200, 100), request=builder)
    assert molmo.predict(it).status == "ok" and qwen.predict(it).status == "ok"
    assert molmo.request_key(it) != qwen.request_key(it)
    assert set(built) == {"one-image", "two-image"}  # each system is sent its own variant


def test_one_yaml_entry_adds_a_model(env, tmp_path, monkeypatch):
    extra = tmp_path / "mine.yaml"
    extra.write_text("my-vl: {adapter: openai, model: org/My-VL-7B, api_key_env: T_KEY, "
                     "base_url_env: T_OPENAI_URL, label: My-VL-7B}\n"
                     "oa-long: {extends: qwen3-vl-32b, max_tokens: 32768}\n")
    reg = load_registry(extra, use_env=False)
    assert "my-vl" in reg and reg["oa-long"]["max_tokens"] == 32768 and reg["oa-long"]["reported_as"] is None
    s = make_system("my-vl", extra=extra)
    assert s.label == "My-VL-7B" and s.kind == "api"
    assert s.predict(make_item()).status == "ok" and env.requests[-1].body["model"] == "org/My-VL-7B"
    monkeypatch.setenv("INKGROUND_SYSTEMS", str(extra))
    assert "my-vl" in list_systems(load_registry())


@pytest.mark.parametrize("entry,msg", [
    ("x: {adapter: openai, model: m, api_key: sk-abc, base_url_env: U}", "environment variable"),
    ("x: {adapter: openai, model: m, api_key_env: K, base_url: 'http://10.0.0.1'}", "environment variable"),
    ("x: {adapter: nope}", "adapter"),
    ("x: {adapter: box, shape: line, colour: red}", "unknown field"),
    ("x: {adapter: openai, model: m, api_key_env: 'not a var'}", "api_key_env"),
    ("x: {adapter: openai, model: m, api_key_env: K, max_tokens: -5}", "max_tokens"),
    ("x: {extends: nothing-like-this}", "extends"),
    ("- just a list", "mapping"),
])
def test_bad_registry_entries_refused(tmp_path, entry, msg):
    p = tmp_path / "bad.yaml"
    p.write_text(entry + "\n")
    with pytest.raises(SystemConfigError, match=msg) as e:
        load_registry(p, use_env=False)
    assert str(p) in str(e.value) and "sk-abc" not in str(e.value)


def test_yaml_is_loaded_safely(tmp_path):
    p = tmp_path / "evil.yaml"
    p.write_text("x: !!python/object/apply:os.system ['echo pwned']\n")
    with pytest.raises(SystemConfigError, match="not valid YAML"):
        load_registry(p, use_env=False)


def test_inksight_unavailable_is_clear(monkeypatch, tmp_path):
    monkeypatch.delenv("INKSIGHT_MODEL_DIR", raising=False)
    with pytest.raises(SystemUnavailable, match="INKSIGHT_MODEL_DIR"):
        make_system("inksight")
    monkeypatch.setenv("INKSIGHT_MODEL_DIR", str(tmp_path))  # no SavedModel there
    with pytest.raises(SystemUnavailable, match="InkSight"):
        make_system("inksight")


# ------------------------------------------------------------------------------------------ local systems

def local_item(text="Hello", box=(40.0, 30.0, 200.0, 80.0), ref=None, image=None):
    ref = ref if ref is not None else as_ink([[[50, 60, 0], [100, 40, 10], [190, 70, 20]], [[120, 35, 30]]])
    return Item("w1", text, box, "p1", (300, 120), reference=ref, image=image)


def test_box_baseline_inside_box():
    it = local_item()
    for shape in ("line", "zigzag"):
        out = make_system("box", shape=shape).predict(it)
        assert out.status == "ok" and isinstance(out.strokes, Ink) and len(out.strokes) == 1
        x0, y0, x1, y1 = out.strokes.bbox()
        assert x0 == 40 and x1 == 200 and 30 <= y0 <= y1 <= 80
    line = make_system("box").predict(it).strokes[0]
    assert np.allclose(line[:, 1], 55.0)  # through the box centre
    zz = make_system("box", shape="zigzag").predict(it).strokes[0]
    assert len(zz) > 4 and set(np.round(zz[:, 1], 6)) == {42.5, 67.5}


def test_font_baseline_fits_box_and_is_readable():
    it = local_item("Hello", box=(40.0, 30.0, 200.0, 80.0))
    out = make_system("font").predict(it)
    assert out.status == "ok" and len(out.strokes) >= 4
    x0, y0, x1, y1 = out.strokes.bbox()
    assert 40 - 1e-6 <= x0 and x1 <= 200 + 1e-6 and 30 - 1e-6 <= y0 and y1 <= 80 + 1e-6
    assert np.isclose(y1 - y0, 50) or np.isclose(x1 - x0, 160)  # fitted: touches the box on one axis
    assert np.isnan(out.strokes[0][:, 2]).all()
    # "readable": the offline OCR reads the rendered word
    from inkground_lib.components.ocr import make_engine
    from inkground_lib.core.render import render_ink

    assert make_engine("rapidocr").read([render_ink(out.strokes)])[0].casefold() == "hello"
    assert make_system("font", font="scripts").predict(it).strokes != out.strokes


def test_reference_system_returns_reference():
    it = local_item()
    out = make_system("reference").predict(it)
    assert out.status == "ok" and out.strokes == it.reference
    it.reference = None
    assert make_system("reference").predict(it).status == "error"


def test_skeleton_system_traces_crop_in_page_pixels():
    import cv2

    img = np.full((120, 300, 3), 235, np.uint8)
    cv2.line(img, (60, 55), (180, 55), (20, 20, 20), 4)
    out = make_system("skeleton").predict(local_item(image=img))
    assert out.status == "ok" and out.strokes.n_points >= 2
    x0, y0, x1, y1 = out.strokes.bbox()
    assert 50 <= x0 <= 70 and 170 <= x1 <= 190 and 50 <= y0 and y1 <= 60  # page pixels, not crop pixels


def test_replay(tmp_path):
    from inkground_lib.evaluation.systems.replay import replay_record

    p = tmp_path / "rec.jsonl"
    item = lambda wid: Item(wid, "x", (0, 0, 1, 1), "p", (10, 10))  # noqa: E731
    lines = [replay_record(item("w1"), "<strokes>A</strokes>", system="gemini"),
             replay_record(item("w1"), "<strokes>second</strokes>", system="gemini"),
             {**replay_record(item("w2"), status="truncated", finish_reason="length"), "text": "plain"},
             replay_record(item("w3"), status="error"),
             replay_record(item("w4"), strokes=as_ink([[[1, 2, np.nan], [3, 4, np.nan]]]))]
    p.write_text("".join(json.dumps(r) + "\n" for r in lines) + '{"word_id": "w5", "raw_te')  # torn tail
    rep = make_system("replay", path=str(p))
    get = lambda wid: rep.predict(item(wid))  # noqa: E731
    assert get("w1").text == "<strokes>A</strokes>" and get("w1").status == "ok"  # first wins
    assert get("w2").text == "plain" and get("w2").status == "truncated"
    for missing in ("w3", "w5", "w9"):
        o = get(missing)
        assert o.status == "error" and "no recorded output" in o.error and o.text is None
    assert get("w4").strokes == as_ink([[[1, 2], [3, 4]]])
    only = make_system("replay", path=str(p), source="gemini")
    assert only.predict(item("w2")).status == "error"
    with pytest.raises(SystemConfigError, match="INKGROUND_REPLAY"):
        make_system("replay")


def test_replay_keys_answers_by_dataset_page_word_and_request(tmp_path):
    """Issue 44: on ed2f909 a replay file matched answers by word id only, so answers recorded on one dataset
    were scored valid for the words of another dataset reusing those ids (exit 0)."""
    from conftest import make_tiny_dataset

    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.evaluation.items import make_items
    from inkground_lib.evaluation.systems.replay import replay_record

    a = load_dataset(make_tiny_dataset(tmp_path / "a", pages=2, words=3))
    b_dir = make_tiny_dataset(tmp_path / "b", pages=2, words=3)  # the same ids, texts and boxes: other photos
    from PIL import Image
    for page in sorted((b_dir / "pages").glob("*.jpg")):
        Image.new("RGB", (200, 100), (200, 220, 240)).save(page)
    b = load_dataset(b_dir)
    p = tmp_path / "answers.jsonl"
    p.write_text("".join(json.dumps(replay_record(it, "<strokes>recorded on a</strokes>")) + "\n"
                         for it in make_items(a, with_prompt=False)))
    rep = make_system("replay", path=str(p))
    assert all(rep.predict(it).status == "ok" for it in make_items(a, with_prompt=False))
    outs = [rep.predict(it) for it in make_items(b, with_prompt=False)]
    assert all(o.status == "error" and "recorded for another word" in o.error for o in outs)
    # an edited word (its text) of the same dataset is another request
    it = make_items(a, with_prompt=False)[0]
    it.text = "edited"
    assert rep.predict(it).status == "error"
    # a line without the key is refused, naming the line and how to write it
    p.write_text(json.dumps({"word_id": "p000-w0", "raw_text": "x"}) + "\n")
    with pytest.raises(SystemConfigError, match=r"line 1: field word_key: missing.*replay_record"):
        make_system("replay", path=str(p))


def test_replay_of_a_cache_file(tmp_path):
    it = local_item()
    cp = cache_path(tmp_path, "box")
    run_predictions(make_system("box"), [it], cp, progress=False)
    rep = make_system("replay", path=str(cp), source="box")
    assert rep.predict(it).strokes == make_system("box").predict(it).strokes


def test_items_from_a_dataset_with_the_real_prompt(env, tmp_path):
    from conftest import make_tiny_dataset

    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.evaluation.prompt import example_from_page

    ds = load_dataset(make_tiny_dataset(tmp_path / "ds", pages=2, words=2))
    example = example_from_page(ds.pages[0], ds.pages[0].words[0])
    page = ds.pages[1]
    items = [Item.with_prompt(page, w, example, grid=20, max_side=256) for w in page.words]
    assert items[0].page_size == (200, 100) and items[0].reference == page.words[0].ink
    one = make_system("oa", registry={"oa": {**REG["oa"], "variant": "one-image"}}, retry=RetryPolicy(1))
    two, _ = system("oa")
    assert items[0].request_for("one-image").meta["variant"] == "one-image"
    recs = run_predictions(one, items, cache_path(tmp_path / "run", "one"), progress=False)
    assert [r["status"] for r in recs] == ["ok", "ok"] and recs[0]["prompt_version"]
    body = env.requests[-1].body
    assert sum(p["type"] == "image_url" for p in body["messages"][1]["content"]) == 1
    assert two.predict(items[1]).status == "ok"
    assert sum(p["type"] == "image_url" for p in env.requests[-1].body["messages"][1]["content"]) == 2
    assert one.request_key(items[0]) != two.request_key(items[0]) != two.request_key(items[1])
    # local systems run on the same items (the skeleton reads the page photo from its path)
    assert make_system("skeleton").predict(items[0]).status == "ok"


# ---- issue 33: a provider URL never names a cloud metadata service or a link-local address

METADATA_SPELLINGS = ["169.254.169.254", "2852039166", "0xa9fea9fe", "0251.0376.0251.0376", "0xa9.0xfe.0xa9.0xfe",
                      "169.254.43518", "[::ffff:169.254.169.254]", "[::ffff:a9fe:a9fe]", "[64:ff9b::a9fe:a9fe]",
                      "[fe80::1]", "[fd00:ec2::254]", "100.100.100.200", "169.254.170.2", "metadata.google.internal",
                      "METADATA.google.internal.", "instance-data"]


@pytest.mark.parametrize("host", METADATA_SPELLINGS)
def test_default_base_url_refuses_metadata_and_link_local_hosts_in_every_spelling(tmp_path, host):
    extra = tmp_path / "mine.yaml"
    extra.write_text(f"x: {{adapter: openai, model: m, api_key_env: T_KEY, default_base_url: 'https://{host}/v1'}}\n")
    with pytest.raises(SystemConfigError, match=r"mine\.yaml: system x: field default_base_url: must be a public "
                                                r"https:// URL \(its host is (a link-local address|a cloud metadata)"):
        load_registry(extra, use_env=False)


@pytest.mark.parametrize("host", METADATA_SPELLINGS)
def test_an_environment_base_url_to_metadata_is_refused_before_any_connection(host):
    from inkground_lib.core.secrets import CredentialError, check_base_url

    with pytest.raises(CredentialError, match=r"environment variable MY_URL: the base URL's host is .*(link-local|"
                                              r"metadata)"):
        check_base_url(f"http://{host}:8000/v1", "MY_URL")


def test_private_and_public_provider_urls_stay_possible(tmp_path):
    from inkground_lib.core.secrets import check_base_url, public_url_problem

    for url in ("http://192.168.1.20:8000/v1", "http://10.0.0.5/v1", "http://127.0.0.1:8000/v1",
                "https://vllm.lab.example.org/v1"):
        assert check_base_url(url, "VLLM_BASE_URL") == url  # a self-hosted server on a private network
    assert public_url_problem("https://api.moonshot.ai/v1") is None
    for url, why in (("https://10.0.0.5/v1", "not a public address"), ("https://0x7f.1/v1", "127.0.0.1"),
                     ("http://api.moonshot.ai/v1", "not an https"), ("https://localhost/v1", "not a public name")):
        assert why in public_url_problem(url)
    load_registry(use_env=False)  # the packaged entries all pass


# ---- issue 44: a host *name* that resolves to a metadata (or, for a provider, a private) address is refused too,
# ---- every address checked, the connection pinned to a checked one (the resolver is replaced: no DNS here)

def _resolving(monkeypatch, answers):
    """Make core.http_client.resolve answer ``answers`` (a list of addresses, or a callable of the host)."""
    from inkground_lib.core import http_client

    asked = []

    def fake(host, port):
        asked.append(host)
        got = answers(host) if callable(answers) else answers
        if isinstance(got, BaseException):
            raise got
        return list(got)

    monkeypatch.setattr(http_client, "resolve", fake, raising=False)  # (ed2f909 resolved nothing)
    return asked


@pytest.mark.parametrize("name", ["oa", "an"])
@pytest.mark.parametrize("answers", [["169.254.169.254"], ["93.184.215.14", "169.254.169.254"], ["fd00:ec2::254"],
                                     ["::ffff:169.254.169.254"]], ids=["metadata", "one-of-two", "aws-v6", "mapped"])
def test_a_name_that_resolves_to_a_metadata_address_is_refused_before_any_request(env, monkeypatch, name, answers):
    """Issue 44: on ed2f909 a host name resolving to 169.254.169.254 passed the checks and was sent the key."""
    var = "T_OPENAI_URL" if name == "oa" else "T_ANTHROPIC_URL"
    url = env.openai_url if name == "oa" else env.anthropic_url
    monkeypatch.setenv(var, url.replace("127.0.0.1", "internal-alias.example"))
    asked = _resolving(monkeypatch, answers)
    with pytest.raises(SystemConfigError, match=rf"system {name}: the base URL's host resolves to .* which is a "
                                                r"(link-local address|cloud metadata)") as e:
        make_system(name, registry=REG)
    assert asked == ["internal-alias.example"] and "internal-alias" not in str(e.value) and env.hits() == 0


def test_a_provider_url_must_resolve_to_public_addresses_only(monkeypatch, tmp_path):
    """A registry's default_base_url (a provider's) is checked as it resolves: a private, loopback or shared
    address refuses it, before any request."""
    from inkground_lib.evaluation.systems.registry import make_system as get

    monkeypatch.setenv("T_KEY", KEY)
    reg = {"p": {"adapter": "openai", "model": "m", "api_key_env": "T_KEY", "base_url_env": "T_UNSET_URL",
                 "default_base_url": "https://api.provider.example/v1"}}
    monkeypatch.delenv("T_UNSET_URL", raising=False)
    for addr in ("127.0.0.1", "10.1.2.3", "100.64.0.1", "::1"):
        _resolving(monkeypatch, [addr])
        with pytest.raises(SystemConfigError, match=rf"resolves to {re.escape(addr)}, which is not a public address"):
            get("p", registry=reg)
    _resolving(monkeypatch, ["93.184.215.14"])
    assert get("p", registry=reg).name == "p"  # a public address: fine (nothing is sent until it predicts)


def test_the_connection_is_pinned_to_the_checked_address(env, monkeypatch):
    """DNS rebinding: the name resolved (loopback, allowed for a self-hosted server) when the client is made;
    resolving it to the metadata address afterwards changes nothing: every request goes to the checked one."""
    monkeypatch.setenv("T_OPENAI_URL", env.openai_url.replace("127.0.0.1", "vllm.lab.test"))
    _resolving(monkeypatch, ["127.0.0.1"])
    sysm = make_system("oa", registry=REG, retry=RetryPolicy(1))
    asked = _resolving(monkeypatch, ["169.254.169.254"])  # the answer changes after the check
    for i in range(2):
        assert sysm.predict(make_item("alpha", i)).status == "ok"
    assert asked == [] and env.hits() == 2


def test_a_name_resolved_only_at_the_first_connection_is_checked_then(env, monkeypatch):
    """No resolver answer when the client is made (no network): checked at the first connection, and a
    refusal then stops the run naming the address, not retried, nothing sent."""
    import socket

    monkeypatch.setenv("T_OPENAI_URL", env.openai_url.replace("127.0.0.1", "late.lab.test"))
    _resolving(monkeypatch, socket.gaierror(-3, "Temporary failure in name resolution"))
    sysm = make_system("oa", registry=REG, retry=RetryPolicy(max_attempts=3, base_delay=0.01, sleep=lambda s: None))
    asked = _resolving(monkeypatch, ["169.254.169.254"])
    with pytest.raises(SystemConfigError, match="resolves to 169.254.169.254"):
        sysm.predict(make_item("alpha", 0))
    assert asked == ["late.lab.test"] and env.hits() == 0
