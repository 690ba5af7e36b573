"""``inkground run`` and ``inkground book``: section notebooks executed, the book built.

Where ``run`` writes follows :mod:`inkground_lib.publish.rerun_plan`: the defaults go to the book's runs, changed
parameters to ``data/reruns/<name>/`` (``--into-book`` to write them into the book's runs). Everything a run
needs is checked before its first notebook starts and before any folder is made, by the check each notebook
makes in its first cell too (:mod:`inkground_lib.publish.run_checks`). A section run into the book's runs (the
defaults, or ``--into-book``) is run as ``make book`` runs it
(:func:`~inkground_lib.publish.make_book.run_book_section`), so the next ``make book`` finds it current."""

from __future__ import annotations

import json
import sys

from inkground_lib.cli.options import describe
from inkground_lib.core import layout
from inkground_lib.core.parameter_values import changed_parameters
from inkground_lib.core.rerun_folders import rerun_name, run_folder_parameters
from inkground_lib.publish.parameters_cell import notebook_parameters, section_notebooks
from inkground_lib.publish.rerun_plan import plan_run
from inkground_lib.publish.rerun_record import check_name_free, record_run
from inkground_lib.publish.run_checks import check_locks, check_section, check_values


def _chain(a, run_sections) -> list:
    """The sections this command runs: SECTION, or SECTION through --through."""
    first = run_sections.find_section(a.section)
    if a.through is None:
        return [first]
    last = run_sections.find_section(a.through)
    chain = [s for s in run_sections.sections() if first.key <= s.key <= last.key]
    if not chain:
        raise run_sections.RunnerError(f"--through {a.through}: section {last.key} comes before {first.key}")
    return chain


def _route(given: dict, chain, defaults: dict) -> dict[str, dict]:
    """{section: its parameters}: each -p goes to every section of the chain that has a parameter of that name."""
    from inkground_lib.publish.notebook_runner import RunnerError

    unknown = [n for n in given if not any(n in defaults[s.key] for s in chain)]
    if unknown:
        if len(chain) == 1:  # the runner's message: the section's parameters and their defaults
            return {chain[0].key: dict(given)}
        valid = sorted({n for s in chain for n in defaults[s.key]})
        raise RunnerError(f"sections {chain[0].key}-{chain[-1].key} have no parameter "
                          f"{', '.join(map(repr, unknown))}; valid parameters: {', '.join(valid)}")
    return {s.key: {n: v for n, v in given.items() if n in defaults[s.key]} for s in chain}


def _run(a) -> None:
    # papermill and the runner (and numpy under the checks): imported when the command runs, not for --help
    from inkground_lib.publish.parameters_cell import section_defaults
    from inkground_lib.publish.rerun_record import now_utc
    from inkground_lib.publish import make_book
    from inkground_lib.publish import notebook_runner as nr
    from inkground_lib.publish.stages import Timer

    given = {}
    for name, value in a.param or []:
        given[name] = nr.parse_value(value)
    chain = _chain(a, nr)
    defaults = {s.key: section_defaults(s.key) for s in chain}
    routed = _route(given, chain, defaults)
    changed = {}
    for s in chain:
        check_values(s.key, routed[s.key])  # unknown names, types, ranges: before anything else
        changed.update(changed_parameters(routed[s.key], defaults[s.key]))
    name = a.name  # one rerun for the whole chain: named from its first section and every changed parameter
    if name is None and changed and not a.into_book and len(chain) > 1:
        name = rerun_name(chain[0].key, changed)
    plans, made, done = [], {}, []
    for s in chain:  # every check before the first notebook starts and before any folder is made
        plan = plan_run(s.key, routed[s.key], name=name, into_book=a.into_book, done=tuple(done),
                        defaults=defaults[s.key])
        check_section(s.key, plan.params, defaults[s.key], made_here=made)  # the check each notebook makes
        check_locks(s.key, plan.writes)
        check_name_free(plan)
        made.update({w: s.key for w in plan.writes})
        plans.append(plan)
        done.append(s.key)
    book = None  # the book's datasets and their hashes, once, for the sections run into the book's runs
    for s, plan in zip(chain, plans):
        if plan.name is not None:
            print(f"rerun {plan.name}: section {s.key} writes into {layout.RERUNS}/{plan.name}/ (the book's runs are "
                  f"not touched)" + (f"; reads the book's {', '.join(k for k, v in plan.upstream.items() if v == 'book')}"
                                      if 'book' in plan.upstream.values() else ""), file=sys.stderr, flush=True)
        elif plan.changed:
            print(f"section {s.key}: --into-book: the book's runs are rewritten with "
                  f"{json.dumps(plan.changed)}; `inkground book --defaults` restores the defaults", file=sys.stderr,
                  flush=True)
        started = now_utc()
        # the section's cells and progress bars on standard error while it runs, then its wall and CPU time
        with Timer()(f"section {s.key}"):
            if plan.name is None:  # the book's run, as `make book` runs it: the same fingerprint
                if book is None:
                    datasets = make_book.present_datasets()
                    book = (datasets, make_book.datasets_info(datasets))
                path, executed = make_book.run_book_section(s, plan.params, *book, force=a.force,
                                                            log_output=a.verbose, source="inkground run")
            else:
                path, executed = nr.run_section(s.key, plan.params, force=a.force, log_output=a.verbose,
                                                inputs=_upstream_outputs(plan, defaults[s.key]),
                                                out_dir=plan.notebook.parent, source="inkground run")
        record_run(plan, executed, source="inkground run", notebook=path, started=started)
        files = nr.input_file_hashes(plan.params)
        read = "; ".join(f"{k.removesuffix('_sha256')} {plan.params[k.removesuffix('_sha256')]} (sha256 {v[:12]})"
                         for k, v in files.items())
        if executed:
            print(f"executed: {path}" + (f" (input files: {read})" if read else ""))
        else:
            print(f"unchanged, not re-executed: {path}" + (f" (input files unchanged: {read})" if read else "") +
                  "; --force executes it anyway")
        if plan.writes:
            print(f"run folders: {', '.join(plan.writes)}")
    if plans[-1].name is not None:
        print(f"the rerun's record: {layout.RERUNS}/{plans[-1].name}/rerun.json; the book still shows its default "
              f"runs")
    else:
        print("rebuild the book with `make book` to see it (the sections run here are not executed again).")


def _upstream_outputs(plan, defaults: dict) -> dict:
    """What the run folders a rerun reads hold (its own earlier sections' or the book's): a section re-executes
    when they hold other results (:func:`~inkground_lib.publish.notebook_runner.run_outputs_hash`)."""
    from inkground_lib.core.repo_paths import repo_path
    from inkground_lib.publish.notebook_runner import run_outputs_hash

    out = {}
    for param, whose in plan.upstream.items():
        if whose in ("book", "rerun"):
            folders = plan.params.get(param, defaults[param])
            folders = folders if isinstance(folders, (list, tuple)) else [folders]
            out[f"{whose}_{param}"] = run_outputs_hash([repo_path(f) for f in folders])
    return out


def _book(a) -> None:
    # numpy and scipy (the default datasets): imported when the command runs, not for `inkground --help`
    from inkground_lib.publish.make_book import make_book

    index = make_book(force=a.force, defaults=a.defaults)
    print(f"The book is at {index}")


def sections_help(width: int = 100) -> str:
    """``inkground run --help``'s list of the sections, their parameters with defaults and help (read from the
    notebooks' parameters cells), and where each writes."""
    import textwrap

    lines = ["sections, their parameters (default) and where they write:"]
    try:
        notebooks = section_notebooks()
        params = {k: notebook_parameters(p) for k, p in notebooks.items()}
    except (OSError, ValueError) as e:
        return f"(the section notebooks cannot be read here: {e})"
    for key, nb in notebooks.items():
        folders = run_folder_parameters({p.name: p.default for p in params[key]})
        own = [p.name for p in params[key] if folders.get(p.name) == key]
        lines.append("")
        head = (f"  {key}  {nb.stem[3:]}: notebooks/{nb.name}; the book's run writes book/sections/{nb.name}"
                + (f" and the run folder{'s' if len(own) > 1 else ''} {', '.join(own)}" if own else ""))
        lines += textwrap.wrap(head, width, subsequent_indent=" " * 6)
        for p in params[key]:
            first = f"      {p.name} = {' '.join(p.default_text.split())}"
            if len(first) <= 44 and p.comment:
                lines += textwrap.wrap(f"{first:<46}{p.comment}", width, subsequent_indent=" " * 46,
                                       break_on_hyphens=False)
                continue
            lines += textwrap.wrap(first, width, subsequent_indent=" " * 10, break_on_hyphens=False)
            if p.comment:
                lines += textwrap.wrap(p.comment, width, initial_indent=" " * 46, subsequent_indent=" " * 46,
                                       break_on_hyphens=False)
    lines += ["", "where a run writes (one rule for inkground run, papermill and JupyterLab; publish/rerun_plan.py):",
              "  default parameters    the book's runs: book/sections/ and the run folders above (as `make book`)",
              f"  changed parameters    its own folder {layout.RERUNS}/<name>/ (<name>: --name, else made from the "
              "section", "                        and the changed parameters, e.g. 02_ocr_threshold-0.9): its run "
              "folders, its",
              "                        executed notebooks (sections/) and rerun.json, which records the parameters",
              "  --into-book           changed parameters into the book's runs (the book then shows them)",
              "", "examples:",
              "  inkground run 02 -p ocr_threshold 0.9                 # -> data/reruns/02_ocr_threshold-0.9/",
              "  inkground run 02 -p ocr_threshold 0.9 --through 04    # and sections 03, 04 on that rerun's output",
              "  inkground run 03 -p systems '[\"skeleton\", \"font\"]' -p n_boot 200",
              "", "the same from papermill (-p NAME VALUE, a list with -y 'NAME: [...]') or JupyterLab (make",
              "lab): each notebook checks its values first, as run does, and a rerun records itself in rerun.json",
              "", "how long: with the book's data, section 02 takes about 7 minutes (409 s) and 03 about 17",
              "(1,020 s) on 2 cores (measured 2026-12-02, README.md); 01 and 04 under a minute; a run whose inputs",
              "did not change is reused in seconds"]
    return "\n".join(lines)


def add_run_parser(sub) -> None:
    u = sub.add_parser("run", help="execute section notebooks with papermill, with new parameters")
    describe(u, "Execute one section notebook (or several: --through) with papermill. With its default parameters "
                "a run is the book's own (book/sections/ and the run folders below, as `make book`); with changed "
                f"parameters it writes into its own folder {layout.RERUNS}/<name>/ and never into the book's runs. "
                "Parameter names, types, ranges, system names, inputs and locks are checked before anything runs; "
                "an unchanged run is reused, not executed again.")
    u.epilog = sections_help()
    u.add_argument("section", help="the section: 01, 02, 03, 04 or the notebook's name")
    u.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"),
                   help="set a parameter of the notebook's parameters cell (repeatable); VALUE is read as YAML: "
                        "0.9, true, null, '[2, 3]', '[\"skeleton\"]'; a text that looks like a number needs quotes "
                        "inside: '\"007\"'. Default: the notebook's defaults (listed below)")
    u.add_argument("--through", metavar="SECTION",
                   help="run SECTION and every later section up to this one as one rerun: each reads the outputs of "
                        "the one before (e.g. run 02 --through 04); each -p goes to every section that has it")
    where = u.add_mutually_exclusive_group()
    where.add_argument("--name", help=f"the rerun's folder name under {layout.RERUNS}/ (default: made from the "
                                      "section and the changed parameters)")
    where.add_argument("--into-book", dest="into_book", action="store_true",
                       help="write into the book's runs even with changed parameters (the book then shows them "
                            "until `inkground book --defaults`)")
    u.add_argument("--force", action="store_true", help="execute even if nothing changed")
    u.add_argument("--verbose", action="store_true", help="stream the notebook's output (cells and logs)")
    u.set_defaults(func=_run)


def add_book_parser(sub) -> None:
    b = sub.add_parser("book", help="build datasets, execute the sections, build the HTML book")
    describe(b, "The whole companion: the default datasets (built or reused), each section notebook executed "
                "(or reused when nothing it depends on changed), the generated pages, and the HTML book in "
                "_build/html/ (about 27 minutes on 2 cores the first time, under 30 s when nothing changed; "
                "README.md has the measurements). `make book` runs this. Reruns with changed parameters "
                "(data/reruns/) are not shown.")
    b.add_argument("--force", action="store_true", help="re-execute every section")
    b.add_argument("--defaults", action="store_true",
                   help="run every section with its default parameters (forget earlier `inkground run --into-book` "
                        "parameters)")
    b.set_defaults(func=_book)
