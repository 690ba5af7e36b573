"""The InkSight worker offline: its JSON-lines protocol, the real worker process run with this (TensorFlow-free)
python and a fake model - either a fake ``tensorflow`` package that stands in for a SavedModel (so the worker's
own loader and call convention run) or a ``--loader`` module - and the clear errors of every failure."""

import json
import sys
import time

import numpy as np
import pytest

from inkground_lib.components.derenderers.base import DerenderError
from inkground_lib.components.derenderers.inksight import (
    INKSIGHT_FALLBACK_PROMPT,
    INKSIGHT_FIRST_PROMPT,
    InkSightDerenderer,
    inksight_crop,
    prepare_inksight_crop,
)
from inkground_lib.components.derenderers.inksight_client import (
    InkSightWorker,
    InkSightWorkerError,
)
from inkground_lib.components.derenderers.inksight_protocol import (
    PROTOCOL_VERSION,
    ProtocolError,
    decode_request,
    decode_worker_line,
    encode_fatal,
    encode_ready,
    encode_request,
    encode_response,
)

INK = ("<ink_token_450><ink_token_20><ink_token_325><ink_token_60><ink_token_305>"
       "<ink_token_450><ink_token_5><ink_token_6><ink_token_120><ink_token_315>")
"""Strokes [(20, 100), (60, 80)] and [(120, 90)]; the pair (5, 6 - 225) is dropped by position."""


FAKE_TF = '''
"""A stand-in for tensorflow: tf.saved_model.load gives a serving_default signature that checks InkSight's call
convention (input_text (1,), image/encoded (1, 1) JPEG bytes) and answers like the tiny e2e model."""
import os
__version__ = os.environ.get("FAKE_TF_VERSION", "2.17.0")
string = "string"
INK = {ink!r}

class Tensor:
    def __init__(self, value, shape):
        self.value, self.shape = value, shape
    def numpy(self):
        return self.value

def constant(value, dtype=None):
    assert dtype == string, dtype
    return Tensor(list(value), (len(value),)) if isinstance(value, list) else Tensor(value, ())

def reshape(t, shape):
    assert t.shape == () and tuple(shape) == (1, 1), (t.shape, shape)
    return Tensor([[t.value]], (1, 1))

class Signature:
    structured_outputs = {{"output_0": None}}
    def __call__(self, **kw):
        assert sorted(kw) == ["image/encoded", "input_text"], sorted(kw)
        assert kw["input_text"].shape == (1,) and kw["image/encoded"].shape == (1, 1)
        prompt, jpeg = kw["input_text"].value[0], kw["image/encoded"].value[0][0]
        if not jpeg.startswith(b"\\xff\\xd8"):
            raise ValueError("Unknown image file format")
        text = INK if prompt == "Derender the ink." else "fake %d bytes" % len(jpeg)
        return {{"output_0": Tensor([[text.encode()]], (1, 1))}}

class Loaded:
    def __init__(self, path):
        if os.environ.get("FAKE_TF_LOAD_FAIL"):
            raise RuntimeError("Op type not registered 'SentencepieceOp'")
        self.signatures = {{"serving_default": Signature()}}

class saved_model:
    load = Loaded
'''.format(ink=INK)


FAKE_LOADER = '''
import json, os, sys, time

def load(model_dir):
    def call(prompt, jpeg):
        if prompt == "crash":
            os._exit(7)
        if prompt == "boom":
            raise RuntimeError("the fake model failed")
        if prompt == "print":
            print("stray output on stdout")
            os.write(1, b"and on fd 1\\n")
            return "after print"
        if prompt == "modules":
            return json.dumps(sorted(sys.modules))
        return "echo %s %d" % (prompt, len(jpeg))
    return call

def load_fails(model_dir):
    raise RuntimeError("no weights in " + model_dir)

def load_slow(model_dir):
    time.sleep(60)
'''


@pytest.fixture
def fakes(tmp_path, monkeypatch):
    """A SavedModel folder (a dummy saved_model.pb), a fake tensorflow and a loader module on PYTHONPATH."""
    model = tmp_path / "model"
    model.mkdir()
    (model / "saved_model.pb").write_bytes(b"not a real graph")
    lib = tmp_path / "lib"
    (lib / "tensorflow").mkdir(parents=True)
    (lib / "tensorflow" / "__init__.py").write_text(FAKE_TF)
    (lib / "fake_inksight.py").write_text(FAKE_LOADER)
    monkeypatch.setenv("PYTHONPATH", str(lib))
    monkeypatch.delenv("FAKE_TF_VERSION", raising=False)
    monkeypatch.delenv("FAKE_TF_LOAD_FAIL", raising=False)
    return model


# ----------------------------------------------------------------------------------------- protocol

def test_protocol_round_trip():
    line = encode_request(3, "Recognize and derender.", b"\xff\xd8\x00\n{")
    assert line.endswith("\n") and line.count("\n") == 1
    assert decode_request(line.encode()) == (3, "Recognize and derender.", b"\xff\xd8\x00\n{")
    assert decode_worker_line(encode_response(3, text="hi <ink_token_1>")) == {"id": 3, "text": "hi <ink_token_1>"}
    assert decode_worker_line(encode_response(None, error="E: x")) == {"id": None, "error": "E: x"}
    ready = decode_worker_line(encode_ready("2.17.0", "/m", 42))
    assert ready["ready"] is True and ready["protocol"] == PROTOCOL_VERSION and ready["tensorflow"] == "2.17.0"
    assert decode_worker_line(encode_fatal("no tensorflow"))["fatal"] == "no tensorflow"


@pytest.mark.parametrize("line, match", [
    ("not json", "request: not JSON"),
    ("[1, 2]", "expected a JSON object, got list"),
    ('{"prompt": "p", "image_jpeg_b64": "AA=="}', "field id must be an integer"),
    ('{"id": 1, "image_jpeg_b64": "AA=="}', "request 1: field prompt must be a string"),
    ('{"id": 1, "prompt": "p", "image_jpeg_b64": "***"}', "request 1: field image_jpeg_b64 is not base64"),
    ('{"id": 1, "prompt": "p"}', "field image_jpeg_b64 must be a non-empty base64 string"),
])
def test_protocol_bad_requests_name_the_field(line, match):
    with pytest.raises(ProtocolError, match=match):
        decode_request(line)


def test_protocol_bad_worker_lines_name_the_field():
    with pytest.raises(ProtocolError, match="exactly one of the string fields text and error"):
        decode_worker_line('{"id": 1, "text": "a", "error": "b"}')
    with pytest.raises(ProtocolError, match="protocol 99, expected 1"):
        decode_worker_line('{"ready": true, "protocol": 99}')
    with pytest.raises(ProtocolError, match="exactly one of text and error"):
        encode_response(1)


# ----------------------------------------------------------------------------------------- the worker

def test_worker_runs_the_savedmodel_call_as_the_notebook(fakes):
    with InkSightWorker(fakes, python=sys.executable) as w:
        assert w.ready["tensorflow"] == "2.17.0" and w.ready["pid"] == w.pid
        assert w.ready["model_dir"] == str(fakes)
        jpeg = prepare_inksight_crop(np.full((30, 90), 255, np.uint8)).jpeg
        assert w.call(INKSIGHT_FIRST_PROMPT, jpeg) == f"fake {len(jpeg)} bytes"  # the bytes arrived whole
        assert w.call(INKSIGHT_FALLBACK_PROMPT, jpeg) == INK
        with pytest.raises(InkSightWorkerError, match=r"model failed on request 2 \(prompt 'p'\): "
                                                      r"ValueError: Unknown image file format"):
            w.call("p", b"GIF89a")
        assert w.call("p", jpeg).startswith("fake")  # the worker goes on after a model error
        pid = w.pid
    assert w.pid is None and not _alive(pid)  # close() ended the process


def _alive(pid) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            return "zombie" not in f.read()
    except FileNotFoundError:
        return False


def test_worker_imports_no_torch_numpy_or_inkground_modules(fakes):
    with InkSightWorker(fakes, python=sys.executable, loader="fake_inksight:load") as w:
        mods = set(json.loads(w.call("modules", b"\xff\xd8")))
        assert w.ready["tensorflow"] is None
    assert not {"torch", "numpy", "cv2", "PIL", "scipy", "tensorflow"} & mods
    ours = {m for m in mods if m.startswith("inkground_lib")}
    assert ours == {"inkground_lib", "inkground_lib.components", "inkground_lib.components.derenderers",
                    "inkground_lib.components.derenderers.inksight_protocol"}


def test_stray_stdout_does_not_break_the_protocol(fakes):
    with InkSightWorker(fakes, python=sys.executable, loader="fake_inksight:load") as w:
        assert w.call("print", b"x") == "after print"
        assert w.call("again", b"xyz") == "echo again 3"
        assert "stray output on stdout" in w.stderr_tail() and "and on fd 1" in w.stderr_tail()


def test_worker_crash_names_code_request_and_is_sticky_until_close(fakes):
    w = InkSightWorker(fakes, python=sys.executable, loader="fake_inksight:load")
    try:
        assert w.call("a", b"x") == "echo a 1"
        with pytest.raises(InkSightWorkerError, match=r"InkSight worker \(.*python.*, model .*model\) exited "
                                                      r"\(code 7\) while answering request 1 \(prompt 'crash'\)"):
            w.call("crash", b"x")
        with pytest.raises(InkSightWorkerError, match="code 7.*an earlier request"):
            w.call("a", b"x")
        w.close()
        assert w.call("b", b"xy") == "echo b 2"  # a new worker
    finally:
        w.close()


def test_missing_tensorflow_in_the_worker_python_is_named(fakes, tmp_path, monkeypatch):
    block = tmp_path / "block"
    (block / "tensorflow").mkdir(parents=True)
    (block / "tensorflow" / "__init__.py").write_text("raise ImportError('No module named tensorflow')\n")
    monkeypatch.setenv("PYTHONPATH", str(block))
    with pytest.raises(InkSightWorkerError, match=rf"tensorflow cannot be imported by {sys.executable} .*"
                                                  r"requirements-inksight.txt"):
        InkSightWorker(fakes, python=sys.executable)


def test_tensorflow_version_and_load_failures_are_named(fakes, monkeypatch):
    monkeypatch.setenv("FAKE_TF_VERSION", "2.21.0")
    with pytest.raises(InkSightWorkerError, match=r"tensorflow 2.21.0 in .* is outside 2.15-2.17"):
        InkSightWorker(fakes, python=sys.executable)
    monkeypatch.setenv("FAKE_TF_VERSION", "2.17.0")
    monkeypatch.setenv("FAKE_TF_LOAD_FAIL", "1")
    with pytest.raises(InkSightWorkerError, match=rf"cannot load the SavedModel in {fakes}: RuntimeError: Op "
                                                  r"type not registered.*tensorflow_text is not installed"):
        InkSightWorker(fakes, python=sys.executable)
    with pytest.raises(InkSightWorkerError, match=r"loading the model from .* failed .*no weights in"):
        InkSightWorker(fakes, python=sys.executable, loader="fake_inksight:load_fails")


def test_model_folder_missing_is_named(fakes, tmp_path):
    with pytest.raises(InkSightWorkerError, match=rf"model folder {tmp_path / 'none'} does not exist"):
        InkSightWorker(tmp_path / "none", python=sys.executable)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InkSightWorkerError, match="holds no saved_model.pb"):
        InkSightWorker(empty, python=sys.executable)
    with pytest.raises(DerenderError, match=rf"no SavedModel at {empty} \(the folder holds no saved_model.pb\)"):
        InkSightDerenderer(empty, python=sys.executable)


def test_inksight_python_unset_missing_or_not_runnable(fakes, tmp_path, monkeypatch):
    monkeypatch.delenv("INKSIGHT_PYTHON", raising=False)
    with pytest.raises(InkSightWorkerError, match="INKSIGHT_PYTHON is not set"):
        InkSightWorker(fakes)
    monkeypatch.setenv("INKSIGHT_PYTHON", str(tmp_path / "nope" / "python"))
    with pytest.raises(InkSightWorkerError, match=rf"INKSIGHT_PYTHON={tmp_path / 'nope' / 'python'}: no such file"):
        InkSightWorker(fakes)
    plain = tmp_path / "python-not-executable"
    plain.write_text("")
    monkeypatch.setenv("INKSIGHT_PYTHON", str(plain))
    with pytest.raises(InkSightWorkerError, match="not an executable file"):
        InkSightWorker(fakes)
    broken = tmp_path / "broken-python"
    broken.write_text("#!/bin/sh\necho 'this is not python' >&2\nexit 3\n")
    broken.chmod(0o755)
    monkeypatch.setenv("INKSIGHT_PYTHON", str(broken))
    with pytest.raises(InkSightWorkerError, match=r"exited \(code 3\) while loading the model; its stderr ends "
                                                  r"with:\nthis is not python"):
        InkSightWorker(fakes)


def test_start_timeout_stops_the_worker(fakes):
    t0 = time.monotonic()
    with pytest.raises(InkSightWorkerError, match=r"no answer within 1 s while loading the model; the worker "
                                                  "was stopped"):
        InkSightWorker(fakes, python=sys.executable, loader="fake_inksight:load_slow", start_timeout=1)
    assert time.monotonic() - t0 < 30


TRICKLING_WORKER = """
import os, sys, time
sys.path.insert(0, {lib!r})
from inkground_lib.components.derenderers.inksight_protocol import encode_ready
sys.stdout.write(encode_ready("2.17.0", "model", os.getpid()))
sys.stdout.flush()
sys.stdin.readline()
end = time.monotonic() + 60  # bounded: the client must give up long before
while time.monotonic() < end:
    sys.stdout.write("{{" if {partial} else "\\n")  # a line that never ends, or endless blank lines
    sys.stdout.flush()
    time.sleep(0.1)
"""


@pytest.mark.parametrize("partial", [True, False], ids=["one-endless-line", "endless-blank-lines"])
def test_a_trickling_worker_fails_the_call_within_the_deadline(fakes, tmp_path, partial):
    """Issue 26, case 1: a worker that trickles its answer (a byte every 0.1 s) fails the call within the call's
    deadline (the registry's ``timeout`` for the inksight system), and the worker is stopped."""
    from pathlib import Path

    lib = str(Path(__file__).resolve().parents[1])
    script = tmp_path / "trickle.py"
    script.write_text(TRICKLING_WORKER.format(lib=lib, partial=partial))
    python = tmp_path / "python-trickle"
    python.write_text(f"#!/bin/sh\nexec {sys.executable} {script}\n")
    python.chmod(0o755)
    w = InkSightWorker(fakes, python=str(python), call_timeout=1.5)
    t0 = time.monotonic()
    with pytest.raises(InkSightWorkerError, match=r"no answer within 1.5 s while answering request 0|bad answer"):
        w.call("Recognize and derender.", b"jpeg")
    assert time.monotonic() - t0 < 10
    assert w.pid is None  # stopped
    w.close()


def test_the_inksight_systems_call_deadline_is_the_registry_timeout(fakes, monkeypatch):
    from inkground_lib.evaluation.systems.registry import make_system

    monkeypatch.setenv("INKSIGHT_MODEL_DIR", str(fakes))
    monkeypatch.setenv("INKSIGHT_PYTHON", sys.executable)
    reg = {"inksight-quick": {"adapter": "inksight", "model_dir_env": "INKSIGHT_MODEL_DIR", "timeout": 7}}
    system = make_system("inksight-quick", registry=reg)
    try:
        assert system.derenderer.worker.call_timeout == 7.0
    finally:
        system.close()


# ----------------------------------------------------------------------------------------- the system

def test_inksight_system_from_the_registry_runs_the_notebook_pipeline(fakes, monkeypatch):
    from inkground_lib.evaluation.systems.base import Item, SystemUnavailable
    from inkground_lib.evaluation.systems.registry import make_system

    monkeypatch.setenv("INKSIGHT_MODEL_DIR", str(fakes))
    monkeypatch.delenv("INKSIGHT_PYTHON", raising=False)
    with pytest.raises(SystemUnavailable, match="InkSight cannot be loaded: InkSight: INKSIGHT_PYTHON is not set"):
        make_system("inksight")
    monkeypatch.setenv("INKSIGHT_PYTHON", sys.executable)
    page = np.full((300, 400, 3), 255, np.uint8)
    page[130:140, 104:176] = 30
    box = (100.0, 120.0, 180.0, 150.0)
    item = Item(word_id="w1", text="tiny", box=box, page_id="p1", page_size=(400, 300), image=page)
    system = make_system("inksight")
    try:
        out = system.predict(item)
        crop, cb = inksight_crop(page, box)
        ink, ans = system.derenderer.derender_answer(crop, cb, "tiny")
    finally:
        system.close()
    # the first answer has no ink: the fallback prompt is sent; 2 model calls
    assert ans.prompts == (INKSIGHT_FIRST_PROMPT, INKSIGHT_FALLBACK_PROMPT)
    assert ans.raw[0] == f"fake {len(prepare_inksight_crop(crop).jpeg)} bytes"
    assert out.status == "ok" and out.attempts == 2
    # by hand: crop box (92, 117, 188, 153) = box +8 px (10% of 80) and +3 px (10% of 30) per side;
    # 96 x 36 px, ratio 224 / 96, 224 x 84 on the canvas, dy = 70; (x, y) -> (92 + x * 96 / 224,
    # 117 + (y - 70) * 96 / 224)
    assert cb == (92.0, 117.0, 188.0, 153.0)
    k = 96 / 224
    want = [[(92 + 20 * k, 117 + 30 * k), (92 + 60 * k, 117 + 10 * k)], [(92 + 120 * k, 117 + 20 * k)]]
    assert len(out.strokes) == 2
    for s, w in zip(out.strokes, want):
        np.testing.assert_allclose(s[:, :2], w, atol=1e-9)
    assert ink == out.strokes
    assert system.describe()["params"]["crop"].startswith("inksight-notebook")
