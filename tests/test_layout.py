"""The house: layers point one way, no import cycles, the package installs whole, the notebooks' literal
defaults mirror the library's constants, and the README's map of where to change things is true."""
import ast
import dataclasses
import inspect
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inkground_lib.core import defaults, layout
from inkground_lib.core.layout import ROOT

PACKAGE = ROOT / "inkground_lib"

LAYERS = ("core", "formats", "datasets", "components", "pseudo", "evaluation", "analysis", "report",
          "rate", "pipelines", "publish", "cli")
"""Bottom to top: a module may import its own layer and the layers before it, never a later one. The last four
hold the commands: the raters' web app, the paper-scale pipeline, publishing the book, and the CLI over them."""

GENERATED_NAMES = ("build", "dist", "out")
"""Folder names that tools treat as generated output (pytest's norecursedirs, Black's excludes, GitHub's Python
.gitignore): no folder of the package may carry one."""


def module_name(path: Path, package_root: Path) -> str:
    rel = path.relative_to(package_root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imported_modules(source: str, module: str, is_package: bool) -> set[str]:
    """Every inkground_lib module ``module`` imports, at top level or inside functions (relative imports
    resolved; ``from pkg import name`` counts as importing ``pkg.name`` when that is a module)."""
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "inkground_lib")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "inkground_lib":
                continue
            out.add(target)
            out.update(f"{target}.{a.name}" for a in node.names)
    return out


def import_graph(package_root: Path) -> dict[str, set[str]]:
    files = {module_name(p, package_root): p for p in sorted(package_root.rglob("*.py"))}
    graph = {}
    for mod, path in files.items():
        deps = imported_modules(path.read_text("utf-8"), mod, path.name == "__init__.py")
        graph[mod] = {d for d in deps if d in files and d != mod}
    return graph


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else None


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Imports from a module to a module of a later layer; and any module outside the layers (other than
    the package's own __init__) is itself a violation: everything lives in a layer."""
    bad = []
    for mod, deps in sorted(graph.items()):
        mine = layer_of(mod)
        if mine is None:
            if mod != "inkground_lib":
                bad.append(f"{mod} is in no layer ({', '.join(LAYERS)})")
            continue
        for d in sorted(deps):
            theirs = layer_of(d)
            if theirs is not None and theirs > mine:
                bad.append(f"{mod} ({LAYERS[mine]}) imports {d} ({LAYERS[theirs]})")
    return bad


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), i.e. import cycles."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_every_module_imports_only_its_own_and_lower_layers():
    graph = import_graph(PACKAGE)
    assert len(graph) > 40
    assert layer_violations(graph) == []


def test_no_import_cycle():
    assert cycles(import_graph(PACKAGE)) == []


def test_the_layer_check_fails_on_a_wrong_import(tmp_path):
    """A deliberately upward import (core -> pseudo, inside a function) and a cycle are both caught."""
    pkg = tmp_path / "inkground_lib"
    for sub in ("core", "pseudo"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "core" / "ink.py").write_text("def f():\n    from inkground_lib.pseudo.run import x\n")
    (pkg / "pseudo" / "run.py").write_text("from inkground_lib.core import ink\nx = 1\n")
    graph = import_graph(pkg)
    assert layer_violations(graph) == ["inkground_lib.core.ink (core) imports inkground_lib.pseudo.run (pseudo)"]
    assert cycles(graph) == [["inkground_lib.core.ink", "inkground_lib.pseudo.run"]]
    (pkg / "stray.py").write_text("")
    assert "inkground_lib.stray is in no layer" in layer_violations(import_graph(pkg))[-1]


def generated_looking_folders(package_root: Path) -> list[str]:
    """Folders under ``package_root`` (at any depth) named like generated output, as paths relative to it."""
    return sorted(str(p.relative_to(package_root)) for p in package_root.rglob("*")
                  if p.is_dir() and p.name.lower() in GENERATED_NAMES)


def test_no_package_folder_is_named_like_generated_output(tmp_path):
    assert generated_looking_folders(PACKAGE) == []
    for folder in ("core", "core/out", "build", "publish/dist", "publish/distribution"):
        (tmp_path / folder).mkdir(parents=True)
    assert generated_looking_folders(tmp_path) == ["build", "core/out", "publish/dist"]


def test_public_api_names_resolve():
    import inkground_lib

    for name in inkground_lib.__all__:
        assert getattr(inkground_lib, name) is not None, name
    assert callable(inkground_lib.dtw) and callable(inkground_lib.load_dataset)
    with pytest.raises(AttributeError):
        inkground_lib.no_such_name  # noqa: B018


@pytest.mark.slow
def test_non_editable_install_ships_every_subpackage_and_the_registry(tmp_path):
    """pip installs the package (not editable) into a temporary folder; from there every subpackage imports
    and the systems registry (package data) loads."""
    target = tmp_path / "site"
    # build from a copy: setuptools writes build/ and *.egg-info beside the sources it builds
    src = tmp_path / "src"
    shutil.copytree(PACKAGE, src / PACKAGE.name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "-q",
                    "--target", str(target), str(src)], check=True, capture_output=True)
    assert not (ROOT / "build").exists(), "the install wrote build/ into the repository"
    subpackages = sorted(module_name(p, PACKAGE) for p in PACKAGE.rglob("__init__.py"))
    code = ("import importlib, inkground_lib\n"
            f"assert inkground_lib.__file__.startswith({str(target)!r}), inkground_lib.__file__\n"
            f"for m in {subpackages!r}: importlib.import_module(m)\n"
            "from inkground_lib.evaluation.systems.registry import load_registry\n"
            "reg = load_registry(use_env=False)\n"
            "assert 'gemini-3.1-pro' in reg and 'skeleton' in reg, sorted(reg)\n"
            "print(len(reg))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env={"PYTHONPATH": str(target), "PATH": ""},
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout.strip()) >= 5


def notebook_defaults(name: str) -> dict:
    nb = json.loads((layout.NOTEBOOKS / name).read_text("utf-8"))
    cell = next(c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    out = {}
    for node in ast.parse("".join(cell["source"])).body:
        if isinstance(node, ast.Assign):
            out[node.targets[0].id] = ast.literal_eval(node.value)
        elif isinstance(node, ast.AnnAssign):  # e.g. raters_per_pair: Union[int, list] = 2
            out[node.target.id] = ast.literal_eval(node.value)
    return out


def _default(func, name):
    return inspect.signature(func).parameters[name].default


def _field(cls, name):
    return next(f.default for f in dataclasses.fields(cls) if f.name == name)


def notebook_mirrors() -> dict[str, dict]:
    """Every parameter of every section notebook -> the library default it mirrors, or NOTEBOOK_OWN where it
    is a presentation choice of the notebook itself (how many examples to draw)."""
    from inkground_lib.analysis.tradeoffs import analyse
    from inkground_lib.evaluation.settings import EvalSettings
    from inkground_lib.pseudo.raters import RaterModel
    from inkground_lib.pseudo.run import run_pseudo_labels

    return {
        "01_dataset_statistics.ipynb": {"dataset": layout.SYNTH_DATASET, "recorded": layout.RECORDED_DATASET,
                                        "example_pages": NOTEBOOK_OWN},
        "02_pseudo_labels.ipynb": {
            "candidates": layout.SYNTH_DATASET, "run_dir": layout.PSEUDO_RUN,
            "derenderer": _default(run_pseudo_labels, "derenderer"), "ocr_engine": _default(run_pseudo_labels, "ocr"),
            "compare_derenderers": list(defaults.COMPARED_DERENDERERS), "recorded": layout.RECORDED_DATASET,
            "ocr_threshold": _default(run_pseudo_labels, "ocr_threshold"),
            "ratings": _default(run_pseudo_labels, "ratings"), "n_raters": _default(run_pseudo_labels, "n_raters"),
            "allow_partial_ratings": _default(run_pseudo_labels, "allow_partial_ratings"),
            "raters_per_pair": _default(run_pseudo_labels, "raters_per_pair"),
            "strictness_mean": _field(RaterModel, "strictness_mean"),
            "strictness_sd": _field(RaterModel, "strictness_sd"), "rater_noise_sd": _field(RaterModel, "noise_sd"),
            "rater_tau": _field(RaterModel, "tau"), "score_step": _field(RaterModel, "score_step"),
            "chamfer_tol": _field(RaterModel, "chamfer_tol"),
            "n_candidates": _default(run_pseudo_labels, "n_candidates"), "seed": _default(run_pseudo_labels, "seed"),
            "example_words": NOTEBOOK_OWN},
        "03_model_evaluation.ipynb": {
            "benchmark": layout.BENCHMARK, "recorded": layout.RECORDED_DATASET, "bench_run": layout.BENCH_EVAL_RUN,
            "recorded_run": layout.RECORDED_EVAL_RUN, "systems": list(defaults.BOOK_SYSTEMS),
            "ocr_engine": _field(EvalSettings, "ocr_engine"), "spacing": _field(EvalSettings, "spacing"),
            "grid": _field(EvalSettings, "grid"), "n_boot": _field(EvalSettings, "n_boot"),
            "seed": _field(EvalSettings, "seed")},
        "04_tradeoffs.ipynb": {
            "eval_runs": layout.EVAL_RUNS, "datasets": _default(analyse, "datasets"),
            "reference": _default(analyse, "reference"), "n_boot": _default(analyse, "n_boot"),
            "seed": _default(analyse, "seed"), "spacings": list(_default(analyse, "spacings")),
            "ocr_engines": list(_default(analyse, "ocr_engines"))},
    }


NOTEBOOK_OWN = object()


def test_every_notebook_parameter_equals_the_library_default_it_mirrors():
    """Papermill needs literal defaults in each parameter cell; each must equal the library default it mirrors
    (the constant, the function's default or the dataclass field), and a new parameter must say which."""
    for name, expected in notebook_mirrors().items():
        got = notebook_defaults(name)
        assert sorted(got) == sorted(expected), f"{name}: parameters {sorted(set(got) ^ set(expected))} are " \
                                                f"not in notebook_mirrors (say which library default each mirrors)"
        for key, value in expected.items():
            if value is not NOTEBOOK_OWN:
                assert got[key] == value, f"{name}: parameter {key} = {got[key]!r}, library default {value!r}"


# What each definition the README's "Where to change" map names must contain: one or more regular expressions
# that the named function, class or constant's own source matches (so a row that points at a function which no
# longer holds the definition fails). A new row needs an entry here.
MAP_DEFINITIONS = {
    "inkground_lib/components/metrics/trajectory_kernels.py::_dtw_chamfer":
        [r"_local_cost\(xi, yi, R\[j, 0\], R\[j, 1\]\)", r"d = prev\[j\]", r"u = prev\[j \+ 1\]",
         r"b if b < left else left", r"left = b \+ c", r"colmin\[j\] = c if c < cm else cm"],
    "inkground_lib/components/metrics/trajectory_kernels.py::_scores":
        [r"d / R\.shape\[0\]", r"0\.5 \* \(rs / P\.shape\[0\] \+ cs / R\.shape\[0\]\)"],
    "inkground_lib/components/metrics/trajectory_kernels.py::_frame": [r"h = y1 - y0", r"x0 = x", r"y0 = y"],
    "inkground_lib/components/metrics/trajectory_kernels.py::_stroke_fill":
        [r"math\.ceil\(total / spacing\)", r"\(px - x0\) / h"],
    "inkground_lib/components/metrics/readability.py::EditCounts":
        [r"\(self\.N - self\.S - self\.D - self\.I\) / self\.N", r"\(self\.N - self\.S - self\.D\) / self\.N"],
    "inkground_lib/components/metrics/readability.py::edit_counts": [r"Levenshtein\.editops\("],
    "inkground_lib/components/metrics/readability.py::normalise_text":
        [r'unicodedata\.normalize\("NFC"', r"\.casefold\(\)"],
    "inkground_lib/components/style/metric.py::true_writer_probability": [r"softmax_rows\(z\)\[np\.arange"],
    "inkground_lib/components/derenderers/factory.py::DERENDERERS":
        [r'"skeleton": Derenderer\(', r'"tracer-recognize": Derenderer\(', r"Card\("],
    "inkground_lib/components/ocr/factory.py::ENGINES": [r'"rapidocr": Engine\(', r'"deepseek-ocr": Engine\(',
                                                        r'"tesseract": Engine\(', r"Card\("],
    "inkground_lib/core/manifest_schema.py::manifest_schema": [r'"required"', r'"properties"', r'"pages"'],
    "inkground_lib/evaluation/prompt.py::instructions": [r"<strokes>", r"<points>"],
    "inkground_lib/evaluation/systems/systems.yaml": [r"(?m)^gemini-3\.1-pro:", r"(?m)^skeleton:"],
    "inkground_lib/evaluation/systems/registry.py::ADAPTERS": [r'"openai"', r'"anthropic"'],
    "inkground_lib/core/metric_table.py::METRICS": [r'"dtw": Metric\("dtw"', r'"ar": Metric\("ar"', r'"style": Metric\('],
    "inkground_lib/core/defaults.py::OCR_THRESHOLD": [r"OCR_THRESHOLD = 0\.85"],
    "inkground_lib/core/layout.py::PSEUDO_RUN": [r'PSEUDO_RUN = "data/runs/'],
    "inkground_lib/core/run_files.py::scores_csv": [r'f"scores-\{reference\}\.csv"'],
    "inkground_lib/analysis/check_language.py::evaluate_check": [r"ast\.parse\("],
    "inkground_lib/report/dataset_stats.py::fig_dataset_histograms": [r"plt\.figure\("],
    "inkground_lib/report/pseudo_figures.py::fig_example_pairs": [r"plt\.subplots\("],
    "inkground_lib/report/evaluation.py::fig_galleries": [r"plt\.figure\(", r"subfigures\("],
    "inkground_lib/report/tradeoffs.py::fig_tradeoffs": [r"plt\.subplots\(|plt\.figure\("],
    "inkground_lib/report/legibility.py::FIGURE_WIDTH_IN": [r"FIGURE_WIDTH_IN = \d"],
}


def readme_map_refs() -> list[str]:
    """The `path::name` (or `path`) each row of the README's "Where to change" table sends a reader to."""
    text = (ROOT / "README.md").read_text("utf-8")
    section = text.split("### Where to change", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    rows = [r for r in section.splitlines() if r.startswith("|") and "`" in r]
    return [re.findall(r"`([^`]+)`", row.rsplit("|", 2)[-2])[0] for row in rows]


def definition_source(path: Path, name: str) -> str | None:
    """The source of the top-level function, class or assigned constant ``name`` in ``path`` (None: absent)."""
    src = path.read_text("utf-8")
    for node in ast.parse(src).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return ast.get_source_segment(src, node)
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return ast.get_source_segment(src, node)
    return None


def map_faults(refs: list[str], definitions: dict[str, list[str]], root: Path = ROOT) -> list[str]:
    faults = []
    for ref in refs:
        path, _, name = ref.partition("::")
        if ref not in definitions:
            faults.append(f"README row {ref}: no entry in MAP_DEFINITIONS (say what the definition contains)")
            continue
        if not (root / path).is_file():
            faults.append(f"README names {path}, which does not exist")
            continue
        src = definition_source(root / path, name) if name else (root / path).read_text("utf-8")
        if src is None:
            faults.append(f"README names {name} in {path}, which defines no such function, class or constant")
            continue
        faults += [f"{ref} does not contain {pat!r}" for pat in definitions[ref] if not re.search(pat, src)]
    return faults


def test_readme_map_names_the_function_that_holds_each_definition():
    refs = readme_map_refs()
    assert len(refs) >= 15
    assert map_faults(refs, MAP_DEFINITIONS) == []
    assert sorted(MAP_DEFINITIONS) == sorted(refs), "MAP_DEFINITIONS lists a row the README no longer has"


def test_the_map_check_fails_when_a_row_points_at_the_wrong_function():
    """DTW's recurrence named at dtw (a wrapper that only calls the kernel) instead of _dtw_chamfer is caught."""
    ref = "inkground_lib/components/metrics/trajectory.py::dtw"
    wrong = {ref: MAP_DEFINITIONS["inkground_lib/components/metrics/trajectory_kernels.py::_dtw_chamfer"]}
    assert map_faults([ref], wrong) and all("does not contain" in f for f in map_faults([ref], wrong))
    assert "no such function" in map_faults(["inkground_lib/core/defaults.py::NO_SUCH"],
                                            {"inkground_lib/core/defaults.py::NO_SUCH": ["x"]})[0]


def readme_layout_block() -> str:
    text = (ROOT / "README.md").read_text("utf-8")
    return text.split("    inkground_lib/\n", 1)[1].split("\n\n", 1)[0]


def layout_faults(block: str, package: Path = PACKAGE) -> list[str]:
    """Modules of ``package`` that the README's layout list leaves out: each subpackage of the top level has a
    line (and its continuation lines) in the list, where every module and sub-subpackage of it is named."""
    entries: dict[str, str] = {}
    current = None
    for line in block.splitlines():
        m = re.match(r"^      ([a-z_]+)/\s", line)
        if m:
            current = m.group(1)
            entries[current] = line
        elif current:
            entries[current] += " " + line
    faults = []
    for sub in sorted(p for p in package.iterdir() if (p / "__init__.py").is_file()):
        words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", entries.get(sub.name, "")))
        if sub.name not in entries:
            faults.append(f"{sub.name}/ has no line in the README's layout list")
            continue
        for p in sorted(sub.rglob("*.py")):
            name = p.parent.name if p.stem in ("__init__", "__main__") else p.stem
            if name not in words:
                faults.append(f"{p.relative_to(package.parent)} is not named on the {sub.name}/ line")
    return sorted(set(faults))


def test_readme_layout_list_names_every_module():
    assert layout_faults(readme_layout_block()) == []


def test_the_layout_check_fails_on_a_module_left_out():
    block = readme_layout_block()
    dropped = set(layout_faults(block.replace("parallel,", ""))) - set(layout_faults(block))
    assert dropped == {"inkground_lib/core/parallel.py is not named on the core/ line"}
