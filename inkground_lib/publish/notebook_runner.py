"""Running a section notebook with papermill: parameters checked, fingerprints, reuse; building the HTML."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from inkground_lib.core.files import atomic_write_bytes
from inkground_lib.core.layout import NOTEBOOKS, PAPER_DIR, ROOT, SECTIONS_DIR
from inkground_lib.core.parameter_values import changed_parameters
from inkground_lib.core.repo_paths import portable_path
from inkground_lib.publish.parameters_cell import notebook_parameters as cell_parameters
from inkground_lib.publish.progress_relay import current, relayed
from inkground_lib.publish.rerun_plan import COMMANDS, planned_by_command
from inkground_lib.publish.run_checks import RunCheckError, check_values
from inkground_lib.core.rerun_folders import RERUN_LABEL


class RunnerError(ValueError):
    """A section that cannot be run as asked (unknown section, unknown parameter, failed execution)."""


@dataclass(frozen=True)
class Section:
    key: str  # "01"
    name: str  # "01_dataset_statistics"

    @property
    def source(self) -> Path:
        return NOTEBOOKS / f"{self.name}.ipynb"

    def executed(self, out_dir: Path | None = None) -> Path:
        return Path(out_dir or SECTIONS_DIR) / f"{self.name}.ipynb"


def sections() -> list[Section]:
    """The section notebooks present under notebooks/, in order."""
    out = []
    for p in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        out.append(Section(p.stem[:2], p.stem))
    return out


def find_section(key: str) -> Section:
    for s in sections():
        if key in (s.key, s.name, s.name + ".ipynb"):
            return s
    raise RunnerError(f"no section {key!r}; sections are: {', '.join(s.key + ' (' + s.name + ')' for s in sections())}")


def notebook_parameters(section: Section) -> dict:
    """The defaults of the notebook's ``parameters`` cell as written there: {name: default's source text}."""
    return {p.name: p.default_text for p in cell_parameters(section.source)}


def parse_value(text: str):
    """A command-line parameter value: YAML scalars (numbers, booleans, null, lists) else the string."""
    import yaml

    try:
        v = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    if v is None:
        return None if text.strip() in ("null", "~", "None") else text
    return v if isinstance(v, (bool, int, float, str, list)) else text


def check_parameters(section: Section, params: dict) -> None:
    """Refuse, before anything runs, a parameter the notebook does not have, a value of the wrong type or a
    number outside its range (:func:`inkground_lib.publish.run_checks.check_values`, the check the notebooks
    share); RunnerError names the section, the parameter, the value, and the type or range expected."""
    try:
        check_values(section.key, params, notebook=section.source)
    except RunCheckError as e:
        raise RunnerError(str(e)) from None


INPUT_FILE_PARAMETERS = ("ratings",)
"""Parameters that name a file a section reads: the file's content hash (sha256) takes part in the section's
fingerprint, so a changed file (a ratings file that got more ratings) re-executes the section, through
``inkground run`` and ``make book`` alike."""


def input_file_hashes(params: dict) -> dict[str, str]:
    """{"<parameter>_sha256": hash of the file's bytes} for each :data:`INPUT_FILE_PARAMETERS` entry set to a
    path; a relative path is read from the repository root (where the notebooks run); a missing file hashes as
    "missing: <path>" (the notebook then fails and says so)."""
    out = {}
    for name in INPUT_FILE_PARAMETERS:
        value = params.get(name)
        if not isinstance(value, str) or not value:
            continue
        path = Path(value) if Path(value).is_absolute() else ROOT / value
        try:
            out[f"{name}_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            out[f"{name}_sha256"] = f"missing: {path}"
    return out


LIBRARY = "inkground_lib"
DATA_SUFFIXES = (".yaml", ".json")
"""Files beside a module that it may read (the system registry's YAML, the dataset schema): they take part in
the fingerprint of every section that imports a module of their folder."""


def module_file(name: str, root: Path = ROOT) -> Path | None:
    """The source file of library module ``name`` ("inkground_lib.pseudo.run"): ``<path>.py`` or
    ``<path>/__init__.py`` under ``root``; None when it is not a library module (numpy, a name that is an
    attribute of a module rather than a module)."""
    if name != LIBRARY and not name.startswith(LIBRARY + "."):
        return None
    base = root.joinpath(*name.split("."))
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.is_file():
            return p
    return None


def _imported_names(tree, module: str, is_package: bool) -> set[str]:
    """Every module name an AST imports, anywhere in it (top level, in functions, under ``if``: a static
    over-approximation of what running it may import). ``from a import b`` yields ``a`` and ``a.b`` (b may be
    a submodule); relative imports are resolved against ``module``."""
    import ast

    names: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module or ""
            names.add(mod)
            names.update(f"{mod}.{a.name}" for a in node.names if a.name != "*")
    return names


def _with_parents(name: str) -> list[str]:
    """``a.b.c`` -> [a, a.b, a.b.c]: importing a module runs its packages' ``__init__`` first."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def import_closure(sources: list[str], root: Path = ROOT) -> list[Path]:
    """The library's source files that code ``sources`` (a notebook's cells, as text) may run: the modules it
    imports, the modules those import, and so on, found statically with :mod:`ast` (no module is executed),
    with their packages' ``__init__.py``. Only modules of the library (``inkground_lib``) are followed; sorted.

    >>> from inkground_lib.core.layout import ROOT
    >>> files = import_closure(["from inkground_lib.core.layout import ROOT"])
    >>> [p.relative_to(ROOT).as_posix() for p in files]
    ['inkground_lib/__init__.py', 'inkground_lib/core/__init__.py', 'inkground_lib/core/layout.py']
    """
    import ast

    todo: list[str] = []
    for text in sources:
        try:
            tree = ast.parse(text)
        except SyntaxError:  # a cell of IPython magics: its import lines still count
            tree = ast.parse("\n".join(line for line in text.splitlines()
                                       if line.lstrip().startswith(("import ", "from "))))
        todo.extend(_imported_names(tree, "__main__", False))
    seen: dict[str, Path] = {}
    while todo:
        for name in _with_parents(todo.pop()):
            if name in seen:
                continue
            path = module_file(name, root)
            if path is None:
                continue
            seen[name] = path
            todo.extend(_module_imports(path, name))
    return sorted(set(seen.values()))


_IMPORTS: dict[tuple, frozenset] = {}
"""{(file, its mtime and size, module name): the names it imports}: each library file parsed once per process
while it is unchanged (a build computes four fingerprints, each over a hundred files)."""


def _module_imports(path: Path, name: str) -> frozenset:
    import ast

    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size, name)
    if key not in _IMPORTS:
        tree = ast.parse(path.read_bytes(), filename=str(path))
        _IMPORTS[key] = frozenset(_imported_names(tree, name, path.name == "__init__.py"))
    return _IMPORTS[key]


def notebook_code(path: Path) -> list[str]:
    """The source of each code cell of notebook ``path``."""
    nb = json.loads(path.read_text("utf-8"))
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in nb.get("cells", []) if c.get("cell_type") == "code"]


def section_code_files(section: Section, root: Path = ROOT) -> list[Path]:
    """What of the library section ``section`` may run: :func:`import_closure` of its notebook's code cells,
    with the data files (:data:`DATA_SUFFIXES`) in the folders of those modules."""
    files = set(import_closure(notebook_code(section.source), root))
    for folder in {p.parent for p in files}:
        files.update(p for p in folder.iterdir() if p.is_file() and p.suffix in DATA_SUFFIXES)
    return sorted(files)


def code_fingerprint(files: list[Path], root: Path = ROOT) -> str:
    """sha256 over the files' repository-relative paths and bytes."""
    h = hashlib.sha256()
    for p in files:
        h.update(p.relative_to(root).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def fingerprint(section: Section, params: dict, inputs: dict[str, str] | None = None) -> str:
    """What a section's executed notebook depends on, as one sha256: the notebook, every parameter it runs
    with (its defaults with ``params`` over them: a default given explicitly is the default), the library code
    it may run (:func:`section_code_files`: a change to a module no section imports, e.g. the front page's,
    re-executes nothing), the paper's reported numbers (data/paper/) and ``inputs`` (dataset hashes, input
    files, earlier sections' outputs: :func:`run_outputs_hash`). Nothing of how a run went (its time, its
    machine's load) enters it."""
    h = hashlib.sha256()
    h.update(section.source.read_bytes())
    every = {**{p.name: p.default for p in cell_parameters(section.source)}, **params}
    h.update(json.dumps(every, sort_keys=True, default=str).encode())
    h.update(code_fingerprint(section_code_files(section)).encode())
    paper = PAPER_DIR
    for p in sorted(paper.glob("*")):
        h.update(p.read_bytes())
    h.update(json.dumps(inputs or {}, sort_keys=True).encode())
    return h.hexdigest()


_FACT = r"timings|seconds|[a-z_]+_seconds"
RUN_FACTS = re.compile(rf"^({_FACT})$")
"""Keys of a run's JSON records that say how the run went, not what it found: section 02's stage ``timings``,
a page's derendering or reading ``seconds``, a Style classifier's ``train_seconds``. They are left out of
:func:`run_outputs_hash`."""

_FACT_BYTES = re.compile(rf'"({_FACT})"\s*:'.encode())  # a JSON file that may hold one (then parsed)


def _without_facts(value):
    if isinstance(value, dict):
        return {k: _without_facts(v) for k, v in value.items() if not RUN_FACTS.match(k)}
    if isinstance(value, list):
        return [_without_facts(v) for v in value]
    return value


def run_outputs_hash(folders) -> str:
    """sha256 of the results in run folders ``folders``: every CSV and JSON file in them (tables, summaries, a
    benchmark set's manifest and inks; not the append-only caches, not the hidden bookkeeping files), by path
    from the repository root, each JSON file without the facts of how the run went (:data:`RUN_FACTS`). A
    section that reads these folders is executed again when they hold other results, and only then: a rerun
    that reproduces the same results at another speed changes nothing."""
    h = hashlib.sha256()
    for run in folders:
        run = Path(run)
        files = sorted(f for f in list(run.rglob("*.csv")) + list(run.rglob("*.json"))
                       if not any(part.startswith(".") for part in f.relative_to(run).parts))
        for f in files:
            data = f.read_bytes()
            if f.suffix == ".json" and _FACT_BYTES.search(data):
                try:
                    data = json.dumps(_without_facts(json.loads(data)), sort_keys=True).encode()
                except ValueError:
                    pass  # not JSON: hashed as it is
            h.update(portable_path(f).encode() + b"\0")
            h.update(hashlib.sha256(data).digest())
    return h.hexdigest()


def stored_fingerprint(path: Path) -> str | None:
    try:
        nb = json.loads(path.read_text("utf-8"))
        return nb["metadata"]["inkground"]["fingerprint"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def run_section(key: str, params: dict | None = None, *, out_dir: Path | None = None, inputs: dict | None = None,
                force: bool = False, log_output: bool = False, user_params: dict | None = None,
                source: str = COMMANDS[0]) -> tuple[Path, bool]:
    """Execute section ``key`` with ``params`` into ``out_dir`` (default book/sections/).

    Returns (executed notebook path, whether it was executed now). Skips execution when the stored
    fingerprint matches (unless ``force``). ``inputs`` maps input names to content hashes (e.g. dataset
    hashes) that take part in the fingerprint, with the hashes of the files the parameters name
    (:func:`input_file_hashes`: the ratings file). ``user_params`` (default: ``params``) is what the executed
    notebook records as the user's choice, which ``make book`` keeps on later runs; parameters the book
    pipeline derived itself (e.g. no recorded data here) are executed but not recorded as the user's.
    ``source``: the command running it (``inkground run``, ``make book``), which the notebook's first cell
    finds in its kernel's environment (:func:`~inkground_lib.publish.rerun_plan.planned_by_command`).

    Nothing finished is lost: the executed notebook, with its fingerprint, is written the moment its last cell
    has run, before papermill shuts the kernel down (a Ctrl-C from then on stops the command but keeps it; the
    write itself finishes first). A section that fails or is interrupted leaves what it had executed at
    ``<name>.failed.ipynb`` (without a fingerprint) and the previous executed notebook as it was. While it runs,
    its cells and its progress bars are shown on standard error (:mod:`inkground_lib.publish.progress_relay`),
    never in the notebook.
    """
    import nbformat
    import papermill as pm

    section = find_section(key)
    if current() is not None:  # the stage this section runs in (make book, inkground run) shows what it does
        current().set_activity("checking parameters and inputs")
    params = dict(params or {})
    check_parameters(section, params)
    target = section.executed(out_dir)
    inputs = {**(inputs or {}), **input_file_hashes(params)}
    fp = fingerprint(section, params, inputs)
    if not force and target.is_file() and stored_fingerprint(target) == fp:
        return target, False
    target.parent.mkdir(parents=True, exist_ok=True)
    dest = target.absolute()  # written while papermill runs the notebook in the repository root
    failed = dest.with_name(f"{target.stem}.failed.ipynb")
    record = {"fingerprint": fp, "parameters": params if user_params is None else user_params,
              "inputs": inputs or {}, "section": section.name}

    def save(nb) -> None:  # the last cell has run; the kernel is still up
        nb = nbformat.from_dict(copy.deepcopy(nb))
        _present_parameters(nb, section, params)
        _forget_build_paths(nb, section, target)
        nb.metadata["inkground"] = record
        data = nbformat.writes(nb).encode("utf-8")
        with interrupts_deferred():
            atomic_write_bytes(dest, data)
            failed.unlink(missing_ok=True)

    with relayed(f"section {section.key}", tty=False if log_output else None) as relay:
        watch = _Watch(relay, save)
        try:  # the command chose the folders (publish/rerun_plan.py): the notebook's plan keeps them as injected
            with planned_by_command(source):
                pm.execute_notebook(str(section.source), None, parameters=params, cwd=str(ROOT),
                                    kernel_name="python3", engine_name=_engine(), progress_bar=False,
                                    log_output=log_output, request_save_on_cell_execute=False, watch=watch)
        except BaseException as e:
            if watch.saved:  # interrupted (or failing) while the kernel shut down: the section is complete
                if isinstance(e, KeyboardInterrupt):
                    e.summary = (f"interrupted after section {section.key} finished; its executed notebook is "
                                 f"saved at {target}; rerun to resume")
                    raise
                print(f"[inkground] section {section.key}: every cell ran and the notebook is saved; stopping its "
                      f"kernel failed: {e}", file=sys.stderr, flush=True)
                return target, True
            _keep_partial(watch.nb, failed)
            if isinstance(e, KeyboardInterrupt):
                e.summary = (f"interrupted in section {section.key}; what it had executed is kept at {failed}; "
                             f"finished sections are kept, rerun to resume")
                raise
            if not isinstance(e, Exception):
                raise
            raise RunnerError(f"section {section.key} failed; the executed copy is kept at {failed}:\n{e}") from None
    return target, True


def _keep_partial(nb, failed: Path) -> None:
    """Write what an interrupted or failed run had executed to ``failed`` (no fingerprint: never taken for a
    finished run), whole, even if a second Ctrl-C arrives."""
    import nbformat

    if nb is None:
        return
    nb = nbformat.from_dict(copy.deepcopy(nb))
    nb.metadata.pop("inkground", None)
    with interrupts_deferred():
        atomic_write_bytes(failed, nbformat.writes(nb).encode("utf-8"))


@contextmanager
def interrupts_deferred():
    """Hold Ctrl-C and SIGTERM until the block has run (a file write that must finish once started), then
    deliver them as they would have been. Only the main thread receives signals; elsewhere the block runs as is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    handlers = {sig: signal.signal(sig, lambda signum, frame: caught.append(signum))
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
        for sig in dict.fromkeys(caught):
            handler = handlers[sig]
            if callable(handler):
                handler(sig, None)
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), sig)


class _Watch:
    """What the runner learns from papermill's execution of one notebook: each code cell as it starts (reported
    to the progress relay) and the notebook once every cell has run (``save``d at once)."""

    def __init__(self, relay, save):
        self.relay, self.save = relay, save
        self.nb = None
        self.saved = False
        self._code_index: dict[int, int] = {}

    def started(self, nb) -> None:
        self.nb = nb
        code = [i for i, c in enumerate(nb.cells) if c.get("cell_type") == "code"]
        self._code_index = {i: k for k, i in enumerate(code, 1)}
        self._n_code = len(code)
        self._report("starting the kernel")

    def on_cell_start(self, cell, cell_index: int) -> None:
        """nbclient's ``on_cell_start`` hook (called with the keywords ``cell`` and ``cell_index``)."""
        if cell_index in self._code_index:
            tags = cell.get("metadata", {}).get("tags", [])
            what = "parameters" if {"parameters", "injected-parameters"} & set(tags) else \
                cell_summary(cell.get("source", ""))
            self._report(f"cell {self._code_index[cell_index]}/{self._n_code}" + (f" ({what})" if what else ""))

    def finished(self, nb) -> None:
        self.save(nb)
        self.saved = True
        self._report("saved; stopping the kernel")

    def _report(self, text: str) -> None:
        if self.relay is not None:
            self.relay.set_activity(text)


CELL_SUMMARY_SKIP = frozenset({"glue", "glue_all", "table_view", "display", "print", "float", "int", "str", "len",
                               "dict", "list", "tuple", "set", "sorted", "range", "enumerate", "zip", "round",
                               "min", "max", "sum", "abs", "isinstance", "repr", "format"})
"""Calls a cell summary leaves out: presentation and builtins, which say nothing of what the cell computes."""


def cell_summary(source: str, limit: int = 2) -> str:
    """What a code cell does, for the progress line: its first ``limit`` library calls ("run_pseudo_labels",
    "fig_funnel, funnel_table"), "imports" for a cell of imports, else its first line."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        tree = None
    names = []
    if tree is not None:
        calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
        for n in calls:
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name and name not in CELL_SUMMARY_SKIP and name not in names:
                names.append(name)
        if not names and tree.body and all(isinstance(b, (ast.Import, ast.ImportFrom)) for b in tree.body):
            return "imports"
    if names:
        return ", ".join(names[:limit])
    first = next((line.strip() for line in source.splitlines() if line.strip() and not line.strip().startswith("#")),
                 "")
    return first[:40]


_ENGINE = "inkground"

KERNEL_ARGUMENTS = ("--IPKernelApp.log_level=CRITICAL",)
"""Arguments of every section's kernel: its own log says only what is critical. Its warnings and errors are
noise on the book's terminal, never the section's: "Kernel is running over TCP without encryption" at each
start (a warning, ipykernel 6 ``kernelapp.init_sockets``) and "KeyboardInterrupt caught in kernel" on each
Ctrl-C (logged as an *error* by ``kernelbase.dispatch_shell``, hence CRITICAL, not ERROR). A cell's own
errors reach the notebook and the runner through the messages, not this log."""


def _engine() -> str:
    """papermill's nbclient engine, registered once as "inkground", with the runner's two hooks (see
    :class:`_Watch`): a code cell starts; every cell has run and the kernel is still up.

    The first is nbclient's public hook ``on_cell_start`` and the kernel's arguments its ``extra_arguments``,
    both traits of ``nbclient.NotebookClient`` (jupyter/nbclient nbclient/client.py, the hooks' "Called with
    kwargs ``cell`` and ``cell_index``"; read 2026-12-06 in the installed nbclient 0.11.0 and with the search
    tool, the extension points asked for in jupyter/nbclient#158). The second has no public hook: nbclient's
    ``on_cell_complete`` / ``on_cell_executed`` of the last cell come before papermill records that cell's end
    (``nb_man.cell_complete``, which the saved notebook holds), and ``on_notebook_complete`` after the kernel is
    shut down. So it stays right after papermill's own loop over the cells
    (``PapermillNotebookClient.papermill_execute_cells``, papermill 2.7), before ``execute`` shuts the kernel
    down."""
    from papermill.clientwrap import PapermillNotebookClient
    from papermill.engines import NBClientEngine, papermill_engines
    from papermill.log import logger
    from papermill.utils import merge_kwargs, remove_args

    if _ENGINE in papermill_engines._engines:
        return _ENGINE

    class Client(PapermillNotebookClient):
        def __init__(self, nb_man, watch: _Watch, **kw):
            super().__init__(nb_man, **kw)
            self.watch = watch

        def papermill_execute_cells(self):
            # the kernel's language info, which papermill records after the cells, is asked for before them: once
            # the last cell has run, nothing waits between it and the notebook's save
            info = self.wait_for_reply(self.kc.kernel_info())
            super().papermill_execute_cells()
            if self.nb.metadata.get("papermill", {}).get("exception"):
                return  # a cell failed: papermill raises once the kernel is down
            with interrupts_deferred():  # a Ctrl-C now stops the command once the notebook is saved
                self.nb.metadata["language_info"] = info["content"]["language_info"]
                end = self.nb_man.now()  # papermill's end time and duration, as its notebook_complete records them
                self.nb.metadata.papermill["end_time"] = end.isoformat()
                if self.nb_man.start_time is not None:
                    self.nb.metadata.papermill["duration"] = (end - self.nb_man.start_time).total_seconds()
                self.watch.finished(self.nb)

    class Engine(NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, log_output=False, stdout_file=None,
                                     stderr_file=None, start_timeout=60, execution_timeout=None, watch=None,
                                     **kwargs):
            # NBClientEngine.execute_managed_notebook (papermill 2.7) with the runner's client
            watch.started(nb_man.nb)
            kwargs = remove_args(["input_path"], **kwargs)
            safe_kwargs = remove_args(["timeout", "startup_timeout"], **kwargs)
            final_kwargs = merge_kwargs(safe_kwargs, timeout=execution_timeout if execution_timeout else
                                        kwargs.get("timeout"), startup_timeout=start_timeout, kernel_name=kernel_name,
                                        log=logger, log_output=log_output,
                                        stdout_file=stdout_file, stderr_file=stderr_file,
                                        on_cell_start=watch.on_cell_start, extra_arguments=[*KERNEL_ARGUMENTS])
            return Client(nb_man, watch, **final_kwargs).execute()

    papermill_engines.register(_ENGINE, Engine)
    return _ENGINE


def _forget_build_paths(nb, section: Section, target: Path) -> None:
    """The executed notebook is downloadable from the book: papermill's record of where it ran (absolute
    input and output paths of the build machine) becomes repository-relative; its durations stay."""
    pm_meta = nb.metadata.get("papermill", {})
    for key, path in (("input_path", section.source), ("output_path", target)):
        if key in pm_meta:
            try:
                pm_meta[key] = Path(path).resolve().relative_to(ROOT).as_posix()
            except ValueError:  # outside the repository (a test's temporary book): the file name only
                pm_meta[key] = Path(path).name


def rerun_instructions(section: Section) -> str:
    """How to rerun ``section``, in one paragraph of its page: the command line, papermill and JupyterLab."""
    nb = section.source.name
    return (f"**Rerun this section** with other values (from a clone, after `make book`; see {{ref}}`{RERUN_LABEL}`): "
            f"`.venv/bin/inkground run {section.key} -p NAME VALUE`; or "
            f"`.venv/bin/papermill notebooks/{nb} out.ipynb -p NAME VALUE` (a list in YAML: `-y 'NAME: [...]'`); or "
            f"`make lab` and `{nb}` in JupyterLab (`http://127.0.0.1:8888/lab/tree/{nb}`). Each way checks the "
            f"values before the section starts and writes a run with changed values into `data/reruns/<name>/` "
            f"with its record `rerun.json`, never into this book's runs (`inkground run --into-book` shows it here).")


def _value_text(text: str) -> str:
    """A parameter's value as a page shows it: "not set", not a raw None."""
    return "not set" if str(text).strip() == "None" else f"`{text}`"


def _present_parameters(nb, section: Section, params: dict) -> None:
    """Hide papermill's parameter cells and say, in a short markdown cell after the title, which parameters
    this page was executed with and how to rerun it (:func:`rerun_instructions`). Parameters other than the
    notebook's defaults are named at the top of the page, right under its title, with their defaults."""
    import nbformat

    first_code = None
    for i, cell in enumerate(nb.cells):
        tags = cell.get("metadata", {}).get("tags", [])
        if "parameters" in tags or "injected-parameters" in tags:
            cell.metadata.setdefault("tags", [])
            if "remove-cell" not in cell.metadata["tags"]:
                cell.metadata["tags"].append("remove-cell")
            first_code = i if first_code is None else first_code
    declared = notebook_parameters(section)
    shown = {**declared, **{k: repr(v) for k, v in params.items()}}
    text = ("**Parameters of this run**: " +
            ", ".join(f"`{k}` not set" if str(v).strip() == "None" else f"`{k} = {v}`" for k, v in shown.items()) +
            ".\n\n" + rerun_instructions(section))
    cell = nbformat.v4.new_markdown_cell(text)
    cell.metadata["tags"] = ["inkground-parameters"]
    cell["id"] = "inkground-parameters"
    nb.cells.insert(first_code if first_code is not None else 1, cell)
    changed = changed_parameters(params, {p.name: p.default for p in cell_parameters(section.source)})
    if not changed:
        return
    note = ("```{important}\n**Not the book's default run.** This section ran with " +
            ", ".join(f"`{k} = {params[k]!r}` (default {_value_text(declared[k]) if k in declared else 'none'})"
                      for k in changed) +
            "; every number on this page is that run's. `.venv/bin/inkground book --defaults` runs it with the "
            "defaults again.\n```")
    top = nb.cells[0] if nb.cells else None
    if top is not None and top.cell_type == "markdown" and top.source.lstrip().startswith("# "):
        title, _, rest = top.source.lstrip().partition("\n")
        top.source = f"{title}\n\n{note}\n{rest}"
    else:
        changed_cell = nbformat.v4.new_markdown_cell(note)
        changed_cell["id"] = "inkground-changed-parameters"
        nb.cells.insert(0, changed_cell)


def build_book(root: Path = ROOT, *, builder: str = "html", quiet: bool = True) -> Path:
    """``jupyter-book build`` with warnings as errors (-W -n); returns the path of index.html."""
    exe = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(exe) if exe.exists() else "jupyter-book", "build", str(root), "-W", "-n", "--keep-going",
           "--builder", builder]
    env = dict(os.environ)
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr)[-6000:]
        raise RunnerError(f"jupyter-book build failed (exit {proc.returncode}):\n{tail}")
    return Path(root) / "_build" / "html" / "index.html"
