"""The image-token formulas of ``inkground_lib.evaluation.cost`` against values computed by hand from each
provider's documented rule (resize boundaries included), the text estimate, the registry entries that name a
formula, and section 03's table of systems (sampling and rpm from the registry)."""

from __future__ import annotations

import doctest

import pytest

from inkground_lib.evaluation import cost
from inkground_lib.evaluation.cost import (
    FORMULAS,
    anthropic_resized,
    anthropic_tokens,
    gemini_tokens,
    image_tokens,
    molmo_tiling,
    molmo_tokens,
    moonshot_tokens,
    qwen3_vl_resized,
    qwen3_vl_tokens,
    text_tokens,
)


def test_docstring_examples_pass_and_every_formula_has_one():
    result = doctest.testmod(cost, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False, report=True)
    assert result.failed == 0 and result.attempted >= 10
    for fn in (anthropic_resized, anthropic_tokens, gemini_tokens, qwen3_vl_resized, qwen3_vl_tokens,
               molmo_tiling, molmo_tokens, moonshot_tokens, text_tokens):
        doc = fn.__doc__ or ""
        assert ">>>" in doc and "2026-11-30" in doc, fn.__name__  # an example, and the date the source was read


# ---------------------------------------------------------------------------------------------- Anthropic

@pytest.mark.parametrize("size, tokens", [
    ((1, 1), 1), ((28, 28), 1), ((29, 28), 2),      # one 28x28 patch; one pixel more is a second patch
    ((1000, 1000), 36 * 36),                        # the page's table: 1296
    ((1920, 1080), 69 * 39),                        # 2691 on Opus 4.7 / 4.8 (table): fits 2576 px / 4784
    ((2576, 1456), 92 * 52),                        # exactly the limits: 2576 px, 4784 patches, unchanged
    ((2576, 1457), 92 * 52),                        # one row more: 92 x 53 = 4876 > 4784 -> 2575x1456
    ((3840, 2160), 92 * 52),                        # the table: downscaled to 2576x1449, 4784
    ((827, 1053), 30 * 38),                         # one page image of section 03's prompt
])
def test_anthropic_opus_4_8(size, tokens):
    assert anthropic_tokens(*size) == tokens == image_tokens("anthropic", *size)


def test_anthropic_resize_boundaries():
    assert anthropic_resized(2576, 1456) == (2576, 1456)
    assert anthropic_resized(2576, 1457) == (2575, 1456)
    assert anthropic_resized(3840, 2160) == (2576, 1449)
    assert anthropic_resized(2160, 3840) == (1449, 2576)  # portrait: the same rule on the long edge
    assert anthropic_resized(2577, 100) == (2576, 100)    # the edge limit alone: 92 x 4 patches


@pytest.mark.parametrize("size, tokens", [
    ((1092, 1092), 39 * 39),   # the table: 1521, fits 1568 px and 1568 patches
    ((1568, 1568), 39 * 39),   # 56 x 56 = 3136 patches > 1568 -> 1092x1092
    ((1920, 1080), 52 * 30),   # the table: 1560 (downscaled to 1456x819)
    ((2000, 1500), 46 * 34),   # the table: 1564 (downscaled to 1270x952)
    ((1075, 1520), 33 * 47),   # the page's A4 example: 924x1307 -> 1551
])
def test_anthropic_other_models(size, tokens):
    assert image_tokens("anthropic-1568", *size) == tokens
    assert anthropic_resized(1075, 1520, 1568, 1568) == (924, 1307)


# ------------------------------------------------------------------------------------------------ Gemini

def test_gemini_budget_per_level_whatever_the_size():
    for size in [(1, 1), (827, 1053), (8000, 8000)]:
        assert image_tokens("gemini", *size) == 1120  # images default to high
    assert image_tokens("gemini-low", 827, 1053) == 280
    assert image_tokens("gemini-medium", 827, 1053) == 560
    assert image_tokens("gemini-ultra-high", 827, 1053) == 2240
    with pytest.raises(ValueError, match="media_resolution"):
        gemini_tokens(10, 10, "huge")


# ----------------------------------------------------------------------------------------------- Qwen3-VL

@pytest.mark.parametrize("size, resized, tokens", [
    ((827, 1053), (832, 1056), 26 * 33),      # sides rounded to the nearest multiple of 32
    ((256, 256), (256, 256), 8 * 8),          # exactly min_pixels (65,536): unchanged
    ((255, 256), (256, 256), 8 * 8),          # 255 rounds to 256
    ((100, 100), (256, 256), 8 * 8),          # below min_pixels: grown to 65,536 pixels
    ((4096, 4096), (4096, 4096), 128 * 128),  # exactly max_pixels (16,777,216): 16,384 tokens
    ((4128, 4096), (4096, 4064), 128 * 127),  # over: beta = sqrt(4128 * 4096 / 16777216), sides floored
    ((6000, 3000), (5792, 2880), 181 * 90),
])
def test_qwen3_vl(size, resized, tokens):
    assert qwen3_vl_resized(*size) == resized
    assert qwen3_vl_tokens(*size) == tokens == image_tokens("qwen3-vl", *size)


def test_qwen3_vl_refuses_extreme_aspect_ratios():
    assert qwen3_vl_tokens(200, 1) == 114  # ratio 200 is allowed: grown to 3648x32
    with pytest.raises(ValueError, match="aspect"):
        qwen3_vl_tokens(201, 1)


# -------------------------------------------------------------------------------------------------- Molmo

GLOBAL = 12 * 13 + 2  # the 12x12 global view, a column token per row, start and end


def crops(rows, cols):
    h, w = rows * 16 + 8, cols * 16 + 8  # 16 patches per crop window, plus the 4 + 4 margin
    return ((h + 1) // 2) * ((w + 1) // 2 + 1) + 2


@pytest.mark.parametrize("size, tiling", [
    ((336, 336), (1, 1)),     # one 224-pixel window plus the 112-pixel margins fits exactly
    ((337, 337), (2, 2)),     # one pixel more: the least upscaling that covers it is 2x2
    ((113, 113), (1, 1)),
    ((50, 50), (1, 1)),       # below the margins: treated as the smallest image
    ((1024, 768), (3, 4)),    # must downscale: (3, 4) downscales least (min(672/656, 896/912))
    ((1686, 1066), (3, 4)),   # section 03's one-image prompt
    ((5000, 5000), (3, 3)),   # (3, 3), (3, 4), (4, 3) tie at 672/4888: fewer crops win
])
def test_molmo(size, tiling):
    assert molmo_tiling(*size) == tiling
    assert molmo_tokens(*size) == GLOBAL + crops(*tiling) == image_tokens("molmo", *size)


def test_molmo_hand_values():
    assert molmo_tokens(336, 336) == 158 + 158   # 12 rows of 12 + 1, start, end; twice
    assert molmo_tokens(337, 337) == 158 + 20 * 21 + 2
    assert molmo_tokens(1024, 768) == 158 + 28 * 37 + 2 == 1196


# --------------------------------------------------------------------------------------- Kimi (fallback)

def test_moonshot_fallback_tiles_of_14():
    assert moonshot_tokens(14, 14) == 1 and moonshot_tokens(15, 14) == 2
    assert moonshot_tokens(512, 512) == 37 * 37
    assert image_tokens("moonshot", 827, 1053) == 60 * 76


# ----------------------------------------------------------------------------------------- lookup, text

def test_unknown_formula_and_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="known: .*anthropic"):
        image_tokens("openai", 10, 10)
    for bad in [(0, 10), (10, -1), (1.5, 10), (True, 10), ("10", 10)]:
        with pytest.raises(ValueError, match="positive integer"):
            image_tokens("anthropic", *bad)


def test_text_tokens_is_a_quarter_of_the_characters_rounded_up():
    assert [text_tokens(t) for t in ["", None, "a", "abcd", "abcde", "x" * 400, "x" * 401]] == [0, 0, 1, 1, 2, 100, 101]


# -------------------------------------------------------------------------------- registry, section 03

PAPER_API = ["gemini-3.1-pro", "claude-opus-4.8", "kimi-k3", "qwen3-vl-32b", "molmo-7b-d"]


def test_packaged_api_entries_name_a_known_formula_a_sampling_and_prices_where_published():
    from inkground_lib.evaluation.systems.registry import load_registry

    reg = load_registry(use_env=False)
    for name in PAPER_API:
        assert reg[name]["image_token_formula"] in FORMULAS, name
        assert reg[name]["sampling"], name
    for name in ["gemini-3.1-pro", "claude-opus-4.8", "kimi-k3"]:  # commercial: published prices and limits
        assert reg[name]["price_input_per_mtok"] > 0 and reg[name]["price_output_per_mtok"] > 0
        assert reg[name]["rpm"] > 0
        assert reg[name]["temperature"] is None  # each provider's own sampling: none of them takes 0
    for name in ["qwen3-vl-32b", "molmo-7b-d"]:  # self-hosted: greedy, no price, not paced
        assert reg[name]["temperature"] == 0 and "price_input_per_mtok" not in reg[name] and "rpm" not in reg[name]


def test_systems_table_shows_sampling_and_rpm():
    from inkground_lib.core.registry import UnknownComponent
    from inkground_lib.evaluation.systems.registry import load_registry
    from inkground_lib.report.evaluation import systems_table

    reg = load_registry(use_env=False)
    t = systems_table(["skeleton", "gemini-3.1-pro", "qwen3-vl-32b"], reg)
    assert list(t.columns) == ["system", "label", "kind", "model", "sampling", "rpm"]
    rows = t.set_index("system")
    assert rows.loc["gemini-3.1-pro", "sampling"] == reg["gemini-3.1-pro"]["sampling"]
    assert rows.loc["gemini-3.1-pro", "rpm"] == reg["gemini-3.1-pro"]["rpm"]
    assert rows.loc["gemini-3.1-pro", "model"] == "gemini-3.1-pro-preview"
    assert rows.loc["qwen3-vl-32b", "rpm"] == "-" and "greedy" in rows.loc["qwen3-vl-32b", "sampling"]
    assert rows.loc["skeleton", "kind"] == "specialist" and rows.loc["skeleton", "sampling"] == "-"
    with pytest.raises(UnknownComponent, match="unknown system 'no-such-system'; known: gemini-3.1-pro"):
        systems_table(["no-such-system"], reg)
