"""``inkground run`` and ``inkground book``: section notebooks executed, the book built."""

from __future__ import annotations

from inkground_lib.publish.notebook_runner import find_section, input_file_hashes, parse_value, run_section
from inkground_lib.publish.stages import Timer


def _run(a) -> None:
    params = {}
    for name, value in a.param or []:
        params[name] = parse_value(value)
    # the section's cells and progress bars on standard error while it runs, then its wall and CPU time
    with Timer()(f"section {find_section(a.section).key}"):
        path, executed = run_section(a.section, params, force=a.force, log_output=a.verbose)
    files = input_file_hashes(params)
    read = "; ".join(f"{k.removesuffix('_sha256')} {params[k.removesuffix('_sha256')]} (sha256 {v[:12]})"
                     for k, v in files.items())
    if executed:
        print(f"executed: {path}" + (f" (input files: {read})" if read else ""))
    else:
        print(f"unchanged, not re-executed: {path}" + (f" (input files unchanged: {read})" if read else "") +
              "; --force executes it anyway")
    print("rebuild the book with `make book` to see it.")


def _book(a) -> None:
    # numpy and scipy (the default datasets): imported when the command runs, not for `inkground --help`
    from inkground_lib.publish.make_book import make_book

    index = make_book(force=a.force, defaults=a.defaults)
    print(f"The book is at {index}")


def add_run_parser(sub) -> None:
    u = sub.add_parser("run", help="execute one section notebook with papermill, with new parameters")
    u.add_argument("section", help="01, 02, ... or the notebook name")
    u.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"))
    u.add_argument("--force", action="store_true", help="execute even if nothing changed")
    u.add_argument("--verbose", action="store_true", help="stream the notebook's output")
    u.set_defaults(func=_run)


def add_book_parser(sub) -> None:
    b = sub.add_parser("book", help="build datasets, execute the sections, build the HTML book")
    b.add_argument("--force", action="store_true", help="re-execute every section")
    b.add_argument("--defaults", action="store_true",
                   help="run every section with its default parameters (forget earlier `inkground run` parameters)")
    b.set_defaults(func=_book)
