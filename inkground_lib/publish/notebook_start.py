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
2. plans where the run reads and writes (:func:`inkground_lib.publish.rerun_plan.notebook_plan`): the book's runs with
   the default parameters, else its own folder ``data/reruns/<name>/``. The plan depends on the parameters'
   values alone, and the notebook keeps the resolved paths under names of its own, so running this cell (or
   any other) again never turns a resolved path into a parameter;
3. says where the run writes and, for a rerun, records it (``data/reruns/<name>/rerun.json``: every parameter,
   the changed ones and their defaults, the source - papermill or JupyterLab - and the notebook);
   :func:`finish_run` marks it finished.

Under ``inkground run`` or ``make book`` the command has checked, planned and records the run: the cell checks
again (it takes about a second) and keeps the injected parameters as they are.

In a kernel of JupyterLab's (or any IPython kernel no command planned), a plan holds for the parameters' values
it was made from: once a parameter has a value other than the plan's (the parameters cell edited and run, but
not the cell after it), every other cell is refused before it runs (:class:`PlanGuard`) until that cell has
planned the run again, so no cell computes new values into the folders planned for the old ones (the book's,
when those were the defaults).

The source is told from the kernel's environment: a Jupyter server (JupyterLab, ``make lab``) starts its
kernels with ``JPY_SESSION_NAME`` set to the notebook's path (jupyter_server's ``SessionManager.get_kernel_env``,
jupyter_server 2.x, read 2026-12-06 in .venv-lab); the commands set
:data:`~inkground_lib.publish.rerun_plan.PLANNED_ENV`; any other kernel is counted as papermill's.
"""

from __future__ import annotations

import ast
import json
import os
import sys

from inkground_lib.core import layout
from inkground_lib.core.parameter_values import canonical
from inkground_lib.publish.parameters_cell import section_defaults
from inkground_lib.publish.rerun_plan import RunPlan, notebook_plan, planned_by
from inkground_lib.publish.rerun_record import record_run
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


class PlanGuard(ast.NodeTransformer):
    """An IPython AST transformer (``shell.ast_transformers``): it refuses a cell, before the cell runs, while a
    parameter of section ``section`` holds a value other than the one the run was planned with
    (IPython's ``InputRejected``: the cell is not executed and JupyterLab's Run All stops there; IPython 9.19
    ``InteractiveShell.transform_ast``, read 2026-12-06 in .venv). A cell that assigns a parameter (the
    parameters cell) or plans the run (calls ``start_run``) is never refused."""

    def __init__(self, section: str, namespace: dict, planned: dict):
        self.section, self.namespace, self.planned = section, namespace, planned

    def changed(self) -> dict:
        """{parameter: (planned value, value now)} for the parameters whose value moved since the plan."""
        now = canonical({k: self.namespace.get(k) for k in self.planned})
        return {k: (v, now[k]) for k, v in self.planned.items() if now[k] != v}

    def visit(self, node):
        from IPython.core.error import InputRejected

        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        plans = any(isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", None)) == "start_run"
                    for n in ast.walk(node))
        moved = self.changed()
        if moved and not plans and not names & set(self.planned):
            what = ", ".join(f"{k}: {json.dumps(a)} -> {json.dumps(b)}" for k, (a, b) in moved.items())
            raise InputRejected(f"section {self.section}: the parameters changed since this run was planned ({what}); "
                                f"run the cell after the parameters (start_run) again first - this cell was not run")
        return node


def _guard(section: str, namespace: dict, given: dict) -> None:
    """Put a :class:`PlanGuard` for the plan just made on the IPython shell running this notebook (in place of an
    earlier one of the same namespace); nothing outside an IPython kernel."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return
    shell.ast_transformers[:] = [t for t in shell.ast_transformers
                                 if not (isinstance(t, PlanGuard) and t.namespace is namespace)]
    shell.ast_transformers.append(PlanGuard(section, namespace, canonical(given)))


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
    _guard(section, namespace, given)
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

