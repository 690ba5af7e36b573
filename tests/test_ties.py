"""Issue 34: values equal at the precision the book shows are ties - in ranks, Pareto fronts, Kendall's tau, the
leaders section 03 names and the rankings the choice of reference reverses. The cases are the issue's own: the
skeleton's Chamfer of 2.16e-17 beside two exact zeros, and a Style gap of 6e-7 between identical renders."""

import pandas as pd
import pytest

from inkground_lib.analysis.ties import SHOWN_DECIMALS, leaders, shown, tied_ranks
from inkground_lib.analysis.tradeoffs import Variant, pareto_front, rank_table, reference_flips
from inkground_lib.report.evaluation import leader_phrase
from inkground_lib.report.format import fmt

SYSTEMS = ["reference", "tracer", "skeleton", "font", "box"]


def test_noise_below_the_shown_precision_is_a_tie_in_ranks():
    chamfer = pd.Series([0.0, 0.0, 2.16e-17, 0.21, 0.35], index=SYSTEMS)
    r = tied_ranks(chamfer, lower_is_better=True)
    assert r[["reference", "tracer", "skeleton"]].tolist() == [1, 1, 1]  # all three print "0.000"
    assert r["font"] == 4 and r["box"] == 5
    # what is ranked is what is shown: the same precision as the tables' default
    assert fmt(2.16e-17) == fmt(0.0) == f"{0:.{SHOWN_DECIMALS}f}"
    # a real difference at the shown precision still orders
    assert tied_ranks(pd.Series([0.0, 0.001]), True).tolist() == [1, 2]


def test_tau_does_not_come_from_a_broken_tie():
    """Table 4.5a's case: the default ranking has three systems at 0 (one at 2.16e-17); a variant that orders
    them only by noise is the same ranking (tau 1), not a different one."""
    default = pd.Series([0.0, 0.0, 2.16e-17, 0.21, 0.35], index=SYSTEMS)
    noisy = pd.Series([3e-17, 0.0, 0.0, 0.21, 0.35], index=SYSTEMS)
    t = rank_table([Variant("chamfer", "default", default, default=True), Variant("chamfer", "noise", noisy)])
    assert [t.loc[("Chamfer", "noise"), s] for s in SYSTEMS] == [1, 1, 1, 4, 5]
    assert t.loc[("Chamfer", "noise"), "Kendall tau vs default"] == pytest.approx(1.0)
    # cells with values print the shown value, so the rank and its value agree on the page
    tv = rank_table([Variant("chamfer", "default", default, default=True)], with_values=True)
    assert tv.loc[("Chamfer", "default"), "skeleton"] == "1 (0.000)"


def test_pareto_front_keeps_points_equal_as_shown():
    """A Style gap of 6e-7 between identical renders must not push one of them off the Style-vs-AR front."""
    ar = [0.41, 0.41, 0.10]
    style = [0.2500006, 0.25, 0.05]
    assert pareto_front(ar, style, "max", "max").tolist() == [True, True, False]
    assert pareto_front([0.41, 0.41], [0.251, 0.25], "max", "max").tolist() == [True, False]


def test_leaders_share_the_lead_when_tied_as_shown():
    t = pd.DataFrame({"label": ["Font", "Box", "Tracer"], "ar": [0.41240, 0.41236, 0.2]})
    assert leaders(t.set_index("label")["ar"], False) == ["Font", "Box"]
    assert leader_phrase(t, "ar", "highest AR") == "Font and Box share the highest AR (0.412)"
    t2 = t.assign(ar=[0.4126, 0.4121, 0.2])
    assert leader_phrase(t2, "ar", "highest AR") == "Font has the highest AR (0.413)"


def test_a_flip_needs_a_difference_that_shows():
    """Two systems equal as shown against one reference are not "reversed" by the other."""
    a = pd.DataFrame({"system": ["box", "font"], "label": ["Box", "Font"], "dtw": [0.2900001, 0.29],
                      "dtw_lo": [0.28, 0.28], "dtw_hi": [0.30, 0.30]})
    b = pd.DataFrame({"system": ["box", "font"], "label": ["Box", "Font"], "dtw": [0.255, 0.227],
                      "dtw_lo": [0.251, 0.221], "dtw_hi": [0.258, 0.232]})
    assert reference_flips(a, b, "reference", ["dtw"]) == []
    assert shown(-0.0) == 0.0 and str(shown(-1e-9)) == "0.0"
