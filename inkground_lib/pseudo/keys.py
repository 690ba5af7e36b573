"""What identifies a cached stage result: component configs and source hashes, the append-only logs."""

from __future__ import annotations

import dataclasses
import inspect
import os
from pathlib import Path
from typing import Iterator

from inkground_lib.core.dataset import Page
from inkground_lib.core.defaults import CROP_GROW
from inkground_lib.core.files import JSONLError, iter_jsonl, sha256_file

OCR_SCHEMA = "inkground-pseudo-ocr"




class PseudoError(ValueError):
    """Bad input to the pseudo-label pipeline, or a run folder that cannot be used."""




def source_hash(obj) -> str:
    """sha256 of the source file defining ``obj``'s class (so a code change invalidates cached results)."""
    try:
        path = inspect.getsourcefile(type(obj))
    except TypeError:
        path = None
    return sha256_file(path)[:16] if path and os.path.isfile(path) else "unknown"


def simple_attrs(obj) -> dict:
    out = {}
    for k, v in sorted(vars(obj).items()):
        if k.startswith("_") or k in ("last_text", "progress"):
            continue
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            out[k] = dataclasses.asdict(v)
        elif isinstance(v, (str, int, float, bool, type(None))):
            out[k] = v
    return out


def derenderer_config(der) -> dict:
    """What identifies a derenderer's output: name, settings (public simple attributes, dataclass params),
    and a hash of the source file of its class."""
    return {"name": getattr(der, "name", type(der).__name__), "settings": simple_attrs(der),
            "source": source_hash(der)}


OUTPUT_SETTINGS = ("model", "prompt", "max_tokens", "extra_body")
"""Engine attributes that change what it reads (a served model's id and request settings), part of the key."""


def engine_config(engine) -> dict:
    """What identifies an OCR engine's output: its name, the source file of its class and the settings that
    change what it reads (:data:`OUTPUT_SETTINGS`, where the engine has them: e.g. DeepSeek-OCR's served model
    and prompt); batch size, threads, concurrency and progress do not."""
    cfg = {"name": getattr(engine, "name", type(engine).__name__), "source": source_hash(engine)}
    settings = {k: getattr(engine, k) for k in OUTPUT_SETTINGS if hasattr(engine, k)}
    if settings:
        cfg["settings"] = settings
    return cfg


def page_base_key(page: Page) -> dict:
    return {"page": page.id, "image": sha256_file(page.image),
            "words": [[w.id, w.text, [round(float(v), 2) for v in w.box]] for w in page.words],
            "grow": CROP_GROW}


def read_jsonl(path: Path, schema: str) -> list[dict]:
    """Valid records of an append-only JSONL log (:func:`iter_records` as a list)."""
    return list(iter_records(path, schema))


def iter_records(path: Path, schema: str) -> Iterator[dict]:
    """Valid records of an append-only JSONL log, parsed one at a time
    (:func:`inkground_lib.core.files.iter_jsonl`: a torn last line from an interrupted run is dropped and cut
    off the file; any other invalid line raises PseudoError naming the file and the line)."""
    try:
        for _, rec in iter_jsonl(
                path, lambda r: isinstance(r, dict) and r.get("schema") == schema and isinstance(r.get("key"), str),
                what=f"{schema} record"):
            yield rec
    except JSONLError as err:
        raise PseudoError(f"{err}; the file is corrupt (delete it to recompute)") from None
