"""The main environment's side of the InkSight worker: start it, wait until it is ready, send one request per
model call, stop it. The main environment has torch and no TensorFlow; the worker runs in InkSight's own
environment (requirements-inksight.txt), found through the environment variable ``INKSIGHT_PYTHON``.

Every failure is a :class:`InkSightWorkerError` (a :class:`DerenderError`) naming what failed and where:
``INKSIGHT_PYTHON`` unset or not an executable file, the worker's own fatal line (tensorflow missing in that
interpreter, no SavedModel in the folder, ...), the worker exiting before it was ready or while answering
(with its exit code and the end of its stderr), no answer within the time limit, a model error on one request.
"""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Optional

from inkground_lib.components.derenderers.base import DerenderError
from inkground_lib.components.derenderers.inksight_protocol import (
    ProtocolError,
    decode_worker_line,
    encode_request,
)

WORKER_MODULE = "inkground_lib.components.derenderers.inksight_worker"


ENV_PYTHON = "INKSIGHT_PYTHON"


ENV_MODEL_DIR = "INKSIGHT_MODEL_DIR"


SETUP_HELP = ("InkSight runs in its own environment: `make inksight-e2e` builds .venv-inksight from "
              "requirements-inksight.txt (TensorFlow 2.17.0, tensorflow-text); then set "
              "INKSIGHT_PYTHON=.venv-inksight/bin/python and INKSIGHT_MODEL_DIR=<the InkSight-Small-p "
              "SavedModel folder, e.g. `hf download Derendering/InkSight-Small-p --local-dir DIR`>")


class InkSightWorkerError(DerenderError):
    """The InkSight worker cannot be started or failed: the message names what and where."""


def resolve_inksight_python(python: Optional[str] = None) -> str:
    """The InkSight interpreter: ``python``, else ``$INKSIGHT_PYTHON``; a bare name is looked up on PATH.

    Raises :class:`InkSightWorkerError` when it is unset, missing or not executable."""
    p = python if python is not None else os.environ.get(ENV_PYTHON)
    if not p:
        raise InkSightWorkerError(f"InkSight: {ENV_PYTHON} is not set; it must name the python of InkSight's "
                                  f"environment. {SETUP_HELP}")
    where = f"{ENV_PYTHON}={p}" if python is None else f"InkSight python {p}"
    found = p if (os.sep in p or (os.altsep and os.altsep in p)) else shutil.which(p)
    if not found or not os.path.exists(found):
        raise InkSightWorkerError(f"{where}: no such file. {SETUP_HELP}")
    if os.path.isdir(found) or not os.access(found, os.X_OK):
        raise InkSightWorkerError(f"{where}: not an executable file. {SETUP_HELP}")
    return str(found)


def worker_pythonpath() -> str:
    """A fresh folder holding only a link to this inkground_lib package: put on the worker's PYTHONPATH, it
    makes ``-m inkground_lib...`` importable without exposing the main environment's site-packages (whose
    numpy 2 would shadow the one TensorFlow needs)."""
    pkg = Path(__file__).resolve().parents[2]
    d = Path(tempfile.mkdtemp(prefix="inksight-path-"))
    (d / pkg.name).symlink_to(pkg, target_is_directory=True)
    return str(d)


class InkSightWorker:
    """One worker process serving InkSight model calls, started at construction (raises
    :class:`InkSightWorkerError` if it does not become ready within ``start_timeout`` seconds).

    ``call(prompt, jpeg)`` returns the model's raw answer text; calls are serialised (one model, one
    process). After a crash every further call raises the crash error; :meth:`close` stops the process and
    the next call starts a new one. ``loader`` ("module:function", tests) replaces the TensorFlow loader."""

    def __init__(self, model_dir: str | os.PathLike, python: Optional[str] = None, loader: Optional[str] = None,
                 start_timeout: float = 900.0, call_timeout: float = 600.0):
        self.model_dir = str(model_dir)
        self.python = resolve_inksight_python(python)
        self.loader = loader
        self.start_timeout = float(start_timeout)
        self.call_timeout = float(call_timeout)
        self.ready: dict = {}
        self._lock = threading.Lock()
        self._proc: Optional[subprocess.Popen] = None
        self._crashed: Optional[str] = None
        self._next_id = 0
        self._start()

    # ------------------------------------------------------------------ process
    @property
    def command(self) -> list[str]:
        cmd = [self.python, "-u", "-m", WORKER_MODULE, "--model-dir", self.model_dir]
        return cmd + (["--loader", self.loader] if self.loader else [])

    @property
    def pid(self) -> Optional[int]:
        return None if self._proc is None else self._proc.pid

    def _where(self) -> str:
        return f"InkSight worker ({self.python}, model {self.model_dir})"

    def _start(self) -> None:
        self._path_dir = worker_pythonpath()
        env = dict(os.environ)
        env["PYTHONPATH"] = self._path_dir + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
        self._stderr = tempfile.TemporaryFile()
        self._lines: queue.Queue = queue.Queue()
        try:
            self._proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=self._stderr, env=env, start_new_session=True)
        except OSError as e:
            self._cleanup()
            raise InkSightWorkerError(f"{self._where()}: cannot be started: {e}. {SETUP_HELP}") from None
        proc = self._proc
        threading.Thread(target=self._read, args=(proc, self._lines), daemon=True,
                         name=f"inksight-worker-{proc.pid}").start()
        self._crashed = None
        t0 = time.monotonic()
        line = self._wait_line(self.start_timeout, "while loading the model")
        try:
            msg = decode_worker_line(line)
        except ProtocolError as e:
            self.close()
            raise InkSightWorkerError(f"{self._where()}: its first line is not a ready message: {e}") from None
        if "fatal" in msg:
            self.close()
            raise InkSightWorkerError(f"{self._where()}: {msg['fatal']}")
        if "ready" not in msg:
            self.close()
            raise InkSightWorkerError(f"{self._where()}: expected a ready line first, got {line[:200]!r}")
        self.ready = dict(msg, load_seconds=round(time.monotonic() - t0, 3))

    @staticmethod
    def _read(proc: subprocess.Popen, lines: queue.Queue) -> None:
        try:
            for raw in iter(proc.stdout.readline, b""):
                lines.put(raw)
        except (OSError, ValueError):
            pass
        lines.put(None)  # EOF: the worker closed its stdout (exited)

    def stderr_tail(self, n: int = 2000) -> str:
        """The last ``n`` characters the worker wrote to stderr (TensorFlow's log, a traceback)."""
        f = getattr(self, "_stderr", None)
        if f is None or f.closed:
            return ""
        try:  # pread: the file offset the worker writes at stays where it is
            fd = f.fileno()
            size = os.fstat(fd).st_size
            return os.pread(fd, n, max(0, size - n)).decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""

    def _died(self, when: str) -> str:
        code = None
        if self._proc is not None:
            try:
                code = self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                code = None
        tail = self.stderr_tail()
        return (f"{self._where()} exited (code {code}) {when}"
                + (f"; its stderr ends with:\n{tail}" if tail else "; it wrote nothing to stderr"))

    def _wait_line(self, timeout: float, when: str) -> bytes:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            tail = self.stderr_tail()
            self.close(timeout=0.5)  # it is stuck: no grace
            raise InkSightWorkerError(f"{self._where()}: no answer within {timeout:g} s {when}; the worker "
                                      "was stopped" + (f"; its stderr ends with:\n{tail}" if tail else "")) from None
        if line is None:
            msg = self._died(when)
            self._crashed = msg
            self._cleanup()
            raise InkSightWorkerError(msg)
        return line

    # ------------------------------------------------------------------ calls
    def call(self, prompt: str, jpeg: bytes) -> str:
        """One model call: the raw text InkSight answers for ``prompt`` on the JPEG ``jpeg``, within
        ``call_timeout`` seconds for the whole answer line (a worker that trickles it, or sends a line that is not
        the answer, is stopped and the call fails)."""
        with self._lock:
            if self._crashed:
                raise InkSightWorkerError(f"{self._crashed} (an earlier request; close() and retry to restart)")
            if self._proc is None:
                self._start()
            rid = self._next_id
            self._next_id += 1
            line = encode_request(rid, prompt, jpeg)
            when = f"while answering request {rid} (prompt {prompt!r})"
            try:
                self._proc.stdin.write(line.encode("utf-8"))
                self._proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                msg = self._died(when)
                self._crashed = msg
                self._cleanup()
                raise InkSightWorkerError(msg) from None
            raw = self._wait_line(self.call_timeout, when)
            try:
                msg = decode_worker_line(raw)
            except ProtocolError as e:
                self.close(timeout=0.5)  # a broken worker: no grace
                raise InkSightWorkerError(f"{self._where()}: bad answer to request {rid}: {e}") from None
            if msg.get("id") != rid:
                self.close(timeout=0.5)
                raise InkSightWorkerError(f"{self._where()}: answer for request {msg.get('id')!r} where "
                                          f"{rid} was expected (the worker was stopped)")
            if "error" in msg:
                raise InkSightWorkerError(f"{self._where()}: the model failed on request {rid} "
                                          f"(prompt {prompt!r}): {msg['error']}")
            return msg["text"]

    # ------------------------------------------------------------------ stop
    def _cleanup(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            for s in (proc.stdin, proc.stdout):
                try:
                    if s is not None:
                        s.close()
                except OSError:
                    pass
        d = getattr(self, "_path_dir", None)
        if d:
            shutil.rmtree(d, ignore_errors=True)
            self._path_dir = None

    def close(self, timeout: float = 10.0) -> None:
        """Stop the worker: close its stdin (it exits at EOF), kill it after ``timeout`` seconds. Idempotent;
        the next :meth:`call` starts a new worker."""
        proc = self._proc
        if proc is not None:
            try:
                if proc.stdin is not None:
                    proc.stdin.close()
            except OSError:
                pass
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        self._cleanup()
        self._crashed = None
        f = getattr(self, "_stderr", None)
        if f is not None and not f.closed:
            f.close()

    def __enter__(self) -> "InkSightWorker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close(timeout=2.0)
        except Exception:
            pass
