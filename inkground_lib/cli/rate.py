"""``inkground rate``: the rating app's arguments and its start (the app: :mod:`inkground_lib.rate`)."""

from __future__ import annotations

from inkground_lib.cli.options import describe
from inkground_lib.core.defaults import PAGE_SETS, RATE_HOST, RATE_PORT, RATERS_PER_PAIR, RESERVE_SECONDS


def add_rate_parser(sub) -> None:
    r = sub.add_parser("rate", help="a local web app where people rate a pseudo-label run's pages (0-10); "
                                    "ratings go to a file that `inkground pseudo --ratings` and section 02 read")
    describe(r, "Serve a local web app where people rate a pseudo-label run's pages from 0 to 10 (each page's photo "
                "beside its pseudo-labels drawn over it). Each rating is appended to the ratings file the moment it "
                "is given; K raters per page; a page offered to a rater is reserved for a while. Then `inkground "
                "run 02 -p ratings FILE` (or `inkground pseudo --ratings FILE`) uses the ratings instead of the "
                "simulated raters. Stop with Ctrl-C; a restart resumes.")
    r.add_argument("--run", required=True, help="the pseudo-label run folder (section 02's run_dir)")
    r.add_argument("--ratings", required=True,
                   help="ratings file to append to (created if new); must lie outside every run and dataset folder")
    r.add_argument("--raters-per-pair", dest="raters_per_pair", type=int, default=None, metavar="K",
                   help=f"raters per page, fixed for a ratings file (default: the file's, else {RATERS_PER_PAIR})")
    r.add_argument("--host", default=RATE_HOST,
                   help=f"address to listen on (default {RATE_HOST}: this machine only; any other address needs the "
                        "access token printed at start, e.g. 0.0.0.0 for the local network)")
    r.add_argument("--port", type=int, default=RATE_PORT, help=f"port (default {RATE_PORT}; 0: any free port)")
    r.add_argument("--pages", choices=PAGE_SETS, default=PAGE_SETS[0],
                   help="pages to rate: those that passed the OCR filter (the paper's funnel; default) or all")
    r.add_argument("--candidates", help="the run's candidate dataset, if it moved since the run")
    r.add_argument("--reserve-minutes", dest="reserve_minutes", type=float, default=RESERVE_SECONDS / 60,
                   help=f"how long a page offered to a rater stays reserved for them (default {RESERVE_SECONDS / 60:g})")
    r.set_defaults(func=run_rate)


def run_rate(a) -> int:
    # pandas and tornado: imported when the command runs, not for `inkground --help`
    from inkground_lib.rate.assign import RateError
    from inkground_lib.rate.server import serve

    if a.raters_per_pair is not None and a.raters_per_pair < 1:
        raise RateError(f"--raters-per-pair: must be >= 1, got {a.raters_per_pair}")
    if not 0 <= a.port <= 65535:
        raise RateError(f"--port: {a.port} is not a port number")
    if not a.reserve_minutes > 0:
        raise RateError(f"--reserve-minutes: must be > 0, got {a.reserve_minutes}")
    serve(a.run, a.ratings, a.raters_per_pair, a.host, a.port, candidates=a.candidates, pages=a.pages,
          reserve_s=60.0 * a.reserve_minutes)
    return 0
