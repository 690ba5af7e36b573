"""Training the tracer: ``train_tracer(unipen_dir, out_dir, recipe)``.

Steps (each resumable; everything lands in ``out_dir``):

1. words: the release's category-6 words (:func:`.data.read_release_words`); writers on the evaluation
   list are refused and counted; ``recipe.val_writers`` writers are split off for validation
   (:func:`.data.split_words`).
2. samples: the training words drawn on augmented recorded pages, the validation words on recorded pages
   as ``build_recorded`` draws them, traced by the skeleton and labelled (:mod:`.samples`); written to
   ``samples-train.npz`` / ``samples-val.npz`` (reused when present and made with the same settings;
   made in blocks of :data:`BLOCK_PAGES` pages saved as they finish, so a killed run keeps them).
3. training: AdamW with linear warm-up and cosine decay, minibatches shuffled per epoch by a generator
   seeded with (seed, epoch); after every epoch a checkpoint (``checkpoint.npz``: network, optimiser,
   torch RNG state, history) is written atomically, so a killed run started again with the same command
   resumes after the last whole epoch and ends with bit-identical weights. ``curves.csv`` holds the
   training and validation loss and the validation order / direction shares and median DTW per epoch
   (with the skeleton's on the same words).
4. ``tracer.npz`` (weights + record) and ``train_report.json``.

Deterministic on one machine: torch runs ``recipe.threads`` threads with deterministic algorithms.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from inkground_lib.components.derenderers.tracer.data import check_no_eval_writers, read_release_words, split_words
from inkground_lib.components.derenderers.tracer.features import MAX_STROKES, POINTS, batch_inputs, stroke_features, text_ids
from inkground_lib.components.derenderers.tracer.inference import arrange, predict
from inkground_lib.components.derenderers.tracer.model import NetConfig, TracerNet, count_parameters
from inkground_lib.components.derenderers.tracer.samples import (
    RenderAug,
    Sample,
    load_samples,
    page_jobs,
    page_samples,
    samples_code_sha256,
    save_samples,
    synth_words,
)
from inkground_lib.components.derenderers.tracer.weights import npz_bytes, read_npz, save_weights, state_arrays
from inkground_lib.components.metrics.order import order_and_direction
from inkground_lib.components.metrics.trajectory import geometry_batch, geometry_columns
from inkground_lib.core.defaults import DIRECTION_MIN_LENGTH, DIRECTION_TOL, ORDER_TOL
from inkground_lib.core.files import atomic_write_bytes, atomic_write_json
from inkground_lib.core.folders import run_folder
from inkground_lib.core.parallel import ordered_map


@dataclass(frozen=True)
class Recipe:
    """Everything a training run depends on. ``max_train_words``: None uses every training word (else the
    first writers, in a seeded order, whose words add up to it); ``synth_words``: synthetic Hershey-script
    words (:func:`.samples.synth_words`) added to the training samples; ``feature_aug``: strength of the per-batch
    geometric augmentation of the stroke features (:func:`augment_features`; 0: none); ``epochs`` over the
    samples; ``threads``:
    torch threads (the result depends on it; 1 is as fast for this small network and far faster on a
    shared CPU, where 2 threads spin: 1.5-2.4 s a step against 0.1-0.3 s); ``workers``: processes tracing
    the samples (does not change the result)."""

    seed: int = 0
    val_writers: int = 20
    max_train_words: Optional[int] = None
    synth_words: int = 0
    aug: RenderAug = RenderAug()
    net: NetConfig = NetConfig(d_model=64, ff=128, dropout=0.0)
    epochs: int = 8
    batch_size: int = 64
    lr: float = 1e-3
    weight_decay: float = 0.01
    warmup_steps: int = 100
    feature_aug: float = 0.0
    rank_weight: float = 1.0
    direction_weight: float = 1.0
    threads: int = 1
    workers: int = 2

    def as_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d.pop("workers")
        return json.loads(json.dumps(d))


SHIPPED_RECIPE = Recipe()
"""The recipe of the shipped weights (data/models/tracer.npz): the full one, every allowed training word, 8
epochs (30-45 minutes estimated on 2 free cores; see data/models/MODEL.md)."""

TINY = Recipe(val_writers=2, max_train_words=60, net=NetConfig(d_model=32, layers=1, heads=2, ff=64),
              epochs=2, batch_size=8, warmup_steps=2, threads=1, workers=1)
"""A configuration for tests: a few steps on a few words."""


# ---------------------------------------------------------------------------------------------- tensors

@dataclass
class Encoded:
    """Model inputs and targets of a list of samples (per sample arrays)."""

    feats: list
    texts: list
    progress: list
    gain: list
    length: list


def encode(samples: Sequence[Sample], use_text: bool = True) -> Encoded:
    return Encoded([stroke_features(s.skel) for s in samples],
                   [text_ids(s.text) if use_text else np.zeros(0, np.int64) for s in samples],
                   [s.progress for s in samples], [s.gain for s in samples], [s.length for s in samples])


def augment_features(x: np.ndarray, sm: np.ndarray, rng: np.random.Generator, strength: float) -> np.ndarray:
    """Stroke features of words sheared (x += a (y - 0.5), |a| <= 0.15 strength) and stretched in x (factor
    in [1 / (1 + 0.2 strength), 1 + 0.2 strength]) with point noise (std 0.01 strength word heights); lengths,
    widths and x offsets follow. Targets (progress, direction) do not change under such warps."""

    if strength <= 0 or not sm.any():
        return x
    x = x.copy()
    B, S, _ = x.shape
    P = POINTS
    pts = x[:, :, :2 * P].reshape(B, S, P, 2).astype(np.float64)
    a = rng.uniform(-0.15, 0.15, B) * strength
    k = np.exp(rng.uniform(-1, 1, B) * np.log1p(0.2 * strength))
    old = np.hypot(*np.diff(pts, axis=2).transpose(3, 0, 1, 2)).sum(axis=2)
    X = pts[..., 0] * k[:, None, None] + a[:, None, None] * (pts[..., 1] - 0.5)
    X = X + rng.normal(0, 0.01 * strength, X.shape)
    Y = pts[..., 1] + rng.normal(0, 0.01 * strength, X.shape)
    big = np.where(sm[:, :, None], X, np.inf).min(axis=(1, 2))
    big = np.where(np.isfinite(big), big, 0.0)
    X = X - big[:, None, None]
    new = np.hypot(np.diff(X, axis=2), np.diff(Y, axis=2)).sum(axis=2)
    ratio = np.where(old > 1e-6, new / np.maximum(old, 1e-6), 1.0)
    x[:, :, :2 * P] = np.stack([X, Y], axis=-1).reshape(B, S, 2 * P)
    x[:, :, 2 * P] = np.log1p(np.expm1(x[:, :, 2 * P]) * ratio)
    wmax = np.where(sm[:, :, None], X, -np.inf).max(axis=(1, 2))
    x[:, :, 2 * P + 3] = np.where(np.isfinite(wmax), wmax, 0.0)[:, None]
    x[:, :, 2 * P + 4] = np.ptp(X, axis=2)
    x[~sm] = 0.0
    return x.astype(np.float32)


def _batch(enc: Encoded, idx, rng: Optional[np.random.Generator] = None, strength: float = 0.0):


    x, sm, c, cm = batch_inputs([enc.feats[i] for i in idx], [enc.texts[i] for i in idx])
    if rng is not None:
        x = augment_features(x, sm, rng, strength)
    S = x.shape[1]
    tgt = np.zeros((3, len(idx), S), np.float32)
    for b, i in enumerate(idx):
        k = min(len(enc.progress[i]), MAX_STROKES)
        tgt[0, b, :k] = enc.progress[i][:k]
        tgt[1, b, :k] = enc.gain[i][:k]
        tgt[2, b, :k] = enc.length[i][:k]
    return [torch.from_numpy(a) for a in (x, sm, c, cm)], torch.from_numpy(tgt)


def losses(net, inputs, tgt, recipe: Recipe):
    """(total, parts): L1 of sigmoid(score) to the progress; a pairwise logistic loss on the scores of
    stroke pairs whose progress differs by more than ORDER_TOL; a binary cross-entropy of the reverse logit
    on gain > 0, each stroke weighted by min(|gain| / 0.02, 1) * min(length / 0.2, 1)."""

    x, sm, c, cm = inputs
    score, rev = net(x, sm, c, cm)
    prog, gain, length = tgt
    m = sm.float()
    n = m.sum().clamp(min=1)
    l1 = ((torch.sigmoid(score) - prog).abs() * m).sum() / n
    pm = (m[:, :, None] * m[:, None, :]) * (prog[:, None, :] - prog[:, :, None] > ORDER_TOL).float()
    diff = score[:, None, :] - score[:, :, None]  # [b, i, j] = s_j - s_i, want > 0 where p_j > p_i
    rank = (F.softplus(-diff) * pm).sum() / pm.sum().clamp(min=1)
    w = torch.clamp(gain.abs() / DIRECTION_TOL, max=1.0) * torch.clamp(length / DIRECTION_MIN_LENGTH, max=1.0) * m
    bce = F.binary_cross_entropy_with_logits(rev, (gain > 0).float(), weight=w, reduction="sum")
    bce = bce / w.sum().clamp(min=1e-6)
    total = l1 + recipe.rank_weight * rank + recipe.direction_weight * bce
    return total, (float(l1.detach()), float(rank.detach()), float(bce.detach()))


def order_direction_differs(progress, gain, length, order, reverse) -> tuple[bool, Optional[bool]]:
    """(order differs, direction differs) of a word arranged by (order, reverse), from its targets, as
    :func:`~inkground_lib.components.metrics.order.stroke_order_check` decides them (None: no stroke long enough;
    a stroke at least DIRECTION_MIN_LENGTH long always has more than 3 points at the training spacing)."""
    g = np.where(reverse, -np.asarray(gain), np.asarray(gain))
    return order_and_direction(np.asarray(progress)[order], g[order],
                               (np.asarray(length) >= DIRECTION_MIN_LENGTH)[order])


def score_words(samples: Sequence[Sample], arranged: Sequence[tuple]) -> dict:
    """Median DTW (word heights, :func:`~inkground_lib.components.metrics.trajectory.geometry_batch`) and
    order / direction shares of the samples arranged by [(order, reverse)] per sample."""

    pairs, od = [], []
    for s, (order, reverse) in zip(samples, arranged):
        pairs.append(([np.column_stack([q, np.full(len(q), np.nan)]) for q in arrange(s.skel, order, reverse)],
                      [np.column_stack([q, np.full(len(q), np.nan)]) for q in s.true]))
        od.append(order_direction_differs(s.progress, s.gain, s.length, order, reverse))
    geo = geometry_columns(geometry_batch(pairs, progress=False) if pairs else np.zeros((0, 2)))
    dirs = [d for _, d in od if d is not None]
    return {"dtw_median": float(np.median(geo["dtw"])) if pairs else math.nan,
            "chamfer_median": float(np.median(geo["chamfer"])) if pairs else math.nan,
            "order_differs": float(np.mean([o for o, _ in od])) if od else math.nan,
            "direction_differs": float(np.mean(dirs)) if dirs else math.nan, "words": len(samples)}


def skeleton_arrangement(samples: Sequence[Sample]) -> list[tuple]:
    return [(np.arange(len(s.skel)), np.zeros(len(s.skel), bool)) for s in samples]


# ---------------------------------------------------------------------------------------------- samples

def _subset(words, max_words: Optional[int], seed: int):
    if max_words is None:
        return list(words)
    by: dict[str, list] = {}
    for w in words:
        by.setdefault(w.writer, []).append(w)
    writers = sorted(by, key=lambda wr: hashlib.sha256(f"{seed}:sub:{wr}".encode()).hexdigest())
    out = []
    for wr in writers:
        if len(out) >= max_words:
            break
        out.extend(by[wr][:max_words - len(out)])
    return out


BLOCK_PAGES = 40
"""Pages whose samples are saved together while samples are made (a killed run keeps the blocks done)."""


def make_samples(words, seed: int, aug: Optional[RenderAug], workers: int, progress: bool, desc: str,
                 parts: Optional[tuple[Path, dict]] = None):
    """Samples of ``words`` (pages by :func:`.samples.page_jobs`, traced in ``workers`` processes; the
    result does not depend on ``workers``). ``parts`` = (path, key): each block of BLOCK_PAGES pages is
    saved beside ``path`` as ``<name>.part<k>.npz`` (+ .json key) and reused by a later call with the same
    key, so an interrupted run resumes after its last whole block."""
    from inkground_lib.core.progress import bar as progress_bar

    jobs = page_jobs(words, seed, aug)
    out: list[Sample] = []
    with progress_bar(total=sum(len(j[1]) for j in jobs), desc=desc, unit="word", enabled=progress) as bar:
        for k, a in enumerate(range(0, len(jobs), BLOCK_PAGES)):
            block = jobs[a:a + BLOCK_PAGES]
            if parts is None:
                res = [s for r in ordered_map(page_samples, block, workers=workers) for s in r]
            else:
                path, key = parts
                res = _cached_samples(path.with_name(f"{path.stem}.part{k:04d}.npz"),
                                      {**key, "block": k, "pages": len(block), "block_pages": BLOCK_PAGES},
                                      lambda: [s for r in ordered_map(page_samples, block, workers=workers)
                                               for s in r])
            out.extend(res)
            bar.update(sum(len(j[1]) for j in block))
    return out


def _cached_samples(path: Path, key: dict, build):
    key = json.loads(json.dumps(key))  # as it reads back (tuples become lists)
    kpath = path.with_suffix(".json")
    if path.is_file() and kpath.is_file():
        try:
            if json.loads(kpath.read_text("utf-8")) == key:
                return load_samples(path)
        except (ValueError, OSError):
            pass
    samples = build()
    tmp = path.with_name(path.name + ".part")
    save_samples(tmp, samples)
    os.replace(tmp, path)
    atomic_write_json(kpath, key)
    return samples


def _whole(path: Path, key: dict, words, seed, aug, recipe: Recipe, progress: bool, desc: str):
    """Samples cached at ``path`` under ``key``, made block by block (resumable); the blocks are deleted once
    the whole file is written."""
    samples = _cached_samples(path, key, lambda: make_samples(words, seed, aug, recipe.workers, progress, desc,
                                                              (path, key)))
    for f in path.parent.glob(f"{path.stem}.part[0-9]*"):
        f.unlink()
    return samples


def prepare_samples(words, out_dir, recipe: Recipe, source: dict, progress: bool = True):
    """(train samples, validation samples, counts) of ``words`` (RecordedWords of the release), made or
    reused from ``out_dir``. Refuses (EvalWriterError) nothing silently: evaluation writers are dropped
    and counted in ``counts``, and the training words are checked again."""

    out = Path(out_dir)
    train_w, val_w, counts = split_words(words, recipe.val_writers, recipe.seed)
    train_w = _subset(train_w, recipe.max_train_words, recipe.seed)
    check_no_eval_writers(train_w)
    counts.update(train_words_used=len(train_w), train_writers_used=len({w.writer for w in train_w}))
    code = samples_code_sha256()
    base = {"source_sha256": source.get("sha256"), "seed": recipe.seed, "val_writers": recipe.val_writers,
            "words": len(words), "code": code}
    val = _whole(out / "samples-val.npz", {**base, "part": "val"}, val_w, recipe.seed + 1, None, recipe,
                 progress, "tracer samples (validation)")
    train = _whole(out / "samples-train.npz", {**base, "part": "train", "max_train_words": recipe.max_train_words,
                                               "aug": dataclasses.asdict(recipe.aug)},
                   train_w, recipe.seed, recipe.aug, recipe, progress, "tracer samples (training)")
    if recipe.synth_words:

        train = train + _whole(out / "samples-synth.npz", {"part": "synth", "n": recipe.synth_words, "code": code,
                                                          "seed": recipe.seed, "aug": dataclasses.asdict(recipe.aug)},
                               synth_words(recipe.synth_words, recipe.seed), recipe.seed + 2, recipe.aug, recipe,
                               progress, "tracer samples (synthetic)")
    counts.update(train_samples=len(train), val_samples=len(val))
    return train, val, counts


# ---------------------------------------------------------------------------------------------- training

def _lr_at(step: int, total: int, recipe: Recipe) -> float:
    if step < recipe.warmup_steps:
        return recipe.lr * (step + 1) / recipe.warmup_steps
    q = (step - recipe.warmup_steps) / max(total - recipe.warmup_steps, 1)
    return recipe.lr * 0.5 * (1.0 + math.cos(math.pi * min(q, 1.0)))


def _checkpoint_bytes(net, opt, epoch: int, history: list, recipe: Recipe) -> bytes:


    arrays = state_arrays(net.state_dict(), "param/")
    st = opt.state_dict()
    for pid, s in st["state"].items():
        for k, v in s.items():
            arrays[f"opt/{pid}/{k}"] = v.detach().cpu().numpy() if torch.is_tensor(v) else np.asarray(v)
    arrays["rng"] = torch.get_rng_state().numpy()
    return npz_bytes(arrays, {"epoch": epoch, "history": history, "recipe": recipe.as_dict()})


def _restore(path: Path, net, opt, recipe: Recipe):


    record, arrays = read_npz(path)
    if record.get("recipe") != recipe.as_dict():
        raise ValueError(f"{path}: a checkpoint of another recipe; use another out_dir or delete it")
    net.load_state_dict({k[6:]: torch.from_numpy(np.array(v)) for k, v in arrays.items()
                         if k.startswith("param/")})
    st = opt.state_dict()
    state = {}
    for k, v in arrays.items():
        if k.startswith("opt/"):
            _, pid, name = k.split("/")
            state.setdefault(int(pid), {})[name] = torch.from_numpy(np.array(v))
    st["state"] = state
    opt.load_state_dict(st)
    torch.set_rng_state(torch.from_numpy(np.array(arrays["rng"])))
    return int(record["epoch"]), list(record["history"])


def _write_curves(path: Path, history: list) -> None:
    cols = ["epoch", "train_loss", "train_l1", "train_rank", "train_direction", "val_loss", "val_dtw_median",
            "val_order_differs", "val_direction_differs", "skeleton_val_dtw_median", "skeleton_val_order_differs",
            "skeleton_val_direction_differs", "seconds"]

    buf = io.StringIO()
    w = csv.DictWriter(buf, cols, lineterminator="\n")
    w.writeheader()
    for h in history:
        w.writerow({k: (f"{h[k]:.6f}" if isinstance(h[k], float) else h[k]) for k in cols})
    atomic_write_bytes(path, buf.getvalue().encode())


BUCKET = 32
"""Batches drawn together and grouped by length (less padding): see :func:`epoch_batches`."""


def epoch_batches(enc: Encoded, recipe: Recipe, epoch: int) -> list[np.ndarray]:
    """The minibatches (sample indices) of one epoch: a permutation seeded by (seed, epoch), cut into chunks
    of BUCKET batches; in each chunk the samples are sorted by their number of tokens (strokes + characters,
    stably) and cut into batches; the batches' order is shuffled by the same generator. The same number of
    batches every epoch."""
    rng = np.random.default_rng([recipe.seed, 3, epoch])
    perm = rng.permutation(len(enc.feats))
    size = recipe.batch_size
    tokens = np.array([len(f) + len(t) for f, t in zip(enc.feats, enc.texts)])
    out = []
    for a in range(0, len(perm), size * BUCKET):
        chunk = perm[a:a + size * BUCKET]
        chunk = chunk[np.argsort(tokens[chunk], kind="stable")]
        out.extend(chunk[b:b + size] for b in range(0, len(chunk), size))
    return [out[i] for i in rng.permutation(len(out))]


def fit(train: Sequence[Sample], val: Sequence[Sample], out_dir, recipe: Recipe, progress: bool = True,
        stop_after_epoch: Optional[int] = None):
    """Train a TracerNet on the samples (resuming from ``out_dir/checkpoint.npz``); returns (net, history).
    ``stop_after_epoch``: return after that epoch's checkpoint (tests' interruption)."""
    from inkground_lib.core.progress import bar as progress_bar

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(recipe.threads)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(recipe.seed)
    net = TracerNet(recipe.net)
    opt = torch.optim.AdamW(net.parameters(), lr=recipe.lr, weight_decay=recipe.weight_decay)
    enc = encode(train, recipe.net.use_text)
    venc = encode(val, recipe.net.use_text)
    steps_per_epoch = len(epoch_batches(enc, recipe, 0))
    total = steps_per_epoch * recipe.epochs
    ck = out / "checkpoint.npz"
    start, history = 0, []
    if ck.is_file():
        start, history = _restore(ck, net, opt, recipe)
    skel_val = score_words(val, skeleton_arrangement(val)) if val else {}
    bar = progress_bar(total=total, initial=start * steps_per_epoch, desc="tracer training", unit="step",
                       enabled=progress)
    for epoch in range(start, recipe.epochs):
        t0 = time.perf_counter()
        net.train()
        batches = epoch_batches(enc, recipe, epoch)
        sums = np.zeros(4)
        for b, idx in enumerate(batches):
            step = epoch * steps_per_epoch + b
            for g in opt.param_groups:
                g["lr"] = _lr_at(step, total, recipe)
            inputs, tgt = _batch(enc, idx, np.random.default_rng([recipe.seed, 5, epoch, b]), recipe.feature_aug)
            loss, parts = losses(net, inputs, tgt, recipe)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            sums += (float(loss.detach()), *parts)
            bar.update(1)
            bar.set_postfix(loss=f"{sums[0] / (b + 1):.4f}")
        net.eval()
        with torch.no_grad():
            vl = []
            for a in range(0, len(val), 256):
                inputs, tgt = _batch(venc, np.arange(a, min(a + 256, len(val))))
                vl.append(float(losses(net, inputs, tgt, recipe)[0]) * tgt.shape[1])
        vs = score_words(val, predict(net, venc.feats, venc.texts)) if val else {}
        mean = sums / steps_per_epoch
        history.append({"epoch": epoch + 1, "train_loss": mean[0], "train_l1": mean[1], "train_rank": mean[2],
                        "train_direction": mean[3],
                        "val_loss": float(np.sum(vl) / max(len(val), 1)),
                        "val_dtw_median": vs.get("dtw_median", math.nan),
                        "val_order_differs": vs.get("order_differs", math.nan),
                        "val_direction_differs": vs.get("direction_differs", math.nan),
                        "skeleton_val_dtw_median": skel_val.get("dtw_median", math.nan),
                        "skeleton_val_order_differs": skel_val.get("order_differs", math.nan),
                        "skeleton_val_direction_differs": skel_val.get("direction_differs", math.nan),
                        "seconds": round(time.perf_counter() - t0, 2)})
        atomic_write_bytes(ck, _checkpoint_bytes(net, opt, epoch + 1, history, recipe))
        _write_curves(out / "curves.csv", history)
        if stop_after_epoch is not None and epoch + 1 >= stop_after_epoch:
            break
    bar.close()
    return net, history


def train_tracer(unipen_dir, out_dir, recipe: Recipe = Recipe(), progress: bool = True, words=None,
                 stop_after_epoch: Optional[int] = None, overwrite: bool = False) -> Path:
    """Train the tracer on the UNIPEN release at ``unipen_dir`` into ``out_dir`` (see the module doc) and
    return the weights' path (``out_dir/tracer.npz``). ``words``: RecordedWords already read from that
    release (skips reading it again). The same command after an interruption resumes. ``out_dir`` is a run
    folder (:func:`inkground_lib.core.folders.run_folder`): a non-empty folder inkground did not create is
    refused unless ``overwrite``, and a folder being written is locked."""

    t0 = time.perf_counter()
    with run_folder(out_dir, "tracer-train", overwrite=overwrite) as out:
        if words is None:
            words, source = read_release_words(unipen_dir, progress=progress)
        else:
            source = {"path": str(unipen_dir), "sha256": None, "words": len(words)}
        train, val, counts = prepare_samples(words, out, recipe, source, progress)
        net, history = fit(train, val, out, recipe, progress, stop_after_epoch)
        if len(history) < recipe.epochs:
            return out / "checkpoint.npz"
        return _finish(out, net, history, recipe, source, counts, t0)


def library_versions() -> dict:
    """The versions of Python and of the libraries that decide the weights (torch, numpy, scipy, OpenCV,
    scikit-image), recorded in the weights record: a run with other versions may give other weights."""
    from inkground_lib.core.versions import library_versions as versions

    return versions(("torch", "numpy", "scipy", "opencv-python-headless", "scikit-image"))


def _finish(out: Path, net, history: list, recipe: Recipe, source: dict, counts: dict, t0: float) -> Path:
    """Save the trained network (``tracer.npz``) and ``train_report.json`` (data, recipe, final figures)."""
    record = {"trained_on": {"release": "UNIPEN train_r01_v07 (doi:10.5281/zenodo.1195803), category 6",
                             "source_sha256": source.get("sha256"), **counts},
              "recipe": recipe.as_dict(), "parameters": count_parameters(net), "versions": library_versions(),
              "final": {k: v for k, v in history[-1].items() if k != "seconds"}}
    digest = save_weights(out / "tracer.npz", net, record)
    atomic_write_json(out / "train_report.json",
                      {**record, "weights_sha256": digest, "seconds_this_call": round(time.perf_counter() - t0, 1)})
    return out / "tracer.npz"
