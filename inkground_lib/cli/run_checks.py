"""What ``inkground run`` checks before a notebook starts and before any folder is made, beyond the types and
ranges the runner checks (:func:`inkground_lib.publish.notebook_runner.check_parameters`): the meaning of
values (system names, OCR engines, the shape of ``raters_per_pair``), the inputs a section reads (datasets, an
earlier section's run folders, a ratings file), and the locks of the folders it writes. Each problem is one
line (:class:`RunCheckError`) naming the section, the parameter and what would be accepted."""

from __future__ import annotations

from pathlib import Path

from inkground_lib.core.folders import LOCK_FILE, is_locked
from inkground_lib.core.repo_paths import repo_path


class RunCheckError(ValueError):
    """A section run refused before it starts."""


DATASET_PARAMETERS = ("dataset", "candidates", "benchmark", "recorded")
"""Parameters naming a dataset folder a section reads (``""`` skips an optional one: ``recorded``)."""

RUN_FOLDER_INPUTS = ("eval_runs",)
"""Parameters naming run folders an earlier section wrote, which a section reads."""

FILE_PARAMETERS = ("ratings",)
"""Parameters naming a file a section reads (None: not used)."""

SYSTEMS_PARAMETERS = ("systems",)
OCR_PARAMETERS = ("ocr_engine", "ocr_engines")

MAKES = {"02": "section 02 (`make book`, or `inkground run 02` with the same parameters)",
         "03": "section 03 (`make book`, or `inkground run 03`)"}


def _where(section: str, name: str) -> str:
    return f"section {section}: parameter {name}"


def check_meanings(section: str, params: dict) -> None:
    """System names, OCR engines and ``raters_per_pair``'s shape (``params``: every parameter the notebook will
    run with, defaults included)."""
    for name in SYSTEMS_PARAMETERS:
        if name in params:
            from inkground_lib.evaluation.systems.registry import load_registry  # the registry: these sections only

            known = list(load_registry())
            unknown = [s for s in params[name] if s not in known]
            if unknown:
                raise RunCheckError(f"{_where(section, name)}: unknown system{'s' if len(unknown) > 1 else ''} "
                                    f"{', '.join(map(repr, unknown))}; known systems: {', '.join(known)} (more in a "
                                    f"file named by $INKGROUND_SYSTEMS)")
    for name in OCR_PARAMETERS:
        if name in params:
            from inkground_lib.components.ocr.factory import engine_names

            values = params[name] if isinstance(params[name], (list, tuple)) else [params[name]]
            bad = [v for v in values if v not in engine_names()]
            if bad:
                raise RunCheckError(f"{_where(section, name)}: unknown OCR engine {bad[0]!r}; known: "
                                    f"{', '.join(engine_names())}")
    rpp = params.get("raters_per_pair")
    if isinstance(rpp, (list, tuple)) and not (len(rpp) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                                    for v in rpp) and 1 <= rpp[0] <= rpp[1]):
        raise RunCheckError(f"{_where(section, 'raters_per_pair')}: {list(rpp)!r} is not a whole number >= 1 or a "
                            f"pair [min, max] with 1 <= min <= max (e.g. -p raters_per_pair '[2, 3]')")


def check_inputs(section: str, params: dict, made_here: dict[str, str]) -> None:
    """The folders and files the section reads exist (``params``: every parameter it runs with; relative paths
    are under the repository root). ``made_here``: {repo-relative folder: section} for the folders an earlier
    section of the same command writes (not checked: they do not exist yet)."""
    def made(path: str) -> str | None:
        return next((s for f, s in made_here.items() if path == f or path.startswith(f + "/")), None)

    for name in DATASET_PARAMETERS:
        value = params.get(name)
        if not isinstance(value, str) or not value or made(value):
            continue
        if not (repo_path(value) / "manifest.json").is_file():
            writer = next((MAKES[k] for k in MAKES if f"/{k}_" in value), None)
            how = (f"{writer} writes it" if writer else
                   "`make book` builds the default datasets; `inkground synth` / `inkground recorded` others")
            skip = "; -p recorded '\"\"' runs without it" if name == "recorded" else ""
            raise RunCheckError(f"{_where(section, name)}: {value} holds no dataset (no manifest.json under "
                                f"{repo_path(value)}); {how}{skip}")
    for name in RUN_FOLDER_INPUTS:
        values = params.get(name) or []
        for value in values if isinstance(values, (list, tuple)) else [values]:
            if isinstance(value, str) and not made(value) and not repo_path(value).is_dir():
                raise RunCheckError(f"{_where(section, name)}: the run folder {value} does not exist "
                                    f"({repo_path(value)}); section 03 writes it (`make book` or `inkground run 03`)")
    for name in FILE_PARAMETERS:
        value = params.get(name)
        if isinstance(value, str) and value and not repo_path(value).is_file():
            here = Path(value).expanduser().resolve()
            hint = (f"; a relative path is read from the repository root, not the current folder: give "
                    f"{here}" if here.is_file() else "")
            raise RunCheckError(f"{_where(section, name)}: no file {repo_path(value)}{hint}")


def check_locks(section: str, folders) -> None:
    """None of the run folders the section writes is being written by another command (its lock held)."""
    for f in folders:
        if is_locked(repo_path(f)):
            raise RunCheckError(f"section {section}: {f} is being written by another inkground command (its lock "
                                f"{LOCK_FILE} is held); wait for it to finish, or rerun under another --name")
