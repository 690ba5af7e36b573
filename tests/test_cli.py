"""The inkground command: dataset commands write loadable datasets; bad input is one clear line, exit 2."""
import json

import pytest

from inkground_lib.cli import main
from inkground_lib.core.dataset import load_dataset


def test_synth_command_writes_a_deterministic_dataset(tmp_path, capsys):
    args = ["synth", "--pages", "2", "--seed", "3", "--words-min", "3", "--words-max", "6", "--words-mean", "4",
            "--width", "500", "--height", "650", "--quiet"]
    assert main(args + ["--out", str(tmp_path / "a")]) == 0
    assert main(args + ["--out", str(tmp_path / "b"), "--workers", "1"]) == 0
    a, b = load_dataset(tmp_path / "a"), load_dataset(tmp_path / "b")
    assert len(a.pages) == len(b.pages) == 2 and all(3 <= len(p.words) <= 6 for p in a.pages)
    assert (tmp_path / "a/manifest.json").read_bytes() == (tmp_path / "b/manifest.json").read_bytes()
    assert json.loads((tmp_path / "a/manifest.json").read_text())["meta"]["params"]["seed"] == 3


def test_bad_parameters_are_one_clear_error(tmp_path, capsys):
    assert main(["synth", "--out", str(tmp_path / "x"), "--pages", "0", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "inkground synth: error:" in err and "pages" in err
    assert not (tmp_path / "x" / "manifest.json").exists()


def test_predict_names_the_missing_key_and_writes_nothing(tmp_path, capsys, monkeypatch):
    from conftest import make_tiny_dataset

    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    ds = make_tiny_dataset(tmp_path / "ds", pages=2, words=3)
    code = main(["predict", "--system", "gemini-3.1-pro", "--dataset", str(ds), "--run", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2 and "GEMINI_API_KEY is not set" in err
    assert not (tmp_path / "run" / "predictions" / "gemini-3.1-pro.jsonl").exists()


def test_predict_local_system_then_resume_from_cache(tmp_path, capsys):
    from conftest import make_tiny_dataset

    ds = make_tiny_dataset(tmp_path / "ds", pages=2, words=3)
    run = tmp_path / "run"
    assert main(["predict", "--system", "font", "--dataset", str(ds), "--run", str(run), "--quiet"]) == 0
    cache = run / "predictions" / "font.jsonl"
    first = cache.read_bytes()
    assert len(first.splitlines()) == 6
    assert main(["predict", "--system", "font", "--dataset", str(ds), "--run", str(run), "--quiet"]) == 0
    assert cache.read_bytes() == first  # nothing asked twice, nothing appended
    assert "6 words; statuses: ok 6;" in capsys.readouterr().out


def test_unknown_system_is_refused(tmp_path, capsys):
    from conftest import make_tiny_dataset

    ds = make_tiny_dataset(tmp_path / "ds", pages=1, words=1)
    assert main(["predict", "--system", "nope", "--dataset", str(ds), "--run", str(tmp_path / "r")]) == 2
    assert "nope" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["synth", "--pages", "1", "--out"], ["recorded", "--out"],
                                  ["pseudo", "--candidates", "x", "--run"]])
def test_an_output_folder_that_is_a_file_is_a_clear_error(tmp_path, capsys, argv):
    """Issue 11, case 10: --out / --run pointing at a file gave FileExistsError / NotADirectoryError tracebacks."""
    from inkground_lib.cli import main

    f = tmp_path / "a_file"
    f.write_text("mine")
    assert main(argv + [str(f)]) == 2
    assert "exists and is not a folder" in capsys.readouterr().err and f.read_text() == "mine"


def test_predict_exits_non_zero_when_no_request_succeeded(tmp_path, monkeypatch, capsys):
    """Issue 11, case 12: `predict` in which every request failed exited 0."""
    import sys as _sys
    from pathlib import Path as _Path

    _sys.path.insert(0, str(_Path(__file__).resolve().parent))
    from conftest import make_tiny_dataset
    from fakeserver import FakeServer, http_error

    ds = make_tiny_dataset(tmp_path / "ds", pages=2, words=3)  # two pages of 3 words: the prompt's examples
    extra = tmp_path / "mine.yaml"
    extra.write_text("dead-vl: {adapter: openai, model: m, api_key_env: T_KEY, base_url_env: T_URL, timeout: 0.5}\n")
    monkeypatch.setenv("INKGROUND_SYSTEMS", str(extra))
    monkeypatch.setenv("T_KEY", "sk-test-not-a-real-key")
    with FakeServer() as srv:
        monkeypatch.setenv("T_URL", srv.openai_url)
        srv.script(*[http_error(400) for _ in range(20)])  # a client error: not retried
        code = main(["predict", "--system", "dead-vl", "--dataset", str(ds), "--run", str(tmp_path / "run"),
                     "--quiet"])
    assert code == 1 and "no word got a usable prediction" in capsys.readouterr().err
    assert main(["predict", "--system", "font", "--dataset", str(ds), "--run", str(tmp_path / "run2"), "--quiet"]) == 0


def test_pseudo_exits_1_when_no_page_is_kept(tmp_path, capsys):
    """Exit codes: non-zero when nothing succeeded (here every page rated 0 by the raters)."""
    from inkground_lib.datasets.synth.generate import SynthParams, generate

    cand = generate(tmp_path / "cand", SynthParams(pages=2, words_min=2, words_max=3, words_mean=2.5, seed=3,
                                                   width=600, height=800), progress=False, workers=1)
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("page,rater,score\np0000,ann,0\np0001,ann,0\n")
    args = ["pseudo", "--candidates", str(cand), "--run", str(tmp_path / "run"), "--ratings", str(ratings),
            "--ocr-threshold", "0", "--quiet"]
    # one rating a page where a page needs K = 2 (--raters-per-pair, the file does not record K): every page
    # awaits ratings, so no benchmark is built and no table is written, unless told
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert "2 of the 2 pages that passed the OCR filter have fewer than K = 2 standing ratings" in err
    assert "--allow-partial-ratings" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "run" / "pages.csv").exists() and not (tmp_path / "run" / "benchmark").exists()
    assert main(args + ["--allow-partial-ratings"]) == 1
    out, err = capsys.readouterr()
    assert "pages: 2 candidates, 2 passed the OCR filter, 0 kept, 0 rejected, 2 awaiting ratings" in out
    code = main(args + ["--raters-per-pair", "1"])
    out, err = capsys.readouterr()
    assert code == 1 and "no page was kept" in err
    assert "pages: 2 candidates, 2 passed the OCR filter, 0 kept, 2 rejected, 0 awaiting ratings" in out
    assert "ratings from file ratings.csv" in out and "K from --raters-per-pair" in out


def test_pseudo_table_says_real_ratings_or_simulated(tmp_path, capsys):
    from inkground_lib.datasets.synth.generate import SynthParams, generate
    from inkground_lib.pseudo.ratings_log import RatingsLog

    cand = generate(tmp_path / "cand", SynthParams(pages=2, words_min=1, words_max=2, words_mean=1.5, seed=3,
                                                   width=500, height=650), progress=False, workers=1)
    log = RatingsLog(tmp_path / "people.csv")
    for page in ("p0000", "p0001"):
        for rater in ("ann", "bob"):
            log.append({"page": page, "rater": rater, "score": 10, "action": "rate", "session": rater,
                        "raters_per_page": 2})
    base = ["pseudo", "--candidates", str(cand), "--ocr-threshold", "0", "--quiet"]
    assert main(base + ["--run", str(tmp_path / "real"), "--ratings", str(tmp_path / "people.csv")]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("ratings "))
    assert "real ratings (file people.csv)" in row
    assert "ratings: real ratings (file people.csv)" in out and "K from the file" in out
    assert main(base + ["--run", str(tmp_path / "sim"), "--n-raters", "5"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("ratings "))
    assert "simulated" in row and "real" not in row


def test_validate_command_names_every_fault_and_exits_by_outcome(tmp_path, capsys):
    from conftest import make_tiny_dataset

    ds = make_tiny_dataset(tmp_path / "ds")
    assert main(["validate", str(ds)]) == 0
    assert f"{ds}: valid dataset, 2 pages, 6 words" in capsys.readouterr().out
    m = json.loads((ds / "manifest.json").read_text())
    m["pages"][0]["id"] = "../evil"
    m["pages"][1]["width"] = "200"
    (ds / "manifest.json").write_text(json.dumps(m))
    assert main(["validate", str(ds)]) == 1
    err = capsys.readouterr().err
    assert "pages/0" in err and "field id" in err and "field width" in err and f"2 errors in {ds}" in err
    assert main(["validate", str(tmp_path / "nothing")]) == 2


def test_a_bad_ratings_file_fails_before_the_run_folder_is_created(tmp_path, capsys):
    from conftest import make_tiny_dataset

    ds = make_tiny_dataset(tmp_path / "ds")
    bad = tmp_path / "ratings.csv"
    bad.write_text("page,rater,score\np000,ann,eleven\n")
    for ratings, msg in ((bad, "score"), (tmp_path, "not a regular file"), (tmp_path / "none.csv", "missing")):
        assert main(["pseudo", "--candidates", str(ds), "--run", str(tmp_path / "run"), "--ratings", str(ratings),
                     "--quiet"]) == 2
        assert msg in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


# ------------------------------------------------------------------------------------------------- issue 26

def _noisy_dataset(root, pages=2, words=3):
    """make_tiny_dataset with photos of noise (a JPEG that is cut at half really lacks pixels)."""
    import numpy as np
    from PIL import Image

    from conftest import make_tiny_dataset

    make_tiny_dataset(root, pages=pages, words=words, unique_texts=True)
    rng = np.random.default_rng(0)
    for p in sorted((root / "pages").glob("*.jpg")):
        Image.fromarray(rng.integers(0, 255, (100, 200, 3), dtype=np.uint8)).save(p, quality=95)
    return root


def _cut(photo):
    data = photo.read_bytes()
    photo.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize("command", ["predict", "eval"])
def test_a_photo_that_cannot_be_decoded_stops_the_command_before_any_request(tmp_path, capsys, monkeypatch, command):
    """Case 2: a truncated page photo became 73 *system* errors (the skeleton's DTW 0.126 -> 4.35) with exit 0.
    predict and eval now decode every photo first: exit 2 naming the file, nothing sent, nothing written."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from fakeserver import FakeServer

    ds = _noisy_dataset(tmp_path / "ds")
    photo = ds / "pages" / "p001.jpg"
    _cut(photo)
    extra = tmp_path / "systems.yaml"
    extra.write_text("vl: {adapter: openai, model: m, api_key_env: T_KEY, base_url_env: T_URL, timeout: 5}\n")
    run = tmp_path / "run"
    with FakeServer() as srv:
        monkeypatch.setenv("INKGROUND_SYSTEMS", str(extra))
        monkeypatch.setenv("T_KEY", "sk-test-0123456789")
        monkeypatch.setenv("T_URL", srv.openai_url)
        args = (["predict", "--system", "vl"] if command == "predict" else ["eval", "--systems", "vl", "skeleton"])
        code = main(args + ["--dataset", str(ds), "--run", str(run), "--quiet"])
        hits = srv.hits()
    err = capsys.readouterr().err
    assert code == 2 and hits == 0
    assert f"{photo}: page p001: field image: {photo} cannot be decoded as an image" in err
    assert not (run / "predictions").exists()


def test_an_input_fault_during_a_run_is_raised_not_scored_as_the_systems_error(tmp_path):
    """A system error caused by the input is never the system's answer: asking.ask raises DatasetError."""
    from inkground_lib.core.dataset import DatasetError
    from inkground_lib.evaluation.asking import run_predictions
    from inkground_lib.evaluation.systems.base import Item
    from inkground_lib.evaluation.systems.local import BoxSystem

    sysm = BoxSystem("box", {})
    item = Item("w1", "word", (1.0, 1.0, 5.0, 5.0), "p1", (10, 10))

    def broken(*a, **k):
        raise DatasetError("page.jpg: page p1: field image: cannot be read (truncated)")

    sysm.predict = broken
    with pytest.raises(DatasetError, match="truncated"):
        run_predictions(sysm, [item], tmp_path / "predictions" / "box.jsonl", progress=False)
    assert not (tmp_path / "predictions" / "box.failures.jsonl").exists()


def test_predict_on_a_dataset_with_no_words_exits_non_zero_with_a_clear_message(tmp_path, capsys):
    """Case 10: predict reported "0 words" and exited 0."""
    from conftest import make_tiny_dataset

    ds = make_tiny_dataset(tmp_path / "ds", pages=2, words=0)
    code = main(["predict", "--system", "box", "--dataset", str(ds), "--run", str(tmp_path / "run"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and f"{ds}: nothing to predict: its 2 pages hold no words" in err
    assert not (tmp_path / "run" / "predictions").exists()


def test_section_03_asks_and_scores_only_targets(tmp_path, capsys):
    """Case 8: words whose text occurs more than once on their page are not asked (their one answer would be
    scored against several references); predict and eval say so, and eval's facts record how many."""
    from conftest import make_tiny_dataset

    ds = make_tiny_dataset(tmp_path / "ds", pages=2, words=3, unique_texts=True)
    m = json.loads((ds / "manifest.json").read_text())
    for w, text in zip(m["pages"][0]["words"], ["Thank", "you", "thank,"]):
        w["text"] = text
    (ds / "manifest.json").write_text(json.dumps(m))
    run = tmp_path / "run"
    assert main(["predict", "--system", "box", "--dataset", str(ds), "--run", str(run), "--quiet"]) == 0
    assert "4 words; statuses: ok 4;" in capsys.readouterr().out  # 6 words, of which 2 are no question
    cached = [json.loads(x)["word_id"] for x in (run / "predictions" / "box.jsonl").read_text().splitlines()]
    assert "p000-w0" not in cached and "p000-w2" not in cached and len(cached) == 4


@pytest.mark.slow  # eval: OCR and a Style classifier (~50 s on a loaded machine)
def test_eval_scores_only_targets_and_records_how_many_it_left_out(tmp_path, capsys):
    from conftest import make_tiny_dataset

    ds = make_tiny_dataset(tmp_path / "ds", pages=2, words=3, unique_texts=True)
    m = json.loads((ds / "manifest.json").read_text())
    for w, text in zip(m["pages"][0]["words"], ["Thank", "you", "thank,"]):
        w["text"] = text
    (ds / "manifest.json").write_text(json.dumps(m))
    assert main(["eval", "--systems", "box", "--dataset", str(ds), "--run", str(tmp_path / "ev"), "--quiet"]) == 0
    facts = json.loads((tmp_path / "ev" / "facts-reference.json").read_text())
    assert facts["targets"]["left_out"] == 2 and "occurs once on its page" in facts["targets"]["rule"]
    import pandas as pd

    scores = pd.read_csv(tmp_path / "ev" / "scores-reference.csv")
    assert sorted(scores["word_id"]) == sorted(set(w["id"] for p in m["pages"] for w in p["words"])
                                               - {"p000-w0", "p000-w2"})


def test_sigterm_stops_predict_with_a_summary_and_keeps_the_data(tmp_path, capsys, monkeypatch):
    """Case 10: SIGTERM exited 143 with no summary. It stops as Ctrl-C does: one summary line, exit 143, the
    answers made so far kept in a cache that loads."""
    import os
    import signal
    import time

    from conftest import make_tiny_dataset

    from inkground_lib.evaluation.cache import load_cache
    from inkground_lib.evaluation.systems.local import BoxSystem

    ds = make_tiny_dataset(tmp_path / "ds", pages=3, words=3, unique_texts=True)
    real = BoxSystem.predict
    calls = []

    def predict(self, item):
        calls.append(item.word_id)
        if len(calls) == 4:
            os.kill(os.getpid(), signal.SIGTERM)  # as `kill PID` would, mid-run
            time.sleep(0.5)
        return real(self, item)

    monkeypatch.setattr(BoxSystem, "predict", predict)
    run = tmp_path / "run"
    code = main(["predict", "--system", "box", "--dataset", str(ds), "--run", str(run), "--quiet"])
    err = capsys.readouterr().err
    assert code == 143
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("inkground predict: terminated (SIGTERM): box: interrupted")
    assert "answers are kept, rerun to resume" in lines[0] and "Traceback" not in err
    cached = load_cache(run / "predictions" / "box.jsonl")
    assert 1 <= len(cached) < 9
    assert main(["predict", "--system", "box", "--dataset", str(ds), "--run", str(run), "--quiet"]) == 0
    assert len(load_cache(run / "predictions" / "box.jsonl")) == 9  # the rerun resumes


def test_a_full_disk_is_one_clear_line(tmp_path, capsys, monkeypatch):
    """Case 10: a full disk printed a raw traceback."""
    import errno

    from conftest import make_tiny_dataset

    import inkground_lib.evaluation.asking as asking
    import inkground_lib.evaluation.cache as cache

    ds = make_tiny_dataset(tmp_path / "ds", pages=1, words=2)

    def full(path, record):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(cache, "append_jsonl", full)
    monkeypatch.setattr(asking, "append_jsonl_many", full)  # a local system's records are written in groups
    code = main(["predict", "--system", "box", "--dataset", str(ds), "--run", str(tmp_path / "run"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "inkground predict: error: no space left on the device (" in err and "box.jsonl" in err
    assert "free some space and rerun" in err


@pytest.mark.parametrize("cmd", ["predict", "synth"])
def test_a_dangling_run_link_is_one_clear_line(tmp_path, capsys, cmd):
    """Case 10: a --run (or --out) that is a link to a folder that does not exist printed a raw traceback."""
    from conftest import make_tiny_dataset

    ds = make_tiny_dataset(tmp_path / "ds", pages=1, words=2)
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "gone")
    argv = (["predict", "--system", "box", "--dataset", str(ds), "--run", str(link)] if cmd == "predict"
            else ["synth", "--out", str(link), "--pages", "1"])
    assert main(argv + ["--quiet"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert f"{link}: is a symbolic link to {tmp_path / 'gone'}, which does not exist" in err
    assert not (tmp_path / "gone").exists()


def test_a_dangling_rerun_link_is_named_not_file_exists(tmp_path, monkeypatch, capsys):
    """Issue 44: a dangling data/reruns/<name> link gave only "File exists"; now the link and its missing target
    are named, before anything runs (--name), and in any error on a path under it."""
    from inkground_lib import cli
    from inkground_lib.core import layout

    monkeypatch.setattr(layout, "ROOT", tmp_path)
    (tmp_path / layout.RERUNS).mkdir(parents=True)
    link = tmp_path / layout.RERUNS / "mine"
    link.symlink_to(tmp_path / "gone")
    assert cli.main(["run", "04", "-p", "n_boot", "200", "--name", "mine"]) == 2
    err = capsys.readouterr().err
    assert f"{layout.RERUNS}/mine is a symbolic link to {tmp_path / 'gone'}, which does not exist" in err
    assert "rm " in err and "File exists" not in err
    try:  # what making the rerun's folders under it raises, as the CLI reports it
        (link / "sections").mkdir(parents=True, exist_ok=True)
    except OSError as e:
        text = cli._os_error(e)
    assert text.startswith(f"{link} is a symbolic link to {tmp_path / 'gone'}, which does not exist")


def test_a_dangling_link_of_a_reruns_own_name_is_named_too(rerun_repo, capsys):
    """Issue 44: the rerun's folder named from its parameters (no --name), data/reruns/02_seed-2, a link to
    nothing: one line naming the link and its missing target, nothing run, nothing made where it points."""
    from inkground_lib.core import layout

    root, calls = rerun_repo
    (root / layout.RERUNS).mkdir(parents=True)
    link = root / layout.RERUNS / "02_seed-2"
    link.symlink_to(root / "gone")
    assert main(["run", "02", "-p", "seed", "2"]) == 2
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if "error" in x]
    assert "Traceback" not in err and line.startswith(f"inkground run: error: {link} is a symbolic link to "
                                                      f"{root / 'gone'}, which does not exist"), err
    assert f"rm {link}" in line and calls == [] and not (root / "gone").exists()
