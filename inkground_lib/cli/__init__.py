"""The ``inkground`` command.

    inkground synth --out DIR [--pages N --seed S ...]     synthetic photographed pages
    inkground recorded --unipen PATH --out DIR [...]       pages of real recorded words
    inkground pseudo --candidates DIR --run DIR [...]      the pseudo-label pipeline (section 02)
    inkground predict --system NAME --dataset DIR          run or resume one system (cached predictions)
    inkground eval --systems A B ... [--dataset DIR]       predict and score systems (section 03)
    inkground run 01 -p NAME VALUE [-p NAME VALUE ...]     rerun one section with new parameters
    inkground validate DIR                                  check a dataset folder (schema and files)
    inkground check [--systems NAME ...] [--live]           is each system ready to run here?
    inkground book                                          datasets -> sections -> the HTML book
    inkground paper-scale --out DIR [--scheduler ADDRESS]   2,984 pages end to end (resumable)
    inkground rate --run DIR --ratings FILE [...]          people rate a run's pages in a browser (section 02)

Errors are printed as one clear line (what and where) with exit status 2; nothing half-written is left.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from inkground_lib.core.defaults import GRID, OCR_THRESHOLD
from inkground_lib.core.layout import BENCHMARK, EVAL_RUN, PREDICT_RUN


def _synth(a) -> None:
    from inkground_lib.datasets.synth.generate import SynthParams, generate

    fields = {k: v for k, v in vars(a).items() if k in SynthParams.__dataclass_fields__ and v is not None}
    params = SynthParams(**fields)
    out = generate(Path(a.out), params, progress=not a.quiet, workers=a.workers, overwrite=a.overwrite)
    print(out)


def _recorded(a) -> None:
    import json

    from inkground_lib.datasets.recorded import build_recorded

    kw = {k: getattr(a, k) for k in ("unipen", "unipen_dir", "iamondb", "pages", "seed") if getattr(a, k) is not None}
    if a.words_per_page is not None:
        wpp = [v for x in a.words_per_page for v in (x if isinstance(x, tuple) else (x,))]
        if len(wpp) not in (1, 2):
            raise ValueError(f"--words-per-page: expected MIN MAX or MIN-MAX, got {len(wpp)} numbers")
        kw["words_per_page"] = (wpp[0], wpp[-1])
    if a.unipen_dir is not None:
        kw.update(category=None if a.category.lower() == "any" else a.category,
                  style=None if a.style.lower() == "any" else a.style,
                  quality=None if a.quality.lower() == "any" else a.quality)
    out = build_recorded(Path(a.out), progress=not a.quiet, overwrite=a.overwrite, **kw)
    meta = json.loads((out / "manifest.json").read_text("utf-8"))["meta"]
    for src in meta["sources"]:
        if src["kind"] != "unipen_dir":
            continue
        sel = ", ".join(f"{k} {'any' if v is None else v}" for k, v in src["selection"].items())
        print(f"UNIPEN release {src['path']} ({sel})")
        print(f"  files: {src['files_found']} found, {src['files_parsed']} parsed, {src['files_failed']} failed"
              + "".join(f"; {k}: {n}" for k, n in src["failures_by_kind"].items()))
        for f, why in src["failed_files"][:10]:
            print(f"    {f}: {why}")
        print(f"  segments read: {src['segments_read']}, skipped: {sum(src['segments_skipped'].values())}"
              + "".join(f"; {k}: {n}" for k, n in src["segments_skipped"].items()))
        print(f"  words selected: {src['words']} from {src['writers_selected']} writers")
    lo, hi = meta["params"]["words_per_page"]
    print(f"pages: {meta['pages_built']} ({lo}-{hi} words each, one writer per page), writers: {meta['writers']}")
    print(out)


def _words_per_page(text: str) -> int | tuple[int, int]:
    if "-" in text:
        lo, _, hi = text.partition("-")
        return (int(lo), int(hi))
    return int(text)


def _pseudo(a) -> int:
    from inkground_lib.pseudo.run import run_pseudo_labels
    from inkground_lib.report.pseudo_labels import funnel_table

    res = run_pseudo_labels(Path(a.candidates), Path(a.run), derenderer=a.derenderer, ocr=a.ocr,
                                   ocr_threshold=a.ocr_threshold, ratings=a.ratings, n_raters=a.n_raters,
                                   raters_per_pair=a.raters_per_pair, n_candidates=a.n_candidates, seed=a.seed,
                                   progress=not a.quiet, overwrite=a.overwrite)
    print(funnel_table(res).to_string())
    kept = int(res.pages["kept"].sum())
    print(f"pages: {len(res.pages)} candidates, {int(res.pages['ocr_pass'].sum())} passed the OCR filter, {kept} kept")
    print(f"benchmark set: {Path(a.run) / 'benchmark'}")
    if not kept:
        print("inkground pseudo: no page was kept; the benchmark set is empty", file=sys.stderr)
        return 1
    return 0


def _predict(a) -> int:
    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.evaluation.run import predict_system

    ds = load_dataset(a.dataset)
    if a.dry_run:
        from inkground_lib.evaluation.run import plan_system

        plan = plan_system(a.system, ds, Path(a.run), grid=a.grid, retry_refusals=a.retry_refusals)
        print("\n".join(plan.lines()))
        return 0
    run = predict_system(a.system, ds, Path(a.run), grid=a.grid, progress=not a.quiet,
                         retry_refusals=a.retry_refusals, overwrite=a.overwrite, max_requests=a.max_requests,
                         max_cost=a.max_cost)
    not_sent = sum(1 for r in run.records if str(r.get("error") or "").startswith("not sent"))
    print(f"{run.label}: {len(run.statuses)} words; {_status_counts(run.statuses)}; "
          + (f"{not_sent} not sent (spending cap); " if not_sent else "") + f"cache {Path(a.run) / 'predictions'}")
    if run.inks and all(ink is None for ink in run.inks):
        print(f"inkground predict: no word got a usable prediction from {run.label} "
              f"({_status_counts(run.statuses)})", file=sys.stderr)
        return 1  # nothing succeeded: a script or CI must see it
    return 0


def _status_counts(statuses) -> str:
    """'statuses: ok 10, refusal 2' (sorted by status)."""
    counts: dict[str, int] = {}
    for st in statuses:
        counts[st] = counts.get(st, 0) + 1
    return "statuses: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items()))


def _eval(a) -> int:
    from inkground_lib.evaluation.run import EvalSettings, evaluate_dataset

    settings = EvalSettings(reference=a.reference, ocr_engine=a.ocr, spacing=a.spacing, grid=a.grid)
    res = evaluate_dataset(Path(a.dataset), a.systems, Path(a.run), settings, progress=not a.quiet,
                           overwrite=a.overwrite)
    cols = ["label", "n_words", "valid_rate", "dtw", "chamfer", "ar", "cr", "style"]
    if len(res.summary):
        print(res.summary[cols].to_string(index=False))
    for name, run in res.runs.items():
        print(f"{name}: {_status_counts(run.statuses)}")
    for name, why in res.unavailable.items():
        print(f"not run: {name}: {why}")
    print(f"scores: {Path(a.run) / f'scores-{a.reference}.csv'}")
    if not any(ink is not None for run in res.runs.values() for ink in run.inks):
        print("inkground eval: no system produced a usable prediction", file=sys.stderr)
        return 1
    return 0


def _run(a) -> None:
    from inkground_lib.publish.notebook_runner import parse_value, run_section

    params = {}
    for name, value in a.param or []:
        params[name] = parse_value(value)
    path, executed = run_section(a.section, params, force=a.force, log_output=a.verbose)
    print(f"{'executed' if executed else 'unchanged, not re-executed'}: {path}")
    print("rebuild the book with `make book` to see it.")


def _check(a) -> int:
    from inkground_lib.evaluation.systems.check import check_systems, check_table

    rows = check_systems(a.systems, live=a.live, timeout=a.timeout)
    print(check_table(rows))
    not_ready = [r.system for r in rows if not r.ready]
    if not_ready:
        print(f"inkground check: not ready: {', '.join(not_ready)}", file=sys.stderr)
        return 1
    return 0


def _validate(a) -> int:
    from inkground_lib.core.validate import exit_code, format_report, validate_dataset

    problems = validate_dataset(a.dir)
    print("\n".join(format_report(a.dir, problems)), file=sys.stderr if problems else sys.stdout)
    return exit_code(problems)


def _book(a) -> None:
    from inkground_lib.publish.make_book import make_book

    index = make_book(force=a.force, defaults=a.defaults)
    print(f"The book is at {index}")


def _paper_scale(a) -> int:
    from inkground_lib.pipelines.paper_scale import PaperScaleParams, run_paper_scale

    params = PaperScaleParams(pages=a.pages, seed=a.seed, style={"epochs": a.style_epochs} if a.style_epochs else {})
    d = run_paper_scale(Path(a.out), params, workers=a.workers, scheduler=a.scheduler, progress=not a.quiet,
                        overwrite=a.overwrite)
    print(f"paper-scale: {d['total_seconds']:.0f} s in all, peak memory {d['peak_memory_gb']:.2f} GB; "
          f"tables in {Path(a.out) / 'tables'}")
    return 0


def _overwrite_option(parser) -> None:
    parser.add_argument("--overwrite", action="store_true",
                        help="write into a non-empty folder that inkground did not create (its files are kept: "
                             "inkground never deletes what it did not write)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="inkground", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)

    s = sub.add_parser("synth", help="generate a synthetic dataset of photographed cursive pages")
    s.add_argument("--out", required=True, help="dataset folder to write")
    s.add_argument("--pages", type=int)
    s.add_argument("--seed", type=int)
    s.add_argument("--words-min", dest="words_min", type=int)
    s.add_argument("--words-max", dest="words_max", type=int)
    s.add_argument("--words-mean", dest="words_mean", type=float)
    s.add_argument("--width", type=int, help="page photo width in pixels")
    s.add_argument("--height", type=int, help="page photo height in pixels")
    s.add_argument("--workers", type=int)
    s.add_argument("--quiet", action="store_true")
    _overwrite_option(s)
    s.set_defaults(func=_synth)

    r = sub.add_parser("recorded", help="compose photographed pages from real recorded words")
    r.add_argument("--out", required=True)
    r.add_argument("--unipen", help="a UNIPEN-format JSON file (default: the shipped subset data/unipen_cursive/unipen_cursive_dev.json)")
    r.add_argument("--unipen-dir", dest="unipen_dir",
                   help="the root of a whole UNIPEN release in the original .dat format (data/, include/), e.g. train_r01_v07")
    r.add_argument("--category", default="6", help="with --unipen-dir: release categories, e.g. 6 (isolated cursive or mixed words) or 6,7; 'any' "
                        "(needed for a folder of .dat files that is not a release)")
    r.add_argument("--style", default="CURSIVE", help="with --unipen-dir: .STYLE labels to keep, e.g. CURSIVE or CURSIVE,MIXED; 'any'")
    r.add_argument("--quality", default="!BAD", help="with --unipen-dir: segment qualities to keep: !BAD (all but BAD), GOOD,OK, 'any'")
    r.add_argument("--words-per-page", dest="words_per_page", nargs="+", type=_words_per_page, metavar="MIN MAX",
                   help="words per page: MIN MAX or MIN-MAX (default 20-50 with --unipen-dir, else 4-8)")
    r.add_argument("--iamondb", help="the root of an IAM-OnDB copy (lineStrokes/, original/)")
    r.add_argument("--pages", type=int)
    r.add_argument("--seed", type=int)
    r.add_argument("--quiet", action="store_true")
    _overwrite_option(r)
    r.set_defaults(func=_recorded)

    ps = sub.add_parser("pseudo", help="the pseudo-label pipeline: derender, OCR filter, rater filter, benchmark set")
    ps.add_argument("--candidates", required=True, help="dataset folder of candidate pages")
    ps.add_argument("--run", required=True, help="run folder (caches, tables, benchmark/)")
    ps.add_argument("--derenderer", default="skeleton", help="skeleton, or inksight-small-p:<SavedModel folder>")
    ps.add_argument("--ocr", default="rapidocr", help="OCR engine: rapidocr, deepseek-ocr, tesseract")
    ps.add_argument("--ocr-threshold", dest="ocr_threshold", type=float, default=OCR_THRESHOLD)
    ps.add_argument("--ratings", help="CSV of real ratings (page, rater, score[, source, time, ...]), e.g. written by "
                    "`inkground rate`; default: simulated raters")
    ps.add_argument("--n-raters", dest="n_raters", type=int, default=85)
    ps.add_argument("--raters-per-pair", dest="raters_per_pair", type=int, default=2)
    ps.add_argument("--n-candidates", dest="n_candidates", type=int)
    ps.add_argument("--seed", type=int, default=0)
    ps.add_argument("--quiet", action="store_true")
    _overwrite_option(ps)
    ps.set_defaults(func=_pseudo)

    pr = sub.add_parser("predict", help="run (or resume) one system on a dataset; predictions are cached")
    pr.add_argument("--system", required=True, help="a name from inkground_lib/evaluation/systems/systems.yaml or $INKGROUND_SYSTEMS")
    pr.add_argument("--dataset", required=True)
    pr.add_argument("--run", default=PREDICT_RUN, help="run folder (predictions/<system>.jsonl)")
    pr.add_argument("--grid", type=int, default=GRID)
    pr.add_argument("--quiet", action="store_true")
    pr.add_argument("--retry-refusals", dest="retry_refusals", action="store_true",
                    help="ask again the words whose cached answer is a refusal or empty (costs requests)")
    pr.add_argument("--dry-run", dest="dry_run", action="store_true",
                    help="print the requests to send (after the cache), images, estimated tokens and cost; send nothing")
    pr.add_argument("--max-requests", dest="max_requests", type=int,
                    help="spending cap: send at most this many requests (the rest are not sent)")
    pr.add_argument("--max-cost", dest="max_cost", type=float,
                    help="spending cap in USD (worst case: estimated input + max_tokens output per request)")
    _overwrite_option(pr)
    pr.set_defaults(func=_predict)

    ev = sub.add_parser("eval", help="predict and score several systems on a dataset")
    ev.add_argument("--systems", nargs="+", required=True)
    ev.add_argument("--dataset", default=BENCHMARK)
    ev.add_argument("--run", default=EVAL_RUN,
                    help="run folder (predictions cache, scores); the book's section 03 keeps its own")
    ev.add_argument("--reference", default="reference", choices=["reference", "true"])
    ev.add_argument("--ocr", default="rapidocr")
    ev.add_argument("--spacing", type=float, default=0.05)
    ev.add_argument("--grid", type=int, default=GRID)
    ev.add_argument("--quiet", action="store_true")
    _overwrite_option(ev)
    ev.set_defaults(func=_eval)

    u = sub.add_parser("run", help="execute one section notebook with papermill, with new parameters")
    u.add_argument("section", help="01, 02, ... or the notebook name")
    u.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"))
    u.add_argument("--force", action="store_true", help="execute even if nothing changed")
    u.add_argument("--verbose", action="store_true", help="stream the notebook's output")
    u.set_defaults(func=_run)

    c = sub.add_parser("check", help="is each system ready? config, missing environment variables, endpoint, "
                                     "model served; --live sends one small real request")
    c.add_argument("--systems", nargs="+", help="system names (default: every registered system)")
    c.add_argument("--live", action="store_true", help="send one small real request per API system and parse it")
    c.add_argument("--timeout", type=float, default=15.0, help="seconds per endpoint call (default 15)")
    c.set_defaults(func=_check)

    v = sub.add_parser("validate", help="check a dataset folder against the manifest's JSON Schema and its files")
    v.add_argument("dir", help="dataset folder holding manifest.json")
    v.set_defaults(func=_validate)

    from inkground_lib.core.defaults import PAPER_CANDIDATE_PAGES, PAPER_SCALE_SEED

    pp = sub.add_parser("paper-scale", help="the paper's scale end to end: 2,984 candidate pages -> pseudo-labels -> "
                        "benchmark -> local systems scored -> tables (resumable)")
    pp.add_argument("--out", required=True, help="output folder (an earlier run there is resumed)")
    pp.add_argument("--pages", type=int, default=PAPER_CANDIDATE_PAGES,
                    help=f"candidate pages (default: the paper's {PAPER_CANDIDATE_PAGES}; page i depends only on "
                         f"the seed and i, so fewer pages are the first pages of the full set)")
    pp.add_argument("--seed", type=int, default=PAPER_SCALE_SEED,
                    help=f"seed of the candidate pages (default: {PAPER_SCALE_SEED})")
    pp.add_argument("--workers", type=int, help="local worker processes (default: every core)")
    pp.add_argument("--scheduler", help="Dask scheduler address (tcp://host:8786): run the page-parallel work there")
    pp.add_argument("--style-epochs", dest="style_epochs", type=int,
                    help="Style classifier epochs (default: the book's recipe)")
    pp.add_argument("--quiet", action="store_true", help="no progress bars")
    _overwrite_option(pp)
    pp.set_defaults(func=_paper_scale)

    b = sub.add_parser("book", help="build datasets, execute the sections, build the HTML book")
    b.add_argument("--force", action="store_true", help="re-execute every section")
    b.add_argument("--defaults", action="store_true",
                   help="run every section with its default parameters (forget earlier `inkground run` parameters)")
    b.set_defaults(func=_book)

    from inkground_lib.cli.rate import add_rate_parser

    add_rate_parser(sub)
    return p


OUTPUT_FOLDER_OPTIONS = ("out", "run")
"""Options naming a folder a command writes into."""


def main(argv: list[str] | None = None) -> int:
    from inkground_lib.publish.notebook_runner import RunnerError
    from inkground_lib.core.dataset import DatasetError
    from inkground_lib.core.files import PathError
    from inkground_lib.core.ink import InkError
    from inkground_lib.evaluation.systems.base import (
        SystemConfigError,
        SystemUnavailable,
    )

    args = build_parser().parse_args(argv)
    for opt in OUTPUT_FOLDER_OPTIONS:  # a folder to write into that is a file: say so before any work
        value = getattr(args, opt, None)
        if isinstance(value, str) and Path(value).exists() and not Path(value).is_dir():
            print(f"inkground {args.cmd}: error: --{opt.replace('_', '-')} {value}: exists and is not a folder",
                  file=sys.stderr)
            return 2
    try:
        code = args.func(args)
    except (DatasetError, PathError, InkError, RunnerError, SystemConfigError, SystemUnavailable,
            FileNotFoundError, ValueError) as e:
        print(f"inkground {args.cmd}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        summary = getattr(e, "summary", None) or "interrupted; finished work is kept, rerun to resume"
        print(f"inkground {args.cmd}: {summary}", file=sys.stderr)
        if argv is None:  # the program itself: do not wait at exit for requests still in flight
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(130)
        return 130
    return int(code or 0)

