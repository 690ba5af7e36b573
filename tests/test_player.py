"""Pen paths that play (inkground_lib.report.player): timing, well-formed scoped SVG, legend, empty ink, size."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from inkground_lib.core.ink import as_ink
from inkground_lib.report.player import OKABE_ITO, pen_path_svg, stroke_schedule

NS = "{http://www.w3.org/2000/svg}"


def _zigzag_ink(n_strokes=5, n_points=20, seed=0, with_t=False):
    rng = np.random.default_rng(seed)
    strokes, t = [], 0.0
    for i in range(n_strokes):
        steps = rng.uniform(1, 6, size=(n_points - 1, 2)) * (i + 1)  # strokes of clearly different lengths
        xy = np.vstack([[40.0 * i, 10.0], 40.0 * i + np.cumsum(steps, axis=0) * [1, 0.3]])
        tt = t + np.arange(n_points) * (10.0 * (i + 1))
        t = tt[-1] + 100
        strokes.append(np.column_stack([xy, tt if with_t else np.full(n_points, np.nan)]))
    return as_ink(strokes)


def _arc(s):
    return float(np.hypot(np.diff(s[:, 0]), np.diff(s[:, 1])).sum())


def _style_ms(el, prop):
    m = re.search(prop + r":(\d+)ms", el.get("style", ""))
    assert m, f"no {prop} in {el.get('style')!r}"
    return float(m.group(1))


def _strokes(root):
    return [e for e in root.iter(NS + "path") if e.get("class") == "s" and e.get("data-stroke") is not None]


def test_schedule_sequential_and_proportional_to_arc_length():
    ink = _zigzag_ink()
    sched = stroke_schedule(ink, 5000.0)
    assert len(sched) == len(ink)
    for (s0, d0), (s1, _) in zip(sched, sched[1:]):
        assert s1 >= s0 + d0  # each stroke starts after the previous one ends
    assert sched[-1][0] + sched[-1][1] == pytest.approx(5000.0)
    rate = [d / _arc(s) for (_, d), s in zip(sched, ink.strokes)]
    assert max(rate) / min(rate) == pytest.approx(1.0, abs=1e-9)


def test_schedule_time_uses_t_and_falls_back_to_arc():
    ink = _zigzag_ink(with_t=True)
    sched = stroke_schedule(ink, 1000.0, timing="time")
    spans = [s[-1, 2] - s[0, 2] for s in ink.strokes]
    ratio = [d / sp for (_, d), sp in zip(sched, spans)]
    assert max(ratio) / min(ratio) == pytest.approx(1.0)
    no_t = _zigzag_ink(with_t=False)
    assert stroke_schedule(no_t, 1000.0, timing="time") == stroke_schedule(no_t, 1000.0)
    with pytest.raises(ValueError):
        stroke_schedule(ink, 1000.0, timing="speed")


def test_svg_well_formed_delays_rise_durations_proportional():
    ink = _zigzag_ink()
    svg = pen_path_svg([(ink, "prediction", None, False)], total_ms=6000)
    root = ET.fromstring(svg)
    assert root.tag == NS + "svg" and root.get("tabindex") == "0" and root.get("role") == "img"
    assert root.find(NS + "title").text and root.find(NS + "desc").text
    paths = _strokes(root)
    assert len(paths) == len(ink)  # one <path> per stroke
    delays = [_style_ms(p, "animation-delay") for p in paths]
    assert delays == sorted(delays) and len(set(delays)) == len(delays)
    durs = [_style_ms(p, "animation-duration") for p in paths]
    rate = np.array(durs) / np.array([_arc(s) for s in ink.strokes])
    assert rate.max() / rate.min() < 1.05
    for d0, dur, d1 in zip(delays, durs, delays[1:]):
        assert d1 >= d0 + dur - 1  # 1 ms of rounding
    # pen-up moves: one per gap, faint, in the slot between strokes
    ups = [e for e in root.iter(NS + "path") if e.get("class") == "u"]
    assert len(ups) == len(ink) - 1
    # stroke start markers at each stroke's first point
    marks = [e for e in root.iter(NS + "circle") if e.get("class") == "m"]
    assert [(float(c.get("cx")), float(c.get("cy"))) for c in marks] == \
        [(round(s[0, 0], 1), round(s[0, 1], 1)) for s in ink.strokes]


def test_reduced_motion_print_and_controls():
    svg = pen_path_svg([(_zigzag_ink(), "p", None, False)])
    style = ET.fromstring(svg).find(NS + "style").text
    assert re.search(r"@media \(prefers-reduced-motion: reduce\)\{[^{}]*\{animation:none", style)
    assert "@media print" in style
    assert "animation-play-state:paused" in style
    assert ET.fromstring(svg).find(NS + "script") is not None
    assert ET.fromstring(pen_path_svg([(_zigzag_ink(), "p")], controls=False)).find(NS + "script") is None
    # no network, no framework
    assert "http" not in re.sub(r'xmlns="http://www.w3.org/2000/svg"', "", svg)


def test_layers_colours_dashes_and_legend():
    pred, ref = _zigzag_ink(seed=1), _zigzag_ink(seed=2)
    svg = pen_path_svg([(pred, "prediction", None, False), (ref, "reference <ref>", "#123456", True)])
    root = ET.fromstring(svg)
    legend = " ".join(t.text for t in root.iter(NS + "text"))
    assert "prediction" in legend and "reference <ref>" in legend
    layers = [g for g in root.iter(NS + "g") if g.get("class") == "ly"]
    assert [g.get("stroke") for g in layers] == [OKABE_ITO[0], "#123456"]
    assert OKABE_ITO[0] in svg and "#123456" in svg
    dashed = [e for e in root.iter(NS + "path") if e.get("class") == "sd"]
    assert len(dashed) == len(ref) and all(e.get("stroke-dasharray") and e.get("mask") for e in dashed)
    ids = {e.get("id") for e in root.iter() if e.get("id")}
    assert all(e.get("mask")[5:-1] in ids for e in dashed)
    # both layers share the total time: they end together
    ends = []
    for g in layers:
        last = [e for e in g.iter(NS + "path") if e.get("class") == "s"][-1]
        ends.append(_style_ms(last, "animation-delay") + _style_ms(last, "animation-duration"))
    assert abs(ends[0] - ends[1]) <= 2


def test_unique_scoped_ids():
    ink = _zigzag_ink()
    a, b = pen_path_svg([(ink, "p")]), pen_path_svg([(ink, "p")])
    ida, idb = ET.fromstring(a).get("id"), ET.fromstring(b).get("id")
    assert ida != idb
    style = ET.fromstring(a).find(NS + "style").text
    # every rule is scoped by the figure id (or is an at-rule holding scoped rules / the scoped keyframes)
    selectors = re.findall(r"(?:^|\})\s*([^{}@][^{}]*)\{", style)
    selectors = [s for s in selectors if not re.fullmatch(r"[\d.]+%", s.strip())]
    assert selectors and all(s.strip().startswith("#" + ida) for sel in selectors for s in sel.split(","))
    assert f"@keyframes {ida}-d" in style
    assert ET.fromstring(pen_path_svg([(ink, "p")], fig_id="fig-one")).get("id") == "fig-one"


@pytest.mark.parametrize("layers", [[], [(as_ink([]), "prediction", None, False)]])
def test_empty_ink_gives_valid_svg_with_note(layers):
    root = ET.fromstring(pen_path_svg(layers))
    assert root.tag == NS + "svg"
    assert not _strokes(root)
    assert any("No strokes" in (t.text or "") for t in root.iter(NS + "text"))


def test_one_empty_layer_beside_a_drawn_one():
    root = ET.fromstring(pen_path_svg([(as_ink([]), "pred"), (_zigzag_ink(), "ref")]))
    assert any("pred (no strokes)" in (t.text or "") for t in root.iter(NS + "text"))
    assert len(_strokes(root)) == 5


def test_size_small():
    ink = _zigzag_ink(n_strokes=20, n_points=50)
    svg = pen_path_svg([(ink.transformed(3.3, 1000.123, 2000.456), "p", None, False)])
    assert len(svg.encode()) < 30_000
    ET.fromstring(svg)
    # coordinates rounded to 0.1 px
    d = _strokes(ET.fromstring(svg))[0].get("d")
    assert all(len(n.split(".")[1]) <= 1 for n in re.findall(r"\d+\.\d+", d))


def test_dot_stroke_and_single_point_ink():
    root = ET.fromstring(pen_path_svg([(as_ink([[[5, 5]]]), "dot")]))
    paths = _strokes(root)
    assert len(paths) == 1 and paths[0].get("d").endswith("h0")


def test_player_waits_for_the_reader_and_has_a_visible_replay_control():
    """Issue 27: the script holds the drawing until it is in view (IntersectionObserver, no framework), a click
    on a finished player replays it, and a replay control is drawn; reduced motion and print hide the control."""
    from inkground_lib.report.player import REPLAY_LABEL

    svg = pen_path_svg([(_zigzag_ink(), "p", None, False)], fig_id="wait-me")
    root = ET.fromstring(svg)  # the script is XML text: no raw '&' or '<' in it
    script = root.find(NS + "script").text
    assert "IntersectionObserver" in script and "classList.add('wt')" in script
    assert "playState==='finished'" in script  # a click on a finished drawing replays it
    assert "closest('.rp')" in script and "'r'||k==='R'" in script
    style = root.find(NS + "style").text
    assert re.search(r"#wait-me\.wt \*\{animation-play-state:paused", style.replace(",#wait-me.wt *", "#wait-me.wt *"))
    assert re.search(r"@media \(prefers-reduced-motion: reduce\)\{[^@]*#wait-me \.rp\{display:none\}", style)
    control = [g for g in root.iter(NS + "g") if g.get("class") == "rp"]
    assert len(control) == 1 and control[0].get("role") == "button"
    assert "".join(control[0].itertext()) == REPLAY_LABEL and control[0].find(NS + "rect") is not None
    # the control sits inside the figure's frame, right of the hint line, above the drawing
    vx, vy, vw, vh = map(float, root.get("viewBox").split())
    rect = control[0].find(NS + "rect")
    x0, w = float(rect.get("x")), float(rect.get("width"))
    assert vx <= x0 and x0 + w <= vx + vw
    first_stroke_y = min(float(c.get("cy")) for c in root.iter(NS + "circle") if c.get("class") == "m")
    assert float(rect.get("y")) + float(rect.get("height")) <= first_stroke_y
    bare = ET.fromstring(pen_path_svg([(_zigzag_ink(), "p")], controls=False))
    assert bare.find(NS + "script") is None and not [g for g in bare.iter(NS + "g") if g.get("class") == "rp"]
