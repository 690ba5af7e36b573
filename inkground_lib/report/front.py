"""The generated part of the book's front page: what this book found (the ranking the choice of reference reverses,
whether the filters picked better pseudo-labels), what it measured, which systems ran, how many of the paper's
claims hold, how to run it, how to cite it and the licences.

``make book`` writes ``book/sections/front.md`` (:func:`write_default_front_page`) after the reviewers' page;
``book/intro.md`` includes it. Every number comes from a file, collected by
:mod:`inkground_lib.report.front_numbers`. A missing input is shown as an em dash with its reason, never as NaN
or None.
"""

from __future__ import annotations

import re
from pathlib import Path

from inkground_lib.analysis.claims import STAND_IN_SYSTEMS
from inkground_lib.core.files import atomic_write_text
from inkground_lib.core.layout import ROOT, SECTIONS_DIR
from inkground_lib.core.metric_table import METRICS, metric_names
from inkground_lib.evaluation.systems.registry import provider_adapters
from inkground_lib.report.format import EM_DASH as DASH
from inkground_lib.report.escape import md_code, md_escape
from inkground_lib.report.format import count, finite, fmt, join_names, missing, pct
from inkground_lib.report.front_numbers import UNIPEN_JSON, FrontNumbers, front_page_numbers
from inkground_lib.report.names import maker_note, summary_mode
from inkground_lib.report.prose import AGREEMENT_UNIT
from inkground_lib.report.reproducibility import run_time
from inkground_lib.report.tradeoffs import flips_text


def ratings_phrase(source) -> str:
    """How the ratings of a pseudo-label run were made, as prose: "simulated ratings" or "ratings read from
    <file>"."""
    src = str(source or "?")
    if src == "simulated":
        return "simulated ratings"
    return f"ratings read from {md_escape(src[len('file: '):] if src.startswith('file: ') else src)}"


FILTER_WORDS = {"ocr": ("the {term}`OCR filter`", "pages that passed it", "pages that failed it"),
                "raters": ("the {term}`rater filter`", "among the pages that passed the OCR filter, those the raters "
                                                      "kept", "those they rejected")}


def filter_answer(name: str, f: dict | None, ratings_source=None) -> str:
    """Did filter ``name`` ("ocr" or "raters") pick pseudo-labels nearer the writers' true trajectories? A plain
    yes or no from the difference of the groups' median page DTW and its bootstrap 95% interval
    (:func:`inkground_lib.report.front_numbers.filter_numbers`): "yes" only where the whole interval is below 0
    (the kept group nearer), "no, the reverse" where it is above 0, otherwise "no: as far". With simulated
    ratings the sentence says that the raters' model sees the distance to the true ink.

    >>> f = {"n_a": 114, "n_b": 44, "median_a": 0.1393, "median_b": 0.1381, "gap": 0.0012, "lo": -0.007, "hi": 0.007}
    >>> filter_answer("ocr", f).startswith("**No** for the {term}`OCR filter`: pages that passed it are as far")
    True
    """
    what, a, b = FILTER_WORDS[name]
    if not f or f.get("gap") is None or f.get("lo") is None or f.get("hi") is None:
        return f"For {what}: {missing('not measured: no page on one side of it, or no true trajectories')}."
    nums = (f"median of the pages' mean {{term}}`DTW` to the truth {fmt(f['median_a'])} against "
            f"{fmt(f['median_b'])} {{term}}`word heights <word height>`, over {count(f['n_a'])} and "
            f"{count(f['n_b'])} pages; difference {f['gap']:+.3f}, 95% bootstrap interval "
            f"\\[{f['lo']:+.3f}, {f['hi']:+.3f}\\]")
    if f["hi"] < 0:
        text = f"**Yes** for {what}: {a} are nearer the truth than {b} ({nums}, below 0)."
    elif f["lo"] > 0:
        text = f"**No** for {what}, the reverse: {a} are further from the truth than {b} ({nums}, above 0)."
    else:
        text = f"**No** for {what}: {a} are as far from the truth as {b} ({nums}, which includes 0)."
    if name == "raters" and ratings_source == "simulated":
        text += (" The raters here are simulated: their model sees how far each word's strokes are from the true "
                 "ink (section 02), so this shows what that model does, not what people would do.")
    return text


def _found_lines(n: FrontNumbers) -> list[str]:
    """What this book found, computed: the rankings the choice of reference reverses (intervals apart), and
    whether the filters picked better pseudo-labels."""
    L = ["## What this book found", ""]
    L.append("* **Does the reference change the ranking?** " + md_escape(flips_text(n.flips, n.flip_datasets)) +
             " Table 4.4 of {doc}`sections/04_tradeoffs` has every system against both references.")
    src = (n.pseudo or {}).get("components", {}).get("ratings_source")
    if n.pseudo is None:
        L.append(f"* **Did the filters pick better pseudo-labels?** {missing('no section-02 run')}.")
    else:
        L.append("* **Did the filters pick better pseudo-labels?** " + filter_answer("ocr", n.filters.get("ocr")) +
                 " " + filter_answer("raters", n.filters.get("raters"), src) +
                 " Table 2.2 of {doc}`sections/02_pseudo_labels` has the stages' medians.")
    return L + [""]


def _pseudo_lines(n: FrontNumbers) -> list[str]:
    p = n.pseudo
    if p is None:
        return [f"* **Pseudo-labels (section 02):** not run: there is no {md_code(f'{n.pseudo_dir}/summary.json')}, so "
                f"nothing was measured about the pseudo-labels {missing('no section-02 run')}."]
    x = p.get("numbers", {})
    comp = p.get("components", {})
    L = [f"* **Pseudo-label funnel (section 02):** of {count(x.get('candidates'))} candidate pages "
         f"({count(x.get('words'))} words), {count(x.get('ocr_pass_pages'))} passed the {{term}}`OCR filter` "
         f"(at least {pct(x.get('ocr_threshold'))} of words read alike; {pct(x.get('ocr_pass_rate'))} of "
         f"candidates) and {count(x.get('benchmark_pages'))} the {{term}}`rater filter` "
         f"({pct(x.get('benchmark_share'))} of candidates), with derenderer {md_code(summary_mode(p))}, "
         f"OCR {md_code(comp.get('ocr_engine', '?'))} and {ratings_phrase(comp.get('ratings_source'))}."]
    if "word_dtw_median" in x:
        nw = f"{n.truth_words:,}" if n.truth_words is not None else DASH
        L.append(f"* **How far pseudo-labels are from the truth** (what the paper could not measure: our candidate "
                 f"pages have the writers' true trajectories): over the {nw} candidate words, the median "
                 f"{{term}}`DTW` between a word's pseudo-label and its true trajectory is "
                 f"{fmt(x.get('word_dtw_median'))} {{term}}`word heights <word height>` and the median "
                 f"{{term}}`Chamfer distance` {fmt(x.get('word_chamfer_median'))}; "
                 f"{pct(x.get('word_order_differs_share'))} of words have their strokes in a different order "
                 f"and {pct(x.get('word_direction_differs_share'))} a stroke drawn in the opposite direction.")
        L.append(f"* **Distance to the truth by filter outcome:** the median over pages of a page's mean DTW to "
                 f"the truth is {fmt(x.get('kept_dtw_median'), reason='no page kept')} on the "
                 f"{count(x.get('benchmark_pages'))} kept pages, "
                 f"{fmt(x.get('rejected_dtw_median'), reason='no page rejected by the raters')} on pages the "
                 f"raters rejected and {fmt(x.get('ocr_fail_dtw_median'), reason='no page failed the OCR filter')} "
                 f"on pages that failed the OCR filter.")
    else:
        L.append(f"* **How far pseudo-labels are from the truth:** "
                 f"{missing('the candidate pages of this run have no true trajectories')}.")
    L.append(f"* **Rater agreement:** the raters agree on accept or reject for {fmt(x.get('rater_agreement'))} of "
             f"the {AGREEMENT_UNIT} (paper {fmt(n.reported.get('rater_agreement'), reason='not read')}, as section 02 "
             f"counts it); {{term}}`Krippendorff's alpha` is "
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
    shown = metric_names(reported=True)  # the metrics the paper reports per system, in the table's order
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
        L += [f"*{md_escape(r.dataset)} against {ref}* ({' / '.join(words)} words on {' / '.join(pages)} pages"
              f"{chance}):", "", "| system | " + " | ".join(METRICS[m].label for m in shown) + " |",
              "|---" * (len(shown) + 1) + "|"]
        own = summary_mode(n.pseudo) if r.kind == "benchmark" and n.pseudo else ""
        for row in r.rows:
            label = md_escape(row.get("label") or row.get("system"))
            note = maker_note(own, str(row.get("system"))) if own and r.reference == "reference" else None
            if note:
                label += f" ({md_escape(note)})"
            L.append(f"| {label} | " + " | ".join(fmt(row.get(m)) for m in shown) + " |")
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
    vlms = [k for k, v in paper.items() if v.get("adapter") in provider_adapters()]
    others = [k for k in paper if k not in vlms]

    def short(reason: str) -> str:
        m = re.search(r"environment variable (\w+) is not set", reason)
        return f"`{m.group(1)}` is not set" if m else md_escape(reason.split(";")[0])

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
        f"{md_escape(paper[k].get('label', k))}: {status(k)}" for k in vlms) + ".")
    for k in others:
        L.append(f"* {md_escape(paper[k].get('reported_as'))} ({md_escape(paper[k].get('label', k))}): {status(k)}.")
    engines = sorted({r.ocr_engine for r in n.runs})
    if n.pseudo is not None:
        engines = sorted(set(engines) | {str(n.pseudo.get("components", {}).get("ocr_engine", "?"))})
    dso = "deepseek-ocr" in engines
    L.append(f"* DeepSeek-OCR: {'ran' if dso else 'not run'}; every OCR reading here (the OCR filter, AR and CR) "
             f"was made by {', '.join(md_code(e) for e in engines) or DASH + ' (no run)'}.")
    if n.pseudo is not None:
        comp = n.pseudo.get("components", {})
        L.append(f"* Pseudo-labels: derenderer {md_code(summary_mode(n.pseudo))}"
                 f"{' (InkSight)' if str(comp.get('derenderer', '')).startswith('inksight') else ' (not InkSight)'}"
                 f"; {ratings_phrase(comp.get('ratings_source'))}"
                 f"{' (no human rater took part)' if comp.get('ratings_source') == 'simulated' else ''}.")
    local = sorted(ran - set(paper))
    if local:
        L.append("* Also ran (local baselines and stand-ins): " + ", ".join(
            md_escape(n.registry.get(k, {}).get("label", k)) for k in local) + ".")
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
    return f"{m.group(1)} or newer" if m else md_escape(spec)


def build_time_phrase(sections: list[dict], commit: str = "", short: bool = False) -> str:
    """This build's section run times as prose, from the executed notebooks' records (the reproducibility
    page's): the total and each section's, with the commit the book was built from; a section reused from an
    earlier build keeps that build's time. The front page's only build time."""
    timed = [r for r in sections if r.get("duration") is not None]
    at = f" (commit {commit})" if commit and not commit.startswith(DASH) else (
        f" (commit {DASH} {commit.lstrip(DASH).strip(' ()')})" if commit else "")
    if not timed:
        lead = f"**This build**{at}: section run times" if short else f"This build's section run times{at}"
        return f"{lead} {missing('not recorded (no executed section notebook)')}."
    total = sum(r["duration"] for r in timed)
    each = ", ".join(f"{r['section'][:2]} {run_time(r['duration'])}" for r in timed)
    if short:
        return f"**This build**{at}: the sections took {run_time(total)} ({{doc}}`details <sections/reproducibility>`)."
    return (f"In this build{at} the sections took {run_time(total)} in all ({each}), as recorded on the "
            "{doc}`sections/reproducibility` page (a section whose inputs did not change keeps the time of the run "
            "that made it).")


def _run_box(n: FrontNumbers) -> list[str]:
    url = n.repo_url
    start = ([f"git clone {url} inkground", "cd inkground"] if url else
             ["cd inkground   # the folder of your copy"])
    where_from = ("" if url else
                  "No repository address is configured here (no `repository-code` in `CITATION.cff`, no source "
                  "URL in `pyproject.toml`, no `repository: url:` in `_config.yml`), so start from the copy you "
                  "have: clone it (`git clone` with its folder or address) or work in it directly.")
    return ["````{admonition} Run it yourself", ":class: tip ink-run-box", "",
            *([where_from, ""] if where_from else []),
            "```bash", *start,
            "make book   # creates .venv, installs the pins,", "            # runs every section, builds this book",
            "```", "",
            f"Needs git, make and Python {python_phrase(n.python)}; everything runs offline on CPU. "
            + "How long this build took is the first screen's **This build** line, section by section on the "
            "{doc}`sections/reproducibility` page." +
            " The paper's own systems need keys or weights ({doc}`sections/03_model_evaluation`).",
            "````", ""]


def _cite_box(n: FrontNumbers) -> list[str]:
    c = n.citation
    if "reason" in c:
        companion = missing(c["reason"])
    else:
        companion = (f"{md_escape(c.get('authors') or DASH)} ({md_escape(str(c.get('date') or DASH)[:4])}). "
                     f"*{md_escape(c.get('title') or DASH)}*, version {md_escape(c.get('version') or DASH)}, licence "
                     f"{md_escape(c.get('license') or DASH)}; the citation metadata is in `CITATION.cff`.")
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
    font = (f"Hershey-Fonts {f['version']}, licence {md_escape(f['license'])} (its package metadata)" if "version" in f
            else missing(f["reason"]))
    return ["**Data and licences**", "",
            f"* Recorded ink: `{UNIPEN_JSON}` holds {uni} from UNIPEN train_r01_v07 {{cite}}`unipen,"
            "unipen-train-r01-v07`, distributed under CC BY 4.0 (the licence text, the original CD-ROM notice and "
            "the provenance are beside it in `data/unipen_cursive/`).",
            "* Synthetic pages, pseudo-labels and every run output are generated by this code and licensed as the "
            "code.",
            f"* Fonts: synthetic handwriting and the font baseline draw Hershey vector glyphs through {font}.",
            f"* Code: `LICENSE` ({md_escape(n.code_license) if n.code_license else missing('no LICENSE file')}).",
            "* The paper's pages are not here: the paper says its copyright holder released them for research "
            "purposes only, and names no licence.", ""]


HEADLINES = (
    ("Gemini-3.1-Pro leads the VLMs on fidelity and readability (inkGround)",
     (("DTW", "gemini_ink_dtw"), ("AR", "gemini_ink_ar")), ("gemini-3.1-pro",)),
    ("The open models are nearly unreadable", (("AR", "open_ar_min"), ("to", "open_ar_max")),
     ("qwen3-vl-32b", "molmo-7b-d")),
    ("Kimi-K3 has the highest Style but the lowest AR; Claude-Opus-4.8 reads well but scores low on Style",
     (("Kimi Style", "kimi_ink_style"), ("AR", "kimi_ink_ar"), ("Claude Style", "claude_ink_style"),
      ("AR", "claude_ink_ar")), ("kimi-k3", "claude-opus-4.8")),
    ("InkSight still beats every VLM on recorded IAM-OnDB trajectories",
     (("InkSight DTW", "inksight_iam_dtw"), ("Gemini DTW", "gemini_iam_dtw")), ("inksight",)),
)
"""The paper's headline claims for the front page: (the claim in words, (label, reported id) of its numbers, the
registry's systems it needs). The words are the paper's; every number is read from data/paper/reported.csv."""


def _ran_and_why(n: FrontNumbers) -> tuple[set, dict]:
    ran = {row["system"] for r in n.runs for row in r.rows}
    why: dict[str, str] = {}
    for r in n.runs:
        for s_, reason in r.unavailable.items():
            why.setdefault(s_, reason)
    return ran, why


def _short_reason(reason: str) -> str:
    m = re.search(r"environment variable (\w+) is not set", reason)
    return f"needs `{m.group(1)}`" if m else md_escape(reason.split(";")[0])


def _system_status(k: str, ran: set, why: dict, any_run: bool) -> str:
    if k in ran:
        return "ran"
    if k in why:
        return f"not run ({_short_reason(why[k])})"
    return "not run (no run requested it)" if any_run else "not run (no section-03 run)"


def _stand_in_numbers(n: FrontNumbers, systems) -> str:
    """For a claim on InkSight on recorded trajectories: the offline stand-ins' DTW on our recorded pages, where a
    run scored them (a stand-in system on stand-in data: shown beside, never as the paper's quantity)."""
    stand = [s_ for k in systems for s_ in STAND_IN_SYSTEMS.get(n.registry.get(k, {}).get("reported_as", ""), ())]
    got = [(row.get("label") or row["system"], row.get("dtw")) for r in n.runs if r.kind == "recorded"
           for row in r.rows if row.get("system") in stand and finite(row.get("dtw")) is not None]
    if not got:
        return ""
    return ("; on our recorded pages (a stand-in system on stand-in data, not the paper's quantity): "
            + ", ".join(f"{md_escape(label)} DTW {fmt(v)}" for label, v in got))


CLAIMS_SHORT = ("Gemini-3.1-Pro leads the VLMs (DTW {gemini_ink_dtw}, AR {gemini_ink_ar})",
                "the open models are nearly unreadable (AR {open_ar_min} to {open_ar_max})",
                "Kimi-K3 has the top Style ({kimi_ink_style}) and the lowest AR ({kimi_ink_ar})",
                "InkSight beats every VLM on IAM-OnDB (DTW {inksight_iam_dtw} against {gemini_iam_dtw})",
                "{benchmark_pages:count} of {candidates:count} pages pass its filters")
"""The paper's headline claims in a few words each, for the first screen; the numbers are read from
data/paper/reported.csv (placeholders are its ids; ``:count`` writes a count)."""


def _needs(k: str, n: FrontNumbers, why: dict) -> str:
    """What a system that did not run needs: the run's own reason where it recorded one, else the registry's key
    variable (API and served models) or, for InkSight, TensorFlow and its weights."""
    if k in why:
        return _short_reason(why[k])
    cfg = n.registry.get(k, {})
    if cfg.get("api_key_env"):
        return f"needs `{cfg['api_key_env']}`"
    if cfg.get("adapter") == "inksight":
        return "needs TensorFlow and InkSight's weights"
    return "not requested"


def _glance_lines(n: FrontNumbers) -> list[str]:
    """The first screen, a few short paragraphs: the paper's headline claims with its numbers; what ran here
    (offline) and the funnel with its stand-ins; what could not run and what each needs; what this book found;
    the build (one time, with its commit). The details follow under the later headings."""
    from inkground_lib.report.tradeoffs import short_label

    ran, why = _ran_and_why(n)
    rep = n.reported

    def filled(t: str) -> str:
        return re.sub(r"\{(\w+)(:count)?\}", lambda m: (count(rep.get(m.group(1))) if m.group(2) else
                                                         fmt(rep.get(m.group(1)), reason="not read")), t)

    funnel = " → ".join(count(rep.get(k)) for k in ("candidates", "ocr_pass_pages", "benchmark_pages"))
    L = ["**The paper claims** {cite}`inkground`: " + "; ".join(filled(t) for t in CLAIMS_SHORT) + ".", ""]
    L += [_ours_beside_paper(n), ""]  # our numbers second, on the first screen at any width
    local = sorted(ran - {k for k, v in n.registry.items() if v.get("reported_as")})
    x = (n.pseudo or {}).get("numbers", {})
    comp = (n.pseudo or {}).get("components", {})
    if n.runs:
        here = ("**Ran here, offline:** " + join_names(md_escape(short_label(n.registry.get(k, {}).get("label", k)))
                                                       for k in local) if local else
                f"**Ran here:** no local system {missing('none in the runs')}")
    else:
        here = f"**Ran here:** no system {missing('no section-03 run')}"
    if n.pseudo is not None:
        src = comp.get("ratings_source")
        here += (f"; pseudo-labels by derenderer {md_code(summary_mode(n.pseudo))}, OCR "
                 f"{md_code(comp.get('ocr_engine', '?'))} and "
                 f"{'simulated raters' if src == 'simulated' else 'a ratings file'}")
    L += [here + ".", ""]
    missing_paper = [k for k, v in n.registry.items() if v.get("reported_as") and k not in ran]
    vlms = [k for k in missing_paper if n.registry[k].get("adapter") in provider_adapters()]
    engines = sorted({r.ocr_engine for r in n.runs} | ({str(comp.get("ocr_engine"))} if n.pseudo else set()))
    parts = []
    if vlms:
        keys = sorted({m.group(1) for k in vlms for m in [re.search(r"`(\w+)`", _needs(k, n, why))] if m})
        who = f"the {len(vlms)} VLMs the paper names" if len(vlms) > 1 else n.registry[vlms[0]].get("label")
        parts.append(f"{who} ({join_names(f'`{k}`' for k in keys) or 'not requested'})")
    parts += [f"{md_escape(n.registry[k].get('label', k))} ({_needs(k, n, why)})" for k in missing_paper
              if k not in vlms]
    if "deepseek-ocr" not in engines:
        parts.append("DeepSeek-OCR (a GPU server, `DEEPSEEK_OCR_BASE_URL`)")
    others = sorted(k for k in why if k not in n.registry or not n.registry[k].get("reported_as"))
    parts += [f"{md_escape(k)} ({_short_reason(why[k])})" for k in others]
    L += [(f"**Could not run here:** {'; '.join(parts)}. For them this book shows the paper's numbers, never its own."
           if parts else "**Could not run here:** nothing: every system the paper reports ran."), ""]
    L += [_found_short(n) + " " + build_time_phrase(n.sections, n.commit, short=True), ""]
    L += ["## The paper's headline claims beside this book", "",
          "| the paper claims | its numbers | here |", "|---|---|---|"]
    for claim, nums, systems in HEADLINES:
        vals = "".join(("" if i == 0 else " " if label == "to" else ", ") + f"{label} "
                       f"{fmt(rep.get(pid), reason='not read')}" for i, (label, pid) in enumerate(nums))
        cell = "; ".join(f"{md_escape(n.registry.get(k, {}).get('label', k))}: "
                         f"{_system_status(k, ran, why, bool(n.runs))}" for k in systems)
        cell += _stand_in_numbers(n, systems)
        L.append(f"| {claim} | {vals} | {cell} |")
    ours = ("not run " + missing("no section-02 run") if n.pseudo is None else
            "ours: " + " → ".join(count(x.get(k)) for k in ("candidates", "ocr_pass_pages", "benchmark_pages")) +
            " pages, with the stand-ins above")
    L.append(f"| The funnel: candidate pages → OCR filter → raters | {funnel} pages | {ours} |")
    return L + [""]


def _ours_beside_paper(n: FrontNumbers) -> str:
    """The first screen's numbers of ours beside the paper's, in one sentence: the funnel (candidate pages, pages
    that passed the OCR filter, pages kept), rater agreement, and how far our pseudo-labels lie from the writers'
    true pen paths (a number the paper could not measure); each missing number says why."""
    rep = n.reported
    if n.pseudo is None:
        return f"**Our numbers beside the paper's:** none {missing('no section-02 run')}."
    x = n.pseudo.get("numbers", {})
    funnel = " → ".join(count(x.get(k)) for k in ("candidates", "ocr_pass_pages", "benchmark_pages"))
    paper = " → ".join(count(rep.get(k)) for k in ("candidates", "ocr_pass_pages", "benchmark_pages"))
    s = (f"**Our numbers beside the paper's:** candidate pages → OCR filter → kept, {funnel} here ({paper} in the "
         f"paper); the raters agree on {fmt(x.get('rater_agreement'))} of the pairs rated at least twice (paper "
         f"{fmt(rep.get('rater_agreement'), reason='not read')})")
    if x.get("word_dtw_median") is not None:
        s += (f"; our pseudo-labels lie a median {{term}}`DTW` of {fmt(x.get('word_dtw_median'))} word heights from "
              f"the writers' true pen paths, which the paper could not measure")
    return s + "."


def _found_short(n: FrontNumbers) -> str:
    """What this book found, in plain sentences (the long answers follow under "What this book found")."""
    flips = len(n.flips)
    if not n.flip_datasets:
        parts = ["Whether the choice of reference reorders the systems is not measured (no dataset was scored "
                 "against both references)."]
    elif flips:
        parts = [f"Scoring against the true pen paths instead of the pseudo-labels reverses {flips} "
                 f"ranking{'s' if flips != 1 else ''} of two systems (intervals apart)."]
    else:
        parts = ["Scoring against the true pen paths instead of the pseudo-labels reverses no ranking of two "
                 "systems (intervals apart)."]
    for name, label in (("ocr", "OCR filter"), ("raters", "rater filter")):
        f = (n.filters or {}).get(name)
        if f and f.get("hi") is not None and f.get("lo") is not None:
            verdict = ("kept pseudo-labels nearer the truth" if f["hi"] < 0 else
                       "kept pseudo-labels further from the truth" if f["lo"] > 0 else
                       "did not keep pseudo-labels nearer the truth")
            parts.append(f"The {label} {verdict}.")
    return "**Found here:** " + " ".join(parts)


def front_page(n: FrontNumbers) -> str:
    """The generated front-page fragment (MyST markdown, no title: book/intro.md includes it right after its first
    paragraph, so that the first screen answers: :func:`_glance_lines`)."""
    L = ["<!-- generated by inkground_lib.report.front (make book); do not edit -->", ""]
    L += _glance_lines(n)
    L += _found_lines(n)
    L += ["## What this book measured", "",
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
    :func:`front_page_numbers` of ``root`` with ``inputs`` (eval_runs, pseudo_run, dataset_stats, executed)."""
    numbers = front_page_numbers(root, **inputs) if numbers is None else numbers
    return atomic_write_text(Path(path), front_page(numbers))


def write_default_front_page(root: Path = ROOT, inputs: dict | None = None) -> Path:
    """Write ``root/book/sections/front.md`` from the book's default runs (``make book`` calls this with the
    reviewers' page's :func:`~inkground_lib.report.reviewers.default_inputs`, read once for both pages)."""
    root = Path(root)
    return write_front_page(root / SECTIONS_DIR.relative_to(ROOT) / "front.md", root=root, defaults=inputs)
