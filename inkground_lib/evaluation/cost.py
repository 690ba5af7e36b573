"""Estimated input tokens of a request: images by each provider's documented formula, text by a stated rule.

Estimates, never measurements: the provider's bill (the ``usage`` of each answer, kept in the cache) is the
truth. Each formula is a small pure function of the image size in pixels (width, height) as sent, cited
below with the page, the quoted rule and the date it was checked (2026-11-30). :func:`image_tokens` picks one
by the name a registry entry gives in ``image_token_formula``:

==================  ==========================================================================================
``anthropic``       Claude Opus 4.7 and later (Opus 4.8): 28x28-pixel patches after resizing to at most
                    2576 px on the long edge and 4784 patches
``anthropic-1568``  other Claude models: the same rule with 1568 px / 1568 patches
``gemini``          Gemini 3 at the default media resolution for images (high, at most 1120 tokens)
``gemini-low``,     Gemini 3 at media_resolution low / medium / ultra high (280 / 560 / 2240)
``gemini-medium``,
``gemini-ultra-high``
``qwen3-vl``        Qwen3-VL's processor: 32x32-pixel merged patches after its smart resize
                    (65,536 to 16,777,216 pixels)
``molmo``           Molmo-7B-D-0924's processor: a 12x12 global view plus up to 12 overlapping 336-pixel
                    crops pooled 2x2, with their column / start / end tokens
``moonshot``        Kimi (Moonshot): a stated fallback of one token per 14x14-pixel tile
                    (:func:`moonshot_tokens`; a third-party rule for Kimi K2.5)
``moonshot-flat``   Kimi (Moonshot): a flat 1,024 tokens per image, as Moonshot's help centre bills its vision
                    models (:func:`moonshot_flat_tokens`; not stated for Kimi K3)
==================  ==========================================================================================

:data:`FORMULA_BASIS` says for each what it rests on (shown by ``inkground predict --dry-run``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

CHECKED = "2026-11-30"  # the date every source cited below was read


def _check_size(width, height) -> tuple[int, int]:
    for name, v in (("width", width), ("height", height)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"image {name} must be a positive integer number of pixels, got {v!r}")
    return width, height


# --------------------------------------------------------------------------------------------- Anthropic

def _patches(width: int, height: int, patch: int = 28) -> int:
    return math.ceil(width / patch) * math.ceil(height / patch)


def anthropic_resized(width: int, height: int, max_edge: int = 2576, max_patches: int = 4784) -> tuple[int, int]:
    """The size Claude resizes an image to (before padding): the largest aspect-preserving size whose sides,
    rounded up to 28-pixel patches, are at most ``max_edge`` and whose patch count is at most ``max_patches``;
    an image that fits is unchanged.

    Source: https://platform.claude.com/docs/en/build-with-claude/vision, "How Claude resizes and pads
    images" (checked 2026-11-30, read from a stored copy of the page): "Claude finds the largest
    aspect-preserving size that satisfies both of the model's image limits: 1. Edge limit: neither side
    exceeds the maximum edge length (1568 px for most models, 2576 px for Claude Opus 4.7 and later models).
    2. Visual token limit: the image's token cost ⌈width / 28⌉ × ⌈height / 28⌉ does not exceed the model's
    visual token budget (1568 tokens for most models, 4784 for Claude Opus 4.7 and later models)." The page's
    own example: an A4 scan of 1075x1520 px is resized to 924x1307 on the 1568 / 1568 models.

    >>> anthropic_resized(1075, 1520, max_edge=1568, max_patches=1568)
    (924, 1307)
    >>> anthropic_resized(3840, 2160)
    (2576, 1449)
    >>> anthropic_resized(1000, 1000)
    (1000, 1000)
    """
    width, height = _check_size(width, height)

    def fits(w: int, h: int) -> bool:
        return (math.ceil(w / 28) * 28 <= max_edge and math.ceil(h / 28) * 28 <= max_edge
                and _patches(w, h) <= max_patches)

    if fits(width, height):
        return width, height
    if height > width:
        h, w = anthropic_resized(height, width, max_edge, max_patches)
        return w, h
    aspect = width / height
    lo, hi = 1, width  # the width lo always fits, hi never does: search the largest width that fits
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        if fits(mid, max(round(mid / aspect), 1)):
            lo = mid
        else:
            hi = mid
    return lo, max(round(lo / aspect), 1)


def anthropic_tokens(width: int, height: int, max_edge: int = 2576, max_patches: int = 4784) -> int:
    """Claude's visual tokens for an image of ``width`` x ``height`` pixels: ⌈w / 28⌉ × ⌈h / 28⌉ of the
    resized image (:func:`anthropic_resized`). The defaults are the limits of Claude Opus 4.7 and later
    (Opus 4.8); other models: ``max_edge=1568, max_patches=1568`` (formula ``anthropic-1568``).

    Source: https://platform.claude.com/docs/en/build-with-claude/vision, "Evaluate image size" (checked
    2026-11-30): "Claude views images in patches instead of pixels. Each patch is a 28×28 pixel block of the
    image, referred to as a visual token. An image therefore costs ⌈width / 28⌉ × ⌈height / 28⌉ visual
    tokens." and "For Claude Opus 4.8: 4784 tokens, and at most 2576 pixels on the long edge. [...] For
    other models: 1568 tokens, and at most 1568 pixels on the long edge." (Older versions of the page gave
    the approximation width * height / 750, which this rule replaces.) The page's tables: 1000x1000 px ->
    1296 tokens; 1920x1080 -> 2691 on Opus 4.7 / 4.8 and 1560 on other models; 3840x2160 -> 4784 on
    Opus 4.7 / 4.8.

    >>> anthropic_tokens(1000, 1000), anthropic_tokens(1920, 1080), anthropic_tokens(3840, 2160)
    (1296, 2691, 4784)
    >>> anthropic_tokens(1920, 1080, max_edge=1568, max_patches=1568)
    1560
    """
    return _patches(*anthropic_resized(width, height, max_edge, max_patches))


# ------------------------------------------------------------------------------------------------ Gemini

GEMINI_3_IMAGE_TOKENS = {"low": 280, "medium": 560, "high": 1120, "ultra_high": 2240}
"""Gemini 3: the most tokens one image is given at each ``media_resolution`` level (images)."""


def gemini_tokens(width: int, height: int, media_resolution: str = "high") -> int:
    """Gemini 3's tokens for one image: a fixed budget per ``media_resolution`` level, whatever the image size
    (the budget is a maximum; the count the API reports may be slightly lower). The OpenAI-compatible
    endpoint this project uses sends no media_resolution, so the default for images (high) applies.

    Sources (checked 2026-11-30):
    https://ai.google.dev/gemini-api/docs/media-resolution: "The media_resolution parameter controls how the
    Gemini API processes media inputs like images, videos, and PDF documents by determining the maximum
    number of tokens allocated for media inputs" - its "Token counts" table could not be read in the stored
    copy. The numbers come from the Gemini 3 developer guide as copied in a public repository (third-party
    copy): "Images | media_resolution_high | 1120 | Recommended for most image analysis tasks", and from
    third-party reports: "MEDIA_RESOLUTION_LOW (280 tokens), MEDIA_RESOLUTION_MEDIUM (560 tokens),
    MEDIA_RESOLUTION_HIGH (1120 tokens), MEDIA_RESOLUTION_ULTRA_HIGH (2240 tokens, per-part only)" and "The
    MEDIA_RESOLUTION_UNSPECIFIED option defaults to HIGH (1120 tokens) for images"
    (https://fastgptplus.com/en/posts/gemini-3-pro-media-resolution-parameter, third-party report).

    >>> gemini_tokens(827, 1053), gemini_tokens(10, 10), gemini_tokens(4000, 3000, "low")
    (1120, 1120, 280)
    """
    _check_size(width, height)
    if media_resolution not in GEMINI_3_IMAGE_TOKENS:
        raise ValueError(f"media_resolution must be one of {sorted(GEMINI_3_IMAGE_TOKENS)}, got {media_resolution!r}")
    return GEMINI_3_IMAGE_TOKENS[media_resolution]


# ----------------------------------------------------------------------------------------------- Qwen3-VL

QWEN3_VL_FACTOR = 32  # patch_size 16 x spatial merge 2
QWEN3_VL_MIN_PIXELS = 65536  # preprocessor_config.json size.shortest_edge (256 x 256)
QWEN3_VL_MAX_PIXELS = 16777216  # preprocessor_config.json size.longest_edge (4096 x 4096)


def qwen3_vl_resized(width: int, height: int, min_pixels: int = QWEN3_VL_MIN_PIXELS,
                     max_pixels: int = QWEN3_VL_MAX_PIXELS, factor: int = QWEN3_VL_FACTOR) -> tuple[int, int]:
    """The size (width, height) Qwen3-VL's processor resizes an image to: both sides multiples of ``factor``
    (rounded to the nearest), the pixel count scaled into [``min_pixels``, ``max_pixels``] keeping the
    aspect ratio (sides floored to the factor when shrinking, ceiled when growing); aspect ratios above 200
    are refused.

    Source: ``smart_resize`` in QwenLM/Qwen3-VL, qwen-vl-utils/src/qwen_vl_utils/vision_process.py (checked
    2026-11-30): "Rescales the image so that the following conditions are met: 1. Both dimensions (height and
    width) are divisible by 'factor'. 2. The total number of pixels is within the range ['min_pixels',
    'max_pixels']. 3. The aspect ratio of the image is maintained as closely as possible." The pixel range is
    that of the Hugging Face processor vLLM uses: ``"size": {"longest_edge": 16777216, "shortest_edge":
    65536}``, ``"patch_size": 16``, ``"merge_size": 2`` (Qwen3-VL preprocessor_config.json, read from
    third-party copies; the README of QwenLM/Qwen3-VL: "size['longest_edge'] originally corresponds to
    max_pixels [...] size['shortest_edge'] corresponds to min_pixels"). qwen-vl-utils alone defaults to a
    lower minimum (4 x 32 x 32 pixels): it matters for images under 256 x 256 only.

    >>> qwen3_vl_resized(827, 1053)
    (832, 1056)
    >>> qwen3_vl_resized(100, 100)
    (256, 256)
    """
    width, height = _check_size(width, height)
    if max(width, height) / min(width, height) > 200:
        raise ValueError(f"Qwen3-VL refuses aspect ratios above 200, got {width}x{height}")
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = math.floor(height / beta / factor) * factor
        w_bar = math.floor(width / beta / factor) * factor
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return w_bar, h_bar


def qwen3_vl_tokens(width: int, height: int, min_pixels: int = QWEN3_VL_MIN_PIXELS,
                    max_pixels: int = QWEN3_VL_MAX_PIXELS) -> int:
    """Qwen3-VL's image tokens: one per 32x32 pixels of the resized image (16-pixel patches merged 2x2),
    i.e. (resized width / 32) x (resized height / 32); the <|vision_start|> / <|vision_end|> pair around them
    (2 tokens) is not counted.

    Source: README of QwenLM/Qwen3-VL (checked 2026-11-30): "since the compression ratio is 32 for Qwen3-VL,
    we can set the number of visual tokens of a single image to 256-1280 (32× spatial compression)" with
    ``processor.image_processor.size = {"longest_edge": 1280*32*32, "shortest_edge": 256*32*32}``; resize by
    :func:`qwen3_vl_resized`.

    >>> qwen3_vl_tokens(827, 1053), qwen3_vl_tokens(100, 100), qwen3_vl_tokens(4096, 4096)
    (858, 64, 16384)
    """
    w, h = qwen3_vl_resized(width, height, min_pixels, max_pixels)
    return (w // QWEN3_VL_FACTOR) * (h // QWEN3_VL_FACTOR)


# -------------------------------------------------------------------------------------------------- Molmo

MOLMO_CROP = 336  # base_image_input_size
MOLMO_PATCH = 14  # image_patch_size
MOLMO_MARGINS = (4, 4)  # overlap_margins, in patches
MOLMO_MAX_CROPS = 12
MOLMO_TOKENS_W = MOLMO_TOKENS_H = 12  # image_token_length_w / _h: a crop pooled 2x2


def molmo_tiling(width: int, height: int, max_crops: int = MOLMO_MAX_CROPS) -> tuple[int, int]:
    """Molmo's crop grid (rows, columns) for an image: of the tilings with at most ``max_crops`` crops, the one
    needing the least upscaling to cover the image without the overlap margins (224-pixel windows), or if
    every tiling must downscale, the one downscaling least; ties go to fewer crops.

    Source: ``select_tiling`` and ``MolmoImageProcessor.image_to_patches_and_tokens`` in
    image_preprocessing_molmo.py of allenai/Molmo-7B-D-0924 (read from a public copy of the Hugging Face repo,
    checked 2026-11-30): "Decide how to tile the image, to account for the overlap margins we compute the
    tiling as if we had an image without the margins and were using a crop size without the margins", with
    the defaults ``"max_crops": 12, "overlap_margins": [4, 4], "base_image_input_size": [336, 336],
    "image_token_length_w": 12, "image_token_length_h": 12, "image_patch_size": 14`` (preprocessing_molmo.py).
    Images smaller than the margins (112 px) are treated as 1 px here (the processor itself does not expect
    them).

    >>> molmo_tiling(1024, 768), molmo_tiling(336, 336), molmo_tiling(337, 337)
    ((3, 4), (1, 1), (2, 2))
    """
    width, height = _check_size(width, height)
    margin_px = MOLMO_PATCH * sum(MOLMO_MARGINS)
    window = (MOLMO_CROP // MOLMO_PATCH - sum(MOLMO_MARGINS)) * MOLMO_PATCH  # 224
    h, w = max(height - margin_px, 1), max(width - margin_px, 1)
    tilings = sorted(((i, j) for i in range(1, max_crops + 1) for j in range(1, max_crops + 1)
                      if i * j <= max_crops), key=lambda t: (t[0] * t[1], t[0]))
    scales = [min(i * window / h, j * window / w) for i, j in tilings]
    if all(s < 1 for s in scales):
        best = max(range(len(tilings)), key=lambda k: (scales[k], -k))
    else:
        best = min(range(len(tilings)), key=lambda k: (scales[k] if scales[k] >= 1 else math.inf, k))
    return tilings[best]


def molmo_tokens(width: int, height: int, max_crops: int = MOLMO_MAX_CROPS) -> int:
    """Molmo-7B-D's image tokens: the global view (12 rows of 12 patch tokens + 1 column token, between a start
    and an end token: 158) plus the crops (``(H+1)//2`` rows of ``(W+1)//2`` patch tokens + 1 column token,
    between a start and an end token, where H, W = tiles x 16 + 8 patches per side; 16 = 24 patches per crop
    minus the 4 + 4 margin).

    Source: ``image_to_patches_and_tokens`` in image_preprocessing_molmo.py of allenai/Molmo-7B-D-0924 (as in
    :func:`molmo_tiling`, checked 2026-11-30): "per_row = np.full(((w+1)//2,), image_patch_token_id) [...] np.concatenate([per_row,
    [image_col_token_id]], 0) [...] joint = [[image_start_token_id], joint, [image_end_token_id]]" and "Finally
    do the same for the global image", whose tokens come first. vLLM serves Molmo with this processor
    (``--trust-remote-code``).

    >>> molmo_tokens(336, 336), molmo_tokens(337, 337), molmo_tokens(1024, 768)
    (316, 580, 1196)
    """
    rows, cols = molmo_tiling(width, height, max_crops)
    inner = MOLMO_CROP // MOLMO_PATCH - sum(MOLMO_MARGINS)  # 16 patches per crop window
    h = rows * inner + sum(MOLMO_MARGINS)
    w = cols * inner + sum(MOLMO_MARGINS)
    crops = ((h + 1) // 2) * ((w + 1) // 2 + 1) + 2
    global_view = MOLMO_TOKENS_H * (MOLMO_TOKENS_W + 1) + 2
    return global_view + crops


# ------------------------------------------------------------------------------------------ Kimi / Moonshot

def moonshot_tokens(width: int, height: int, tile: int = 14) -> int:
    """A stated fallback for Kimi (Moonshot), whose image-token rule is not published: one token per
    ``tile`` x ``tile``-pixel tile, ⌈w / 14⌉ × ⌈h / 14⌉, no resize. Use Moonshot's token-estimate endpoint
    (POST https://api.moonshot.ai/v1/tokenizers/estimate-token-count) for a real count.

    Sources (checked 2026-11-30): https://platform.moonshot.ai/docs/guide/use-kimi-vision-model: "Images and
    videos use dynamic token calculation. You can obtain the token consumption of a request containing images
    or videos through the estimate tokens API before starting the understanding process. Generally speaking,
    the higher the image resolution, the more tokens it consumes." - no formula. The 14 x 14 tile is a
    third-party report for Kimi K2.5 (https://docs.baseten.co/development/model-apis/vision: "Kimi K2.5 divides
    each image into 14×14 pixel tiles where each tile becomes one input token"); Kimi K3 is not covered by
    it. Its table (512x512 -> 1,296) rounds tiles down; this fallback rounds up, the larger estimate.

    >>> moonshot_tokens(14, 14), moonshot_tokens(15, 14), moonshot_tokens(512, 512)
    (1, 2, 1369)
    """
    width, height = _check_size(width, height)
    return math.ceil(width / tile) * math.ceil(height / tile)


MOONSHOT_FLAT_TOKENS = 1024


def moonshot_flat_tokens(width: int, height: int) -> int:
    """Kimi's image tokens as Moonshot's help centre states them for its vision models: a flat 1,024 per image.

    Source: https://www.kimi.com/help/kimi-api/api-model-selection (checked 2026-12-01): "Vision models
    support image input [...] Each image is billed at a flat rate of 1,024 tokens, regardless of dimensions
    or resolution". Not stated for Kimi K3, and Moonshot's vision guide says instead "Images and videos use
    dynamic token calculation" (platform.moonshot.ai/docs/guide/use-kimi-vision-model): an estimate either way.

    >>> moonshot_flat_tokens(14, 14), moonshot_flat_tokens(4000, 3000)
    (1024, 1024)
    """
    _check_size(width, height)
    return MOONSHOT_FLAT_TOKENS


# ------------------------------------------------------------------------------------------------- lookup

FORMULAS: dict[str, Callable[[int, int], int]] = {
    "anthropic": anthropic_tokens,
    "anthropic-1568": lambda w, h: anthropic_tokens(w, h, max_edge=1568, max_patches=1568),
    "gemini": gemini_tokens,
    "gemini-low": lambda w, h: gemini_tokens(w, h, "low"),
    "gemini-medium": lambda w, h: gemini_tokens(w, h, "medium"),
    "gemini-ultra-high": lambda w, h: gemini_tokens(w, h, "ultra_high"),
    "qwen3-vl": qwen3_vl_tokens,
    "molmo": molmo_tokens,
    "moonshot": moonshot_tokens,
    "moonshot-flat": moonshot_flat_tokens,
}
"""Formula name (the registry's ``image_token_formula``) -> function of (width, height) in pixels."""


FORMULA_BASIS: dict[str, str] = {
    "anthropic": "the provider's published rule (Claude vision page)",
    "anthropic-1568": "the provider's published rule (Claude vision page)",
    "gemini": "the provider's per-image budget at media resolution high, from a third-party report",
    "gemini-low": "the provider's per-image budget, from a third-party report",
    "gemini-medium": "the provider's per-image budget, from a third-party report",
    "gemini-ultra-high": "the provider's per-image budget, from a third-party report",
    "qwen3-vl": "the model's processor code (Qwen3-VL smart resize)",
    "molmo": "the model's processor code (Molmo-7B-D image preprocessing)",
    "moonshot": "a stated fallback (14 x 14 tiles, a third-party rule for Kimi K2.5): Moonshot publishes none",
    "moonshot-flat": "Moonshot's help centre (1,024 per image for its vision models; not stated for K3)",
}
"""Formula name -> what its numbers rest on: every image-token count is an estimate; this says how good a one."""


def image_tokens(formula: str, width: int, height: int) -> int:
    """Estimated input tokens of one image of ``width`` x ``height`` pixels under ``formula`` (a name in
    :data:`FORMULAS`, cited in its function).

    >>> image_tokens("anthropic", 827, 1053), image_tokens("qwen3-vl", 827, 1053), image_tokens("gemini", 827, 1053)
    (1140, 858, 1120)
    """
    if formula not in FORMULAS:
        raise ValueError(f"unknown image-token formula {formula!r}; known: {', '.join(sorted(FORMULAS))}")
    return int(FORMULAS[formula](*_check_size(width, height)))


def text_tokens(text) -> int:
    """An estimate of the tokens of ``text``: ⌈characters / 4⌉ (0 for no text). An estimate: tokenizers
    differ by model, and digits and punctuation (the answer format) take more tokens per character.

    Sources (checked 2026-11-30): https://ai.google.dev/gemini-api/docs/tokens: "For Gemini models, a token is
    equivalent to about 4 characters." https://platform.kimi.ai/docs/introduction: "Generally speaking, for a
    typical English text, 1 Token is roughly equivalent to 3-4 English characters." (so up to a third more
    tokens for Kimi).

    >>> text_tokens(""), text_tokens("abcd"), text_tokens("abcde"), text_tokens(None)
    (0, 1, 2, 0)
    """
    if not text:
        return 0
    return math.ceil(len(str(text)) / 4)
