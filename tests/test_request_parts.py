"""Requests built once per page (inkground_lib.evaluation.prompt_parts) keep the request keys of paid caches:
a cache written by inkground at commit ca4736c (tests/fixtures/ca4736c_cache, made by its make_fixture.py) is
answered without a request; each page image is drawn, digested and encoded once; a key needs no encoding."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from conftest import make_tiny_dataset  # noqa: E402
from fakeserver import FakeServer  # noqa: E402

from inkground_lib.cli import main  # noqa: E402
from inkground_lib.core.dataset import load_dataset  # noqa: E402
from inkground_lib.evaluation import prompt, prompt_parts  # noqa: E402
from inkground_lib.evaluation.asking import run_predictions  # noqa: E402
from inkground_lib.evaluation.cache import cache_path, load_cache  # noqa: E402
from inkground_lib.evaluation.image_fit import png_bound  # noqa: E402
from inkground_lib.evaluation.items import choose_examples, make_items, target_dataset  # noqa: E402
from inkground_lib.evaluation.systems.providers import ImageLimits  # noqa: E402
from inkground_lib.evaluation.systems.registry import make_system  # noqa: E402

FIXTURE = HERE / "fixtures" / "ca4736c_cache"
PREDICTED = ("fx-openai", "fx-claude", "fx-one-image", "fx-kimi")  # as make_fixture.py
FITTED_LIMITS = {"max_side": 400, "max_image_b64_bytes": 120000}


@pytest.fixture
def fixture_run(tmp_path, monkeypatch):
    """The fixture's dataset and run folder copied, its registry in use, the fake server behind its variables."""
    shutil.copytree(FIXTURE / "dataset", tmp_path / "dataset")
    shutil.copytree(FIXTURE / "run", tmp_path / "run")
    monkeypatch.setenv("INKGROUND_SYSTEMS", str(FIXTURE / "systems.yaml"))
    with FakeServer() as srv:
        monkeypatch.setenv("FX_KEY", "fx-made-up-key")
        monkeypatch.setenv("FX_OPENAI_URL", srv.openai_url)
        monkeypatch.setenv("FX_ANTHROPIC_URL", srv.anthropic_url)
        yield srv, tmp_path / "dataset", tmp_path / "run"


def distinct_pages(root: Path) -> Path:
    """make_tiny_dataset's folder with a photo of its own on every page (its photos are identical files)."""
    from PIL import Image

    for n, photo in enumerate(sorted((root / "pages").iterdir())):
        Image.new("RGB", (200, 100), (240 - 20 * n, 235, 225)).save(photo)
    return root


def _cached(run: Path, name: str) -> dict:
    return load_cache(cache_path(run, name), system=name)


def test_a_cache_written_at_ca4736c_is_answered_without_a_request(fixture_run, capsys, monkeypatch):
    srv, ds, run = fixture_run
    encoded = []
    monkeypatch.setattr(prompt_parts, "png_bytes", lambda a: encoded.append(a.shape) or prompt.png_bytes(a))
    for name in PREDICTED:
        before = _cached(run, name)
        assert len(before) == 10
        assert main(["predict", "--system", name, "--dataset", str(ds), "--run", str(run), "--quiet"]) == 0
        out = capsys.readouterr().out
        assert "10 words; statuses: ok 10;" in out, out
        assert _cached(run, name) == before  # nothing appended
    assert srv.hits() == 0  # every word answered from the cache written at ca4736c
    assert encoded == []  # and no image was encoded to find that out
    # the images re-fitted to small limits at ca4736c: their keys carry what was sent; same keys now
    system = make_system("fx-fitted")
    system.image_limits = ImageLimits(**FITTED_LIMITS)
    items = make_items(target_dataset(load_dataset(ds)), with_prompt=True)
    records = run_predictions(system, items, cache_path(run, "fx-fitted"), progress=False)
    assert srv.hits() == 0 and [r["status"] for r in records] == ["ok"] * 10
    assert all(r["images_sent"][1]["scale"] < 1 for r in records)


def test_the_fixture_recipe_is_the_committed_one():
    """The fixture's inputs are what its recipe makes (so the recipe documents them): the dataset's words and
    registry entries match make_fixture.py's tables."""
    sys.path.insert(0, str(FIXTURE))
    import make_fixture

    manifest = json.loads((FIXTURE / "dataset" / "manifest.json").read_text())
    assert [p["id"] for p in manifest["pages"]] == list(make_fixture.PAGES)
    for p in manifest["pages"]:
        width, height, words = make_fixture.PAGES[p["id"]]
        assert (p["width"], p["height"]) == (width, height)
        assert [w["text"] for w in p["words"]] == [w[0] for w in words]
    assert (FIXTURE / "systems.yaml").read_text() == make_fixture.SYSTEMS_YAML
    assert tuple(make_fixture.PREDICTED) == PREDICTED and make_fixture.FITTED_LIMITS == FITTED_LIMITS


@pytest.mark.parametrize("variant", ["two-image", "one-image"])
def test_a_request_from_shared_parts_is_build_requests_byte_for_byte(tmp_path, variant):
    ds = target_dataset(load_dataset(FIXTURE / "dataset"))
    ex_a, ex_b = choose_examples(ds)
    builder = prompt_parts.PromptBuilder(grid=50)
    for page in ds.pages:
        example = ex_b if page.id == ex_a.page_id else ex_a
        for word in page.words:
            spec = builder.word(page, word, example).spec(variant)
            built = prompt.build_request(page.load_image(), (page.width, page.height), word.text, example,
                                         variant=variant, page_id=page.id, word_id=word.id)
            req = spec.build()
            assert req.system == built.system and req.parts == built.parts and req.meta == built.meta
            for params in ({}, {"temperature": 0, "max_tokens": 100}):
                assert prompt.hash_parts(spec.system, spec.hashed_parts(), "m", params) == \
                    prompt.request_hash(built, "m", params)


def test_each_page_image_is_drawn_digested_and_encoded_once_per_run(tmp_path, monkeypatch):
    """A predict run of 3 pages x 3 words (two-image): 3 page grids and 2 example grids drawn, each encoded once
    (before issue 32: 2 grids drawn and encoded per request build, 3-4 builds per word)."""
    ds = distinct_pages(make_tiny_dataset(tmp_path / "ds", pages=3, words=3, unique_texts=True))
    reg = tmp_path / "systems.yaml"
    reg.write_text("vl: {adapter: openai, model: fake-vl, api_key_env: T_KEY, base_url_env: T_URL, concurrency: 3}\n")
    monkeypatch.setenv("INKGROUND_SYSTEMS", str(reg))
    drawn, encoded = [], []
    monkeypatch.setattr(prompt_parts, "compose_grid", lambda *a, **k: drawn.append(1) or prompt.compose_grid(*a, **k))
    monkeypatch.setattr(prompt_parts, "png_bytes", lambda a: encoded.append(1) or prompt.png_bytes(a))
    with FakeServer() as srv:
        monkeypatch.setenv("T_KEY", "k")
        monkeypatch.setenv("T_URL", srv.openai_url)
        assert main(["predict", "--system", "vl", "--dataset", str(ds), "--run", str(tmp_path / "run"), "--quiet"]) == 0
        assert srv.hits() == 9
    assert len(drawn) == 5 and len(encoded) == 5


def test_page_images_are_kept_for_a_few_pages_only(tmp_path):
    """Memory: a builder keeps at most PAGE_IMAGES page images (a run of thousands of pages holds a few)."""
    ds = target_dataset(load_dataset(distinct_pages(make_tiny_dataset(tmp_path / "ds", pages=6, words=3,
                                                                       unique_texts=True))))
    ex_a, _ = choose_examples(ds)
    builder = prompt_parts.PromptBuilder(grid=20, page_images=2)
    for page in ds.pages:
        for word in page.words:
            builder.word(page, word, ex_a).spec("two-image")
    assert len(builder._pages) == 2


def test_pages_are_told_apart_by_content_not_by_id(tmp_path):
    """Two pages whose photos hold the same pixels share their image; a photo changed under the same page id
    (same path) is drawn again."""
    from PIL import Image

    ds = target_dataset(load_dataset(make_tiny_dataset(tmp_path / "ds", pages=3, words=3, unique_texts=True)))
    ex_a, _ = choose_examples(ds)
    builder = prompt_parts.PromptBuilder(grid=20)
    p1, p2 = ds.pages[1], ds.pages[2]
    a = builder.word(p1, p1.words[0], ex_a).spec("two-image").images()[1]
    b = builder.word(p2, p2.words[0], ex_a).spec("two-image").images()[1]
    assert a is b  # the tiny dataset's photos are identical files
    Image.new("RGB", (200, 100), (10, 200, 10)).save(p2.image)
    c = builder.word(p2, p2.words[0], ex_a).spec("two-image").images()[1]
    assert c is not a and c.digest != a.digest


def test_png_bound_holds_for_incompressible_images():
    """fits_as_built rests on png_bound being an upper bound on png_bytes, whatever the pixels."""
    rng = np.random.default_rng(7)
    for w, h in [(1, 1), (3, 5), (64, 9), (301, 217), (827, 1053)]:
        for pixels in (rng.integers(0, 256, (h, w, 3), dtype=np.uint8), np.zeros((h, w, 3), np.uint8)):
            assert len(prompt.png_bytes(pixels)) <= png_bound(w, h)


def test_douglas_peucker_keeps_the_points_scikit_image_keeps():
    """prompt.simplify_cells replaces skimage.measure.approximate_polygon (the example's answer is hashed into every
    request key): the same points on random strokes, ties and repeated points included."""
    from skimage.measure import approximate_polygon

    rng = np.random.default_rng(3)
    for trial in range(240):
        k = int(rng.integers(1, 60))
        pts = [rng.integers(0, 12, (k, 2)).astype(float), np.cumsum(rng.normal(0, 1, (k, 2)), axis=0),
               rng.uniform(0, 50, (k, 2)).round(1)][trial % 3]
        tol = float(rng.choice([0.0, 0.1, 0.35, 1.0, 3.0]))
        np.testing.assert_array_equal(prompt.simplify_cells(pts, tol), approximate_polygon(pts.copy(), tol))
