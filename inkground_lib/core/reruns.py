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
* ``data/reruns/<name>/rerun.json`` (:data:`RERUN_RECORD`) records, per section, the parameters changed, every
  parameter executed, what each upstream folder was (``rerun``, ``book`` or ``given``), the folders written and
  the notebook: what a page needs to label the run it shows, and what :func:`read_rerun` returns.

``inkground run --into-book`` is the one way to write changed parameters into the book's runs.

A notebook run by papermill or JupyterLab applies the same rule to its own values (:func:`notebook_plan`)::

    from inkground_lib.core.reruns import notebook_plan
    plan = notebook_plan("02", globals())
    run_dir = plan.params["run_dir"]    # the book's folder with defaults, else data/reruns/<name>/...
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from inkground_lib.core import layout
from inkground_lib.core.files import atomic_write_json
from inkground_lib.core.notebook_params import section_defaults, section_notebooks

RERUN_RECORD = "rerun.json"
"""The record in each rerun folder (see the module doc)."""

RUNS_PREFIX = "data/runs/"
"""Run-folder parameters are those whose default lies under this folder (relative to the repository root)."""

NAME_MAX = 48
"""Longest readable part of a rerun's name; a longer one is cut and ends in the parameters' digest."""

_NAME_OK = re.compile(r"[A-Za-z0-9][A-Za-z0-9._,+-]*")
_SECTION_DIR = re.compile(r"^(\d\d)_")


class RerunError(ValueError):
    """A rerun that cannot be planned as asked (a bad name, a name already used with other parameters)."""


def _canonical(value):
    """Values compared as JSON would store them (a tuple equals its list)."""
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def changed_parameters(params: dict, defaults: dict) -> dict:
    """The parameters of ``params`` whose value is not the notebook's default (unknown names count as changed).

    >>> changed_parameters({"ocr_threshold": 0.85, "seed": 1}, {"ocr_threshold": 0.85, "seed": 0})
    {'seed': 1}
    """
    return {k: v for k, v in params.items() if k not in defaults or _canonical(v) != _canonical(defaults[k])}


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
    digest = hashlib.sha256(json.dumps(_canonical(changed), sort_keys=True).encode()).hexdigest()[:8]
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
    """A rerun's record (:data:`RERUN_RECORD`; ``{}`` when there is none yet): a name or a folder."""
    folder = Path(name_or_folder)
    if not folder.is_absolute() and len(folder.parts) == 1:
        folder = rerun_folder(str(name_or_folder))
    try:
        rec = json.loads((folder / RERUN_RECORD).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return rec if isinstance(rec, dict) else {}


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
    notebook = rerun_folder(name) / "sections" / f"{nb_name}.ipynb"
    return RunPlan(section, name, out, changed, upstream, writes, notebook)


def notebook_plan(section: str, namespace: dict, *, name: str | None = None) -> RunPlan:
    """The plan of a notebook run by papermill or in JupyterLab, from the values its parameters have now
    (``namespace``: the notebook's ``globals()`` after its parameters cell, and papermill's injected cell) against
    its parameters cell's defaults: the same folders ``inkground run`` would use. A notebook then takes its run
    folders from ``plan.params`` (``run_dir = plan.params["run_dir"]``) and opens them with
    :func:`~inkground_lib.core.repo_paths.repo_path`."""
    defaults = section_defaults(section)
    return plan_run(section, {k: namespace[k] for k in defaults if k in namespace}, name=name, defaults=defaults)


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
    if earlier and _canonical(earlier.get("changed", {})) != _canonical(plan.changed):
        raise RerunError(f"rerun {plan.name} ({layout.RERUNS}/{plan.name}) already holds section {plan.section} run "
                         f"with {json.dumps(earlier.get('changed'))}, not {json.dumps(_canonical(plan.changed))}; "
                         f"give another --name, or delete that folder to replace it")


def record_run(plan: RunPlan, executed: bool) -> Path | None:
    """Write the section's entry into its rerun's record (None for the book's run: the executed notebook's own
    metadata records its parameters). Returns the record's path."""
    if plan.name is None:
        return None
    folder = plan.folder
    record = read_rerun(folder)
    record.setdefault("name", plan.name)
    record["rule"] = ("a run with changed parameters writes here, never into the book's runs; upstream: 'rerun' "
                      "read this rerun's folder, 'book' the book's default run, 'given' a folder set by the user")
    entry = {"changed": _canonical(plan.changed), "parameters": _canonical(plan.params),
             "upstream": plan.upstream, "writes": list(plan.writes),
             "notebook": plan.notebook.relative_to(layout.ROOT).as_posix(), "executed_now": bool(executed),
             "finished": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    record.setdefault("sections", {})[plan.section] = entry
    return atomic_write_json(folder / RERUN_RECORD, record)
