"""Tests of the synthetic dataset generator (inkground_lib.datasets.synth)."""

import json
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from inkground_lib.core.dataset import dataset_hash, load_dataset
from inkground_lib.core.ink import Ink
from inkground_lib.datasets.synth.generate import (
    GENERATOR_VERSION,
    SynthParams,
    generate,
    make_page,
)
from inkground_lib.datasets.synth.glyphs import supported_text
from inkground_lib.datasets.synth.photo import (
    PhotoEffects,
    apply_homography,
    photo_homography,
    photograph,
)
from inkground_lib.datasets.synth.texts import (
    message_words,
    sample_word_count,
    split_words,
)
from inkground_lib.datasets.synth.writers import WriterStyle, write_word

SMALL = SynthParams(pages=3, seed=5, words_min=2, words_max=12, words_mean=6.0, width=420, height=540,
                          size=1.6)


def _files(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def small_ds(tmp_path_factory):
    root = tmp_path_factory.mktemp("synth") / "ds"
    generate(root, SMALL, progress=False, workers=1)
    return root


# ------------------------------------------------------------------------------------------- words

def _style(**kw):
    return replace(WriterStyle(), **kw)


def test_word_strokes_body_then_marks():
    rng = np.random.default_rng(0)
    ink = write_word("hello", _style(), rng)
    assert len(ink) == 1                                   # connected lower case: one pen-down stroke
    ink = write_word("it", _style(jitter=0.0), rng)
    assert len(ink) == 3                                   # body, then the i dot, then the t bar
    body, dot, bar = ink.strokes
    bx0, by0, bx1, by1 = Ink((body,)).bbox()
    assert np.ptp(dot[:, 0]) < 0.2 and np.ptp(dot[:, 1]) < 0.2        # a dot is tiny
    assert dot[:, 1].max() < -1.0                          # above the x-height line (y down, baseline 0)
    assert np.ptp(bar[:, 0]) > 3 * np.ptp(bar[:, 1])       # the bar is horizontal
    # time runs on: marks after the body, increasing within and across strokes, from 0
    t = np.concatenate([s[:, 2] for s in ink.strokes])
    assert t[0] == 0 and np.all(np.diff(t) >= 0)
    assert dot[0, 2] > body[-1, 2] + 50                    # a pen-up pause before the dot
    ink = write_word("minimum,", _style(), rng)      # two i dots and a comma after the body
    assert len(ink) == 4
    assert all(np.ptp(s[:, :2], axis=0).max() < 0.8 for s in ink.strokes[1:])    # small marks


def test_word_rejects_unsupported_characters():
    with pytest.raises(ValueError, match="write_word"):
        write_word("don't", _style(), np.random.default_rng(0))


def test_word_samples_at_the_pen_rate_with_plausible_speed():
    ink = write_word("thank", _style(ms_per_letter=250.0), np.random.default_rng(1), sample_hz=100)
    body = ink.strokes[0]
    assert np.allclose(np.diff(body[:-1, 2]), 10.0)       # 100 Hz
    dur = ink.strokes[-1][-1, 2]
    assert 600 < dur < 2500                                # ~250 ms per letter plus the bar


# ------------------------------------------------------------------------------------------- text

def test_message_words_exact_count_and_characters():
    for n in (1, 2, 3, 7, 35, 140):
        for punct in (True, False):
            words = message_words(np.random.default_rng(n), n, punctuation=punct)
            assert len(words) == n
            for w, _ in words:
                assert supported_text(w)
                assert w.isalpha() or (punct and w[:-1].isalpha() and w[-1] in ",.!")


def test_word_count_distribution_matches_parameters():
    rng = np.random.default_rng(3)
    ns = np.array([sample_word_count(rng, 2, 140, 35.0) for _ in range(4000)])
    assert ns.min() >= 2 and ns.max() <= 140
    assert abs(ns.mean() - 35) < 2.5
    assert all(3 <= sample_word_count(rng, 3, 9, 5.0) <= 9 for _ in range(300))


def test_split_ratio():
    rng = np.random.default_rng(0)
    assert split_words(rng, 1) == ["train"]
    assert sorted(split_words(rng, 2)) == ["test", "train"]
    for n in (3, 4, 8, 35, 140):
        s = split_words(rng, n)
        assert s.count("test") == max(1, round(n / 4))


# ------------------------------------------------------------------------------------------- photo

def test_photograph_none_is_the_clean_page():
    gray = np.full((60, 80), 255, np.uint8)
    gray[20:30, 10:50] = 0
    photo, H = photograph(gray, np.random.default_rng(0), PhotoEffects.none())
    assert np.allclose(H, np.eye(3))
    assert photo.shape == (60, 80, 3) and np.array_equal(photo, np.repeat(gray[..., None], 3, axis=2))


def test_apply_homography_matches_opencv():
    rng = np.random.default_rng(2)
    H = photo_homography(rng, PhotoEffects(), (500, 700))
    ink = Ink((np.array([[10.0, 20.0, 0.0], [300.0, 650.0, 5.0]]), np.array([[250.0, 350.0, np.nan]])))
    out = apply_homography(ink, H)
    ref = cv2.perspectiveTransform(ink.points()[None].astype(np.float64), H)[0]
    assert np.allclose(out.points(), ref)
    assert out.strokes[0][1, 2] == 5.0 and np.isnan(out.strokes[1][0, 2])     # t kept
    assert apply_homography(ink, np.diag([2.0, 3.0, 1.0])).strokes[0][1, :2].tolist() == [600.0, 1950.0]
    with pytest.raises(ValueError, match="3x3"):
        apply_homography(ink, np.eye(2))


def _dark_share(photo, inks, shift=(0.0, 0.0)):
    g = cv2.cvtColor(photo, cv2.COLOR_RGB2GRAY).astype(np.float32)
    paper = cv2.dilate(g, np.ones((15, 15), np.uint8))
    pts = np.concatenate([k.points() for k in inks]) + shift
    xi = np.clip(np.rint(pts[:, 0]).astype(int), 0, g.shape[1] - 1)
    yi = np.clip(np.rint(pts[:, 1]).astype(int), 0, g.shape[0] - 1)
    return float(np.mean(g[yi, xi] < paper[yi, xi] - 25))


def test_homography_moves_inks_with_the_photo():
    params = replace(SMALL, words_min=10, words_max=10, words_mean=10.0)
    page, photo = make_page(params, 0)
    inks = [w.true_ink for w in page.words]
    assert _dark_share(photo, inks) > 0.9                    # the ink lies on dark (written) pixels
    assert _dark_share(photo, inks, shift=(0.0, 9.0)) < 0.5  # and not on paper a few pixels away
    # the sheet is really warped: H is not the identity
    _, H = photograph(np.full((100, 100), 255, np.uint8), np.random.default_rng(0), PhotoEffects())
    assert not np.allclose(H, np.eye(3), atol=1e-3)


# ------------------------------------------------------------------------------------------- dataset

def test_dataset_loads_and_words_are_consistent(small_ds):
    ds = load_dataset(small_ds)
    assert ds.kind == "synth" and ds.reference == "true ink"
    assert ds.meta["generator"] == GENERATOR_VERSION
    assert SynthParams.from_dict(ds.meta["params"]) == SMALL
    assert len(ds.pages) == SMALL.pages and len({p.writer for p in ds.pages}) == SMALL.pages
    for p in ds.pages:
        assert SMALL.words_min <= len(p.words) <= SMALL.words_max
        assert (p.width, p.height) == (SMALL.width, SMALL.height)
        assert p.load_image().shape == (SMALL.height, SMALL.width, 3)
        n_test = sum(w.split == "test" for w in p.words)
        assert n_test == (0 if len(p.words) == 1 else max(1, round(len(p.words) / 4)))
        for w in p.words:
            assert w.true_ink == w.ink and len(w.ink) >= 1
            pts = w.ink.points()
            assert np.isfinite(pts).all()
            assert tuple(w.box) == w.ink.bbox()             # the box is the ink's exact bounding box
            x0, y0, x1, y1 = w.box
            assert 0 <= x0 < x1 < p.width and 0 <= y0 < y1 < p.height
            assert w.text.strip(",.!").isalpha()


def test_deterministic_bytes_and_seed_matters(small_ds, tmp_path):
    again = generate(tmp_path / "again", SMALL, progress=False, workers=1)
    assert _files(again) == _files(small_ds)
    other = generate(tmp_path / "other", replace(SMALL, seed=6), progress=False, workers=1)
    a, b = _files(small_ds), _files(other)
    assert a["pages/p0000.jpg"] != b["pages/p0000.jpg"]
    assert a["manifest.json"] != b["manifest.json"]


@pytest.mark.slow  # process pool
def test_pool_gives_the_same_bytes(small_ds, tmp_path):
    pooled = generate(tmp_path / "pool", SMALL, progress=False, workers=2, pool_min_pages=2)
    assert _files(pooled) == _files(small_ds)


def test_reuse_resume_and_regenerate(small_ds, tmp_path):
    import shutil

    root = tmp_path / "ds"
    shutil.copytree(small_ds, root)
    h = dataset_hash(root)
    mtime = (root / "manifest.json").stat().st_mtime_ns
    generate(root, SMALL, progress=False, workers=1)             # identical params: reused
    assert (root / "manifest.json").stat().st_mtime_ns == mtime
    # interrupted run: manifest and one page missing -> the rest is reused, the result is identical
    (root / "manifest.json").unlink()
    (root / "inks" / "p0001.json").unlink()
    generate(root, SMALL, progress=False, workers=1)
    assert dataset_hash(root) == h and _files(root) == _files(small_ds)
    # other params: regenerated, stale pages removed
    fewer = replace(SMALL, pages=2, seed=9)
    generate(root, fewer, progress=False, workers=1)
    ds = load_dataset(root)
    assert len(ds.pages) == 2 and ds.meta["params"]["seed"] == 9
    assert sorted(p.name for p in (root / "pages").iterdir()) == ["p0000.jpg", "p0001.jpg"]
    assert json.loads((root / "generator.json").read_text())["params"]["seed"] == 9


def test_refuses_a_foreign_folder(tmp_path):
    from inkground_lib.core.folders import FolderError

    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(FolderError, match="refusing"):
        generate(tmp_path, SMALL, progress=False, workers=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]  # nothing written


def test_overwrite_writes_into_a_foreign_folder_and_deletes_nothing(tmp_path):
    """--overwrite: pages are written beside the user's files; a user's file named like a page survives later
    rebuilds too (the folder stays marked as not inkground's)."""
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "p0007.jpg").write_bytes(b"my photo")
    (tmp_path / "notes.txt").write_text("mine")
    generate(tmp_path, SMALL, progress=False, workers=1, overwrite=True)
    generate(tmp_path, replace(SMALL, seed=SMALL.seed + 1), progress=False, workers=1)
    assert (tmp_path / "pages" / "p0007.jpg").read_bytes() == b"my photo"
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert load_dataset(tmp_path).meta["params"]["seed"] == SMALL.seed + 1


def test_pages_depend_only_on_seed_and_index():
    a, _ = make_page(SMALL, 2)
    b, _ = make_page(replace(SMALL, pages=7), 2)
    assert [w.text for w in a.words] == [w.text for w in b.words]
    assert all(x.ink == y.ink for x, y in zip(a.words, b.words))


def test_bad_params_are_named():
    with pytest.raises(ValueError, match="words_min"):
        replace(SMALL, words_min=20, words_max=10).validate()
    with pytest.raises(ValueError, match="pages"):
        replace(SMALL, pages=0).validate()
    with pytest.raises(ValueError, match="unknown"):
        SynthParams.from_dict({"pages": 2, "colour": 1})
