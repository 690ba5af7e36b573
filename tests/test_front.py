"""The generated front page (inkground_lib.report.front) and the reproducibility page's build facts: every
number is the one in the file it comes from, a missing run reads as "not run", and nothing shows NaN/None."""
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from inkground_lib.core.layout import ROOT
from inkground_lib.evaluation.systems.registry import load_registry
from inkground_lib.report import front_numbers
from inkground_lib.report.front import front_page, write_front_page
from inkground_lib.report.front_numbers import front_page_numbers

PAPER = ROOT / "data" / "paper"


def _root(tmp: Path, config: str = "title: x\n") -> Path:
    """A repository-like folder with the paper's claims, a config, a licence and no runs."""
    shutil.copytree(PAPER, tmp / "data" / "paper")
    (tmp / "_config.yml").write_text(config)
    (tmp / "LICENSE").write_text("MIT License\n\nCopyright (c) 2026 the inkground authors\n")
    shutil.copy(ROOT / "CITATION.cff", tmp / "CITATION.cff")
    return tmp


def _pseudo_run(d: Path) -> Path:
    d.mkdir(parents=True)
    summary = {"components": {"derenderer": "skeleton", "ocr_engine": "rapidocr", "ratings_source": "simulated"},
               "numbers": {"candidates": 1234, "words": 5678, "ocr_pass_pages": 321, "ocr_threshold": 0.85,
                           "ocr_pass_rate": 0.26, "benchmark_pages": 77, "benchmark_share": 0.0624,
                           "word_dtw_median": 0.12345, "word_chamfer_median": 0.01876,
                           "word_order_differs_share": 0.388, "word_direction_differs_share": 0.307,
                           "kept_dtw_median": 0.1327, "rejected_dtw_median": 0.1434, "ocr_fail_dtw_median": 0.1381,
                           "rater_agreement": 0.623, "rater_alpha": 0.2419, "ratings": 642}}
    (d / "summary.json").write_text(json.dumps(summary))
    pd.DataFrame({"word_id": ["a", "b", "c"], "dtw": [0.1, float("nan"), 0.3]}).to_csv(d / "words.csv", index=False)
    return d


def _eval_run(d: Path) -> Path:
    d.mkdir(parents=True)
    facts = {"dataset": "synth-benchmark", "dataset_kind": "benchmark", "reference": "reference",
             "settings": {"ocr_engine": "rapidocr"}, "style": {"chance": 1 / 41},
             "unavailable": {"gemini-3.1-pro": "system gemini-3.1-pro: environment variable GEMINI_API_KEY is not "
                                               "set (it must hold the api key); set it in the environment"}}
    (d / "facts-reference.json").write_text(json.dumps(facts))
    pd.DataFrame([{"system": "skeleton", "label": "Skeleton derenderer (InkSight stand-in)", "kind": "specialist",
                   "n_words": 1291, "n_pages": 41, "dtw": 0.11779, "chamfer": 0.01619, "ar": 0.7681, "style": 0.0829},
                  {"system": "font", "label": "Font baseline (Hershey futural)", "kind": "local", "n_words": 1291,
                   "n_pages": 41, "dtw": 0.2288, "chamfer": float("nan"), "ar": 1.0, "style": 0.0293}]
                 ).to_csv(d / "summary-reference.csv", index=False)
    return d


@pytest.fixture
def registry():
    return load_registry(use_env=False)


def test_numbers_are_those_of_the_run_files(tmp_path, registry):
    root = _root(tmp_path)
    n = front_page_numbers(root, eval_runs=[_eval_run(root / "run03")], pseudo_run=_pseudo_run(root / "run02"),
                           registry=registry)
    text = front_page(n)
    # section 02: funnel counts, distances to the truth, words that have a truth (2 of 3: one dtw is NaN)
    assert "of 1,234 candidate pages (5,678 words), 321 passed" in text
    assert "(6% of candidates)" in text  # benchmark_share 0.0624
    assert "over the 2 candidate words" in text
    assert "true trajectory is 0.123 " in text and "Chamfer distance` 0.019" in text
    assert "39% of words have their strokes in a different order and 31%" in text
    assert "0.133 on the 77 kept pages, 0.143 on pages the raters rejected and 0.138" in text
    assert "Krippendorff's alpha` is 0.242" in text
    # section 03: the rows as in the summary; a NaN is an em dash with a reason, never "nan"
    assert "*synth-benchmark against pseudo-labels* (1,291 words on 41 pages; Style's chance level 0.024)" in text
    assert "| Skeleton derenderer (InkSight stand-in) (made these references) | 0.118 | 0.016 | 0.768 | " \
           "0.083 |" in text
    assert "| Font baseline (Hershey futural) | 0.229 | \u2014 not computed | 1.000 | 0.029 |" in text
    # which systems ran, and why the others did not (from the run's facts)
    assert "0 of them ran here" in text and "Gemini-3.1-Pro: not run (`GEMINI_API_KEY` is not set)" in text
    assert "Claude-Opus-4.8: not run (no run requested it)" in text
    assert "DeepSeek-OCR: not run" in text and "`rapidocr`" in text
    assert not re.search(r"\b(?:nan|NaN|None)\b", text)


def test_a_missing_run_reads_as_not_run(tmp_path, registry):
    root = _root(tmp_path)
    n = front_page_numbers(root, eval_runs=[], pseudo_run=root / "no-such-run", registry=registry)
    text = front_page(n)
    assert "**Pseudo-labels (section 02):** not run" in text and "no-such-run/summary.json" in text
    assert "**Systems scored (section 03):** not run" in text
    assert "Gemini-3.1-Pro: not run (no section-03 run)" in text
    assert "bench_book" not in text  # issue 34: one build time, this build's (none here), never the benchmark's
    assert not re.search(r"\b(?:nan|NaN|None)\b", text)


def test_claim_counts_are_the_reviewers_pages(tmp_path, registry):
    """The front page counts claims by status exactly as the reviewers' page does, from the same inputs."""
    from inkground_lib.analysis.claims import load_claims
    from inkground_lib.core.paper import paper_numbers
    from inkground_lib.report.reviewers import write_reviewers_page

    root = _root(tmp_path)
    runs, pseudo = [_eval_run(root / "run03")], _pseudo_run(root / "run02")
    n = front_page_numbers(root, eval_runs=runs, pseudo_run=pseudo, registry=registry)
    reported = paper_numbers(root / "data/paper/reported.csv")
    page = write_reviewers_page(tmp_path / "reviewers.md", load_claims(root / "data/paper/claims.csv", reported),
                                reported, eval_runs=runs, pseudo_run=pseudo).read_text()
    table = dict(re.findall(r"^\| \*\*(.+?)\*\* \| .*? \| (\d+) \|$", page, re.M))
    assert table and {k: int(v) for k, v in table.items()} == {s: n.claims.get(s, 0) for s in n.statuses}
    assert sum(n.claims.values()) == len(pd.read_csv(root / "data/paper/claims.csv"))
    text = front_page(n)
    for status, k in table.items():
        assert f"| {status} | {k} |" in text


def test_benchmark_times_repository_link_and_citation(tmp_path, registry):
    root = _root(tmp_path, config="title: x\nrepository:\n  url: https://example.org/inkground\n")
    (root / "benchmarks/results").mkdir(parents=True)
    (root / "benchmarks/results/make_book.txt").write_text(
        "# .venv/bin/python benchmarks/bench_book.py\n"
        "# 2026-11-30 15:40 UTC, commit e65f9b9, x86_64 2 cores (shared), Python 3.11.7; the budget column ...\n"
        "first make book: 830.0 s wall (including installation); load average 1.09\n"
        "second make book (nothing changed): 21.0 s wall\n")
    text = front_page(front_page_numbers(root, eval_runs=[], pseudo_run=None, registry=registry))
    # issue 34: the front page gives one build time, this build's with its commit; a benchmark of another commit
    # (benchmarks/results) is not a second one beside it
    assert "830 s" not in text and "21 s" not in text and "e65f9b9" not in text
    assert "git clone https://example.org/inkground inkground" in text
    assert "<https://example.org/inkground>" in text
    assert "version 0.1.0" in text and "licence MIT" in text  # from CITATION.cff
    # without a repository address anywhere: no link, no placeholder, and the page says to use the copy you have
    (root / "_config.yml").write_text("title: x\n# repository:\n#   url: https://example.org/x\n")
    text = front_page(front_page_numbers(root, eval_runs=[], pseudo_run=None, registry=registry))
    assert "https://example.org" not in text and "No repository address is configured here" in text
    assert "start from the copy you have" in text and "<repository URL>" not in text and "git clone http" not in text
    # CITATION.cff's repository-code, or a pyproject source URL, is a configured address too
    cff = (root / "CITATION.cff").read_text()
    (root / "CITATION.cff").write_text(cff + "repository-code: https://example.org/cff-repo\n")
    assert front_numbers.configured_repository(root) == ("https://example.org/cff-repo", "CITATION.cff")
    (root / "CITATION.cff").write_text(cff)
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n[project.urls]\nHomepage = "https://example.org/h"\n'
                                         'Source-Code = "https://example.org/src"\n')
    assert front_numbers.configured_repository(root) == ("https://example.org/src", "pyproject.toml")
    text = front_page(front_page_numbers(root, eval_runs=[], pseudo_run=None, registry=registry))
    assert "git clone https://example.org/src inkground" in text


def _true_run(d: Path, box=(0.255, 0.251, 0.258), font=(0.227, 0.221, 0.232)) -> Path:
    """A section-03 run folder scored against both references: box ahead of font on DTW against the pseudo-labels,
    the converse against the truth (``box`` and ``font``: DTW with its interval against the truth)."""
    d.mkdir(parents=True)
    for ref, rows in (("reference", {"box": (0.287, 0.282, 0.291), "font": (0.299, 0.289, 0.307),
                                     "skeleton": (0.0, 0.0, 0.0)}),
                      ("true", {"box": box, "font": font, "skeleton": (0.137, 0.129, 0.144)})):
        (d / f"facts-{ref}.json").write_text(json.dumps({"dataset": "synth-benchmark", "dataset_kind": "benchmark",
                                                         "reference": ref, "settings": {}, "unavailable": {}}))
        pd.DataFrame([{"system": s, "label": f"{s.title()} baseline (x)", "kind": "local", "n_words": 10,
                       "n_pages": 2, "dtw": v, "dtw_lo": lo, "dtw_hi": hi, "chamfer": 0.1, "ar": 0.5, "style": 0.1}
                      for s, (v, lo, hi) in rows.items()]).to_csv(d / f"summary-{ref}.csv", index=False)
    return d


def test_what_this_book_found_is_computed_and_conditional(tmp_path, registry):
    root = _root(tmp_path)
    pseudo = _pseudo_run(root / "run02")
    rng = __import__("numpy").random.default_rng(0)
    pages = pd.DataFrame({"page": [f"p{i}" for i in range(60)], "ocr_pass": [i % 3 != 0 for i in range(60)],
                          "kept": [i % 3 == 1 for i in range(60)],
                          "dtw": 0.14 + rng.normal(0, 0.01, 60) - [0.03 * (i % 3 == 1) for i in range(60)]})
    pages.to_csv(pseudo / "pages.csv", index=False)
    n = front_page_numbers(root, eval_runs=[_true_run(root / "run03")], pseudo_run=pseudo, registry=registry)
    text = front_page(n)
    found = text.split("## What this book found", 1)[1].split("## What this book measured", 1)[0]
    assert "the choice of reference reverses a ranking" in found
    assert "Font baseline has the lower DTW (0.227 \\[0.221, 0.232\\] against 0.255 \\[0.251, 0.258\\]" in found
    # the filters: the kept pages are 0.03 nearer the truth (yes); OCR-passed and failed pages are not (no)
    ocr, raters = n.filters["ocr"], n.filters["raters"]
    assert raters["hi"] < 0 and "**Yes** for the {term}`rater filter`" in found
    assert f"{raters['median_a']:.3f} against {raters['median_b']:.3f}" in found
    assert (ocr["lo"] < 0 < ocr["hi"]) == ("**No** for the {term}`OCR filter`: pages that passed it are as far" in found)
    assert "The raters here are simulated" in found
    # overlapping intervals on both sides: no flip is stated, and the page says so
    n = front_page_numbers(root, eval_runs=[_true_run(root / "run03b", box=(0.25, 0.2, 0.3), font=(0.24, 0.2, 0.3))],
                           pseudo_run=pseudo, registry=registry)
    found = front_page(n).split("## What this book measured", 1)[0]
    assert "reverses a ranking" not in found and "reverses no order of two systems" in found
    assert not re.search(r"\b(?:nan|NaN|None)\b", front_page(n))


def test_the_run_box_time_is_this_builds_own(tmp_path, registry):
    root = _root(tmp_path)
    sections = root / "book" / "sections"
    sections.mkdir(parents=True)
    for name, secs in (("02_pseudo_labels", 207.6), ("03_model_evaluation", 344.0)):
        nb = {"cells": [], "metadata": {"inkground": {"section": name},
                                        "papermill": {"parameters": {}, "duration": secs,
                                                      "end_time": "2026-11-30T18:44:36+00:00"}}}
        (sections / f"{name}.ipynb").write_text(json.dumps(nb))
    text = front_page(front_page_numbers(root, eval_runs=[], pseudo_run=None, registry=registry))
    assert "**This build** (commit \u2014 not a git checkout): the sections took 552 s (9.2 min)" in text
    assert text.count("the sections took") == 1  # one build time on the page (issue 34)
    shutil.rmtree(sections)
    text = front_page(front_page_numbers(root, eval_runs=[], pseudo_run=None, registry=registry))
    assert "**This build** (commit \u2014 not a git checkout): section run times \u2014 not recorded" in text


def test_the_real_config_and_code_licence(tmp_path, registry):
    import yaml

    cfg = yaml.safe_load((ROOT / "_config.yml").read_text()) or {}
    assert front_numbers.repository_url(ROOT / "_config.yml") == ((cfg.get("repository") or {}).get("url") or None)
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    out = write_front_page(tmp_path / "front.md", root=ROOT, eval_runs=[], pseudo_run=tmp_path / "none")
    text = out.read_text()
    assert "Code: `LICENSE` (MIT License)" in text
    assert "{cite}`inkground`" in text and "{cite}`unipen,unipen-train-r01-v07`" in text


def test_reproducibility_page_has_build_time_commit_and_run_times(tmp_path):
    from inkground_lib.publish.parameters_cell import all_section_defaults
    from inkground_lib.report.reproducibility import (
        git_state,
        write_reproducibility_page,
    )

    nb = {"cells": [{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "outputs": [],
                     "source": 'candidates = "data/datasets/synth"\nrun_dir = "no/such/run"\n'},
                    {"cell_type": "code", "metadata": {"tags": ["injected-parameters"]}, "outputs": [],
                     "source": 'run_dir = "run02"\n'}],
          "metadata": {"inkground": {"section": "02_pseudo_labels", "fingerprint": "ab" * 32},
                                    "papermill": {"parameters": {"ocr_threshold": 0.9}, "duration": 207.61,
                                                  "end_time": "2026-11-30T18:44:36.742046+00:00"}}}
    (tmp_path / "02.ipynb").write_text(json.dumps(nb))
    (tmp_path / "01.ipynb").write_text(json.dumps({"cells": [], "metadata": {}}))
    (tmp_path / "run02" / "benchmark" / "pages").mkdir(parents=True)
    for f in ("run02/summary.json", "run02/notes.txt", "run02/benchmark/manifest.json", "run02/benchmark/pages/a.png"):
        (tmp_path / f).write_text("{}")
    text = write_reproducibility_page(tmp_path / "r.md", [tmp_path / "02.ipynb", tmp_path / "01.ipynb"], {},
                                      defaults=all_section_defaults(), built_at="2026-11-30 20:00 UTC",
                                      commit="`abc1234`",
                                      root=tmp_path).read_text()
    assert "Built 2026-11-30 20:00 UTC from commit `abc1234`." in text
    assert "| 02_pseudo_labels | `ocr_threshold=0.9` (default `0.85`) | 208 s (3.5 min) | 2026-11-30 18:44 |" in text
    assert "| 01 | defaults | \u2014 (not recorded) | \u2014 (not recorded) |" in text
    assert ".venv/bin/inkground run 04 -p n_boot 200 " in text and "\ninkground run" not in text
    assert "--into-book" in text and "data/reruns/" in text and "{ref}`rerunning-a-section`" in text
    # the run outputs each section read and wrote, from the values it ran with (its parameters cell + papermill's)
    # (a run folder's own files only: notes.txt is not one; the papermill-injected run_dir wins over the default)
    assert "## Run outputs" in text
    assert ("* **02_pseudo_labels** read `data/datasets/synth` (not found); wrote `run02` (summary.json, "
            "benchmark/ with 2 files)." in text), text
    assert "* **01** read nothing; wrote nothing (the page only)." in text
    state = git_state(ROOT)
    assert re.fullmatch(r"`[0-9a-f]{7,}`( with uncommitted changes)?", state), state
    assert git_state(tmp_path).startswith("\u2014")  # not a checkout: an em dash with the reason


def test_reproducibility_page_is_not_rewritten_when_only_its_build_time_would_change(tmp_path, monkeypatch):
    """Issue 32: a rerun of make book with nothing changed changes no page (the PDF is printed from the pages
    and is made again only when they change); a change of what the page says writes it with the new time."""
    from inkground_lib.report import reproducibility as rep

    page = tmp_path / "r.md"
    monkeypatch.setattr(rep, "build_time", lambda: "2026-12-02 17:02 UTC")
    rep.write_reproducibility_page(page, [], {}, defaults={}, commit="`abc1234`", root=tmp_path)
    first = page.read_text()
    monkeypatch.setattr(rep, "build_time", lambda: "2026-12-02 17:04 UTC")
    rep.write_reproducibility_page(page, [], {}, defaults={}, commit="`abc1234`", root=tmp_path)
    assert page.read_text() == first and "Built 2026-12-02 17:02 UTC from commit `abc1234`." in first
    rep.write_reproducibility_page(page, [], {"synth": {"kind": "synth", "pages": 3, "words": 9, "hash": "f" * 64}},
                                   defaults={}, commit="`abc1234`", root=tmp_path)
    assert "Built 2026-12-02 17:04 UTC" in page.read_text() and "| synth | synth | 3 | 9 |" in page.read_text()
    # another commit: rewritten
    rep.write_reproducibility_page(page, [], {}, defaults={}, commit="`def5678`", root=tmp_path)
    assert "from commit `def5678`." in page.read_text()


def test_book_check_allows_links_but_not_external_resources():
    """tests/test_book.py's EXTERNAL: a link to another site is allowed, anything fetched from one is not."""
    from test_book import EXTERNAL

    assert not EXTERNAL.search('<a class="reference external" href="https://arxiv.org/abs/2402.05804">x</a>')
    for bad in ['<script src="https://cdn.example.org/x.js"></script>', '<img src="//example.org/a.png">',
                '<link rel="stylesheet" href="https://fonts.example.org/css">',
                '<link rel="preload" as="font" href="https://example.org/f.woff2">',
                "<style>@font-face { src: url('https://example.org/f.woff2') }</style>",
                '<style>@import "https://example.org/s.css";</style>', '<iframe src="https://example.org"></iframe>']:
        assert EXTERNAL.search(bad), bad


def test_the_first_screen_answers_first(tmp_path, registry):
    """Issue 34: the page opens with the paper's headline claims and numbers beside what ran here and what could
    not (with what it needs), the funnel beside ours, what this book found and one build time with its commit;
    rater agreement in section 02's unit."""
    from inkground_lib.core.paper import paper_numbers
    from inkground_lib.report.prose import AGREEMENT_UNIT

    root = _root(tmp_path)
    n = front_page_numbers(root, eval_runs=[_eval_run(root / "run03")], pseudo_run=_pseudo_run(root / "run02"),
                           registry=registry)
    text = front_page(n)
    body = text.split("-->", 1)[1].lstrip()
    assert body.startswith("**The paper claims**")  # book/intro.md includes this right under its title
    glance = body.split("## ", 1)[0]
    rep = paper_numbers()["value"]
    for pid in ("gemini_ink_dtw", "gemini_ink_ar", "open_ar_min", "open_ar_max", "kimi_ink_style", "inksight_iam_dtw"):
        assert f"{rep[pid]:.3f}" in glance, pid
    assert "537 of 2,984 pages pass its filters" in glance
    assert ("**Ran here, offline:** Font baseline and Skeleton derenderer; pseudo-labels by derenderer `skeleton`"
            in glance)
    assert "**Our numbers beside the paper's:** candidate pages → OCR filter → kept, 1,234 → 321 → 77 here" in glance
    assert "**Could not run here:** the 5 VLMs the paper names (`ANTHROPIC_API_KEY`, `GEMINI_API_KEY`" in glance
    assert "InkSight Small-p (needs TensorFlow and InkSight's weights)" in glance and "DeepSeek-OCR (a GPU" in glance
    assert "**Found here:**" in glance and "**This build**" in glance
    assert glance.count("the sections took") + glance.count("section run times") == 1
    # the details follow: the headline table with what each system needs, the funnel beside ours
    table = body.split("## The paper's headline claims beside this book", 1)[1].split("## ", 1)[0]
    assert "Gemini-3.1-Pro: not run (needs `GEMINI_API_KEY`)" in table
    assert "2,984 → 777 → 537 pages | ours: 1,234 → 321 → 77 pages" in table
    assert len(glance) < 1400  # a screen, not a chapter (measured: it ends above 800 px at 420 px wide)
    assert "on our recorded pages" not in table  # no recorded run: no stand-in number
    rec = _eval_run(root / "run03rec")
    facts = json.loads((rec / "facts-reference.json").read_text())
    (rec / "facts-reference.json").write_text(json.dumps(facts | {"dataset": "recorded", "dataset_kind": "recorded"}))
    n2 = front_page_numbers(root, eval_runs=[root / "run03", rec], pseudo_run=root / "run02", registry=registry)
    glance2 = front_page(n2).split("## What this book found", 1)[0]  # the glance and the headline table
    assert ("InkSight Small-p: not run (no run requested it); on our recorded pages (a stand-in system on stand-in "
            "data, not the paper's quantity): Skeleton derenderer (InkSight stand-in) DTW 0.118") in glance2
    # one unit for rater agreement, section 02's, with the paper's value beside ours
    assert f"0.623 of the {AGREEMENT_UNIT} (paper {rep['rater_agreement']:.3f}" in text
    assert "of the pages rated at least twice" not in text


def test_the_reproducibility_page_names_a_changed_parameter_beside_its_default_never_a_raw_none():
    """A parameter whose notebook default is None ("not set") is shown as such, not as `None` (issue 13's rule)."""
    from inkground_lib.publish.parameters_cell import section_defaults
    from inkground_lib.report.reproducibility import _parameter_text

    assert _parameter_text("ratings", "r.csv", section_defaults("02")) == "`ratings='r.csv'` (not set by default)"
    assert _parameter_text("n_boot", 200, section_defaults("04")) == "`n_boot=200` (default `1000`)"
    assert _parameter_text("n_boot", 1000, section_defaults("04")) == "`n_boot=1000`"
