"""Tests of the grid image and the request builder (inkground_lib.evaluation.prompt)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from inkground_lib.evaluation.parse import from_cells, parse_strokes
from inkground_lib.evaluation.prompt import (
    PROMPT_VERSION,
    Example,
    PromptError,
    PromptRequest,
    build_request,
    compose_grid,
    decode_png,
    example_answer,
    grid_image,
    png_bytes,
    render_request_markdown,
    request_hash,
    request_images,
    save_request_images,
)

ROOT = Path(__file__).resolve().parents[1]


def _photo(h: int, w: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8)


def _example(h: int = 300, w: int = 400, seed: int = 1) -> Example:
    strokes = [np.array([[50.0, 100.0], [120.0, 60.0], [200.0, 140.0], [260.0, 90.0]]),
               np.array([[130.0, 40.0]])]
    return Example(photo=_photo(h, w, seed), word="lit", strokes=strokes, page_id="pex", word_id="pex-w0")


# ------------------------------------------------------------------------------------ grid image

@pytest.mark.parametrize("shape,grid", [((300, 400), 50), ((900, 700), 50), ((40, 120), 50), ((5, 8), 10),
                                        ((200, 200), 7)])
def test_photo_pixels_unchanged_and_labels_outside(shape, grid):
    photo = _photo(*shape)
    img, lay = compose_grid(photo, grid, max_side=None)
    x0, y0, x1, y1 = lay.photo_box
    assert (x1 - x0, y1 - y0) == (shape[1], shape[0]) and lay.scale == 1.0
    np.testing.assert_array_equal(img[y0:y1, x0:x1], photo)
    outside = img.copy()
    outside[y0:y1, x0:x1] = 255
    # something (labels, ticks, frame) is drawn, and all of it lies in the margins
    assert (outside < 128).sum() > 20
    assert img.shape[:2] == (lay.image_size[1], lay.image_size[0])
    for labels in (lay.col_labels, lay.row_labels):
        assert list(labels) == sorted(set(labels)) and 1 <= labels[0] and labels[-1] == grid


def test_labels_sit_at_cell_centres():
    grid = 10
    photo = np.full((300, 500, 3), 255, np.uint8)
    img, lay = compose_grid(photo, grid, max_side=None, font_size=12)
    assert lay.col_labels == tuple(range(1, 11)) and lay.row_labels == tuple(range(1, 11))
    gray = img.mean(axis=2)
    x0, y0, x1, y1 = lay.photo_box
    cw, ch = (x1 - x0) / grid, (y1 - y0) / grid
    label_band = gray[y1 + 8:, :]          # below ticks: column labels only
    for j in range(1, grid + 1):
        cx, _ = lay.cell_center(j, 1)
        a, b = int(cx - cw / 2), int(cx + cw / 2)
        cols = np.flatnonzero((label_band[:, a:b] < 100).any(axis=0)) + a
        assert len(cols), f"no label under column {j}"
        assert abs((cols.min() + cols.max() + 1) / 2 - cx) <= 2.0, j
    row_band = gray[:, : x0 - 8]           # left of ticks: row labels only
    for i in range(1, grid + 1):
        _, cy = lay.cell_center(1, i)
        a, b = int(cy - ch / 2), int(cy + ch / 2)
        rows = np.flatnonzero((row_band[a:b] < 100).any(axis=1)) + a
        assert len(rows), f"no label beside row {i}"
        assert abs((rows.min() + rows.max() + 1) / 2 - cy) <= 2.5, i
    # row 10 is the top row, row 1 the bottom row
    assert lay.cell_center(1, 10)[1] < lay.cell_center(1, 1)[1]


def test_label_thinning_when_cells_are_small():
    img, lay = compose_grid(_photo(100, 150), 50, max_side=None)
    assert len(lay.col_labels) < 50 and len(lay.row_labels) < 50
    assert 50 in lay.col_labels and 50 in lay.row_labels
    step = lay.col_labels[-1] - lay.col_labels[-2]
    assert step in (2, 5, 10, 20, 25, 50)


def test_downscale_keeps_cell_mapping():
    photo = _photo(1500, 2000)
    img, lay = compose_grid(photo, 50, max_side=1024)
    x0, y0, x1, y1 = lay.photo_box
    assert max(x1 - x0, y1 - y0) == 1024 and lay.scale == pytest.approx(1024 / 2000)
    page = from_cells([[12, 30]], 50, (2000, 1500))[0]
    cx, cy = lay.cell_center(12, 30)
    assert (cx - x0) / lay.scale == pytest.approx(page[0], abs=1.5)
    assert (cy - y0) / lay.scale == pytest.approx(page[1], abs=1.5)
    assert grid_image(photo, 50, max_side=1024).shape == img.shape


def test_bad_images_raise():
    with pytest.raises(PromptError, match="shape"):
        grid_image(np.zeros((10,), np.uint8))
    with pytest.raises(PromptError, match="uint8"):
        grid_image(np.zeros((10, 10, 3), np.float32))
    with pytest.raises(PromptError, match="grid"):
        grid_image(np.zeros((10, 10, 3), np.uint8), grid=0)


# ------------------------------------------------------------------------------------ example answer

def test_example_point_at_cell_centre_maps_back():
    w, h, grid = 400, 300, 50
    cells = np.array([[12, 30], [13, 31], [40, 5], [1, 1], [50, 50]], float)
    strokes = [from_cells(cells, grid, (w, h))]
    ex = Example(photo=_photo(h, w), word="go", strokes=strokes)
    ans = example_answer(ex, grid, tolerance=0)
    for j, i in cells.astype(int):
        assert f"'x{j}y{i}'" in ans
    r = parse_strokes(ans, grid, (w, h))
    assert r.status == "ok"
    np.testing.assert_allclose(r.strokes[0], strokes[0], atol=1e-9)
    # and the grid image puts that cell at that photo pixel
    img, lay = compose_grid(ex.photo, grid, max_side=None)
    cx, cy = lay.cell_center(12, 30)
    assert (cx - lay.photo_box[0], cy - lay.photo_box[1]) == pytest.approx(tuple(strokes[0][0]))


def test_example_answer_is_thinned_and_parses():
    t = np.linspace(0, 1, 400)
    stroke = np.column_stack([40 + 300 * t, 150 + 60 * np.sin(12 * t)])
    ex = Example(photo=_photo(300, 400), word="wave", strokes=[stroke])
    ans = example_answer(ex, 50)
    r = parse_strokes(ans, 50, (400, 300))
    assert r.status == "ok" and 5 < r.n_points < 100
    assert r.t_values[0][0] == 0 and r.t_values[0][-1] == 1
    with pytest.raises(PromptError, match="no strokes"):
        example_answer(Example(photo=_photo(10, 10), word="x", strokes=[]), 50)


# ------------------------------------------------------------------------------------ requests

def test_two_image_request_structure():
    req = build_request(_photo(500, 400, 3), (400, 500), "world", _example(), page_id="p1", word_id="p1-w2")
    kinds = [k for k, _ in req.parts]
    assert kinds.count("image") == 2
    assert kinds.index("image") < [i for i, k in enumerate(kinds) if k == "image"][1]
    text = req.text
    assert text.index('"lit"') < text.index('"world"')                # example before the target
    assert "<answer>" in text and "t_values" in text and "bottom to top" in text
    assert "Dots (i, j) and crosses (t, x) come last" in text
    m = req.meta
    assert m["prompt_version"] == PROMPT_VERSION and m["variant"] == "two-image" and m["grid"] == 50
    assert (m["page_id"], m["word_id"], m["example_page_id"], m["example_word_id"]) == \
        ("p1", "p1-w2", "pex", "pex-w0")
    assert m["page_size"] == [400.0, 500.0]
    imgs = request_images(req)
    assert [list(im.shape[1::-1]) for im in imgs] == m["image_sizes"]
    # the example answer in the prompt parses back to the example strokes (within the rounding)
    ans = re.search(r"<answer>.*?</answer>", req.parts[3][1], re.S).group(0)
    r = parse_strokes(ans, 50, (400, 300))
    assert r.status == "ok" and len(r.strokes) == 2
    np.testing.assert_allclose(r.strokes[1], [[130, 40]], atol=0.05 * 8 + 1e-9)


def test_one_image_request_structure():
    ex = _example()
    req = build_request(_photo(500, 400, 3), (400, 500), "world", ex, variant="one-image")
    assert [k for k, _ in req.parts].count("image") == 1
    assert "side by side" in req.text and "YOUR PAGE" in req.text
    img = request_images(req)[0]
    (bx0, by0, bx1, by1), (tx0, ty0, tx1, ty1) = req.meta["photo_boxes"]
    np.testing.assert_array_equal(img[by0:by1, bx0:bx1], ex.photo)
    np.testing.assert_array_equal(img[ty0:ty1, tx0:tx1], _photo(500, 400, 3))
    assert bx1 < tx0   # example on the left


@pytest.mark.parametrize("variant", ["two-image", "one-image"])
def test_tiny_one_word_pages(variant):
    ex = Example(photo=_photo(30, 90), word="a", strokes=[np.array([[10.0, 15.0], [80.0, 16.0]])])
    req = build_request(_photo(24, 70, 5), (70, 24), "I", ex, variant=variant)
    imgs = request_images(req)
    assert all(im.ndim == 3 and im.shape[2] == 3 for im in imgs)
    assert len(request_hash(req, "m", {})) == 64


def test_build_request_errors():
    ex = _example()
    with pytest.raises(PromptError, match="variant"):
        build_request(_photo(50, 50), (50, 50), "w", ex, variant="three-image")
    with pytest.raises(PromptError, match="target_word"):
        build_request(_photo(50, 50), (50, 50), "  ", ex)
    with pytest.raises(PromptError, match="page_size"):
        build_request(_photo(50, 50), (0, 50), "w", ex)


def test_png_bytes_deterministic_and_lossless():
    im = grid_image(_photo(120, 160), 20)
    a, b = png_bytes(im), png_bytes(im.copy())
    assert a == b and a[:8] == b"\x89PNG\r\n\x1a\n"
    np.testing.assert_array_equal(decode_png(a), im)


def test_request_hash_changes_with_what_changes_the_answer():
    ex = _example()
    page = _photo(200, 300, 7)
    base = build_request(page, (300, 200), "world", ex, page_id="a")
    params = {"temperature": 0, "max_tokens": 8192}
    h = request_hash(base, "model-a", params)
    assert h == request_hash(build_request(page, (300, 200), "world", ex, page_id="other-id"), "model-a",
                             dict(reversed(list(params.items()))))  # meta and key order do not matter
    assert h != request_hash(build_request(page, (300, 200), "word", ex), "model-a", params)
    assert h != request_hash(base, "model-b", params)
    assert h != request_hash(base, "model-a", {"temperature": 0.7, "max_tokens": 8192})
    page2 = page.copy()
    page2[100, 150, 0] ^= 1
    assert h != request_hash(build_request(page2, (300, 200), "world", ex), "model-a", params)
    assert h != request_hash(build_request(page, (300, 200), "world", ex, variant="one-image"), "model-a",
                             params)
    # the same pixels encoded differently hash the same
    parts = [(k, png_bytes(decode_png(p)) if k == "image" else p) for k, p in base.parts]
    import io

    from PIL import Image
    recoded = []
    for k, p in parts:
        if k == "image":
            buf = io.BytesIO()
            Image.open(io.BytesIO(p)).save(buf, format="PNG", compress_level=1)
            assert buf.getvalue() != p
            p = buf.getvalue()
        recoded.append((k, p))
    assert request_hash(PromptRequest(base.system, recoded, {}), "model-a", params) == h
    with pytest.raises(PromptError, match="JSON"):
        request_hash(base, "model-a", {"temperature": float("nan")})


_HASH_SCRIPT = """
import numpy as np
from inkground_lib.evaluation.prompt import Example, build_request, request_hash
rng = np.random.default_rng(0)
photo = rng.integers(0, 256, size=(200, 300, 3), dtype=np.uint8)
ex = Example(photo=photo[::-1].copy(), word="lit", strokes=[np.array([[50.0, 100.0], [120.0, 60.0]])])
print(request_hash(build_request(photo, (300, 200), "world", ex), "m", {"temperature": 0}))
"""


@pytest.mark.slow  # other processes
def test_request_hash_stable_across_processes():
    out = [subprocess.run([sys.executable, "-c", _HASH_SCRIPT], capture_output=True, text=True, check=True,
                          cwd=ROOT).stdout.strip() for _ in range(2)]
    assert out[0] == out[1] and len(out[0]) == 64
    ns: dict = {}
    exec(compile(_HASH_SCRIPT.replace("print(", "ns_out = ("), "<hash>", "exec"), ns)
    assert ns["ns_out"] == out[0]


def test_render_request_markdown_shows_text_and_images(tmp_path):
    req = build_request(_photo(200, 300, 7), (300, 200), "world", _example())
    md = render_request_markdown(req)
    for kind, p in req.parts:
        if kind == "text":
            assert p in md
    assert md.count("*[image ") == 2 and req.system in md
    paths = save_request_images(req, tmp_path, stem="r")
    assert [p.name for p in paths] == ["r_image1.png", "r_image2.png"]
    np.testing.assert_array_equal(decode_png(paths[0].read_bytes()), request_images(req)[0])
    md2 = render_request_markdown(req, image_links=[p.name for p in paths])
    assert "![image 1](r_image1.png)" in md2 and "![image 2](r_image2.png)" in md2


def test_a_word_with_backticks_stays_inside_its_fence():
    """Issue 44: the prompt shown in the book is Markdown; a word's text of backticks and HTML cannot close the
    fenced block and become markup (the fence is longer than any run of backticks in it)."""
    from markdown_it import MarkdownIt

    word = "x\n````\n<img src=x onerror=alert(1)>\n"
    req = build_request(_photo(200, 300, 7), (300, 200), word, _example())
    html = MarkdownIt("commonmark").render(render_request_markdown(req))
    assert "<img" not in html and "&lt;img src=x" in html
