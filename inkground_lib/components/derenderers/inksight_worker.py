"""The InkSight worker: runs the InkSight SavedModel inside its own (TensorFlow) environment.

Run by :class:`inkground_lib.components.derenderers.inksight_client.InkSightWorker` as::

    $INKSIGHT_PYTHON -m inkground_lib.components.derenderers.inksight_worker --model-dir DIR [--loader MOD:FN]

It speaks :mod:`inkground_lib.components.derenderers.inksight_protocol` (JSON lines) on stdin/stdout: it
loads the model, writes a ready line (or a fatal line and exits with code 2), then answers one request per
line until stdin closes. It imports only the standard library, the protocol module and - in the default
loader - tensorflow and tensorflow_text: never torch, numpy-heavy inkground_lib modules or cv2.

The model call is the one of google-research/inksight colab.ipynb (checked 2026-11-30, word-level cell,
lines 1083-1091 of the notebook file): ``model.signatures['serving_default']`` called with ``input_text`` =
a (1,) string tensor holding the prompt and ``image/encoded`` = the JPEG bytes reshaped to (1, 1); the
answer is ``output_0[0][0]`` decoded as UTF-8. (The notebook loads the model with huggingface_hub's
``from_pretrained_keras``; its commented alternative, line 1029, is ``tf.saved_model.load`` - used here,
so tf-keras and huggingface_hub are not needed.)

``--loader MOD:FN`` replaces the TensorFlow loader (tests use it to run this process with a fake model):
``FN(model_dir)`` returns a callable ``(prompt: str, jpeg: bytes) -> str``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from pathlib import Path
from typing import Callable, Optional, TextIO

from inkground_lib.components.derenderers.inksight_protocol import (
    ProtocolError,
    decode_request,
    encode_fatal,
    encode_ready,
    encode_response,
)

TF_SUPPORTED = ((2, 15), (2, 17))
"""The TensorFlow releases InkSight's SavedModel is known to load with (first, last; major, minor)."""


ModelCall = Callable[[str, bytes], str]


class WorkerSetupError(RuntimeError):
    """The model cannot be loaded: the message names what is missing and where."""


def load_saved_model(model_dir: str) -> ModelCall:
    """InkSight's SavedModel in ``model_dir`` as a callable ``(prompt, jpeg bytes) -> raw output text``.

    Raises :class:`WorkerSetupError` naming this interpreter when tensorflow is missing or outside 2.15-2.17,
    naming ``model_dir`` when it holds no SavedModel or no serving_default signature, and pointing at
    tensorflow-text when the graph uses ops it registers."""
    path = Path(model_dir)
    if not path.is_dir():
        raise WorkerSetupError(f"model folder {path} does not exist (INKSIGHT_MODEL_DIR)")
    if not (path / "saved_model.pb").is_file():
        raise WorkerSetupError(f"model folder {path} holds no saved_model.pb (not a TensorFlow SavedModel)")
    try:
        import tensorflow as tf
    except ImportError as e:
        raise WorkerSetupError(f"tensorflow cannot be imported by {sys.executable} ({e}); install "
                               "requirements-inksight.txt into the environment INKSIGHT_PYTHON names "
                               "(`make inksight-e2e` builds one in .venv-inksight)") from None
    try:
        version = tuple(int(p) for p in tf.__version__.split(".")[:2])
    except ValueError:
        version = (0, 0)
    lo, hi = TF_SUPPORTED
    if not (lo <= version <= hi):
        raise WorkerSetupError(f"tensorflow {tf.__version__} in {sys.executable} is outside "
                               f"{lo[0]}.{lo[1]}-{hi[0]}.{hi[1]}, which InkSight's SavedModel needs "
                               "(requirements-inksight.txt pins 2.17.0)")
    text_ops = True
    try:
        import tensorflow_text  # noqa: F401  (registers the ops InkSight's graph uses, as the notebook imports it)
    except ImportError:
        text_ops = False
    try:
        fn = tf.saved_model.load(str(path)).signatures["serving_default"]
    except KeyError:
        raise WorkerSetupError(f"the SavedModel in {path} has no serving_default signature") from None
    except Exception as e:  # tf raises several types for a graph it cannot load
        hint = "" if text_ops else (" - tensorflow_text is not installed in "
                                    f"{sys.executable}; InkSight's graph needs its ops")
        raise WorkerSetupError(f"tensorflow {tf.__version__} cannot load the SavedModel in {path}: "
                               f"{type(e).__name__}: {str(e)[:500]}{hint}") from None
    outputs = getattr(fn, "structured_outputs", None)
    if isinstance(outputs, dict) and "output_0" not in outputs:
        raise WorkerSetupError(f"the SavedModel in {path}: serving_default has outputs {sorted(outputs)}, "
                               "expected output_0 as InkSight's")

    def call(prompt: str, jpeg: bytes) -> str:
        out = fn(**{"input_text": tf.constant([prompt], dtype=tf.string),
                    "image/encoded": tf.reshape(tf.constant(jpeg, dtype=tf.string), (1, 1))})
        val = out["output_0"].numpy()[0][0]
        return val.decode() if isinstance(val, bytes) else str(val)

    return call


def load_from_spec(spec: str, model_dir: str) -> ModelCall:
    """The model of a test loader ``"module:function"``: ``function(model_dir)``."""
    mod, sep, name = spec.partition(":")
    if not sep or not mod or not name:
        raise WorkerSetupError(f"--loader {spec!r}: expected module:function")
    try:
        fn = getattr(importlib.import_module(mod), name)
    except (ImportError, AttributeError) as e:
        raise WorkerSetupError(f"--loader {spec!r}: cannot be imported by {sys.executable} ({e})") from None
    return fn(model_dir)


def serve(model: ModelCall, stdin, out: TextIO) -> int:
    """Answer request lines from ``stdin`` (binary) on ``out`` until EOF; returns the exit code (0)."""
    for raw in iter(stdin.readline, b""):
        if not raw.strip():
            continue
        try:
            rid, prompt, jpeg = decode_request(raw)
        except ProtocolError as e:
            out.write(encode_response(None, error=f"ProtocolError: {e}"))
            out.flush()
            continue
        try:
            line = encode_response(rid, text=model(prompt, jpeg))
        except Exception as e:  # the model's failure on this request: reported, the worker goes on
            line = encode_response(rid, error=f"{type(e).__name__}: {str(e)[:2000]}")
        out.write(line)
        out.flush()
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="inksight_worker", description=__doc__.splitlines()[0])
    ap.add_argument("--model-dir", default=os.environ.get("INKSIGHT_MODEL_DIR"),
                    help="the SavedModel folder (default: $INKSIGHT_MODEL_DIR)")
    ap.add_argument("--loader", default=None, help="module:function replacing the TensorFlow loader (tests)")
    args = ap.parse_args(argv)
    # The protocol owns the real stdout; anything else printing to fd 1 (TensorFlow's C++ side, a library's
    # print) goes to stderr instead of corrupting the JSON lines.
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the caller; the worker ends when stdin closes
    try:
        if not args.model_dir:
            raise WorkerSetupError("no model folder: pass --model-dir or set INKSIGHT_MODEL_DIR")
        model = load_from_spec(args.loader, args.model_dir) if args.loader else load_saved_model(args.model_dir)
    except WorkerSetupError as e:
        out.write(encode_fatal(str(e)))
        out.flush()
        return 2
    except Exception as e:  # a loader's own failure: reported the same way
        out.write(encode_fatal(f"loading the model from {args.model_dir} failed in {sys.executable}: "
                               f"{type(e).__name__}: {str(e)[:1000]}"))
        out.flush()
        return 2
    tf = sys.modules.get("tensorflow")
    out.write(encode_ready(getattr(tf, "__version__", None), args.model_dir, os.getpid()))
    out.flush()
    return serve(model, sys.stdin.buffer, out)


if __name__ == "__main__":
    sys.exit(main())
