"""Tests of inkground_lib.components.metrics against independent slow implementations written here."""

from __future__ import annotations

import json
import math
import unicodedata
from functools import lru_cache
from pathlib import Path

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from inkground_lib.components.metrics.readability import (
    EditCounts,
    char_rates,
    corpus_char_rates,
    edit_counts,
    normalise_text,
)
from inkground_lib.components.metrics.trajectory import (
    chamfer,
    chamfer_points,
    dtw,
    dtw_points,
    geometry_batch,
    invalid_prediction,
    normalise,
    word_height,
)
from inkground_lib.core.ink import Ink, InkError, as_ink, resample

UNIPEN = Path(__file__).resolve().parents[1] / "data/unipen_cursive"


# ---------------------------------------------------------------------------------------------------
# slow reference implementations
# ---------------------------------------------------------------------------------------------------

def slow_dtw(P, R) -> float:
    """Plain dynamic programming over the full matrix, pure Python."""
    n, m = len(P), len(R)
    inf = float("inf")
    D = [[inf] * (m + 1) for _ in range(n + 1)]
    D[0][0] = 0.0
    for i in range(1, n + 1):
        px, py = float(P[i - 1][0]), float(P[i - 1][1])
        for j in range(1, m + 1):
            c = math.hypot(px - float(R[j - 1][0]), py - float(R[j - 1][1]))
            D[i][j] = c + min(D[i - 1][j], D[i][j - 1], D[i - 1][j - 1])
    return D[n][m] / m


def slow_chamfer(P, R) -> float:
    """Brute force: every pair of points."""
    def mean_nearest(A, B):
        return sum(min(math.hypot(a[0] - b[0], a[1] - b[1]) for b in B) for a in A) / len(A)
    return 0.5 * (mean_nearest(P, R) + mean_nearest(R, P))


def slow_normalise(pred, ref, spacing):
    """The design's rule with ink.py's primitives: translate by the ref bbox corner, divide by h, resample."""
    r = as_ink(ref)
    x0, y0, x1, y1 = r.bbox()
    h = (y1 - y0) or (x1 - x0) or 1.0
    out = []
    for ink in (as_ink(pred), r):
        k = ink.transformed(1.0 / h, -x0 / h, -y0 / h)
        if spacing is not None:
            k = resample(k, spacing)
        out.append(k.points())
    return out


def random_ink(rng, n_strokes=None, scale=40.0, offset=(300.0, 200.0), max_pts=25) -> Ink:
    n_strokes = n_strokes or int(rng.integers(1, 4))
    strokes = []
    for _ in range(n_strokes):
        n = int(rng.integers(1, max_pts))
        s = np.cumsum(rng.normal(0, scale / 6, (n, 2)), axis=0) + np.asarray(offset) + rng.normal(0, scale, 2)
        strokes.append(s)
    return as_ink(strokes)


@lru_cache(maxsize=1)
def unipen_inks():
    f = UNIPEN / "unipen_cursive_dev.json"
    data = json.loads(f.read_text())
    return [(s["text"], as_ink([np.asarray(st_, float) for st_ in s["strokes"]], s["id"])) for s in data["samples"]]


def need_unipen():
    inks = unipen_inks()
    if inks is None:
        raise AssertionError(f"the shipped UNIPEN subset is missing: {UNIPEN}")
    return inks


# ---------------------------------------------------------------------------------------------------
# normalisation
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("spacing", [0.05, 0.2, None])
def test_normalise_matches_ink_resample_on_random_inks(spacing):
    rng = np.random.default_rng(1)
    for _ in range(30):
        pred, ref = random_ink(rng), random_ink(rng)
        P, R = normalise(pred, ref, spacing=spacing)
        sP, sR = slow_normalise(pred, ref, spacing)
        assert P.shape == sP.shape and R.shape == sR.shape
        np.testing.assert_allclose(P, sP, rtol=0, atol=1e-9)
        np.testing.assert_allclose(R, sR, rtol=0, atol=1e-9)
        # the reference's bbox becomes [0, w/h] x [0, 1] (resampling may cut corners: inside it)
        if spacing is None:
            flat = ref.bbox()[1] == ref.bbox()[3]
            assert R[:, 1].min() == pytest.approx(0, abs=1e-12)
            assert R[:, 1].max() == pytest.approx(0 if flat else 1, abs=1e-12)
            assert R[:, 0].min() == pytest.approx(0, abs=1e-12)
        else:
            assert R[:, 1].min() >= -1e-12 and R[:, 1].max() <= 1 + 1e-12 and R[:, 0].min() >= -1e-12


def test_normalise_matches_ink_resample_on_unipen_words():
    inks = need_unipen()
    for k in range(0, 40, 2):
        pred, ref = inks[k][1], inks[k + 1][1]
        P, R = normalise(pred, ref)
        sP, sR = slow_normalise(pred, ref, 0.05)
        np.testing.assert_allclose(P, sP, atol=1e-9)
        np.testing.assert_allclose(R, sR, atol=1e-9)


def test_normalise_handles_repeated_points_and_zero_length_strokes():
    ref = [[[0, 0], [0, 0], [0, 10], [0, 10], [5, 20]], [[3, 3], [3, 3]], [[7, 7]]]
    pred = [[[1, 1], [1, 1], [1, 1]], [[2, 2], [9, 9], [9, 9], [9, 9], [20, 0]]]
    P, R = normalise(pred, ref)
    sP, sR = slow_normalise(pred, ref, 0.05)
    np.testing.assert_allclose(P, sP, atol=1e-12)
    np.testing.assert_allclose(R, sR, atol=1e-12)
    assert len(R) == len(sR) and np.isfinite(R).all() and np.isfinite(P).all()


def test_flat_reference_uses_width_then_one_pixel():
    dash = [[[100, 50], [140, 50]]]                          # height 0, width 40 -> h = 40
    assert word_height(dash) == 40
    P, R = normalise([[[100, 70]]], dash, spacing=None)
    np.testing.assert_allclose(P, [[0.0, 0.5]])
    dot = [[[100, 50]]]                                      # height 0, width 0 -> h = 1 px
    assert word_height(dot) == 1
    assert dtw([[[103, 54]]], dot) == pytest.approx(5.0)
    assert chamfer([[[103, 54]]], dot) == pytest.approx(5.0)


def test_bad_spacing_and_empty_reference_raise():
    ref = [[[0, 0], [0, 10]]]
    for bad in (0, -0.1, float("nan")):
        with pytest.raises(ValueError, match="spacing"):
            dtw(ref, ref, spacing=bad)
    for empty in ([], [[]], Ink()):
        with pytest.raises(ValueError, match="reference ink is empty"):
            dtw(ref, empty)
        with pytest.raises(ValueError, match="reference ink is empty"):
            chamfer(ref, empty, page_size=(100, 100))


def test_nan_points_are_refused():
    with pytest.raises(InkError, match="NaN"):
        dtw([[[0, 0], [np.nan, 1]]], [[[0, 0], [0, 10]]])
    with pytest.raises(InkError, match="reference"):
        chamfer([[[0, 0]]], [[[0, 0], [1, np.inf]]])


# ---------------------------------------------------------------------------------------------------
# DTW and Chamfer against the slow versions
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n,m", [(1, 1), (1, 7), (7, 1), (2, 3), (13, 9), (40, 55)])
def test_dtw_points_matches_plain_dp(n, m):
    rng = np.random.default_rng(n * 100 + m)
    for _ in range(5):
        P, R = rng.normal(size=(n, 2)), rng.normal(size=(m, 2))
        assert dtw_points(P, R) == pytest.approx(slow_dtw(P, R), rel=1e-12)
        assert chamfer_points(P, R) == pytest.approx(slow_chamfer(P, R), rel=1e-12)


def test_dtw_and_chamfer_on_random_inks_match_slow_versions():
    rng = np.random.default_rng(7)
    for _ in range(12):
        pred, ref = random_ink(rng), random_ink(rng)
        sP, sR = slow_normalise(pred, ref, 0.1)
        assert dtw(pred, ref, spacing=0.1) == pytest.approx(slow_dtw(sP, sR), rel=1e-9)
        assert chamfer(pred, ref, spacing=0.1) == pytest.approx(slow_chamfer(sP, sR), rel=1e-9)


def test_dtw_and_chamfer_on_unipen_words_match_slow_versions():
    inks = need_unipen()
    rng = np.random.default_rng(3)
    for k in rng.choice(len(inks) - 1, 3, replace=False):
        pred, ref = inks[k][1], inks[k + 1][1]
        sP, sR = slow_normalise(pred, ref, 0.1)
        assert dtw(pred, ref, spacing=0.1) == pytest.approx(slow_dtw(sP, sR), rel=1e-9)
        assert chamfer(pred, ref, spacing=0.1) == pytest.approx(slow_chamfer(sP, sR), rel=1e-9)


def test_identical_inks_score_zero():
    rng = np.random.default_rng(0)
    inks = [random_ink(rng) for _ in range(5)]
    if unipen_inks() is not None:
        inks += [w for _, w in unipen_inks()[:5]]
    for ink in inks:
        assert dtw(ink, ink) == 0.0
        assert chamfer(ink, ink) == 0.0


def test_vertical_bar_shifted_right_by_half_height():
    # ref: a vertical bar of height h = 40 px, resampled into 21 points 0.05 h apart. pred: the same bar
    # 0.5 h = 20 px to the right. Every point of pred is 0.5 h from the whole ref column horizontally, so
    # every cell costs >= 0.5 and the diagonal path (21 cells of exactly 0.5) is optimal:
    # DTW = 21 * 0.5 / 21 = 0.5. Each nearest distance is exactly 0.5: Chamfer = 0.5.
    ref = [[[100, 100], [100, 140]]]
    pred = [[[120, 100], [120, 140]]]
    P, R = normalise(pred, ref)
    assert len(P) == len(R) == 21
    assert dtw(pred, ref) == pytest.approx(0.5, abs=1e-12)
    assert chamfer(pred, ref) == pytest.approx(0.5, abs=1e-12)


def test_vertical_bar_shifted_along_itself_by_half_height():
    # ref y = 0.05 j, pred y = 0.5 + 0.05 i (i, j = 0..20, units of h). Chamfer: the 11 pred points with
    # y <= 1 lie on ref points, the other 10 are 0.05 * (1..10) away: sum 2.75, mean 2.75 / 21, the same
    # the other way round, so Chamfer = 2.75 / 21. DTW: every column j <= 9 costs at least 0.05 (10 - j)
    # and every row i >= 11 at least 0.05 (i - 10); both bounds (2.75 each) are met by the path
    # (0,0)..(0,10), diagonal to (10,20), then (11,20)..(20,20): DTW = 5.5 / 21.
    ref = [[[100, 100], [100, 140]]]
    pred = [[[100, 120], [100, 160]]]
    assert chamfer(pred, ref) == pytest.approx(2.75 / 21, abs=1e-12)
    assert dtw(pred, ref) == pytest.approx(5.5 / 21, abs=1e-12)


def test_invariant_to_moving_and_scaling_both_inks_but_not_pred_alone():
    rng = np.random.default_rng(11)
    pairs = [(random_ink(rng), random_ink(rng)) for _ in range(6)]
    if unipen_inks() is not None:
        w = unipen_inks()
        pairs += [(w[10][1], w[11][1]), (w[20][1].transformed(1.1, 5, -3), w[20][1])]
    for pred, ref in pairs:
        d0, c0 = dtw(pred, ref), chamfer(pred, ref)
        for scale, dx, dy in [(1.0, 250.0, -80.0), (3.0, 0.0, 0.0), (0.25, 17.0, 1000.0)]:
            p2, r2 = pred.transformed(scale, dx, dy), ref.transformed(scale, dx, dy)
            assert dtw(p2, r2) == pytest.approx(d0, rel=1e-9)
            assert chamfer(p2, r2) == pytest.approx(c0, rel=1e-9)
        moved = pred.transformed(1.0, 30.0, 12.0)
        assert abs(dtw(moved, ref) - d0) > 1e-3
        assert abs(chamfer(moved, ref) - c0) > 1e-3


# ---------------------------------------------------------------------------------------------------
# invalid predictions and degenerate inputs
# ---------------------------------------------------------------------------------------------------

def test_empty_prediction_needs_page_size_and_scores_the_centre_dot():
    ref = Ink((np.array([[100.0, 100, 0], [100, 140, 0], [130, 140, 0]]),))
    for empty in (None, [], Ink(), [[]]):
        with pytest.raises(ValueError, match="page_size"):
            dtw(empty, ref)
        with pytest.raises(ValueError, match="page_size"):
            chamfer(empty, ref)
    dot = invalid_prediction((800, 600))
    assert len(dot) == 1 and dot[0].shape == (1, 3)
    np.testing.assert_array_equal(dot[0][0, :2], [400, 300])
    d = dtw(None, ref, page_size=(800, 600))
    c = chamfer([], ref, page_size=(800, 600))
    # one predicted point: the only warping path is the whole row, so DTW = mean distance to the ref
    # points; Chamfer = 0.5 * (nearest distance + mean distance)
    _, R = normalise(dot, ref)
    dist = np.hypot(R[:, 0] - (400 - 100) / 40, R[:, 1] - (300 - 100) / 40)
    assert d == pytest.approx(dist.mean(), rel=1e-12)
    assert c == pytest.approx(0.5 * (dist.min() + dist.mean()), rel=1e-12)
    assert dtw(dot, ref) == d
    # a non-empty prediction ignores page_size
    assert dtw(ref, ref, page_size=(800, 600)) == 0.0


@pytest.mark.parametrize("bad", [(0, 100), (100, -1), (np.nan, 5), "big", (1, 2, 3)])
def test_invalid_prediction_rejects_bad_page_size(bad):
    with pytest.raises(ValueError, match="page_size"):
        invalid_prediction(bad)


def test_single_point_inks():
    ref = [[[0, 0], [0, 10], [10, 10]]]
    assert dtw([[[0, 0]]], ref) == pytest.approx(slow_dtw(*slow_normalise([[[0, 0]]], ref, 0.05)))
    assert dtw(ref, [[[3, 4]]]) == pytest.approx(slow_dtw(*slow_normalise(ref, [[[3, 4]]], 0.05)))
    assert dtw([[[3, 4]]], [[[0, 0]]]) == pytest.approx(5.0)


# ---------------------------------------------------------------------------------------------------
# batch
# ---------------------------------------------------------------------------------------------------

def test_geometry_batch_matches_one_pair_functions():
    rng = np.random.default_rng(5)
    pairs = [(random_ink(rng), random_ink(rng)) for _ in range(40)]
    if unipen_inks() is not None:
        w = unipen_inks()
        pairs += [(w[k][1], w[k + 1][1]) for k in range(0, 30, 3)]
    pairs.append(([], pairs[0][1], (640, 480)))
    pairs.append(([[[5, 5]]], [[[5, 5], [5, 5]]]))
    want = np.array([[dtw(*p[:2], page_size=p[2] if len(p) == 3 else None),
                      chamfer(*p[:2], page_size=p[2] if len(p) == 3 else None)] for p in pairs])
    got1 = geometry_batch(pairs, workers=1, chunk_size=7, progress=False)
    got2 = geometry_batch(pairs, workers=2 if numba.config.NUMBA_NUM_THREADS >= 2 else 1, progress=False)
    assert got1.shape == (len(pairs), 2)
    np.testing.assert_array_equal(got1, want)  # one kernel: the same bits alone and in a batch
    np.testing.assert_array_equal(got1, got2)


def test_chamfer_points_equals_a_kd_tree_chamfer_on_many_random_pairs():
    """The kernel's exact nearest distances against scipy's cKDTree (an independent implementation), on point
    sets of 1-300 points over six orders of magnitude; they differ only in summation order."""
    from scipy.spatial import cKDTree

    rng = np.random.default_rng(11)
    worst = 0.0
    for _ in range(600):
        n, m = rng.integers(1, 300, size=2)
        scale = 10.0 ** rng.uniform(-3, 3)
        P, R = rng.normal(size=(n, 2)) * scale, rng.normal(size=(m, 2)) * scale + rng.normal(size=2) * scale
        want = 0.5 * (cKDTree(R).query(P)[0].mean() + cKDTree(P).query(R)[0].mean())
        got = chamfer_points(P, R)
        assert got == pytest.approx(want, rel=1e-12, abs=0)
        worst = max(worst, abs(got - want) / want)
        assert chamfer_points(R, P) == got  # symmetric, bit for bit
    assert worst < 1e-13


def test_geometry_batch_spacing_none_and_errors(capsys):
    rng = np.random.default_rng(9)
    pairs = [(random_ink(rng), random_ink(rng)) for _ in range(5)]
    got = geometry_batch(pairs, spacing=None, progress=True)
    want = [[slow_dtw(*slow_normalise(p, r, None)), slow_chamfer(*slow_normalise(p, r, None))] for p, r in pairs]
    np.testing.assert_allclose(got, want, rtol=1e-9)
    assert "DTW + Chamfer" in capsys.readouterr().err
    assert geometry_batch([]).shape == (0, 2)
    with pytest.raises(ValueError, match="pair 2.*page_size"):
        geometry_batch(pairs[:2] + [(None, pairs[0][1])])
    with pytest.raises(ValueError, match="pair 0"):
        geometry_batch([(pairs[0][0],)])
    with pytest.raises(ValueError, match="workers"):
        geometry_batch(pairs, workers=0)


# ---------------------------------------------------------------------------------------------------
# character rates
# ---------------------------------------------------------------------------------------------------

def lev_matrix(a: str, b: str):
    n, m = len(a), len(b)
    D = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        D[i][0] = i
    for j in range(m + 1):
        D[0][j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            D[i][j] = min(D[i - 1][j] + 1, D[i][j - 1] + 1, D[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
    return D


def slow_edit_counts(hyp: str, ref: str) -> tuple[int, int, int]:
    """(S, D, I) by the tie-breaking rule documented in metrics.edit_counts, with an explicit backtrace."""
    p = 0
    while p < min(len(ref), len(hyp)) and ref[p] == hyp[p]:
        p += 1
    s = 0
    while s < min(len(ref), len(hyp)) - p and ref[-1 - s] == hyp[-1 - s]:
        s += 1
    a, b = ref[p:len(ref) - s], hyp[p:len(hyp) - s]
    D = lev_matrix(a, b)
    i, j = len(a), len(b)
    S = De = I = 0
    while i and j:
        if D[i][j] == D[i - 1][j] + 1:                       # deletion of a reference character first
            De += 1
            i -= 1
        elif j > 1 and D[i - 1][j - 1] == D[i][j - 1] + 1:  # then insertion of a hypothesis character
            I += 1
            j -= 1
        else:                                               # then the diagonal
            S += a[i - 1] != b[j - 1]
            i -= 1
            j -= 1
    De += i
    I += j
    return S, De, I


def hits_range(hyp: str, ref: str) -> tuple[int, int]:
    """(fewest, most) matched characters over all minimum-cost alignments."""
    D = lev_matrix(ref, hyp)
    n, m = len(ref), len(hyp)
    lo = [[0] * (m + 1) for _ in range(n + 1)]
    hi = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        for j in range(m + 1):
            if i == 0 or j == 0:
                continue
            cand = []
            if D[i][j] == D[i - 1][j] + 1:
                cand.append((lo[i - 1][j], hi[i - 1][j]))
            if D[i][j] == D[i][j - 1] + 1:
                cand.append((lo[i][j - 1], hi[i][j - 1]))
            eq = ref[i - 1] == hyp[j - 1]
            if D[i][j] == D[i - 1][j - 1] + (not eq):
                cand.append((lo[i - 1][j - 1] + eq, hi[i - 1][j - 1] + eq))
            lo[i][j] = min(c[0] for c in cand)
            hi[i][j] = max(c[1] for c in cand)
    return lo[n][m], hi[n][m]


def test_transposition_tie_is_broken_towards_deletion_plus_insertion():
    # 'ab' -> 'ba': two substitutions (CR 0) and deletion + match + insertion (CR 0.5) both cost 2
    c = edit_counts("ba", "ab")
    assert (c.S, c.D, c.I, c.N) == (0, 1, 1, 2)
    assert char_rates("ba", "ab") == (0.0, 0.5)
    c = edit_counts("bca", "abc")   # rotate: delete 'a' at the front, insert it at the end
    assert (c.S, c.D, c.I) == (0, 1, 1)


small_text = st.text(alphabet="abcx", max_size=9)


@settings(max_examples=400, deadline=None)
@given(hyp=small_text, ref=small_text)
def test_edit_counts_follow_the_documented_backtrace(hyp, ref):
    c = edit_counts(hyp, ref, casefold=False, strip_punct=False)
    assert (c.S, c.D, c.I) == slow_edit_counts(hyp, ref)
    assert c.N == len(ref)
    # S + D + I is the Levenshtein distance, so AR does not depend on the tie-breaking
    assert c.S + c.D + c.I == lev_matrix(ref, hyp)[len(ref)][len(hyp)]
    lo, hi = hits_range(hyp, ref)
    assert lo <= c.hits <= hi


@settings(max_examples=300, deadline=None)
@given(hyp=st.text(max_size=12), ref=st.text(min_size=1, max_size=12))
def test_cr_is_never_below_ar(hyp, ref):
    ar, cr = char_rates(hyp, ref)
    if math.isnan(cr):
        assert math.isnan(ar) and normalise_text(ref) == ""
    else:
        assert cr >= ar
        assert 0.0 <= cr <= 1.0


def test_ar_below_zero_when_insertions_dominate():
    c = edit_counts("caaaaat", "cat")
    assert (c.S, c.D, c.I, c.N) == (0, 0, 4, 3)
    ar, cr = char_rates("caaaaat", "cat")
    assert ar == pytest.approx(-1 / 3) and cr == 1.0


def test_blank_render_hypothesis_is_all_deletions():
    assert edit_counts(None, "word") == EditCounts(0, 4, 0, 4)
    assert char_rates("", "word") == (0.0, 0.0)


def test_text_normalisation():
    decomposed = unicodedata.normalize("NFD", "café")
    assert decomposed != "café"
    assert char_rates(decomposed, "café") == (1.0, 1.0)
    assert normalise_text("  «Hello,»  ") == "hello"
    assert normalise_text("don't!") == "don't"
    assert normalise_text("(Straße)") == "strasse"
    assert normalise_text("Straße", casefold=False) == "Straße"
    assert normalise_text("'Hi.'", strip_punct=False) == "'hi.'"
    assert char_rates("Hello", "hello.", casefold=False) == (0.8, 0.8)
    assert char_rates("Hello", "hello.") == (1.0, 1.0)
    with pytest.raises(TypeError):
        normalise_text(3)


def test_empty_reference_text_gives_nan_but_counts_insertions_in_the_corpus():
    c = edit_counts("xy", "...")
    assert c == EditCounts(0, 0, 2, 0)
    ar, cr = char_rates("xy", "")
    assert math.isnan(ar) and math.isnan(cr)
    ar, cr = corpus_char_rates([("xy", "..."), ("cat", "cat")])
    assert ar == pytest.approx((3 - 2) / 3) and cr == 1.0
    assert all(math.isnan(v) for v in corpus_char_rates([]))


def test_corpus_rates_sum_counts_over_words():
    words = [("helo", "hello"), ("wrld", "world"), ("thee", "the"), ("", "a"), ("ab", "ba")]
    counts = [edit_counts(h, r) for h, r in words]
    S = sum(c.S for c in counts)
    D = sum(c.D for c in counts)
    Ii = sum(c.I for c in counts)
    N = sum(c.N for c in counts)
    ar, cr = corpus_char_rates(counts)
    assert ar == pytest.approx((N - S - D - Ii) / N) and cr == pytest.approx((N - S - D) / N)
    assert corpus_char_rates(words) == (ar, cr)
    assert corpus_char_rates(counts[:2] + words[2:]) == (ar, cr)
    # corpus level differs from the mean of per-word rates
    assert ar != pytest.approx(np.mean([c.ar for c in counts]))
    with pytest.raises(TypeError, match="item 0"):
        corpus_char_rates(["oops"])


def test_rapidfuzz_is_the_alignment_used():
    # the same operations rapidfuzz reports, counted by kind (reference -> hypothesis)
    ops = Levenshtein.editops("kitten", "sitting").as_list()
    c = edit_counts("sitting", "kitten")
    assert (c.S, c.D, c.I) == tuple(sum(o[0] == k for o in ops) for k in ("replace", "delete", "insert"))
