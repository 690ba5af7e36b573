"""`make clean` keeps what cost money or people's time (API predictions, real ratings); `make clean-all` asks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import inkground_lib.publish.clean as cl

ROOT = Path(__file__).resolve().parents[1]


def tree(root: Path) -> list[Path]:
    runs = root / "runs"
    (runs / "a" / "predictions").mkdir(parents=True)
    (runs / "a" / "benchmark" / "pages").mkdir(parents=True)
    files = {
        "runs/a/predictions/gemini.jsonl": json.dumps({"adapter": "openai", "status": "ok"}) + "\n",
        "runs/a/predictions/gemini.failures.jsonl": json.dumps({"adapter": "openai", "status": "error"}) + "\n",
        "runs/a/predictions/skeleton.jsonl": json.dumps({"adapter": "skeleton", "status": "ok"}) + "\n",
        "runs/a/predictions/font.jsonl": json.dumps({"adapter": "font", "status": "ok"}) + "\n",
        "runs/a/ratings.csv": "page,rater,score,source\np1,r1,10,simulated\n",
        "runs/a/lab_ratings.csv": "page,rater,score,source\np1,ann,10,simulated\np1,bob,7,real\n",
        "runs/a/old_ratings.csv": "page,rater,score\np1,ann,9\n",
        "runs/a/words.csv": "word_id,dtw\nw1,0.3\n",
        "runs/a/benchmark/pages/p1.jpg": "jpeg",
        "book/index.html": "<html>",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return [root / "runs", root / "book"]


def test_clean_keeps_api_predictions_and_real_ratings_only(tmp_path):
    targets = tree(tmp_path)
    removed, kept = cl.clean(targets)
    names = sorted(str(p.relative_to(tmp_path)) for p in kept)
    assert names == ["runs/a/lab_ratings.csv", "runs/a/old_ratings.csv", "runs/a/predictions/gemini.failures.jsonl",
                     "runs/a/predictions/gemini.jsonl"]
    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert left == names and removed == 6
    assert not (tmp_path / "book").exists() and not (tmp_path / "runs" / "a" / "benchmark").exists()


def test_clean_all_asks_and_refuses_without_a_terminal(tmp_path, monkeypatch, capsys):
    targets = tree(tmp_path)
    monkeypatch.setattr(cl, "TARGETS", tuple(targets))
    monkeypatch.setattr(sys, "stdin", open("/dev/null"))
    assert cl.main(["--all"]) == 1
    assert "would also remove 4 file(s)" in capsys.readouterr().out
    assert (tmp_path / "runs" / "a" / "words.csv").exists()  # nothing removed
    monkeypatch.setattr(sys, "stdin", type("Tty", (), {"isatty": lambda self: True})())
    monkeypatch.setattr("builtins.input", lambda prompt: "no")
    assert cl.main(["--all"]) == 1 and (tmp_path / "runs" / "a" / "predictions" / "gemini.jsonl").exists()
    assert cl.main(["--all", "--yes"]) == 0
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


def test_clean_runs_with_the_system_python_outside_the_venv():
    """`make clean` runs with $(PYTHON) (no numpy needed): importing the module must not pull the library."""
    code = ("import sys, inkground_lib.publish.clean as c; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'pandas')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
