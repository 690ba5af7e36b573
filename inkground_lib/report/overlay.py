"""Drawing an ink over a page crop with its pen order shown (matplotlib)."""

from __future__ import annotations

import numpy as np

from inkground_lib.core.ink import InkLike, as_ink
from inkground_lib.report.legibility import FIGURE_TEXT_PT


def plot_overlay(ax, ink: InkLike, *, image=None, extent_box=None, cmap="viridis", lw: float = 1.5,
                 start_marker: bool = True, label=None, number_strokes: bool = False):
    """Draw ``ink`` (page pixels) over a page photo or crop on the matplotlib axes ``ax``; y runs down.

    * ``image``: an (h, w) or (h, w, 3) array, shown so that page coordinates line up: if ``extent_box`` =
      (x0, y0, x1, y1) is given the image is ``page[y0:y1, x0:x1]`` (as from :func:`crop_box`), otherwise it
      is the whole page. Pixel centres sit at integer page coordinates. The axes are limited to the image.
    * Colour runs along the ink: each segment is coloured by its position in the whole ink (0 = first point of
      the first stroke, 1 = last point of the last stroke) through ``cmap``, so the order across strokes is
      visible. Line width ``lw`` points.
    * ``start_marker`` puts a marker (coloured like the point) at each stroke's first point;
      ``number_strokes`` writes the stroke number (1-based) next to it.
    * ``label`` labels the line collection for a legend.

    Returns the :class:`matplotlib.collections.LineCollection` (one segment per pair of consecutive points).
    """
    from matplotlib.collections import LineCollection

    ink = as_ink(ink)
    if image is not None:
        img = np.asarray(image)
        if img.ndim not in (2, 3):
            raise ValueError(f"plot_overlay: image must be (h, w) or (h, w, 3), got shape {img.shape}")
        h, w = img.shape[:2]
        if extent_box is None:
            x0, y0 = 0, 0
        else:
            x0, y0, x1, y1 = extent_box
            if (x1 - x0, y1 - y0) != (w, h):
                raise ValueError(f"plot_overlay: extent_box {tuple(extent_box)} is {x1 - x0} x {y1 - y0} px but "
                                 f"the image is {w} x {h}")
        ax.imshow(img, cmap="gray" if img.ndim == 2 else None, vmin=0, vmax=255,
                  extent=(x0 - 0.5, x0 + w - 0.5, y0 + h - 0.5, y0 - 0.5), interpolation="antialiased")
    elif extent_box is not None:
        x0, y0, x1, y1 = extent_box
        ax.set_xlim(x0 - 0.5, x1 - 0.5)
        ax.set_ylim(y1 - 0.5, y0 - 0.5)
    n = ink.n_points
    segs, vals = [], []
    starts, start_vals = [], []
    k = 0
    for s in ink.strokes:
        pos = (k + np.arange(len(s))) / max(n - 1, 1)
        if len(s) >= 2:
            xy = s[:, :2]
            segs.append(np.stack([xy[:-1], xy[1:]], axis=1))
            vals.append((pos[:-1] + pos[1:]) / 2)
        if len(s):
            starts.append(s[0, :2])
            start_vals.append(pos[0])
        k += len(s)
    segs = np.concatenate(segs) if segs else np.zeros((0, 2, 2))
    vals = np.concatenate(vals) if vals else np.zeros(0)
    lc = LineCollection(segs, cmap=cmap, linewidths=lw, capstyle="round", joinstyle="round", label=label)
    lc.set_array(vals)
    lc.set_clim(0.0, 1.0)
    ax.add_collection(lc)
    if starts:
        st = np.asarray(starts)
        if start_marker:
            ax.scatter(st[:, 0], st[:, 1], c=start_vals, cmap=cmap, vmin=0.0, vmax=1.0, s=(2.5 * lw) ** 2 + 10,
                       marker="o", edgecolors="white", linewidths=0.8, zorder=3)
        if number_strokes:
            for i, (x, y) in enumerate(st):
                ax.annotate(str(i + 1), (x, y), xytext=(3, 3), textcoords="offset points",
                            fontsize=FIGURE_TEXT_PT,
                            color="black", zorder=4,
                            bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.7))
    if image is None:
        if extent_box is None and n:
            bx0, by0, bx1, by1 = ink.bbox()
            pad = max(bx1 - bx0, by1 - by0, 1.0) * 0.05
            ax.set_xlim(bx0 - pad, bx1 + pad)
            ax.set_ylim(by1 + pad, by0 - pad)
        elif not ax.yaxis_inverted():
            ax.invert_yaxis()
    ax.set_aspect("equal")
    return lc


def _direction_arrows(ax, ink, colour: str, lw: float, min_len_px: float) -> int:
    """An arrowhead at the middle (by arc length) of every stroke at least ``min_len_px`` page px long,
    pointing the way the pen moved. Returns the number drawn."""
    from matplotlib.patches import FancyArrowPatch

    n = 0
    for s in ink.strokes:
        xy = s[:, :2]
        if len(xy) < 2:
            continue
        seg = np.hypot(*np.diff(xy, axis=0).T)
        total = float(seg.sum())
        if total < min_len_px:
            continue
        cum = np.concatenate([[0.0], np.cumsum(seg)])
        a, b = np.interp([0.45 * total, 0.55 * total], cum, xy[:, 0]), np.interp([0.45 * total, 0.55 * total], cum, xy[:, 1])
        ax.add_patch(FancyArrowPatch((a[0], b[0]), (a[1], b[1]), arrowstyle="-|>", mutation_scale=7 + 2 * lw,
                                     color=colour, lw=0, zorder=5))
        n += 1
    return n


def plot_comparison(ax, prediction: InkLike | None, reference: InkLike | None, *, image=None, extent_box=None,
                    prediction_label: str = "prediction", reference_label: str = "reference",
                    reference_colour: str | None = None, lw: float = 1.6, arrows: bool = True,
                    legend: bool = True):
    """A prediction and its reference told apart at a glance, over a page crop (page pixels, y down).

    The reference is dashed (:data:`~inkground_lib.report.palette.REFERENCE` blue, or ``reference_colour``,
    e.g. :data:`~inkground_lib.report.palette.TRUTH` for a true pen path), the prediction solid
    (:data:`~inkground_lib.report.palette.PREDICTION` vermillion); both get a thin white halo so that they
    stay visible on dark photographed ink. Each stroke's start is a filled dot and, with ``arrows``, an
    arrowhead at the middle of each stroke longer than a tenth of the crop points the way the pen moved.
    ``image``/``extent_box`` as in :func:`plot_overlay`. With ``legend`` a small key names the two lines.
    Returns the list of legend handles (Line2D)."""
    import matplotlib.patheffects as pe
    from matplotlib.lines import Line2D

    from inkground_lib.report.palette import PREDICTION, REFERENCE

    ref_colour = reference_colour or REFERENCE
    if image is not None:
        img = np.asarray(image)
        h, w = img.shape[:2]
        x0, y0 = (0, 0) if extent_box is None else extent_box[:2]
        ax.imshow(img, cmap="gray" if img.ndim == 2 else None, vmin=0, vmax=255,
                  extent=(x0 - 0.5, x0 + w - 0.5, y0 + h - 0.5, y0 - 0.5), interpolation="antialiased")
        span = max(w, h)
    elif extent_box is not None:
        span = max(extent_box[2] - extent_box[0], extent_box[3] - extent_box[1])
    else:
        span = 100.0
    halo = [pe.withStroke(linewidth=lw + 2.2, foreground="white", alpha=0.85)]
    handles = []
    for ink, colour, style, label, z in ((reference, ref_colour, (0, (3.5, 2.0)), reference_label, 3),
                                         (prediction, PREDICTION, "solid", prediction_label, 4)):
        if ink is None:
            continue
        ink = as_ink(ink)
        for s in ink.strokes:
            if len(s) == 1:
                ax.plot(s[:, 0], s[:, 1], "o", ms=2.5 * lw, color=colour, zorder=z)
            elif len(s):
                ax.plot(s[:, 0], s[:, 1], color=colour, lw=lw, ls=style, solid_capstyle="round",
                        path_effects=halo, zorder=z)
        starts = np.array([s[0, :2] for s in ink.strokes if len(s)])
        if len(starts):
            ax.scatter(starts[:, 0], starts[:, 1], s=(2.2 * lw) ** 2 + 6, color=colour, edgecolors="white",
                       linewidths=0.7, zorder=z + 0.5)
        if arrows:
            _direction_arrows(ax, ink, colour, lw, min_len_px=span / 10)
        handles.append(Line2D([], [], color=colour, lw=lw, ls=style, marker="o", ms=4, markevery=[0],
                              label=label))
    if extent_box is not None:
        ax.set_xlim(extent_box[0] - 0.5, extent_box[2] - 0.5)
        ax.set_ylim(extent_box[3] - 0.5, extent_box[1] - 0.5)
    elif image is None and not ax.yaxis_inverted():
        ax.invert_yaxis()
    ax.set_aspect("equal")
    if legend and handles:
        ax.legend(handles=handles, loc="upper left", fontsize=FIGURE_TEXT_PT, frameon=True, framealpha=0.85,
                  handlelength=2.2,
                  borderpad=0.3, labelspacing=0.2)
    return handles
