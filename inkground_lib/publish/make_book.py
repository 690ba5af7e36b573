"""What ``make book`` does: default datasets -> executed sections -> generated pages -> HTML book."""

from __future__ import annotations

import os
from pathlib import Path

from inkground_lib.publish import notebook_runner
from inkground_lib.publish.parameters_cell import all_section_defaults
from inkground_lib.publish.stages import Timer
from inkground_lib.core.dataset import dataset_hash, load_dataset
from inkground_lib.core.defaults import BOOK_CANDIDATE_PAGES, BOOK_MIN_BENCHMARK
from inkground_lib.core.layout import (
    BENCHMARK,
    DATA,
    PSEUDO_RUN,
    RECORDED_DATASET,
    ROOT,
    SYNTH_DATASET,
)
from inkground_lib.core.run_files import summary_csv
from inkground_lib.datasets.recorded import default_unipen_path


def earlier_outputs_hash(key: str) -> str:
    """What earlier sections' book runs produced (:func:`~inkground_lib.publish.notebook_runner.run_outputs_hash`
    of every run folder ``data/runs/*/<NN>_*/`` for NN < ``key``: tables, summaries, the benchmark set's manifest
    and inks, without the facts of how the run went), so a section re-executes when an earlier one produced
    different results, and only then (a section's own outputs never enter its fingerprint)."""
    runs = [r for r in sorted((DATA / "runs").glob("*/[0-9][0-9]_*")) if r.is_dir() and r.name[:2] < key]
    return notebook_runner.run_outputs_hash(runs)


def api_env_set() -> list[str]:
    """Names (never values) of the registry's API environment variables that are set: a section that runs
    API systems must re-execute when a key appears or disappears."""
    from inkground_lib.evaluation.systems.registry import load_registry

    names = set()
    for cfg in load_registry().values():
        for k in ("api_key_env", "base_url_env", "model_dir_env"):
            if cfg.get(k):
                names.add(cfg[k])
    return sorted(n for n in names if os.environ.get(n))


def unipen_path() -> Path | None:
    """The UNIPEN-format JSON used to build the recorded dataset: $INKGROUND_UNIPEN, else the subset
    shipped with the repository (data/unipen_cursive/unipen_cursive_dev.json), else None (deleted by hand)."""
    env = os.environ.get("INKGROUND_UNIPEN")
    if env:
        return Path(env)
    return default_unipen_path()


def ensure_datasets(progress: bool = True) -> dict[str, Path]:
    """Generate (or reuse) the default datasets; returns {name: folder}."""
    from inkground_lib.datasets.synth.generate import SynthParams, generate

    out = {"synth": generate(ROOT / SYNTH_DATASET, SynthParams(pages=BOOK_CANDIDATE_PAGES), progress=progress)}
    unipen = unipen_path()
    if unipen is not None:
        from inkground_lib.datasets.recorded import build_recorded

        out["recorded"] = build_recorded(ROOT / RECORDED_DATASET, unipen=unipen, progress=progress)
    else:
        print("[inkground] no UNIPEN file found (data/unipen_cursive/ was removed; set INKGROUND_UNIPEN): "
              "the recorded dataset is not built",
              flush=True)
    return out


def section_inputs(key: str, info: dict[str, dict]) -> dict:
    """The inputs make book gives section ``key`` for its fingerprint: the datasets' hashes (``info``,
    :func:`datasets_info`), the API variables set and what the earlier sections wrote."""
    return {**{name: d["hash"] for name, d in info.items()}, "api_env_set": api_env_set(),
            "earlier_sections": earlier_outputs_hash(key)}


def section_parameters(section: notebook_runner.Section, defaults: bool) -> dict:
    """The parameters the book runs a section with: those of its last run (``inkground run``) unless
    ``defaults``; a user's rerun therefore shows up in the book and stays until they reset it."""
    if defaults:
        return {}
    import json

    try:
        nb = json.loads(section.executed().read_text("utf-8"))
        return dict(nb["metadata"]["inkground"]["parameters"])
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def present_datasets() -> dict[str, Path]:
    """The default datasets as :func:`ensure_datasets` would give them, without building any: the synthetic one
    and, where a UNIPEN file is found, the recorded one; only those whose folder holds a manifest."""
    out = {"synth": ROOT / SYNTH_DATASET}
    if unipen_path() is not None:
        out["recorded"] = ROOT / RECORDED_DATASET
    return {k: v for k, v in out.items() if (v / "manifest.json").is_file()}


def datasets_info(datasets: dict[str, Path], loaded: dict | None = None) -> dict[str, dict]:
    """{name: kind, pages, words, content hash} of each dataset: the hashes take part in every section's
    fingerprint, the rest is shown on the reproducibility page. ``loaded``: a dict the loaded datasets are put in
    by name (``make book`` passes them on to the pages instead of loading them again)."""
    info = {}
    for name, path in datasets.items():
        ds = load_dataset(path, check_images=False)
        if loaded is not None:
            loaded[name] = ds
        info[name] = {"kind": ds.kind, "pages": len(ds.pages), "words": ds.n_words, "hash": dataset_hash(path)}
    return info


def run_book_section(section: notebook_runner.Section, user: dict, datasets: dict[str, Path], info: dict, *,
                     force: bool = False, log_output: bool = False, source: str = "make book") -> tuple[Path, bool]:
    """Execute (or reuse) one section of the book's runs with the user's parameters ``user`` (``{}``: the
    defaults; ``inkground run --into-book``: the changed ones), fitted to the datasets there are
    (:func:`fit_to_available_data`). The one way the book's runs are executed, by ``make book`` and by
    ``inkground run`` alike, so both compute the same fingerprint from the same inputs: the datasets' hashes,
    the API keys set and what the earlier sections produced (:func:`earlier_outputs_hash`); a section one of
    them has just run is current for the other."""
    inputs = section_inputs(section.key, info)
    params = fit_to_available_data(section, user, datasets)
    return notebook_runner.run_section(section.key, params, inputs=inputs, force=force, user_params=user,
                                       log_output=log_output, source=source)


def fit_to_available_data(section: notebook_runner.Section, params: dict, datasets: dict) -> dict:
    """Without recorded data (no UNIPEN file, no IAM-OnDB), sections 03 and 04 run on the benchmark set alone:
    section 03 gets ``recorded=""`` and section 04 only the run folders that exist. Parameters a user set
    explicitly are kept as they are."""
    if "recorded" in datasets:
        return params
    params = dict(params)
    defaults = notebook_runner.notebook_parameters(section)
    if "recorded" in defaults and "recorded" not in params:
        params["recorded"] = ""
    if "eval_runs" in defaults and "eval_runs" not in params:
        import ast

        runs = ast.literal_eval(defaults["eval_runs"])
        params["eval_runs"] = [r for r in runs if summary_csv(ROOT / r, "reference").is_file()]
    return params


def check_benchmark_size(bench_dir: Path) -> bool:
    """Print a warning when the default benchmark set is smaller than BOOK_MIN_BENCHMARK (pages, words);
    True when it is large enough."""
    pages, words = BOOK_MIN_BENCHMARK
    try:
        ds = load_dataset(bench_dir, check_images=False)
    except (OSError, ValueError) as e:  # a missing or broken benchmark is reported by the sections themselves
        print(f"[inkground] the benchmark set {bench_dir} cannot be read ({e})", flush=True)
        return False
    if len(ds.pages) >= pages and ds.n_words >= words:
        return True
    print(f"[inkground] warning: the default benchmark set has {len(ds.pages)} pages and {ds.n_words} words, fewer "
          f"than the book's {pages} pages and {words:,} words; raise BOOK_CANDIDATE_PAGES in "
          f"inkground_lib/core/defaults.py", flush=True)
    return False


def html_dir() -> Path:
    return ROOT / "_build" / "html"


def write_downloads(executed: list[Path]):
    """The results archive (:mod:`inkground_lib.publish.results`), BibTeX and CITATION.cff, into the HTML
    folder. The archive's files are read and hashed here; it is compressed and written in a thread (zlib lets
    the build go on: about 16 s of one core for the book's ~210 MB of run files, done beside the pages and the
    PDF). Returns (its manifest's digest and number of files, the thread's future: wait for it before the HTML is
    built; it raises what writing raised)."""
    from inkground_lib.publish.citation import bibtex
    from inkground_lib.publish.results import ARCHIVE_NAME, archive_contents, write_archive
    from inkground_lib.core.files import atomic_write_bytes

    out = html_dir()
    out.mkdir(parents=True, exist_ok=True)
    contents = archive_contents(executed)
    atomic_write_bytes(out / "inkground.bib", bibtex(ROOT).encode())
    atomic_write_bytes(out / "CITATION.cff", (ROOT / "CITATION.cff").read_bytes())
    return contents.digest(), _in_thread(lambda: write_archive(out / ARCHIVE_NAME, contents), "results-archive")


def _in_thread(work, name: str):
    """``work()`` started in a thread of its own; returns its future (whose result raises what it raised)."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(1, thread_name_prefix=name)
    try:
        return pool.submit(work)
    finally:
        pool.shutdown(wait=False)


def write_pdf(when_written=None) -> Path | None:
    """The whole book as one PDF (:mod:`inkground_lib.publish.pdf`) into the HTML folder; without Chromium, a
    warning and no PDF (the pages then link none), and an error where CI is "true" (GitHub Actions sets it).
    ``when_written``: called once a PDF printed now is in place, before its pages are checked
    (:func:`~inkground_lib.publish.pdf.print_pdf`)."""
    from inkground_lib.publish.chromium import NoChromium
    from inkground_lib.publish.pdf import PDF_NAME, make_pdf

    try:
        return make_pdf(html_dir() / PDF_NAME, when_written=when_written)
    except NoChromium as e:
        if os.environ.get("CI", "").strip().lower() in ("true", "1"):
            raise  # CI publishes the PDF: a missing Chromium fails the build
        (html_dir() / PDF_NAME).unlink(missing_ok=True)
        print(f"[inkground] no PDF of the book: {e}", flush=True)
        return None


def make_book(force: bool = False, progress: bool = True, defaults: bool = False) -> Path:
    """Build the book (see the module doc). Each stage shows its progress while it runs and ends with a line of
    its wall and CPU time (:mod:`inkground_lib.publish.stages`); each section's executed notebook is saved as
    soon as the section finishes, so a Ctrl-C loses at most the section running."""
    timer = Timer()
    with timer("datasets"):
        datasets = ensure_datasets(progress)
    loaded: dict = {}  # the datasets as loaded once here, for the reviewers' and front pages
    with timer("dataset hashes"):
        info = datasets_info(datasets, loaded)
    executed = []
    for section in notebook_runner.sections():
        user = section_parameters(section, defaults)
        with timer(f"section {section.key}"):
            path, _ = run_book_section(section, user, datasets, info, force=force)
        executed.append(path)
        if section.key == "02" and user.get("run_dir", PSEUDO_RUN) == PSEUDO_RUN:
            check_benchmark_size(ROOT / BENCHMARK)
    from inkground_lib.report.front import write_default_front_page
    from inkground_lib.report.reproducibility import write_reproducibility_page
    from inkground_lib.report.reviewers import default_inputs, write_default_reviewers_page
    from inkground_lib.report.tracer_page import write_tracer_page

    # the results archive first: the reviewers' page prints its manifest's sha256 (the anchor a reader checks a
    # downloaded archive against); the archive is compressed beside the pages and the PDF, and the whole book's
    # downloads are in the HTML folder before the HTML is built: each page's download menu links those that exist
    # (publish/sphinx_offline.book_downloads)
    with timer("results archive"):
        digest, archive_written = write_downloads(executed)
    with timer("reviewers page"):
        inputs = default_inputs(ROOT, loaded.values())  # the runs and datasets both pages read
        write_default_reviewers_page(ROOT, archive_digest=digest, inputs=inputs)
    with timer("front page"):
        write_default_front_page(ROOT, inputs)  # book/sections/front.md, included by book/intro.md
    with timer("tracer page"):
        write_tracer_page(notebook_runner.SECTIONS_DIR)  # the model card and the training curves

    with timer("reproducibility page"):
        write_reproducibility_page(notebook_runner.SECTIONS_DIR / "reproducibility.md", executed, info,
                                   defaults=all_section_defaults())
    # the HTML build starts once the PDF is in place (its pages link the downloads that exist when it starts), the
    # archive written: beside the PDF's page check when the PDF is printed now (a subprocess: the check keeps a core)
    html: list = []

    def start_html():
        archive_written.result()  # compressed beside the pages and the PDF
        html.append(_in_thread(notebook_runner.build_book, "jupyter-book"))
    with timer("pdf"):
        write_pdf(when_written=start_html)
    with timer("results archive, waited for"):
        archive_written.result()
    with timer("jupyter-book build"):
        index = (html[0] if html else _in_thread(notebook_runner.build_book, "jupyter-book")).result()
    print(timer.total_line(), flush=True)
    return index
