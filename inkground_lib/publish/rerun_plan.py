"""How a section's run is planned: which folders it reads and writes, for ``inkground run``, ``make book``,
papermill and JupyterLab alike (the folders themselves: :mod:`inkground_lib.core.rerun_folders`).

The book's runs are the sections run with their notebooks' default parameters (the parameters cells,
:mod:`inkground_lib.publish.parameters_cell`); a run with any other value is a rerun, written into its own folder
``data/reruns/<name>/``. A run-folder parameter is moved under the rerun's folder when the section writes it (the
``NN_`` folder is its own) or when an earlier section of the *same* rerun wrote it (``inkground run 02 --through
04`` carries the rerun of 02 on through 03 and 04). Otherwise the rerun reads the book's folder and its record
says so (``upstream``: ``"book"``; :mod:`inkground_lib.publish.rerun_record`). A run-folder parameter the user
sets is kept as set.

``inkground run --into-book`` is the one way to write changed parameters into the book's runs; a rerun whose run
folder, however spelled, would be one of the book's (:func:`book_run_folders`) is refused.

A notebook run by papermill or JupyterLab applies the same rule to its own values, in the cell after its
parameters cell (:func:`inkground_lib.publish.notebook_start.start_run`, which checks the values first and
records the rerun), and opens its paths from the repository root wherever its kernel starts
(:meth:`RunPlan.paths`), under names of its own, so that running a cell again never takes a resolved path for
a parameter::

    plan = start_run("02", globals())   # the book's folders with defaults, else data/reruns/<name>/...
    candidates_dir, run_folder = plan.paths("candidates", "run_dir")

When ``inkground run`` or ``make book`` executes the notebook, the command has planned the run already (its
parameters carry the moved folders, or ``--into-book`` keeps the book's): it says so in the kernel's environment
(:data:`PLANNED_ENV`, :func:`planned_by_command`) and the notebook takes its parameters as given, never moving a
folder twice.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from inkground_lib.core import layout
from inkground_lib.core.parameter_values import canonical, changed_parameters
from inkground_lib.core.repo_paths import repo_path
from inkground_lib.core.rerun_folders import (RerunError, check_name, rebase, rerun_folder, rerun_name,
                                              run_folder_parameters)
from inkground_lib.publish.parameters_cell import section_defaults, section_notebooks
from inkground_lib.publish.rerun_record import read_rerun

PLANNED_ENV = "INKGROUND_RUN_PLANNED"
"""Set in a kernel's environment to the command that planned its run (:data:`COMMANDS`, :func:`planned_by_command`):
:func:`notebook_plan` then takes the notebook's parameters as they are."""

COMMANDS = ("inkground run", "make book")
"""The commands that plan a run before its notebook starts (:data:`PLANNED_ENV`'s values)."""


@dataclass(frozen=True)
class RunPlan:
    """Where one section's run reads and writes (see the module doc).

    ``name`` is None for the book's own run. ``params`` are what the notebook executes with (the given ones and
    the moved run folders); ``changed`` the given parameters that differ from the defaults; ``upstream`` says, for
    each run-folder parameter written by an earlier section, whose folder it reads (``"rerun"``, ``"book"`` or
    ``"given"``); ``writes`` the run folders this section writes (relative to the repository root, as given);
    ``notebook`` the executed notebook's path (absolute)."""

    section: str
    name: str | None
    params: dict
    changed: dict
    upstream: dict = field(default_factory=dict)
    writes: tuple = ()
    notebook: Path | None = None

    @property
    def folder(self) -> Path | None:
        """The rerun's folder (absolute), None for the book's run."""
        return None if self.name is None else rerun_folder(self.name)

    @property
    def into_book(self) -> bool:
        return self.name is None

    def paths(self, *names: str):
        """The parameters ``names`` (their defaults where not set) as absolute paths (:func:`~inkground_lib.core.repo_paths.repo_path`: a
        relative one from the repository root, whatever the working directory), as ``str``; a list of paths item
        by item; ``None`` and ``""`` (a skipped input) as they are. One name gives one value, several a tuple.

        >>> plan_run("04", {}).paths("eval_runs")[0] == str(layout.ROOT / "data/runs/synth/03_evaluation")
        True
        >>> dataset, recorded = plan_run("01", {"recorded": ""}).paths("dataset", "recorded")
        >>> dataset == str(layout.ROOT / "data/datasets/synth"), recorded
        (True, '')
        """
        missing = [n for n in names if n not in self.params]
        values = {**(section_defaults(self.section) if missing else {}), **self.params}  # unset: the default
        out = tuple(_absolute(values[n]) for n in names)
        return out[0] if len(out) == 1 else out


def plan_run(section: str, params: dict, *, name: str | None = None, into_book: bool = False,
             done: tuple = (), defaults: dict | None = None) -> RunPlan:
    """The plan of a run of ``section`` with ``params`` (any subset of its parameters; values equal to the
    defaults count as not given). ``name``: the rerun's name (default: :func:`rerun_name`); ``into_book``: write
    into the book's runs whatever the parameters; ``done``: the earlier sections this rerun has run already
    (else read from its record). ``defaults``: the section's defaults (default: its notebook's parameters cell).

    >>> p = plan_run("02", {"ocr_threshold": 0.9})
    >>> p.name, p.params["run_dir"], p.writes
    ('02_ocr_threshold-0.9', 'data/reruns/02_ocr_threshold-0.9/synth/02_pseudo_labels', ('data/reruns/02_ocr_threshold-0.9/synth/02_pseudo_labels',))
    >>> p = plan_run("03", {"n_boot": 200}, name="small", done=("02",))
    >>> p.params["benchmark"], p.upstream
    ('data/reruns/small/synth/02_pseudo_labels/benchmark', {'benchmark': 'rerun'})
    >>> plan_run("03", {"n_boot": 200}).upstream
    {'benchmark': 'book'}
    >>> plan_run("02", {"ocr_threshold": 0.85}).name is None   # the defaults: the book's own run
    True
    """
    defaults = section_defaults(section) if defaults is None else defaults
    nb_name = section_notebooks()[section].stem if section in section_notebooks() else section
    folders = run_folder_parameters(defaults)
    changed = changed_parameters(params, defaults)
    own = [k for k, w in folders.items() if w == section]
    if into_book or (not changed and name is None):
        writes = tuple(_flat(params.get(k, defaults[k]) for k in own))
        return RunPlan(section, None, dict(params), changed, {}, writes, layout.SECTIONS_DIR / f"{nb_name}.ipynb")
    name = check_name(name) if name is not None else rerun_name(section, changed)
    record = read_rerun(name)
    done = set(done) | {k for k, s in record.get("sections", {}).items() if s.get("finished")}
    out = dict(params)
    upstream = {}
    for k, writer in folders.items():
        if k in changed:
            if writer != section:
                upstream[k] = "given"
            continue
        if writer == section:
            out[k] = rebase(defaults[k], name)
        elif writer < section:
            upstream[k] = "rerun" if writer in done else "book"
            if writer in done:
                out[k] = rebase(defaults[k], name)
    writes = tuple(_flat(out.get(k, defaults[k]) for k in own))
    for w in writes:
        book = _book_folder(w)
        if book is not None:
            raise RerunError(f"section {section}: a run with changed parameters ({json.dumps(canonical(changed))}) "
                             f"would write into {w}, which is the book's run {book}; a rerun writes into "
                             f"{layout.RERUNS}/<name>/ or a folder of yours outside the book's runs (leave the run "
                             f"folder unset), and `inkground run --into-book` writes the book's runs")
    notebook = rerun_folder(name) / "sections" / f"{nb_name}.ipynb"
    return RunPlan(section, name, out, changed, upstream, writes, notebook)


def book_run_folders() -> list[str]:
    """The book's run folders: the defaults of every section's run-folder parameters (repository-relative)."""
    out = []
    for key in section_notebooks():
        defaults = section_defaults(key)
        for k, writer in run_folder_parameters(defaults).items():
            if writer == key:
                out += [f for f in _flat([defaults[k]]) if f not in out]
    return out


def _book_folder(path: str) -> str | None:
    """The book's run folder that ``path`` is, lies in or holds (None: none of them)."""
    p = Path(os.path.normpath(repo_path(path)))
    for f in book_run_folders():
        b = Path(os.path.normpath(repo_path(f)))
        if p == b or b in p.parents or p in b.parents:
            return f
    return None


def notebook_plan(section: str, namespace: dict) -> RunPlan:
    """The plan of a notebook's run, from the values its parameters have now (``namespace``: the notebook's
    ``globals()`` after its parameters cell, and papermill's injected cell) against its parameters cell's
    defaults: the same folders ``inkground run`` would use. The plan depends on those values alone: a notebook
    keeps the resolved paths under names of its own (``plan.paths(...)``), never in its parameters, so running
    any cell again plans the same run. Under a command that planned the run (:func:`planned_by`), the
    parameters as injected."""
    defaults = section_defaults(section)
    params = {k: namespace[k] for k in defaults if k in namespace}
    if planned_by():  # inkground run / make book: the folders are decided
        return _as_given(section, params, defaults)
    return plan_run(section, params, defaults=defaults)


def planned_by() -> str | None:
    """The command that planned this process's run (:data:`PLANNED_ENV`), None in a kernel started otherwise."""
    value = os.environ.get(PLANNED_ENV)
    return (value if value in COMMANDS else COMMANDS[0]) if value else None


@contextmanager
def planned_by_command(command: str = COMMANDS[0]):
    """While it is open, kernels started by this process find :data:`PLANNED_ENV` set to ``command``: the
    command executing a notebook has planned where it writes (``inkground run``, ``make book``), and
    :func:`notebook_plan` keeps the parameters it injects (re-rooted or ``--into-book``) as they are."""
    before = os.environ.get(PLANNED_ENV)
    os.environ[PLANNED_ENV] = command
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(PLANNED_ENV, None)
        else:
            os.environ[PLANNED_ENV] = before


def _as_given(section: str, params: dict, defaults: dict) -> RunPlan:
    """The plan of a run its command planned: its parameters as given; its rerun's name read from the folders
    it writes (None when they are the book's)."""
    own = [k for k, w in run_folder_parameters(defaults).items() if w == section]
    writes = tuple(_flat(params.get(k, defaults[k]) for k in own))
    prefix = f"{layout.RERUNS}/"
    names = {w[len(prefix):].split("/", 1)[0] for w in writes if w.startswith(prefix)}
    return RunPlan(section, names.pop() if len(names) == 1 else None, dict(params),
                   changed_parameters(params, defaults), {}, writes, None)


def _absolute(value):
    if isinstance(value, (list, tuple)):
        return [_absolute(v) for v in value]
    if value is None or value == "" or not isinstance(value, (str, os.PathLike)):
        return value
    return str(repo_path(value))


def _flat(values) -> list[str]:
    out = []
    for v in values:
        out += list(v) if isinstance(v, (list, tuple)) else [v]
    return [v for v in out if isinstance(v, str) and v]
