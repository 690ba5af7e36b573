"""Stage 1: derender every word of every candidate page (cached per page, resumable)."""

from __future__ import annotations

import time
from pathlib import Path

from inkground_lib.components.derenderers.factory import make_derenderer
from inkground_lib.core.dataset import Dataset
from inkground_lib.core.files import append_jsonl, sha256_json
from inkground_lib.core.ink import Ink, ink_from_lists, ink_to_lists
from inkground_lib.pseudo.keys import (
    CROP_GROW,
    DERENDER_SCHEMA,
    derenderer_config,
    page_base_key,
    read_jsonl,
    safe_name,
)


def derender_dataset(ds: Dataset, derenderer, run_dir, progress: bool = True) -> dict[str, Ink]:
    """Pseudo-labels of every word of every page of ``ds``: {word id: ink in page pixels}.

    Each word is cut out with :func:`~inkground_lib.components.derenderers.base.crop_word` (box grown by 10%, at least 2 px)
    and derendered (the word's text is passed; the skeleton derenderer ignores it). Results go page by page
    to ``run_dir/derender-<name>.jsonl`` (one record per page: key, inks rounded to 0.01 px, per-word
    errors, seconds); pages whose record (same key, see the module doc) exists are not recomputed. A word
    whose box lies outside the photo gets an empty ink and its error is recorded. Inks are always returned
    as stored (rounded), so a fresh run and a resumed one give identical pseudo-labels.
    """
    from tqdm.auto import tqdm

    from inkground_lib.components.derenderers.base import DerenderError, crop_word

    der = make_derenderer(derenderer)
    dcfg = derenderer_config(der)
    path = Path(run_dir) / f"derender-{safe_name(dcfg['name'])}.jsonl"
    done = {r["key"]: r for r in read_jsonl(path, DERENDER_SCHEMA)}
    out: dict[str, Ink] = {}
    with tqdm(total=ds.n_words, desc=f"derender ({dcfg['name']})", unit="word", disable=not progress) as bar:
        for page in ds.pages:
            key = sha256_json({"base": page_base_key(page), "derenderer": dcfg})
            rec = done.get(key)
            if rec is None:
                t0 = time.perf_counter()
                photo = page.load_image() if page.words else None
                inks, errors = {}, {}
                for w in page.words:
                    try:
                        crop, cbox = crop_word(photo, w.box, grow=CROP_GROW)
                        ink = der.derender(crop, cbox, w.text)
                    except DerenderError as e:
                        ink, errors[w.id] = Ink(), str(e)
                    inks[w.id] = ink_to_lists(ink)
                rec = {"schema": DERENDER_SCHEMA, "key": key, "page": page.id, "derenderer": dcfg["name"],
                       "words": inks, "errors": errors, "seconds": round(time.perf_counter() - t0, 4)}
                append_jsonl(path, rec)
                done[key] = rec
            for w in page.words:
                out[w.id] = ink_from_lists(rec["words"][w.id], f"{path}: page {page.id}: word {w.id}")
            bar.update(len(page.words))
    return out


def derender_errors(run_dir, derenderer) -> dict[str, str]:
    path = Path(run_dir) / f"derender-{safe_name(derenderer_config(derenderer)['name'])}.jsonl"
    errs: dict[str, str] = {}
    for r in read_jsonl(path, DERENDER_SCHEMA):
        errs.update(r.get("errors", {}))
    return errs
