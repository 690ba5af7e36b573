from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UNIPEN = ROOT / "data" / "unipen_cursive" / "unipen_cursive_dev.json"  # shipped with the repository


@pytest.fixture
def unipen_path():
    assert UNIPEN.is_file(), f"the shipped UNIPEN subset is missing: {UNIPEN}"
    return UNIPEN


@pytest.fixture
def rerun_repo(tmp_path, monkeypatch):
    """A stand-in repository root (layout.ROOT) with tiny default datasets (:func:`make_tiny_dataset`) and the
    book's sections folder; papermill records what each section would execute with. Returns (root, [(section,
    parameters executed)])."""
    import nbformat
    import papermill

    from inkground_lib.core import layout
    from inkground_lib.publish import make_book, notebook_runner

    root = tmp_path / "repo"
    for d in (layout.SYNTH_DATASET, layout.RECORDED_DATASET):
        make_tiny_dataset(root / d)
    monkeypatch.setattr(layout, "ROOT", root)
    monkeypatch.setattr(layout, "SECTIONS_DIR", root / "book" / "sections")
    monkeypatch.setattr(notebook_runner, "SECTIONS_DIR", root / "book" / "sections")
    monkeypatch.setattr(make_book, "ROOT", root)  # the book's runs, as make book runs them
    monkeypatch.setattr(make_book, "DATA", root / "data")
    calls = []

    def execute(src, out, parameters=None, watch=None, **kw):
        calls.append((Path(src).stem[:2], dict(parameters or {})))
        nb = nbformat.read(src, as_version=4)
        watch.started(nb)
        watch.finished(nb)
        return nb
    monkeypatch.setattr(papermill, "execute_notebook", execute)
    return root, calls


def make_tiny_dataset(root: Path, pages: int = 2, words: int = 3, unique_texts: bool = False) -> Path:
    """A hand-made dataset: blank photos, straight-line inks. For data-model tests only. Word texts are
    w0, w1, ... on every page (``unique_texts``: p0w0, ..., so every word is a different request)."""
    from PIL import Image

    from inkground_lib.core.dataset import Page, Word, write_manifest
    from inkground_lib.core.ink import as_ink

    root.mkdir(parents=True, exist_ok=True)
    plist = []
    for i in range(pages):
        pid = f"p{i:03d}"
        (root / "pages").mkdir(exist_ok=True)
        img = root / "pages" / f"{pid}.jpg"
        Image.new("RGB", (200, 100), (240, 235, 225)).save(img)
        ws = []
        for j in range(words):
            x0 = 10 + 60 * j
            ink = as_ink([[[x0, 40, 0], [x0 + 40, 60, 10]], [[x0 + 20, 30, 20]]])
            ws.append(Word(f"{pid}-w{j}", f"p{i}w{j}" if unique_texts else f"w{j}", (x0, 30, x0 + 40, 60), ink, pid,
                           "test" if j == 0 else "train", ink))
        plist.append(Page(pid, img, f"writer{i}", 200, 100, ws))
    write_manifest(root, "tiny", "synth", "true ink", {"seed": 0}, plist)
    return root


class CountingOCR:
    """An OCR engine for counting reads: each image's "text" is its size and a checksum of its pixels (equal
    images read equal), and ``images`` counts the images it was given."""

    name = "counting"

    def __init__(self):
        self.images = 0

    def read(self, images):
        self.images += len(images)
        return [f"{im.shape[0]}x{im.shape[1]}:{int(im.sum()) % 997}" for im in images]


@pytest.fixture
def fake_papermill(monkeypatch):
    """papermill's execute_notebook replaced by the source notebook, reported to the runner as executed, with no
    kernel: the runner's fingerprint logic is what such a test checks. The list it returns records the
    parameters of each execution."""
    import nbformat
    import papermill

    calls = []

    def execute(src, out, parameters=None, watch=None, **kw):
        calls.append(dict(parameters or {}))
        nb = nbformat.read(src, as_version=4)
        watch.started(nb)
        watch.finished(nb)
        return nb
    monkeypatch.setattr(papermill, "execute_notebook", execute)
    return calls
