"""Section parameters are type-checked against the notebook's defaults before anything runs."""
import pytest

from inkground_lib.cli import main
from inkground_lib.publish.notebook_runner import (
    RunnerError,
    check_parameters,
    find_section,
    notebook_parameters,
    parse_value,
    run_section,
)
from inkground_lib.publish.parameters_cell import notebook_parameters as cell_parameters
from inkground_lib.publish.run_checks import accepts, parameter_kinds


@pytest.mark.parametrize("params, given, expected", [
    ({"ocr_threshold": "abc"}, "'abc' has type str", "expected float"),
    ({"n_raters": True}, "True has type bool", "expected int"),
    ({"seed": 1.5}, "1.5 has type float", "expected int"),
    ({"candidates": 2024}, "2024 has type int", "expected str"),
    ({"candidates": ["a"]}, "['a'] has type list", "expected str"),
    ({"ocr_threshold": [0.5]}, "[0.5] has type list", "expected float"),
])
def test_wrong_type_is_refused_before_execution(tmp_path, params, given, expected):
    out = tmp_path / "sections"
    with pytest.raises(RunnerError) as e:
        run_section("02", params, out_dir=out)
    msg = str(e.value)
    name = next(iter(params))
    assert "section 02" in msg and f"parameter {name}:" in msg and given in msg and expected in msg
    assert f"the default is {notebook_parameters(find_section('02'))[name]}" in msg
    assert not out.exists() and list(tmp_path.iterdir()) == []  # nothing executed, nothing written


def test_cli_refuses_text_for_a_number(capsys, tmp_path):
    code = main(["run", "02", "-p", "ocr_threshold", "abc"])
    err = capsys.readouterr().err
    assert code == 2 and "parameter ocr_threshold" in err and "'abc' has type str, expected float" in err


def test_right_types_are_accepted():
    s02, s03 = find_section("02"), find_section("03")
    check_parameters(s02, {"candidates": "data/x", "ocr_threshold": 0.5, "n_raters": 10, "ratings": "r.csv",
                           "n_candidates": 3, "seed": 7})
    check_parameters(s03, {"systems": ["skeleton", "font"], "recorded": "", "n_boot": 200, "spacing": 0.1})
    check_parameters(s03, {"systems": ("skeleton",)})
    # what the command line makes of typical texts passes too
    check_parameters(s02, {"ocr_threshold": parse_value("0.9"), "seed": parse_value("3"),
                           "ratings": parse_value("null"), "candidates": parse_value("data/datasets/mine")})


def test_int_is_accepted_for_a_float_default():
    check_parameters(find_section("02"), {"ocr_threshold": 1, "strictness_mean": 2})
    assert accepts({"float"}, 1) and accepts({"float"}, 0.5)
    assert not accepts({"int"}, 1.0)


def test_bool_is_refused_for_an_int_default_and_int_for_a_bool():
    with pytest.raises(RunnerError, match="parameter seed: the value False has type bool, expected int"):
        check_parameters(find_section("02"), {"seed": False})
    assert not accepts({"int"}, True) and not accepts({"float"}, True)
    assert not accepts({"bool"}, 1) and accepts({"bool"}, True)


def test_none_default_accepts_anything_unless_annotated():
    kinds = parameter_kinds("None")
    assert kinds == {"any"}
    assert all(accepts(kinds, v) for v in (None, "x", 3, 0.5, True, [1]))
    check_parameters(find_section("04"), {"datasets": ["a", "b"]})
    check_parameters(find_section("02"), {"n_candidates": None, "ratings": "x.csv"})
    check_parameters(find_section("02"), {"n_candidates": 12, "ratings": None})
    # the section notebooks annotate every parameter whose default is None (issue 46: a text n_candidates ran)
    for s in ("02", "04"):
        for p in cell_parameters(find_section(s).source):
            assert p.default_text != "None" or p.annotation, (s, p.name)
    for name, value in (("n_candidates", "12"), ("n_candidates", 1.5), ("ratings", 3), ("ratings", ["a.csv"])):
        with pytest.raises(RunnerError, match=f"parameter {name}: the value"):
            check_parameters(find_section("02"), {name: value})


def test_list_elements_are_checked_as_the_default_or_annotation_gives_them():
    from inkground_lib.publish.run_checks import element_kinds

    assert element_kinds("[0.02, 0.1]") == {"float"} and element_kinds('["a"]') == {"str"}
    assert element_kinds("[1, 0.5]") == {"float"}  # ints and floats: numbers
    assert element_kinds("None", "list[str] | None") == {"str"}
    assert element_kinds("None", "Optional[List[int]]") == {"int"}
    assert element_kinds("[]") is None and element_kinds("2", "Union[int, list]") is None and element_kinds("3") is None
    check_parameters(find_section("04"), {"spacings": [1, 0.5], "datasets": ["a", "b"], "ocr_engines": []})
    with pytest.raises(RunnerError, match=r"parameter spacings: the element 'x' of \[0.1, 'x'\] has type str, "
                                          r"expected float"):
        check_parameters(find_section("04"), {"spacings": [0.1, "x"]})
    with pytest.raises(RunnerError, match="parameter eval_runs: the element None of"):
        check_parameters(find_section("04"), {"eval_runs": ["data/runs/x", None]})


def test_kinds_from_defaults_and_annotations():
    assert parameter_kinds("0.85") == {"float"}
    assert parameter_kinds("2") == {"int"}
    assert parameter_kinds("True") == {"bool"}
    assert parameter_kinds('"x"') == {"str"}
    assert parameter_kinds('["a", "b"]') == {"list"} and parameter_kinds("(1, 2)") == {"list"}
    assert parameter_kinds("Path('x')") == {"any"}  # not a literal: cannot be known, not refused
    assert parameter_kinds("2", "Union[int, list]") == {"int", "list"}
    assert parameter_kinds("None", "Optional[str]") == {"str", "None"}
    assert parameter_kinds("2", "int | list[int]") == {"int", "list"}
    assert parameter_kinds("2", "Frobnicator") == {"int"}  # an unknown annotation falls back to the default
    assert not accepts(parameter_kinds("None", "Optional[str]"), 3)


@pytest.mark.parametrize("section, params, message", [
    ("02", {"ocr_threshold": -5}, "parameter ocr_threshold: the value -5 is outside its range: ocr_threshold must be in [0, 1]"),
    ("02", {"ocr_threshold": 1.5}, "ocr_threshold must be in [0, 1]"),
    ("02", {"ocr_threshold": float("nan")}, "the value nan is outside its range"),
    ("02", {"n_raters": 0}, "n_raters must be >= 1"),
    ("02", {"raters_per_pair": [0, 2]}, "the element 0 of [0, 2] is outside its range: raters_per_pair must be >= 1"),
    ("02", {"n_candidates": 0}, "n_candidates must be >= 1"),
    ("02", {"score_step": 0}, "score_step must be > 0"),
    ("02", {"seed": -1}, "seed must be >= 0"),
    ("02", {"example_words": -1}, "example_words must be >= 0"),
    ("03", {"n_boot": 0}, "n_boot must be >= 1"),
    ("03", {"spacing": 0.0}, "spacing must be > 0"),
    ("03", {"grid": 0}, "grid must be >= 1"),
    ("04", {"spacings": [0.1, -1]}, "the element -1 of [0.1, -1]"),
    ("01", {"example_pages": -2}, "example_pages must be >= 0"),
])
def test_out_of_range_is_refused_before_execution(tmp_path, section, params, message):
    out = tmp_path / "sections"
    with pytest.raises(RunnerError) as e:
        run_section(section, params, out_dir=out)
    assert message in str(e.value) and f"section {section}" in str(e.value) and "the default is" in str(e.value)
    assert not out.exists()


def test_cli_refuses_a_negative_threshold(capsys):
    assert main(["run", "02", "-p", "ocr_threshold", "-5"]) == 2
    err = capsys.readouterr().err
    assert "parameter ocr_threshold" in err and "must be in [0, 1]" in err and len(err.strip().splitlines()) == 1


def test_in_range_values_and_unset_optionals_pass():
    check_parameters(find_section("02"), {"ocr_threshold": 0, "n_candidates": None, "raters_per_pair": [2, 3],
                                          "seed": 0, "example_words": 0})
    check_parameters(find_section("02"), {"ocr_threshold": 1})
    check_parameters(find_section("03"), {"n_boot": 1, "grid": 1, "spacing": 0.01})


def test_every_numeric_parameter_has_a_range_and_every_range_a_parameter():
    """The ranges are stated once (PARAMETER_RANGES); a new numeric parameter must get one there."""
    import ast

    from inkground_lib.publish.notebook_runner import sections
    from inkground_lib.publish.run_checks import PARAMETER_RANGES

    numeric, names = set(), set()
    for s in sections():
        for name, default in notebook_parameters(s).items():
            names.add(name)
            try:
                v = ast.literal_eval(default)
            except (ValueError, SyntaxError):
                continue
            vs = v if isinstance(v, (list, tuple)) else [v]
            if vs and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vs):
                numeric.add(name)
    numeric.add("n_candidates")  # default None, a count when set
    assert numeric - set(PARAMETER_RANGES) == set()
    assert set(PARAMETER_RANGES) - names == set()
