"""What is checked before a section runs: one check for ``inkground run``, ``make book``, papermill and JupyterLab.

:func:`check_section` is the function they share: ``inkground run`` calls it for every section of its chain
before the first notebook starts, and each notebook calls it in its first code cell after the parameters
(:func:`inkground_lib.publish.notebook_start.start_run`), before any folder exists. It checks

* the **names** of the parameters (each one the notebook's parameters cell declares);
* their **types** (:func:`parameter_kinds`: the annotation in the parameters cell, else the type of its
  default), a list's elements too (:func:`element_kinds`), and the **ranges** of numbers (:data:`PARAMETER_RANGES`);
* the **meaning** of values that name something (:data:`NAMED`): systems (the registry), derenderers, OCR
  engines, the reference a score is computed against, the shape of ``raters_per_pair`` and of ``datasets`` (one
  folder per ``eval_runs`` folder);
* the **inputs** the section reads: datasets, an earlier section's run folders, a ratings file.

:func:`check_locks` adds that no other command is writing the folders a run writes. Each problem is one line
(:class:`RunCheckError`) naming the section, the parameter, the value and what would be accepted, with a hint
in the terms of the way the run was started (``how``: ``"cli"`` for ``-p NAME VALUE``, ``"notebook"`` for a
parameters cell or papermill's ``-p`` / ``-y``).

This module imports only the standard library and inkground_lib's core at its top; the registry, the OCR and
derenderer factories are imported when a parameter naming one of them is checked (about a second), so a
notebook's answer comes within seconds of its kernel's start."""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from pathlib import Path

from inkground_lib.core.folders import LOCK_FILE, is_locked
from inkground_lib.core.repo_paths import repo_path
from inkground_lib.core.run_files import REFERENCES
from inkground_lib.publish.parameters_cell import notebook_parameters, section_notebooks


class RunCheckError(ValueError):
    """A section run refused before it starts (one line: section, parameter, value, what is accepted)."""


# ------------------------------------------------------------------------------------------- types and ranges

TYPE_NAMES = {"bool": "bool", "int": "int", "float": "float", "str": "str", "list": "list", "List": "list",
              "Sequence": "list", "tuple": "list", "Tuple": "list", "dict": "dict", "Dict": "dict",
              "Mapping": "dict", "None": "None", "NoneType": "None", "Any": "any", "object": "any"}
"""Annotation names (``name: Union[int, list] = 2`` in a parameters cell) -> the kinds of value accepted."""


@dataclass(frozen=True)
class Range:
    """The values a numeric parameter may take: ``low`` <= value (``<`` when ``low_open``) and value <= ``high``
    (None: no bound), and finite. A list parameter's range applies to each of its elements."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False

    def holds(self, v) -> bool:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return True  # not a number: the type check decides
        if not math.isfinite(v):
            return False
        if self.low is not None and (v <= self.low if self.low_open else v < self.low):
            return False
        return self.high is None or v <= self.high

    def text(self) -> str:
        """The range as the error message states it: "in [0, 1]", ">= 1", "> 0"."""
        if self.low is not None and self.high is not None:
            return f"in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}]"
        if self.low is not None:
            return f"{'>' if self.low_open else '>='} {self.low:g}"
        return f"<= {self.high:g}" if self.high is not None else "any finite number"


PARAMETER_RANGES = {
    "ocr_threshold": Range(0, 1),  # a share of a page's words
    "example_pages": Range(0), "example_words": Range(0),  # how many examples to draw
    "n_raters": Range(1), "raters_per_pair": Range(1), "n_candidates": Range(1),
    "strictness_mean": Range(0, low_open=True), "strictness_sd": Range(0), "rater_noise_sd": Range(0),
    "rater_tau": Range(0), "score_step": Range(0, low_open=True), "chamfer_tol": Range(0),
    "seed": Range(0),  # numpy's generators take seeds >= 0
    "n_boot": Range(1), "grid": Range(1),
    "spacing": Range(0, low_open=True), "spacings": Range(0, low_open=True),  # word heights
}
"""The range of each numeric section parameter (every section uses a name in one sense), checked with the
types before a notebook starts (:func:`check_section`); the library checks them again where they are used."""


def _annotation_kinds(node) -> set[str] | None:
    """The kinds an annotation's AST accepts (``Optional[X]``, ``Union[X, Y]``, ``X | Y``, ``list[str]``...);
    None when a name is not one of :data:`TYPE_NAMES`."""
    if isinstance(node, ast.Constant) and node.value is None:
        return {"None"}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _annotation_kinds(node.left), _annotation_kinds(node.right)
        return None if left is None or right is None else left | right
    if isinstance(node, ast.Subscript):
        outer = node.value.attr if isinstance(node.value, ast.Attribute) else getattr(node.value, "id", None)
        if outer in ("Optional", "Union"):
            parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            kinds = [_annotation_kinds(p) for p in parts]
            if any(k is None for k in kinds):
                return None
            return set().union(*kinds) | ({"None"} if outer == "Optional" else set())
        return _annotation_kinds(node.value)
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
    return {TYPE_NAMES[name]} if name in TYPE_NAMES else None


def parameter_kinds(default: str | None, annotation: str | None = None) -> set[str]:
    """The kinds of value a notebook parameter accepts: from its annotation where the parameters cell gives
    one (``raters_per_pair: Union[int, list] = 2``), else from the type of its default (``default`` is the
    source text, e.g. ``"0.85"``). Kinds: bool, int, float (int accepted too), str, list (a list or tuple),
    dict, None; ``any`` for a None default or a default that is not a literal."""
    if annotation and annotation != "None":
        try:
            kinds = _annotation_kinds(ast.parse(annotation, mode="eval").body)
        except SyntaxError:
            kinds = None
        if kinds:
            return kinds
    try:
        value = ast.literal_eval(default) if default is not None else None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return {"any"}
    if value is None:
        return {"any"}
    return {TYPE_NAMES.get(type(value).__name__, "any")}


def element_kinds(default: str | None, annotation: str | None = None) -> set[str] | None:
    """The kinds a list parameter's elements accept: from its annotation's element type where it gives one
    (``list[str] | None``), else from its default's elements (``[0.02, 0.1]``: float; ``["rapidocr"]``: str);
    None when neither says (no list, an empty list, ``Union[int, list]``). Kinds as :func:`parameter_kinds`.

    >>> element_kinds("[0.02, 0.1]"), element_kinds("None", "list[str] | None"), element_kinds("2", "Union[int, list]")
    ({'float'}, {'str'}, None)
    """
    if annotation:
        try:
            tree = ast.parse(annotation, mode="eval")
        except SyntaxError:
            tree = None
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Tuple):
                outer = node.value.attr if isinstance(node.value, ast.Attribute) else getattr(node.value, "id", None)
                if TYPE_NAMES.get(outer) == "list":
                    return _annotation_kinds(node.slice)
    try:
        value = ast.literal_eval(default) if default is not None else None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(value, (list, tuple)) or not value:
        return None
    kinds = {value_kind(v) for v in value}
    return {"float"} if kinds == {"int", "float"} else kinds


def value_kind(value) -> str:
    """The kind of a value, in the terms of :func:`parameter_kinds`."""
    if value is None:
        return "None"
    if isinstance(value, (list, tuple)):
        return "list"
    return TYPE_NAMES.get(type(value).__name__, type(value).__name__)


def accepts(kinds: set[str], value) -> bool:
    """Whether a value of a parameter accepting ``kinds`` (see :func:`parameter_kinds`) may be ``value``:
    bool and int are told apart; an int is accepted where a float is."""
    kind = value_kind(value)
    return "any" in kinds or kind in kinds or (kind == "int" and "float" in kinds)


# ---------------------------------------------------------------------------------------------- the hints

HOW = ("cli", "notebook")
"""The ways a section's values are given: ``inkground run -p NAME VALUE`` (YAML), or a notebook (its
parameters cell in JupyterLab, papermill's ``-p NAME VALUE`` / ``-y 'NAME: YAML'``)."""


def _looks_like_list(text: str) -> bool:
    return text.strip().startswith("[") and text.strip().endswith("]")


def _type_hint(name: str, value, kinds: set[str], how: str) -> str:
    """How to give a value of the right type, in the terms of the way the run was started."""
    if how == "cli":
        if kinds == {"str"} and isinstance(value, (bool, int, float)):
            return (f"; on the command line, quote a text that would read as a number or boolean: "
                    f"-p {name} '\"{value}\"'")
        return ""
    if "list" in kinds and isinstance(value, str) and _looks_like_list(value):
        q = '"' if "'" in value else "'"
        return (f"; papermill's -p passes a list as text: give it in YAML with -y {q}{name}: {value}{q} (in "
                f"JupyterLab, write the list without quotes in the parameters cell)")
    if isinstance(value, str) and kinds & {"int", "float"}:
        return f"; write the number without quotes ({name} = {value}; papermill: -p {name} {value})"
    return ""


# ------------------------------------------------------------------------------------------ names and values

def _systems(values) -> tuple[list[str], list[str]]:
    from inkground_lib.evaluation.systems.registry import load_registry  # the registry: these sections only

    known = list(load_registry())
    return [v for v in values if v not in known], known


def _ocr_engines(values) -> tuple[list[str], list[str]]:
    from inkground_lib.components.ocr.factory import engine_names

    return [v for v in values if v not in engine_names()], engine_names()


def _derenderers(values) -> tuple[list[str], list[str]]:
    from inkground_lib.components.derenderers.factory import derenderer_names, parse_derenderer

    bad = []
    for v in values:
        try:
            parse_derenderer(v)
        except ValueError:  # an unknown name (UnknownComponent), a missing or an unexpected argument (DerenderError)
            bad.append(v)
    return bad, derenderer_names()


def _references(values) -> tuple[list[str], list[str]]:
    return [v for v in values if v not in REFERENCES], list(REFERENCES)


NAMED = {"systems": ("system", _systems), "ocr_engine": ("OCR engine", _ocr_engines),
         "ocr_engines": ("OCR engine", _ocr_engines), "derenderer": ("derenderer", _derenderers),
         "compare_derenderers": ("derenderer", _derenderers), "reference": ("reference", _references)}
"""The parameters whose values name something: {parameter: (what a value names, check(values) -> (unknown
values, the valid names))}. A value is one name or a list of names."""

MORE_NAMES = {"system": " (more in a file named by $INKGROUND_SYSTEMS)",
              "derenderer": " (tracer-* take other weights after a colon)"}


def _where(section: str, name: str) -> str:
    return f"section {section}: parameter {name}"


def check_meanings(section: str, params: dict) -> None:
    """The names a value gives (:data:`NAMED`), the shapes of ``raters_per_pair`` and ``datasets`` (``params``:
    every parameter the notebook will run with, or only the given ones)."""
    for name, (what, check) in NAMED.items():
        if name not in params or params[name] is None:
            continue
        values = params[name] if isinstance(params[name], (list, tuple)) else [params[name]]
        unknown, known = check([v for v in values])
        if unknown:
            s = "s" if len(unknown) > 1 else ""
            raise RunCheckError(f"{_where(section, name)}: unknown {what}{s} {', '.join(map(repr, unknown))}; "
                                f"known {what}s: {', '.join(known)}{MORE_NAMES.get(what, '')}")
    runs, datasets = params.get("eval_runs"), params.get("datasets")
    if isinstance(datasets, (list, tuple)) and isinstance(runs, (list, tuple)) and len(datasets) != len(runs):
        raise RunCheckError(f"{_where(section, 'datasets')}: {len(datasets)} dataset folder(s) for {len(runs)} "
                            f"eval_runs; give one per run folder, in the same order, or None (each run's own)")
    rpp = params.get("raters_per_pair")
    if isinstance(rpp, (list, tuple)) and not (len(rpp) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                                    for v in rpp) and 1 <= rpp[0] <= rpp[1]):
        raise RunCheckError(f"{_where(section, 'raters_per_pair')}: {list(rpp)!r} is not a whole number >= 1 or a "
                            f"pair [min, max] with 1 <= min <= max (e.g. -p raters_per_pair '[2, 3]')")


def _one_line(text: str) -> str:
    """A default as a one-line message quotes it (a long list is written over several lines in its cell)."""
    return " ".join(text.split())


def check_values(section: str, params: dict, how: str = "cli", notebook: Path | None = None) -> None:
    """Names, types and ranges of ``params`` (any subset of section ``section``'s parameters, read from
    ``notebook``: default the section's notebook under notebooks/)."""
    nb = Path(notebook) if notebook is not None else section_notebooks().get(section)
    if nb is None:
        raise RunCheckError(f"no section {section!r}; sections are: {', '.join(section_notebooks())}")
    declared = {p.name: p for p in notebook_parameters(nb)}
    where = f"section {section} ({nb.name})"
    unknown = sorted(set(params) - set(declared))
    if unknown:
        raise RunCheckError(f"{where} has no parameter {', '.join(map(repr, unknown))}; valid parameters: "
                            f"{', '.join(f'{k} (default {_one_line(p.default_text)})' for k, p in declared.items())}")
    for name, value in params.items():
        p = declared[name]
        default = _one_line(p.default_text)
        kinds = parameter_kinds(p.default_text, p.annotation)
        if not accepts(kinds, value):
            raise RunCheckError(
                f"{where}: parameter {name}: the value {value!r:.80} has type {value_kind(value)}, expected "
                f"{' or '.join(sorted(kinds))} (the default is {default}){_type_hint(name, value, kinds, how)}")
        elements = element_kinds(p.default_text, p.annotation) if isinstance(value, (list, tuple)) else None
        bad = [v for v in value if not accepts(elements, v)] if elements else []
        if bad:
            hint = "; write the list's numbers without quotes" if isinstance(bad[0], str) and \
                elements & {"int", "float"} else ""
            raise RunCheckError(
                f"{where}: parameter {name}: the element {bad[0]!r:.80} of {list(value)!r:.80} has type "
                f"{value_kind(bad[0])}, expected {' or '.join(sorted(elements))} (the default is {default}){hint}")
    for name, value in params.items():
        rng = PARAMETER_RANGES.get(name)
        values = value if isinstance(value, (list, tuple)) else [value]
        bad = [v for v in values if rng is not None and not rng.holds(v)]
        if bad:
            what = "the value" if values is not value else f"the element {bad[0]!r} of"
            raise RunCheckError(
                f"{where}: parameter {name}: {what} {value!r:.80} is outside its range: {name} must be "
                f"{rng.text()}{' (each element)' if values is value else ''} (the default is "
                f"{_one_line(declared[name].default_text)})")


# ---------------------------------------------------------------------------------------------- the inputs

DATASET_PARAMETERS = ("dataset", "candidates", "benchmark", "recorded", "datasets")
"""Parameters naming a dataset folder (or a list of them: ``datasets``) a section reads (``""`` skips an
optional one: ``recorded``)."""

RUN_FOLDER_INPUTS = ("eval_runs",)
"""Parameters naming run folders an earlier section wrote, which a section reads."""

FILE_PARAMETERS = ("ratings",)
"""Parameters naming a file a section reads (None: not used)."""

MAKES = {"02": "section 02 (`make book`, or `inkground run 02` with the same parameters)",
         "03": "section 03 (`make book`, or `inkground run 03`)"}


def check_inputs(section: str, params: dict, made_here: dict[str, str] | None = None) -> None:
    """The folders and files the section reads exist (``params``: every parameter it runs with; relative paths
    are under the repository root). ``made_here``: {repo-relative folder: section} for the folders an earlier
    section of the same command writes (not checked: they do not exist yet)."""
    made_here = made_here or {}

    def made(path: str) -> str | None:
        return next((s for f, s in made_here.items() if path == f or path.startswith(f + "/")), None)

    for name in DATASET_PARAMETERS:
        given = params.get(name)
        for value in given if isinstance(given, (list, tuple)) else [given]:
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


# ----------------------------------------------------------------------------------------------- the check

def check_section(section: str, params: dict, defaults: dict | None = None, *, how: str = "cli",
                  made_here: dict[str, str] | None = None, inputs: bool = True) -> None:
    """The one check of a section's parameters before it runs (see the module doc): the names, types and
    ranges of the given ``params``, then the meaning of every value the section will run with (``defaults``
    overridden by ``params``; default: the parameters cell's) and, with ``inputs``, the inputs it reads.
    RunCheckError (one line) for the first problem."""
    check_values(section, params, how)
    if defaults is None:
        nb = section_notebooks()[section]
        defaults = {p.name: p.default for p in notebook_parameters(nb)}
    effective = {**defaults, **params}
    check_meanings(section, effective)
    if inputs:
        check_inputs(section, effective, made_here)
