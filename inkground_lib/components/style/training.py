"""Training the Style classifier: seeded, deterministic, resumable epoch by epoch (:class:`TrainState`), with
the BatchNorm statistics recalibrated at the end; :func:`train_style` reuses a model saved for the same
items and settings."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from inkground_lib.components.style.determinism import torch_state
from inkground_lib.core.progress import bar as progress_bar
from inkground_lib.components.style.inputs import as_float, inks_darkness, random_shifts
from inkground_lib.components.style.items import check_items, items_hash
from inkground_lib.components.style.model import StyleModel
from inkground_lib.components.style.network import build_resnet18, in_layout, network_logits
from inkground_lib.components.style.params import StyleError, StyleParams
from inkground_lib.components.style.precision import check_precision
from inkground_lib.components.style.storage import save_style, saved_style
from inkground_lib.core.ink import InkLike


def recalibrate_batchnorm(model, x: torch.Tensor, bs: int, params: StyleParams, keep=()) -> None:
    """Replace BatchNorm running statistics by their exact average over the (unaugmented) training images
    ``x`` (uint8 darkness, :func:`~inkground_lib.components.style.inputs.inks_darkness`).

    Short CPU trainings take few optimiser steps, too few for the running averages (momentum 0.1) to
    forget their initial values (mean 0, variance 1); eval-mode outputs are then near chance. One pass in
    train mode with cumulative averaging (momentum None) and no gradients fixes the statistics; the weights
    are not touched. The pass runs in ``params``' precision and layout, as inference does. ``keep``: modules
    whose statistics stay (a fine-tuning's frozen part).
    """
    kept = {id(b) for k in keep for b in k.modules()}
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and id(m) not in kept]
    saved = [m.momentum for m in bns]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    for k in keep:
        k.eval()
    with torch.no_grad():
        for b in range(0, len(x), bs):
            xb = x[b:b + bs]
            if len(xb) > 1:
                network_logits(model, as_float(xb), params)
    for m, mom in zip(bns, saved):
        m.momentum = mom


def train_style(train_items: Sequence[tuple[InkLike, str]], params: StyleParams = StyleParams(),
                out_dir: str | Path | None = None, progress: bool = True, features=None,
                executor=None) -> StyleModel:
    """Train the writer classifier on ``train_items`` = [(ink, writer_label), ...] (the book's design page) as
    ``params.start`` and ``params.fit`` say: a head on the backbone's features (:func:`fit_style_head`;
    ``features``: the items' features when the caller has them; ``executor``: the head is fitted there, the same
    head), or a network trained for ``epochs``. ``progress``: a tqdm bar of the optimiser steps.

    With ``out_dir``: if it already holds a model whose input hash (items in order) and params equal these,
    that model is loaded and returned (``trained`` False); otherwise the new model is trained and written
    there (weights first, then the JSON record, each atomically). ``out_dir=None`` trains without saving.
    """
    if not isinstance(params, StyleParams):
        raise StyleError(f"train_style: params must be StyleParams, got {type(params).__name__}")
    check_precision(params.precision, "Style training")  # before a saved model is looked for: never slow later
    inks, labels = check_items(train_items)
    classes = sorted(set(labels))
    if len(classes) < 2:
        raise StyleError(f"train_style: need items from at least 2 writers, got {len(classes)}")
    if out_dir is not None:
        saved = saved_style(out_dir, train_items, params)
        if saved is not None:
            return saved
    if params.fit == "head":
        sm = fit_style_head(train_items, params, features, executor)
    else:
        state = train_epochs(train_items, params, progress=progress)
        sm = style_model_from_state(state, train_items, params)
    sm.out_dir = None if out_dir is None else Path(out_dir)
    if out_dir is not None:
        save_style(sm, out_dir, len(inks))
    return sm


def fit_style_head(train_items: Sequence[tuple[InkLike, str]], params: StyleParams = StyleParams(),
                   features=None, executor=None) -> StyleModel:
    """The classifier of ``fit="head"``: the shipped backbone, frozen, and a :class:`~inkground_lib.components.style.
    head.LinearHead` fitted on the features of the items' renders (``features`` (n, 512) when the caller has
    them, e.g. from a run's feature store; computed here otherwise), here or as one job on ``executor`` (a pool
    that is not in-process: two classifiers' heads then fit side by side)."""
    from inkground_lib.components.style.backbone import load_backbone
    from inkground_lib.components.style.head import fit_head, fit_head_job

    if params.start != "backbone" or params.fit != "head":
        raise StyleError(f"fit_style_head: needs start='backbone' and fit='head', got {params.start!r}, "
                         f"{params.fit!r}")
    inks, labels = check_items(train_items)
    t0 = time.perf_counter()
    bb = load_backbone()
    if features is None:
        features = bb.features(inks_darkness(inks, params, where="training item"), params)
    if len(features) != len(inks):
        raise StyleError(f"fit_style_head: {len(features)} feature rows for {len(inks)} items")
    job = (np.asarray(features), list(labels), params.head_c, params.seed)
    if executor is not None and not getattr(executor, "in_process", False):
        head = executor.submit(fit_head_job, job).result()
    else:
        head = fit_head(*job)
    return StyleModel(model=None, classes=list(head.classes), params=params, input_hash=items_hash(inks, labels),
                      trained=True, train_seconds=time.perf_counter() - t0, backbone=bb, head=head)


def init_network(n_classes: int, params: StyleParams):
    """The network a training starts from: a ResNet-18 with ``n_classes`` outputs, from random weights
    (``start="random"``) or with the shipped backbone's body (``start="backbone"``; its last layer new, seeded),
    in ``params``' layout."""
    model = build_resnet18(n_classes, params.seed)
    if params.start == "backbone":
        from inkground_lib.components.style.backbone import load_backbone

        model.resnet.load_state_dict(load_backbone().body.state_dict())
    return in_layout(model, params)


def frozen_modules(model, params: StyleParams) -> list:
    """The parts of the network a training keeps as they are (eval mode, no gradients): with ``fit=
    "last_stage"`` the stem and the first three stages; nothing otherwise."""
    if params.fit != "last_stage":
        return []
    return [model.resnet.embedder] + list(model.resnet.encoder.stages[:3])


@dataclass
class TrainState:
    """A training of :func:`train_style` after ``epoch`` of its epochs: everything that continues it bit for bit
    (the network's weights and BatchNorm statistics, AdamW's moments, the one-cycle schedule, the generator
    of batch order and shifts), the mean loss of each epoch so far and the seconds spent training."""

    epoch: int
    model: dict
    optimizer: dict
    scheduler: dict | None
    generator: torch.Tensor
    losses: list
    seconds: float


def train_epochs(train_items: Sequence[tuple[InkLike, str]], params: StyleParams = StyleParams(),
                 state: TrainState | None = None, epochs: int | None = None, progress: bool = False) -> TrainState:
    """:func:`train_style`'s training, ``epochs`` epochs at a time (None: to the end) from ``state`` (None: the
    start). The state returned continues it bit for bit, in this process or another: the paper-scale run
    trains one epoch per job and keeps each state on disk
    (:func:`~inkground_lib.components.style.checkpoints.save_checkpoint`), so a kill loses at most the epoch in
    progress. After the last epoch the BatchNorm statistics are recalibrated over the training images.
    ``progress``: see :func:`train_style`."""
    inks, labels = check_items(train_items)
    classes = sorted(set(labels))
    if len(classes) < 2:
        raise StyleError(f"train_style: need items from at least 2 writers, got {len(classes)}")
    check_precision(params.precision, "Style training")
    first = 0 if state is None else int(state.epoch)
    last = params.epochs if epochs is None else min(params.epochs, first + int(epochs))
    t0 = time.perf_counter()
    y = torch.tensor([classes.index(lab) for lab in labels], dtype=torch.long)
    x = inks_darkness(inks, params, where="training item")  # uint8; each batch is made float below
    if params.fit == "head":
        raise StyleError("train_epochs: fit='head' trains no network (fit_style_head)")
    model = init_network(len(classes), params)
    frozen = frozen_modules(model, params)
    for m in frozen:
        m.requires_grad_(False)
    losses: list[float] = [] if state is None else [float(v) for v in state.losses]
    with torch_state(params.threads, params.seed):
        gen = torch.Generator().manual_seed(int(params.seed))
        # fused: one kernel for all 62 tensors (~100x faster than the per-tensor loop on CPU); same maths
        opt = torch.optim.AdamW([q for q in model.parameters() if q.requires_grad], lr=params.lr,
                                weight_decay=params.weight_decay, fused=True)
        n, bs = len(x), int(params.batch_size)
        steps = params.epochs * max(1, -(-n // bs))
        # one-cycle schedule; its warm-up needs >= 2 steps, so tiny runs (few words) warm up over a larger
        # share, and runs of under 4 steps keep a constant learning rate
        sched = (torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=params.lr, total_steps=steps,
                                                     pct_start=min(0.5, max(0.2, 2.0 / steps)))
                 if steps >= 4 else None)
        if state is not None:  # after the schedule is made: its construction sets the optimiser's rate
            model.load_state_dict(state.model)
            opt.load_state_dict(state.optimizer)
            if sched is not None:
                sched.load_state_dict(state.scheduler)
            gen.set_state(state.generator)
        model.train()
        for m in frozen:
            m.eval()  # their BatchNorm statistics stay the backbone's
        bar = progress_bar(total=steps, initial=first * max(1, -(-n // bs)), desc="Style training", unit="batch",
                           enabled=progress, leave=False)
        for _ in range(first, last):
            perm = torch.randperm(n, generator=gen)
            starts = list(range(0, n, bs))
            if len(starts) > 1 and n - starts[-1] == 1:
                starts.pop()  # never a batch of one (BatchNorm); the last item joins the previous batch
            tot = 0.0
            for j, b in enumerate(starts):
                e = starts[j + 1] if j + 1 < len(starts) else n
                idx = perm[b:e]
                xb = as_float(x[idx])
                if params.augment:
                    xb = random_shifts(xb, params.shift, gen)
                loss = torch.nn.functional.cross_entropy(network_logits(model, xb, params), y[idx])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                if sched is not None and sched.last_epoch + 1 < steps:
                    sched.step()
                tot += float(loss.detach()) * len(idx)
                bar.update(1)
            losses.append(tot / n)
        bar.close()
        if last == params.epochs:
            recalibrate_batchnorm(model, x, int(params.eval_batch_size), params, keep=frozen)
    return TrainState(epoch=last, model=model.state_dict(), optimizer=opt.state_dict(),
                      scheduler=None if sched is None else sched.state_dict(), generator=gen.get_state(),
                      losses=losses, seconds=(0.0 if state is None else float(state.seconds))
                      + time.perf_counter() - t0)


def style_model_from_state(state: TrainState, train_items: Sequence[tuple[InkLike, str]],
                           params: StyleParams = StyleParams()) -> StyleModel:
    """The trained classifier (``trained`` True, in eval mode) of a finished training's state."""
    inks, labels = check_items(train_items)
    if int(state.epoch) != int(params.epochs):
        raise StyleError(f"style_model_from_state: the training is at epoch {state.epoch} of {params.epochs}")
    classes = sorted(set(labels))
    model = build_resnet18(len(classes), params.seed)
    model.load_state_dict(state.model)
    model.eval()
    return StyleModel(model=model, classes=classes, params=params, input_hash=items_hash(inks, labels),
                      trained=True, losses=[float(v) for v in state.losses], train_seconds=float(state.seconds))
