"""Writing the benchmark set: the kept pages with their pseudo-labels as reference inks."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Iterable, Mapping, Optional

from inkground_lib.components.targets import TARGET_RULE, target_mask
from inkground_lib.core.dataset import (
    Dataset,
    DatasetError,
    Page,
    box_problem,
    load_dataset,
    write_manifest,
)
from inkground_lib.core.ink import Ink, ink_to_lists
from inkground_lib.pseudo.keys import PseudoError


def _link_or_copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def build_benchmark(ds: Dataset, pseudo: Mapping[str, Ink], kept_pages: Iterable[str], out_dir, *,
                    meta: Optional[dict] = None, name: Optional[str] = None) -> Path:
    """Write the benchmark set: the kept pages of ``ds`` (in candidate order) as a dataset in ``out_dir``.

    Kind "benchmark"; reference "pseudo-label: <derenderer>" (``meta["derenderer"]``); each word's
    reference ink is its pseudo-label, its true ink is kept where ``ds`` had one. Only targets are kept (one
    target, one question: :data:`~inkground_lib.components.targets.TARGET_RULE`): the words whose text occurs
    more than once on their page are left out, their number recorded in meta["non_target_words"] and the rule in
    meta["target_rule"]. Words whose pseudo-label is empty (nothing derendered) are left out too (a reference
    must have ink); their number (among the targets) is recorded in meta["dropped_empty_words"], and so are those
    whose pseudo-label does not lie at the word's box (what ``validate`` refuses: :func:`box_problem`), in
    meta["dropped_off_box_words"]. Page photos are hard-linked (copied across file systems). ``meta`` is
    stored in the manifest (the pipeline records the candidates' name, path and hash, the OCR threshold,
    the derenderer, the OCR engine and the ratings source). The dataset is built in a temporary folder
    and moved into place, so ``out_dir`` always holds a complete dataset. If ``out_dir`` holds a benchmark
    with the same meta and pages, it is left untouched.
    """
    out = Path(out_dir)
    kept = set(kept_pages)
    unknown = kept - {p.id for p in ds.pages}
    if unknown:
        raise PseudoError(f"build_benchmark: kept pages not in the candidates: {sorted(unknown)[:5]}")
    meta = dict(meta or {})
    meta.setdefault("derenderer", "unknown")
    pages_in = [p for p in ds.pages if p.id in kept]
    targets = {p.id: target_mask([w.text for w in p.words]) for p in pages_in}
    meta["target_rule"] = TARGET_RULE
    meta["non_target_words"] = sum(m.count(False) for m in targets.values())
    dropped = sum(1 for p in pages_in for w, t in zip(p.words, targets[p.id]) if t and pseudo[w.id].n_points == 0)
    meta["dropped_empty_words"] = dropped
    off_box = {w.id for p in pages_in for w, t in zip(p.words, targets[p.id])
               if t and pseudo[w.id].n_points and box_problem(pseudo[w.id], w.box)}
    meta["dropped_off_box_words"] = len(off_box)
    meta["pages_kept"] = [p.id for p in pages_in]
    meta["pseudo_labels"] = hashlib.sha256(json.dumps(
        [[w.id, ink_to_lists(pseudo[w.id])] for p in pages_in for w in p.words]).encode()).hexdigest()
    meta = json.loads(json.dumps(meta))
    mpath = out / "manifest.json"
    if out.exists():
        try:
            m = json.loads(mpath.read_text("utf-8"))
        except (OSError, json.JSONDecodeError, UnicodeDecodeError):
            m = None
        if not isinstance(m, dict) or m.get("kind") != "benchmark":
            if m is not None or any(out.iterdir()):
                raise PseudoError(f"build_benchmark: {out} exists and is not a benchmark dataset; refusing to "
                                  f"replace it (choose another folder or delete it)")
        elif m.get("meta") == meta:
            try:
                load_dataset(out, check_images=True)
                return out
            except DatasetError:
                pass  # damaged: rebuild
    tmp = out.with_name(f".{out.name}.building")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    pages = []
    for p in pages_in:
        img = tmp / "pages" / f"{p.id}{Path(p.image).suffix.lower() or '.jpg'}"
        _link_or_copy(Path(p.image), img)
        words = [dataclasses.replace(w, ink=pseudo[w.id]) for w, t in zip(p.words, targets[p.id])
                 if t and pseudo[w.id].n_points and w.id not in off_box]
        pages.append(Page(p.id, img, p.writer, p.width, p.height, words))
    write_manifest(tmp, name or f"{ds.name}-benchmark", "benchmark", f"pseudo-label: {meta['derenderer']}",
                   meta, pages)
    old = out.with_name(f".{out.name}.old")
    if old.exists():
        shutil.rmtree(old)
    if out.exists():
        os.replace(out, old)
    os.replace(tmp, out)
    if old.exists():
        shutil.rmtree(old)
    return out


REFERENCE_OCR_FILE = "reference_ocr.json"
REFERENCE_OCR_SCHEMA = "inkground-reference-ocr/1"


def write_reference_ocr(bench_dir, texts: Mapping[str, str], pseudo: Mapping[str, Ink], engine: str) -> Path:
    """Write ``bench_dir/reference_ocr.json``: what the OCR filter read from the render of each benchmark
    word's reference (its pseudo-label), keyed by the ink's :func:`~inkground_lib.core.ink.ink_digest`, with
    the engine's name and :func:`~inkground_lib.core.render.render_config`. Section 03 reuses these texts for
    renders that are identical by construction (same ink digest, engine and render), instead of reading
    them again. ``texts``: {word id: text}, for the benchmark's words."""
    from inkground_lib.core.files import atomic_write_json
    from inkground_lib.core.ink import ink_digest
    from inkground_lib.core.render import render_config

    ds = load_dataset(bench_dir)
    out = {}
    for w in ds.words():
        if w.id in texts and w.id in pseudo:
            d = ink_digest(pseudo[w.id])
            if d != ink_digest(w.ink):
                raise PseudoError(f"{bench_dir}: word {w.id}: its reference is not the pseudo-label the OCR read")
            out[d] = str(texts[w.id])
    return atomic_write_json(Path(bench_dir) / REFERENCE_OCR_FILE,
                             {"schema": REFERENCE_OCR_SCHEMA, "engine": engine, "render": render_config(),
                              "texts": dict(sorted(out.items()))})


def reference_ocr_texts(dataset_dir, engine: str) -> dict[str, str]:
    """{ink digest: text} from ``dataset_dir/reference_ocr.json`` when it was read by ``engine`` from
    renders made as :func:`~inkground_lib.core.render.render_ink` makes them now; {} otherwise (absent,
    another engine or renderer, or unreadable: the renders are then simply read again)."""
    from inkground_lib.core.render import render_config

    path = Path(dataset_dir) / REFERENCE_OCR_FILE
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    if not (isinstance(data, dict) and data.get("schema") == REFERENCE_OCR_SCHEMA and data.get("engine") == engine
            and data.get("render") == json.loads(json.dumps(render_config()))
            and isinstance(data.get("texts"), dict)):
        return {}
    return {str(k): str(v) for k, v in data["texts"].items() if isinstance(v, str)}
