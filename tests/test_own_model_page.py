"""The book's page "Evaluate your own model" (book/evaluate-your-own-model.md) works as written.

The test reads the page's marked blocks (a line ``% page-test: NAME`` - a MyST comment, not shown - right
before a fenced block) and runs them in the page's order against the loopback fake server (tests/fakeserver.py):
the registry snippet is saved as the page says, each ``.venv/bin/inkground ...`` line runs through the command's
own entry point, shell assignments set the variables the later lines use, and the Python block that writes the
replay file is executed. Only these are replaced (:data:`REPLACED`): the server's address, the benchmark and
the run folder (a tiny benchmark and temporary folders, never the repository's data/), and, for section 03,
no recorded set and fewer bootstrap replicates (:data:`RUN_03_EXTRA`); ``make book`` is not run. A command that
stops working, or a page that drifts from the commands, fails here.

The table of contents is checked too: the final order of the book's pages (issue 27).
"""

from __future__ import annotations

import csv
import io
import json
import re
import shlex
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakeserver import FakeServer, default_answer, request_text  # noqa: E402

from inkground_lib.cli import main  # noqa: E402
from inkground_lib.core.layout import BENCH_EVAL_RUN, BENCHMARK, ROOT  # noqa: E402

PAGE = ROOT / "book" / "evaluate-your-own-model.md"
BLOCK = re.compile(r"^% page-test: (?P<name>[\w-]+)\n```(?P<lang>\w+)\n(?P<body>.*?)\n```$", re.M | re.S)
ORDER = ["registry", "check", "predict", "replay-file", "replay-check", "run"]
"""The marked blocks, in the order the page gives them."""

REPLACED = ("MY_VLM_BASE_URL", "B", "R")
"""The page's variables the test gives its own values: the fake server's address, the tiny benchmark, a
temporary run folder."""

RUN_03_EXTRA = ["-p", "recorded", "", "-p", "n_boot", "50"]
"""Appended to the page's ``inkground run 03``: no recorded set (the test builds none) and fewer bootstrap
replicates (speed); every other parameter is the page's."""

MODEL = "org/My-VL-7B"


def page_blocks() -> dict[str, tuple[str, str]]:
    """{name: (language, text)} of the page's marked fenced blocks; every fenced block of the page that runs
    an inkground command or the library is one of them (so none escapes the test)."""
    text = PAGE.read_text("utf-8")
    blocks = {m["name"]: (m["lang"], m["body"]) for m in BLOCK.finditer(text)}
    assert list(blocks) == ORDER, f"{PAGE.name}: marked blocks {list(blocks)}, expected {ORDER}"
    marked = {body for _, body in blocks.values()}
    for fence in re.finditer(r"^```(\w+)\n(.*?)\n```$", text, re.M | re.S):
        if re.search(r"\binkground\b", fence[2]):
            assert fence[2] in marked, f"{PAGE.name}: this block is not run by the test:\n{fence[2]}"
    return blocks


class PageShell:
    """Runs the page's shell lines: ``export NAME=VALUE`` and ``NAME=VALUE`` set variables (exports go to the
    environment), ``.venv/bin/inkground ARGS`` runs the command in this process, ``make book`` is recorded
    and not run; anything else fails the test (the page may only use what this runner can check)."""

    def __init__(self, monkeypatch, cwd: Path, replaced: dict[str, str]):
        self.mp, self.cwd, self.replaced = monkeypatch, cwd, replaced
        self.vars: dict[str, str] = {"PWD": str(cwd)}
        self.assigned: dict[str, str] = {}  # as the page writes them, before replacement
        self.results: list[tuple[list[str], int, str, str]] = []
        self.skipped: list[str] = []

    def expand(self, word: str) -> str:
        import os

        def sub(m):
            name = m[1] or m[2]
            value = self.vars.get(name, os.environ.get(name))
            assert value is not None, f"{PAGE.name}: ${name} is used before it is set"
            return value

        return re.sub(r"\$(?:\{(\w+)\}|(\w+))", sub, word)

    def run(self, text: str) -> None:
        for line in text.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if not words:
                continue
            exported = words[0] == "export"
            if exported:
                words = words[1:]
            if len(words) == 1 and re.fullmatch(r"[A-Za-z_]\w*=.*", words[0]):
                name, value = words[0].split("=", 1)
                self.assigned[name] = value
                value = self.replaced.get(name, self.expand(value))
                self.vars[name] = value
                if exported:
                    self.mp.setenv(name, value)
                continue
            assert not exported, f"{PAGE.name}: cannot run {line!r}"
            if words[:1] == [".venv/bin/inkground"]:
                argv = [self.expand(w) for w in words[1:]]
                if argv[:2] == ["run", "03"]:
                    argv += RUN_03_EXTRA
                out, err = io.StringIO(), io.StringIO()
                with redirect_stdout(out), redirect_stderr(err):
                    code = main(argv)
                self.results.append((argv, code, out.getvalue(), err.getvalue()))
                assert code == 0, f"{PAGE.name}: `{line.strip()}` exited {code}:\n{out.getvalue()}\n{err.getvalue()}"
            elif words == ["make", "book"]:
                self.skipped.append(line)
            else:
                raise AssertionError(f"{PAGE.name}: the page runs {line!r}, which this test cannot check")

    def output(self, *argv: str) -> str:
        """The standard output of the last command whose arguments start with ``argv``."""
        for args, _, out, _ in reversed(self.results):
            if args[:len(argv)] == list(argv):
                return out
        raise AssertionError(f"no command {' '.join(argv)} ran")


def my_model_for(seen: list):
    """The page's ``my_model``: the fake server's answer to the same request (its text parts decide it), so
    the replayed answers equal the answers the server gave."""

    def my_model(system: str, parts) -> str:
        seen.append(system)
        texts = [v for k, v in parts if k == "text"]
        return default_answer({"messages": [{"role": "system", "content": system},
                                            {"role": "user", "content": [{"type": "text", "text": t}
                                                                         for t in texts]}]})
    return my_model


def posts(srv) -> list:
    return [r for r in srv.requests if r.protocol != "get"]


def tiny_benchmark(root: Path, real_pages: bool) -> Path:
    """A tiny benchmark: 6 hand-made pages of 3 words (blank photos, 18 distinct requests: cheap to build) for
    the commands, or 3 synthetic photographed pages (``real_pages``) for section 03's notebook."""
    if real_pages:
        from inkground_lib.datasets.synth.generate import SynthParams, generate

        return generate(root, SynthParams(pages=3, words_min=4, words_max=6, words_mean=5, width=600, height=800),
                        progress=False)
    from conftest import make_tiny_dataset

    return make_tiny_dataset(root, pages=6, words=3, unique_texts=True)


@pytest.fixture
def page_env(request, tmp_path, monkeypatch):
    """The fake server, a tiny benchmark, a working folder; the repository's sections folder replaced by a
    temporary one (``inkground run`` writes the executed notebook there)."""
    from inkground_lib.publish import notebook_runner

    bench = tiny_benchmark(tmp_path / "bench", real_pages=getattr(request, "param", False))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr(notebook_runner, "SECTIONS_DIR", tmp_path / "sections")
    for name in ("INKGROUND_SYSTEMS", "MY_VLM_API_KEY", "MY_ANSWERS", "MY_VLM_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with FakeServer(models=[MODEL]) as srv:
        replaced = {"MY_VLM_BASE_URL": srv.openai_url, "B": str(bench), "R": str(tmp_path / "run03")}
        yield srv, bench, work, PageShell(monkeypatch, work, replaced)


def run_steps(page_env, upto: str) -> dict:
    """Run the page's blocks in order up to and including ``upto``; returns what the checks need."""
    srv, bench, work, shell = page_env
    blocks = page_blocks()
    seen: list[str] = []
    for name in ORDER[: ORDER.index(upto) + 1]:
        lang, body = blocks[name]
        if name == "registry":
            assert lang == "yaml"
            (work / "my-systems.yaml").write_text(body + "\n", "utf-8")  # "Save this as my-systems.yaml"
        elif name == "replay-file":
            assert lang == "python" and f'"{BENCHMARK}"' in body  # the page reads the book's default benchmark
            code = body.replace(f'"{BENCHMARK}"', repr(str(bench)))
            exec(compile(code, f"{PAGE.name}:{name}", "exec"), {"my_model": my_model_for(seen)})
        else:
            assert lang == "bash"
            shell.run(body)
    return {"seen": seen}


def test_the_page_registers_checks_estimates_asks_and_replays(page_env):
    srv, bench, work, shell = page_env
    got = run_steps(page_env, "replay-check")
    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.evaluation.systems.registry import load_registry

    # the page's own defaults are the library's, and the registry file is the one exported
    assert shell.assigned["B"] == BENCHMARK and shell.assigned["R"] == BENCH_EVAL_RUN
    assert shell.assigned["INKGROUND_SYSTEMS"] == "$PWD/my-systems.yaml"
    reg = load_registry()
    assert reg["my-vlm"]["model"] == MODEL and reg["my-vlm-answers"]["adapter"] == "replay"
    # check: the endpoint answers and serves the model; --live sends one request and parses it
    assert re.search(r"^my-vlm\b.*\byes\b", shell.output("check", "--systems", "my-vlm"), re.M)
    assert "parsed ok" in shell.output("check", "--systems", "my-vlm", "--live")
    n_live = 1
    # no key is set: key_optional sends no Authorization header
    assert all(r.headers.get("authorization") is None for r in srv.requests)
    # the dry run sends nothing; the cap sends 10; the last command sends the rest, the cache skips the 10
    n = load_dataset(bench).n_words
    dry = shell.output("predict", "--system", "my-vlm", "--dataset", str(bench), "--run", shell.vars["R"],
                       "--dry-run")
    assert f"{n} words" in dry and "0 cached" in dry
    sent = posts(srv)[n_live:]
    distinct = int(re.search(r"(\d+) distinct requests", dry)[1])
    assert distinct > 10
    capped = shell.output("predict", "--system", "my-vlm", "--dataset", str(bench), "--run", shell.vars["R"],
                          "--max-requests", "10")
    assert f"{distinct - 10} not sent (spending cap)" in capped
    cache = Path(shell.vars["R"]) / "predictions" / "my-vlm.jsonl"
    cached = [json.loads(x) for x in cache.read_text("utf-8").splitlines()]
    assert len(sent) == distinct == len(cached) and all(r["status"] == "ok" for r in cached)
    assert all(r.body["model"] == MODEL for r in sent)
    # the replay file: one line per word, its answers built from the same requests the server received (the
    # page's my_model answers as the fake server does, so each word's two answers are equal)
    answers = {r["word_id"]: r["raw_text"] for r in map(json.loads, (work / "my-answers.jsonl").read_text("utf-8")
                                                        .splitlines())}
    assert len(answers) == n and len(got["seen"]) == n
    assert {r.body["messages"][0]["content"] for r in sent} == set(got["seen"])
    served = {r["word_id"]: r["raw_text"] for r in cached if "word_id" in r}
    words = [w.id for p in load_dataset(bench).pages for w in p.words]
    assert set(answers) == set(words)
    assert served and all(answers[w] == text for w, text in served.items())
    assert re.search(r"^my-vlm-answers\b.*runs here", shell.output("check", "--systems", "my-vlm-answers"), re.M)


@pytest.mark.slow  # executes section 03's notebook on the tiny benchmark
@pytest.mark.parametrize("page_env", [True], indirect=True, ids=["synthetic-pages"])
def test_the_page_runs_section_03_with_the_model_and_its_replayed_answers(page_env, tmp_path):
    srv, bench, work, shell = page_env
    run_steps(page_env, "replay-check")
    before = len(posts(srv))
    run_steps_from(page_env, "run")
    assert len(posts(srv)) == before  # section 03 took my-vlm's answers from the cache of step 4
    assert shell.skipped == ["make book"]
    assert (tmp_path / "sections" / "03_model_evaluation.ipynb").is_file()
    rows = {r["system"]: r for r in csv.DictReader(open(Path(shell.vars["R"]) / "summary-reference.csv"))}
    assert {"reference", "skeleton", "font", "box", "my-vlm", "my-vlm-answers"} <= set(rows)
    live, replayed = rows["my-vlm"], rows["my-vlm-answers"]
    assert int(live["n_words"]) > 0 and float(live["valid_rate"]) > 0
    # the replayed answers are the server's answers to the same requests: the same scores
    for col in ("n_words", "valid_rate", "dtw", "chamfer"):
        assert live[col] == replayed[col], col


def run_steps_from(page_env, name: str) -> None:
    """Run one more marked block (bash) after :func:`run_steps`."""
    lang, body = page_blocks()[name]
    assert lang == "bash"
    page_env[3].run(body)


def test_the_table_of_contents_has_the_final_order():
    """Issue 27: intro, evaluate your own model, sections 01-04, reviewers' page, reproducibility, dataset
    format, glossary, bibliography, design (issue 29 adds the tracer's model page after section 04, which
    sections 02 and 03 link to); every hand-written page it names exists."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text("utf-8"))
    files = [toc["root"]] + [c["file"] for c in toc["chapters"]]
    assert files == ["book/intro", "book/evaluate-your-own-model", "book/sections/01_dataset_statistics",
                     "book/sections/02_pseudo_labels", "book/sections/03_model_evaluation",
                     "book/sections/04_tradeoffs", "book/sections/tracer", "book/sections/reviewers", "book/sections/reproducibility",
                     "book/dataset-format", "book/glossary", "book/bibliography", "book/design"]
    for f in files:
        if not f.startswith("book/sections/"):  # generated by make book
            assert (ROOT / f"{f}.md").is_file(), f


def test_the_readme_points_to_the_page():
    text = (ROOT / "README.md").read_text("utf-8")
    assert "book/evaluate-your-own-model.md" in text and "Evaluate your own model" in text


def test_the_page_names_every_field_max_cost_needs():
    """Issue 32: the page said prices were enough for --max-cost, which also needs the image-token rule. Every
    field the cap needs (plan.COST_FIELDS) is named where the page tells how to get a cost."""
    from inkground_lib.evaluation.plan import COST_FIELDS

    text = PAGE.read_text("utf-8")
    para = next(p for p in text.split("\n\n") if "--max-cost" in p and "dry run" in p)
    assert all(f"`{f}`" in para for f in COST_FIELDS), para
