"""The docstring examples of the metric modules (trajectory, readability, Style), core.text and core.secrets
run and pass; the public metric functions document their formula (``.. math::``) and carry an example
(``>>>``)."""

from __future__ import annotations

import doctest
import inspect

import pytest

from inkground_lib.components.metrics import readability, trajectory
from inkground_lib.components.style import metric as style_metric
from inkground_lib.core import secrets, text

# module -> number of public names that carry doctest examples (each has at least one example, so
# removing the examples of a name drops ``attempted`` below this)
DOCTESTED = [
    (trajectory, 9),  # word_height, normalise, dtw_points, chamfer_points, dtw, chamfer,
                      # invalid_prediction, geometry_batch, subsequence_dtw
    (readability, 5),  # EditCounts, normalise_text, edit_counts, char_rates, corpus_char_rates
    (style_metric, 2),  # softmax_rows, true_writer_probability
    (text, 1),  # short_reason
    (secrets, 2),  # scrub_secrets, url_secrets
]

FORMULA_OPTIONAL = {"normalise_text", "invalid_prediction", "geometry_batch", "normalise"}


@pytest.mark.parametrize("module, n_doctested", DOCTESTED, ids=lambda v: getattr(v, "__name__", str(v)))
def test_docstring_examples_pass(module, n_doctested):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS,
                             verbose=False, report=True)
    assert result.failed == 0
    assert result.attempted >= n_doctested


@pytest.mark.parametrize("module", [trajectory, readability, style_metric], ids=lambda m: m.__name__)
def test_public_functions_document_formula_and_example(module):
    functions = [name for name in module.__all__ if inspect.isfunction(getattr(module, name))]
    assert functions, f"{module.__name__}.__all__ lists no functions"
    for name in functions:
        doc = inspect.getdoc(getattr(module, name)) or ""
        assert ">>>" in doc, f"{module.__name__}.{name} has no doctest example"
        if name not in FORMULA_OPTIONAL:
            assert ".. math::" in doc, f"{module.__name__}.{name} has no '.. math::' formula"


@pytest.mark.parametrize("module", [trajectory, readability, style_metric], ids=lambda m: m.__name__)
def test_each_public_name_has_its_own_example(module):
    finder = doctest.DocTestFinder()
    for name in module.__all__:
        tests = finder.find(getattr(module, name), name, module=module)
        own = [t for t in tests if t.name == name]
        assert own and own[0].examples, f"{module.__name__}.{name} has no example of its own"
