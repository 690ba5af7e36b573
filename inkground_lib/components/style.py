"""Style: a ResNet-18 writer classifier over renders of inks, and the Style score of a prediction.

Holds the model, its input image (``ink_tensor``), seeded deterministic training (``train_style``), loading,
the Style scores (``style_scores``) and the classifier's evaluation. The design page of the book has the
details.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Iterable, Sequence

import cv2
import numpy as np
import torch
from tqdm import tqdm

from inkground_lib.core.files import atomic_write_bytes, atomic_write_json, sha256_file
from inkground_lib.core.ink import InkLike, as_ink
from inkground_lib.core.render import RenderSpec, render_ink

__all__ = ["StyleParams", "StyleModel", "ClassifierEval", "StyleError", "train_style", "load_style",
           "style_scores", "evaluate_classifier", "ink_tensor", "inks_tensor", "build_resnet18",
           "expected_param_count", "split_by_writer", "items_hash"]

FORMAT = "inkground-style/1"
WEIGHTS_FILE = "style_model.safetensors"
META_FILE = "style_model.json"


class StyleError(ValueError):
    """Bad training items, labels or a model folder that cannot be used."""


@dataclass(frozen=True)
class StyleParams:
    """Settings of the writer classifier (defaults: CPU-friendly; 12 epochs take ~35 s on 165 words of 36
    writers and reach top-1 0.17 on held-out words (chance 0.028), where 5 epochs reached 0.11).

    height, width: network input in pixels (rows, cols). render: the renderer settings used to draw each ink
    before it is fitted into height x width. epochs, batch_size, lr (AdamW learning rate), weight_decay
    (AdamW), seed (model init, batch order, augmentation), augment (random shifts of up to ``shift`` px),
    threads (torch CPU threads while training and predicting; 1 by default: on a shared 2-core machine two
    OpenMP threads measured 20x slower than one - spinning threads starve each other - and one thread also
    makes the float summation order, hence the weights, independent of the machine's core count),
    eval_batch_size (inference batch).
    """

    height: int = 48
    width: int = 192
    epochs: int = 12
    batch_size: int = 32
    lr: float = 2e-3
    weight_decay: float = 1e-4
    seed: int = 0
    augment: bool = True
    shift: int = 4
    threads: int = 1
    eval_batch_size: int = 64
    render: RenderSpec = field(default_factory=RenderSpec)

    def __post_init__(self):
        for name in ("height", "width", "epochs", "batch_size", "threads", "eval_batch_size"):
            if int(getattr(self, name)) < 1:
                raise StyleError(f"StyleParams.{name} must be >= 1, got {getattr(self, name)}")
        if self.height < 32 or self.width < 32:
            raise StyleError(f"StyleParams: the input must be at least 32 x 32 px (ResNet downsamples 32x), "
                             f"got {self.height} x {self.width}")
        if not self.lr > 0:
            raise StyleError(f"StyleParams.lr must be positive, got {self.lr}")
        if self.weight_decay < 0 or self.shift < 0:
            raise StyleError("StyleParams.weight_decay and shift must be >= 0")
        if isinstance(self.render, dict):
            object.__setattr__(self, "render", RenderSpec(**self.render))

    @classmethod
    def paper(cls, **kw) -> "StyleParams":
        """Heavier setting for paper-scale runs (hundreds of pages): more epochs, taller input."""
        base = dict(height=96, width=384, epochs=30, batch_size=64, lr=1e-3, weight_decay=5e-4, shift=8,
                    render=RenderSpec(height=96, pen_width=4.0, padding=8, max_width=1536))
        base.update(kw)
        return cls(**base)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "StyleParams":
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise StyleError(f"StyleParams: unknown fields {sorted(unknown)}")
        d = dict(d)
        if isinstance(d.get("render"), dict):
            d["render"] = RenderSpec(**d["render"])
        return cls(**d)


# ----------------------------------------------------------------------------------------------------------
# model


def quiet_notebook_progress() -> None:
    """Import ``tqdm.auto`` once without the warning it prints inside a Jupyter kernel (TqdmWarning "IProgress
    not found", ipywidgets being absent). transformers imports it through huggingface_hub, whose progress bars
    are for hub downloads that never happen here; the warning would only put the build machine's path into
    the executed notebooks. Called when this module is imported: a classifier trained in a process pool is
    unpickled in the notebook's kernel, which imports this module (the class) before transformers (the
    model), so the warn-once import has happened quietly by then."""
    import warnings

    from tqdm import TqdmWarning

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=TqdmWarning, message="IProgress not found")
        import tqdm.auto  # noqa: F401


quiet_notebook_progress()


def import_transformers():
    """``transformers`` (imported lazily: it is heavy), after :func:`quiet_notebook_progress`."""
    quiet_notebook_progress()
    import transformers

    return transformers


def build_resnet18(n_classes: int, seed: int = 0):
    """A randomly initialised 1-channel ResNet-18 (transformers) with ``n_classes`` outputs, seeded."""
    with _TORCH_STATE_LOCK:  # transformers' lazy module is not safe to resolve from two threads at once
        transformers = import_transformers()
        ResNetConfig, ResNetForImageClassification = (transformers.ResNetConfig,
                                                      transformers.ResNetForImageClassification)

    if int(n_classes) < 2:
        raise StyleError(f"a writer classifier needs at least 2 writers, got {n_classes}")
    cfg = ResNetConfig(num_channels=1, embedding_size=64, hidden_sizes=[64, 128, 256, 512], depths=[2, 2, 2, 2],
                       layer_type="basic", hidden_act="relu", downsample_in_first_stage=False,
                       num_labels=int(n_classes))
    with _torch_state(None, seed):
        model = ResNetForImageClassification(cfg)
    return model


def expected_param_count(n_classes: int, channels: int = 1) -> int:
    """torchvision resnet18's parameter count for ``channels`` inputs and ``n_classes`` outputs:
    11,689,512 (3 channels, 1000 classes) - 64*3*7*7 + 64*channels*7*7 - (512*1000 + 1000) + 512*K + K."""
    return 11_689_512 - 64 * 3 * 7 * 7 + 64 * channels * 7 * 7 - (512 * 1000 + 1000) + 512 * n_classes + n_classes


_TORCH_STATE_LOCK = threading.RLock()
"""torch's thread count, seed and deterministic flags are global to the process: blocks that set them run one
at a time (the Style classifiers' epoch threads assemble their models in one process); transformers' first
lazy imports are made under it too (two threads resolving ``transformers.ResNetConfig`` at once: one got an
AttributeError)."""


@contextlib.contextmanager
def _torch_state(threads: int | None, seed: int | None):
    """Seed torch, enable deterministic algorithms and set CPU threads for the block; restore afterwards.
    One such block runs at a time in a process (:data:`_TORCH_STATE_LOCK`)."""
    with _TORCH_STATE_LOCK:
        yield from _torch_state_unlocked(threads, seed)


def _torch_state_unlocked(threads: int | None, seed: int | None):
    old_threads = torch.get_num_threads()
    old_det = torch.are_deterministic_algorithms_enabled()
    old_fill = torch.utils.deterministic.fill_uninitialized_memory
    try:
        if threads is not None:
            torch.set_num_threads(int(threads))
        torch.use_deterministic_algorithms(True)
        # deterministic mode also fills every new tensor with NaN (a guard for code reading memory it never
        # wrote); 7% of a training step, and the weights are bit-identical without it (measured)
        torch.utils.deterministic.fill_uninitialized_memory = False
        if seed is not None:
            torch.manual_seed(int(seed))
        yield
    finally:
        torch.utils.deterministic.fill_uninitialized_memory = old_fill
        torch.use_deterministic_algorithms(old_det)
        torch.set_num_threads(old_threads)


# ----------------------------------------------------------------------------------------------------------
# input images


def ink_tensor(ink: InkLike, params: StyleParams = StyleParams()) -> np.ndarray:
    """The network input for one ink: float32 (1, height, width), 1 = ink, 0 = paper (see module doc); equal to
    :func:`ink_darkness` / 255."""
    return ink_darkness(ink, params).astype(np.float32) / np.float32(255.0)


def ink_darkness(ink: InkLike, params: StyleParams = StyleParams()) -> np.ndarray:
    """The network input for one ink in bytes: uint8 (1, height, width), 255 - the render's grey level, 0 =
    paper (a quarter of :func:`ink_tensor`'s memory: training keeps every image this way)."""
    img = render_ink(as_ink(ink), params.render)
    H, W = int(params.height), int(params.width)
    h, w = img.shape
    s = min(H / h, W / w)
    if s != 1.0:
        nh, nw = max(1, min(H, int(round(h * s)))), max(1, min(W, int(round(w * s))))
        img = cv2.resize(img, (nw, nh), interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR)
        h, w = img.shape
    out = np.zeros((1, H, W), np.uint8)
    y0, x0 = (H - h) // 2, (W - w) // 2
    out[0, y0:y0 + h, x0:x0 + w] = 255 - img
    return out


def inks_tensor(inks: Sequence[InkLike], params: StyleParams = StyleParams(), where: str = "ink") -> torch.Tensor:
    """Stack of :func:`ink_tensor` as a float32 tensor (n, 1, height, width)."""
    return as_float(inks_darkness(inks, params, where))


def inks_darkness(inks: Sequence[InkLike], params: StyleParams = StyleParams(), where: str = "ink") -> torch.Tensor:
    """Stack of :func:`ink_darkness` as a uint8 tensor (n, 1, height, width)."""
    arrs = [ink_darkness(as_ink(k, f"{where} {i}"), params) for i, k in enumerate(inks)]
    if not arrs:
        return torch.zeros((0, 1, params.height, params.width), dtype=torch.uint8)
    return torch.from_numpy(np.stack(arrs))


def as_float(x: torch.Tensor) -> torch.Tensor:
    """uint8 darkness (:func:`inks_darkness`) -> the float32 network input in [0, 1] (x / 255)."""
    return x.to(torch.float32) / 255.0


def _augment(x: torch.Tensor, shift: int, gen: torch.Generator) -> torch.Tensor:
    """Shift each image by an integer offset in [-shift, shift] (rows and cols), filling with paper (0)."""
    if shift <= 0:
        return x
    n, _, H, W = x.shape
    padded = torch.nn.functional.pad(x, (shift, shift, shift, shift))
    off = torch.randint(0, 2 * shift + 1, (n, 2), generator=gen)
    out = torch.empty_like(x)
    for i in range(n):
        dy, dx = int(off[i, 0]), int(off[i, 1])
        out[i] = padded[i, :, dy:dy + H, dx:dx + W]
    return out


# ----------------------------------------------------------------------------------------------------------
# items, hashing, split


def _check_items(items) -> tuple[list, list[str]]:
    inks, labels = [], []
    for i, it in enumerate(items):
        try:
            ink, label = it
        except (TypeError, ValueError):
            raise StyleError(f"training item {i}: expected an (ink, writer_label) pair") from None
        if not isinstance(label, str) or not label:
            raise StyleError(f"training item {i}: the writer label must be a non-empty str, got {label!r}")
        inks.append(as_ink(ink, f"training item {i} ink"))
        labels.append(label)
    return inks, labels


def items_hash(inks: Iterable[InkLike], labels: Iterable[str]) -> str:
    """SHA-256 over the labels and the x, y coordinates (float64) of every stroke, in order (t is ignored:
    the renderer does not use it)."""
    h = hashlib.sha256(FORMAT.encode())
    for ink, lab in zip(inks, labels):
        ink = as_ink(ink)
        h.update(b"\x00W" + lab.encode("utf-8") + b"\x00" + len(ink).to_bytes(4, "little"))
        for s in ink.strokes:
            xy = np.ascontiguousarray(s[:, :2], dtype="<f8")
            h.update(len(xy).to_bytes(4, "little") + xy.tobytes())
    return h.hexdigest()


def split_by_writer(labels: Sequence[str], train_share: float = 0.75, seed: int = 0) -> tuple[list[int], list[int]]:
    """Seeded per-writer split of item indices into (train, held-out).

    For each writer, round(train_share * n) of its n items (at least 1, and at most n - 1 when n >= 2) go
    to train, chosen by a permutation seeded from ``seed`` and the writer label; the rest are held out.
    Both lists are sorted.
    """
    if not 0 < train_share < 1:
        raise StyleError(f"split_by_writer: train_share must be in (0, 1), got {train_share}")
    by: dict[str, list[int]] = {}
    for i, lab in enumerate(labels):
        by.setdefault(lab, []).append(i)
    train, test = [], []
    for lab in sorted(by):
        idx = by[lab]
        n = len(idx)
        k = n if n == 1 else min(max(int(round(train_share * n)), 1), n - 1)
        sub = int.from_bytes(hashlib.sha256(f"{seed}:{lab}".encode()).digest()[:8], "little")
        perm = np.random.default_rng(sub).permutation(n)
        train += [idx[j] for j in perm[:k]]
        test += [idx[j] for j in perm[k:]]
    return sorted(train), sorted(test)


# ----------------------------------------------------------------------------------------------------------
# model object


@dataclass
class StyleModel:
    """A trained writer classifier: the network, its classes (sorted writer labels) and how it was made.

    ``trained`` is True when this object was trained by the call that returned it, False when it was
    loaded from ``out_dir``. ``losses`` = mean training loss per epoch; ``train_seconds`` = time it took.
    """

    model: object
    classes: list[str]
    params: StyleParams
    input_hash: str
    trained: bool = False
    losses: list[float] = field(default_factory=list)
    train_seconds: float = 0.0
    out_dir: Path | None = None

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    def n_parameters(self) -> int:
        return int(sum(p.numel() for p in self.model.parameters()))

    def class_index(self, label: str, where: str = "label") -> int:
        try:
            return self.classes.index(label)
        except ValueError:
            raise StyleError(f"{where}: writer {label!r} is not one of the classifier's "
                             f"{len(self.classes)} classes") from None

    def logits(self, inks: Sequence[InkLike], progress: bool = False) -> np.ndarray:
        """Raw class scores (n, K), float64, in :attr:`classes` order; batched, eval mode, no gradients."""
        inks = list(inks)
        out = np.zeros((len(inks), self.n_classes))
        bs = int(self.params.eval_batch_size)
        self.model.eval()
        with _torch_state(self.params.threads, None), torch.no_grad():
            for b in tqdm(range(0, len(inks), bs), desc="Style", unit="batch", leave=False,
                          disable=not progress or len(inks) <= bs):
                x = inks_tensor(inks[b:b + bs], self.params, where="ink")
                out[b:b + len(x)] = self.model(pixel_values=x).logits.double().numpy()
        return out

    def proba(self, inks: Sequence[InkLike], progress: bool = False) -> np.ndarray:
        """Softmax probabilities (n, K), float64, rows summing to 1, in :attr:`classes` order."""
        z = self.logits(inks, progress)
        if len(z) == 0:
            return z
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)

    def predict(self, inks: Sequence[InkLike]) -> list[str]:
        """The most probable writer of each ink."""
        return [self.classes[int(i)] for i in np.argmax(self.logits(inks), axis=1)]


def style_scores(model: StyleModel, inks: Sequence[InkLike], true_labels: Sequence[str],
                 progress: bool = False) -> np.ndarray:
    """Style of each ink: the classifier's softmax probability of its true writer, in [0, 1], shape (n,).

    Invalid or missing outputs should be passed as an empty ink (blank render), per the design's rule.
    """
    inks, true_labels = list(inks), list(true_labels)
    if len(inks) != len(true_labels):
        raise StyleError(f"style_scores: {len(inks)} inks but {len(true_labels)} labels")
    idx = [model.class_index(lab, f"style_scores label {i}") for i, lab in enumerate(true_labels)]
    p = model.proba(inks, progress)
    return p[np.arange(len(idx)), idx] if idx else np.zeros(0)


@dataclass(frozen=True)
class ClassifierEval:
    """top1 = share of items whose most probable writer is the true one; chance = 1 / n_classes;
    mean_true_proba = mean probability of the true writer (the mean Style of these items)."""

    top1: float
    chance: float
    n: int
    n_classes: int
    mean_true_proba: float

    def to_dict(self) -> dict:
        return asdict(self)


def evaluate_classifier(model: StyleModel, items: Sequence[tuple[InkLike, str]],
                        progress: bool = False) -> ClassifierEval:
    """Top-1 accuracy, chance level (1/K) and mean true-writer probability on ``items`` (ink, writer)."""
    inks, labels = _check_items(items)
    if not inks:
        raise StyleError("evaluate_classifier: no items")
    idx = np.array([model.class_index(lab, f"evaluate_classifier item {i}") for i, lab in enumerate(labels)])
    p = model.proba(inks, progress)
    return ClassifierEval(top1=float(np.mean(np.argmax(p, axis=1) == idx)), chance=1.0 / model.n_classes,
                          n=len(inks), n_classes=model.n_classes,
                          mean_true_proba=float(np.mean(p[np.arange(len(idx)), idx])))


# ----------------------------------------------------------------------------------------------------------
# training, saving, loading


def _recalibrate_batchnorm(model, x: torch.Tensor, bs: int) -> None:
    """Replace BatchNorm running statistics by their exact average over the (unaugmented) training images
    ``x`` (uint8 darkness, :func:`inks_darkness`).

    Short CPU trainings take few optimiser steps, too few for the running averages (momentum 0.1) to
    forget their initial values (mean 0, variance 1); eval-mode outputs are then near chance. One pass in
    train mode with cumulative averaging (momentum None) and no gradients fixes the statistics; the weights
    are not touched.
    """
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    saved = [m.momentum for m in bns]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    with torch.no_grad():
        for b in range(0, len(x), bs):
            xb = x[b:b + bs]
            if len(xb) > 1:
                model(pixel_values=as_float(xb))
    for m, mom in zip(bns, saved):
        m.momentum = mom


def _meta_matches(meta: dict, params: StyleParams, h: str) -> bool:
    return (meta.get("format") == FORMAT and meta.get("input_hash") == h
            and meta.get("params") == json.loads(json.dumps(params.to_dict())))


def load_style(out_dir: str | Path) -> StyleModel:
    """Load a model written by :func:`train_style`; raises StyleError naming the file at fault."""
    out_dir = Path(out_dir)
    mp, wp = out_dir / META_FILE, out_dir / WEIGHTS_FILE
    try:
        meta = json.loads(mp.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StyleError(f"{mp}: no style model here") from None
    except json.JSONDecodeError as e:
        raise StyleError(f"{mp}: not valid JSON ({e})") from None
    if meta.get("format") != FORMAT:
        raise StyleError(f"{mp}: format {meta.get('format')!r}, expected {FORMAT!r}")
    if not wp.is_file():
        raise StyleError(f"{wp}: weights file missing")
    if sha256_file(wp) != meta.get("weights_sha256"):
        raise StyleError(f"{wp}: weights do not match the SHA-256 recorded in {mp.name}")
    from safetensors.torch import load_file

    params = StyleParams.from_dict(meta["params"])
    classes = list(meta["classes"])
    model = build_resnet18(len(classes), params.seed)
    state = load_file(str(wp))
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise StyleError(f"{wp}: weights do not fit the model (missing {list(missing)[:3]}, "
                         f"unexpected {list(unexpected)[:3]})")
    model.eval()
    return StyleModel(model=model, classes=classes, params=params, input_hash=meta["input_hash"], trained=False,
                      losses=list(meta.get("losses", [])), train_seconds=float(meta.get("train_seconds", 0.0)),
                      out_dir=out_dir)


def train_style(train_items: Sequence[tuple[InkLike, str]], params: StyleParams = StyleParams(),
                out_dir: str | Path | None = None, progress: bool = True) -> StyleModel:
    """Train the writer classifier on ``train_items`` = [(ink, writer_label), ...] (see module doc).
    ``progress``: a tqdm bar of the optimiser steps.

    With ``out_dir``: if it already holds a model whose input hash (items in order) and params equal these,
    that model is loaded and returned (``trained`` False); otherwise the new model is trained and written
    there (weights first, then the JSON record, each atomically). ``out_dir=None`` trains without saving.
    """
    if not isinstance(params, StyleParams):
        raise StyleError(f"train_style: params must be StyleParams, got {type(params).__name__}")
    inks, labels = _check_items(train_items)
    classes = sorted(set(labels))
    if len(classes) < 2:
        raise StyleError(f"train_style: need items from at least 2 writers, got {len(classes)}")
    if out_dir is not None:
        saved = saved_style(out_dir, train_items, params)
        if saved is not None:
            return saved

    state = train_epochs(train_items, params, progress=progress)
    sm = style_model_from_state(state, train_items, params)
    sm.out_dir = None if out_dir is None else Path(out_dir)
    if out_dir is not None:
        save_style(sm, out_dir, len(inks))
    return sm


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
    trains one epoch per job and keeps each state on disk (:func:`save_checkpoint`), so a kill loses at most
    the epoch in progress. After the last epoch the BatchNorm statistics are recalibrated over the training
    images. ``progress``: see :func:`train_style`."""
    inks, labels = _check_items(train_items)
    classes = sorted(set(labels))
    if len(classes) < 2:
        raise StyleError(f"train_style: need items from at least 2 writers, got {len(classes)}")
    first = 0 if state is None else int(state.epoch)
    last = params.epochs if epochs is None else min(params.epochs, first + int(epochs))
    t0 = time.perf_counter()
    y = torch.tensor([classes.index(lab) for lab in labels], dtype=torch.long)
    x = inks_darkness(inks, params, where="training item")  # uint8; each batch is made float below
    model = build_resnet18(len(classes), params.seed)
    losses: list[float] = [] if state is None else [float(v) for v in state.losses]
    with _torch_state(params.threads, params.seed):
        gen = torch.Generator().manual_seed(int(params.seed))
        # fused: one kernel for all 62 tensors (~100x faster than the per-tensor loop on CPU); same maths
        opt = torch.optim.AdamW(model.parameters(), lr=params.lr, weight_decay=params.weight_decay, fused=True)
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
        bar = tqdm(total=steps, initial=first * max(1, -(-n // bs)), desc="Style training", unit="batch",
                   disable=not progress, leave=False)
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
                    xb = _augment(xb, params.shift, gen)
                loss = torch.nn.functional.cross_entropy(model(pixel_values=xb).logits, y[idx])
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
            _recalibrate_batchnorm(model, x, int(params.eval_batch_size))
    return TrainState(epoch=last, model=model.state_dict(), optimizer=opt.state_dict(),
                      scheduler=None if sched is None else sched.state_dict(), generator=gen.get_state(),
                      losses=losses, seconds=(0.0 if state is None else float(state.seconds))
                      + time.perf_counter() - t0)


def style_model_from_state(state: TrainState, train_items: Sequence[tuple[InkLike, str]],
                           params: StyleParams = StyleParams()) -> StyleModel:
    """The trained classifier (``trained`` True, in eval mode) of a finished training's state."""
    inks, labels = _check_items(train_items)
    if int(state.epoch) != int(params.epochs):
        raise StyleError(f"style_model_from_state: the training is at epoch {state.epoch} of {params.epochs}")
    classes = sorted(set(labels))
    model = build_resnet18(len(classes), params.seed)
    model.load_state_dict(state.model)
    model.eval()
    return StyleModel(model=model, classes=classes, params=params, input_hash=items_hash(inks, labels),
                      trained=True, losses=[float(v) for v in state.losses], train_seconds=float(state.seconds))


CHECKPOINT_FILE = "style_training.pt"
"""A training's last state in its model folder (:func:`save_checkpoint`); removed when the model is saved."""


def save_checkpoint(out_dir: str | Path, state: TrainState, train_items: Sequence[tuple[InkLike, str]],
                    params: StyleParams = StyleParams()) -> Path:
    """Write ``state`` to ``out_dir/style_training.pt`` (atomically, with the input hash and params it
    belongs to)."""
    import io

    inks, labels = _check_items(train_items)
    buf = io.BytesIO()
    torch.save({"format": FORMAT, "input_hash": items_hash(inks, labels), "params": params.to_dict(),
                "state": asdict(state)}, buf)
    return atomic_write_bytes(Path(out_dir) / CHECKPOINT_FILE, buf.getvalue())


def load_checkpoint(out_dir: str | Path, train_items: Sequence[tuple[InkLike, str]],
                    params: StyleParams = StyleParams()) -> TrainState | None:
    """The state saved by :func:`save_checkpoint` for these items and params, or None (absent, another
    training's, or damaged: the training starts over). Read with ``weights_only`` (tensors and plain data;
    nothing in the file is run)."""
    p = Path(out_dir) / CHECKPOINT_FILE
    if not p.is_file():
        return None
    inks, labels = _check_items(train_items)
    try:
        d = torch.load(p, map_location="cpu", weights_only=True)
        if not (isinstance(d, dict) and d.get("format") == FORMAT and d.get("input_hash") == items_hash(inks, labels)
                and d.get("params") == json.loads(json.dumps(params.to_dict()))):
            return None
        state = TrainState(**d["state"])
    except Exception:  # a torn or foreign file: start over rather than fail a long run
        return None
    return state if 0 < int(state.epoch) < int(params.epochs) else None


def saved_style(out_dir: str | Path, train_items: Sequence[tuple[InkLike, str]],
                params: StyleParams = StyleParams()) -> StyleModel | None:
    """The model in ``out_dir`` if it was trained on exactly ``train_items`` (in order) with ``params``
    (``trained`` False), else None (absent, other inputs, or damaged: the caller retrains)."""
    inks, labels = _check_items(train_items)
    mp = Path(out_dir) / META_FILE
    if not mp.is_file():
        return None
    try:
        meta = json.loads(mp.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, OSError, UnicodeDecodeError):
        return None
    if not (isinstance(meta, dict) and _meta_matches(meta, params, items_hash(inks, labels))):
        return None
    try:
        return load_style(out_dir)
    except StyleError:
        return None


def save_style(sm: StyleModel, out_dir: str | Path, n_items: int) -> None:
    """Write ``sm`` to ``out_dir`` (weights first, then the JSON record, each atomically) and point
    ``sm.out_dir`` there; :func:`load_style` and :func:`saved_style` read it back."""
    out_dir = Path(out_dir)
    sm.out_dir = out_dir
    import safetensors
    from safetensors.torch import save

    transformers = import_transformers()

    state = {k: v.detach().contiguous().clone() for k, v in sm.model.state_dict().items()}
    data = save(state, metadata={"format": FORMAT})
    wp = atomic_write_bytes(out_dir / WEIGHTS_FILE, data)
    meta = {"format": FORMAT, "params": sm.params.to_dict(), "classes": sm.classes, "input_hash": sm.input_hash,
            "n_items": n_items, "losses": [float(v) for v in sm.losses], "train_seconds": float(sm.train_seconds),
            "weights_sha256": sha256_file(wp), "n_parameters": sm.n_parameters(),
            "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                         "safetensors": safetensors.__version__}}
    atomic_write_json(out_dir / META_FILE, meta)
    (out_dir / CHECKPOINT_FILE).unlink(missing_ok=True)  # the finished training's last state, if it was kept
