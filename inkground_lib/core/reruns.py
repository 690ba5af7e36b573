"""Where a section run writes: the one rule for ``inkground run``, papermill and JupyterLab.

**The book's runs** are the sections run with their notebooks' default parameters: the executed notebooks in
``book/sections/`` and the run folders the parameters cells name (``data/runs/synth/02_pseudo_labels``,
``data/runs/synth/03_evaluation``, ``data/runs/recorded/03_evaluation``). ``make book`` writes and shows them.

**A rerun** is a run with any parameter other than its default. It never writes into the book's runs; it
writes into its own folder ``data/reruns/<name>/``:

* ``<name>`` is given by the user (``inkground run --name``) or made from the changed parameters, the section
  first: ``02_ocr_threshold-0.9``; a long name, or a value with characters a folder name should not hold (a
  path), is shortened and ends in 8 hex digits of the parameters' digest
  (``02_ratings-people-ratings.csv-04b376a7``). The same parameters give the same name, so the same rerun
  resumes (and is reused when nothing changed);
* a **run-folder parameter** (a default under ``data/runs/``: ``run_dir``, ``bench_run``, ``eval_runs``...) is
  moved under the rerun's folder, keeping its path below ``data/runs/``
  (``data/runs/synth/02_pseudo_labels`` -> ``data/reruns/<name>/synth/02_pseudo_labels``) when the section writes
  it (the ``NN_`` folder is its own) or when an earlier section of the *same* rerun wrote it (``inkground run 02
  --through 04`` carries the rerun of 02 on through 03 and 04). Otherwise the rerun reads the book's folder and
  its record says so (``upstream``: ``"book"``). A run-folder parameter the user sets is kept as set;
* the executed notebook goes to ``data/reruns/<name>/sections/<NN_name>.ipynb``;
* ``data/reruns/<name>/rerun.json`` (:data:`RERUN_RECORD`) records, per section, every parameter it ran with,
  the changed ones and their defaults, how it was started (``inkground run``, papermill, JupyterLab), what each
  upstream folder was (``rerun``, ``book`` or ``given``), the folders written, the notebook and when it started
  and finished: what a page needs to label the run it shows, and what :func:`read_rerun` returns. It is written
  atomically by one writer at a time; a record that cannot be read is an error naming it, never "no record".

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

import datetime as _dt
import hashlib
import json
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from inkground_lib.core import layout
from inkground_lib.core.files import atomic_write_json
from inkground_lib.core.notebook_params import section_defaults, section_notebooks
from inkground_lib.core.repo_paths import portable_path, repo_path

PLANNED_ENV = "INKGROUND_RUN_PLANNED"
"""Set in a kernel's environment to the command that planned its run (:data:`COMMANDS`, :func:`planned_by_command`):
:func:`notebook_plan` then takes the notebook's parameters as they are."""

COMMANDS = ("inkground run", "make book")
"""The commands that plan a run before its notebook starts (:data:`PLANNED_ENV`'s values)."""

RERUN_RECORD = "rerun.json"
"""The record in each rerun folder (see the module doc)."""

RERUN_LABEL = "rerunning-a-section"
"""The label of the book's instructions for rerunning a section (book/intro.md), which the pages link."""

RUNS_PREFIX = "data/runs/"
"""Run-folder parameters are those whose default lies under this folder (relative to the repository root)."""

NAME_MAX = 48
"""Longest readable part of a rerun's name; a longer one is cut and ends in the parameters' digest."""

_NAME_OK = re.compile(r"[A-Za-z0-9][A-Za-z0-9._,+-]*")
_SECTION_DIR = re.compile(r"^(\d\d)_")


class RerunError(ValueError):
    """A rerun that cannot be planned as asked (a bad name, a name already used with other parameters)."""


def canonical(value):
    """Values compared as JSON would store them (a tuple equals its list)."""
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def _same(value, default) -> bool:
    """Whether a parameter's value is its default: as JSON would store them (a tuple equals its list), and a
    path under the repository (a default under ``data/``) in any spelling of the same folder (relative or
    absolute, ``./``): a resolved path is never taken for a new value."""
    if canonical(value) == canonical(default):
        return True
    if isinstance(default, (list, tuple)) and isinstance(value, (list, tuple)):
        return len(value) == len(default) and all(_same(v, d) for v, d in zip(value, default))
    if isinstance(default, str) and default.startswith("data/") and isinstance(value, (str, os.PathLike)) \
            and str(value):
        return os.path.normpath(repo_path(value)) == os.path.normpath(repo_path(default))
    return False


def changed_parameters(params: dict, defaults: dict) -> dict:
    """The parameters of ``params`` whose value is not the notebook's default (unknown names count as changed;
    a default folder spelled otherwise does not).

    >>> changed_parameters({"ocr_threshold": 0.85, "seed": 1}, {"ocr_threshold": 0.85, "seed": 0})
    {'seed': 1}
    >>> changed_parameters({"run_dir": str(layout.ROOT / "data/runs/x")}, {"run_dir": "data/runs/x"})
    {}
    """
    return {k: v for k, v in params.items() if k not in defaults or not _same(v, defaults[k])}


def _slug(value) -> tuple[str, bool]:
    """A value as a folder-name fragment, and whether it is exact (a number, a bool, a plain word, a list of them)."""
    if isinstance(value, (list, tuple)):
        parts = [_slug(v) for v in value]
        return ",".join(p for p, _ in parts), all(ok for _, ok in parts)
    text = json.dumps(value) if not isinstance(value, str) else value
    slug = re.sub(r"[^A-Za-z0-9._+-]+", "-", text).strip("-.") or "x"
    return slug, slug == text


def rerun_name(section: str, changed: dict) -> str:
    """The folder name of a rerun of ``section`` with ``changed`` parameters (see the module doc).

    >>> rerun_name("02", {"ocr_threshold": 0.9})
    '02_ocr_threshold-0.9'
    >>> rerun_name("03", {"systems": ["skeleton", "font"], "n_boot": 200})
    '03_n_boot-200_systems-skeleton,font'
    >>> rerun_name("02", {"ratings": "people/ratings.csv"})
    '02_ratings-people-ratings.csv-04b376a7'
    """
    parts, exact = [], True
    for k in sorted(changed):
        slug, ok = _slug(changed[k])
        parts.append(f"{k}-{slug}")
        exact &= ok
    readable = f"{section}_" + "_".join(parts)
    if exact and len(readable) <= NAME_MAX:
        return readable
    digest = hashlib.sha256(json.dumps(canonical(changed), sort_keys=True).encode()).hexdigest()[:8]
    return readable[:NAME_MAX].rstrip("_-.,") + "-" + digest


def check_name(name: str) -> str:
    """A user's rerun name: letters, digits and ``._,+-``, at most 100 characters; RerunError otherwise."""
    if not _NAME_OK.fullmatch(name or "") or len(name) > 100:
        raise RerunError(f"--name {name!r}: a rerun name is a folder name under {layout.RERUNS}/: letters, digits "
                         f"and . _ , + - (not first), at most 100 characters")
    return name


def _writer(path) -> str | None:
    """The section that writes a run folder under data/runs/ (its ``NN_`` folder), None if not one."""
    if not isinstance(path, str) or not path.startswith(RUNS_PREFIX):
        return None
    for part in Path(path[len(RUNS_PREFIX):]).parts:
        m = _SECTION_DIR.match(part)
        if m:
            return m.group(1)
    return None


def run_folder_parameters(defaults: dict) -> dict[str, str]:
    """{parameter: the section writing its folder} for the parameters whose default lies under data/runs/
    (a list of folders counts when all are written by one section).

    >>> run_folder_parameters({"benchmark": "data/runs/synth/02_pseudo_labels/benchmark", "seed": 0,
    ...                        "bench_run": "data/runs/synth/03_evaluation"})
    {'benchmark': '02', 'bench_run': '03'}
    """
    out = {}
    for name, default in defaults.items():
        values = default if isinstance(default, (list, tuple)) else [default]
        writers = {_writer(v) for v in values}
        if len(writers) == 1 and None not in writers and values:
            out[name] = writers.pop()
    return out


def rebase(value, name: str):
    """A run-folder value (a path under data/runs/, or a list of them) moved under rerun ``name``.

    >>> rebase("data/runs/synth/02_pseudo_labels", "02_seed-1")
    'data/reruns/02_seed-1/synth/02_pseudo_labels'
    """
    if isinstance(value, (list, tuple)):
        return [rebase(v, name) for v in value]
    return f"{layout.RERUNS}/{name}/{value[len(RUNS_PREFIX):]}"


def rerun_folder(name: str) -> Path:
    """The absolute folder of rerun ``name``."""
    return layout.ROOT / layout.RERUNS / name


def read_rerun(name_or_folder: str | Path) -> dict:
    """A rerun's record (:data:`RERUN_RECORD`; ``{}`` when there is none yet): a name or a folder.

    A record that exists but cannot be read (torn, edited into invalid JSON, not an object) is a
    :class:`RerunError` naming the file, never "no record": a record is what keeps a reused ``--name`` from
    overwriting another rerun."""
    folder = Path(name_or_folder)
    if not folder.is_absolute() and len(folder.parts) == 1:
        folder = rerun_folder(str(name_or_folder))
    path = folder / RERUN_RECORD
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as e:
        raise RerunError(f"{path}: the rerun's record cannot be read ({e})") from None
    try:
        rec = json.loads(text)
    except ValueError as e:
        rec, problem = None, f"not valid JSON ({e})"
    else:
        problem = "not a JSON object with a 'sections' object"
    if not isinstance(rec, dict) or not isinstance(rec.get("sections", {}), dict):
        raise RerunError(f"{path}: the rerun's record is damaged: {problem}; it is not read as no record - move "
                         f"it away (or delete {folder}) to start this rerun afresh, or give another --name")
    return rec


def list_reruns() -> list[str]:
    """The names of the reruns under data/reruns/ that have a record, sorted."""
    base = layout.ROOT / layout.RERUNS
    return sorted(p.parent.name for p in base.glob(f"*/{RERUN_RECORD}")) if base.is_dir() else []


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


def check_name_free(plan: RunPlan) -> None:
    """RerunError when the rerun's name already holds a run of the same section with other changed parameters
    (a user's ``--name`` reused): a rerun never overwrites another one silently."""
    if plan.name is None:
        return
    earlier = read_rerun(plan.name).get("sections", {}).get(plan.section)
    if earlier and canonical(earlier.get("changed", {})) != canonical(plan.changed):
        raise RerunError(f"rerun {plan.name} ({layout.RERUNS}/{plan.name}) already holds section {plan.section} run "
                         f"with {json.dumps(earlier.get('changed'))}, not {json.dumps(canonical(plan.changed))}; "
                         f"give another --name, or delete that folder to replace it")


RECORD_RULE = ("a run with changed parameters writes here, never into the book's runs; per section: 'changed' "
               "the parameters that differ from the notebook's defaults ('defaults'), 'parameters' every parameter "
               "it ran with, 'source' how it was started, 'upstream' whose folder it read ('rerun' this rerun's, "
               "'book' the book's default run, 'given' a folder set by the user)")


@contextmanager
def _record_lock(folder: Path):
    """One writer of a rerun's record at a time (a command and a notebook may finish sections of one rerun)."""
    import fcntl

    from inkground_lib.core.folders import dangling_link_problem

    problem = dangling_link_problem(folder)
    if problem:  # mkdir would fail with a bare "File exists"
        raise RerunError(problem)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f".{RERUN_RECORD}.lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def now_utc() -> str:
    """The time now in UTC, as records store it (ISO 8601, seconds)."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def record_run(plan: RunPlan, executed: bool | None, *, source: str, notebook: str | Path | None,
               started: str | None = None, finished: bool = True) -> Path | None:
    """Write the section's entry into its rerun's record (None for the book's run: the executed notebook's own
    metadata records its parameters). Returns the record's path.

    The entry holds every parameter the run used (``parameters``: the notebook's defaults with the given
    values), the changed ones (``changed``) and their defaults (``defaults``), ``source`` (``inkground run``,
    ``papermill``, ``JupyterLab``), the executed notebook (``notebook``: repository-relative where inside it;
    None where the kernel cannot know it, under papermill), the upstream folders it read, the folders it
    writes, when it started (``started``: given, else that of the entry a notebook wrote at its start) and when
    it finished (None while it runs: ``finished`` False); ``executed_now``: False when ``inkground run`` reused
    an unchanged run. Written atomically, one writer at a time."""
    if plan.name is None:
        return None
    folder = plan.folder
    defaults = section_defaults(plan.section)
    params = canonical({**defaults, **plan.params})
    with _record_lock(folder):
        record = read_rerun(folder)
        record.setdefault("name", plan.name)
        record["rule"] = RECORD_RULE
        earlier = record.get("sections", {}).get(plan.section) or {}
        if finished and started is None and earlier.get("finished") is None and earlier.get("parameters") == params:
            started = earlier.get("started")
        entry = {"changed": canonical(plan.changed),
                 "defaults": canonical({k: defaults[k] for k in plan.changed if k in defaults}),
                 "parameters": params, "source": source,
                 "notebook": None if notebook is None else portable_path(notebook),
                 "upstream": plan.upstream, "writes": list(plan.writes),
                 "started": started if finished else (started or now_utc()),
                 "finished": now_utc() if finished else None}
        if executed is not None:
            entry["executed_now"] = bool(executed)
        record.setdefault("sections", {})[plan.section] = entry
        return atomic_write_json(folder / RERUN_RECORD, record)
