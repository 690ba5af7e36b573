"""The house: layers point one way, no import cycles, the package installs whole, the notebooks' literal
defaults mirror the library's constants, and the README's map of where to change things is true."""
import ast
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


def test_notebook_parameter_cells_mirror_the_library_constants():
    """Papermill needs literal defaults in each parameter cell; each must equal the constant it mirrors."""
    mirrors = {
        "01_dataset_statistics.ipynb": {"dataset": layout.SYNTH_DATASET, "recorded": layout.RECORDED_DATASET},
        "02_pseudo_labels.ipynb": {"candidates": layout.SYNTH_DATASET, "run_dir": layout.PSEUDO_RUN,
                                   "ocr_threshold": defaults.OCR_THRESHOLD, "n_raters": defaults.N_RATERS,
                                   "raters_per_pair": defaults.RATERS_PER_PAIR},
        "03_model_evaluation.ipynb": {"benchmark": layout.BENCHMARK, "recorded": layout.RECORDED_DATASET,
                                      "bench_run": layout.BENCH_EVAL_RUN, "recorded_run": layout.RECORDED_EVAL_RUN,
                                      "spacing": defaults.SPACING, "grid": defaults.GRID,
                                      "n_boot": defaults.N_BOOT},
        "04_tradeoffs.ipynb": {"eval_runs": layout.EVAL_RUNS, "n_boot": defaults.N_BOOT},
    }
    for name, expected in mirrors.items():
        got = notebook_defaults(name)
        for key, value in expected.items():
            assert got[key] == value, f"{name}: parameter {key} = {got[key]!r}, library constant {value!r}"


def test_readme_map_of_where_to_change_things_points_at_real_places():
    """Every path in the README's "Where to change" table exists, and every `module.NAME` it names is
    defined there."""
    text = (ROOT / "README.md").read_text("utf-8")
    section = text.split("### Where to change", 1)[1].split("\n## ", 1)[0]
    rows = [r for r in section.splitlines() if r.startswith("|") and "`" in r]
    assert len(rows) >= 5
    for row in rows:
        for ref in re.findall(r"`([^`]+)`", row):
            path, _, name = ref.partition("::")
            assert (ROOT / path).exists(), f"README names {path}, which does not exist"
            if name:
                src = (ROOT / path).read_text("utf-8")
                assert re.search(rf"^(?:def |class |){re.escape(name)}\b", src, re.M), f"{name} not in {path}"
