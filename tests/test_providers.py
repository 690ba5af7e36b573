"""Provider-true requests, checked as a user would meet them: `inkground check` and `predict` (with and without
--dry-run) for the shipped systems and for a user's own Claude and Molmo entries, against a loopback server that
answers as each provider documents (400 on a refused parameter, 400 / 413 on an oversized image, a quota 429),
reading every request it records. One test per rule of providers.yaml."""

from __future__ import annotations

import base64
import io
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import make_tiny_dataset  # noqa: E402
from fakeserver import (  # noqa: E402
    FakeServer,
    http_error,
    ok,
    provider_behaviour,
    quota_error,
    request_images,
    slow,
)

from inkground_lib.cli import main  # noqa: E402
from inkground_lib.evaluation.asking import QuotaExhausted, run_predictions  # noqa: E402
from inkground_lib.evaluation.cache import cache_path, load_cache  # noqa: E402
from inkground_lib.evaluation.systems.base import Item, SystemConfigError  # noqa: E402
from inkground_lib.evaluation.systems.providers import (  # noqa: E402
    PROVIDERS_FILE,
    ImageLimits,
    load_providers,
    rule_advice,
    rule_problems,
)
from inkground_lib.evaluation.systems.registry import make_system, load_registry  # noqa: E402
from inkground_lib.evaluation.systems.retry import RetryPolicy  # noqa: E402

KEY = "sk-prov-SECRET-25"
SHIPPED_API = ["gemini-3.1-pro", "claude-opus-4.8", "kimi-k3", "qwen3-vl-32b", "molmo-7b-d"]
SAMPLE = {"temperature": 0.5, "top_p": 0.9, "top_k": 5}


# ------------------------------------------------------------------------------------------- the rules

def _rules():
    return [(p, r) for p in load_providers().values() for r in p.rules]


def _entry(provider, rule, **fields):
    model = (rule.models[0].replace("*", "") if rule.models else "some-model")
    cfg = {"adapter": provider.adapter, "provider": provider.name, "model": model, "api_key_env": "K"}
    if provider.api_versions:  # the version the rule names, else another one, so only this rule is at stake
        others = [v for v in provider.api_versions if v != provider.api_versions[0]]
        cfg["api_version"] = rule.api_version or (others[0] if others else provider.api_versions[0])
    for f in ("temperature", "top_p", "top_k"):
        cfg.setdefault(f, None)  # nothing sent but what the case sets
    cfg.update(fields)
    return cfg


def _breaking(rule) -> dict:
    if rule.kind in ("refuse", "exclusive"):
        return {f: SAMPLE[f] for f in rule.value}
    if rule.kind in ("only", "advise"):
        return {f: 0.3 for f in rule.value}
    if rule.kind == "range":
        return {f: hi + 1 for f, (lo, hi) in rule.value.items()}
    raise AssertionError(rule.kind)


def _keeping(rule) -> dict:
    if rule.kind == "refuse":
        return {}
    if rule.kind == "exclusive":
        f = rule.value[0]
        return {f: SAMPLE[f]}
    if rule.kind in ("only", "advise"):
        return {f: v[0] for f, v in rule.value.items()}
    return {f: lo for f, (lo, hi) in rule.value.items()}


@pytest.mark.parametrize("provider,rule", _rules(), ids=[r.id for _, r in _rules()])
def test_each_rule_refuses_what_it_says_and_accepts_the_rest(provider, rule):
    bad, good = _entry(provider, rule, **_breaking(rule)), _entry(provider, rule, **_keeping(rule))
    if rule.kind == "advise":  # accepted, with a warning naming the rule
        assert not rule_problems(bad) and any(rule.id in a for a in rule_advice(bad))
        assert not any(rule.id in a for a in rule_advice(good))
        return
    assert any(rule.id in p and rule.source in p for p in rule_problems(bad)), rule_problems(bad)
    assert not any(rule.id in p for p in rule_problems(good)), rule_problems(good)
    if rule.models:  # a model the rule does not name is not held to it
        other = {**bad, "model": "zz-unlisted-model"}
        assert not any(rule.id in p for p in rule_problems(other))


def test_every_rule_and_limit_names_its_source():
    text = PROVIDERS_FILE.read_text()
    for p in load_providers().values():
        for r in p.rules:
            assert r.source.strip() and r.source in text
        if p.images.any:
            assert p.images.source.strip()


def test_the_anthropic_api_version_is_the_pinned_sdks():
    from anthropic._constants import ANTHROPIC_API_VERSION

    assert load_providers()["anthropic"].api_version == ANTHROPIC_API_VERSION == "2026-10-21"


def test_shipped_entries_break_no_rule_and_send_what_their_provider_takes():
    from inkground_lib.evaluation.systems.providers import provider_of, sampling_for

    reg = load_registry(use_env=False)
    sent = {n: sampling_for(reg[n], provider_of(reg[n])) for n in SHIPPED_API}
    assert all(not rule_problems(reg[n]) for n in SHIPPED_API)
    assert sent == {"gemini-3.1-pro": {}, "claude-opus-4.8": {}, "kimi-k3": {}, "qwen3-vl-32b": {"temperature": 0},
                    "molmo-7b-d": {"temperature": 0}}
    # an Anthropic entry that says nothing sends nothing (the default is "not sent")
    assert sampling_for({"adapter": "anthropic"}, provider_of({"adapter": "anthropic"})) == {}


def test_request_keys_of_entries_without_new_fields_are_unchanged(monkeypatch):
    """A cache made before the provider table stays valid: the hashed params of an entry that sets none of the
    new fields are the old ones, value for value."""
    monkeypatch.setenv("K", KEY)
    monkeypatch.setenv("U", "http://127.0.0.1:9/v1")
    s = make_system("x", registry={"x": {"adapter": "openai", "model": "m", "api_key_env": "K", "base_url_env": "U"}})
    assert s.answer_params() == {"adapter": "openai", "temperature": 0, "max_tokens": 16384, "variant": "two-image",
                                 "extra_body": {}}


# ------------------------------------------------------------------------ the CLI against the provider

def _photo(w, h, seed=0, noisy=False, dot=None, grain=False):
    """A page photo: plain paper, colour noise (``noisy``: nothing compresses) or light grain (``grain``: paper
    that compresses badly but keeps a red dot findable)."""
    rng = np.random.default_rng(seed)
    if noisy:
        a = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    elif grain:
        a = rng.integers(180, 256, (h, w, 3), dtype=np.uint8)
    else:
        a = np.full((h, w, 3), 245, np.uint8)
    if dot is not None:
        yy, xx = np.mgrid[:h, :w]
        a[(xx - dot[0]) ** 2 + (yy - dot[1]) ** 2 <= 12 ** 2] = (230, 20, 20)
    return a


def noisy_dataset(root: Path, pages: int = 2, size=(1024, 1448)) -> Path:
    """Pages of pure colour noise (the hostile case for PNG: nothing compresses), 3 words a page."""
    from inkground_lib.core.dataset import Page, Word, write_manifest
    from inkground_lib.core.ink import as_ink

    (root / "pages").mkdir(parents=True, exist_ok=True)
    plist = []
    for i in range(pages):
        pid = f"p{i:03d}"
        img = root / "pages" / f"{pid}.png"
        Image.fromarray(_photo(*size, seed=i, noisy=True)).save(img)
        ws = []
        for j in range(3):
            x0 = 100 + 250 * j
            ink = as_ink([[[x0, 400, 0], [x0 + 150, 460, 10]]])
            ws.append(Word(f"{pid}-w{j}", f"p{i}w{j}", (x0, 380, x0 + 150, 480), ink, pid,
                           "test" if j == 0 else "train", ink))
        plist.append(Page(pid, img, f"writer{i}", size[0], size[1], ws))
    write_manifest(root, "noisy", "synth", "true ink", {"seed": 0}, plist)
    return root


@pytest.fixture
def cli(tmp_path, monkeypatch):
    """A user's own registry file (INKGROUND_SYSTEMS), keys and base URLs of every shipped provider pointed at
    loopback servers that answer as those providers document."""
    reg = tmp_path / "mine.yaml"
    monkeypatch.setenv("INKGROUND_SYSTEMS", str(reg))
    servers = {}
    with FakeServer(enforce=provider_behaviour("anthropic"), models=["claude-opus-4-8", "claude-sonnet-4-6"]) as a, \
            FakeServer(enforce=provider_behaviour("molmo"), models=["allenai/Molmo-7B-D-0924"]) as m, \
            FakeServer(enforce=provider_behaviour("google-gemini"), models=["gemini-3.1-pro-preview"]) as g, \
            FakeServer(enforce=provider_behaviour("moonshot"), models=["kimi-k3"]) as k:
        servers.update(anthropic=a, molmo=m, gemini=g, moonshot=k)
        for var in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "MOONSHOT_API_KEY"):
            monkeypatch.setenv(var, KEY)
        monkeypatch.delenv("VLLM_API_KEY", raising=False)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", a.anthropic_url)
        monkeypatch.setenv("VLLM_BASE_URL", m.openai_url)
        monkeypatch.setenv("GEMINI_BASE_URL", g.openai_url)
        monkeypatch.setenv("MOONSHOT_BASE_URL", k.openai_url)
        yield reg, servers, tmp_path


def run_cli(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    assert KEY not in out + err
    return code, out, err


def row(out, system):
    return next(line for line in out.splitlines() if line.split()[:1] == [system])


def test_a_users_claude_entry_with_a_temperature_is_refused_offline(cli, capsys):
    reg, srv, tmp = cli
    reg.write_text("my-claude: {adapter: anthropic, model: claude-sonnet-4-6, api_key_env: ANTHROPIC_API_KEY, "
                   "base_url_env: ANTHROPIC_BASE_URL, temperature: 0}\n"
                   "my-claude-topk: {extends: claude-opus-4.8, top_k: 5}\n")
    code, out, err = run_cli(capsys, "check", "--systems", "my-claude", "my-claude-topk", "--live")
    assert code == 1 and "not ready: my-claude, my-claude-topk" in err
    assert "refused" in row(out, "my-claude") and "anthropic-2026-10-21-no-sampling" in row(out, "my-claude")
    assert "refused" in row(out, "my-claude-topk")
    assert srv["anthropic"].hits() == 0  # nothing was sent, not even the model list
    ds = make_tiny_dataset(tmp / "ds", pages=2, words=3)
    code, out, err = run_cli(capsys, "predict", "--system", "my-claude", "--dataset", str(ds), "--run",
                             str(tmp / "run"), "--dry-run")
    assert code == 2 and "refuses temperature" in err and srv["anthropic"].hits() == 0
    # what the message advises works: the field removed, or the previous API version for an older model
    reg.write_text("my-claude: {adapter: anthropic, model: claude-sonnet-4-6, api_key_env: ANTHROPIC_API_KEY, "
                   "base_url_env: ANTHROPIC_BASE_URL, temperature: 0, api_version: 2023-06-01}\n")
    code, out, _ = run_cli(capsys, "check", "--systems", "my-claude", "--live")
    assert code == 0, out
    post = [r for r in srv["anthropic"].requests if r.protocol == "anthropic"][-1]
    assert post.body["temperature"] == 0 and post.headers["anthropic-version"] == "2023-06-01"


def test_every_shipped_api_system_checks_live_and_dry_runs_against_its_provider(cli, capsys):
    reg, srv, tmp = cli
    reg.write_text("")
    code, out, err = run_cli(capsys, "check", "--systems", *SHIPPED_API[:3], "molmo-7b-d", "--live")
    assert code == 0, out + err
    for name in ("gemini-3.1-pro", "claude-opus-4.8", "kimi-k3", "molmo-7b-d"):
        assert "parsed ok" in row(out, name), row(out, name)
    claude = [r for r in srv["anthropic"].requests if r.protocol == "anthropic"]
    assert len(claude) == 1 and not {"temperature", "top_p", "top_k"} & set(claude[0].body)
    assert claude[0].headers["anthropic-version"] == "2026-10-21"
    kimi = [r for r in srv["moonshot"].requests if r.protocol == "openai"][0].body
    assert "temperature" not in kimi and kimi["reasoning_effort"] == "max" and "max_completion_tokens" in kimi
    gem = [r for r in srv["gemini"].requests if r.protocol == "openai"][0].body
    assert "temperature" not in gem and gem["reasoning_effort"] == "high"
    molmo = [r for r in srv["molmo"].requests if r.protocol == "openai"][0].body
    assert [m["role"] for m in molmo["messages"]] == ["user"] and molmo["temperature"] == 0
    ds = make_tiny_dataset(tmp / "ds", pages=2, words=3)
    before = sum(s.hits() for s in srv.values())
    for name in SHIPPED_API:
        code, out, _ = run_cli(capsys, "predict", "--system", name, "--dataset", str(ds), "--run", str(tmp / "run"),
                               "--dry-run")
        assert code == 0 and "nothing was sent" in out and "estimated: image tokens" in out, out
    assert sum(s.hits() for s in srv.values()) == before  # a dry run sends nothing


def test_molmo_gets_its_instructions_in_the_first_user_turn(cli, capsys):
    reg, srv, tmp = cli
    reg.write_text("my-molmo: {extends: molmo-7b-d, max_tokens: 1000}\n"
                   "plain-molmo: {adapter: openai, model: allenai/Molmo-7B-D-0924, api_key_env: VLLM_API_KEY, "
                   "base_url_env: VLLM_BASE_URL, key_optional: true, variant: one-image}\n")
    code, out, _ = run_cli(capsys, "check", "--systems", "my-molmo", "plain-molmo", "--live")
    assert "parsed ok" in row(out, "my-molmo")
    # the same model without the field: the server's chat template refuses the system message, as documented
    assert code == 1 and "Conversation roles must alternate" in row(out, "plain-molmo")
    good, bad = [r.body for r in srv["molmo"].requests if r.protocol == "openai"]
    assert [m["role"] for m in good["messages"]] == ["user"]
    first = good["messages"][0]["content"][0]
    from inkground_lib.evaluation.prompt import SYSTEM_PROMPT

    assert first == {"type": "text", "text": SYSTEM_PROMPT}  # the instructions open the user turn
    assert [m["role"] for m in bad["messages"]] == ["system", "user"]
    assert sum(p["type"] == "image_url" for p in good["messages"][0]["content"]) == 1  # one-image variant


def test_check_live_allows_the_registry_timeout_not_the_check_timeout(cli, capsys):
    reg, srv, _ = cli
    reg.write_text("thinker: {extends: kimi-k3, timeout: 10}\nhasty: {extends: kimi-k3, timeout: 0.5}\n")
    srv["moonshot"].script(slow(1.5), slow(1.5), match="messages")
    code, out, _ = run_cli(capsys, "check", "--systems", "thinker", "hasty", "--live", "--timeout", "0.5")
    assert "parsed ok" in row(out, "thinker")  # 1.5 s of thinking is within the entry's 10 s
    assert code == 1 and "no complete answer within 0.5 s" in row(out, "hasty")


# ------------------------------------------------------------------------------------------- images

def test_a_hostile_noisy_photo_stays_under_every_limit(cli, capsys):
    """Pure-noise pages: the one-image prompt's PNG is over Claude's 5 MB of base64; every request still goes
    through under the limit (re-encoded), and the record says what was sent."""
    reg, srv, tmp = cli
    reg.write_text("claude-one: {extends: claude-opus-4.8, variant: one-image, rpm: null}\n")
    ds = noisy_dataset(tmp / "noisy")
    code, out, err = run_cli(capsys, "predict", "--system", "claude-one", "--dataset", str(ds), "--run",
                             str(tmp / "run"), "--quiet", "--dry-run")
    assert code == 0 and "re-encoded to fit the provider's limits" in out
    code, out, err = run_cli(capsys, "predict", "--system", "claude-one", "--dataset", str(ds), "--run",
                             str(tmp / "run"), "--quiet")
    assert code == 0, err
    posts = [r for r in srv["anthropic"].requests if r.protocol == "anthropic"]
    assert len(posts) == 6
    sizes = [len(b) for r in posts for b in request_images(r.body)]
    assert sizes and max(sizes) <= 5242880 and all(len(r.raw) <= 33554432 for r in posts)
    recs = list(load_cache(cache_path(tmp / "run", "claude-one")).values())
    assert len(recs) == 6 and all(r["status"] == "ok" for r in recs)
    sent = recs[0]["images_sent"]
    assert len(sent) == 1 and sent[0]["format"] == "jpeg" and sent[0]["b64_bytes"] <= 5242880
    assert sent[0]["scale"] <= 1.0 and sent[0]["bytes"] > 0
    # the PNG as built would have been refused: the server answers as Anthropic does
    from inkground_lib.evaluation.prompt import build_request, example_from_page
    from inkground_lib.core.dataset import load_dataset

    d = load_dataset(ds)
    req = build_request(d.pages[1].load_image(), (1024.0, 1448.0), "x", example_from_page(d.pages[0], d.pages[0].words[0]),
                        variant="one-image")
    assert len(base64.b64encode(req.images[0])) > 5242880


def _dot_cell_responder(layout_box, built_width, grid):
    """A fake model that finds the red dot in the page image it was sent and answers its cell, reading the
    grid the way the prompt describes it (the photo box of the image as built, scaled to the image as sent)."""
    def answer(body):
        data = base64.b64decode(request_images(body)[-1])
        a = np.asarray(Image.open(io.BytesIO(data)).convert("RGB")).astype(int)
        ys, xs = np.nonzero((a[:, :, 0] > 150) & (a[:, :, 1] < 100) & (a[:, :, 2] < 100))
        s = a.shape[1] / built_width
        x0, y0, x1, y1 = (v * s for v in layout_box)
        cx, cy = xs.mean() + 0.5, ys.mean() + 0.5
        j = (cx - x0) / (x1 - x0) * grid + 0.5
        i = grid - (cy - y0) / (y1 - y0) * grid + 0.5
        return f"<strokes><s1><points>'x{j:.2f}y{i:.2f}', 'x{j:.2f}y{i:.2f}'</points></s1></strokes>"
    return answer


def test_a_downscaled_image_changes_no_coordinate(tmp_path, monkeypatch):
    """Round trip: a page with a red dot, sent once as built and once downscaled to fit a tight limit; the answer
    (the dot's cell, found in the image as sent) maps back to the same page pixel either way."""
    from inkground_lib.evaluation.parse import parse_strokes
    from inkground_lib.evaluation.prompt import Example, build_request

    page, dot, grid = (900, 600), (633, 171), 50
    ex = Example(_photo(300, 200), "ex", [[[50, 100, 0], [250, 100, 10]]])
    req = build_request(_photo(*page, dot=dot, grain=True), (float(page[0]), float(page[1])), "dot", ex, grid=grid)
    box, built_w = req.meta["photo_boxes"][1], req.meta["image_sizes"][1][0]
    monkeypatch.setenv("K", KEY)
    results = {}
    with FakeServer(responder=_dot_cell_responder(box, built_w, grid)) as srv:
        monkeypatch.setenv("U", srv.openai_url)
        for name, limit in (("as-built", None), ("downscaled", 60_000)):
            s = make_system(name, registry={name: {"adapter": "openai", "model": "m", "api_key_env": "K",
                                                  "base_url_env": "U"}}, retry=RetryPolicy(1))
            if limit:
                s.image_limits = ImageLimits(max_image_b64_bytes=limit)
            out = s.predict(Item("w0", "dot", (600, 140, 660, 200), "p0", page, request=req))
            assert out.status == "ok", out.error
            results[name] = (parse_strokes(out.text, grid=grid, page_size=page).to_ink()[0][0, :2], out.images_sent)
            sent = request_images(srv.requests[-1].body)
            assert max(len(b) for b in sent) <= (limit or 10 ** 9)
    (p_full, rec_full), (p_small, rec_small) = results["as-built"], results["downscaled"]
    assert rec_full[1]["format"] == "png" and rec_full[1]["scale"] == 1.0
    assert rec_small[1]["scale"] < 0.8  # really downscaled (and re-encoded)
    assert np.allclose(p_full, dot, atol=1.0) and np.allclose(p_small, dot, atol=2.0)  # same page pixel


def test_an_image_that_fits_is_sent_as_built_and_keeps_its_request_key(monkeypatch):
    monkeypatch.setenv("K", KEY)
    monkeypatch.setenv("U", "http://127.0.0.1:9/v1")
    from inkground_lib.evaluation.prompt import Example, build_request, request_hash

    ex = Example(_photo(300, 200), "ex", [[[50, 100, 0], [250, 100, 10]]])
    req = build_request(_photo(600, 400), (600.0, 400.0), "w", ex, grid=20)
    s = make_system("x", registry={"x": {"adapter": "openai", "model": "m", "api_key_env": "K", "base_url_env": "U"}})
    assert all(not im.changed and im.data == raw for im, raw in zip(s.sent_images(req), req.images))
    assert s._hash(req) == request_hash(req, "m", s.answer_params())
    s.image_limits = ImageLimits(max_side=200)
    assert all(im.changed and max(im.size) <= 200 for im in s.sent_images(req))
    assert s._hash(req) != request_hash(req, "m", s.answer_params())  # another request: another key


# -------------------------------------------------------------------------------------------- quotas

def _claude_entry(reg: Path, **extra):
    fields = ", ".join(f"{k}: {v}" for k, v in {"rpm": "null", "concurrency": 1, **extra}.items())
    reg.write_text(f"my-claude: {{extends: claude-opus-4.8, {fields}}}\n")


@pytest.mark.parametrize("answer,what", [("anthropic", "anthropic quota (enforced_spend_limit_reached)"),
                                         ("long", "HTTP 429 asks to wait 86,400 s, longer than the retry budget")])
def test_a_spent_quota_stops_the_run_cleanly_and_a_rerun_resumes(cli, capsys, answer, what):
    reg, srv, tmp = cli
    _claude_entry(reg)
    ds = make_tiny_dataset(tmp / "ds", pages=3, words=3, unique_texts=True)  # 9 requests
    a = srv["anthropic"]
    a.script(ok(), ok(), quota_error(answer), match="messages")
    argv = ["predict", "--system", "my-claude", "--dataset", str(ds), "--run", str(tmp / "run"), "--quiet"]
    code, out, err = run_cli(capsys, *argv)
    assert code == 130  # as for Ctrl-C
    line = next(x for x in err.splitlines() if "stopped sending" in x)
    assert what in line and "2 of 9 words are answered and cached" in line and "rerun" in line
    assert a.hits() == 3  # sent nothing after the quota answer: no retry, no other item
    code, out, err = run_cli(capsys, *argv)
    assert code == 0 and a.hits() == 3 + 7  # the rerun asks only the 7 missing
    assert len(load_cache(cache_path(tmp / "run", "my-claude"))) == 9


@pytest.mark.parametrize("provider,name", [("google-gemini", "gemini-3.1-pro"), ("moonshot", "kimi-k3")])
def test_a_providers_own_quota_error_stops_at_once(cli, tmp_path, provider, name):
    reg, srv, _ = cli
    reg.write_text("")
    s = make_system(name, rpm=None, concurrency=1, rpd=None)
    server = srv["gemini" if provider == "google-gemini" else "moonshot"]
    server.script(quota_error(provider), match="messages")
    items = [Item(f"w{i}", "x", (0, 0, 1, 1), "p", (10, 10), request=_tiny_request(f"w{i}")) for i in range(4)]
    with pytest.raises(QuotaExhausted, match=f"{provider} quota") as e:
        run_predictions(s, items, cache_path(tmp_path / "r", name), progress=False)
    assert server.hits() == 1 and "0 of 4 words" in e.value.summary


def test_a_short_rate_limit_429_is_still_retried(cli, tmp_path):
    reg, srv, _ = cli
    reg.write_text("")
    s = make_system("kimi-k3", rpm=None, retry=RetryPolicy(max_attempts=3, base_delay=0.01, sleep=lambda _: None))
    srv["moonshot"].script(http_error(429, retry_after=1), match="messages")
    out = s.predict(Item("w0", "x", (0, 0, 1, 1), "p", (10, 10), request=_tiny_request("w0")))
    assert out.status == "ok" and out.attempts == 2 and s.exhausted is None


def test_the_daily_pace_stops_before_the_quota_and_counts_earlier_runs(cli, capsys):
    reg, srv, tmp = cli
    _claude_entry(reg, rpd=3)
    ds = make_tiny_dataset(tmp / "ds", pages=2, words=3, unique_texts=True)  # 6 requests
    argv = ["predict", "--system", "my-claude", "--dataset", str(ds), "--run", str(tmp / "run"), "--quiet"]
    code, _, err = run_cli(capsys, *argv)
    assert code == 130 and "daily pace" in err and "3 of 6 words are answered" in err
    assert srv["anthropic"].hits() == 3
    code, _, err = run_cli(capsys, *argv)  # at once again: the 3 requests of the first run count
    assert code == 130 and srv["anthropic"].hits() == 3 and "3 of 6" in err


def _tiny_request(word):
    from inkground_lib.evaluation.prompt import PromptRequest

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (9, 9, 9)).save(buf, format="PNG")
    return PromptRequest("sys", [("text", word), ("image", buf.getvalue())], {"prompt_version": "t"})


def test_bad_provider_fields_are_refused(tmp_path):
    for entry, msg in [("x: {adapter: openai, model: m, api_key_env: K, provider: nobody}", "provider"),
                       ("x: {adapter: openai, model: m, api_key_env: K, provider: anthropic}", "anthropic adapter"),
                       ("x: {adapter: openai, model: m, api_key_env: K, system_message: maybe}", "system_message"),
                       ("x: {adapter: openai, model: m, api_key_env: K, rpd: 0}", "rpd")]:
        p = tmp_path / "bad.yaml"
        p.write_text(entry + "\n")
        with pytest.raises(SystemConfigError, match=msg):
            reg = load_registry(p, use_env=False)
            rule_problems(reg["x"])
