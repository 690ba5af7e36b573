"""The ``inkground`` command.

    inkground synth --out DIR [--pages N --seed S ...]     synthetic photographed pages
    inkground recorded --unipen PATH --out DIR [...]       pages of real recorded words
    inkground pseudo --candidates DIR --run DIR [...]      the pseudo-label pipeline (section 02)
    inkground predict --system NAME --dataset DIR          run or resume one system (cached predictions)
    inkground eval --systems A B ... [--dataset DIR]       predict and score systems (section 03)
    inkground run 02 -p NAME VALUE [--through 04] [--name N] rerun sections into data/reruns/<name>/ (not the book's)
    inkground validate DIR                                  check a dataset folder (schema and files)
    inkground check [--systems NAME ...] [--live]           is each system ready to run here?
    inkground book                                          datasets -> sections -> the HTML book
    inkground lab [--port P]                                the section notebooks in JupyterLab (working copies)
    inkground paper-scale --out DIR [--scheduler ADDRESS]   2,984 pages end to end (resumable)
    inkground rate --run DIR --ratings FILE [...]          people rate a run's pages in a browser (section 02)
    inkground tracer train --unipen-dir PATH --out DIR      train inkground's learned derenderer (resumable)
    inkground tracer eval --unipen-dir PATH --out DIR       the tracer and the skeleton against writers it never saw
    inkground style-backbone train --unipen-dir PATH --out DIR   train the writer-style backbone (resumable)
    inkground style-backbone eval --unipen-dir PATH          the backbone against a classifier from random weights
    inkground restore FILE|URL|--published                  the book's runs from its results archive (sha256-checked)

Errors are printed as one clear line (what and where) with exit status 2 (a full disk and a folder that is a
link to nothing too); nothing half-written is left. Ctrl-C and SIGTERM stop the command the same way, with a
one-line summary (exit 130 / 143); finished work is kept and a rerun resumes.
"""

from __future__ import annotations

import argparse
import errno
import os
import signal
import sys
import threading
from pathlib import Path

from inkground_lib.cli import data, evaluate, lab, pseudo, rate, restore, scale, sections, style_backbone, tracer
from inkground_lib.core.files import PathError
from inkground_lib.core.folders import dangling_link
from inkground_lib.publish.notebook_runner import RunnerError

COMMANDS = (sections.add_book_parser, sections.add_run_parser, lab.add_lab_parser, data.add_synth_parser, data.add_recorded_parser,
            data.add_validate_parser, pseudo.add_pseudo_parser, rate.add_rate_parser, evaluate.add_predict_parser,
            evaluate.add_eval_parser, evaluate.add_check_parser, tracer.add_tracer_parser,
            style_backbone.add_style_backbone_parser, scale.add_paper_scale_parser, restore.add_restore_parser)
"""Each command's parser, registered by its family's module, in the order ``inkground --help`` lists them."""


DESCRIPTION = """\
inkground: the reproducible companion to the inkGround paper (datasets, pseudo-labels, model evaluation,
trade-offs, and the HTML book that shows them).

  make book                           build everything and the book (_build/html/index.html)
  inkground run 02 -p ocr_threshold 0.9
                                      rerun a section with other parameters, into its own folder
                                      data/reruns/<name>/ (the book's runs are not touched)
  inkground COMMAND --help            what a command does, its options and their defaults"""

EPILOG = """\
Errors are one line (what and where) with exit status 2; inputs are checked before any work starts and
nothing half-written is left. Ctrl-C and SIGTERM stop a command with a one-line summary (exit 130 / 143);
finished work is kept and the same command resumes. README.md has the walk-through."""


def build_parser() -> argparse.ArgumentParser:
    from inkground_lib import __version__
    from inkground_lib.cli.options import Formatter

    p = argparse.ArgumentParser(prog="inkground", description=DESCRIPTION, epilog=EPILOG, formatter_class=Formatter)
    p.add_argument("--version", action="version", version=f"inkground {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND", title="commands")
    for add_parser in COMMANDS:
        add_parser(sub)
    return p


OUTPUT_FOLDER_OPTIONS = ("out", "run")
"""Options naming a folder a command writes into."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (a kill, a shutdown, a job scheduler): stopped as for Ctrl-C, exit 143."""


_TERMINATED = threading.Event()  # set by the SIGTERM handler: the KeyboardInterrupt that follows came from it


def _on_sigterm(signum, frame):
    _TERMINATED.set()
    raise Terminated()


def _folder_problem(value: str) -> str | None:
    """Why a folder to write into cannot be used, before any work: a file, or a link to nothing (itself or a
    folder it lies in)."""
    p = Path(value)
    link = dangling_link(p)
    if link is not None:
        where = "" if link == p else f" (the folder {link} it lies in)"
        return (f"is a symbolic link to {os.readlink(link)}, which does not exist{where}; create that folder, remove "
                f"the link (rm {link}) or give another")
    if p.exists() and not p.is_dir():
        return "exists and is not a folder"
    return None


def _os_error(e: OSError) -> str:
    """One line for an operating-system error (no traceback): what failed, on which file, what to do; a file
    under a symbolic link to nothing (a "File exists" from making its folder) names the link."""
    where = f" ({e.filename})" if getattr(e, "filename", None) else ""
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        return (f"no space left on the device{where}; free some space and rerun: finished work is kept (every file "
                f"is written whole or not at all, append-only logs lose at most their last line)")
    link = dangling_link(e.filename) if isinstance(getattr(e, "filename", None), (str, os.PathLike)) else None
    if link is not None:
        return (f"{link} is a symbolic link to {os.readlink(link)}, which does not exist, so nothing can be written "
                f"under it ({e.strerror or e}{where}); create that folder, or remove the link (rm {link})")
    return f"{e.strerror or e}{where}"


_TRACEBACK_START = "\n" + "-" * 75 + "\n"  # how papermill's PapermillExecutionError begins (papermill 2.7)


def notebook_error_line(message: str, full: bool = False) -> str:
    r"""A failed section's error as one line: the runner's first line ("section 02 failed; the executed copy is
    kept at ...") and the exception's own last line ("FolderError: ... another inkground command is writing this
    folder ..."), without the notebook's traceback in between (``full``: the message as it is).

    >>> notebook_error_line("section 02 failed; the executed copy is kept at x.ipynb:\n" + "-" * 75 +
    ...                     '\nException encountered at "In [3]":\n  File a.py\nFolderError: data/x: locked\n')
    'section 02 failed; the executed copy is kept at x.ipynb: FolderError: data/x: locked'
    """
    if full or _TRACEBACK_START not in message:
        return message
    head, _, tail = message.partition(_TRACEBACK_START)
    last = next((line.strip() for line in reversed(tail.splitlines()) if line.strip()), "")
    return f"{head.rstrip().rstrip(':')}: {last}" if last else head.rstrip()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _TERMINATED.clear()
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if threading.current_thread() is threading.main_thread() \
        else None
    try:
        return _main(args, argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _main(args, argv) -> int:
    # numpy (under these errors' modules): imported once the arguments are parsed, not for `inkground --help`
    from inkground_lib.core.dataset import DatasetError
    from inkground_lib.core.ink import InkError
    from inkground_lib.evaluation.systems.base import SystemConfigError, SystemUnavailable

    for opt in OUTPUT_FOLDER_OPTIONS:  # a folder to write into that is a file or a dangling link: before any work
        value = getattr(args, opt, None)
        problem = _folder_problem(value) if isinstance(value, str) else None
        if problem:
            print(f"inkground {args.cmd}: error: --{opt.replace('_', '-')} {value}: {problem}", file=sys.stderr)
            return 2
    if args.cmd == "run" and isinstance(getattr(args, "name", None), str):  # the rerun's folder, likewise
        from inkground_lib.core.layout import RERUNS, ROOT

        problem = _folder_problem(str(ROOT / RERUNS / args.name))
        if problem:
            print(f"inkground run: error: --name {args.name}: {RERUNS}/{args.name} {problem}", file=sys.stderr)
            return 2
    try:
        code = args.func(args)
    except RunnerError as e:  # a section that failed: its error's last line, not the notebook's traceback
        print(f"inkground {args.cmd}: error: {notebook_error_line(str(e), getattr(args, 'verbose', False))}",
              file=sys.stderr)
        return 2
    except (DatasetError, PathError, InkError, SystemConfigError, SystemUnavailable,
            FileNotFoundError, ValueError) as e:
        print(f"inkground {args.cmd}: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # a full disk, a permission, a folder that vanished: one line, never a traceback
        print(f"inkground {args.cmd}: error: {_os_error(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:  # Ctrl-C, or SIGTERM (Terminated): the same summary, finished work kept
        summary = getattr(e, "summary", None) or "interrupted; finished work is kept, rerun to resume"
        terminated = isinstance(e, Terminated) or isinstance(e.__context__, Terminated) \
            or _TERMINATED.is_set()
        code = 143 if terminated else 130
        print(f"inkground {args.cmd}: {'terminated (SIGTERM): ' if terminated else ''}{summary}", file=sys.stderr)
        if argv is None:  # the program itself: do not wait at exit for requests still in flight
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        return code
    return int(code or 0)

