"""Datasets keyed by their code: the synthetic generator's and the recorded builder's code digests are in their
dataset meta, so a changed builder makes its pages again (and says why), and every section after them re-executes
(their fingerprints hold the dataset's hash, as make book computes it)."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from inkground_lib.core.dataset import dataset_hash
from inkground_lib.core.layout import ROOT
from inkground_lib.datasets import recorded
from inkground_lib.datasets.remade import remade_because
from inkground_lib.datasets.synth import generate as synth
from inkground_lib.publish import notebook_runner as nr

SMALL = dict(pages=2, seed=3, words_min=2, words_max=6, words_mean=4.0, width=420, height=540, size=1.6)
EDIT = ("inkground_lib/datasets/synth/photo.py", "p = cv2.scaleAdd(lum, 3.0 * e.noise, p)",
        "p = cv2.scaleAdd(lum, 3.5 * e.noise, p)")
"""One line of the generator (the sensor noise's strength): an edit that changes every page's pixels and none
of the dataset's parameters."""


def _closure(module: str) -> set[str]:
    names = set()
    for p in nr.import_closure([f"import {module}"]):
        rel = p.relative_to(ROOT).with_suffix("")
        names.add(".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts))
    return names


@pytest.mark.parametrize("module, listed", [("inkground_lib.datasets.synth.generate", synth.GENERATOR_CODE),
                                            ("inkground_lib.datasets.recorded", recorded.BUILDER_CODE)])
def test_the_code_lists_are_what_the_builders_may_run(module, listed):
    """A module the builder imports (directly or not) and its list leaves out would change pages unseen."""
    assert set(listed) == _closure(module), "update the list beside the builder to its import closure"


def test_remade_because_names_code_and_parameters():
    old = {"generator": "synth-1", "code_sha256": "1" * 64, "params": {"pages": 16, "seed": 0}}
    assert remade_because(old, dict(old)) == ""
    assert remade_because(old, {**old, "code_sha256": "2" * 64}) == (
        "its code changed (code sha256 111111111111 -> 222222222222)")
    assert remade_because(old, {**old, "params": {"pages": 120, "seed": 0}}) == "params.pages changed (16 -> 120)"
    assert remade_because(None, old) == "no finished dataset was there"


GENERATE = """
import json, sys
import inkground_lib
from inkground_lib.datasets.synth.generate import SynthParams, generate
assert inkground_lib.__file__.startswith(sys.argv[1]), inkground_lib.__file__
out = generate(sys.argv[2], SynthParams(**json.loads(sys.argv[3])), progress=False, workers=1)
print(json.dumps(json.loads((out / "manifest.json").read_text())["meta"]))
"""


def _generate_with(code_root, out):
    """Run the generator of the library copy at ``code_root`` on ``out``: (its meta, its standard error)."""
    env = {**os.environ, "PYTHONPATH": str(code_root)}
    proc = subprocess.run([sys.executable, "-c", GENERATE, str(code_root), str(out), json.dumps(SMALL)],
                          capture_output=True, text=True, env=env, cwd=code_root, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def _pages(ds):
    return {p.name: p.read_bytes() for p in sorted((ds / "pages").iterdir())}


@pytest.mark.slow  # three generator processes (numpy, OpenCV), each a few seconds
def test_an_edited_generator_remakes_its_pages_and_the_sections_after_them(tmp_path, fake_papermill):
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "inkground_lib", copy / "inkground_lib", ignore=shutil.ignore_patterns("__pycache__"))
    ds = tmp_path / "synth"
    meta0, _ = _generate_with(copy, ds)
    h0, pages0 = dataset_hash(ds), _pages(ds)
    assert meta0["code_sha256"] == synth.code_sha256()  # the copy is this code, digested the same way

    executed = fake_papermill  # what run_section would execute, without a kernel
    sections = tmp_path / "sections"

    def run_all():  # every section, with the dataset's hash among its inputs as make book gives it
        executed.clear()
        for s in nr.sections():
            nr.run_section(s.key, {}, out_dir=sections, inputs={"synth": dataset_hash(ds)})
        return len(executed)

    n = run_all()
    assert n == len(nr.sections()) >= 4
    meta, err = _generate_with(copy, ds)  # the same code: the folder is kept, and nothing re-executes
    assert meta == meta0 and dataset_hash(ds) == h0 and "made again" not in err
    assert run_all() == 0

    path, old, new = EDIT
    text = (copy / path).read_text()
    assert text.count(old) == 1, f"{path} no longer holds the line this test edits: {old!r}"
    (copy / path).write_text(text.replace(old, new))
    meta1, err = _generate_with(copy, ds)
    assert meta1["code_sha256"] != meta0["code_sha256"] and meta1["params"] == meta0["params"]
    assert f"synthetic dataset {ds}: made again: its code changed (code sha256 {meta0['code_sha256'][:12]} -> " \
           f"{meta1['code_sha256'][:12]})" in err
    pages1 = _pages(ds)
    assert pages1.keys() == pages0.keys() and all(pages1[k] != pages0[k] for k in pages0)  # no stale page kept
    assert dataset_hash(ds) != h0
    assert run_all() == len(nr.sections())  # every section after the pages re-executes


def test_recorded_meta_holds_its_code_digest_and_a_changed_digest_rebuilds(tmp_path, monkeypatch, capfd):
    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.core.layout import UNIPEN_SUBSET

    out = tmp_path / "rec"
    recorded.build_recorded(out, unipen=UNIPEN_SUBSET, pages=2, progress=False)
    meta = load_dataset(out).meta
    assert meta["code_sha256"] == recorded.code_sha256()
    h = dataset_hash(out)
    recorded.build_recorded(out, unipen=UNIPEN_SUBSET, pages=2, progress=False)
    assert dataset_hash(out) == h and "made again" not in capfd.readouterr().err
    monkeypatch.setattr(recorded, "code_sha256", lambda: "f" * 64)  # what an edit of any file it lists gives
    recorded.build_recorded(out, unipen=UNIPEN_SUBSET, pages=2, progress=False)
    assert load_dataset(out).meta["code_sha256"] == "f" * 64 and dataset_hash(out) != h
    assert "recorded dataset" in (err := capfd.readouterr().err) and "its code changed" in err
