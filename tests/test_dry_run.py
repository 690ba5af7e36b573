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


def test_dry_run_sends_nothing_and_estimates_by_the_formula(env, capsys):
    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.evaluation.cost import image_tokens, text_tokens
    from inkground_lib.evaluation.items import make_items

    srv, ds, run = env
    assert main(["predict", "--system", "priced", "--dataset", str(ds), "--run", str(run), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert srv.hits() == 0 and not run.exists()  # nothing sent, nothing written
    assert "9 words, 9 distinct requests, 0 cached, 9 to send" in out and "images per request: 2" in out
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
