"""Derenderer answers made once and reused by content key (issue 32): the trace store, the skeleton and the tracer
reading each other's answers, section 02's run and section 03's systems reading that run's answers. Reuse follows
from equal keys only: change what decides an answer and it is made again."""

from __future__ import annotations

import json

import numpy as np
import pytest

from inkground_lib.components.derenderers import traces as tr
from inkground_lib.components.derenderers.base import DerenderError, as_gray, crop_word
from inkground_lib.components.derenderers.skeleton import SkeletonDerenderer, SkeletonParams
from inkground_lib.components.derenderers.tracer import inference
from inkground_lib.components.derenderers.tracer.derenderer import TRACER_GEOMETRY, TracerDerenderer
from inkground_lib.core.dataset import load_dataset
from inkground_lib.core.defaults import CROP_GROW
from inkground_lib.core.ink import ink_to_lists
from inkground_lib.datasets.recorded import build_recorded


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    return load_dataset(build_recorded(tmp_path_factory.mktemp("rec") / "rec", pages=2, words_per_page=(4, 5),
                                       progress=False))


@pytest.fixture(scope="module")
def crops(recorded):
    out = []
    for p in recorded.pages:
        photo = p.load_image()
        for w in p.words:
            crop, box = crop_word(photo, w.box, grow=CROP_GROW)
            out.append((np.ascontiguousarray(crop), box, w.text))
    return out


@pytest.fixture(scope="module")
def tracer():
    """A tracer tracing as the skeleton derenderer does (the shipped tracer traces at its own resolution,
    TRACER_GEOMETRY): the two share each crop's trace."""
    return TracerDerenderer(skeleton_params=SkeletonParams())


@pytest.fixture
def count(monkeypatch):
    """Skeleton traces and tracer network calls made in this process from now on."""
    n = {"trace": 0, "net": 0}
    real_trace, real_predict = SkeletonDerenderer.trace, inference.predict

    def trace(self, crop):
        n["trace"] += 1
        return real_trace(self, crop)

    def predict(*args, **kwargs):
        n["net"] += 1
        return real_predict(*args, **kwargs)

    monkeypatch.setattr(SkeletonDerenderer, "trace", trace)
    monkeypatch.setattr(inference, "predict", predict)
    monkeypatch.setattr(tr, "_PROCESS", {})  # a process store of this test's own
    return n


def _reset(n):
    n["trace"] = n["net"] = 0


def _inked(crops):
    return sum(1 for c, _, _ in crops if SkeletonDerenderer().trace(as_gray(c)))


def test_an_entry_keeps_the_strokes_bit_for_bit_and_the_log_resumes(tmp_path):
    rng = np.random.default_rng(0)
    strokes = [rng.normal(size=(7, 2)) * 1e3, np.array([[np.pi, -0.0]]), rng.random((3, 2)) / 3]
    back = tr.entry_strokes(json.loads(json.dumps(tr.strokes_entry("k1", strokes, 0.01))))
    assert all(b.dtype == np.float64 and b.tobytes() == s.tobytes() for s, b in zip(strokes, back))
    assert tr.entry_strokes(tr.strokes_entry("k0", [], 0.0)) == []
    path = tmp_path / "traces.jsonl"
    st = tr.TraceStore(path)
    st.append([tr.strokes_entry("k1", strokes, 0.01), tr.arrangement_entry("k2", "k1", [2, 0, 1], [1, 0, 0], 0.002)],
              "photo-a")
    st.append([tr.strokes_entry("k1", strokes[:1], 9.0)], "photo-b")  # a key it holds is not written again
    assert len(path.read_text().splitlines()) == 1
    again = tr.TraceStore(path)
    assert len(again) == 2 and again.get("k2")["order"] == [2, 0, 1] and again.get("nope") is None
    assert [e["key"] for e in again.for_photo("photo-a")] == ["k1", "k2"] and again.for_photo("photo-b") == []
    assert again.hits["arrangement"] == 1 and again.reused_seconds == pytest.approx(0.002)
    with open(path, "ab") as f:
        f.write(b'{"schema": "inkground-traces", "photo": "x", "entr')  # a run killed mid-write
    assert len(tr.TraceStore(path)) == 2 and path.read_bytes().endswith(b"\n")  # the torn line is cut off
    path.write_text("garbage\n" + path.read_text())
    with pytest.raises(DerenderError, match="line 1"):
        tr.TraceStore(path)


def test_the_tracer_reads_the_skeletons_trace_and_the_skeleton_the_tracers_either_way(crops, tracer, count):
    skel = SkeletonDerenderer()
    plain_t = [tracer.derender(c, b, t) for c, b, t in crops]
    plain_s = [skel.derender(c, b, t) for c, b, t in crops]
    inked = _inked(crops)
    assert inked >= 4
    for first in ("tracer", "skeleton"):
        st = tr.TraceStore()
        _reset(count)
        if first == "tracer":
            assert [tracer.derender(c, b, t, traces=st) for c, b, t in crops] == plain_t
            assert count == {"trace": len(crops), "net": inked}
            assert [skel.derender(c, b, t, traces=st) for c, b, t in crops] == plain_s
            assert count == {"trace": len(crops), "net": inked}  # no crop traced twice
        else:
            assert [skel.derender(c, b, t, traces=st) for c, b, t in crops] == plain_s
            assert [tracer.derender(c, b, t, traces=st) for c, b, t in crops] == plain_t
            assert count == {"trace": len(crops), "net": inked}
        _reset(count)
        assert [tracer.derender(c, b, t, traces=st) for c, b, t in crops] == plain_t
        assert count == {"trace": 0, "net": 0}  # both answers read
        assert st.made == {"strokes": len(crops), "arrangement": len(crops)}


def test_nothing_is_reused_when_what_decides_the_answer_changes(crops, tracer, count, tmp_path):
    from inkground_lib.components.derenderers.tracer.weights import SHIPPED_WEIGHTS, npz_bytes, read_npz

    st = tr.TraceStore()
    for c, b, t in crops:
        tracer.derender(c, b, t, traces=st)
    inked = _reset(count) or _inked(crops)
    _reset(count)
    other_params = SkeletonDerenderer(SkeletonParams(max_retrace=0.0))
    for c, b, t in crops:
        other_params.derender(c, b, t, traces=st)
    assert count == {"trace": len(crops), "net": 0}  # other skeleton settings: every crop traced again
    _reset(count)
    for c, b, t in crops:
        tracer.derender(c, b, t + "x", traces=st)
    assert count == {"trace": 0, "net": inked}  # another text: the trace is the same, the network is asked again
    # other weights (here the same tensors under another record: another sha256, so another answer by key)
    record, arrays = read_npz(SHIPPED_WEIGHTS)
    record.pop("sha256")
    other = tmp_path / "other.npz"
    other.write_bytes(npz_bytes(arrays, {**record, "note": "a copy"}))
    copy = TracerDerenderer(other, skeleton_params=SkeletonParams())
    assert copy.weights_sha256 != tracer.weights_sha256
    _reset(count)
    for c, b, t in crops:
        copy.derender(c, b, t, traces=st)
    assert count == {"trace": 0, "net": inked}
    _reset(count)
    moved = TracerDerenderer(skeleton_params=SkeletonParams(max_retrace=0.0))
    for c, b, t in crops:
        moved.derender(c, b, t, traces=st)
    assert count == {"trace": 0, "net": inked}  # its skeleton settings were traced above: read, arranged anew
    _reset(count)
    for c, b, t in crops:
        tracer.derender(c, b, t, traces=st)
        copy.derender(c, b, t, traces=st)
    assert count == {"trace": 0, "net": 0}


def test_section_02_traces_each_crop_once_and_its_logs_do_not_change(recorded, count, tmp_path):
    from inkground_lib.core.run_files import traces_jsonl
    from inkground_lib.pseudo.derender_stage import derender_dataset, recorded_seconds

    run = tmp_path / "run"
    shared = TracerDerenderer(skeleton_params=SkeletonParams())  # the skeleton derenderer's geometry
    tracer_inks = derender_dataset(recorded, shared, run, progress=False, workers=1)
    assert count["trace"] == recorded.n_words
    _reset(count)
    skel_inks = derender_dataset(recorded, "skeleton", run, progress=False, workers=1)
    assert count == {"trace": 0, "net": 0}
    assert recorded_seconds(run, SkeletonDerenderer(), recorded) > 0  # the reused traces' seconds are counted
    # the same logs (but the seconds) as the skeleton alone, and the same inks
    alone = tmp_path / "alone"
    _reset(count)
    assert derender_dataset(recorded, "skeleton", alone, progress=False, workers=1) == skel_inks
    assert count["trace"] == recorded.n_words

    def words(folder):
        return [json.loads(line)["words"] for line in (folder / "derender-skeleton.jsonl").read_text().splitlines()]

    assert words(run) == words(alone)
    # a rebuilt log reads every answer from the store, in pool workers too
    (run / "derender-tracer.jsonl").unlink()
    _reset(count)
    assert derender_dataset(recorded, shared, run, progress=False, workers=2) == tracer_inks
    lines = traces_jsonl(run).read_text().splitlines()
    assert len(lines) == len(recorded.pages)  # nothing made the second time: no line written
    assert sum(len(json.loads(x)["entries"]) for x in lines) == 2 * recorded.n_words


def test_section_03_systems_read_the_answers_of_the_run_that_made_the_benchmark(recorded, count, tmp_path):
    from inkground_lib.core.run_files import benchmark_dir
    from inkground_lib.evaluation.systems.base import Item
    from inkground_lib.evaluation.systems.registry import make_system
    from inkground_lib.pseudo.benchmark import build_benchmark
    from inkground_lib.pseudo.derender_stage import derender_dataset

    run = tmp_path / "run"
    pseudo = derender_dataset(recorded, "tracer", run, progress=False, workers=1)
    derender_dataset(recorded, "skeleton", run, progress=False, workers=1)
    bench = load_dataset(build_benchmark(recorded, pseudo, [p.id for p in recorded.pages], benchmark_dir(run)))
    items = [Item.from_word(p, w) for p in bench.pages for w in p.words]
    _reset(count)
    systems = {n: make_system(n) for n in ("skeleton", "tracer")}
    got = {n: [ink_to_lists(s.predict(it).strokes) for it in items] for n, s in systems.items()}
    assert count == {"trace": 0, "net": 0}  # every answer read from the pseudo-label run's store
    assert got["tracer"] == [ink_to_lists(pseudo[it.word_id]) for it in items]  # the pseudo-labels themselves
    # the same words outside a benchmark folder: made here, the tracer reading the skeleton system's traces
    loose = [Item(it.word_id, it.text, it.box, it.page_id, it.page_size, reference=it.reference,
                  image=it.load_image()) for it in items]
    tr._PROCESS.clear()
    _reset(count)
    made = {n: [ink_to_lists(s.predict(it).strokes) for it in loose] for n, s in systems.items()}
    assert made == got
    # the shipped tracer traces at its own resolution (TRACER_GEOMETRY): each system traces each crop once
    same = TRACER_GEOMETRY == SkeletonParams()
    assert count["trace"] == len(items) * (1 if same else 2)
    assert count["net"] == sum(1 for x in made["tracer"] if x)
