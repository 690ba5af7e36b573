"""Issue 32: section 03 does nothing twice - each dataset loaded and its photos decoded once and the objects
handed down, a drawing read by OCR and classified once whatever the order and direction of its strokes, and
section 02's derender answers read on every set section 03 scores."""

import inspect

import numpy as np
from conftest import CountingOCR, make_tiny_dataset
from PIL import Image

import inkground_lib.core.dataset as dsmod
from inkground_lib.components.derenderers.base import as_gray, crop_word
from inkground_lib.components.derenderers.skeleton import SkeletonDerenderer
from inkground_lib.components.derenderers.traces import TraceStore, crop_digest, strokes_entry
from inkground_lib.components.style.params import StyleParams
from inkground_lib.core.dataset import load_dataset, write_manifest
from inkground_lib.core.ink import as_ink, drawing_digest, ink_digest
from inkground_lib.core.render import render_ink
from inkground_lib.core.run_files import traces_jsonl
from inkground_lib.evaluation.predict import predict_system
from inkground_lib.evaluation.render_ocr import read_renders, seed_texts
from inkground_lib.evaluation.run import evaluate_section, section_dataset, section_traces
from inkground_lib.evaluation.settings import EvalSettings
from inkground_lib.evaluation.style_stage import style_rows

TINY_STYLE = {"height": 32, "width": 128, "epochs": 1, "batch_size": 16, "augment": False, "seed": 1,
              "render": {"height": 32, "pen_width": 2.0, "padding": 3}}

# one drawing, and the same strokes as the tracer hands them back: another order, a stroke reversed
DRAWING = as_ink([[[0, 0], [30, 12], [35, 30]], [[5, 20], [40, 21]]])
REORDERED = as_ink([[[40, 21], [5, 20]], [[0, 0], [30, 12], [35, 30]]])
OTHER = as_ink([[[0, 0], [30, 12], [35, 31]], [[5, 20], [40, 21]]])


class CountingStyle:
    """What :func:`style_rows` needs of a StyleModel (a network: no head on a frozen backbone), counting the
    renders it is asked to classify."""

    input_hash, params, classes, out_dir, head = "h", StyleParams(start="random", fit="all"), ["a", "b"], None, None

    def __init__(self):
        self.inks = 0

    @property
    def n_classes(self):
        return len(self.classes)

    def logits(self, inks, progress=False):
        self.inks += len(inks)
        return np.array([[float(render_ink(k).sum()), float(len(k))] for k in inks])


def test_two_orders_of_one_drawing_are_read_and_classified_once():
    assert ink_digest(DRAWING) != ink_digest(REORDERED) and drawing_digest(DRAWING) == drawing_digest(REORDERED)
    assert drawing_digest(OTHER) != drawing_digest(DRAWING)
    ocr, model, memo = CountingOCR(), CountingStyle(), {}
    first = read_renders(ocr, [DRAWING], memo)
    later = read_renders(ocr, [REORDERED, OTHER, DRAWING], memo)  # another system, another call
    assert ocr.images == 2 and later[0] == later[2] == first[0] and later[1] != first[0]
    rows = style_rows(model, [DRAWING, OTHER], memo)
    again = style_rows(model, [REORDERED], memo)
    assert model.inks == 2 and again[0].tobytes() == rows[0].tobytes()


def test_a_text_read_in_section_02_stands_for_every_order_of_its_drawing():
    class Refuse(CountingOCR):
        def read(self, images):
            raise AssertionError(f"asked to read {len(images)} renders section 02 already read")

    memo = {}
    assert seed_texts(memo, "counting", [REORDERED, DRAWING], {ink_digest(DRAWING): "read"}) == 1
    assert read_renders(Refuse(), [REORDERED, DRAWING], memo) == ["read", "read"]


def test_section_03_loads_each_dataset_once_and_hands_the_objects_down(tmp_path, monkeypatch):
    bench = make_tiny_dataset(tmp_path / "bench", pages=2, words=3, unique_texts=True)
    rec = make_tiny_dataset(tmp_path / "rec", pages=3, words=3, unique_texts=True)
    loads, decodes = [], []
    read, size = dsmod._read_manifest, dsmod._check_photo_size

    def counted_read(path, max_bytes):
        loads.append(path)
        return read(path, max_bytes)

    def counted_size(image, width, height, where, decode=False):
        if decode:
            decodes.append(image)
        return size(image, width, height, where, decode)

    monkeypatch.setattr(dsmod, "_read_manifest", counted_read)
    monkeypatch.setattr(dsmod, "_check_photo_size", counted_size)
    settings = EvalSettings(n_boot=20, style=TINY_STYLE)
    systems = ["reference", "font", "box"]
    res = evaluate_section(bench, rec, systems, tmp_path / "b", tmp_path / "r", settings, workers=1, progress=False)
    assert sorted(loads) == sorted([bench / "manifest.json", rec / "manifest.json"])  # once each
    assert len(decodes) == 5 and len(set(decodes)) == 5  # every photo once
    assert res.bench.ds is res.bench_true.ds and res.rec.ds is not None
    assert len(res.bench.scores) == 3 * res.bench.ds.n_words == 18
    loads.clear()
    decodes.clear()
    again = evaluate_section(res.bench.ds, res.rec.ds, systems, tmp_path / "b", tmp_path / "r", settings,
                             workers=1, progress=False)  # the same folders: predictions and classifiers reused
    assert loads == [] and decodes == []  # objects given: nothing loaded or decoded again
    assert again.bench.scores.equals(res.bench.scores) and again.rec.summary.equals(res.rec.summary)


def test_a_dataset_object_is_checked_once_a_folder_each_time(tmp_path, monkeypatch):
    root = make_tiny_dataset(tmp_path / "ds", pages=2, words=2)
    decodes = []
    size = dsmod._check_photo_size
    monkeypatch.setattr(dsmod, "_check_photo_size",
                        lambda im, w, h, where, decode=False: (decodes.append(im) if decode else None)
                        or size(im, w, h, where, decode))
    ds = section_dataset(root)
    assert section_dataset(ds) is not None and len(decodes) == 2
    section_dataset(root)  # a folder is loaded, and its photos decoded, anew
    assert len(decodes) == 4
    assert load_dataset(root, decode_images=True).pages[0].photo_decoded


def test_evaluate_section_shows_progress_by_default():
    assert inspect.signature(evaluate_section).parameters["progress"].default is True


def test_section_02s_trace_store_is_read_on_the_recorded_set(tmp_path):
    """A trace store section 03 is given (section_traces: the pseudo-label run's) answers the skeleton system on
    any dataset, here a set that is not a benchmark (as the recorded pages are)."""
    root = make_tiny_dataset(tmp_path / "rec", pages=1, words=2, unique_texts=True)
    for img in (root / "pages").iterdir():  # photos no other test draws (the process's own store is read first)
        Image.new("RGB", (200, 100), (17, 201, 99)).save(img)
    ds = load_dataset(root)
    skel, page = SkeletonDerenderer(), ds.pages[0]
    photo = page.load_image()
    store = TraceStore(tmp_path / "run" / "traces.jsonl")
    strokes = [np.array([[2.0, 3.0], [9.0, 7.0], [12.0, 4.0]])]  # not what the skeleton finds on a blank crop
    for w in page.words:
        crop, _ = crop_word(photo, w.box, grow=0.1)
        store.append([strokes_entry(skel.trace_key(crop_digest(as_gray(crop))), strokes, 1.0)], "photo")
    linked = predict_system("skeleton", ds, tmp_path / "with", progress=False, traces=[store.path])
    alone = predict_system("skeleton", ds, tmp_path / "alone", progress=False)
    assert linked.statuses == ["ok", "ok"] and all(k.n_points == 3 for k in linked.inks)
    assert alone.statuses == ["no_strokes", "no_strokes"]  # a blank crop traced here: nothing
    assert [r["request_hash"] for r in linked.records] == [r["request_hash"] for r in alone.records]  # the request keys do not move


def test_section_traces_names_the_pseudo_label_runs_store(tmp_path):
    run = tmp_path / "02_pseudo_labels"
    tiny = load_dataset(make_tiny_dataset(tmp_path / "x", pages=1, words=2))
    write_manifest(run / "benchmark", "b", "benchmark", "pseudo-label: tracer", {}, [], write_inks=False)
    bench = load_dataset(run / "benchmark")
    assert section_traces(bench) == () and section_traces(tiny) == ()  # no store yet; not a benchmark
    traces_jsonl(run).write_text("")
    assert section_traces(bench) == (traces_jsonl(run),) and section_traces(tiny) == ()
