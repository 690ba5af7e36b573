"""The first code cell after a section notebook's parameters, and its last cell: the run checked, planned and
recorded the same way whether ``inkground run``, ``make book``, papermill or JupyterLab runs the notebook::

    from inkground_lib.publish.notebook_start import start_run
    plan = start_run("02", globals())
    candidates_dir, run_folder = plan.paths("candidates", "run_dir")   # absolute, from the repository root
    ...
    finish_run(plan)                                                     # the notebook's last cell

:func:`start_run`

1. checks every parameter with :func:`inkground_lib.publish.run_checks.check_section`, the check ``inkground
   run`` makes (names, types, ranges, systems, derenderers, OCR engines, lists, the inputs it reads), and that
   no other command is writing the folders the run writes: the first problem is a
   :class:`~inkground_lib.publish.run_checks.RunCheckError` naming the parameter and what it accepts, raised
   before anything is written;
2. plans where the run reads and writes (:func:`inkground_lib.core.reruns.notebook_plan`): the book's runs with
   the default parameters, else its own folder ``data/reruns/<name>/``. The plan depends on the parameters'
   values alone, and the notebook keeps the resolved paths under names of its own, so running this cell (or
   any other) again never turns a resolved path into a parameter;
3. says where the run writes and, for a rerun, records it (``data/reruns/<name>/rerun.json``: every parameter,
   the changed ones and their defaults, the source - papermill or JupyterLab - and the notebook);
   :func:`finish_run` marks it finished.

Under ``inkground run`` or ``make book`` the command has checked, planned and records the run: the cell checks
again (it takes about a second) and keeps the injected parameters as they are.

The source is told from the kernel's environment: a Jupyter server (JupyterLab, ``make lab``) starts its
kernels with ``JPY_SESSION_NAME`` set to the notebook's path (jupyter_server's ``SessionManager.get_kernel_env``,
jupyter_server 2.x, read 2026-12-06 in .venv-lab); the commands set
:data:`~inkground_lib.core.reruns.PLANNED_ENV`; any other kernel is counted as papermill's.
"""

from __future__ import annotations

import json
import os

from inkground_lib.core import layout
from inkground_lib.core.notebook_params import section_defaults
from inkground_lib.core.reruns import RunPlan, canonical, notebook_plan, planned_by, record_run
from inkground_lib.publish.run_checks import check_locks, check_section

JUPYTER_SESSION_ENV = "JPY_SESSION_NAME"
"""Set by a Jupyter server in the environment of a kernel it starts for a notebook: the notebook's path."""


def run_source() -> str:
    """How this kernel's run was started: ``inkground run`` or ``make book`` (the command planned it),
    ``JupyterLab`` (a Jupyter server's kernel), else ``papermill``."""
    return planned_by() or ("JupyterLab" if os.environ.get(JUPYTER_SESSION_ENV) else "papermill")


def _notebook() -> str | None:
    """The notebook this kernel runs, where its client says so (a Jupyter server; papermill does not)."""
    return os.environ.get(JUPYTER_SESSION_ENV) or None


def start_run(section: str, namespace: dict) -> RunPlan:
    """Check, plan and record the run of section ``section`` (see the module doc); ``namespace`` is the
    notebook's ``globals()`` after its parameters cell. Returns the plan (``plan.paths(...)``)."""
    defaults = section_defaults(section)
    given = {k: namespace[k] for k in defaults if k in namespace}
    check_section(section, given, defaults, how="notebook")
    plan = notebook_plan(section, namespace)
    if planned_by():
        return plan
    check_locks(section, plan.writes)
    if plan.name is None:
        if plan.writes:
            print(f"the book's own run (default parameters): this run writes {', '.join(plan.writes)}, the run "
                  f"folders `make book` shows")
        return plan
    record = record_run(plan, None, source=run_source(), notebook=_notebook(), finished=False)
    where = (f"this run writes into {layout.RERUNS}/{plan.name}/ ({', '.join(plan.writes)}), not into the book's runs"
             if plan.writes else "this section writes no run folder")
    print(f"rerun {plan.name}: changed parameters {json.dumps(canonical(plan.changed))}; {where}; its record: "
          f"{record.relative_to(layout.ROOT).as_posix()}")
    return plan


def finish_run(plan: RunPlan) -> None:
    """The notebook's last cell: a rerun's record says when it finished (nothing to do for the book's run, or
    under a command, which records the run itself)."""
    if plan.name is None or planned_by():
        return
    record_run(plan, None, source=run_source(), notebook=_notebook(), finished=True)

