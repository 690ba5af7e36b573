"""Issue 37: derenderers by name (one table, one error), the tracer's text modes (recognize and derender, derender
with text, no text), the crop readings read once and shared by the tracer and the OCR filter."""
import json

import pytest

from inkground_lib.components.derenderers.base import DerenderError
from inkground_lib.components.derenderers.factory import derenderer_names, make_derenderer
from inkground_lib.components.derenderers.tracer.derenderer import TracerDerenderer
from inkground_lib.core.dataset import load_dataset
from inkground_lib.core.ink import ink_to_lists
from inkground_lib.core.registry import UnknownComponent
from inkground_lib.core.run_files import crop_ocr_jsonl, derender_jsonl
from inkground_lib.datasets.synth.generate import SynthParams, generate
from inkground_lib.pseudo.crop_readings import read_crops
from inkground_lib.pseudo.derender_stage import derender_dataset
from inkground_lib.pseudo.keys import PseudoError
from inkground_lib.pseudo.ocr_filter import ocr_filter


class ReadingEngine:
    """OCR stand-in: the k-th crop (3-D RGB) of a call reads "crop<k>", a render (2-D gray) "rend<k>"."""

    name = "reading"

    def __init__(self, prefix="crop"):
        self.prefix = prefix
        self.crops = 0

    def read(self, images):
        self.crops += sum(im.ndim == 3 for im in images)
        return [f"{self.prefix}{k}" if im.ndim == 3 else f"rend{k}" for k, im in enumerate(images)]


@pytest.fixture(scope="module")
def ds_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("modes") / "cand"
    generate(root, SynthParams(pages=2, words_min=3, words_max=5, words_mean=4, seed=5, width=700, height=900),
             progress=False)
    return root


@pytest.fixture(scope="module")
def recognize():
    return make_derenderer("tracer-recognize")


def test_factory_table_names_and_errors():
    names = derenderer_names()
    assert names[:4] == ["skeleton", "tracer[:<weights .npz>]", "tracer-recognize[:<weights .npz>]",
                         "tracer-no-text[:<weights .npz>]"]
    with pytest.raises(UnknownComponent) as e:  # the one error of the three registries
        make_derenderer("pencil")
    assert e.value.what == "derenderer" and all(n in str(e.value) for n in names)
    with pytest.raises(DerenderError, match="takes no argument"):
        make_derenderer("skeleton:x")
    with pytest.raises(DerenderError, match="needs an argument"):
        make_derenderer("inksight")
    with pytest.raises(DerenderError, match="no derender"):
        make_derenderer(object())
    assert make_derenderer("tracer-no-text").text_mode == "none"
    assert make_derenderer("tracer").text_mode == "text"


def test_tracer_text_modes_and_keys(recognize):
    with pytest.raises(DerenderError, match="text_mode 'ocr'"):
        TracerDerenderer(text_mode="ocr")
    text, none = make_derenderer("tracer"), make_derenderer("tracer-no-text")
    k = "0" * 64
    # the mode and the text given are both in the key; "none" ignores the text
    assert recognize.arrangement_key(k, "the") != text.arrangement_key(k, "the")
    assert recognize.arrangement_key(k, "the") != recognize.arrangement_key(k, "then")
    assert none.arrangement_key(k, "the") == none.arrangement_key(k, None)


def test_recognize_needs_readings_and_ignores_transcriptions(ds_root, tmp_path, recognize):
    ds = load_dataset(ds_root)
    with pytest.raises(PseudoError, match="no OCR readings"):
        derender_dataset(ds, recognize, tmp_path / "a", progress=False, workers=1)
    eng = ReadingEngine()
    readings = read_crops(ds, eng, tmp_path / "a", progress=False)
    assert eng.crops == ds.n_words and set(readings.texts) == {w.id for w in ds.words()}
    assert len(set(readings.texts.values())) > 1
    inks = derender_dataset(ds, recognize, tmp_path / "a", progress=False, workers=1, readings=readings)
    rec = json.loads(derender_jsonl(tmp_path / "a", "tracer").read_text().splitlines()[0])
    assert rec["text_mode"] == "recognize"
    # the same words with every transcription replaced by another word's: the same pseudo-labels
    ds2 = load_dataset(ds_root)
    words = list(ds2.words())
    for w, other in zip(words, words[1:] + words[:1]):
        w.text = other.text + "x"
    inks2 = derender_dataset(ds2, recognize, tmp_path / "b", progress=False, workers=1, readings=readings)
    assert [ink_to_lists(inks[w.id]) for w in words] == [ink_to_lists(inks2[w.id]) for w in words]
    assert sum(len(inks[w.id].strokes) for w in words) > 0


def test_readings_read_once_and_shared_with_the_filter(ds_root, tmp_path):
    ds = load_dataset(ds_root)
    eng = ReadingEngine()
    first = read_crops(ds, eng, tmp_path, progress=False)
    again = read_crops(ds, eng, tmp_path, progress=False)
    assert eng.crops == ds.n_words and again.texts == first.texts  # the second call read from the log
    assert crop_ocr_jsonl(tmp_path, "reading").is_file()
    inks = derender_dataset(ds, "skeleton", tmp_path, progress=False, workers=1)
    before = eng.crops
    shared = ocr_filter(ds, inks, eng, run_dir=None, progress=False, originals=first)
    assert eng.crops == before  # the crops were not read again
    fresh = ocr_filter(ds, inks, ReadingEngine(), run_dir=None, progress=False)
    assert shared.words["ocr_original"].tolist() == fresh.words["ocr_original"].tolist()
    other = read_crops(ds, ReadingEngine("other"), None, progress=False)
    assert other.texts != first.texts
    with pytest.raises(PseudoError, match="crop readings were made by"):
        ocr_filter(ds, inks, eng, progress=False, originals=read_crops(ds, _Named(), None, progress=False))


class _Named(ReadingEngine):
    name = "another-engine"


def test_evaluate_tracer_modes_intervals_and_ocr(tmp_path):
    from inkground_lib.pseudo.tracer_eval import evaluate_tracer, report_lines

    rep = evaluate_tracer(None, tmp_path / "ev", synth_pages=1, modes=("recognize", "none"), ocr=ReadingEngine(),
                          n_boot=50, progress=False)
    res = rep["sets"]["synth"]
    ders = res["derenderers"]
    assert list(ders) == ["skeleton", "tracer (recognize)", "tracer (none)"]
    assert ders["tracer (recognize)"]["text_mode"] == "recognize" and ders["tracer (none)"]["text_mode"] == "none"
    for r in ders.values():
        assert r["words"] > 0
        for col in ("dtw", "chamfer"):
            assert r[f"{col}_low"] <= r[f"{col}_median"] <= r[f"{col}_high"]
        # the stand-in reads "crop<k>" on crops and "rend<k>" on renders: no word matches, no page passes
        assert r["ocr_filter"]["word_match_rate"] == 0.0 and r["ocr_filter"]["pages_passing"] == 0
    vs = ders["tracer (none)"]["vs_skeleton"]
    assert vs["dtw"]["low"] <= vs["dtw"]["difference"] <= vs["dtw"]["high"]
    assert res["ocr_reads_the_word"] == 0.0 and rep["ocr"] == "reading"
    assert (tmp_path / "ev" / "eval_report.json").is_file()
    lines = report_lines(rep)
    assert any(line.startswith("tracer (none)") and "- skeleton" in line for line in lines)


def test_a_page_is_one_network_call_with_the_inks_of_word_by_word(ds_root, monkeypatch):
    """Issue 32: derender_page gives the tracer a page's words at once (one call of its network), and the inks
    are those it gives word by word; a word it refuses fails alone, as before."""
    from inkground_lib.components.derenderers.base import crop_word
    from inkground_lib.core.defaults import CROP_GROW
    from inkground_lib.pseudo.derender_stage import derender_page

    page = next(p for p in load_dataset(ds_root).pages if len(p.words) >= 3)
    der = make_derenderer("tracer")
    calls = []
    orders = der.orders
    monkeypatch.setattr(der, "orders", lambda s, t: calls.append(len(s)) or orders(s, t))
    rec, made = derender_page((page, der, "k"))
    assert calls == [len(page.words)] and not rec["errors"]
    photo = page.load_image()
    alone = [ink_to_lists(der.derender(*crop_word(photo, w.box, grow=CROP_GROW), w.text)) for w in page.words]
    assert [rec["words"][w.id] for w in page.words] == alone
    assert {e["kind"] for e in made} == {"strokes", "arrangement"}

    bad = page.words[1]
    bad_box = tuple(float(v) for v in crop_word(photo, bad.box, grow=CROP_GROW)[1])
    real = der._page_ink

    def refuse(strokes, box, shape):  # the derenderer refuses one word's output, in a batch or alone
        if tuple(float(v) for v in box) == bad_box:
            raise DerenderError("refused")
        return real(strokes, box, shape)

    monkeypatch.setattr(der, "_page_ink", refuse)
    rec2, _ = derender_page((page, der, "k"))
    assert rec2["errors"] == {bad.id: "refused"} and rec2["words"][bad.id] == []
    assert all(rec2["words"][w.id] == rec["words"][w.id] for w in page.words if w.id != bad.id)
