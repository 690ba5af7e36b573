"""The skeleton derenderer: binarise, skeletonise, trace paths, order strokes (the offline stand-in for InkSight)."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import cv2
import numpy as np
from scipy import ndimage

from inkground_lib.components.derenderers.base import (
    Box,
    DerenderError,
    as_gray,
    check_box,
)
from inkground_lib.core.files import sha256_json
from inkground_lib.core.ink import Ink, as_ink


@functools.lru_cache(maxsize=1)
def code_sha256() -> str:
    """sha256 of this file: the code that decides a trace, part of its key in a trace store."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


@dataclass(frozen=True)
class SkeletonParams:
    """Settings of :class:`SkeletonDerenderer`. Lengths in *work pixels*: the crop is first resized to
    ``work_height`` pixels tall (aspect kept), so these values do not depend on the photo's resolution.

    Binarisation: the background (paper and its uneven light) is estimated by a grey-scale closing
    (a max filter ``background_size`` px wide, then a box blur) and divided out; ink is then
    ``norm < threshold`` with the threshold from ``threshold`` = "sauvola" (local, window
    ``sauvola_window`` px, ``sauvola_k``) or "otsu" (global), and always below ``1 - min_contrast``
    (so blank paper and noise stay blank). Components of at most ``min_object`` px are dropped and holes of
    at most ``max_hole`` px filled.

    Tracing: end branches shorter than ``spur_length`` x pen width are pruned; junctions joined by an edge
    shorter than ``merge_length`` x pen width become one junction (a crossing); at a junction the trace
    continues along the straightest unvisited branch (tangents over ``tangent_length`` px); when a trace
    ends with branches left, it goes back (pen down) along visited skeleton if that costs at most
    ``max_retrace`` x ink height, else lifts the pen. Strokes are smoothed (Gaussian, ``smooth_sigma`` px)
    and simplified (Douglas-Peucker, ``simplify_tolerance`` px).

    Ordering: a connected component whose height is below ``mark_height`` x ink height and whose skeleton
    is shorter than ``mark_length`` x ink height is a mark (i-dot, t-cross); marks go after the component
    they overlap most horizontally (nearest if none) when ``marks_at`` = "component", or after all letters
    when "word_end". Letters go left to right by start x, each stroke starting at its left end.

    Timing: with ``timing`` True, t (ms) runs along the arc length (and the straight pen-up gaps) at
    ``speed`` ink heights per second, starting at 0; else t is NaN. Ink height = height of the binarised ink.
    """

    work_height: int = 80
    blur_sigma: float = 0.7
    background_size: int = 31
    threshold: str = "sauvola"
    sauvola_window: int = 41
    sauvola_k: float = 0.2
    min_contrast: float = 0.18
    min_object: int = 12
    max_hole: int = 6
    spur_length: float = 1.2
    merge_length: float = 1.0
    tangent_length: int = 6
    max_retrace: float = 0.3
    n_starts: int = 4
    start_weight: float = 1.0
    smooth_sigma: float = 1.5
    simplify_tolerance: float = 0.35
    mark_height: float = 0.3
    mark_length: float = 0.6
    marks_at: str = "component"
    timing: bool = True
    speed: float = 3.0

    def __post_init__(self) -> None:
        if self.threshold not in ("sauvola", "otsu"):
            raise DerenderError(f"SkeletonParams.threshold: 'sauvola' or 'otsu', got {self.threshold!r}")
        if self.marks_at not in ("component", "word_end"):
            raise DerenderError(f"SkeletonParams.marks_at: 'component' or 'word_end', got {self.marks_at!r}")
        if self.work_height < 16:
            raise DerenderError(f"SkeletonParams.work_height: at least 16 px, got {self.work_height}")
        if self.speed <= 0:
            raise DerenderError(f"SkeletonParams.speed: must be positive, got {self.speed}")


def binarize(gray: np.ndarray, params: SkeletonParams = SkeletonParams()) -> np.ndarray:
    """Ink mask (bool, True = ink) of a uint8 gray image, robust to uneven light; see SkeletonParams."""
    from skimage.filters import threshold_otsu, threshold_sauvola
    from skimage.morphology import remove_small_holes, remove_small_objects

    g = gray.astype(np.float32)
    if params.blur_sigma > 0:
        g = cv2.GaussianBlur(g, (0, 0), params.blur_sigma)
    k = max(3, int(params.background_size) | 1)
    bg = cv2.dilate(g, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    bg = cv2.blur(bg, (k, k))
    norm = g / np.maximum(bg, 1.0)
    np.clip(norm, 0.0, 1.0, out=norm)
    ceiling = 1.0 - params.min_contrast
    if params.threshold == "sauvola":
        win = max(3, int(params.sauvola_window) | 1)
        t = threshold_sauvola(norm, window_size=win, k=params.sauvola_k, r=0.5)
        mask = norm < np.minimum(t, ceiling)
    else:
        lo = norm[norm < 1.0]
        t = threshold_otsu(norm) if lo.size > 16 and np.ptp(norm) > 0 else 0.0
        mask = norm < min(t, ceiling)
    if params.min_object > 0:
        mask = remove_small_objects(mask, max_size=int(params.min_object), connectivity=2)
    if params.max_hole > 0:
        mask = remove_small_holes(mask, max_size=int(params.max_hole), connectivity=1)
    return mask


@dataclass
class _Graph:
    node_xy: list          # per node: (x, y) centroid (work px)
    edges: list            # per edge: [a, b, path (k, 2) float array of x, y from a to b, length]


_OFFS4 = ((0, 1), (1, 0))


_OFFSD = ((1, 1), (1, -1))


def _pixel_adjacency(skel: np.ndarray):
    """Pixels of a thin skeleton and their neighbours: 4-neighbours, plus diagonal neighbours that are not
    already joined through a shared 4-neighbour (so L-corners do not look like junctions). Returns the pixels'
    (x, y), each pixel's neighbours and their number."""
    ys, xs = np.nonzero(skel)
    n = len(ys)
    h, w = skel.shape
    idx = np.full((h + 2, w + 2), -1, np.int64)
    idx[ys + 1, xs + 1] = np.arange(n)
    on = idx >= 0
    pairs = []
    for dy, dx in _OFFS4 + _OFFSD:
        q = idx[ys + 1 + dy, xs + 1 + dx]
        ok = q >= 0
        if dy and dx:
            ok &= ~on[ys + 1, xs + 1 + dx] & ~on[ys + 1 + dy, xs + 1]
        pairs.append(np.column_stack([np.flatnonzero(ok), q[ok]]))
    pairs = np.concatenate(pairs) if pairs else np.zeros((0, 2), np.int64)
    nbrs: list[list[int]] = [[] for _ in range(n)]
    for a, b in pairs.tolist():
        nbrs[a].append(b)
        nbrs[b].append(a)
    return np.column_stack([xs, ys]).astype(np.float64), nbrs, np.bincount(pairs.ravel(), minlength=n)


class _UF:
    def __init__(self, n):
        self.p = list(range(n))

    def find(self, a):
        p = self.p
        while p[a] != a:
            p[a] = p[p[a]]
            a = p[a]
        return a

    def union(self, a, b):
        a, b = self.find(a), self.find(b)
        if a != b:
            self.p[max(a, b)] = min(a, b)


def _path_length(p: np.ndarray) -> float:
    return float(np.hypot(*np.diff(p, axis=0).T).sum()) if len(p) > 1 else 0.0


def _skeleton_graph(skel: np.ndarray) -> _Graph:
    """Graph of a skeleton: nodes = end points, isolated pixels and clusters of junction pixels (and one
    pixel on each junction-free loop, its leftmost); edges = pixel paths between nodes."""
    xy, nbrs, deg = _pixel_adjacency(skel)
    n = len(nbrs)
    node_of = np.full(n, -1, np.int64)
    # junction clusters
    junc = np.flatnonzero(deg >= 3)
    uf = _UF(n)
    jset = set(junc.tolist())
    for p in junc.tolist():
        for q in nbrs[p]:
            if q in jset:
                uf.union(p, q)
    node_pixels: dict[int, list[int]] = {}
    for p in junc.tolist():
        node_pixels.setdefault(uf.find(p), []).append(p)
    for p in np.flatnonzero(deg <= 1).tolist():
        node_pixels[p] = [p]
    node_xy = []
    for k, (_, pix) in enumerate(sorted(node_pixels.items())):
        node_of[pix] = k
        node_xy.append(tuple(xy[pix].mean(axis=0)))
    edges = []
    covered = np.zeros(n, bool)
    covered[node_of >= 0] = True
    done = set()
    for p in np.flatnonzero(node_of >= 0).tolist():
        for q in nbrs[p]:
            if node_of[q] == node_of[p] or (p, q) in done:
                continue
            path = [p, q]
            prev, cur = p, q
            while node_of[cur] < 0:
                covered[cur] = True
                a = nbrs[cur]
                nxt = a[0] if a[0] != prev else a[1]
                path.append(nxt)
                prev, cur = cur, nxt
            done.add((p, q))
            done.add((cur, prev))
            pts = xy[path]
            edges.append([int(node_of[p]), int(node_of[cur]), pts, _path_length(pts)])
    # loops without any node: start each at its leftmost (then topmost) pixel
    rest = np.flatnonzero(~covered)
    if len(rest):
        order = rest[np.lexsort((xy[rest, 1], xy[rest, 0]))]
        for p in order.tolist():
            if covered[p]:
                continue
            k = len(node_xy)
            node_xy.append(tuple(xy[p]))
            covered[p] = True
            path = [p]
            prev, cur = p, nbrs[p][0]
            while cur != p:
                covered[cur] = True
                path.append(cur)
                a = nbrs[cur]
                nxt = a[0] if a[0] != prev else a[1]
                prev, cur = cur, nxt
            path.append(p)
            pts = xy[path]
            edges.append([k, k, pts, _path_length(pts)])
    return _Graph(node_xy, edges)


def _prune_spurs(skel: np.ndarray, max_len: float, rounds: int = 3) -> tuple[np.ndarray, Optional[_Graph]]:
    """Remove end branches (end point -> junction) shorter than ``max_len`` px, keeping the junction. Returns the
    pruned skeleton and its graph when the last round found nothing to remove (the graph of the skeleton as it is
    returned: made once, not again by the caller), else None."""
    skel = skel.copy()
    for _ in range(rounds):
        g = _skeleton_graph(skel)
        degree = np.zeros(len(g.node_xy), np.int64)
        for a, b, _, _ in g.edges:
            degree[a] += 1
            degree[b] += 1
        removed = False
        for a, b, pts, length in g.edges:
            if a == b or length >= max_len:
                continue
            if degree[a] == 1 and degree[b] >= 3:
                end, junction, seg = a, b, pts[:-1]
            elif degree[b] == 1 and degree[a] >= 3:
                end, junction, seg = b, a, pts[1:]
            else:
                continue
            ij = seg.astype(np.int64)
            skel[ij[:, 1], ij[:, 0]] = False
            degree[end] = 0
            degree[junction] -= 1
            removed = True
        if not removed:
            return skel, g
    return skel, None


def _merge_close_junctions(g: _Graph, max_len: float) -> _Graph:
    """Contract edges shorter than ``max_len`` between two junctions (an X crossing of a thick pen
    skeletonises to two T junctions joined by a short bridge)."""
    m = len(g.node_xy)
    degree = np.zeros(m, np.int64)
    for a, b, _, _ in g.edges:
        degree[a] += 1
        degree[b] += 1
    uf = _UF(m)
    drop = set()
    for i, (a, b, _, length) in enumerate(g.edges):
        if a != b and length < max_len and degree[a] >= 3 and degree[b] >= 3:
            uf.union(a, b)
            drop.add(i)
    if not drop:
        return g
    roots = sorted({uf.find(k) for k in range(m)})
    new_id = {r: i for i, r in enumerate(roots)}
    groups: dict[int, list] = {}
    for k in range(m):
        groups.setdefault(new_id[uf.find(k)], []).append(g.node_xy[k])
    node_xy = [tuple(np.mean(groups[i], axis=0)) for i in range(len(roots))]
    edges = [[new_id[uf.find(a)], new_id[uf.find(b)], p, L]
             for i, (a, b, p, L) in enumerate(g.edges) if i not in drop]
    return _Graph(node_xy, edges)


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.hypot(v[0], v[1]))
    return v / n if n > 0 else np.zeros(2)


class _Component:
    """One connected component of the skeleton graph, with what every trace of it needs: its nodes, the
    shortest edge between each node pair, and all-pairs shortest paths (for retracing)."""

    def __init__(self, g: _Graph, comp_edges: list[int]):
        from scipy.sparse.csgraph import shortest_path

        edges = g.edges
        self.g, self.edges = g, comp_edges
        self.nodes = sorted({edges[e][0] for e in comp_edges} | {edges[e][1] for e in comp_edges})
        self.local = {v: i for i, v in enumerate(self.nodes)}
        self.best: dict[tuple[int, int], int] = {}
        for e in comp_edges:
            a, b, _, L = edges[e]
            if a != b:
                key = (min(a, b), max(a, b))
                if key not in self.best or L < edges[self.best[key]][3]:
                    self.best[key] = e
        m = len(self.nodes)
        Wd = np.zeros((m, m))
        for (a, b), e in self.best.items():
            Wd[self.local[a], self.local[b]] = Wd[self.local[b], self.local[a]] = max(edges[e][3], 1e-6)
        self.dist, self.pred = shortest_path(Wd, method="D", directed=False, return_predecessors=True)
        self.degree = {v: 0 for v in self.nodes}
        for e in comp_edges:
            self.degree[edges[e][0]] += 1
            self.degree[edges[e][1]] += 1
        self._walks: dict[tuple[int, bool, int], tuple] = {}

    def walk(self, e: int, reverse: bool, k: int) -> tuple:
        """Edge ``e``'s path walked from its first node (``reverse``: from its last), with the unit tangents at
        its start and at its end over ``k`` points: (path, start tangent, end tangent). Made once per component
        and reused by every trace tried from its candidate starts (the same arrays, so the same arithmetic)."""
        key = (e, reverse, k)
        got = self._walks.get(key)
        if got is None:
            p = self.g.edges[e][2]
            q = p[::-1] if reverse else p
            j = min(k, len(q) - 1)
            got = self._walks[key] = (q, _unit(q[j] - q[0]), _unit(q[-1] - q[-1 - j]))
        return got


def _trace_component(comp: _Component, incident: list[list[int]], ink_height: float,
                     params: SkeletonParams, start: int, first: int = 0) -> tuple[list[np.ndarray], float]:
    """Walk the edges of one component into strokes (arrays of work-pixel points), starting at node
    ``start`` along its ``first``-ranked branch (0 = the preferred one), then always along the straightest
    unvisited branch; at a dead end retrace (pen down) to the nearest node with unvisited branches if it is
    within ``max_retrace`` ink heights, else lift the pen and restart at the leftmost odd node.
    Returns the strokes and the retraced length (px)."""
    g, edges = comp.g, comp.g.edges
    k = max(2, int(params.tangent_length))
    unvisited = set(comp.edges)
    nodes, local = comp.nodes, comp.local
    n_open = dict.fromkeys(nodes, 0)  # per node: the ends of unvisited edges at it (a loop counts twice)
    for e in unvisited:
        n_open[edges[e][0]] += 1
        n_open[edges[e][1]] += 1

    def visit(e):
        unvisited.discard(e)
        n_open[edges[e][0]] -= 1
        n_open[edges[e][1]] -= 1

    def options(v, incoming):
        out = []
        ref = incoming if incoming is not None else _PREF
        for e in incident[v]:
            if e not in unvisited:
                continue
            a, b = edges[e][0], edges[e][1]
            for rev in ((False,) if a == v and b != v else (True,) if a != v else (False, True)):
                q, d, end = comp.walk(e, rev, k)
                out.append((-float(d @ ref), e, q, end))
        out.sort(key=lambda c: (c[0], c[1]))
        return out

    def restart() -> int:
        cands = [v for v in nodes if n_open[v] > 0]
        odd = [v for v in cands if n_open[v] % 2 == 1]
        return min(odd or cands, key=lambda v: g.node_xy[v])

    strokes = []
    max_retrace = params.max_retrace * ink_height
    cur, incoming, retraced, rank = start, None, 0.0, first
    stroke = [np.asarray(g.node_xy[cur])[None]]
    while unvisited:
        opts = options(cur, incoming)
        if opts:
            _, e, q, incoming = opts[min(rank, len(opts) - 1)]
            rank = 0
            visit(e)
            stroke.append(q)
            a, b = edges[e][0], edges[e][1]
            cur = b if cur == a else a
            continue
        # dead end with branches left: retrace (pen down) or lift the pen
        i0 = local[cur]
        goal = [(comp.dist[i0, local[v]], v) for v in nodes if n_open[v] > 0]
        dmin, target = min(goal)
        if np.isfinite(dmin) and dmin <= max_retrace:
            route, j = [], local[target]
            while j != i0:
                i = comp.pred[i0, j]
                route.append((nodes[i], nodes[j]))
                j = i
            for u, v in reversed(route):
                e = comp.best[(min(u, v), max(u, v))]
                q, _, incoming = comp.walk(e, edges[e][0] != u, k)
                stroke.append(q)
                retraced += edges[e][3]
            cur = target
            continue
        strokes.append(np.vstack(stroke))
        cur, incoming = restart(), None
        stroke = [np.asarray(g.node_xy[cur])[None]]
    strokes.append(np.vstack(stroke))
    return strokes, retraced


_PREF = np.array([0.4, 1.0]) / np.hypot(0.4, 1.0)  # no incoming direction: prefer down-right


def _best_trace(g: _Graph, comp_edges: list[int], incident: list[list[int]], ink_height: float,
                params: SkeletonParams) -> list[np.ndarray]:
    """Trace a component from a few candidate starts (the leftmost odd nodes and even nodes, each along
    each of its first two branches) and keep the trace a left-to-right writer is likeliest to have made:
    lowest cost = pen lifts (one ink height each) + retraced length + backward travel (arc length spent
    more than half an ink height left of the furthest x reached so far, pen-up jumps included) + ``start_weight``
    x distance of the start from the component's left edge (all in work px)."""
    comp = _Component(g, comp_edges)
    key = lambda v: g.node_xy[v]  # noqa: E731
    odd = sorted((v for v in comp.nodes if comp.degree[v] % 2 == 1), key=key)[:params.n_starts]
    even = sorted((v for v in comp.nodes if comp.degree[v] % 2 == 0), key=key)[:max(1, params.n_starts // 2)]
    xmin = min(float(g.edges[e][2][:, 0].min()) for e in comp_edges)
    tol = 0.5 * ink_height
    best, best_cost = None, np.inf
    for v in list(dict.fromkeys(odd + even)):
        for first in range(min(2, comp.degree[v])):
            strokes, retraced = _trace_component(comp, incident, ink_height, params, v, first)
            allp = np.vstack(strokes)
            ds = np.hypot(*np.diff(allp, axis=0).T)
            run = np.maximum.accumulate(allp[1:, 0])
            back = float((ds * (run - allp[1:, 0] > tol)).sum())
            cost = ((len(strokes) - 1) * ink_height + retraced + back
                    + params.start_weight * (strokes[0][0, 0] - xmin))
            if cost < best_cost - 1e-9:
                best, best_cost = strokes, cost
    return best


def _smooth(p: np.ndarray, sigma: float, tol: float) -> np.ndarray:
    keep = np.ones(len(p), bool)
    keep[1:] = np.any(np.diff(p, axis=0) != 0, axis=1)
    p = p[keep]
    if len(p) < 3:
        return p
    if sigma > 0:
        closed = np.array_equal(p[0], p[-1]) and len(p) > 4
        mode = "wrap" if closed else "nearest"
        q = ndimage.gaussian_filter1d(p[:-1] if closed else p, sigma, axis=0, mode=mode)
        if closed:
            q = np.vstack([q, q[:1]])
        else:  # keep the end points where they are (smoothing pulls them inwards)
            q[0], q[-1] = p[0], p[-1]
        p = q
    if tol > 0 and len(p) > 2:
        s = cv2.approxPolyDP(p.astype(np.float32).reshape(-1, 1, 2), float(tol), False).reshape(-1, 2)
        p = s.astype(np.float64)
    return p


def _order_strokes(comps: list[list[np.ndarray]], ink_height: float, comp_len: list[float],
                   params: SkeletonParams) -> list[np.ndarray]:
    """Writer's order: strokes start at their left end; letters left to right; marks after their letter."""
    comps = [[s[::-1] if s[-1, 0] < s[0, 0] else s for s in c] for c in comps]
    comps = [sorted(c, key=lambda s: (s[0, 0], s[0, 1])) for c in comps]
    boxes = []
    for c in comps:
        p = np.vstack(c)
        boxes.append((p[:, 0].min(), p[:, 1].min(), p[:, 0].max(), p[:, 1].max()))
    big = int(np.argmax(comp_len)) if comp_len else -1
    is_mark = [i != big and (b[3] - b[1]) < params.mark_height * ink_height
               and comp_len[i] < params.mark_length * ink_height for i, b in enumerate(boxes)]
    letters = sorted((i for i in range(len(comps)) if not is_mark[i]),
                     key=lambda i: (comps[i][0][0, 0], boxes[i][1]))
    marks = sorted((i for i in range(len(comps)) if is_mark[i]), key=lambda i: (boxes[i][0], boxes[i][1]))
    after: dict[int, list[int]] = {i: [] for i in letters}
    tail = []
    for m in marks:
        if params.marks_at == "word_end" or not letters:
            tail.append(m)
            continue
        mb = boxes[m]

        def score(i):
            b = boxes[i]
            overlap = min(mb[2], b[2]) - max(mb[0], b[0])
            gap = max(b[0] - mb[2], mb[0] - b[2], 0.0)
            return (-overlap if overlap > 0 else gap + 1e9, i)

        after[min(letters, key=score)].append(m)
    order = []
    for i in letters:
        order.append(i)
        order.extend(after[i])
    order.extend(tail)
    return [s for i in order for s in comps[i]]


def _add_time(strokes: list[np.ndarray], speed_px_per_ms: Optional[float]) -> list[np.ndarray]:
    out, t0, last = [], 0.0, None
    for s in strokes:
        if speed_px_per_ms is None:
            out.append(np.column_stack([s, np.full(len(s), np.nan)]))
            continue
        if last is not None:
            t0 += float(np.hypot(*(s[0] - last))) / speed_px_per_ms
        seg = np.hypot(*np.diff(s, axis=0).T) if len(s) > 1 else np.zeros(0)
        t = t0 + np.concatenate([[0.0], np.cumsum(seg)]) / speed_px_per_ms
        out.append(np.column_stack([s, t]))
        t0, last = float(t[-1]), s[-1]
    return out


class SkeletonDerenderer:
    """Binarise -> skeletonise -> trace -> order: the offline stand-in for InkSight (see module doc)."""

    name = "skeleton"
    parallel = True  # pure numpy / scikit-image, picklable: page-parallel stages send it to workers
    uses_traces = True  # derender(..., traces=): answers read from and kept in a trace store

    def __init__(self, params: SkeletonParams = SkeletonParams()):
        self.params = params

    def trace_key(self, crop_sha: str) -> str:
        """The trace store key of this derenderer's trace of the crop whose pixels have digest ``crop_sha``
        (:func:`~inkground_lib.components.derenderers.traces.crop_digest`): the pixels, the settings, the
        code. The text is not in it: the skeleton does not read it."""
        return sha256_json({"trace": "skeleton", "crop": crop_sha, "params": dataclasses.asdict(self.params),
                            "code": code_sha256()})

    def traced(self, gray: np.ndarray, traces=None, crop_sha: Optional[str] = None) -> list[np.ndarray]:
        """:meth:`trace` of the gray crop, read from the trace store ``traces``
        (:class:`~inkground_lib.components.derenderers.traces.TraceStore`) when it holds the trace's key, else
        made and kept there (with the seconds it took). No store: made."""
        if traces is None:
            return self.trace(gray)
        from inkground_lib.components.derenderers.traces import crop_digest, entry_strokes, strokes_entry

        key = self.trace_key(crop_sha or crop_digest(gray))
        entry = traces.get(key)
        if entry is not None:
            return entry_strokes(entry)
        t0 = time.perf_counter()
        strokes = self.trace(gray)
        traces.put(strokes_entry(key, strokes, time.perf_counter() - t0))
        return strokes

    def trace(self, crop: np.ndarray) -> list[np.ndarray]:
        """Strokes in crop pixels (u, v), writer-ordered, before timing; an empty list for a blank crop."""
        prm = self.params
        gray = as_gray(crop)
        h, w = gray.shape
        s = prm.work_height / h
        ww = max(int(round(w * s)), 2)
        sx, sy = ww / w, prm.work_height / h
        work = cv2.resize(gray, (ww, prm.work_height),
                          interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR)
        mask = binarize(work, prm)
        if not mask.any():
            return []
        from skimage.morphology import skeletonize

        skel = skeletonize(mask)
        rows = np.flatnonzero(mask.any(axis=1))
        ink_height = float(rows[-1] - rows[0] + 1)
        dist = cv2.distanceTransform(mask.astype(np.uint8), cv2.DIST_L2, 3)
        pen = max(2.0 * float(np.median(dist[skel])), 1.0) if skel.any() else 1.0
        skel, g = _prune_spurs(skel, prm.spur_length * pen)
        g = _merge_close_junctions(g if g is not None else _skeleton_graph(skel), prm.merge_length * pen)
        incident: list[list[int]] = [[] for _ in g.node_xy]
        uf = _UF(len(g.node_xy))
        for i, (a, b, _, _) in enumerate(g.edges):
            incident[a].append(i)
            if b != a:
                incident[b].append(i)
            uf.union(a, b)
        comp_edges: dict[int, list[int]] = {}
        for i, (a, _, _, _) in enumerate(g.edges):
            comp_edges.setdefault(uf.find(a), []).append(i)
        comps, comp_len = [], []
        for root in sorted(comp_edges):
            strokes = _best_trace(g, comp_edges[root], incident, ink_height, prm)
            comps.append([_smooth(st, prm.smooth_sigma, prm.simplify_tolerance) for st in strokes])
            comp_len.append(sum(g.edges[e][3] for e in comp_edges[root]))
        # isolated skeleton pixels (tiny dots): nodes without edges
        for v in range(len(g.node_xy)):
            if not incident[v]:
                comps.append([np.asarray(g.node_xy[v], float)[None]])
                comp_len.append(0.0)
        strokes = _order_strokes(comps, ink_height, comp_len, prm)
        # work pixels -> crop pixels (pixel-centre convention of cv2.resize); float64, as a trace store keeps them
        return [np.column_stack([(st[:, 0] + 0.5) / sx - 0.5, (st[:, 1] + 0.5) / sy - 0.5]) for st in strokes]

    def derender(self, crop: np.ndarray, crop_box: Box, text: Optional[str] = None, traces=None) -> Ink:
        """Ink in page pixels (see module doc); ``text`` is ignored. A blank crop gives an empty ink. ``traces``:
        a trace store the trace is read from or kept in (:meth:`traced`)."""
        box = check_box(crop_box)
        gray = as_gray(crop)
        return page_ink(self.traced(gray, traces), box, gray.shape, self.params, "skeleton derenderer output")


def page_ink(strokes: Sequence[np.ndarray], box: Box, shape: tuple[int, int], params: SkeletonParams,
             what: str) -> Ink:
    """Strokes in crop pixels (x, y; y down) of a crop of ``shape`` (h, w) cut at ``box`` (page pixels) as an
    Ink in page pixels, with time stamps synthesised at ``params.speed`` word heights a second when
    ``params.timing`` (else t is NaN); ``what`` names the ink in errors. The skeleton and the tracer (which
    reorders the skeleton's strokes) both end here."""
    h, w = shape
    kx, ky = (box[2] - box[0]) / w, (box[3] - box[1]) / h
    page = [np.column_stack([box[0] + s[:, 0] * kx, box[1] + s[:, 1] * ky]) for s in strokes]
    speed = None
    if params.timing and page:
        pts = np.vstack(page)
        height = max(float(np.ptp(pts[:, 1])), 1.0)
        speed = params.speed * height / 1000.0  # page px per ms
    return as_ink(_add_time(page, speed), what)
