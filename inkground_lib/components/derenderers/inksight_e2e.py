"""``make inksight-e2e``: the real InkSight worker, in InkSight's own environment, driven from the main one.

Run from the main environment (torch, no TensorFlow) as::

    python -m inkground_lib.components.derenderers.inksight_e2e --python .venv-inksight/bin/python

Steps (each prints one line; the first failure stops with exit code 1):

1. export the tiny SavedModel with InkSight's signature
   (:mod:`inkground_lib.components.derenderers.inksight_tiny_model`) in that environment;
2. JPEG parity: our Pillow JPEG of a prepared canvas is byte-identical to ``tf.io.encode_jpeg`` of it;
3. clear errors: no SavedModel folder; ``INKSIGHT_PYTHON`` unset; a python without TensorFlow (this one);
4. the derenderer the ``inksight`` system builds (its python from INKSIGHT_PYTHON) derenders one word of a
   synthetic page, cut as the system cuts it: the notebook crop, the first prompt (an ink-free answer), the
   fallback retry, positional token decoding and the mapping back to page pixels give the expected ink.
   (The system's own predict, registry to ink, is tested offline in tests/test_inksight_worker.py; this
   module is in the components layer and does not import the evaluation layer.)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from inkground_lib.components.derenderers.base import DerenderError
from inkground_lib.components.derenderers.inksight import (
    INKSIGHT_FALLBACK_PROMPT,
    INKSIGHT_FIRST_PROMPT,
    InkSightDerenderer,
    inksight_crop,
    prepare_inksight_crop,
)
from inkground_lib.components.derenderers.inksight_client import worker_pythonpath
from inkground_lib.components.derenderers.inksight_tiny_model import (
    TINY_FALLBACK_STROKES,
)

TINY_MODULE = "inkground_lib.components.derenderers.inksight_tiny_model"


class E2EFailure(RuntimeError):
    """A step of the end-to-end check failed (the message says which and why)."""


def _run_tf(python: str, *args: str, timeout: float = 600.0) -> dict:
    """Run the tiny-model module in InkSight's environment; its last stdout line, parsed as JSON."""
    path = worker_pythonpath()
    env = dict(os.environ, PYTHONPATH=path, TF_CPP_MIN_LOG_LEVEL="2")
    try:
        r = subprocess.run([python, "-m", TINY_MODULE, *args], capture_output=True, text=True, env=env,
                           timeout=timeout)
    finally:
        import shutil

        shutil.rmtree(path, ignore_errors=True)
    if r.returncode != 0 or not r.stdout.strip():
        raise E2EFailure(f"{python} -m {TINY_MODULE} {' '.join(args)} exited with code {r.returncode}: "
                         f"{r.stderr.strip()[-1500:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _set_env(name: str, value) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def synthetic_page() -> tuple[np.ndarray, tuple[float, float, float, float]]:
    """A 400 x 300 px white RGB page with a dark scribble inside the word box (100, 120, 180, 150)."""
    page = np.full((300, 400, 3), 255, np.uint8)
    yy, xx = np.mgrid[0:300, 0:400]
    band = (np.abs(yy - (135 + 10 * np.sin((xx - 100) / 6.0))) < 2) & (xx >= 104) & (xx < 176)
    page[band] = (20, 20, 60)
    return page, (100.0, 120.0, 180.0, 150.0)


def expected_page_ink(box, page) -> list[np.ndarray]:
    """The tiny model's fallback strokes mapped back to page pixels by the notebook's formula."""
    crop, cb = inksight_crop(page, box)
    prep = prepare_inksight_crop(crop)
    return [np.array([((x - prep.dx) / prep.ratio + cb[0], (y - prep.dy) / prep.ratio + cb[1]) for x, y in s])
            for s in TINY_FALLBACK_STROKES]


def run(python: str, work: Path) -> list[str]:
    """Run every step; returns the report lines (raises :class:`E2EFailure` at the first failed step)."""
    lines = []
    t0 = time.monotonic()
    model_dir = work / "tiny-savedmodel"
    _run_tf(python, "export", str(model_dir))
    lines.append(f"1. tiny SavedModel exported to {model_dir} ({time.monotonic() - t0:.1f} s)")

    page, box = synthetic_page()
    crop, _ = inksight_crop(page, box)
    prep = prepare_inksight_crop(crop)
    np.save(work / "canvas.npy", prep.image)
    (work / "canvas.jpg").write_bytes(prep.jpeg)
    par = _run_tf(python, "jpeg-parity", str(work / "canvas.npy"), str(work / "canvas.jpg"))
    if not par["equal"]:
        raise E2EFailure(f"2. JPEG parity: Pillow's bytes differ from tf.io.encode_jpeg's ({par})")
    lines.append(f"2. JPEG parity: {par['our_bytes']} bytes, identical to tf.io.encode_jpeg "
                 f"(tensorflow {par['tensorflow']})")

    for what, kwargs, env, want in [
        ("no SavedModel", {"model_path": work / "nowhere", "python": python}, {}, "no SavedModel at"),
        ("INKSIGHT_PYTHON unset", {"model_path": model_dir}, {"INKSIGHT_PYTHON": None}, "INKSIGHT_PYTHON is not set"),
        ("python without TensorFlow", {"model_path": model_dir, "python": sys.executable}, {},
         "tensorflow cannot be imported by"),
    ]:
        saved = {k: os.environ.get(k) for k in env}
        for k, v in env.items():
            _set_env(k, v)
        try:
            InkSightDerenderer(**kwargs).close()
        except DerenderError as e:
            if want not in str(e):
                raise E2EFailure(f"3. {what}: the error does not say {want!r}: {e}") from None
            lines.append(f"3. {what}: {str(e).splitlines()[0][:160]}")
        else:
            raise E2EFailure(f"3. {what}: no error was raised")
        finally:
            for k, v in saved.items():
                _set_env(k, v)

    os.environ["INKSIGHT_PYTHON"] = python
    t1 = time.monotonic()
    d = InkSightDerenderer(model_dir)  # as build_inksight builds it: the python from INKSIGHT_PYTHON
    try:
        ready = d.worker.ready
        if not str(ready.get("tensorflow") or "").startswith(("2.15", "2.16", "2.17")):
            raise E2EFailure(f"4. the worker runs tensorflow {ready.get('tensorflow')!r}, not 2.15-2.17")
        crop, crop_box = inksight_crop(page, box)  # what the inksight system's predict cuts
        ink, ans = d.derender_answer(np.ascontiguousarray(crop), crop_box, "tiny")
    finally:
        d.close()
    if ans.prompts != (INKSIGHT_FIRST_PROMPT, INKSIGHT_FALLBACK_PROMPT):
        raise E2EFailure(f"4. prompts sent {ans.prompts}, expected the first prompt then the fallback")
    if ans.raw[0] != f"tiny {len(prep.jpeg)} bytes":
        raise E2EFailure(f"4. first answer {ans.raw[0]!r}: the model did not get the {len(prep.jpeg)} JPEG bytes")
    want = expected_page_ink(box, page)
    got = [s[:, :2] for s in ink.strokes]
    if len(got) != len(want) or not all(a.shape == b.shape and np.allclose(a, b, atol=1e-9)
                                        for a, b in zip(got, want)):
        raise E2EFailure(f"4. the ink {got} is not the expected {want}")
    # by hand: crop (92, 117, 188, 153), ratio 224 / 96, dy = (224 - 84) // 2 = 70: (20, 100) on the canvas
    # is x = 20 * 96 / 224 + 92 = 100.5714..., y = (100 - 70) * 96 / 224 + 117 = 129.8571...
    if crop_box != (92.0, 117.0, 188.0, 153.0) or not np.allclose(got[0][0], (92 + 20 * 96 / 224,
                                                                             117 + 30 * 96 / 224)):
        raise E2EFailure(f"4. crop {crop_box} / first point {got[0][0]} differ from the hand-computed values")
    lines.append(f"4. InkSightDerenderer (what the inksight system builds): worker ready in "
                 f"{ready['load_seconds']:.1f} s (tensorflow {ready['tensorflow']}); crop {crop_box}; "
                 f"prompts {list(ans.prompts)}; "
                 f"{len(got)} strokes back on the page, first point ({got[0][0][0]:.3f}, {got[0][0][1]:.3f}); "
                 f"{time.monotonic() - t1:.1f} s")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="inksight_e2e", description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=os.environ.get("INKSIGHT_PYTHON"),
                    help="the python of InkSight's environment (default: $INKSIGHT_PYTHON)")
    args = ap.parse_args(argv)
    if not args.python:
        print("inksight_e2e: give --python or set INKSIGHT_PYTHON", file=sys.stderr)
        return 2
    python = os.path.abspath(args.python) if os.sep in args.python else args.python
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="inksight-e2e-") as d:
        try:
            for line in run(python, Path(d)):
                print(line, flush=True)
        except E2EFailure as e:
            print(f"inksight-e2e FAILED: {e}", file=sys.stderr)
            return 1
    print(f"inksight-e2e passed in {time.monotonic() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
