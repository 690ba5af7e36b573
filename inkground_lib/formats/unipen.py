"""The UNIPEN-derived JSON of recorded cursive words."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from inkground_lib.core.dataset import check_file_size
from inkground_lib.core.defaults import MAX_INK_FILE_BYTES, MAX_INK_FILE_ENV
from inkground_lib.core.ink import Ink
from inkground_lib.formats.xmlsafe import FormatError


@dataclass
class RecordedWord:
    """A recorded word: ``ink`` in the source's units (y down, t in ms), ``meta`` other source fields."""

    id: str
    writer: str
    text: str
    ink: Ink
    meta: dict = field(default_factory=dict)


def _unipen_strokes(strokes, where: str) -> Ink:
    if not isinstance(strokes, list) or not strokes:
        raise FormatError(f"{where}: expected a non-empty list of strokes")
    out = []
    for i, s in enumerate(strokes):
        if not isinstance(s, list) or not s:
            raise FormatError(f"{where}[{i}]: expected a non-empty list of [x, y, t] points")
        rows = []
        for j, p in enumerate(s):
            w = f"{where}[{i}][{j}]"
            if not isinstance(p, list) or len(p) not in (2, 3):
                raise FormatError(f"{w}: expected [x, y, t_ms], got {p!r:.60}")
            vals = []
            for k, v in enumerate(p):
                name = "xyt"[k]
                if k == 2 and v is None:
                    vals.append(math.nan)
                    continue
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise FormatError(f"{w}: {name} must be a number, got {v!r:.30}")
                if not math.isfinite(v):
                    raise FormatError(f"{w}: {name} is {v} (NaN or infinite)")
                vals.append(float(v))
            if len(vals) == 2:
                vals.append(math.nan)
            rows.append(vals)
        out.append(np.asarray(rows, dtype=np.float64))
    return Ink(tuple(out))


def read_unipen_json(path: str | os.PathLike, *, max_bytes: Optional[int] = None) -> list[RecordedWord]:
    """Read a UNIPEN-derived JSON file (format in the module doc) into RecordedWords, in file order.

    Required per sample: id, writer_id, text (strings) and strokes; the other fields (contributor, style,
    points_per_second, points_per_inch, ...) go to ``meta`` along with ``file`` and the file-level meta under
    ``source``. Raises FormatError naming the file, the sample and the field at fault (NaN coordinates too).
    A file over ``max_bytes`` bytes (default MAX_INK_FILE_BYTES, or $INKGROUND_MAX_INK_FILE_MB in MiB) is
    refused before it is read.
    """
    path = Path(path)
    check_file_size(path, max_bytes, MAX_INK_FILE_BYTES, MAX_INK_FILE_ENV, FormatError, "a UNIPEN JSON file")
    try:
        raw = path.read_text("utf-8")
    except OSError as e:
        raise FormatError(f"{path}: cannot be read ({e.strerror or e})") from None
    except UnicodeDecodeError as e:
        raise FormatError(f"{path}: not UTF-8 text ({e})") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        raise FormatError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise FormatError(f"{path}: expected a JSON object with 'meta' and 'samples'")
    meta = data.get("meta", {})
    if not isinstance(meta, dict):
        raise FormatError(f"{path}: field meta: expected an object")
    samples = data.get("samples")
    if not isinstance(samples, list):
        raise FormatError(f"{path}: field samples: " + ("missing" if samples is None else "expected a list"))
    out, seen = [], set()
    for i, s in enumerate(samples):
        where = f"{path}: samples[{i}]"
        if not isinstance(s, dict):
            raise FormatError(f"{where}: expected an object")
        sid = s.get("id")
        if isinstance(sid, str) and sid:
            where = f"{path}: sample {sid}"
        for key in ("id", "writer_id", "text", "strokes"):
            if key not in s:
                raise FormatError(f"{where}: field {key}: missing")
        for key in ("id", "writer_id", "text"):
            if not isinstance(s[key], str) or not s[key]:
                raise FormatError(f"{where}: field {key}: expected a non-empty string, got {s[key]!r:.40}")
        if sid in seen:
            raise FormatError(f"{where}: field id: duplicate sample id")
        seen.add(sid)
        ink = _unipen_strokes(s["strokes"], f"{where}: field strokes")
        extra = {k: v for k, v in s.items() if k not in ("id", "writer_id", "text", "strokes")}
        extra["file"] = str(path)
        out.append(RecordedWord(sid, s["writer_id"], s["text"], ink, extra))
    return out
