"""Issue 47, "a component is one card": each derenderer, OCR engine and system adapter declares its facts once (its
card), every page, table and command reads them, and the three registries share one pattern (a row per name,
lookup, UnknownComponent). A toy derenderer registered here (one row, undone after the test) runs in section 02,
runs as a section-03 system and is named right in the book's sentences, with no other file edited."""

from __future__ import annotations

import numpy as np
import pytest

from inkground_lib.components.derenderers import factory as derenderers
from inkground_lib.components.derenderers.factory import DERENDERERS, Derenderer, make_derenderer
from inkground_lib.components.ocr.factory import ENGINES, make_engine
from inkground_lib.core.ink import as_ink
from inkground_lib.core.registry import Card, UnknownComponent
from inkground_lib.evaluation.systems import registry
from inkground_lib.evaluation.systems.errors import SystemConfigError


class ToyDerenderer:
    """A straight line through the crop's middle: knows where the word is, nothing of its shape."""

    name = "toy"

    def derender(self, crop, crop_box, text=None):
        x0, y0, x1, y1 = crop_box
        return as_ink([np.array([[x0, (y0 + y1) / 2], [x1, (y0 + y1) / 2]])], "toy")


TOY = Derenderer(lambda arg: ToyDerenderer(), "none", Card(
    label="Toy derenderer (a line)", gloss="a line", free=True, stands_in="InkSight",
    text="toy, a derenderer that draws one line through the crop"))


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(DERENDERERS, "toy", TOY)
    return TOY


def test_one_verb_and_one_error_for_the_three_registries():
    for make, what in ((make_derenderer, "derenderer"), (make_engine, "OCR engine"),
                       (lambda n: registry.make_system(n, registry={"font": {"adapter": "font"}}), "system")):
        with pytest.raises(UnknownComponent) as e:
            make("pencil")
        assert e.value.what == what and e.value.name == "pencil" and e.value.choices
        assert str(e.value).startswith(f"unknown {what} 'pencil'; known: ")
    with pytest.raises(UnknownComponent, match="unknown system 'pencil'; known: font"):
        registry.system_kind("pencil", {"font": {"adapter": "font"}})
    with pytest.raises(SystemConfigError, match="field adapter: 'pencil' is not one of"):
        registry.validate_entry("x", {"adapter": "pencil"})


def test_a_toy_derenderer_runs_in_section_02(toy, tmp_path):
    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.datasets.synth.generate import SynthParams, generate
    from inkground_lib.publish.run_checks import _derenderers
    from inkground_lib.pseudo.derender_stage import derender_dataset

    assert "toy" in derenderers.derenderer_names() and _derenderers(["toy", "pencil"]) == (["pencil"],
                                                                                           derenderers.derenderer_names())
    root = tmp_path / "cand"
    generate(root, SynthParams(pages=1, words_min=3, words_max=3, words_mean=3, seed=5, width=500, height=600),
             progress=False)
    ds = load_dataset(root)
    inks = derender_dataset(ds, "toy", tmp_path / "run", progress=False, workers=1)
    words = ds.pages[0].words
    assert set(inks) == {w.id for w in words}
    assert all(len(inks[w.id].strokes) == 1 and inks[w.id].n_points == 2 for w in words)
    assert (tmp_path / "run" / "derender-toy.jsonl").is_file()


def test_a_toy_derenderer_is_a_section_03_system(toy):
    from inkground_lib.evaluation.systems.base import Item

    assert registry.adapters()["toy"].kind == "specialist"
    # a system by its name with no line of YAML: an entry of its own after the packaged ones
    assert list(registry.load_registry(use_env=False))[-1] == "toy"
    assert registry.make_system("toy").derenderer.name == "toy"
    reg = {"toy": registry.validate_entry("toy", {"adapter": "toy", "grow": 0.2})}
    assert reg["toy"]["label"] == "Toy derenderer (a line)"  # the card's label: the entry names none
    assert "label" not in registry.validate_entry("toy-2", {"adapter": "toy"})  # another entry: its own name
    assert registry.system_kind("toy", reg) == "specialist" and "toy" in registry.free_adapters()
    system = registry.make_system("toy", registry=reg)
    assert isinstance(system.derenderer, ToyDerenderer) and system.label == "Toy derenderer (a line)"
    item = Item("w1", "word", (100, 100, 200, 130), "p1", (400, 300), image=np.full((300, 400, 3), 255, np.uint8))
    out = system.predict(item)
    assert out.status == "ok" and out.strokes.n_points == 2
    # a derenderer that serves section 02 only is no system
    DERENDERERS["toy"] = Derenderer(TOY.build, "none", Card(text=TOY.card.text, sections=("02",)))
    assert "toy" not in registry.adapters()
    with pytest.raises(SystemConfigError):
        registry.validate_entry("toy", {"adapter": "toy"})


def test_a_toy_derenderer_is_named_in_the_books_sentences(toy):
    from inkground_lib.analysis.claims import stand_in_systems
    from inkground_lib.report.prose import DERENDERER_TEXT, derenderers_compared_text

    assert DERENDERER_TEXT["toy"] == TOY.card.text
    from inkground_lib.report.names import SYSTEM_OF_MODE, labelled

    assert labelled("toy") == "toy (a line)" and "toy" not in SYSTEM_OF_MODE  # its gloss; it runs as no system
    t = derenderers_compared_text(["skeleton", "toy"])
    assert TOY.card.text in t and DERENDERERS["skeleton"].card.text in t and t.startswith("This run compares 2 ")
    assert stand_in_systems()["InkSight"] == ("skeleton", "tracer", "toy")
    from types import SimpleNamespace as NS

    from inkground_lib.report.prose import systems_stand_in_text

    ran = NS(runs={"reference": 0, "toy": 0}, unavailable={})
    assert systems_stand_in_text(ran, "rapidocr", registry.load_registry(use_env=False)).startswith(
        "1 system ran here besides the reference ink (Toy derenderer (a line))")


def test_make_clean_keeps_what_the_cards_do_not_call_free():
    from inkground_lib.publish.clean import FREE_ADAPTERS, FREE_COMPONENTS

    assert Card().free is False  # a card that does not say "free" keeps its logs and predictions
    assert FREE_ADAPTERS == {"reference", "box", "font", "skeleton", "tracer", "replay"}
    assert {"skeleton", "tracer", "rapidocr", "tesseract"} <= FREE_COMPONENTS
    assert not {"inksight", "inksight-small-p", "deepseek-ocr"} & FREE_COMPONENTS
    assert not set(registry.provider_adapters()) & FREE_ADAPTERS


def test_the_book_reads_each_fact_from_the_cards():
    from inkground_lib.analysis.claims import STAND_IN_SYSTEMS
    from inkground_lib.report import names
    from inkground_lib.report.prose import BASELINE_TEXT, OCR_TEXT

    assert STAND_IN_SYSTEMS == {"InkSight": ("skeleton", "tracer")}
    assert list(BASELINE_TEXT) == ["reference", "font", "box"]
    assert OCR_TEXT["rapidocr"] == ENGINES["rapidocr"].card.text and ENGINES["rapidocr"].card.stands_in == "DeepSeek-OCR"
    # report.names reads the glosses and the system each mode runs as from the derenderers' table
    assert names.MODE_GLOSS == {n: d.card.gloss for n, d in DERENDERERS.items() if d.card.gloss}
    assert names.SYSTEM_OF_MODE == {n: d.system for n, d in DERENDERERS.items() if d.system}
    assert names.SYSTEM_MODE == {d.system: d.system for d in DERENDERERS.values() if d.system}
    # the systems registry's derenderer entries take their labels from the cards
    reg = registry.load_registry(use_env=False)
    for name in ("skeleton", "tracer", "inksight"):
        assert reg[name]["label"] == DERENDERERS[name].card.label


def test_the_cards_tables_import_without_numpy():
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys, inkground_lib.evaluation.systems.registry, inkground_lib.components.ocr.factory; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'pandas', 'cv2', 'yaml')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_defaults_name_registered_components():
    """core.defaults holds parameter values (the notebooks repeat them as literals); each names a registered
    component, and what runs by default offline is free to run again."""
    from inkground_lib.core import defaults

    for name in defaults.COMPARED_DERENDERERS + (defaults.DERENDERER,):
        card = DERENDERERS[name].card
        assert card.free and "02" in card.sections, name
    assert all(n in ENGINES for n in defaults.VARIANT_OCR_ENGINES)
    reg = registry.load_registry(use_env=False)
    assert set(defaults.BOOK_SYSTEMS) <= set(reg)
    assert {reg[n]["adapter"] for n in defaults.PAPER_SCALE_SYSTEMS} <= registry.free_adapters()
