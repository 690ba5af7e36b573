"""The house's proportions (issue 47): no module of the library is over 650 lines, and no function is over ~80
lines but those listed, each of which may shrink or leave the list and none may grow."""
import ast
from pathlib import Path

from inkground_lib.core.layout import ROOT

PACKAGE = ROOT / "inkground_lib"

MAX_MODULE_LINES = 650
MAX_FUNCTION_LINES = 80

LONG_FUNCTIONS: dict[str, int] = {}
"""The functions over :data:`MAX_FUNCTION_LINES` lines (docstring included), each with its length as its ceiling:
split one along its steps and lower its number, or drop it once it fits; never raise one or add one. The 13 of
2026-12-06 have all been split (issue 47), so none is left."""


def module_lengths(package: Path) -> dict[str, int]:
    """Lines of every module of ``package``, by path relative to its parent."""
    return {p.relative_to(package.parent).as_posix(): len(p.read_text("utf-8").splitlines())
            for p in sorted(package.rglob("*.py"))}


def function_lengths(package: Path) -> dict[str, int]:
    """Lines of every function and method of ``package`` (nested ones too), as ``path::qualified.name``."""
    out = {}

    def visit(node, path: str, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    out[f"{path}::{name}"] = child.end_lineno - child.lineno + 1
                visit(child, path, name + ".")
            else:
                visit(child, path, prefix)

    for p in sorted(package.rglob("*.py")):
        visit(ast.parse(p.read_text("utf-8")), p.relative_to(package.parent).as_posix(), "")
    return out


def size_faults(package: Path, long_functions: dict[str, int]) -> list[str]:
    faults = [f"{path}: {n} lines, over {MAX_MODULE_LINES}: split it along its jobs"
              for path, n in module_lengths(package).items() if n > MAX_MODULE_LINES]
    lengths = function_lengths(package)
    for name, n in lengths.items():
        ceiling = long_functions.get(name, MAX_FUNCTION_LINES)
        if n > ceiling:
            faults.append(f"{name}: {n} lines, over its ceiling of {ceiling}: split it along its steps")
    for name, ceiling in long_functions.items():
        if lengths.get(name, 0) <= MAX_FUNCTION_LINES:
            faults.append(f"{name}: listed with {ceiling} lines, now {lengths.get(name, 'gone')}: drop it from "
                          f"LONG_FUNCTIONS so it cannot grow back")
    return faults


def test_modules_and_functions_are_within_their_sizes():
    assert size_faults(PACKAGE, LONG_FUNCTIONS) == []


def test_the_size_check_fails_on_a_long_module_a_long_function_and_a_stale_entry(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "long.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    body = "".join(f"    y{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    (pkg / "fn.py").write_text(f"def f():\n{body}\n\nclass C:\n    def m(self):\n        pass\n")
    faults = size_faults(pkg, {"pkg/fn.py::C.m": 90})
    assert len(faults) == 3
    assert faults[0].startswith("pkg/long.py: 651 lines")
    assert faults[1].startswith("pkg/fn.py::f: 81 lines, over its ceiling of 80")
    assert faults[2].startswith("pkg/fn.py::C.m: listed with 90 lines, now 2")
    assert size_faults(pkg, {"pkg/fn.py::f": 81})[1:] == []
