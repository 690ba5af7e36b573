"""Tests of the renderer, page drawing (draw_ink) and stroke-order overlays (plot_overlay, crop_box)."""

import matplotlib

matplotlib.use("Agg")

import cv2
import matplotlib.pyplot as plt
import numpy as np
import pytest

from inkground_lib.core.ink import Ink, as_ink
from inkground_lib.core.render import RenderSpec, crop_box, draw_ink, render_ink
from inkground_lib.report.overlay import plot_overlay

# ------------------------------------------------------------------------------------------- render_ink

def test_render_ink_height_and_blank():
    img = render_ink([[[0, 0], [100, 30]]], RenderSpec(height=64))
    assert img.dtype == np.uint8 and img.shape[0] == 64
    assert img.min() == 0 and img.max() == 255
    blank = render_ink(Ink(()))
    assert blank.shape == (64, 64) and (blank == 255).all()


# ------------------------------------------------------------------------------------------- draw_ink

def test_draw_ink_line_pixels_and_width():
    canvas = np.full((40, 60), 255, np.uint8)
    out = draw_ink(canvas, [[[10, 20], [50, 20]]], pen_width=3)
    assert out is canvas
    # on the line: dark; far from it: untouched paper
    assert canvas[20, 15:45].max() < 60
    assert (canvas[:10] == 255).all() and (canvas[30:] == 255).all()
    assert (canvas[:, :6] == 255).all()
    # the cross-section covers pen_width pixels (ink coverage summed across the line)
    for w in (1.5, 2.0, 3.0, 4.5):
        c = draw_ink(np.full((40, 60), 255, np.uint8), [[[10, 20.3], [50, 20.3]]], pen_width=w)
        assert abs((255 - c[:, 30].astype(float)).sum() / 255 - w) < 0.3


def test_draw_ink_dot_and_value():
    canvas = np.full((30, 30), 200, np.uint8)
    draw_ink(canvas, [[[15, 12]]], pen_width=5, value=40)
    assert canvas[12, 15] <= 45          # the dot has the requested value
    assert canvas[12, 15 + 4] == 200     # and a radius of ~2.5 px
    assert canvas.min() >= 40
    area = (200 - canvas.astype(float)).sum() / (200 - 40)
    assert abs(area - np.pi * 2.5 ** 2) < 2.0


def test_draw_ink_supersampled_lines_up_with_page_grid():
    ink = [[[12.0, 7.0], [12.0, 30.0]]]
    a = draw_ink(np.full((40, 40), 255, np.uint8), ink, pen_width=2)
    big = draw_ink(np.full((80, 80), 255, np.uint8), ink, pen_width=2, scale=2)
    b = cv2.resize(big, (40, 40), interpolation=cv2.INTER_AREA)
    # the darkest column is the same at both scales (pixel centres at integer page coordinates)
    assert int(np.argmin(a[:, :].sum(axis=0))) == 12
    assert int(np.argmin(b[:, :].sum(axis=0))) == 12


def test_draw_ink_rejects_bad_input():
    with pytest.raises(ValueError, match="canvas"):
        draw_ink(np.zeros((5, 5, 3), np.uint8), [[[1, 1]]], pen_width=1)
    with pytest.raises(ValueError, match="pen_width"):
        draw_ink(np.zeros((5, 5), np.uint8), [[[1, 1]]], pen_width=0)


# ------------------------------------------------------------------------------------------- overlays

def test_crop_box_contains_box_and_is_clipped():
    cb = crop_box((100, 50, 200, 90), (1000, 1300), margin=0.3)
    assert all(isinstance(v, int) for v in cb)
    assert cb[0] <= 100 - 30 and cb[1] <= 50 - 30 and cb[2] >= 200 + 30 and cb[3] >= 90 + 30
    edge = crop_box((5, 5, 990, 1295), (1000, 1300))
    assert edge == (0, 0, 1000, 1300)
    with pytest.raises(ValueError):
        crop_box((10, 10, 5, 20), (100, 100))


def test_plot_overlay_artists_and_order():
    ink = as_ink([[[10, 10, 0], [20, 12, 10], [30, 10, 20]], [[15, 2, 200]], [[40, 20, 300], [45, 25, 310]]])
    page = np.full((60, 80, 3), 240, np.uint8)
    box = crop_box(ink.bbox(), (80, 60), margin=0.2)
    crop = page[box[1]:box[3], box[0]:box[2]]
    fig, ax = plt.subplots()
    lc = plot_overlay(ax, ink, image=crop, extent_box=box, number_strokes=True, label="pred")
    try:
        segs = lc.get_segments()
        assert len(segs) == (3 - 1) + 0 + (2 - 1)         # one segment per pair of consecutive points
        vals = np.asarray(lc.get_array())
        assert np.all(np.diff(vals) > 0) and 0 <= vals.min() and vals.max() <= 1   # colour runs along the ink
        assert lc.get_label() == "pred"
        starts = ax.collections[-1].get_offsets()
        assert np.allclose(starts, [[10, 10], [15, 2], [40, 20]])   # a marker at each stroke's start
        assert [t.get_text() for t in ax.texts] == ["1", "2", "3"]
        im = ax.images[0]
        assert np.allclose(im.get_extent(), [box[0] - 0.5, box[2] - 0.5, box[3] - 0.5, box[1] - 0.5])
        assert ax.yaxis_inverted()                                   # y runs down like page pixels
    finally:
        plt.close(fig)


def test_plot_overlay_without_image_and_bad_extent():
    fig, ax = plt.subplots()
    try:
        plot_overlay(ax, [[[0, 0], [10, 5]]], start_marker=False)
        assert ax.yaxis_inverted()
        assert len(ax.collections) == 1
        with pytest.raises(ValueError, match="extent_box"):
            plot_overlay(ax, [[[0, 0], [1, 1]]], image=np.zeros((10, 10)), extent_box=(0, 0, 5, 5))
    finally:
        plt.close(fig)
