"""Tests of inkground_lib.components.derenderers: the skeleton derenderer (against true trajectories of clean Hershey-script
words and recorded UNIPEN words drawn with a realistic pen), crop_word, and InkSight's pure parts.

The helpers at the top (word inks, drawing, order agreement) are also used by benchmarks/bench_derender.py.
Measured on 2026-11 (50 words each, seed 0; benchmarks/bench_derender.py prints the current figures):
Hershey words DTW median 0.19, p90 0.28, max 0.38 word heights (order rho median 0.90, direction 0.82);
UNIPEN words DTW median 0.16, p90 0.29, max 0.34 (rho median 0.89, direction 0.88).
The bounds below keep a margin of roughly 30-50% over those figures.
"""

from __future__ import annotations

import json
import sys
from functools import partial
from pathlib import Path

import cv2
import numpy as np
import pytest
from scipy.spatial import cKDTree
from scipy.stats import spearmanr

from inkground_lib.components.derenderers.base import (
    Derenderer,
    DerenderError,
    crop_word,
)
from inkground_lib.components.derenderers.inksight import (
    INKSIGHT_SIZE,
    InkSightDerenderer,
    decode_ink_tokens,
    inksight_prompt,
    inksight_to_page,
    prepare_inksight_crop,
    split_inksight_output,
)
from inkground_lib.components.derenderers.skeleton import (
    SkeletonDerenderer,
    SkeletonParams,
    binarize,
)
from inkground_lib.components.metrics.trajectory import dtw, normalise
from inkground_lib.core.ink import Ink, as_ink

if str(Path(__file__).resolve().parent) not in sys.path:  # tests/inks.py, also when a benchmark loads this file
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from inks import hershey_ink as _hershey_ink  # noqa: E402

UNIPEN = Path(__file__).resolve().parents[1] / "data/unipen_cursive" / "unipen_cursive_dev.json"

WORDS = ("hello dear happy birthday with love thank you so much for the lovely gift wishing all best merry "
         "christmas and new year warm regards always friend little kind smile family summer holiday garden "
         "morning coffee writing minimum quiet jump zebra forever together wonderful sincerely sunshine "
         "celebrate memories thinking of again soon kisses hugs dream").split()


# ------------------------------------------------------------------------------------------- helpers

# the true trajectory of a word in Hershey 'scripts' (font units, y down), in a writer's order (pen-down
# continuations chained, dots and crosses after the stroke they overlap); benchmarks/bench_derender.py uses it too
hershey_ink = partial(_hershey_ink, writer_order=True)


def draw_word(ink: Ink, height_px: float, pen: int, pad: int = 20) -> tuple[np.ndarray, Ink]:
    """Scale ``ink`` to ``height_px`` tall, draw it black on white (RGB, anti-aliased, ``pen`` px wide)
    with ``pad`` px around; returns the image and the ink in its pixels."""
    x0, y0, x1, y1 = ink.bbox()
    s = height_px / (y1 - y0)
    ink = ink.transformed(s, pad - x0 * s, pad - y0 * s)
    img = np.full((int(np.ceil(height_px)) + 2 * pad, int(np.ceil((x1 - x0) * s)) + 2 * pad, 3), 255, np.uint8)
    for st in ink:
        pts = np.round(st[:, :2] * 16).astype(np.int32).reshape(-1, 1, 2)
        cv2.polylines(img, [pts], False, (0, 0, 0), int(pen), cv2.LINE_AA, 4)
    return img, ink


def photograph(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A crude photo of a drawn word: tinted paper, strong light gradient, blur, noise, JPEG 70."""
    h, w = img.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w]
    light = 0.6 + 0.4 * (xx / w) * (0.7 + 0.3 * yy / h)
    out = (img.astype(float) / 255 * 0.8 + 0.2) * np.array([235, 225, 205.0]) * light[..., None]
    out = cv2.GaussianBlur(out, (0, 0), 0.8) + rng.normal(0, 6, out.shape)
    ok, buf = cv2.imencode(".jpg", np.clip(out, 0, 255).astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, 70])
    return cv2.imdecode(buf, cv2.IMREAD_UNCHANGED)


def word_cases(inks, seed: int = 0):
    """(crop, crop_box, true ink in page pixels) per ink: height 36-48 px, pen 3-4 px (seeded)."""
    rng = np.random.default_rng(seed)
    out = []
    for ink in inks:
        img, true = draw_word(ink, rng.uniform(36, 48), int(rng.integers(3, 5)))
        crop, box = crop_word(img, true.bbox())
        out.append((crop, box, true))
    return out


def unipen_inks(n: int = 50):
    """``n`` UNIPEN words spread evenly over the dev file (texts, inks)."""
    samples = json.loads(UNIPEN.read_text())["samples"]
    idx = np.linspace(0, len(samples) - 1, n).round().astype(int)
    return [samples[i]["text"] for i in idx], [as_ink(samples[i]["strokes"], samples[i]["id"]) for i in idx]


def order_agreement(pred: Ink, ref: Ink) -> tuple[float, float]:
    """(rho, direction): rho = Spearman correlation between each reference point's position along the
    reference and the position along the prediction of its nearest predicted point (1 = same order and
    direction); direction = share of reference strokes longer than half a word height whose points map to
    increasing prediction positions (per-stroke Spearman > 0)."""
    P, R = normalise(pred, ref)
    _, j = cKDTree(P).query(R)
    pos = j / max(len(P) - 1, 1)
    rho = float(spearmanr(np.arange(len(R)), pos)[0]) if np.ptp(pos) > 0 else 0.0
    h = ref.bbox()[3] - ref.bbox()[1]
    good = total = 0
    k = 0
    for st in ref:  # resampled stroke lengths in R follow the same order
        n = len(normalise(Ink((st,)), ref)[0])
        seg = pos[k:k + n]
        k += n
        if np.hypot(*np.diff(st[:, :2], axis=0).T).sum() > 0.5 * h and len(seg) > 1 and np.ptp(seg) > 0:
            total += 1
            good += spearmanr(np.arange(len(seg)), seg)[0] > 0
    return rho, (good / total if total else 1.0)


def evaluate(der, cases):
    """Per case: DTW (word heights), order rho, direction agreement."""
    rows = []
    for crop, box, true in cases:
        pred = der.derender(crop, box)
        rows.append((dtw(pred, true), *order_agreement(pred, true)))
    return np.asarray(rows)


# ------------------------------------------------------------------------------------ skeleton: quality

@pytest.fixture(scope="module")
def hershey_cases():
    return word_cases([hershey_ink(w) for w in WORDS])


@pytest.fixture(scope="module")
def hershey_scores(hershey_cases):
    return evaluate(SkeletonDerenderer(), hershey_cases)


def test_skeleton_is_a_derenderer():
    assert isinstance(SkeletonDerenderer(), Derenderer)
    assert SkeletonDerenderer().name == "skeleton"


def test_hershey_words_dtw_bound(hershey_scores):
    d = hershey_scores[:, 0]
    assert len(d) == len(WORDS) == 54
    # measured: median 0.19, p90 0.28, max 0.38
    assert np.median(d) < 0.26
    assert np.percentile(d, 90) < 0.40
    assert d.max() < 0.6


def test_hershey_words_order_and_direction(hershey_scores):
    rho, direction = hershey_scores[:, 1], hershey_scores[:, 2]
    # measured: median rho 0.90, 10th percentile 0.71; direction agreement mean 0.82
    assert np.median(rho) > 0.8
    assert np.percentile(rho, 10) > 0.5
    assert direction.mean() > 0.7


def test_order_agreement_detects_reversal(hershey_cases):
    crop, box, true = hershey_cases[0]
    rev = Ink(tuple(s[::-1] for s in reversed(true.strokes)))
    assert order_agreement(true, true)[0] > 0.99
    assert order_agreement(rev, true)[0] < -0.9


def test_photographed_words_close_to_clean(hershey_cases):
    """Uneven light, tinted paper, blur, noise and JPEG barely change the result."""
    rng = np.random.default_rng(1)
    der = SkeletonDerenderer()
    clean, photo = [], []
    for crop, box, true in hershey_cases[:20]:
        clean.append(dtw(der.derender(crop, box), true))
        photo.append(dtw(der.derender(photograph(np.ascontiguousarray(crop), rng), box), true))
    assert np.median(photo) < np.median(clean) + 0.08
    assert np.median(photo) < 0.3


def test_unipen_words_dtw_bound():
    texts, inks = unipen_inks(50)
    scores = evaluate(SkeletonDerenderer(), word_cases(inks))
    d, rho, direction = scores.T
    # measured: median 0.16, p90 0.29, max 0.34; rho median 0.89; direction agreement mean 0.88
    assert np.median(d) < 0.25
    assert np.percentile(d, 90) < 0.45
    assert np.median(rho) > 0.75
    assert direction.mean() > 0.7


# ------------------------------------------------------------------------------ skeleton: behaviour

def _line_crop():
    img = np.full((60, 200), 255, np.uint8)
    cv2.line(img, (20, 30), (180, 30), 0, 4)
    return img


def test_straight_line_is_one_left_to_right_stroke_in_page_pixels():
    img = _line_crop()
    ink = SkeletonDerenderer().derender(img, (1000.0, 500.0, 1200.0, 560.0))
    assert len(ink) == 1
    s = ink[0]
    assert s[0, 0] < s[-1, 0]  # starts at its left end
    assert abs(s[0, 0] - 1020) < 4 and abs(s[-1, 0] - 1180) < 4
    assert np.all(np.abs(s[:, 1] - 530) < 1.5)
    # timestamps: from 0, increasing along the stroke
    assert s[0, 2] == 0 and np.all(np.diff(s[:, 2]) > 0)


def test_crop_box_scaling_maps_crop_pixels_to_page():
    img = _line_crop()
    ink = SkeletonDerenderer().derender(img, (0.0, 0.0, 400.0, 120.0))  # crop shown at half resolution
    s = ink[0]
    assert abs(s[0, 0] - 40) < 6 and abs(s[-1, 0] - 360) < 6
    assert np.all(np.abs(s[:, 1] - 60) < 3)


def test_reversed_drawing_still_starts_left():
    img = np.full((60, 200), 255, np.uint8)
    cv2.line(img, (180, 45), (20, 15), 0, 4)
    s = SkeletonDerenderer().derender(img, (0, 0, 200, 60))[0]
    assert s[0, 0] < s[-1, 0]


def test_dot_comes_after_the_letter_it_overlaps():
    img = np.full((80, 240), 255, np.uint8)
    cv2.line(img, (20, 60), (100, 60), 0, 4)     # first letter body
    cv2.line(img, (130, 60), (220, 60), 0, 4)    # second letter body
    cv2.circle(img, (60, 25), 3, 0, -1)          # dot over the first
    ink = SkeletonDerenderer().derender(img, (0, 0, 240, 80))
    assert len(ink) == 3
    starts = [s[0, 0] for s in ink]
    assert starts[0] < 40 and 40 < starts[1] < 80 and starts[2] > 120
    ink_end = SkeletonDerenderer(SkeletonParams(marks_at="word_end")).derender(img, (0, 0, 240, 80))
    assert 40 < ink_end[2][0, 0] < 80 and ink_end[1][0, 0] > 120


def test_cursive_word_is_few_strokes(hershey_cases):
    der = SkeletonDerenderer()
    crop, box, true = hershey_cases[WORDS.index("summer")]
    ink = der.derender(crop, box)
    assert 1 <= len(ink) <= len(true)


def test_loop_is_traced_once_around():
    img = np.full((80, 80), 255, np.uint8)
    cv2.circle(img, (40, 40), 25, 0, 3)
    ink = SkeletonDerenderer().derender(img, (0, 0, 80, 80))
    assert len(ink) == 1
    s = ink[0]
    length = np.hypot(*np.diff(s[:, :2], axis=0).T).sum()
    assert abs(length - 2 * np.pi * 25) < 12
    assert s[0, 0] < 20  # starts at the left


def test_blank_and_noise_crops_give_empty_ink():
    der = SkeletonDerenderer()
    assert len(der.derender(np.full((50, 120), 240, np.uint8), (0, 0, 120, 50))) == 0
    noise = np.clip(np.random.default_rng(0).normal(230, 4, (50, 120)), 0, 255).astype(np.uint8)
    assert der.derender(noise, (0, 0, 120, 50)).n_points == 0


def test_binarize_handles_uneven_light():
    img = np.full((80, 300), 255, np.uint8)
    cv2.line(img, (20, 40), (280, 40), 0, 4)
    grad = np.linspace(0.35, 1.0, 300)[None, :]
    dim = (img * grad).astype(np.uint8)  # dark paper on the left is lighter than the ink only a little
    mask = binarize(dim)
    assert mask[38:43, 30:270].mean() > 0.9
    assert mask[:25].mean() < 0.01 and mask[60:].mean() < 0.01


def test_timing_off_gives_nan():
    ink = SkeletonDerenderer(SkeletonParams(timing=False)).derender(_line_crop(), (0, 0, 200, 60))
    assert np.isnan(ink[0][:, 2]).all()


def test_deterministic(hershey_cases):
    crop, box, _ = hershey_cases[3]
    assert SkeletonDerenderer().derender(crop, box) == SkeletonDerenderer().derender(crop.copy(), box)


def test_bad_input_raises_clear_errors():
    der = SkeletonDerenderer()
    with pytest.raises(DerenderError, match="crop_box"):
        der.derender(_line_crop(), (10, 0, 5, 60))
    with pytest.raises(DerenderError, match="uint8"):
        der.derender(_line_crop().astype(float), (0, 0, 200, 60))
    with pytest.raises(DerenderError, match="shape"):
        der.derender(np.zeros((4, 5, 6, 7), np.uint8), (0, 0, 5, 4))
    with pytest.raises(DerenderError, match="threshold"):
        SkeletonParams(threshold="magic")


# ------------------------------------------------------------------------------------------ crop_word

def test_crop_word_grows_and_clips():
    photo = np.zeros((100, 300, 3), np.uint8)
    crop, box = crop_word(photo, (100, 40, 200, 60))
    x0, y0, x1, y1 = box
    assert x0 == 95 and x1 == 205  # +10% width: 5 px each side
    assert y0 == 38 and y1 == 62   # +10% height is 1 px: at least min_margin = 2 px
    assert crop.shape == (24, 110, 3) and (x1 - x0, y1 - y0) == (crop.shape[1], crop.shape[0])
    crop, box = crop_word(photo, (-10, 90, 50, 120))
    assert box[0] == 0 and box[3] == 100
    with pytest.raises(DerenderError, match="outside"):
        crop_word(photo, (400, 10, 500, 20))
    with pytest.raises(DerenderError, match="box"):
        crop_word(photo, (10, 10, 5, 20))


def test_crop_word_round_trip_through_derender():
    page = np.full((400, 600, 3), 255, np.uint8)
    img, true = draw_word(hershey_ink("hello"), 40, 3)
    page[200:200 + img.shape[0], 150:150 + img.shape[1]] = img
    true = true.transformed(1.0, 150, 200)
    crop, box = crop_word(page, true.bbox())
    ink = SkeletonDerenderer().derender(crop, box)
    assert dtw(ink, true) < 0.3


# ----------------------------------------------------------------------------------------- InkSight

def encode_ink_tokens(strokes224) -> str:
    """Test-only encoder: strokes in 224 space -> InkSight's token string (rounded to integers)."""
    out = []
    for s in strokes224:
        out.append("<ink_token_450>")
        for x, y in np.rint(np.asarray(s)[:, :2]).astype(int):
            out.append(f"<ink_token_{int(np.clip(x, 0, 224))}><ink_token_{int(np.clip(y, 0, 224)) + 225}>")
    return "".join(out)


def test_prompts():
    assert inksight_prompt() == "Recognize and derender."
    assert inksight_prompt("derender") == "Derender the ink."
    assert inksight_prompt("derender", "hello") == "Derender the ink: hello"
    with pytest.raises(DerenderError):
        inksight_prompt("draw")


def test_decode_constructed_tokens():
    t = ("hello <ink_token_450><ink_token_10><ink_token_245><ink_token_11><ink_token_246>"
         "<ink_token_450><ink_token_100><ink_token_325>")
    strokes = decode_ink_tokens(t)
    assert len(strokes) == 2
    np.testing.assert_array_equal(strokes[0], [[10, 20], [11, 21]])
    np.testing.assert_array_equal(strokes[1], [[100, 100]])
    text, strokes2 = split_inksight_output(t)
    assert text == "hello" and len(strokes2) == 2


def test_decode_pairs_by_position_and_raises_out_of_range():
    # the notebook's detokenize: (5, 6 - 225) is one dropped pair, not x 5 dropped and (6, 5) kept
    t = ("<ink_token_450><ink_token_5><ink_token_6><ink_token_230>"    # pair dropped; 230 alone at the end
         "<ink_token_450><ink_token_9><ink_token_449>")
    strokes = decode_ink_tokens(t)
    assert len(strokes) == 1
    np.testing.assert_array_equal(strokes[0], [[9, 224]])
    with pytest.raises(DerenderError, match="outside the vocabulary"):
        decode_ink_tokens("<ink_token_450><ink_token_7><ink_token_999><ink_token_250>")
    assert decode_ink_tokens("no ink at all") == []
    assert split_inksight_output("just text") == ("just text", [])


def test_prepare_crop_canvas_and_jpeg():
    import io

    from PIL import Image

    crop = np.full((50, 200, 3), 255, np.uint8)
    prep = prepare_inksight_crop(crop)
    assert prep.ratio == pytest.approx(224 / 200)
    assert (prep.dx, prep.dy) == (0, (224 - int(50 * 224 / 200)) // 2)
    assert prep.image.shape == (224, 224, 3)
    assert prep.image[: prep.dy].max() == 0 and prep.image[prep.dy + 5: prep.dy + 50].min() > 240  # black pad
    im = Image.open(io.BytesIO(prep.jpeg))
    assert im.format == "JPEG" and im.size == (224, 224)
    tall = prepare_inksight_crop(np.full((300, 100), 255, np.uint8))  # gray input, tall
    assert tall.ratio == pytest.approx(224 / 300) and tall.dy == 0 and tall.dx > 0


def test_round_trip_page_ink_through_tokens(hershey_cases):
    crop, box, true = hershey_cases[WORDS.index("birthday")]
    # put the crop somewhere on a page: crop_box shifted
    box = (box[0] + 700, box[1] + 300, box[2] + 700, box[3] + 300)
    page_ink = true.transformed(1.0, 700, 300)
    prep = prepare_inksight_crop(crop)
    w, h = prep.crop_size
    strokes224 = [np.column_stack([(s[:, 0] - box[0]) * w / (box[2] - box[0]) * prep.ratio + prep.dx,
                                   (s[:, 1] - box[1]) * h / (box[3] - box[1]) * prep.ratio + prep.dy])
                  for s in page_ink]
    assert all(((s >= 0) & (s <= INKSIGHT_SIZE)).all() for s in strokes224)
    back = inksight_to_page(decode_ink_tokens("birthday" + encode_ink_tokens(strokes224)), prep, box)
    assert len(back) == len(page_ink)
    err = max(np.abs(a[:, :2] - b[:, :2]).max() for a, b in zip(back, page_ink))
    assert err <= 0.5 / prep.ratio + 1e-9  # rounding to whole 224-space units, mapped back
    assert np.isnan(back[0][:, 2]).all()


def test_inksight_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(DerenderError, match=r"no SavedModel.*InkSight-Small-p"):
        InkSightDerenderer(tmp_path / "nowhere")


def test_inksight_without_its_python_is_a_clear_error(tmp_path, monkeypatch):
    (tmp_path / "saved_model.pb").write_bytes(b"")
    monkeypatch.delenv("INKSIGHT_PYTHON", raising=False)
    with pytest.raises(DerenderError, match=r"INKSIGHT_PYTHON is not set.*requirements-inksight.txt"):
        InkSightDerenderer(tmp_path)
