"""`inkground predict --dry-run` and the spending caps (--max-requests, --max-cost): nothing is sent by a dry
run; a cap stops before it is exceeded; the estimate follows the documented image-token formula."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import make_tiny_dataset  # noqa: E402
from fakeserver import FakeServer  # noqa: E402

from inkground_lib.cli import main  # noqa: E402

KEY = "sk-dry-SECRET-7"


@pytest.fixture
def env(tmp_path, monkeypatch):
    reg = tmp_path / "systems.yaml"
    reg.write_text(
        "priced: {adapter: anthropic, model: fake-claude, api_key_env: T_KEY, base_url_env: T_AURL, "
        "max_tokens: 1000, image_token_formula: anthropic, price_input_per_mtok: 5.0, price_output_per_mtok: 25.0}\n"
        "unpriced: {adapter: openai, model: fake-vl, api_key_env: T_KEY, base_url_env: T_URL, max_tokens: 2000}\n")
    monkeypatch.setenv("INKGROUND_SYSTEMS", str(reg))
    with FakeServer() as srv:
        monkeypatch.setenv("T_KEY", KEY)
        monkeypatch.setenv("T_URL", srv.openai_url)
        monkeypatch.setenv("T_AURL", srv.anthropic_url)
        yield srv, make_tiny_dataset(tmp_path / "ds", pages=3, words=3, unique_texts=True), tmp_path / "run"


def test_dry_run_sends_nothing_and_estimates_by_the_formula(env, capsys, monkeypatch):
    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.evaluation import prompt_parts
    from inkground_lib.evaluation.cost import image_tokens, text_tokens
    from inkground_lib.evaluation.items import make_items

    srv, ds, run = env
    with monkeypatch.context() as m:
        m.delenv("T_KEY")  # no key needed to price a run (issue 32: it exited 2 without one)
        m.setattr(prompt_parts, "png_bytes", lambda a: pytest.fail("a dry run encoded an image"))
        assert main(["predict", "--system", "priced", "--dataset", str(ds), "--run", str(run), "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert "plan priced" in err and "check page photos" in err  # a bar per stage
    assert srv.hits() == 0 and not run.exists()  # nothing sent, nothing written
    assert "9 words, 9 distinct requests, 0 cached, 9 to send" in out and "images per request: 2" in out
    assert "no image encoded" in out
    # the same estimate by hand: the formula over the two PNGs of each request, plus the text estimate
    import io

    from PIL import Image

    total = 0
    for it in make_items(load_dataset(ds), with_prompt=True):
        req = it.request_for("two-image")
        text = req.system + "".join(v for k, v in req.parts if k == "text")
        total += text_tokens(text) + sum(image_tokens("anthropic", *Image.open(io.BytesIO(v)).size)
                                         for k, v in req.parts if k == "image")
    assert f"estimated input tokens: {total:,}" in out
    assert "output tokens at most: 9,000" in out
    assert f"worst-case cost: ${(total * 5.0 + 9000 * 25.0) / 1e6:,.2f}" in out
    assert main(["predict", "--system", "unpriced", "--dataset", str(ds), "--run", str(run), "--dry-run"]) == 0
    assert "worst-case cost: -" in capsys.readouterr().out and srv.hits() == 0


def test_max_requests_stops_before_the_cap_and_a_rerun_continues(env, capsys):
    srv, ds, run = env
    argv = ["predict", "--system", "unpriced", "--dataset", str(ds), "--run", str(run), "--quiet"]
    assert main(argv + ["--max-requests", "4"]) == 0
    assert srv.hits() == 4 and "5 not sent (spending cap)" in capsys.readouterr().out
    assert main(argv + ["--dry-run"]) == 0 and "4 cached, 5 to send" in capsys.readouterr().out
    assert main(argv + ["--max-requests", "4"]) == 0 and srv.hits() == 8
    assert main(argv) == 0 and srv.hits() == 9
    lines = (run / "predictions" / "unpriced.jsonl").read_text().splitlines()
    assert len(lines) == 9 and all(json.loads(x)["status"] == "ok" for x in lines)


def test_max_cost_keeps_the_worst_case_under_the_cap(env, capsys):
    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.evaluation.predict import plan_system

    srv, ds, run = env
    plan = plan_system("priced", load_dataset(ds), run)
    costs = [plan.estimates[k].worst_cost for k in plan.order]
    cap = sum(costs[:3]) + costs[3] / 2  # room for three requests and half of the fourth
    assert main(["predict", "--system", "priced", "--dataset", str(ds), "--run", str(run), "--quiet",
                 "--max-cost", f"{cap:.6f}"]) == 0
    assert srv.hits() == 3
    assert main(["predict", "--system", "unpriced", "--dataset", str(ds), "--run", str(run), "--quiet",
                 "--max-cost", "1"]) == 2
    err = capsys.readouterr().err
    assert "--max-cost needs price_input_per_mtok, price_output_per_mtok and image_token_formula" in err
    assert "(missing: price_input_per_mtok, price_output_per_mtok, image_token_formula)" in err and srv.hits() == 3


def test_a_dry_run_says_which_images_it_had_to_encode(env, tmp_path, capsys, monkeypatch):
    """One-image requests of big pages to a provider with a 5 MB image limit: their size alone cannot tell that
    they fit (a PNG of that size could pass 5 MB), so those images are encoded (once per page) and the plan says
    so."""
    from PIL import Image

    srv, ds, run = env
    manifest = json.loads((ds / "manifest.json").read_text())
    for page in manifest["pages"]:
        page["width"], page["height"] = 2000, 1000
        Image.new("RGB", (2000, 1000), (240, 235, 225)).save(ds / page["image"])
    (ds / "manifest.json").write_text(json.dumps(manifest))
    reg = tmp_path / "one.yaml"
    reg.write_text("one: {adapter: anthropic, model: fake-claude, api_key_env: T_KEY, base_url_env: T_AURL, "
                   "variant: one-image, max_tokens: 1000, image_token_formula: anthropic}\n")
    monkeypatch.setenv("INKGROUND_SYSTEMS", str(reg))
    assert main(["predict", "--system", "one", "--dataset", str(ds), "--run", str(run), "--dry-run", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "images per request: 1" in out and "the images of 9 request(s) PNG-encoded" in out
    assert "re-encoded" not in out  # blank pages: their PNGs fit as built


def test_predicts_summary_counts_unsent_words_apart_and_names_the_target_rule(env, capsys):
    srv, ds, run = env
    manifest = json.loads((ds / "manifest.json").read_text())
    manifest["pages"][0]["words"][1]["text"] = manifest["pages"][0]["words"][0]["text"]  # a text written twice
    (ds / "manifest.json").write_text(json.dumps(manifest))
    argv = ["predict", "--system", "unpriced", "--dataset", str(ds), "--run", str(run), "--quiet"]
    assert main(argv + ["--max-requests", "3"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("unpriced: 7 words; statuses: ok 3; 4 not sent (spending cap); 2 words left out by the "
                           "target rule") and "error" not in line
    assert srv.hits() == 3
