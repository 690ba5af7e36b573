"""Tests of the Style classifier's precision (float32 or bfloat16) and memory layout: recorded in the model's
JSON and cache key, bfloat16 refused on a CPU without native bfloat16, a model of another precision not
reused; and the training's input pipeline."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch
from inks import hershey_ink

from inkground_lib.components import style
from inkground_lib.components.style import precision
from inkground_lib.components.style.inputs import random_shifts
from inkground_lib.components.style.storage import _meta_matches
from inkground_lib.core.render import RenderSpec

# a classifier of 8 words by 2 writers in 1 epoch: a second or two
TINY = style.StyleParams(height=32, width=64, epochs=1, batch_size=4, augment=True, shift=2, seed=3,
                         render=RenderSpec(height=32, pen_width=2.0, padding=3), start="random", fit="all")
ITEMS = [(hershey_ink(w, slant, 1.0), name) for name, slant in (("lean", 0.6), ("back", -0.6))
         for w in ("the", "and", "you", "that")]
CPUINFO_WITH = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni\n\nprocessor\t: 1\n"
CPUINFO_WITHOUT = "processor\t: 0\nflags\t\t: fpu sse2 avx2 fma\n"


@pytest.fixture
def no_bf16(monkeypatch):
    """This process reads a CPU without native bfloat16 (GitHub's hosted x86 runners: AVX2, no AVX-512)."""
    monkeypatch.setattr(precision, "cpu_flags", lambda path=precision.CPUINFO: frozenset({"avx2", "fma"}))


@pytest.fixture
def with_bf16(monkeypatch):
    """This process reads a CPU with AVX-512 BF16 (on one without, torch emulates it: slow, but correct)."""
    monkeypatch.setattr(precision, "cpu_flags", lambda path=precision.CPUINFO: frozenset({"avx512_bf16"}))


def test_the_flag_reader_reads_cpuinfo(tmp_path):
    p = tmp_path / "cpuinfo"
    p.write_text(CPUINFO_WITH)
    assert "avx512_bf16" in precision.cpu_flags(p) and "avx2" in precision.cpu_flags(p)
    p.write_text(CPUINFO_WITHOUT)
    assert precision.cpu_flags(p) == {"fpu", "sse2", "avx2", "fma"}
    assert precision.cpu_flags(tmp_path / "absent") == frozenset()  # another OS: no native bf16 assumed


def test_the_default_is_fp32_on_every_machine(no_bf16, with_bf16):
    """The CPU never chooses: the default is the same whatever the flags say."""
    assert style.StyleParams().precision == "fp32" and style.StyleParams().channels_last is True
    assert style.StyleParams.paper().precision == "fp32"
    with pytest.raises(style.StyleError, match=r"precision must be one of \['fp32', 'bf16'\], got 'fp16'"):
        style.StyleParams(precision="fp16")
    with pytest.raises(style.StyleError, match="channels_last must be True or False"):
        style.StyleParams(channels_last="yes")


def test_precision_is_recorded_in_the_model_json_and_its_cache_key(tmp_path):
    model = style.train_style(ITEMS, TINY, tmp_path, progress=False)
    meta = json.loads((tmp_path / style.META_FILE).read_text())
    assert meta["params"]["precision"] == "fp32" and meta["params"]["channels_last"] is True
    assert style.load_style(tmp_path).params.precision == "fp32"
    h = style.items_hash([k for k, _ in ITEMS], [w for _, w in ITEMS])
    assert model.input_hash == h and _meta_matches(meta, TINY, h)
    assert not _meta_matches(meta, replace(TINY, precision="bf16"), h)
    assert not _meta_matches(meta, replace(TINY, channels_last=False), h)
    # a record from before the precision was recorded does not say how it was made: it is not reused
    old = dict(meta, params={k: v for k, v in meta["params"].items() if k not in ("precision", "channels_last")})
    assert not _meta_matches(old, TINY, h)


def test_bf16_is_refused_on_a_cpu_without_native_bf16(no_bf16, tmp_path):
    bf16 = replace(TINY, precision="bf16")
    with pytest.raises(style.StyleError, match=r"precision 'bf16' needs a CPU with native bfloat16 .*avx512_bf16"):
        style.train_style(ITEMS, bf16, tmp_path, progress=False)
    with pytest.raises(style.StyleError, match="precision 'bf16' needs"):
        style.train_epochs(ITEMS, bf16, epochs=1)
    assert not list(tmp_path.iterdir())  # refused before anything was written
    style.check_precision("fp32")  # float32 runs anywhere


def test_a_bf16_model_is_refused_at_inference_on_a_cpu_without_bf16(with_bf16, monkeypatch, tmp_path):
    model = style.train_style(ITEMS, replace(TINY, precision="bf16"), tmp_path, progress=False)
    monkeypatch.setattr(precision, "cpu_flags", lambda path=precision.CPUINFO: frozenset({"avx2"}))
    with pytest.raises(style.StyleError, match="Style classifier: precision 'bf16' needs"):
        style.load_style(tmp_path).logits([ITEMS[0][0]])
    with pytest.raises(style.StyleError, match="precision 'bf16' needs"):
        model.proba([ITEMS[0][0]])


def test_a_model_trained_with_another_precision_is_not_reused(with_bf16, tmp_path):
    inks = [k for k, _ in ITEMS]
    fp32 = style.train_style(ITEMS, TINY, tmp_path, progress=False)
    assert style.train_style(ITEMS, TINY, tmp_path, progress=False).trained is False  # the same: reused
    bf16 = style.train_style(ITEMS, replace(TINY, precision="bf16"), tmp_path, progress=False)
    assert bf16.trained and json.loads((tmp_path / style.META_FILE).read_text())["params"]["precision"] == "bf16"
    assert style.saved_style(tmp_path, ITEMS, TINY) is None
    assert style.saved_style(tmp_path, ITEMS, replace(TINY, precision="bf16")) is not None
    a, b = fp32.model.state_dict(), bf16.model.state_dict()
    assert not torch.equal(a["classifier.1.weight"], b["classifier.1.weight"])  # another arithmetic
    p = bf16.proba(inks)
    assert p.dtype == np.float64 and np.allclose(p.sum(axis=1), 1.0)
    # its scores keep float32's resolution (the last layer runs in float32), not bfloat16's 8 bits
    z = torch.from_numpy(bf16.logits(inks)).float()
    assert not torch.equal(z.to(torch.bfloat16).float(), z)
    assert np.array_equal(style.load_style(tmp_path).logits(inks), bf16.logits(inks))
    again = style.train_style(ITEMS, TINY, tmp_path, progress=False)  # back to fp32: trained again
    assert again.trained and all(torch.equal(a[k], again.model.state_dict()[k]) for k in a)


def test_the_contiguous_layout_is_another_recipe_and_round_trips(tmp_path):
    cl = replace(TINY, channels_last=False)
    model = style.train_style(ITEMS, cl, tmp_path, progress=False)
    assert model.trained and style.saved_style(tmp_path, ITEMS, TINY) is None
    loaded = style.train_style(ITEMS, cl, tmp_path, progress=False)
    inks = [k for k, _ in ITEMS]
    assert loaded.trained is False and np.array_equal(loaded.logits(inks), model.logits(inks))
    assert style.evaluate_classifier(loaded, ITEMS).n == len(ITEMS)


def test_random_shifts_are_the_per_image_windows():
    """The batch's shifts are made in one indexing; each image is the window of its padded self at the
    offsets drawn, as a loop over the images makes it, and the generator ends in the same state."""
    def per_image(x, shift, gen):
        n, _, H, W = x.shape
        padded = torch.nn.functional.pad(x, (shift, shift, shift, shift))
        off = torch.randint(0, 2 * shift + 1, (n, 2), generator=gen)
        return torch.stack([padded[i, :, int(dy):int(dy) + H, int(dx):int(dx) + W] for i, (dy, dx) in enumerate(off)])

    for shape, shift in [((32, 1, 48, 192), 4), ((5, 3, 10, 13), 2), ((1, 1, 2, 2), 1), ((3, 1, 40, 40), 8)]:
        x = torch.rand(shape, generator=torch.Generator().manual_seed(1))
        g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
        out = random_shifts(x, shift, g2)
        assert torch.equal(out, per_image(x, shift, g1)) and out.is_contiguous()
        assert torch.equal(g1.get_state(), g2.get_state())
        assert not torch.equal(out, x) or shape[0] == 1
    x = torch.rand((2, 1, 8, 8))
    assert random_shifts(x, 0, torch.Generator()) is x
