"""The ``inkground`` command.

    inkground synth --out DIR [--pages N --seed S ...]     synthetic photographed pages
    inkground recorded --unipen PATH --out DIR [...]       pages of real recorded words
    inkground run 01 -p NAME VALUE [-p NAME VALUE ...]     rerun one section with new parameters
    inkground book                                          datasets -> sections -> the HTML book

Errors are printed as one clear line (what and where) with exit status 2; nothing half-written is left.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _synth(a) -> None:
    from . import synth

    fields = {k: v for k, v in vars(a).items() if k in synth.SynthParams.__dataclass_fields__ and v is not None}
    params = synth.SynthParams(**fields)
    out = synth.generate(Path(a.out), params, progress=not a.quiet)
    print(out)


def _recorded(a) -> None:
    from . import recorded

    kw = {k: getattr(a, k) for k in ("unipen", "iamondb", "pages", "seed") if getattr(a, k) is not None}
    out = recorded.build_recorded(Path(a.out), progress=not a.quiet, **kw)
    print(out)


def _run(a) -> None:
    from . import runner

    params = {}
    for name, value in a.param or []:
        params[name] = runner.parse_value(value)
    path, executed = runner.run_section(a.section, params, force=a.force, log_output=a.verbose)
    print(f"{'executed' if executed else 'unchanged, not re-executed'}: {path}")
    print("rebuild the book with `make book` to see it.")


def _book(a) -> None:
    from . import pipeline

    index = pipeline.make_book(force=a.force, defaults=a.defaults)
    print(f"The book is at {index}")


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
    s.set_defaults(func=_synth)

    r = sub.add_parser("recorded", help="compose photographed pages from real recorded words")
    r.add_argument("--out", required=True)
    r.add_argument("--unipen", help="a UNIPEN-format JSON file (e.g. ../shared/data/unipen_cursive/unipen_cursive_dev.json)")
    r.add_argument("--iamondb", help="the root of an IAM-OnDB copy (lineStrokes/, original/)")
    r.add_argument("--pages", type=int)
    r.add_argument("--seed", type=int)
    r.add_argument("--quiet", action="store_true")
    r.set_defaults(func=_recorded)

    u = sub.add_parser("run", help="execute one section notebook with papermill, with new parameters")
    u.add_argument("section", help="01, 02, ... or the notebook name")
    u.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"))
    u.add_argument("--force", action="store_true", help="execute even if nothing changed")
    u.add_argument("--verbose", action="store_true", help="stream the notebook's output")
    u.set_defaults(func=_run)

    b = sub.add_parser("book", help="build datasets, execute the sections, build the HTML book")
    b.add_argument("--force", action="store_true", help="re-execute every section")
    b.add_argument("--defaults", action="store_true",
                   help="run every section with its default parameters (forget earlier `inkground run` parameters)")
    b.set_defaults(func=_book)
    return p


def main(argv: list[str] | None = None) -> int:
    from .dataset import DatasetError
    from .files import PathError
    from .ink import InkError
    from .runner import RunnerError

    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except (DatasetError, PathError, InkError, RunnerError, FileNotFoundError, ValueError) as e:
        print(f"inkground {args.cmd}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"inkground {args.cmd}: interrupted; finished work is kept, rerun to resume", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
