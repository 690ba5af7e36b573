"""Training the writer-style backbone once (``inkground style-backbone train``): a 1-channel ResNet-18 trained
for writer identification on the writers of :mod:`~inkground_lib.components.style.backbone_corpus` (UNIPEN
writers outside the evaluation list and synthetic writers whose styles equal no evaluated writer's), on the Style
classifier's own inputs (renders fitted into 48 x 192, :mod:`~inkground_lib.components.style.inputs`).

Seeded and resumable: the state (weights, AdamW, schedule, the augmentation generator, the step) is kept in the
output folder every ``checkpoint_steps`` optimiser steps, and a killed training continues from it. The run keeps
its renders in the folder too (keyed by the corpus and the code that draws them). After the last step the
BatchNorm statistics are recalibrated on a seeded sample of training renders, the body is saved in half precision
(:func:`~inkground_lib.components.style.backbone.save_backbone`) and measured
(:mod:`~inkground_lib.components.style.backbone_eval`) from the saved file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from inkground_lib.components.style.backbone import save_backbone
from inkground_lib.components.style.backbone_corpus import Corpus, CorpusRecipe, build_corpus
from inkground_lib.components.style.determinism import torch_state
from inkground_lib.components.style.inputs import as_float, inks_darkness, random_shifts
from inkground_lib.components.style.items import items_hash
from inkground_lib.components.style.network import build_resnet18, in_layout, network_logits
from inkground_lib.components.style.params import StyleError, StyleParams
from inkground_lib.core.files import atomic_write_bytes, atomic_write_json, sources_sha256
from inkground_lib.core.folders import run_folder
from inkground_lib.core.progress import bar as progress_bar

BACKBONE_FILE = "style-backbone.safetensors"
REPORT_FILE = "train_report.json"
STATE_FILE = "training_state.pt"


@dataclass(frozen=True)
class BackboneRecipe:
    """How the backbone is trained. ``corpus``: what it trains on; ``input``: the Style classifier's input
    settings (height, width, render, layout, precision; the backbone is trained on exactly the inputs a
    benchmark's classifier sees); epochs over the training renders, batch size, AdamW (lr = the one-cycle
    schedule's peak, weight decay), label smoothing of the cross-entropy, torch CPU threads (one: the weights
    then do not depend on the machine's core count, and a shared machine does not starve two spinning threads,
    which measured 3-10x slower here), seed (weights, batch order, shifts); ``checkpoint_steps``: optimiser steps between saved states; ``bn_images``: training
    renders the BatchNorm statistics are recalibrated on."""

    corpus: CorpusRecipe = field(default_factory=CorpusRecipe)
    input: StyleParams = field(default_factory=StyleParams)
    epochs: int = 5
    batch_size: int = 64
    lr: float = 2e-3
    weight_decay: float = 5e-4
    label_smoothing: float = 0.0
    threads: int = 1
    seed: int = 0
    checkpoint_steps: int = 200
    bn_images: int = 8192

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "BackboneRecipe":
        d = dict(d)
        d["corpus"] = CorpusRecipe(**d.get("corpus", {}))
        d["input"] = StyleParams.from_dict(d["input"]) if "input" in d else StyleParams()
        return cls(**d)


SHIPPED_RECIPE = BackboneRecipe()
"""The recipe of the shipped backbone (its card: ``data/models/STYLE-BACKBONE.md``)."""

TINY_RECIPE = BackboneRecipe(corpus=CorpusRecipe(unipen_max_words=4, unipen_min_words=2, unipen_val_writers=2,
                                                 synth_writers=6, synth_val_writers=3, synth_words=6),
                             epochs=1, batch_size=8, checkpoint_steps=5, bn_images=64)
"""A few steps on a few words (the tests)."""

RENDER_CODE = ("inputs.py", "../../core/render.py", "backbone_corpus.py")
"""The code that decides a training render (relative to this package): part of the renders' cache key."""


def renders_key(corpus: Corpus, recipe: BackboneRecipe) -> str:
    """The key of the corpus' renders: the items (inks and writers, in order), the input settings and the
    sha256 of the code that draws them."""
    here = Path(__file__).parent
    code = sources_sha256((name, here / name) for name in RENDER_CODE)
    h = hashlib.sha256()
    for part in (items_hash(*zip(*corpus.train)), items_hash(*zip(*corpus.val)) if corpus.val else "",
                 json.dumps(dataclasses.asdict(recipe.input), sort_keys=True), code):
        h.update(part.encode() + b"\0")
    return h.hexdigest()[:20]


def corpus_renders(corpus: Corpus, recipe: BackboneRecipe, out: Path, progress: bool = True):
    """(train renders, val renders): uint8 darkness tensors (n, 1, height, width) of the corpus' items, read from
    ``out/renders-<key>.npz`` when an earlier call made them (key: :func:`renders_key`), else drawn and kept
    there."""
    path = out / f"renders-{renders_key(corpus, recipe)}.npz"
    if path.is_file():
        try:
            with np.load(path, allow_pickle=False) as z:
                return torch.from_numpy(z["train"]), torch.from_numpy(z["val"])
        except (OSError, ValueError, KeyError):
            pass  # a torn file: drawn again
    parts = []
    for name, items in (("train", corpus.train), ("val", corpus.val)):
        chunks = []
        with progress_bar(total=len(items), desc=f"backbone renders ({name})", unit="word", enabled=progress,
                          leave=False) as bar:
            for i in range(0, len(items), 2048):
                chunk = [ink for ink, _ in items[i:i + 2048]]
                chunks.append(inks_darkness(chunk, recipe.input, where=f"{name} item"))
                bar.update(len(chunk))
        parts.append(torch.cat(chunks) if chunks else torch.zeros((0, 1, recipe.input.height, recipe.input.width),
                                                                  dtype=torch.uint8))
    buf = io.BytesIO()
    np.savez(buf, train=parts[0].numpy(), val=parts[1].numpy())
    atomic_write_bytes(path, buf.getvalue())
    return parts[0], parts[1]


def _save_state(out: Path, d: dict) -> None:
    buf = io.BytesIO()
    torch.save(d, buf)
    atomic_write_bytes(out / STATE_FILE, buf.getvalue())


def _load_state(out: Path, key: str) -> dict | None:
    p = out / STATE_FILE
    if not p.is_file():
        return None
    try:
        d = torch.load(p, map_location="cpu", weights_only=True)
    except Exception:  # a torn or foreign file: the training starts over
        return None
    return d if isinstance(d, dict) and d.get("key") == key else None


def train_network(x: torch.Tensor, y: torch.Tensor, n_classes: int, recipe: BackboneRecipe, out: Path,
                  key: str, progress: bool = True):
    """The writer-identification network (ResNetForImageClassification, ``n_classes`` outputs) trained on
    renders ``x`` (uint8) and classes ``y``; resumable from ``out`` (states of the same ``key`` only).
    Returns (network, per-epoch mean losses, training seconds)."""
    params = dataclasses.replace(recipe.input, threads=recipe.threads, seed=recipe.seed)
    n, bs = len(x), int(recipe.batch_size)
    per_epoch = n // bs  # whole batches only: no batch of one for BatchNorm
    steps = recipe.epochs * per_epoch
    model = in_layout(build_resnet18(n_classes, recipe.seed), params)
    with torch_state(recipe.threads, recipe.seed):
        gen = torch.Generator().manual_seed(recipe.seed)
        opt = torch.optim.AdamW(model.parameters(), lr=recipe.lr, weight_decay=recipe.weight_decay, fused=True)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=recipe.lr, total_steps=steps, pct_start=0.15)
        step, losses, seconds, run_loss = 0, [], 0.0, 0.0
        state = _load_state(out, key)
        if state is not None:
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["optimizer"])
            sched.load_state_dict(state["scheduler"])
            gen.set_state(state["generator"])
            step, losses, seconds, run_loss = (int(state["step"]), list(state["losses"]), float(state["seconds"]),
                                               float(state["run_loss"]))
        model.train()
        t0 = time.perf_counter() - seconds
        with progress_bar(total=steps, initial=step, desc="backbone training", unit="step", enabled=progress,
                          leave=False) as bar:
            while step < steps:
                epoch, j = divmod(step, per_epoch)
                # each epoch's order from its own seeded generator: a resumed epoch repeats it exactly
                perm = torch.randperm(n, generator=torch.Generator().manual_seed(recipe.seed * 1000 + epoch))
                idx = perm[j * bs:(j + 1) * bs]
                xb = random_shifts(as_float(x[idx]), params.shift, gen) if params.augment else as_float(x[idx])
                loss = torch.nn.functional.cross_entropy(network_logits(model, xb, params), y[idx],
                                                         label_smoothing=recipe.label_smoothing)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                if sched.last_epoch + 1 < steps:
                    sched.step()
                run_loss += float(loss.detach())
                step += 1
                bar.update(1)
                if step % per_epoch == 0:
                    losses.append(run_loss / per_epoch)
                    run_loss = 0.0
                if step % recipe.checkpoint_steps == 0 or step == steps:
                    _save_state(out, {"key": key, "model": model.state_dict(), "optimizer": opt.state_dict(),
                                      "scheduler": sched.state_dict(), "generator": gen.get_state(), "step": step,
                                      "losses": losses, "run_loss": run_loss,
                                      "seconds": time.perf_counter() - t0})
        seconds = time.perf_counter() - t0
        # BatchNorm statistics from a seeded sample of unaugmented training renders (the weights stay)
        from inkground_lib.components.style.training import recalibrate_batchnorm

        pick = torch.randperm(n, generator=torch.Generator().manual_seed(recipe.seed + 1))[:recipe.bn_images]
        recalibrate_batchnorm(model, x[pick.sort().values], int(params.eval_batch_size), params)
    model.eval()
    return model, losses, seconds


def train_backbone(unipen_dir: str | os.PathLike, out_dir: str | os.PathLike,
                   recipe: BackboneRecipe = SHIPPED_RECIPE, progress: bool = True, evaluate: bool = True,
                   overwrite: bool = False) -> Path:
    """Train the backbone on the UNIPEN release at ``unipen_dir`` (and the synthetic writers) into ``out_dir``:
    ``style-backbone.safetensors`` (the body, half precision, its record in the metadata) and
    ``train_report.json`` (the record and, with ``evaluate``, what
    :func:`~inkground_lib.components.style.backbone_eval.evaluate_backbone` measured from the saved file).
    Returns the backbone's path. A second call with the same inputs resumes an interrupted training. ``out_dir``
    is a run folder (:func:`~inkground_lib.core.folders.run_folder`: a non-empty folder inkground did not create
    is refused unless ``overwrite``; locked while written)."""
    with run_folder(out_dir, "style-backbone-train", overwrite=overwrite) as out:
        return _train_backbone(unipen_dir, out, recipe, progress, evaluate)


def _train_backbone(unipen_dir, out: Path, recipe: BackboneRecipe, progress: bool, evaluate: bool) -> Path:
    from inkground_lib.components.derenderers.tracer.data import read_release_words
    from inkground_lib.core.versions import library_versions

    t_all = time.perf_counter()
    words, source = read_release_words(unipen_dir, progress=progress)
    corpus = build_corpus(words, recipe.corpus, source)
    x, xv = corpus_renders(corpus, recipe, out, progress)
    classes = sorted({wr for _, wr in corpus.train})
    y = torch.tensor([classes.index(wr) for _, wr in corpus.train], dtype=torch.long)
    key = hashlib.sha256((renders_key(corpus, recipe) + json.dumps(recipe.as_dict(), sort_keys=True)).encode())
    path = out / BACKBONE_FILE
    done = finished_backbone(path, corpus, recipe)
    if done is not None:  # trained by an earlier call on the same corpus and recipe: measured again only
        sha, record = done
    else:
        net, losses, seconds = train_network(x, y, len(classes), recipe, out, key.hexdigest(), progress)
        record = {"trained_on": corpus.record, "classes": len(classes), "recipe": recipe.as_dict(),
                  "losses": losses, "train_seconds": round(seconds, 1),
                  "versions": library_versions(("torch", "transformers", "safetensors", "numpy",
                                                "opencv-python-headless", "scikit-learn")),
                  "torch_threads": recipe.threads}
        sha = save_backbone(net.resnet, path, record)
    report = {"sha256": sha, **record}
    if evaluate:
        from inkground_lib.components.style.backbone_eval import evaluate_backbone

        report["evaluation"] = evaluate_backbone(unipen_dir, path, corpus=corpus, val_renders=xv, words=words,
                                                 recipe=recipe, progress=progress)
    report["total_seconds"] = round(time.perf_counter() - t_all, 1)
    atomic_write_json(out / REPORT_FILE, report)
    (out / STATE_FILE).unlink(missing_ok=True)
    return path


def finished_backbone(path: Path, corpus: Corpus, recipe: BackboneRecipe) -> tuple[str, dict] | None:
    """(sha256, record) of the backbone at ``path`` when an earlier call finished it on this corpus with this
    recipe (its record says so), else None."""
    from inkground_lib.components.style.backbone import load_backbone

    if not path.is_file():
        return None
    try:
        bb = load_backbone(path)
    except StyleError:
        return None
    same = (bb.record.get("recipe") == json.loads(json.dumps(recipe.as_dict()))
            and bb.record.get("trained_on") == json.loads(json.dumps(corpus.record)))
    return (bb.sha256, bb.record) if same else None


def check_backbone_writers(record: dict, eval_writers: set[str] | None = None) -> None:
    """Raise StyleError if a training writer named in a backbone's record (``trained_on.unipen.writers``) is on
    the evaluation list (default: ``data/unipen_eval_writers.txt``)."""
    from inkground_lib.components.derenderers.tracer.eval_writers import read_eval_writers

    banned = read_eval_writers() if eval_writers is None else set(eval_writers)
    trained = set(record.get("trained_on", {}).get("unipen", {}).get("writers", []))
    bad = sorted(trained & banned)
    if bad:
        raise StyleError(f"the backbone trained on {len(bad)} evaluation writer(s): {', '.join(bad[:5])}")
