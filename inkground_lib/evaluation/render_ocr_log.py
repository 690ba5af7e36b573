"""A run's log of the OCR texts of its renders (``ocr-renders-<engine>.jsonl``): the paper-scale run appends
each batch as it is read, so a rerun after ``kill -9`` reads only what was not read yet.

One JSON line per batch: ``{"schema", "engine": engine config, "render": render config, "texts": {ink digest:
text}}``. Texts are reused only under the same engine config (:func:`inkground_lib.pseudo.keys.engine_config`:
name, source and output settings) and render config (:func:`inkground_lib.core.render.render_config`); a torn
last line is dropped (:func:`inkground_lib.core.files.iter_jsonl`). Texts the log lacks are looked up in the same
log of the earlier runs (:func:`reused_render_texts`).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Sequence

from inkground_lib.core.files import JSONLError, append_jsonl, iter_jsonl
from inkground_lib.core.render import render_config
from inkground_lib.core.run_files import render_ocr_jsonl
from inkground_lib.pseudo.keys import engine_config

RENDER_OCR_SCHEMA = "inkground-render-ocr"
"""Schema name of a line of the log."""


class RenderOCRLogError(ValueError):
    """A render-OCR log with an invalid line (not a torn last line); names the file and the line."""


def render_ocr_log_path(run_dir: str | os.PathLike, ocr) -> Path:
    """``run_dir/ocr-renders-<engine name>.jsonl``."""
    return render_ocr_jsonl(run_dir, engine_config(ocr)["name"])


def _valid(rec) -> bool:
    return (isinstance(rec, dict) and rec.get("schema") == RENDER_OCR_SCHEMA and isinstance(rec.get("texts"), dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in rec["texts"].items()))


def read_render_texts(path: str | os.PathLike, ocr, repair: bool = True) -> dict[str, str]:
    """{ink digest: text} of the log's lines written with ``ocr``'s config and today's render config (other
    lines are ignored); a missing file gives {}. ``repair``: cut a torn last line off the file."""
    ident = render_ocr_identity(ocr)
    out: dict[str, str] = {}
    try:
        for _, rec in iter_jsonl(path, _valid, repair=repair, what=f"{RENDER_OCR_SCHEMA} record"):
            if rec.get("engine") == ident["engine"] and rec.get("render") == ident["render"]:
                out.update(rec["texts"])
    except JSONLError as err:
        raise RenderOCRLogError(f"{err}; the log is corrupt (delete it to read the renders again)") from None
    return out


def reused_render_texts(path: str | os.PathLike, ocr, digests) -> dict[str, str]:
    """{ink digest: text}: the texts the log at ``path`` holds (:func:`read_render_texts`), and for those of
    ``digests`` it lacks, the texts the same log of the earlier runs of its run folder holds
    (:func:`~inkground_lib.core.earlier_runs.earlier_files`: the book's run, then every rerun's; only read, a
    corrupt one skipped with a warning; the same engine and render config, and the same drawing by its digest,
    or never). What came from an earlier run is appended to ``path`` as one line."""
    from inkground_lib.core.earlier_runs import earlier_files

    out = read_render_texts(path, ocr)
    missing = {d for d in digests if d not in out}
    taken: dict[str, str] = {}
    for other in earlier_files(path) if missing else ():
        try:
            texts = read_render_texts(other, ocr, repair=False)
        except RenderOCRLogError as err:
            warnings.warn(f"{err}: not read for texts to reuse", stacklevel=2)
            continue
        taken.update({d: texts[d] for d in missing if d in texts})
        missing -= taken.keys()
        if not missing:
            break
    if taken:
        keys = sorted(taken)
        append_render_texts(path, render_ocr_identity(ocr), keys, [taken[k] for k in keys])
    return {**out, **taken}


def render_ocr_identity(ocr) -> dict:
    """What a log line's texts depend on: ``ocr``'s engine config and the render config (compute it once per
    call of :func:`~inkground_lib.evaluation.render_ocr.read_renders`: the engine config hashes its source file)."""
    return {"engine": engine_config(ocr), "render": render_config()}


def append_render_texts(path: str | os.PathLike, identity: dict, digests: Sequence[str],
                        texts: Sequence[str]) -> None:
    """Append one line: the texts read from the renders of the inks with these digests, by the engine and
    render config of ``identity`` (:func:`render_ocr_identity`)."""
    if len(digests) != len(texts):
        raise ValueError(f"append_render_texts: {len(digests)} digests but {len(texts)} texts")
    append_jsonl(path, {"schema": RENDER_OCR_SCHEMA, **identity,
                        "texts": {d: str(t) for d, t in zip(digests, texts)}})
