"""The generated part of the book's front page: what this book measured, which systems ran, how many of the
paper's claims hold, how to run it, how to cite it and the licences.

``make book`` writes ``book/sections/front.md`` (:func:`write_default_front_page`) after the reviewers' page;
``book/intro.md`` includes it. Every number comes from a file: the section-02 run summary (pseudo-labels
against the writers' true trajectories), the section-03 run summaries and facts, the claim statuses computed
exactly as the reviewers' page computes them, the systems registry, the make-book benchmark result, the
shipped UNIPEN subset, CITATION.cff and _config.yml. A missing input is shown as an em dash with its reason,
never as NaN or None.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Iterable, Mapping

from inkground_lib.core.files import atomic_write_text
from inkground_lib.core.layout import PSEUDO_RUN, ROOT, SECTIONS_DIR
from inkground_lib.report.format import EM_DASH as DASH
from inkground_lib.report.format import missing

BENCH_RESULT = "benchmarks/results/make_book.txt"
UNIPEN_JSON = "data/unipen_cursive/unipen_cursive_dev.json"


def fmt(v, digits: int = 3, reason: str = "not computed") -> str:
    """A number with ``digits`` decimals, or an em dash with ``reason`` when it is None or not finite."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return missing(reason)
    return f"{f:.{digits}f}" if math.isfinite(f) else missing(reason)


def count(v, reason: str = "not counted") -> str:
    """A count with thousands separators, or an em dash with ``reason``."""
    f = _finite(v)
    return f"{int(f):,}" if f is not None else missing(reason)


def pct(v, reason: str = "not computed") -> str:
    """A share as a whole percentage, or an em dash with ``reason``."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return missing(reason)
    return f"{100 * f:.0f}%" if math.isfinite(f) else missing(reason)


# ---------------------------------------------------------------------------------------------------------
# inputs


@dataclass
class EvalRunNumbers:
    """One section-03 run (one reference) as the front page shows it."""

    run_dir: str
    dataset: str
    reference: str  # "reference" (pseudo-labels / recorded reference inks) or "true" (the writers' true inks)
    ocr_engine: str
    rows: list[dict]  # per system: system, label, kind, n_words, n_pages, dtw, chamfer, ar, style
    unavailable: dict[str, str]  # system -> why it did not run
    style_chance: float | None = None
    kind: str = ""  # the dataset's kind: benchmark, recorded, synth, ...


@dataclass
class FrontNumbers:
    """Everything the generated front page shows, read from files (see :func:`front_page_numbers`)."""

    pseudo: dict | None  # the section-02 run summary.json, or None when it was not run
    pseudo_dir: str  # where it was looked for
    truth_words: int | None  # words whose pseudo-label was compared with a true trajectory
    runs: list[EvalRunNumbers]
    claims: dict[str, int] | None  # status -> number of claims; None when the claims could not be read
    claims_reason: str
    statuses: list[str]
    registry: dict[str, dict]
    bench: dict  # first_s, second_s, machine, date, commit, or reason
    repo_url: str | None
    citation: dict  # title, version, date, authors, license, or reason
    unipen: dict  # samples, writers, or reason
    fonts: dict  # version, license, or reason
    code_license: str | None
    paper_vlms: int | None = None  # the paper's number of VLMs (data/paper/reported.csv n_vlms)
    python: str | None = None  # requires-python of pyproject.toml
    notes: list[str] = field(default_factory=list)


def _read_json(p: Path):
    try:
        return json.loads(p.read_text("utf-8"))
    except (OSError, ValueError):
        return None


def _read_text(p: Path) -> str:
    try:
        return p.read_text("utf-8")
    except OSError:
        return ""


def _rel(p, root: Path) -> str:
    try:
        return Path(p).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return Path(p).name if Path(p).is_absolute() else str(p)


def _finite(v):
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def eval_run_numbers(run_dir, root: Path) -> list[EvalRunNumbers]:
    """The summaries of one section-03 run folder: one entry per reference it was scored against."""
    import pandas as pd

    out = []
    d = Path(run_dir)
    for ref in ("reference", "true"):
        facts = _read_json(d / f"facts-{ref}.json")
        summ = d / f"summary-{ref}.csv"
        if facts is None or not summ.is_file():
            continue
        df = pd.read_csv(summ)
        rows = []
        for r in df.to_dict("records"):
            rows.append({k: r.get(k) for k in ("system", "label", "kind", "n_words", "n_pages", "dtw", "chamfer",
                                                  "ar", "style")})
        out.append(EvalRunNumbers(
            run_dir=_rel(d, root), dataset=str(facts.get("dataset", "?")), reference=ref,
            ocr_engine=str((facts.get("settings") or {}).get("ocr_engine", "?")), rows=rows,
            unavailable=dict(facts.get("unavailable") or {}),
            style_chance=_finite((facts.get("style") or {}).get("chance")), kind=str(facts.get("dataset_kind", ""))))
    return out


def claim_counts(eval_runs: Iterable, pseudo_run, dataset_stats: Mapping | None, root: Path
                 ) -> tuple[dict[str, int] | None, str]:
    """Claims per status, computed exactly as the reviewers' page computes them (the same rules, claims,
    reported numbers and runs); (None, reason) when the claims cannot be read."""
    from inkground_lib.analysis.claims import claim_status, load_claims, paper_system_names
    from inkground_lib.analysis.run_conditions import load_run_infos
    from inkground_lib.core.paper import CLAIMS_CSV, PAPER_CSV, paper_numbers

    try:
        reported = paper_numbers(Path(root) / PAPER_CSV.relative_to(ROOT))
        claims = load_claims(Path(root) / CLAIMS_CSV.relative_to(ROOT), reported)
    except (OSError, ValueError) as e:
        return None, f"the paper's claims could not be read: {e}"
    runs = load_run_infos([Path(r) for r in eval_runs])
    pseudo = _read_json(Path(pseudo_run) / "summary.json") if pseudo_run is not None else None
    as_paper = paper_system_names()
    counts: dict[str, int] = {}
    for _, c in claims.iterrows():
        st = claim_status(c, reported, runs, pseudo, dict(dataset_stats or {}), as_paper).status
        counts[st] = counts.get(st, 0) + 1
    return counts, ""


def bench_numbers(path: Path) -> dict:
    """The measured wall times of ``make book`` from the benchmark's result file (benchmarks/bench_book.py)."""
    try:
        text = path.read_text("utf-8")
    except OSError:
        return {"reason": f"no benchmark result file {path.name}"}
    first = re.search(r"^first make book: ([0-9.]+) s wall", text, re.M)
    second = re.search(r"^second make book[^:]*: ([0-9.]+) s wall", text, re.M)
    head = re.search(r"^# (\d{4}-\d\d-\d\d \d\d:\d\d UTC), commit (\w+), ([^;\n]+?)(?:;|$)", text, re.M)
    if not first:
        return {"reason": f"{path.name} has no 'first make book' line"}
    out = {"first_s": float(first.group(1)), "second_s": float(second.group(1)) if second else None}
    if head:
        out.update(date=head.group(1), commit=head.group(2), machine=head.group(3).strip())
    return out


def citation_numbers(path: Path) -> dict:
    import yaml

    try:
        d = yaml.safe_load(path.read_text("utf-8")) or {}
    except (OSError, yaml.YAMLError) as e:
        return {"reason": f"CITATION.cff cannot be read ({e.__class__.__name__})"}
    authors = ", ".join(str(a.get("name") or " ".join(filter(None, [a.get("given-names"), a.get("family-names")])))
                        for a in d.get("authors") or [])
    return {"title": d.get("title"), "version": d.get("version"), "date": str(d.get("date-released") or ""),
            "authors": authors, "license": d.get("license")}


def unipen_numbers(path: Path) -> dict:
    d = _read_json(path)
    if not isinstance(d, dict) or not isinstance(d.get("samples"), list):
        return {"reason": f"{path.name} is not in the repository"}
    s = d["samples"]
    return {"samples": len(s), "writers": len({x.get("writer_id") for x in s})}


def font_numbers() -> dict:
    try:
        m = metadata.metadata("Hershey-Fonts")
    except metadata.PackageNotFoundError:
        return {"reason": "the Hershey-Fonts package is not installed"}
    return {"version": m.get("Version"), "license": m.get("License") or "not stated in its metadata"}


def repository_url(config: Path) -> str | None:
    """``repository.url`` of the book's _config.yml, or None where it configures none."""
    import yaml

    try:
        cfg = yaml.safe_load(config.read_text("utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return None
    url = (cfg.get("repository") or {}).get("url") if isinstance(cfg.get("repository"), dict) else None
    return str(url).strip() or None if url else None


def front_page_numbers(root: Path = ROOT, *, eval_runs: Iterable | None = None, pseudo_run=None,
                       dataset_stats: Mapping | None = None, registry: dict | None = None) -> FrontNumbers:
    """The front page's inputs, read from files under ``root``.

    Without ``eval_runs``, ``pseudo_run`` and ``dataset_stats`` the book's default run outputs under ``root``
    are used (:func:`inkground_lib.report.reviewers.default_inputs`, the same inputs as the reviewers' page);
    given any of them, only what is given (a test book's runs). ``pseudo_run``: a section-02 run folder."""
    from inkground_lib.analysis.claims import STATUSES

    root = Path(root)
    if eval_runs is None and pseudo_run is None and dataset_stats is None:
        from inkground_lib.report.reviewers import default_inputs

        inp = default_inputs(root)
        eval_runs, dataset_stats = inp["eval_runs"], inp["dataset_stats"]
        pseudo_run = root / PSEUDO_RUN
    eval_runs = [Path(r) for r in (eval_runs or [])]
    pseudo_dir = Path(pseudo_run) if pseudo_run is not None else root / PSEUDO_RUN
    pseudo = _read_json(pseudo_dir / "summary.json")
    truth_words = None
    if pseudo is not None and (pseudo_dir / "words.csv").is_file():
        import pandas as pd

        w = pd.read_csv(pseudo_dir / "words.csv", usecols=lambda c: c == "dtw")
        truth_words = int(w["dtw"].notna().sum()) if "dtw" in w else 0
    runs = [x for r in eval_runs for x in eval_run_numbers(r, root)]
    counts, reason = claim_counts(eval_runs, pseudo_dir if pseudo is not None else None, dataset_stats, root)
    if registry is None:
        from inkground_lib.evaluation.systems.registry import load_registry

        registry = load_registry()
    lic = root / "LICENSE"
    try:
        code_license = lic.read_text("utf-8").splitlines()[0].strip()
    except (OSError, IndexError):
        code_license = None
    paper_vlms = None
    try:
        from inkground_lib.core.paper import PAPER_CSV, paper_numbers

        paper_vlms = int(float(paper_numbers(root / PAPER_CSV.relative_to(ROOT)).loc["n_vlms", "value"]))
    except (OSError, KeyError, ValueError, TypeError):
        pass
    python = None
    m = re.search(r'^requires-python\s*=\s*"([^"]+)"', _read_text(root / "pyproject.toml"), re.M)
    if m:
        python = m.group(1)
    return FrontNumbers(
        paper_vlms=paper_vlms, python=python, pseudo=pseudo, pseudo_dir=_rel(pseudo_dir, root), truth_words=truth_words, runs=runs, claims=counts,
        claims_reason=reason, statuses=list(STATUSES), registry=registry,
        bench=bench_numbers(root / BENCH_RESULT), repo_url=repository_url(root / "_config.yml"),
        citation=citation_numbers(root / "CITATION.cff"), unipen=unipen_numbers(root / UNIPEN_JSON),
        fonts=font_numbers(), code_license=code_license)


# ---------------------------------------------------------------------------------------------------------
# the page


def _md(text) -> str:
    from inkground_lib.report.reviewers import md_escape

    return md_escape(text)


def ratings_phrase(source) -> str:
    """How the ratings of a pseudo-label run were made, as prose: "simulated ratings" or "ratings read from
    <file>"."""
    src = str(source or "?")
    if src == "simulated":
        return "simulated ratings"
    return f"ratings read from {_md(src[len('file: '):] if src.startswith('file: ') else src)}"


def _pseudo_lines(n: FrontNumbers) -> list[str]:
    p = n.pseudo
    if p is None:
        return [f"* **Pseudo-labels (section 02):** not run: there is no `{n.pseudo_dir}/summary.json`, so "
                f"nothing was measured about the pseudo-labels {missing('no section-02 run')}."]
    x = p.get("numbers", {})
    comp = p.get("components", {})
    L = [f"* **Pseudo-label funnel (section 02):** of {count(x.get('candidates'))} candidate pages "
         f"({count(x.get('words'))} words), {count(x.get('ocr_pass_pages'))} passed the {{term}}`OCR filter` "
         f"(at least {pct(x.get('ocr_threshold'))} of words read alike; {pct(x.get('ocr_pass_rate'))} of "
         f"candidates) and {count(x.get('benchmark_pages'))} the {{term}}`rater filter` "
         f"({pct(x.get('benchmark_share'))} of candidates), with derenderer `{_md(comp.get('derenderer', '?'))}`, "
         f"OCR `{_md(comp.get('ocr_engine', '?'))}` and {ratings_phrase(comp.get('ratings_source'))}."]
    if "word_dtw_median" in x:
        nw = f"{n.truth_words:,}" if n.truth_words is not None else DASH
        L.append(f"* **How far pseudo-labels are from the truth** (what the paper could not measure: our candidate "
                 f"pages have the writers' true trajectories): over the {nw} candidate words, the median "
                 f"{{term}}`DTW` between a word's pseudo-label and its true trajectory is "
                 f"{fmt(x.get('word_dtw_median'))} {{term}}`word heights <word height>` and the median "
                 f"{{term}}`Chamfer distance` {fmt(x.get('word_chamfer_median'))}; "
                 f"{pct(x.get('word_order_differs_share'))} of words have their strokes in a different order "
                 f"and {pct(x.get('word_direction_differs_share'))} a stroke drawn in the opposite direction.")
        L.append(f"* **Do the filters pick better pseudo-labels?** The median over pages of a page's mean DTW to "
                 f"the truth is {fmt(x.get('kept_dtw_median'), reason='no page kept')} on the "
                 f"{count(x.get('benchmark_pages'))} kept pages, "
                 f"{fmt(x.get('rejected_dtw_median'), reason='no page rejected by the raters')} on pages the "
                 f"raters rejected and {fmt(x.get('ocr_fail_dtw_median'), reason='no page failed the OCR filter')} "
                 f"on pages that failed the OCR filter.")
    else:
        L.append(f"* **How far pseudo-labels are from the truth:** "
                 f"{missing('the candidate pages of this run have no true trajectories')}.")
    L.append(f"* **Rater agreement:** the raters agree on accept or reject for {pct(x.get('rater_agreement'))} of "
             f"the pages rated at least twice; {{term}}`Krippendorff's alpha` is "
             f"{fmt(x.get('rater_alpha'), reason='undefined: every decision was the same')} "
             f"({ratings_phrase(comp.get('ratings_source'))}, {count(x.get('ratings'))} of them).")
    return L


def _runs_lines(n: FrontNumbers) -> list[str]:
    if not n.runs:
        return ["", "**Systems scored (section 03):** not run: no section-03 run folder with a summary was found, "
                f"so no system was scored {missing('no section-03 run')}.", ""]
    L = ["", "**Systems scored (section 03).** {term}`DTW` and {term}`Chamfer distance`: means over all words "
         "(invalid outputs scored by the {term}`centre-dot rule`); {term}`AR`: over the corpus; {term}`Style`: "
         "mean over the writer classifier's held-out words. One table per dataset and reference:", ""]
    for r in n.runs:
        if r.reference == "true":
            ref = "the writers' true trajectories"
        elif r.kind == "benchmark":
            ref = "pseudo-labels"
        elif r.kind == "recorded":
            ref = "recorded ink"
        else:
            ref = "the dataset's reference inks"
        words = sorted({count(row.get("n_words")) for row in r.rows})
        pages = sorted({count(row.get("n_pages")) for row in r.rows})
        chance = (f"; Style's chance level {fmt(r.style_chance)}" if r.style_chance is not None else "")
        L += [f"*{_md(r.dataset)} against {ref}* ({' / '.join(words)} words on {' / '.join(pages)} pages"
              f"{chance}):", "", "| system | DTW | Chamfer | AR | Style |", "|---|---|---|---|---|"]
        own = str((n.pseudo or {}).get("components", {}).get("derenderer", "")) if r.kind == "benchmark" else ""
        for row in r.rows:
            label = _md(row.get("label") or row.get("system"))
            if own and row.get("system") == own and r.reference == "reference":
                label += ", which made these pseudo-labels"
            L.append(f"| {label} | {fmt(row.get('dtw'))} | {fmt(row.get('chamfer'))} | {fmt(row.get('ar'))} | "
                     f"{fmt(row.get('style'))} |")
        L.append("")
    return L


def _systems_lines(n: FrontNumbers) -> list[str]:
    """Which of the paper's systems ran here and which did not, and why (from the runs' facts)."""
    ran = {row["system"] for r in n.runs for row in r.rows}
    why: dict[str, str] = {}
    for r in n.runs:
        for s, reason in r.unavailable.items():
            why.setdefault(s, reason)
    paper = {k: v for k, v in n.registry.items() if v.get("reported_as")}
    vlms = [k for k, v in paper.items() if v.get("adapter") in ("openai", "anthropic")]
    others = [k for k in paper if k not in vlms]

    def short(reason: str) -> str:
        m = re.search(r"environment variable (\w+) is not set", reason)
        return f"`{m.group(1)}` is not set" if m else _md(reason.split(";")[0])

    def status(k: str) -> str:
        if k in ran:
            return "ran"
        if k in why:
            return f"not run ({short(why[k])})"
        return "not run (no run requested it)" if n.runs else "not run (no section-03 run)"

    L = ["**Which systems ran here:**", ""]
    ran_vlms = [k for k in vlms if k in ran]
    n_paper = f"{n.paper_vlms}" if n.paper_vlms is not None else DASH
    L.append(f"* VLMs: the paper evaluates {n_paper}; the registry lists the {len(vlms)} it names, and "
             f"{len(ran_vlms)} of them ran here. " + "; ".join(
        f"{_md(paper[k].get('label', k))}: {status(k)}" for k in vlms) + ".")
    for k in others:
        L.append(f"* {_md(paper[k].get('reported_as'))} ({_md(paper[k].get('label', k))}): {status(k)}.")
    engines = sorted({r.ocr_engine for r in n.runs})
    if n.pseudo is not None:
        engines = sorted(set(engines) | {str(n.pseudo.get("components", {}).get("ocr_engine", "?"))})
    dso = "deepseek-ocr" in engines
    L.append(f"* DeepSeek-OCR: {'ran' if dso else 'not run'}; every OCR reading here (the OCR filter, AR and CR) "
             f"was made by {', '.join(f'`{_md(e)}`' for e in engines) or DASH + ' (no run)'}.")
    if n.pseudo is not None:
        comp = n.pseudo.get("components", {})
        L.append(f"* Pseudo-labels: derenderer `{_md(comp.get('derenderer', '?'))}`"
                 f"{' (InkSight)' if str(comp.get('derenderer', '')).startswith('inksight') else ' (not InkSight)'}"
                 f"; {ratings_phrase(comp.get('ratings_source'))}"
                 f"{' (no human rater took part)' if comp.get('ratings_source') == 'simulated' else ''}.")
    local = sorted(ran - set(paper))
    if local:
        L.append("* Also ran (local baselines and stand-ins): " + ", ".join(
            _md(n.registry.get(k, {}).get("label", k)) for k in local) + ".")
    L.append("")
    return L


def _claims_lines(n: FrontNumbers) -> list[str]:
    if n.claims is None:
        return [f"**The paper's claims:** {missing(n.claims_reason)}", ""]
    total = sum(n.claims.values())
    L = [f"**The paper's claims.** Each of its {total} claims has one status, by the rules of the "
         "{doc}`reviewers' page <sections/reviewers>` and from the same runs:", "", "| status | claims |", "|---|---|"]
    L += [f"| {st} | {n.claims.get(st, 0)} |" for st in n.statuses]
    return L + [""]


def python_phrase(spec: str | None) -> str:
    """pyproject's requires-python as prose (">=3.11" -> "3.11 or newer")."""
    if not spec:
        return missing("pyproject.toml names no Python version")
    m = re.fullmatch(r"\s*>=\s*([0-9.]+)\s*", spec)
    return f"{m.group(1)} or newer" if m else _md(spec)


def _run_box(n: FrontNumbers) -> list[str]:
    b = n.bench
    url = n.repo_url
    clone = f"git clone {url} inkground" if url else "git clone <repository URL> inkground"
    if "first_s" in b:
        first, second = b["first_s"], b.get("second_s")
        where = ", ".join(x for x in (b.get("machine"), b.get("date"), f"commit {b['commit']}" if b.get("commit")
                                      else None) if x)
        timing = (f"The first `make book` of a fresh clone took {first:.0f} s ({first / 60:.1f} min) of wall time, "
                  f"installation included, measured by `benchmarks/bench_book.py` ({where}); a second run with "
                  f"nothing changed took {fmt(second, 0, 'not measured')} s.")
    else:
        timing = f"Time of a fresh `make book`: {missing(b.get('reason', 'not measured'))}."
    return ["````{admonition} Run it yourself", ":class: tip ink-run-box", "",
            "```bash", clone, "cd inkground",
            "make book   # creates .venv, installs the pins,", "            # runs every section, builds this book",
            "```", "",
            f"Needs git, make and Python {python_phrase(n.python)}; everything runs offline on CPU. " + timing +
            " The paper's own systems need keys or weights ({doc}`sections/03_model_evaluation`).",
            "" if url else "This book's `_config.yml` configures no repository address (`repository: url:`), "
                           "so no link is shown here.",
            "````", ""]


def _cite_box(n: FrontNumbers) -> list[str]:
    c = n.citation
    if "reason" in c:
        companion = missing(c["reason"])
    else:
        companion = (f"{_md(c.get('authors') or DASH)} ({_md(str(c.get('date') or DASH)[:4])}). "
                     f"*{_md(c.get('title') or DASH)}*, version {_md(c.get('version') or DASH)}, licence "
                     f"{_md(c.get('license') or DASH)}; the citation metadata is in `CITATION.cff`.")
    L = ["````{admonition} How to cite", ":class: note ink-cite-box", "",
         "* The paper, by its title (the summary this book works from names no authors, venue or year): "
         "{cite}`inkground`.", f"* This companion: {companion}"]
    if n.repo_url:
        L.append(f"* Source: <{n.repo_url}>")
    L += ["````", ""]
    return L


def _licence_lines(n: FrontNumbers) -> list[str]:
    u, f = n.unipen, n.fonts
    uni = (f"{u['samples']} recorded cursive words by {u['writers']} writers" if "samples" in u
           else missing(u["reason"]))
    font = (f"Hershey-Fonts {f['version']}, licence {_md(f['license'])} (its package metadata)" if "version" in f
            else missing(f["reason"]))
    return ["**Data and licences**", "",
            f"* Recorded ink: `{UNIPEN_JSON}` holds {uni} from UNIPEN train_r01_v07 {{cite}}`unipen,"
            "unipen-train-r01-v07`, distributed under CC BY 4.0 (the licence text, the original CD-ROM notice and "
            "the provenance are beside it in `data/unipen_cursive/`).",
            "* Synthetic pages, pseudo-labels and every run output are generated by this code and licensed as the "
            "code.",
            f"* Fonts: synthetic handwriting and the font baseline draw Hershey vector glyphs through {font}.",
            f"* Code: `LICENSE` ({_md(n.code_license) if n.code_license else missing('no LICENSE file')}).",
            "* The paper's pages are not here: the paper says its copyright holder released them for research "
            "purposes only, and names no licence.", ""]


def front_page(n: FrontNumbers) -> str:
    """The generated front-page fragment (MyST markdown, no title: book/intro.md includes it)."""
    L = ["<!-- generated by inkground_lib.report.front (make book); do not edit -->", "",
         "## What this book measured", "",
         "Numbers computed when this book was built, from the run outputs named on the "
         "{doc}`sections/reproducibility` page (terms in the {doc}`glossary`):", ""]
    L += _pseudo_lines(n)
    L += _runs_lines(n)
    L += _systems_lines(n)
    L += _claims_lines(n)
    L += _run_box(n)
    L += _cite_box(n)
    L += _licence_lines(n)
    return "\n".join(L)


def write_front_page(path, numbers: FrontNumbers | None = None, root: Path = ROOT, **inputs) -> Path:
    """Write :func:`front_page` to ``path`` (atomically); ``numbers`` default to
    :func:`front_page_numbers` of ``root`` with ``inputs`` (eval_runs, pseudo_run, dataset_stats)."""
    numbers = front_page_numbers(root, **inputs) if numbers is None else numbers
    return atomic_write_text(Path(path), front_page(numbers))


def write_default_front_page(root: Path = ROOT) -> Path:
    """Write ``root/book/sections/front.md`` from the book's default runs (``make book`` calls this)."""
    root = Path(root)
    return write_front_page(root / SECTIONS_DIR.relative_to(ROOT) / "front.md", root=root)
