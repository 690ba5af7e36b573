"""InkSight's pure parts against hand-computed values: the rules of google-research/inksight colab.ipynb
(checked 2026-11-30; see the module doc of inkground_lib.components.derenderers.inksight for the lines)."""

import hashlib

import numpy as np
import pytest
from PIL import Image

from inkground_lib.components.derenderers.base import DerenderError
from inkground_lib.components.derenderers.inksight import (
    INKSIGHT_FALLBACK_PROMPT,
    INKSIGHT_FIRST_PROMPT,
    decode_ink_tokens,
    inksight_answer,
    inksight_crop,
    inksight_crop_box,
    inksight_jpeg,
    inksight_prompt,
    inksight_to_page,
    prepare_inksight_crop,
    split_inksight_output,
)


def tok(*ns):
    return "".join(f"<ink_token_{n}>" for n in ns)


# ----------------------------------------------------------------------------------------- crop

def test_crop_box_grows_ten_percent_of_width_and_height_per_side_then_truncates():
    # w = 17, h = 11: x0 = 53 - 1.7 = 51.3, x1 = 70 + 1.7 = 71.7, y0 = 20 - 1.1 = 18.9, y1 = 31 + 1.1 = 32.1;
    # int(51.3) = 51, int(71.7 - 51.3 = 20.4) = 20 -> x1 = 71; int(18.9) = 18, int(13.2) = 13 -> y1 = 31
    assert inksight_crop_box((53, 20, 70, 31), (100, 50)) == (51, 18, 71, 31)
    # clipped to the page: x0 = max(0, 2 - 5) = 0, x1 = min(55, 52 + 5) = 55; y 3 - 1 = 2, 13 + 1 = 14
    assert inksight_crop_box((2, 3, 52, 13), (55, 40)) == (0, 2, 55, 14)
    # float corners are truncated first: (52, 20, 70, 31), w = 18, h = 11 -> 50.2, 18.9, 71.8, 32.1
    # -> x0 = 50, width int(21.6) = 21, y0 = 18, height int(13.2) = 13
    assert inksight_crop_box((52.9, 20.2, 70.99, 31.5), (100, 50)) == (50, 18, 71, 31)
    # grow 0: the box itself
    assert inksight_crop_box((53, 20, 70, 31), (100, 50), grow=0.0) == (53, 20, 70, 31)


def test_crop_box_errors_name_the_box():
    with pytest.raises(DerenderError, match=r"box \(10, 10, 10, 20\).*empty crop \(0 x 12 px\)"):
        inksight_crop_box((10, 10, 10, 20), (100, 50))
    with pytest.raises(DerenderError, match="4 finite numbers"):
        inksight_crop_box((0, 0, float("nan"), 5), (100, 50))
    with pytest.raises(DerenderError, match="grow must be >= 0"):
        inksight_crop_box((0, 0, 5, 5), (100, 50), grow=-0.1)


def test_crop_cuts_the_page_at_the_notebook_box():
    page = (np.arange(50 * 100) % 251).astype(np.uint8).reshape(50, 100)
    crop, box = inksight_crop(page, (53, 20, 70, 31))
    assert box == (51.0, 18.0, 71.0, 31.0)
    np.testing.assert_array_equal(crop, page[18:31, 51:71])


def test_crop_equals_the_notebooks_rotate_then_crop():
    # rotate_crop_scale_and_pad: original.rotate(0, center=(min_x, min_y)).crop((min_x, min_y, max_x, max_y))
    page = np.random.default_rng(1).integers(0, 256, (50, 100, 3), dtype=np.uint8)
    crop, (x0, y0, x1, y1) = inksight_crop(page, (53, 20, 70, 31))
    im = Image.fromarray(page).rotate(0, center=(x0, y0)).crop((int(x0), int(y0), int(x1), int(y1)))
    np.testing.assert_array_equal(crop, np.asarray(im))


# ----------------------------------------------------------------------------------------- resize, pad

def test_resize_is_bicubic_hand_computed():
    # a 2 x 2 crop, left column 0, right 255: ratio = 112, 224 x 224. Output column 60 has its centre at
    # 60.5 / 112 = 0.540179 input px; the cubic kernel (a = -0.5) weighs input 0 (distance 0.040179) by
    # 0.996061 and input 1 (distance 0.959821) by 0.023221: 255 * 0.023221 / 1.019282 = 5.81 -> 6.
    # Lanczos-3 weighs them 0.99706 and 0.0351: 8.67 -> 9. Column 163 mirrors column 60: 255 - 6 = 249.
    crop = np.tile(np.array([[0, 255]], np.uint8), (2, 1))
    prep = prepare_inksight_crop(crop)
    assert (prep.ratio, prep.dx, prep.dy) == (112.0, 0, 0)
    np.testing.assert_array_equal(prep.image[100, 60], [6, 6, 6])
    np.testing.assert_array_equal(prep.image[100, 163], [249, 249, 249])
    lanczos = np.asarray(Image.fromarray(crop).resize((224, 224), Image.Resampling.LANCZOS))
    assert lanczos[100, 60] == 9
    # the notebook calls resize without a filter: Pillow's default for RGB is bicubic
    rgb = np.repeat(crop[:, :, None], 3, axis=2)
    np.testing.assert_array_equal(prep.image, np.asarray(Image.fromarray(rgb).resize((224, 224))))


def test_scaled_size_is_truncated_and_padding_is_black():
    # 55 x 20: ratio = 224 / 55 and int(55 * (224 / 55)) = int(223.99999999999997) = 223 in floating point,
    # int(20 * 4.0727) = int(81.45) = 81; dx = (224 - 223) // 2 = 0, dy = (224 - 81) // 2 = 71
    prep = prepare_inksight_crop(np.full((20, 55, 3), 200, np.uint8))
    assert prep.ratio == 224 / 55 and (prep.dx, prep.dy) == (0, 71) and prep.crop_size == (55, 20)
    assert prep.image[71:152, :223].min() == 200 and prep.image[71:152, :223].max() == 200
    assert prep.image[:, 223].max() == 0  # the lost column stays black
    assert prep.image[:71].max() == 0 and prep.image[152:].max() == 0
    # 448 x 112: ratio 0.5 -> 224 x 56, dy = 84
    wide = prepare_inksight_crop(np.full((112, 448), 255, np.uint8))
    assert (wide.ratio, wide.dx, wide.dy) == (0.5, 0, 84)
    assert wide.image[:84].max() == 0 and wide.image[84:140].min() == 255 and wide.image[140:].max() == 0


def test_gray_crop_equals_its_rgb_and_extreme_aspect_is_an_error():
    gray = (np.arange(30 * 40) % 256).astype(np.uint8).reshape(30, 40)
    a, b = prepare_inksight_crop(gray), prepare_inksight_crop(np.repeat(gray[:, :, None], 3, axis=2))
    np.testing.assert_array_equal(a.image, b.image)
    assert a.jpeg == b.jpeg
    with pytest.raises(DerenderError, match=r"1000 x 4 px scales to 224 x 0 px"):
        prepare_inksight_crop(np.zeros((4, 1000), np.uint8))
    with pytest.raises(DerenderError, match="uint8"):
        prepare_inksight_crop(np.zeros((4, 10), np.float32))


# ----------------------------------------------------------------------------------------- JPEG

def _golden_canvas():
    i = np.arange(224)
    c = np.zeros((224, 224, 3), np.uint8)
    c[:, :, 0] = (np.add.outer(3 * i, 5 * i) % 256).astype(np.uint8)
    c[:, :, 1] = (np.add.outer(7 * i, i) % 256).astype(np.uint8)
    c[:, :, 2] = ((i[:, None] // 16 + i[None, :] // 16) % 2 * 255).astype(np.uint8)
    return c


def _segments(jpeg: bytes) -> dict:
    """JPEG marker -> payload of its first segment (up to the start of scan)."""
    out, i = {}, 2
    while i < len(jpeg) and jpeg[i] == 0xFF and jpeg[i + 1] != 0xDA:
        n = int.from_bytes(jpeg[i + 2:i + 4], "big")
        out.setdefault(jpeg[i + 1], jpeg[i + 4:i + 2 + n])
        i += 2 + n
    return out


def test_jpeg_is_tf_encode_jpeg_defaults():
    b = inksight_jpeg(_golden_canvas())
    seg = _segments(b)
    assert b[:2] == b"\xff\xd8"
    # APP0 JFIF: version 1.1, density unit 1 (dots per inch), 300 x 300 (tf.io.encode_jpeg's defaults)
    assert seg[0xE0][:12] == b"JFIF\x00\x01\x01\x01\x01\x2c\x01\x2c"
    # DQT, table 0 at quality 95: IJG scale 200 - 2 * 95 = 10%, (q * 10 + 50) // 100 of the standard luminance
    # table in zigzag order 16 11 12 14 12 10 16 14 -> 2 1 1 1 1 1 2 1
    assert seg[0xDB][0] == 0 and list(seg[0xDB][1:9]) == [2, 1, 1, 1, 1, 1, 2, 1]
    # SOF0 (baseline, not progressive): 8 bits, 224 x 224, 3 components, Y 2x2 and Cb, Cr 1x1 (4:2:0)
    sof = seg[0xC0]
    assert sof[0] == 8 and sof[1:5] == b"\x00\xe0\x00\xe0" and sof[5] == 3
    assert [sof[6 + 3 * k + 1] for k in range(3)] == [0x22, 0x11, 0x11]
    assert 0xC2 not in seg
    # the bytes tf.io.encode_jpeg writes for this canvas (tensorflow 2.17.0 in .venv-inksight, 2026-11-30)
    assert len(b) == 27451
    assert hashlib.sha256(b).hexdigest() == "4ff51c55d47fce52622b802d33e7fcba6e0164be29d9029323b9e3366559b8df"


# ----------------------------------------------------------------------------------------- prompts

def test_prompts_first_and_fallback():
    assert INKSIGHT_FIRST_PROMPT == inksight_prompt() == "Recognize and derender."
    assert INKSIGHT_FALLBACK_PROMPT == inksight_prompt("derender") == "Derender the ink."
    assert inksight_prompt("derender", "hello") == "Derender the ink: hello"
    with pytest.raises(DerenderError, match="task must be one of"):
        inksight_prompt("draw")


class Calls:
    """A model stand-in answering from a table (prompt -> text) and recording the calls."""

    def __init__(self, answers):
        self.answers, self.seen = answers, []

    def __call__(self, prompt, jpeg):
        self.seen.append((prompt, jpeg))
        return self.answers[prompt]


def test_fallback_retry_only_when_the_first_answer_has_no_ink():
    ink = tok(450, 10, 245, 11, 246)
    c = Calls({INKSIGHT_FIRST_PROMPT: "hello", INKSIGHT_FALLBACK_PROMPT: ink})
    ans = inksight_answer(c, b"JPEG")
    assert [p for p, _ in c.seen] == [INKSIGHT_FIRST_PROMPT, INKSIGHT_FALLBACK_PROMPT]
    assert all(j == b"JPEG" for _, j in c.seen)  # the same image both times
    assert ans.prompts == (INKSIGHT_FIRST_PROMPT, INKSIGHT_FALLBACK_PROMPT) and ans.raw == ("hello", ink)
    assert ans.text == "hello"
    np.testing.assert_array_equal(ans.strokes[0], [[10, 20], [11, 21]])

    c = Calls({INKSIGHT_FIRST_PROMPT: "hello " + ink})
    ans = inksight_answer(c, b"JPEG")
    assert len(c.seen) == 1 and ans.text == "hello" and len(ans.strokes) == 1

    # start tokens only, or pairs that are all dropped: no stroke -> retry; still none -> empty
    for first in ["hi " + tok(450, 450), tok(450, 5, 6)]:
        c = Calls({INKSIGHT_FIRST_PROMPT: first, INKSIGHT_FALLBACK_PROMPT: "nothing"})
        ans = inksight_answer(c, b"J")
        assert len(c.seen) == 2 and ans.strokes == ()


def test_out_of_vocabulary_answer_raises_before_any_retry():
    # the third token starts at character 2 + 15 + 14 = 31 ("w ", "<ink_token_450>", "<ink_token_10>")
    c = Calls({INKSIGHT_FIRST_PROMPT: "w " + tok(450, 10, 451), INKSIGHT_FALLBACK_PROMPT: tok(1, 226)})
    with pytest.raises(DerenderError, match=r"token 2 \(<ink_token_451> at character 31\).*0\.\.450"):
        inksight_answer(c, b"J")
    assert len(c.seen) == 1


# ----------------------------------------------------------------------------------------- tokens

def test_tokens_pair_by_position():
    # x 5 then 6: a pair (5, 6 - 225 = -219) with y out of range -> dropped (both consumed); 230 then nothing:
    # skipped. (Pairing by type would have made (6, 5).)
    assert decode_ink_tokens(tok(450, 5, 6, 230)) == []
    # a y first: (240, 7 - 225) -> dropped; then (8, 250 - 225 = 25) is a point
    s = decode_ink_tokens(tok(450, 240, 7, 8, 250))
    assert len(s) == 1 and s[0].tolist() == [[8.0, 25.0]]
    # a token followed by a start token is skipped; tokens before the first start token form a stroke
    s = decode_ink_tokens(tok(3, 228, 9, 450, 1, 226, 224, 449))
    assert [x.tolist() for x in s] == [[[3.0, 3.0]], [[1.0, 1.0], [224.0, 224.0]]]
    # empty strokes are dropped; other text is ignored, also a malformed token
    assert decode_ink_tokens("a <ink_token_12 b" + tok(450, 450)) == []
    text, strokes = split_inksight_output("birthday " + tok(450, 10, 245))
    assert text == "birthday" and strokes[0].tolist() == [[10.0, 20.0]]
    assert split_inksight_output("just text") == ("just text", [])


def test_out_of_range_tokens_raise_with_their_place():
    with pytest.raises(DerenderError, match=r"token 1 \(<ink_token_999> at character 15\) is outside"):
        decode_ink_tokens(tok(450, 999, 250))
    assert len(decode_ink_tokens(tok(450, 0, 225, 224, 449))[0]) == 2  # the extremes are valid


def test_strict_decoding_names_malformed_pairs():
    with pytest.raises(DerenderError, match=r"tokens 1, 2 \(<ink_token_5><ink_token_6> at character 15\)"):
        decode_ink_tokens(tok(450, 5, 6), strict=True)
    with pytest.raises(DerenderError, match=r"token 1 \(<ink_token_7> .*no partner"):
        decode_ink_tokens(tok(450, 7, 450, 1, 226), strict=True)
    assert decode_ink_tokens(tok(450, 1, 226), strict=True)[0].tolist() == [[1.0, 1.0]]


# ----------------------------------------------------------------------------------------- back to the page

def test_inverse_mapping_hand_computed():
    # crop (51, 18)-(499, 130): 448 x 112 px, ratio 0.5, dx 0, dy 84. Canvas (10, 100) -> crop
    # ((10 - 0) / 0.5, (100 - 84) / 0.5) = (20, 32) -> page (71, 50); canvas (224, 140) -> (448, 112) + corner
    prep = prepare_inksight_crop(np.full((112, 448, 3), 255, np.uint8))
    ink = inksight_to_page([np.array([[10.0, 100.0], [224.0, 140.0]])], prep, (51, 18, 499, 130))
    np.testing.assert_allclose(ink[0][:, :2], [[71.0, 50.0], [499.0, 130.0]])
    assert np.isnan(ink[0][:, 2]).all()
    # a tall crop: 100 x 300, ratio 224 / 300, dx = (224 - 74) // 2 = 75
    tall = prepare_inksight_crop(np.full((300, 100), 255, np.uint8))
    assert tall.dx == 75 and tall.dy == 0
    ink = inksight_to_page([np.array([[75.0, 0.0], [75.0 + 56.0, 112.0]])], tall, (5, 7, 105, 307))
    np.testing.assert_allclose(ink[0][:, :2], [[5.0, 7.0], [5 + 56 * 300 / 224, 7 + 150.0]])


def test_the_pseudo_label_stage_crops_as_the_notebook_for_inksight():
    """The pseudo-label stage asks the derenderer for its crop: InkSight gets the notebook's crop box, the
    skeleton derenderer the stage's default (10% larger box, at least 2 px)."""
    import numpy as np

    from inkground_lib.components.derenderers.inksight import inksight_crop_box
    from inkground_lib.core.dataset import Page, Word
    from inkground_lib.core.ink import as_ink
    from inkground_lib.pseudo.derender_stage import derender_page

    class Recorder:
        parallel = False

        def __init__(self, crop=None):
            self.boxes = []
            if crop is not None:
                self.crop = crop

        def derender(self, crop, crop_box, text=None):
            self.boxes.append(tuple(crop_box))
            return as_ink([[[crop_box[0], crop_box[1], 0.0]]])

    photo = np.full((120, 240, 3), 255, np.uint8)
    ink = as_ink([[[60, 40, 0], [180, 80, 1]]])
    word = Word("p0-w0", "word", (60.0, 40.0, 180.0, 80.0), ink, "p0", "test", ink)
    page = Page("p0", None, "w", 240, 120, [word])
    page.load_image = lambda: photo
    from inkground_lib.components.derenderers.inksight import inksight_crop

    notebook = Recorder(crop=inksight_crop)
    derender_page((page, notebook, "k"))
    assert notebook.boxes == [tuple(float(v) for v in inksight_crop_box(word.box, (240, 120)))]
    plain = Recorder()
    derender_page((page, plain, "k"))
    assert plain.boxes != notebook.boxes
