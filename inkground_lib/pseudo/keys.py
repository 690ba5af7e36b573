"""What identifies a cached stage result: component configs and source hashes, the append-only logs."""

from __future__ import annotations

import dataclasses
import inspect
import os
import warnings
from pathlib import Path
from typing import Iterator

from inkground_lib.core.dataset import Page
from inkground_lib.core.defaults import CROP_GROW
from inkground_lib.core.files import JSONLError, append_jsonl_many, iter_jsonl, sha256_file

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


OUTPUT_SETTINGS = ("model", "prompt", "max_tokens", "extra_body", "min_width")
"""Engine attributes that change what it reads (a served model's id and request settings, a local recogniser's
input width), part of the key."""


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


def iter_records(path: Path, schema: str, repair: bool = True) -> Iterator[dict]:
    """Valid records of an append-only JSONL log, parsed one at a time
    (:func:`inkground_lib.core.files.iter_jsonl`: a torn last line from an interrupted run is dropped, and cut
    off the file with ``repair``; any other invalid line raises PseudoError naming the file and the line)."""
    try:
        for _, rec in iter_jsonl(
                path, lambda r: isinstance(r, dict) and r.get("schema") == schema and isinstance(r.get("key"), str),
                repair=repair, what=f"{schema} record"):
            yield rec
    except JSONLError as err:
        raise PseudoError(f"{err}; the file is corrupt (delete it to recompute)") from None


def reused_records(path: Path, schema: str, wanted) -> Iterator[dict]:
    """The records of the log at ``path`` whose key is in ``wanted`` (:func:`iter_records`), then, for the keys
    still missing, those of the same log in the earlier runs of its run folder
    (:func:`~inkground_lib.core.earlier_runs.earlier_files`: the book's run, then every rerun's), parsed one at
    a time. A record is taken only under its own key, the digest of everything that decides it, so one made
    from another dataset, other settings or other code never is. The earlier logs are only read (a corrupt
    one is skipped with a warning); each record taken from one is appended to ``path``
    (:data:`~inkground_lib.core.earlier_runs.ADOPT_BATCH` at a time, in the order read), so the run's own log
    holds every record its tables come from and its readers (errors, recorded seconds) see a whole run."""
    from inkground_lib.core.earlier_runs import ADOPT_BATCH, earlier_files

    wanted = set(wanted)
    found: set = set()
    for rec in iter_records(path, schema):
        if rec["key"] in wanted:
            found.add(rec["key"])
            yield rec
    if found >= wanted:
        return
    batch: list = []
    try:
        for other in earlier_files(path):
            try:
                for rec in iter_records(other, schema, repair=False):
                    if rec["key"] in wanted and rec["key"] not in found:
                        found.add(rec["key"])
                        batch.append(rec)
                        if len(batch) >= ADOPT_BATCH:
                            append_jsonl_many(path, batch)
                            batch = []
                        yield rec
            except PseudoError as err:
                warnings.warn(f"{err}: not read for results to reuse", stacklevel=2)
            if found >= wanted:
                break
    finally:
        append_jsonl_many(path, batch)
