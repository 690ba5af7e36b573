"""A rerun's record, ``data/reruns/<name>/rerun.json`` (:data:`~inkground_lib.core.rerun_folders.RERUN_RECORD`):
written and read.

It records, per section, every parameter the run used, the changed ones and their defaults, how it was started
(``inkground run``, papermill, JupyterLab), what each upstream folder was (``rerun``, ``book`` or ``given``), the
folders written, the notebook and when it started and finished: what a page needs to label the run it shows, and
what :func:`read_rerun` returns. It is written atomically by one writer at a time; a record that cannot be read is
an error naming it, never "no record". The plan it records: :mod:`inkground_lib.publish.rerun_plan`.
"""

from __future__ import annotations

import datetime as _dt
import json
from contextlib import contextmanager
from pathlib import Path

from inkground_lib.core import layout
from inkground_lib.core.files import atomic_write_json
from inkground_lib.core.parameter_values import canonical
from inkground_lib.core.repo_paths import portable_path
from inkground_lib.core.rerun_folders import RERUN_RECORD, RerunError, rerun_folder
from inkground_lib.publish.parameters_cell import section_defaults

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


def check_name_free(plan) -> None:
    """RerunError when the rerun's name of ``plan`` (a :class:`~inkground_lib.publish.rerun_plan.RunPlan`)
    already holds a run of the same section with other changed parameters (a user's ``--name`` reused): a rerun
    never overwrites another one silently."""
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


def record_run(plan, executed: bool | None, *, source: str, notebook: str | Path | None,
               started: str | None = None, finished: bool = True) -> Path | None:
    """Write the section's entry of ``plan`` (a :class:`~inkground_lib.publish.rerun_plan.RunPlan`) into its
    rerun's record (None for the book's run: the executed notebook's own metadata records its parameters).
    Returns the record's path.

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
