"""Every docstring example in the library runs and passes, and none disappears unnoticed: the number of
examples per module is compared with the table below. The public metric functions document their formula
(``.. math::``) and carry an example (``>>>``) of their own.

When you add or remove examples on purpose, update ``EXAMPLES`` (``python tests/test_doctests.py`` prints the
table as it is now)."""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
import sys

import pytest

import inkground_lib
from inkground_lib.components.metrics import readability, subsequence_dtw, trajectory
from inkground_lib.components.style import metric as style_metric

EXAMPLES = {
    "inkground_lib.analysis.check_language": 6,
    "inkground_lib.analysis.claims": 1,
    "inkground_lib.analysis.derenderer_modes": 6,
    "inkground_lib.analysis.origins": 6,
    "inkground_lib.analysis.ties": 4,
    "inkground_lib.analysis.tradeoffs": 9,
    "inkground_lib.cli": 1,
    "inkground_lib.components.derenderers.factory": 3,
    "inkground_lib.components.derenderers.tracer.features": 2,
    "inkground_lib.components.metrics.order": 10,
    "inkground_lib.components.metrics.readability": 21,
    "inkground_lib.components.metrics.subsequence_dtw": 6,
    "inkground_lib.components.metrics.trajectory": 41,
    "inkground_lib.components.style.head": 6,
    "inkground_lib.components.style.inputs": 4,
    "inkground_lib.components.style.metric": 4,
    "inkground_lib.components.style.scoring": 2,
    "inkground_lib.components.targets": 2,
    "inkground_lib.core.archive": 1,
    "inkground_lib.core.bootstrap": 4,
    "inkground_lib.core.csv_cells": 2,
    "inkground_lib.core.dataset": 6,
    "inkground_lib.core.earlier_runs": 3,
    "inkground_lib.core.files": 4,
    "inkground_lib.core.ink": 5,
    "inkground_lib.core.manifest_schema": 4,
    "inkground_lib.core.metric_table": 5,
    "inkground_lib.core.parameter_values": 2,
    "inkground_lib.core.registry": 7,
    "inkground_lib.core.repo_paths": 4,
    "inkground_lib.core.rerun_folders": 5,
    "inkground_lib.core.secrets": 15,
    "inkground_lib.core.text": 1,
    "inkground_lib.datasets.recorded_inkml": 1,
    "inkground_lib.datasets.remade": 2,
    "inkground_lib.datasets.segmentation": 1,
    "inkground_lib.evaluation.cost": 15,
    "inkground_lib.evaluation.image_fit": 5,
    "inkground_lib.evaluation.parse": 2,
    "inkground_lib.evaluation.prompt": 2,
    "inkground_lib.evaluation.systems.api": 2,
    "inkground_lib.evaluation.systems.providers": 5,
    "inkground_lib.evaluation.systems.registry": 2,
    "inkground_lib.evaluation.systems.retry": 2,
    "inkground_lib.formats.iamondb_transcriptions": 3,
    "inkground_lib.formats.inksight_canvas": 4,
    "inkground_lib.formats.xmlsafe": 2,
    "inkground_lib.pseudo.derenderer_comparison": 3,
    "inkground_lib.pseudo.raters": 6,
    "inkground_lib.pseudo.tracer_eval": 6,
    "inkground_lib.publish.ci": 2,
    "inkground_lib.publish.citation": 2,
    "inkground_lib.publish.notebook_runner": 3,
    "inkground_lib.publish.parameters_cell": 2,
    "inkground_lib.publish.pdf": 5,
    "inkground_lib.publish.rerun_plan": 9,
    "inkground_lib.publish.results": 4,
    "inkground_lib.publish.run_checks": 1,
    "inkground_lib.report.derenderer_table": 2,
    "inkground_lib.report.escape": 8,
    "inkground_lib.report.evaluation": 2,
    "inkground_lib.report.format": 5,
    "inkground_lib.report.front": 2,
    "inkground_lib.report.legibility": 3,
    "inkground_lib.report.names": 2,
    "inkground_lib.report.player": 2,
    "inkground_lib.report.prose": 18,
    "inkground_lib.report.pseudo_figures": 1,
    "inkground_lib.report.pseudo_labels": 12,
    "inkground_lib.report.table_view": 8,
    "inkground_lib.report.tables": 4,
    "inkground_lib.report.tracer_page": 2,
    "inkground_lib.report.tradeoffs": 3,
}
"""Module -> number of docstring examples (``>>>`` lines) defined in it."""

FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
FORMULA_OPTIONAL = {"normalise_text", "invalid_prediction", "geometry_batch", "normalise"}


def library_modules() -> list[str]:
    """Every module of the package (``__main__`` modules, which run a command when imported, left out)."""
    return sorted(m.name for m in pkgutil.walk_packages(inkground_lib.__path__, "inkground_lib.")
                  if not m.name.endswith(".__main__"))


def module_doctests(name: str) -> list[doctest.DocTest]:
    """The doctests of the objects defined in module ``name`` (not of names it imports)."""
    mod = importlib.import_module(name)
    return [t for t in doctest.DocTestFinder(exclude_empty=True).find(mod, name) if t.examples]


def example_counts() -> dict[str, int]:
    counts = {name: sum(len(t.examples) for t in module_doctests(name)) for name in library_modules()}
    return {k: v for k, v in counts.items() if v}


def test_the_table_names_every_module_with_examples_and_its_count():
    assert example_counts() == EXAMPLES, ("docstring examples appeared or disappeared: compare with "
                                          "`python tests/test_doctests.py` and update EXAMPLES on purpose")


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_docstring_examples_pass(name):
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report: list[str] = []
    tests = module_doctests(name)
    for t in tests:
        runner.run(t, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.attempted == sum(len(t.examples) for t in tests) > 0
    assert result.failed == 0, "".join(report)


def test_a_failing_or_missing_example_is_caught():
    """The two checks can fail: a wrong expected value fails its run, and a dropped example changes the count."""
    src = '''
def f(x):
    """>>> f(2)
    5
    """
    return x + 2
'''
    ns: dict = {"__name__": "fake_module"}
    exec(compile(src, "fake_module", "exec"), ns)
    test = doctest.DocTestParser().get_doctest(ns["f"].__doc__, ns, "f", "fake_module", 0)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test, out=lambda s: None)
    assert runner.summarize(verbose=False).failed == 1
    assert {**EXAMPLES, "inkground_lib.components.metrics.trajectory": 44} != example_counts()


METRIC_MODULES = [trajectory, subsequence_dtw, readability, style_metric]


@pytest.mark.parametrize("module", METRIC_MODULES, ids=lambda m: m.__name__)
def test_public_functions_document_formula_and_example(module):
    functions = [name for name in module.__all__ if inspect.isfunction(getattr(module, name))]
    assert functions, f"{module.__name__}.__all__ lists no functions"
    for name in functions:
        doc = inspect.getdoc(getattr(module, name)) or ""
        assert ">>>" in doc, f"{module.__name__}.{name} has no doctest example"
        if name not in FORMULA_OPTIONAL:
            assert ".. math::" in doc, f"{module.__name__}.{name} has no '.. math::' formula"


@pytest.mark.parametrize("module", METRIC_MODULES, ids=lambda m: m.__name__)
def test_each_public_name_has_its_own_example(module):
    finder = doctest.DocTestFinder()
    for name in module.__all__:
        tests = finder.find(getattr(module, name), name, module=module)
        own = [t for t in tests if t.name == name]
        assert own and own[0].examples, f"{module.__name__}.{name} has no example of its own"


if __name__ == "__main__":
    sys.stdout.write("EXAMPLES = {\n" + "".join(f"    {k!r}: {v},\n" for k, v in example_counts().items()) + "}\n")
