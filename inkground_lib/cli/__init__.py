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
    inkground tracer train --unipen-dir PATH --out DIR      train inkground's learned derenderer (resumable)
    inkground tracer eval --unipen-dir PATH --out DIR       the tracer and the skeleton against writers it never saw

Errors are printed as one clear line (what and where) with exit status 2; nothing half-written is left.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from inkground_lib.cli import data, evaluate, pseudo, rate, scale, sections, tracer
from inkground_lib.core.files import PathError
from inkground_lib.publish.notebook_runner import RunnerError

COMMANDS = (data.add_synth_parser, data.add_recorded_parser, pseudo.add_pseudo_parser, evaluate.add_predict_parser,
            evaluate.add_eval_parser, sections.add_run_parser, evaluate.add_check_parser, data.add_validate_parser,
            scale.add_paper_scale_parser, sections.add_book_parser, rate.add_rate_parser, tracer.add_tracer_parser)
"""Each command's parser, registered by its family's module, in the order ``inkground --help`` lists them."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="inkground", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for add_parser in COMMANDS:
        add_parser(sub)
    return p


OUTPUT_FOLDER_OPTIONS = ("out", "run")
"""Options naming a folder a command writes into."""


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # numpy (under these errors' modules): imported once the arguments are parsed, not for `inkground --help`
    from inkground_lib.core.dataset import DatasetError
    from inkground_lib.core.ink import InkError
    from inkground_lib.evaluation.systems.base import SystemConfigError, SystemUnavailable

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

