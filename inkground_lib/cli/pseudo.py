"""``inkground pseudo``: the pseudo-label pipeline of section 02."""

from __future__ import annotations

import sys
from pathlib import Path

from inkground_lib.cli.options import describe, overwrite_option
from inkground_lib.components.derenderers.factory import DERENDERERS, derenderer_names
from inkground_lib.components.ocr.factory import engine_names
from inkground_lib.core.defaults import DERENDERER, N_RATERS, OCR_THRESHOLD, RATERS_PER_PAIR


def _pseudo(a) -> int:
    # pandas, numpy and scipy: imported when the command runs, not for `inkground --help`
    from inkground_lib.pseudo.run import run_pseudo_labels
    from inkground_lib.report.pseudo_labels import funnel_table, ratings_kind

    res = run_pseudo_labels(Path(a.candidates), Path(a.run), derenderer=a.derenderer, ocr=a.ocr,
                            ocr_threshold=a.ocr_threshold, ratings=a.ratings, n_raters=a.n_raters,
                            raters_per_pair=a.raters_per_pair, n_candidates=a.n_candidates, seed=a.seed,
                            progress=not a.quiet, overwrite=a.overwrite,
                            allow_partial_ratings=a.allow_partial_ratings)
    print(funnel_table(res).to_string())
    kept = int(res.pages["kept"].sum())
    o = res.raters
    print(f"pages: {len(res.pages)} candidates, {int(res.pages['ocr_pass'].sum())} passed the OCR filter, {kept} kept, "
          f"{len(o.rejected)} rejected, {len(o.awaiting)} awaiting ratings (fewer than K = {o.k})")
    if res.ratings_file is not None:
        f = res.ratings_file
        print(f"ratings: {ratings_kind(res)}: {f.path} (sha256 {f.sha256[:12]}, {len(f.ratings)} standing ratings; "
              f"K {'from the file' if f.k is not None else 'from --raters-per-pair: the file does not record it'})")
    else:
        print("ratings: simulated (no --ratings file)")
    print(f"benchmark set: {Path(a.run) / 'benchmark'}")
    if not kept:
        print("inkground pseudo: no page was kept; the benchmark set is empty", file=sys.stderr)
        return 1
    return 0


def add_pseudo_parser(sub) -> None:
    ps = sub.add_parser("pseudo", help="the pseudo-label pipeline: derender, OCR filter, rater filter, benchmark set")
    describe(ps, "Section 02's pipeline on a folder of candidate pages: derender every word (its pseudo-label), "
                 "keep the pages whose rendered pseudo-labels OCR reads back (the OCR filter), let raters (simulated, "
                 "or real ones' ratings from `inkground rate`) reject pages, and write the kept pages as the "
                 "benchmark set RUN/benchmark. Prints the funnel table. Resumable: caches stay in the run folder.")
    ps.add_argument("--candidates", required=True, help="dataset folder of candidate pages")
    ps.add_argument("--run", required=True, help="run folder (caches, tables, benchmark/)")
    ps.add_argument("--derenderer", default=DERENDERER,
                    help="; ".join(f"{written} ({d.card.gloss})" if d.card.gloss else written
                                   for written, d in zip(derenderer_names(), DERENDERERS.values()))
                    + f" (default {DERENDERER})")
    ps.add_argument("--ocr", default="rapidocr", help=f"OCR engine: {', '.join(engine_names())}")
    ps.add_argument("--ocr-threshold", dest="ocr_threshold", type=float, default=OCR_THRESHOLD,
                    help=f"a page passes the OCR filter when this share of its words match (default {OCR_THRESHOLD})")
    ps.add_argument("--ratings", help="CSV of real ratings (page, rater, score[, source, time, ...]), e.g. written by "
                    "`inkground rate`; default: simulated raters")
    ps.add_argument("--n-raters", dest="n_raters", type=int, default=N_RATERS,
                    help=f"simulated rater pool (default {N_RATERS})")
    ps.add_argument("--raters-per-pair", dest="raters_per_pair", type=int, default=RATERS_PER_PAIR,
                    help=f"simulated raters per pair; with a --ratings file that does not record K (a plain "
                         f"page,rater,score file), the ratings a page needs to count as rated (default {RATERS_PER_PAIR})")
    ps.add_argument("--allow-partial-ratings", dest="allow_partial_ratings", action="store_true",
                    help="build the benchmark even when more than half of the pages that passed the OCR filter have "
                         "fewer than K standing ratings in the --ratings file (they are neither kept nor rejected)")
    ps.add_argument("--n-candidates", dest="n_candidates", type=int,
                    help="use only the first N candidate pages (default: all)")
    ps.add_argument("--seed", type=int, default=0, help="seed of the simulated raters (default 0)")
    ps.add_argument("--quiet", action="store_true", help="no progress bars")
    overwrite_option(ps)
    ps.set_defaults(func=_pseudo)
