"""Pen paths that play: an inline, self-contained SVG that draws one or more inks stroke by stroke in pen
order (e.g. a prediction over its reference), for the HTML book.

Show the string with ``IPython.display.HTML(svg)`` (or ``SVG``) so that it is inlined in the page; inside an
``<img>`` the controls cannot work (the animation still plays there).

Choices (see :func:`pen_path_svg` for the details):

* Timing (:func:`stroke_schedule`): by default every stroke lasts a time proportional to its arc length (page
  pixels), strokes one after another in pen order; the pen-up moves between them get equal, short slots
  (``pen_up_share`` of the total). ``timing="time"`` uses the ink's own t (ms) where every t is finite.
  Every layer is scheduled over the same ``total_ms`` so that the layers start and finish together.
* Animation: CSS only (``stroke-dasharray`` / ``stroke-dashoffset`` keyframes on paths with ``pathLength=1``,
  one ``animation-delay`` per stroke) in the SVG's own ``<style>``, every rule scoped by the figure's unique
  id. The un-animated style is the complete drawing: that is what prints, what ``prefers-reduced-motion:
  reduce`` shows, and what a viewer without CSS animation shows.
* Playing where the reader looks: a tiny inline plain-JS ``<script>`` (no framework, no network) bound to the
  figure's id holds the drawing at its start until at least half of the player is in view (an
  ``IntersectionObserver`` shared by the page's players), then plays it from the first stroke. A click or tap
  pauses / resumes a playing drawing (``animation-play-state``) and replays a finished one; a visible replay
  control (at the right end of the hint line) and R replay it at any time (the drawing group is replaced by a
  clone, which restarts its CSS animations); Space and Enter act like a click. The SVG is focusable
  (``tabindex=0``) with a visible focus ring. Where scripts do not run, the drawing plays once at load and
  stays; with reduced motion it is the final drawing and the replay control is hidden.
* Pen-up moves: a thin, faint straight line from one stroke's end to the next stroke's start, drawn during
  its own slot and kept (faint) in the final picture. Stroke starts are marked with a small dot that appears
  when the stroke starts.
"""

from __future__ import annotations

import hashlib
import itertools
from typing import NamedTuple, Sequence

import numpy as np

from inkground_lib.core.ink import Ink, InkLike, as_ink
from inkground_lib.report.escape import html_attr, html_text


PLAY_HINT = "Each plays when it scrolls into view; click it (or press Space) to pause, click a finished one (or press R) to replay."
"""How a player is used, said once for every caption that shows players."""


from inkground_lib.report.palette import OKABE_ITO  # noqa: E402  (re-exported: the palette's one home is palette.py)

_COUNTER = itertools.count(1)


def _arc_lengths(ink: Ink) -> np.ndarray:
    """Arc length of every stroke (page pixels)."""
    return np.array([float(np.hypot(np.diff(s[:, 0]), np.diff(s[:, 1])).sum()) if len(s) > 1 else 0.0
                     for s in ink.strokes])


def stroke_schedule(ink: InkLike, total_ms: float, *, timing: str = "arc",
                    pen_up_share: float = 0.15) -> list[tuple[float, float]]:
    """When each stroke of ``ink`` is drawn: a list of (start_ms, duration_ms), one per stroke, in pen order.

    The whole ink takes ``total_ms`` (ms) from the start of the first stroke to the end of the last one, and
    every stroke starts when the previous stroke and the pen-up move after it have ended.

    * ``timing="arc"`` (default): a ``pen_up_share`` of ``total_ms`` goes to the pen-up moves, split equally
      (none for a one-stroke ink); the rest is split between the strokes in proportion to their arc length
      (page pixels). A single-point stroke (a dot) gets 0 ms: it appears at once. If every stroke is a dot
      the strokes share the drawing time equally.
    * ``timing="time"``: the ink's own times (t, ms): durations are the t spans of the strokes and the pen-up
      slots the (non-negative) t gaps between them, scaled to ``total_ms``. If any t is NaN, or the times
      span nothing, falls back to ``"arc"``.

    >>> ink = as_ink([[[0, 0], [10, 0]], [[0, 5], [30, 5]]])
    >>> stroke_schedule(ink, 1000, pen_up_share=0.2)
    [(0.0, 200.0), (400.0, 600.0)]
    """
    if timing not in ("arc", "time"):
        raise ValueError(f"stroke_schedule: timing must be 'arc' or 'time', got {timing!r}")
    if not 0 <= pen_up_share < 1:
        raise ValueError(f"stroke_schedule: pen_up_share must be in [0, 1), got {pen_up_share}")
    if total_ms < 0 or not np.isfinite(total_ms):
        raise ValueError(f"stroke_schedule: total_ms must be a finite number >= 0, got {total_ms}")
    ink = as_ink(ink)
    n = len(ink)
    if n == 0:
        return []
    if timing == "time" and all(np.isfinite(s[:, 2]).all() for s in ink.strokes):
        durs = np.array([float(s[-1, 2] - s[0, 2]) for s in ink.strokes]).clip(min=0)
        gaps = np.array([float(b[0, 2] - a[-1, 2]) for a, b in zip(ink.strokes[:-1], ink.strokes[1:])])
        gaps = gaps.clip(min=0)
        raw = durs.sum() + gaps.sum()
        if raw > 0:
            k = total_ms / raw
            durs, gaps = durs * k, gaps * k
            return _starts(durs, gaps)
    lengths = _arc_lengths(ink)
    gap_total = total_ms * pen_up_share if n > 1 else 0.0
    draw_total = total_ms - gap_total
    if lengths.sum() > 0:
        durs = draw_total * lengths / lengths.sum()
    else:
        durs = np.full(n, draw_total / n)
    gaps = np.full(n - 1, gap_total / (n - 1) if n > 1 else 0.0)
    return _starts(durs, gaps)


def _starts(durs: np.ndarray, gaps: np.ndarray) -> list[tuple[float, float]]:
    out, t = [], 0.0
    for i, d in enumerate(durs):
        out.append((float(t), float(d)))
        t += d + (gaps[i] if i < len(gaps) else 0.0)
    return out


def _fmt(v: float) -> str:
    """A coordinate rounded to 0.1, without a trailing '.0'."""
    r = round(float(v), 1)
    if r == 0:
        r = 0.0
    s = f"{r:.1f}"
    return s[:-2] if s.endswith(".0") else s


def _num(v: float) -> str:
    """A size or position (legend, widths, viewBox): 4 significant digits, at least 0.1 precision."""
    v = float(v)
    if v == 0 or not np.isfinite(v):
        return "0"
    d = max(1, 3 - int(np.floor(np.log10(abs(v)))))
    s = f"{v:.{d}f}".rstrip("0").rstrip(".")
    return "0" if s in ("", "-0") else s


def _path_d(xy: np.ndarray) -> str:
    """An SVG path for a polyline of page-pixel points (absolute M then L, rounded to 0.1 px)."""
    pts = [f"{_fmt(x)} {_fmt(y)}" for x, y in xy]
    if len(pts) == 1:
        return f"M{pts[0]}h0"  # a dot: a zero-length segment, drawn by the round cap
    return "M" + pts[0] + "L" + " ".join(pts[1:])


def _layers(layers) -> list[tuple[Ink, str, str, bool]]:
    """Normalise the layers: (ink, label[, colour[, dashed]]); colour None -> Okabe-Ito by layer index."""
    out = []
    for i, layer in enumerate(layers):
        if not isinstance(layer, (tuple, list)) or not 2 <= len(layer) <= 4:
            raise ValueError(f"pen_path_svg: layer {i} must be (ink, label[, colour[, dashed]]), got {layer!r:.80}")
        ink, label = as_ink(layer[0], f"layer {i}"), str(layer[1])
        colour = layer[2] if len(layer) > 2 and layer[2] is not None else OKABE_ITO[i % len(OKABE_ITO)]
        dashed = bool(layer[3]) if len(layer) > 3 else False
        out.append((ink, label, str(colour), dashed))
    return out


def _figure_id(layers, fig_id: str | None) -> str:
    if fig_id is not None:
        if not fig_id or not (fig_id[0].isalpha() and all(c.isalnum() or c in "-_" for c in fig_id)):
            raise ValueError(f"pen_path_svg: fig_id must be a letter then letters, digits, '-' or '_': {fig_id!r}")
        return fig_id
    h = hashlib.sha256()
    for ink, label, colour, dashed in layers:
        h.update(f"{label}|{colour}|{dashed}|".encode())
        for s in ink.strokes:
            h.update(np.ascontiguousarray(s[:, :2]).tobytes())
    return f"igpp{h.hexdigest()[:8]}n{next(_COUNTER)}"


# The player's plain-JS controls (no framework, no network), bound to one figure's id. The player waits (class
# "wt": every animation paused at its start) until at least half of it is in view - an IntersectionObserver shared
# by the page's players - then plays from the first stroke. A click or tap pauses / resumes it while it plays and
# replays a finished one; the visible replay control (".rp") and R replay it at any time; Space / Enter act like a
# click. Replaying replaces the drawing group by a clone, which restarts its CSS animations. Without
# IntersectionObserver it plays at once; without scripts it plays once at load. The script is XML text (no '&' or
# '<'): the SVG must parse as XML too.
_SCRIPT = ("(function(){var s=document.getElementById('%s');if(!s||s.igpp)return;s.igpp=1;var w=window;"
           "function an(){return s.getAnimations?s.getAnimations({subtree:true}):[]}"
           "function done(){var a=an();return a.length>0?a.every(function(x){return x.playState==='finished'}):false}"
           "function r(){var g=s.querySelector('.dr');g.replaceWith(g.cloneNode(true));s.classList.remove('pz','wt');"
           "if(w.igppIO)w.igppIO.unobserve(s)}"
           "function t(){if(done()||s.classList.contains('wt'))r();else s.classList.toggle('pz')}"
           "if('IntersectionObserver' in w){s.classList.add('wt');s.igppGo=r;"
           "if(!w.igppIO)w.igppIO=new IntersectionObserver(function(es){es.forEach(function(e){var x=e.target;"
           "if(e.isIntersecting?(x.igppGo?(e.intersectionRatio>=.5||e.intersectionRect.height>=.5*w.innerHeight):false):false)"
           "{w.igppIO.unobserve(x);x.igppGo()}})},{threshold:[0,.25,.5]});w.igppIO.observe(s)}"
           "s.addEventListener('click',function(e){var c=e.target.closest?e.target.closest('.rp'):null;if(c)r();else t()});"
           "s.addEventListener('keydown',function(e){var k=e.key;"
           "if(k===' '||k==='Enter'){e.preventDefault();t()}else if(k==='r'||k==='R'){e.preventDefault();r()}})"
           "})();")

#: the visible replay control's label (inside the player, at the right end of the hint line)
REPLAY_LABEL = "\u21bb replay"
HINT = "click: pause / play · R: replay"


def pen_path_svg(layers: Sequence, *, width_px: float = 480, background: str | None = None,
                 title: str = "Pen path", description: str | None = None, total_ms: float | None = None,
                 timing: str = "arc", pen_up_share: float = 0.15, line_px: float = 2.0, margin_px: float = 8,
                 controls: bool = True, fig_id: str | None = None, photo=None) -> str:
    """An inline SVG string that draws the inks of ``layers`` stroke by stroke, in pen order.

    * ``layers``: a sequence of ``(ink, label, colour, dashed)`` (colour and dashed may be left out; colour
      None takes the next Okabe-Ito colour, :data:`OKABE_ITO`). Inks are in page pixels, y down; all layers
      share one coordinate frame (the union of their bounding boxes plus ``margin_px`` screen pixels), so a
      prediction and its reference overlay as on the page. A dashed layer is drawn with dashes (revealed
      through an animated mask).
    * ``width_px``: displayed width (screen px); the height follows the ink's aspect ratio plus the legend.
      ``line_px``: stroke width (screen px). ``background``: a CSS colour filling the figure, or None
      (transparent).
    * Timing: every layer is scheduled by :func:`stroke_schedule` over the same ``total_ms`` (ms; default
      from the longest layer's arc length on screen, 2.5 ms per screen px, clamped to 1.5-15 s) with
      ``timing`` and ``pen_up_share``. Each stroke is a ``<path>`` with ``pathLength=1`` whose
      ``stroke-dashoffset`` runs from 1 to 0 over its duration after its ``animation-delay``; the pen-up
      move before it (a thin, faint line) is animated the same way in its slot; a dot marks the stroke start
      from the moment the stroke starts. Animations play once and keep the final frame.
    * The static style is the complete drawing: it is what prints (``@media print``), what
      ``prefers-reduced-motion: reduce`` shows and what non-animating viewers show.
    * Accessibility: ``role="img"``, ``aria-label`` = ``title``, ``<title>`` and ``<desc>`` (``description`` or
      one generated from the layers), ``tabindex=0``. With ``controls`` a tiny inline plain-JS script (no
      network) starts the drawing when it scrolls into view, lets click / Space / Enter pause and resume it
      (or replay it once finished), and R or the visible replay control replay it; a hint line says so.
    * Every CSS rule and element id is scoped by a unique figure id (``fig_id``, or made from a hash of the
      content and a per-process counter), so several figures on one page do not collide.

    * ``photo``: ``(image, (x0, y0))``, a page crop (an (h, w) or (h, w, 3) uint8 array) whose top-left pixel
      sits at page pixel (x0, y0); it is embedded as a JPEG (quality :data:`PHOTO_JPEG_QUALITY`) under the
      inks, and the frame covers it.

    An empty drawing (no layers, or no strokes in any layer) gives a small valid SVG with a note. Coordinates
    are rounded to 0.1 page px, times to 1 ms.
    """
    lay = _layers(layers)
    fid = _figure_id(lay, fig_id)
    width_px = float(width_px)
    if not width_px > 0:
        raise ValueError(f"pen_path_svg: width_px must be positive, got {width_px}")
    pts = [ink.points() for ink, *_ in lay]
    pts = np.concatenate(pts) if pts else np.zeros((0, 2))
    photo_el = None
    if photo is not None and len(pts):
        pts, photo_el = _photo_element(photo, pts)
    legend_rows = len(lay) + (1 if controls and len(pts) else 0)
    row_px = 16.0
    if len(pts) == 0:
        return _empty_svg(fid, lay, width_px, background, title, description, row_px)
    v = _view(pts, width_px, margin_px, legend_rows * row_px)
    if total_ms is None:
        longest = max((_arc_lengths(ink).sum() for ink, *_ in lay), default=0.0) / v.k
        total_ms = float(np.clip(2.5 * longest, 1500, 15000))

    lw = line_px * v.k
    out = _svg_head(fid, v, width_px, title, description or _default_desc(lay), background)
    out += _legend(lay, v, lw, row_px, controls)
    if photo_el is not None:
        out.append(photo_el)
    out.append('<g class="dr">')
    n_mask = 0
    for ink, label, colour, dashed in lay:
        if not len(ink):
            continue
        sched = stroke_schedule(ink, total_ms, timing=timing, pen_up_share=pen_up_share)
        out.append(f'<g class="ly" data-label={html_attr(label)} stroke={html_attr(colour)} '
                   f'stroke-width="{_num(lw)}">')
        n_mask = _layer_strokes(out, ink, sched, colour, dashed, fid, v, lw, n_mask)
        out.append("</g>")
    out.append("</g>")
    if controls:
        out.append(f"<script>{_SCRIPT % fid}</script>")
    out.append("</svg>")
    return "".join(out)


def _photo_element(photo, pts: np.ndarray) -> tuple[np.ndarray, str]:
    """The page crop ``photo`` = ``(image, (x0, y0))`` as an SVG ``<image>`` (embedded JPEG, faded to
    :data:`PHOTO_OPACITY`), and ``pts`` (page px) extended by the crop's outer corners so that the frame covers
    it. Pixel (x0, y0) is the crop's top-left pixel centre, hence the half-pixel shifts to its outer edges."""
    img, (px0, py0) = photo
    ph, pw = np.asarray(img).shape[:2]
    pts = np.concatenate([pts, [[px0 - 0.5, py0 - 0.5], [px0 + pw - 0.5, py0 + ph - 0.5]]])
    return pts, (f'<image x="{_num(px0 - 0.5)}" y="{_num(py0 - 0.5)}" width="{pw}" height="{ph}" '
                 f'preserveAspectRatio="none" opacity="{PHOTO_OPACITY}" href="data:image/jpeg;base64,{_jpeg_b64(img)}"/>')


def _svg_head(fid: str, v: "_View", width_px: float, title: str, desc: str, background: str | None) -> list[str]:
    """The player's opening elements: the ``<svg>`` tag (``width_px`` screen px wide, viewBox the frame ``v``
    in page px, accessible name ``title``), its ``<title>``, ``<desc>``, scoped ``<style>`` and, unless
    ``background`` is None, a rectangle of that CSS colour filling the frame."""
    g = _num
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="{fid}" class="ig-pen-player" role="img" tabindex="0" '
        f'aria-label={html_attr(title)} width="{g(width_px)}" height="{g(v.height_px)}" '
        f'viewBox="{g(v.x0)} {g(v.y0)} {g(v.w)} {g(v.h)}">',
        f"<title>{html_text(title)}</title>",
        f"<desc>{html_text(desc)}</desc>",
        f"<style>{_style(fid)}</style>",
    ]
    if background is not None:
        out.append(f'<rect x="{g(v.x0)}" y="{g(v.y0)}" width="{g(v.w)}" height="{g(v.h)}" fill={html_attr(background)}/>')
    return out


class _View(NamedTuple):
    """A player's frame: ``k`` page px per screen px; ``m`` the margin (page px); the viewBox ``x0, y0, w, h``
    (page px, y down, the legend above the ink); ``height_px`` the displayed height (screen px)."""
    k: float
    m: float
    x0: float
    y0: float
    w: float
    h: float
    height_px: float


def _view(pts: np.ndarray, width_px: float, margin_px: float, legend_px: float) -> _View:
    """The frame around the points ``pts`` (page px) for a player ``width_px`` screen px wide with
    ``margin_px`` screen px of margin and ``legend_px`` screen px of legend rows above the ink: the ink fits
    the width, but a very tall ink is no taller than 1.5 widths, and a single point is shown 4x."""
    x0, y0 = pts.min(axis=0)
    x1, y1 = pts.max(axis=0)
    span = max(x1 - x0, y1 - y0, 1.0)
    inner_px = max(width_px - 2 * margin_px, 1.0)
    # page px per screen px: fit the width, but do not let a very tall ink be taller than 1.5 widths
    k = max((x1 - x0) if x1 > x0 else span, (y1 - y0) / 1.5) / inner_px
    if x1 - x0 < 1e-9 and y1 - y0 < 1e-9:
        k = 1.0 / 4  # one point: show it 4x
    m = margin_px * k
    vw = width_px * k
    vx0 = (x0 + x1) / 2 - vw / 2
    legend_h = (legend_px + 4) * k
    vy0 = y0 - m - legend_h
    vh = (y1 - y0) + 2 * m + legend_h
    return _View(k, m, vx0, vy0, vw, vh, vh / k)


def _style(fid: str) -> str:
    """The player's CSS, every rule scoped by the figure id ``fid``: the drawing keyframes (dash offset 1 -> 0
    on ``pathLength=1`` paths), paused states (``pz`` paused by the reader, ``wt`` waiting to scroll into
    view), the focus ring, and the static complete drawing for reduced motion and print."""
    return (
        f"#{fid} .s,#{fid} .u{{fill:none;stroke-linecap:round;stroke-linejoin:round;stroke-dasharray:1 2;"
        f"stroke-dashoffset:0;animation:{fid}-d 1ms linear both}}"
        f"#{fid} .u{{stroke-opacity:.35}}"
        f"#{fid} .m{{animation:{fid}-d 1ms linear both}}"
        f"@keyframes {fid}-d{{0%{{stroke-dashoffset:1.05;opacity:0}}0.01%{{opacity:1}}"
        f"100%{{stroke-dashoffset:0;opacity:1}}}}"
        f"#{fid}.pz *,#{fid}.wt *{{animation-play-state:paused!important}}"
        f"#{fid} .rp{{cursor:pointer}}#{fid} .rp:hover rect{{fill:#e8f0f8}}"
        f"#{fid}:focus{{outline:2px solid #0072B2;outline-offset:1px}}"
        f"#{fid}:focus:not(:focus-visible){{outline:none}}"
        f"@media (prefers-reduced-motion: reduce){{#{fid} *{{animation:none!important}}#{fid} .rp{{display:none}}}}"
        f"@media print{{#{fid} *{{animation:none!important}}#{fid} .rp,#{fid} .hint{{display:none}}}}"
    )


def _legend(lay, v: _View, lw: float, row_px: float, controls: bool) -> list[str]:
    """The legend's SVG elements: one row (``row_px`` screen px high) per layer, a line sample in the layer's
    colour and dashes (``lw`` page px wide) and its label; then, with ``controls``, the hint line with the
    replay control at its right end. Positions are in the frame ``v`` (page px)."""
    g, k = _num, v.k
    fs = 11 * k
    out = []
    ly = v.y0 + 4 * k
    for i, (ink, label, colour, dashed) in enumerate(lay):
        yy = ly + (i + 0.5) * row_px * k
        da = f' stroke-dasharray="{g(4 * lw)} {g(3 * lw)}"' if dashed else ""
        text = label if len(ink) else f"{label} (no strokes)"
        out.append(f'<g class="lg"><path d="M{g(v.x0 + v.m)} {g(yy)}h{g(24 * k)}" stroke={html_attr(colour)} '
                   f'stroke-width="{g(lw)}" fill="none"{da}/>'
                   f'<text x="{g(v.x0 + v.m + 30 * k)}" y="{g(yy + 4 * k)}" font-size="{g(fs)}" '
                   f'font-family="sans-serif" fill="#222">{html_text(text)}</text></g>')
    if controls:
        yy = ly + (len(lay) + 0.5) * row_px * k
        out.append(f'<text class="hint" x="{g(v.x0 + v.m)}" y="{g(yy + 4 * k)}" font-size="{g(fs * 0.9)}" '
                   f'font-family="sans-serif" fill="#555">{html_text(HINT)}</text>')
        bw, bh = 58 * k, 15 * k  # the replay control: a small framed label at the right end of the hint line
        bx = v.x0 + v.w - v.m - bw
        out.append(f'<g class="rp" role="button" aria-label="replay the drawing">'
                   f'<rect x="{g(bx)}" y="{g(yy - bh / 2)}" width="{g(bw)}" height="{g(bh)}" rx="{g(3 * k)}" '
                   f'fill="#fff" stroke="#0072B2" stroke-width="{g(k)}"/>'
                   f'<text x="{g(bx + bw / 2)}" y="{g(yy + 3.5 * k)}" font-size="{g(fs * 0.9)}" text-anchor="middle" '
                   f'font-family="sans-serif" fill="#0072B2">{html_text(REPLAY_LABEL)}</text></g>')
    return out


def _layer_strokes(out: list[str], ink: Ink, sched, colour: str, dashed: bool, fid: str, v: _View, lw: float,
                   n_mask: int) -> int:
    """Append to ``out`` one layer's animated strokes, in pen order: before each stroke but the first, its
    pen-up move (a faint line animated in its slot); the stroke (``pathLength=1``, animated over its
    ``(start, duration)`` in ms from ``sched``; a dashed layer is revealed through an animated mask, numbered
    on from ``n_mask``); and a dot at its start. Returns the next free mask number."""
    f, g = _fmt, _num  # ink coordinates (0.1 page px); sizes
    prev_end, prev_stop = None, 0.0
    for si, (s, (t0, dur)) in enumerate(zip(ink.strokes, sched)):
        xy = s[:, :2]
        if prev_end is not None:
            gap = max(t0 - prev_stop, 0.0)
            out.append(f'<path class="u" d="M{f(prev_end[0])} {f(prev_end[1])}L{f(xy[0, 0])} {f(xy[0, 1])}" '
                       f'pathLength="1" stroke-width="{g(lw * 0.4)}" '
                       f'style="animation-delay:{prev_stop:.0f}ms;animation-duration:{max(gap, 1):.0f}ms"/>')
        timing_css = f"animation-delay:{t0:.0f}ms;animation-duration:{max(dur, 1):.0f}ms"
        d = _path_d(xy)
        if dashed:
            mid = f"{fid}-k{n_mask}"
            n_mask += 1
            out.append(f'<mask id="{mid}" maskUnits="userSpaceOnUse" x="{g(v.x0)}" y="{g(v.y0)}" '
                       f'width="{g(v.w)}" height="{g(v.h)}"><path class="s" d="{d}" pathLength="1" '
                       f'stroke="#fff" stroke-width="{g(lw * 1.5)}" style="{timing_css}"/></mask>')
            out.append(f'<path class="sd" d="{d}" fill="none" stroke-linecap="round" '
                       f'stroke-dasharray="{g(4 * lw)} {g(3 * lw)}" mask="url(#{mid})" '
                       f'data-stroke="{si}" data-delay-ms="{t0:.0f}" data-duration-ms="{dur:.0f}"/>')
        else:
            out.append(f'<path class="s" d="{d}" pathLength="1" data-stroke="{si}" style="{timing_css}"/>')
        out.append(f'<circle class="m" cx="{f(xy[0, 0])}" cy="{f(xy[0, 1])}" r="{g(lw * 1.1)}" '
                   f'fill={html_attr(colour)} stroke="none" style="animation-delay:{t0:.0f}ms"/>')
        prev_end, prev_stop = xy[-1], t0 + dur
    return n_mask


PHOTO_JPEG_QUALITY = 80
PHOTO_OPACITY = 0.55  # the photo is faded so that the drawn lines stand out on dark ink


def _jpeg_b64(img) -> str:
    """A page crop as base64 JPEG text (quality :data:`PHOTO_JPEG_QUALITY`, no metadata)."""
    import base64
    import io

    from PIL import Image

    arr = np.asarray(img)
    if arr.dtype != np.uint8:
        arr = np.clip(arr, 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(arr).convert("L" if arr.ndim == 2 else "RGB").save(buf, format="JPEG", quality=PHOTO_JPEG_QUALITY)
    return base64.b64encode(buf.getvalue()).decode("ascii")


PLAYER_FIGURE_CLASS = "ig-player-figure"
PLAYER_GRID_CLASS = "ig-player-grid"


def player_figure(svg: str, caption: str) -> str:
    """One player in a ``<figure>`` with its ``<figcaption>`` (plain text, escaped)."""
    return f'<figure class="{PLAYER_FIGURE_CLASS}">{svg}<figcaption>{html_text(caption)}</figcaption></figure>'


class PlayerGrid:
    """Players side by side (a CSS grid that wraps on a narrow screen) under one caption; shown inline by
    Jupyter / myst-nb through ``_repr_html_``. ``figures`` are :func:`player_figure` strings."""

    def __init__(self, figures: Sequence[str], caption: str):
        self.figures, self.caption = list(figures), caption

    def _repr_html_(self) -> str:
        style = (f"<style>.{PLAYER_GRID_CLASS}{{display:grid;grid-template-columns:repeat(auto-fill,minmax(280px,1fr));"
                 f"gap:.6em;margin:0}}.{PLAYER_GRID_CLASS} figure{{margin:0}}.{PLAYER_GRID_CLASS} svg{{max-width:100%;"
                 f"height:auto}}.{PLAYER_GRID_CLASS} figcaption{{font-size:.8em}}</style>")
        return (f'{style}<figure class="{PLAYER_GRID_CLASS}-outer"><div class="{PLAYER_GRID_CLASS}">'
                f'{"".join(self.figures)}</div><figcaption>{html_text(self.caption)}</figcaption></figure>')


def _default_desc(lay) -> str:
    parts = [f"{label}: {len(ink)} strokes{' (dashed)' if dashed else ''}" for ink, label, _, dashed in lay]
    return ("Animated pen path, drawn stroke by stroke in pen order; faint lines are pen-up moves, dots mark "
            "stroke starts. " + "; ".join(parts) + ". The final frame is the complete drawing.")


def _empty_svg(fid, lay, width_px, background, title, description, row_px) -> str:
    f = _fmt
    rows = len(lay) + 1
    h = rows * row_px + 8
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" id="{fid}" class="ig-pen-player" role="img" tabindex="0" '
           f'aria-label={html_attr(title)} width="{f(width_px)}" height="{f(h)}" viewBox="0 0 {f(width_px)} {f(h)}">',
           f"<title>{html_text(title)}</title>",
           f"<desc>{html_text(description or 'No strokes to draw.')}</desc>"]
    if background is not None:
        out.append(f'<rect width="{f(width_px)}" height="{f(h)}" fill={html_attr(background)}/>')
    for i, (_, label, colour, dashed) in enumerate(lay):
        yy = 4 + (i + 0.5) * row_px
        da = ' stroke-dasharray="8 6"' if dashed else ""
        out.append(f'<g class="lg"><path d="M8 {f(yy)}h24" stroke={html_attr(colour)} stroke-width="2" '
                   f'fill="none"{da}/><text x="38" y="{f(yy + 4)}" font-size="11" font-family="sans-serif" '
                   f'fill="#222">{html_text(label)} (no strokes)</text></g>')
    yy = 4 + (len(lay) + 0.5) * row_px
    out.append(f'<text class="note" x="8" y="{f(yy + 4)}" font-size="11" font-family="sans-serif" '
               f'fill="#555">No strokes to draw.</text></svg>')
    return "".join(out)
