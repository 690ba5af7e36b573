"""The InkSight worker's JSON-lines protocol: one JSON object per line, UTF-8, on the worker's stdin/stdout.

Standard library only: the worker (:mod:`inkground_lib.components.derenderers.inksight_worker`) imports
this module inside the InkSight environment, where neither torch nor the rest of inkground_lib is installed.

Lines the worker writes, in order:

* once, after loading the model: ``{"ready": true, "protocol": 1, "tensorflow": "2.17.0", "model_dir": ...,
  "pid": ...}`` (``tensorflow`` is null for a test loader) - or ``{"fatal": "<what is missing, where>"}``
  and exit code 2 when the model cannot be loaded;
* one response per request, in request order: ``{"id": N, "text": "<the model's raw output_0>"}`` or
  ``{"id": N, "error": "<exception type: message>"}`` (``id`` null for a line that is not a request).

A request (one model call; the caller does the retry with the fallback prompt):
``{"id": N, "prompt": "Recognize and derender.", "image_jpeg_b64": "<base64 of the 224 x 224 JPEG>"}``.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Optional

PROTOCOL_VERSION = 1


MAX_LINE_BYTES = 16 * 1024 * 1024
"""Longest line either side accepts (a 224 x 224 JPEG is < 100 kB; an answer < 10 kB)."""


class ProtocolError(ValueError):
    """A line that is not a valid message of the InkSight worker protocol (the message says which field)."""


def _loads(line: str | bytes, what: str) -> dict:
    if isinstance(line, bytes):
        if len(line) > MAX_LINE_BYTES:
            raise ProtocolError(f"{what}: line of {len(line)} bytes is longer than {MAX_LINE_BYTES}")
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ProtocolError(f"{what}: not UTF-8 ({e})") from None
    if len(line) > MAX_LINE_BYTES:
        raise ProtocolError(f"{what}: line of {len(line)} characters is longer than {MAX_LINE_BYTES}")
    try:
        msg = json.loads(line)
    except json.JSONDecodeError as e:
        raise ProtocolError(f"{what}: not JSON ({e.msg} at column {e.colno}): {line[:120]!r}") from None
    if not isinstance(msg, dict):
        raise ProtocolError(f"{what}: expected a JSON object, got {type(msg).__name__}")
    return msg


def _dumps(msg: dict) -> str:
    return json.dumps(msg, ensure_ascii=True, separators=(",", ":")) + "\n"


def _check_id(msg: dict, what: str, allow_null: bool = False) -> Optional[int]:
    rid = msg.get("id")
    if rid is None and allow_null:
        return None
    if not isinstance(rid, int) or isinstance(rid, bool) or rid < 0:
        raise ProtocolError(f"{what}: field id must be an integer >= 0, got {rid!r}")
    return rid


def encode_request(req_id: int, prompt: str, jpeg: bytes) -> str:
    """The request line (with its newline) asking for one model call on ``jpeg`` (the 224 x 224 canvas)."""
    if not isinstance(prompt, str):
        raise ProtocolError(f"request {req_id}: prompt must be a string, got {type(prompt).__name__}")
    if not isinstance(jpeg, (bytes, bytearray)) or not jpeg:
        raise ProtocolError(f"request {req_id}: image must be non-empty bytes")
    return _dumps({"id": int(req_id), "prompt": prompt,
                   "image_jpeg_b64": base64.b64encode(bytes(jpeg)).decode("ascii")})


def decode_request(line: str | bytes) -> tuple[int, str, bytes]:
    """``(id, prompt, jpeg bytes)`` of a request line; :class:`ProtocolError` names the bad field."""
    msg = _loads(line, "request")
    rid = _check_id(msg, "request")
    prompt = msg.get("prompt")
    if not isinstance(prompt, str):
        raise ProtocolError(f"request {rid}: field prompt must be a string, got {type(prompt).__name__}")
    b64 = msg.get("image_jpeg_b64")
    if not isinstance(b64, str) or not b64:
        raise ProtocolError(f"request {rid}: field image_jpeg_b64 must be a non-empty base64 string")
    try:
        jpeg = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError) as e:
        raise ProtocolError(f"request {rid}: field image_jpeg_b64 is not base64 ({e})") from None
    return rid, prompt, jpeg


def encode_response(req_id: Optional[int], text: Optional[str] = None, error: Optional[str] = None) -> str:
    """A response line: exactly one of ``text`` (the model's raw output) and ``error``."""
    if (text is None) == (error is None):
        raise ProtocolError(f"response {req_id}: give exactly one of text and error")
    msg: dict[str, Any] = {"id": req_id}
    if text is not None:
        msg["text"] = str(text)
    else:
        msg["error"] = str(error)
    return _dumps(msg)


def encode_ready(tensorflow_version: Optional[str], model_dir: str, pid: int) -> str:
    """The worker's first line once its model is loaded."""
    return _dumps({"ready": True, "protocol": PROTOCOL_VERSION, "tensorflow": tensorflow_version,
                   "model_dir": str(model_dir), "pid": int(pid)})


def encode_fatal(message: str) -> str:
    """The worker's only line when it cannot load its model (it then exits with code 2)."""
    return _dumps({"fatal": str(message)})


def decode_worker_line(line: str | bytes) -> dict:
    """A line the worker wrote, checked: a ready, fatal or response message (as a dict).

    Raises :class:`ProtocolError` naming the field that is wrong."""
    msg = _loads(line, "worker line")
    if "fatal" in msg:
        if not isinstance(msg["fatal"], str):
            raise ProtocolError("worker line: field fatal must be a string")
        return msg
    if "ready" in msg:
        if msg.get("ready") is not True:
            raise ProtocolError(f"worker line: field ready must be true, got {msg.get('ready')!r}")
        if msg.get("protocol") != PROTOCOL_VERSION:
            raise ProtocolError(f"worker line: protocol {msg.get('protocol')!r}, expected {PROTOCOL_VERSION} "
                                "(the worker and this library come from different versions)")
        return msg
    rid = _check_id(msg, "response", allow_null=True)
    has_text, has_error = isinstance(msg.get("text"), str), isinstance(msg.get("error"), str)
    if has_text == has_error:
        raise ProtocolError(f"response {rid}: expected exactly one of the string fields text and error, "
                            f"got keys {sorted(msg)}")
    return msg
