"""The Style backbone's features of renders, computed once per drawing and kept by content key.

A render's features (512 floats, :mod:`~inkground_lib.components.style.backbone`) depend only on what the ink
draws (:func:`~inkground_lib.core.ink.drawing_digest`) and on the feature key
(:func:`~inkground_lib.components.style.backbone.feature_key`: the backbone's sha256 and the input settings): the
same for every system, reference, classifier and section, and - tested - whatever batch or thread count computed
them. So they are computed once: an in-process memo ({(feature key, drawing digest): row}) shared by a section's
scorings, and a run's store (``style-features/``, :func:`~inkground_lib.core.run_files.style_features_dir`):
files ``features-<sha256 of content>.npz`` (no pickle), each holding its feature key, the drawing digests and their
rows, written atomically and only added to. A store's rows are read only under their own key. A run's store also
reads the stores of the book's run and earlier reruns of the same dataset and section
(:func:`~inkground_lib.core.earlier_runs.earlier_runs`), only reading them; the rows it takes from them are added
to its own store, so a run folder holds every row its Style was computed from.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from pathlib import Path

import numpy as np

from inkground_lib.core.defaults import STYLE_JOB_BATCHES
from inkground_lib.core.files import atomic_write_bytes
from inkground_lib.core.ink import drawing_digest
from inkground_lib.core.parallel import ordered_map
from inkground_lib.core.progress import bar as progress_bar


def key_text(fkey: tuple) -> str:
    """A feature key as the text stored beside its rows."""
    return json.dumps(list(fkey))


def read_store(store: str | os.PathLike, fkey: tuple) -> dict[str, np.ndarray]:
    """{drawing digest: row} of every file in the store folder ``store`` made under ``fkey`` (other keys,
    unreadable or torn files are skipped: their drawings are computed again)."""
    out: dict[str, np.ndarray] = {}
    d = Path(store)
    if not d.is_dir():
        return out
    want = key_text(fkey)
    for f in sorted(d.glob("features-*.npz")):
        try:
            with np.load(f, allow_pickle=False) as z:
                if str(z["key"]) != want:
                    continue
                digests, rows = z["digests"], z["features"]
                if rows.shape != (len(digests), rows.shape[1]):
                    continue
                out.update(zip((str(v) for v in digests), rows))
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
            continue
    return out


def append_store(store: str | os.PathLike, fkey: tuple, digests, rows: np.ndarray) -> Path | None:
    """Add ``rows`` (n, 512) of ``digests`` to the store folder ``store`` as one new file (atomic; identical
    content gets the same name, so a repeat writes nothing new)."""
    if not len(digests):
        return None
    buf = io.BytesIO()
    np.savez(buf, key=np.array(key_text(fkey)), digests=np.array(list(digests)),
             features=np.ascontiguousarray(rows, dtype=np.float32))
    data = buf.getvalue()
    path = Path(store) / f"features-{hashlib.sha256(data).hexdigest()[:24]}.npz"
    if not path.is_file():
        atomic_write_bytes(path, data)
    return path


def _take_earlier(store: str | os.PathLike, fkey: tuple, wanted: dict, earlier: dict) -> dict:
    """{(fkey, digest): row} of the ``wanted`` keys that the stores of earlier runs hold (the book's run, then
    every rerun's, of the same dataset and section as the run folder holding ``store``), added to ``store`` as
    one file. ``earlier``: {digest: row} of those stores, filled on the first call (the first run holding a
    digest wins) and passed again by the caller, so a section reads them once."""
    from inkground_lib.core.earlier_runs import earlier_runs

    store = Path(store)
    if not earlier:
        rows: dict = {}
        for run in earlier_runs(store.parent):
            for d, row in read_store(run / store.name, fkey).items():
                rows.setdefault(d, row)
        rows[None] = None  # read: an empty result is not read again
        earlier.update(rows)  # at once: a classifier's thread never sees it half filled
    found = {k: earlier[k[1]] for k in wanted if k[1] in earlier}
    if found:
        append_store(store, fkey, [d for _, d in found], np.stack(list(found.values())))
    return found


def _features_job(job):
    """Executor job: the shipped backbone's features of inks; job = (StyleParams as a dict, inks). The worker
    loads the backbone once (its sha256 checked)."""
    from inkground_lib.components.style.backbone import load_backbone
    from inkground_lib.components.style.inputs import inks_darkness
    from inkground_lib.components.style.params import StyleParams

    params_d, inks = job
    params = StyleParams.from_dict(params_d)
    return load_backbone().features(inks_darkness(inks, params, where="ink"), params)


def _same_render(todo: dict, memo: dict, params) -> dict:
    """Take out of ``todo`` ({(feature key, drawing digest): ink}) the drawings whose render (the default
    :class:`~inkground_lib.core.render.RenderSpec`, which ``params`` uses) another drawing of ``todo`` shares, as
    the OCR of renders noted it (:data:`~inkground_lib.evaluation.render_ocr.RENDER_OF`): the same input image,
    the same features. Returns {kept key: [keys that take its row]}."""
    from inkground_lib.core.render import DEFAULT_RENDER
    from inkground_lib.evaluation.render_ocr import RENDER_OF

    if params.render != DEFAULT_RENDER:
        return {}
    first: dict = {}
    same: dict = {}
    for k in list(todo):
        rd = memo.get((RENDER_OF, k[1]))
        if rd is None:
            continue
        if rd in first:
            same.setdefault(first[rd], []).append(k)
            del todo[k]
        else:
            first[rd] = k
    return same


def style_features(backbone, params, inks, memo: dict | None = None, executor=None, progress: bool = False,
                   store: str | os.PathLike | None = None) -> np.ndarray:
    """The features (n, 512) float32 of each ink's render under ``backbone`` (a
    :class:`~inkground_lib.components.style.backbone.Backbone`, the shipped one on an executor) with the input
    settings ``params``. Drawings already in ``memo`` or in the run store folder ``store`` are not computed again;
    the others are computed once each (drawings that the OCR of renders found to share a render, once for all) - on ``executor`` (a pool or a Dask cluster) in jobs of
    :data:`~inkground_lib.core.defaults.STYLE_JOB_BATCHES` inference batches when there are more than one job's
    worth, here otherwise - and added to both. A bar with its ETA when ``progress``."""
    from inkground_lib.components.style.backbone import feature_key
    from inkground_lib.components.style.inputs import inks_darkness

    memo = {} if memo is None else memo
    fkey = feature_key(backbone.sha256, params)
    if store is not None and ("style-store", str(store), fkey) not in memo:
        for d, row in read_store(store, fkey).items():
            memo.setdefault((fkey, d), row)
        memo[("style-store", str(store), fkey)] = True
    keys = [(fkey, drawing_digest(k)) for k in inks]
    todo: dict = {}
    for k, ink in zip(keys, inks):
        if k not in memo and k not in todo:
            todo[k] = ink
    if store is not None and todo:
        seen = memo.setdefault(("style-earlier", str(store), fkey), {})  # earlier runs' rows, read once
        taken = _take_earlier(store, fkey, todo, seen)
        memo.update(taken)
        for k in taken:
            del todo[k]
    same = _same_render(todo, memo, params)
    ks, vs = list(todo), list(todo.values())
    step = int(params.eval_batch_size) * STYLE_JOB_BATCHES
    jobs = [vs[i:i + step] for i in range(0, len(vs), step)]
    if executor is not None and not getattr(executor, "in_process", False) and len(jobs) > 1:
        from inkground_lib.components.style.backbone import SHIPPED_SHA256

        if backbone.sha256 != SHIPPED_SHA256:
            raise ValueError("style_features: an executor's workers load the shipped backbone only")
        pd_ = params.to_dict()
        chunks = ordered_map(_features_job, [(pd_, j) for j in jobs], executor=executor)
    else:
        chunks = (backbone.features(inks_darkness(j, params, where="ink"), params) for j in jobs)
    with progress_bar(total=len(vs) + sum(map(len, same.values())), desc="Style features of renders", unit="word",
                      leave=False, enabled=progress and bool(vs)) as bar:
        i = 0
        for rows in chunks:
            done = ks[i:i + len(rows)]
            memo.update(zip(done, rows))
            copies = [(c, row) for k, row in zip(done, rows) for c in same.get(k, ())]
            memo.update(copies)
            if store is not None:
                shared = np.array([r for _, r in copies], np.float32).reshape(-1, rows.shape[1])
                append_store(store, fkey, [d for _, d in done] + [d for (_, d), _ in copies],
                             np.concatenate([rows, shared]))
            i += len(rows)
            bar.update(len(rows) + len(copies))
    if not keys:
        return np.zeros((0, 512), np.float32)
    return np.stack([memo[k] for k in keys])
