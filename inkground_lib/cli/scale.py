"""``inkground paper-scale``: the paper's scale end to end."""

from __future__ import annotations

from pathlib import Path

from inkground_lib.cli.options import describe, overwrite_option
from inkground_lib.core.defaults import PAPER_CANDIDATE_PAGES, PAPER_SCALE_SEED
from inkground_lib.pipelines.paper_scale import PaperScaleParams, run_paper_scale


def _style(a) -> dict:
    """The StyleParams fields ``--style-fit`` and ``--style-epochs`` set (empty: the book's recipe, a head on the
    shipped backbone). Epochs count only for a classifier that trains its network (fit ``last_stage`` or ``all``)."""
    style = {"fit": a.style_fit} if a.style_fit else {}
    if a.style_fit == "all":
        style["start"] = "random"  # the paper's recipe: the whole network from random weights
    if a.style_epochs:
        if a.style_fit not in ("last_stage", "all"):
            raise ValueError("--style-epochs needs --style-fit last_stage or all (the book's recipe fits a linear "
                             "head on the shipped backbone and trains no epochs)")
        style["epochs"] = a.style_epochs
    return style


def _paper_scale(a) -> int:
    params = PaperScaleParams(pages=a.pages, seed=a.seed, style=_style(a))
    d = run_paper_scale(Path(a.out), params, workers=a.workers, scheduler=a.scheduler, progress=not a.quiet,
                        overwrite=a.overwrite)
    print(f"paper-scale: {d['total_seconds']:.0f} s in all, peak memory {d['peak_memory_gb']:.2f} GB; "
          f"tables in {Path(a.out) / 'tables'}")
    return 0


def add_paper_scale_parser(sub) -> None:
    pp = sub.add_parser("paper-scale", help="the paper's scale end to end: 2,984 candidate pages -> pseudo-labels -> "
                        "benchmark -> local systems scored -> tables (resumable)")
    describe(pp, "The paper's scale end to end, outside the book: candidate pages -> pseudo-labels -> benchmark -> "
                 "the local systems scored -> the tables, in OUT. OUT/stages.json records each finished stage "
                 "(seconds, items, peak memory); an interrupted run (even kill -9) resumes from the last finished "
                 "work. Page-parallel stages use local processes or a Dask cluster (--scheduler). `make paper-scale` "
                 "runs this.")
    pp.add_argument("--out", required=True, help="output folder (an earlier run there is resumed)")
    pp.add_argument("--pages", type=int, default=PAPER_CANDIDATE_PAGES,
                    help=f"candidate pages (default: the paper's {PAPER_CANDIDATE_PAGES}; page i depends only on "
                         f"the seed and i, so fewer pages are the first pages of the full set)")
    pp.add_argument("--seed", type=int, default=PAPER_SCALE_SEED,
                    help=f"seed of the candidate pages (default: {PAPER_SCALE_SEED})")
    pp.add_argument("--workers", type=int, help="local worker processes (default: every core)")
    pp.add_argument("--scheduler", help="Dask scheduler address (tcp://host:8786): run the page-parallel work there")
    pp.add_argument("--style-fit", dest="style_fit", choices=["head", "last_stage", "all"],
                    help="what the Style classifiers fit: head (default, the book's recipe: a linear head on the "
                         "shipped backbone), last_stage (the backbone's last stage too) or all (the paper's: the "
                         "whole ResNet-18 from random weights)")
    pp.add_argument("--style-epochs", dest="style_epochs", type=int,
                    help="Style classifier epochs, with --style-fit last_stage or all (default: 12)")
    pp.add_argument("--quiet", action="store_true", help="no progress bars")
    overwrite_option(pp)
    pp.set_defaults(func=_paper_scale)
