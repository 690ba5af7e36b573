"""``inkground predict``, ``inkground eval`` and ``inkground check``: systems run, scored and checked (section 03)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from inkground_lib.cli.options import describe, overwrite_option
from inkground_lib.core.defaults import CHECK_TIMEOUT, DEADLINE_FAILURES, GRID, SPACING
from inkground_lib.core.layout import BENCHMARK, EVAL_RUN, PREDICT_RUN


def _predict(a) -> int:
    # numpy and pandas: imported when the command runs, not for `inkground --help`
    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.core.run_files import predictions_dir
    from inkground_lib.evaluation.predict import plan_system, predict_system

    ds = load_dataset(a.dataset)
    if a.dry_run:
        plan = plan_system(a.system, ds, Path(a.run), grid=a.grid, retry_refusals=a.retry_refusals,
                           progress=not a.quiet)
        print("\n".join(plan.lines()))
        return 0
    run = predict_system(a.system, ds, Path(a.run), grid=a.grid, progress=not a.quiet,
                         retry_refusals=a.retry_refusals, overwrite=a.overwrite, max_requests=a.max_requests,
                         max_cost=a.max_cost, max_deadline_failures=a.max_deadline_failures)
    sent = [st for st in run.statuses if st != "not_sent"]
    not_sent = len(run.statuses) - len(sent)
    print(f"{run.label}: {len(run.statuses)} words; {_status_counts(sent)}; "
          + (f"{not_sent} not sent (spending cap); " if not_sent else "")
          + f"{run.left_out} word{'s' if run.left_out != 1 else ''} left out by the target rule (a text written "
            f"more than once on its page names no single word); cache {predictions_dir(a.run)}")
    usable = [ink for ink, st in zip(run.inks, run.statuses) if st != "not_sent"]
    if usable and all(ink is None for ink in usable):
        print(f"inkground predict: no word got a usable prediction from {run.label} "
              f"({_status_counts(sent)})", file=sys.stderr)
        return 1  # nothing succeeded: a script or CI must see it
    return 0


def _status_counts(statuses) -> str:
    """'statuses: ok 10, refusal 2' (sorted by status; 'statuses: none' for no word)."""
    if not statuses:
        return "statuses: none"
    counts: dict[str, int] = {}
    for st in statuses:
        counts[st] = counts.get(st, 0) + 1
    return "statuses: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items()))


def _eval(a) -> int:
    # numpy and pandas: imported when the command runs, not for `inkground --help`
    from inkground_lib.core.metric_table import metric_names
    from inkground_lib.core.run_files import scores_csv
    from inkground_lib.evaluation.run import evaluate_dataset
    from inkground_lib.evaluation.settings import EvalSettings

    settings = EvalSettings(reference=a.reference, ocr_engine=a.ocr, spacing=a.spacing, grid=a.grid)
    res = evaluate_dataset(Path(a.dataset), a.systems, Path(a.run), settings, progress=not a.quiet,
                           overwrite=a.overwrite)
    cols = ["label", "n_words", "valid_rate", *metric_names()]
    if len(res.summary):
        print(res.summary[cols].to_string(index=False))
    for name, run in res.runs.items():
        print(f"{name}: {_status_counts(run.statuses)}")
    for name, why in res.unavailable.items():
        print(f"not run: {name}: {why}")
    print(f"scores: {scores_csv(a.run, a.reference)}")
    if not any(ink is not None for run in res.runs.values() for ink in run.inks):
        print("inkground eval: no system produced a usable prediction", file=sys.stderr)
        return 1
    return 0


def _check(a) -> int:
    # numpy: imported when the command runs, not for `inkground --help`
    from inkground_lib.evaluation.systems.check import check_systems, check_table

    rows = check_systems(a.systems, live=a.live, timeout=a.timeout)
    print(check_table(rows))
    not_ready = [r.system for r in rows if not r.ready]
    if not_ready:
        print(f"inkground check: not ready: {', '.join(not_ready)}", file=sys.stderr)
        return 1
    return 0


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


def add_predict_parser(sub) -> None:
    pr = sub.add_parser("predict", help="run (or resume) one system on a dataset; predictions are cached")
    describe(pr, "Ask one system for the pen trajectory of every target word of a dataset (a local system, or a "
                 "model behind an API: its key comes from the environment variable its registry entry names). "
                 "Each answer is cached in RUN/predictions/<system>.jsonl the moment it arrives, so an interrupted "
                 "run resumes and nothing is asked twice. --dry-run prints the requests, tokens and cost without "
                 "sending anything; `inkground check` says whether a system is ready.")
    pr.add_argument("--system", required=True, help="a name from inkground_lib/evaluation/systems/systems.yaml or $INKGROUND_SYSTEMS")
    pr.add_argument("--dataset", required=True, help="dataset folder holding manifest.json (e.g. the book's "
                                                     f"benchmark set {BENCHMARK})")
    pr.add_argument("--run", default=PREDICT_RUN, help=f"run folder (predictions/<system>.jsonl; default {PREDICT_RUN})")
    pr.add_argument("--grid", type=int, default=GRID, help=f"the prompt's grid size (default {GRID})")
    pr.add_argument("--quiet", action="store_true", help="no progress bar")
    pr.add_argument("--retry-refusals", dest="retry_refusals", action="store_true",
                    help="ask again the words whose cached answer is a refusal or empty (costs requests)")
    pr.add_argument("--dry-run", dest="dry_run", action="store_true",
                    help="print the requests to send (after the cache), images, estimated tokens and cost; send nothing")
    pr.add_argument("--max-requests", dest="max_requests", type=int,
                    help="spending cap: send at most this many requests (the rest are not sent)")
    pr.add_argument("--max-cost", dest="max_cost", type=float,
                    help="spending cap in USD (worst case: estimated input + max_tokens output per request; needs "
                         "the entry's price_input_per_mtok, price_output_per_mtok and image_token_formula)")
    pr.add_argument("--max-deadline-failures", dest="max_deadline_failures", type=_positive_int, metavar="K",
                    help=f"stop (as on a spent quota: exit 130, a rerun resumes) after K requests in a row got no "
                         f"complete answer within the entry's timeout (default: the entry's max_deadline_failures, "
                         f"else {DEADLINE_FAILURES})")
    overwrite_option(pr)
    pr.set_defaults(func=_predict)


def add_eval_parser(sub) -> None:
    ev = sub.add_parser("eval", help="predict and score several systems on a dataset")
    describe(ev, "Predict (as `inkground predict`, cached) and score several systems on a dataset: trajectory "
                 "distances (DTW, Chamfer, in word heights), readability of the rendered ink by OCR (AR, CR) and "
                 "Style (a writer classifier). Prints the summary table and writes the scores into the "
                 f"run folder (default {EVAL_RUN}, never the book's: section 03 keeps its own). `make eval "
                 "SYSTEMS=\"...\"` runs this.")
    ev.add_argument("--systems", nargs="+", required=True, metavar="NAME",
                    help="system names from the registry (`inkground check` lists them), e.g. skeleton font box")
    ev.add_argument("--dataset", default=BENCHMARK, help=f"dataset folder (default: the book's benchmark set {BENCHMARK})")
    ev.add_argument("--run", default=EVAL_RUN,
                    help=f"run folder (predictions cache, scores; default {EVAL_RUN}); the book's section 03 keeps "
                         "its own")
    ev.add_argument("--reference", default="reference", choices=["reference", "true"],
                    help="score against the dataset's references (its pseudo-labels; default) or the true inks")
    ev.add_argument("--ocr", default="rapidocr", help="OCR engine for AR / CR: rapidocr (default, offline), "
                                                     "deepseek-ocr (GPU), tesseract")
    ev.add_argument("--spacing", type=float, default=SPACING,
                    help=f"arc-length resampling step in word heights (default {SPACING})")
    ev.add_argument("--grid", type=int, default=GRID, help=f"the prompt's grid size (default {GRID})")
    ev.add_argument("--quiet", action="store_true", help="no progress bars")
    overwrite_option(ev)
    ev.set_defaults(func=_eval)


def add_check_parser(sub) -> None:
    c = sub.add_parser("check", help="is each system ready? config, missing environment variables, endpoint, "
                                     "model served; --live sends one small real request")
    describe(c, "For each system: is its registry entry valid, are the environment variables it needs set (names "
                "only, never values), does its endpoint answer and serve the model; --live sends one small real "
                "request and parses the answer. Exit status 1 when a system is not ready.")
    c.add_argument("--systems", nargs="+", help="system names (default: every registered system)")
    c.add_argument("--live", action="store_true", help="send one small real request per API system and parse it")
    c.add_argument("--timeout", type=float, default=CHECK_TIMEOUT,
                   help=f"seconds for the endpoint's model list (default {CHECK_TIMEOUT:g}); the --live request "
                        f"is allowed each system's own registry timeout, as in predict")
    c.set_defaults(func=_check)
