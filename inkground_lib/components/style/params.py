"""Style classifier settings (:class:`StyleParams`), its error type and the version of its saved record."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from inkground_lib.core.render import RenderSpec

FORMAT = "inkground-style/1"
"""Version of a saved classifier's record (in its files and at the start of its input hash)."""

PRECISIONS = ("fp32", "bf16")
"""The values of ``StyleParams.precision`` (:mod:`~inkground_lib.components.style.precision`)."""

STARTS = ("backbone", "random")
"""The values of ``StyleParams.start``: where a classifier's weights start."""

FITS = ("head", "last_stage", "all")
"""The values of ``StyleParams.fit``: what a benchmark trains (a head on frozen features; the backbone's last
stage and a new last layer; the whole network)."""


class StyleError(ValueError):
    """Bad training items, labels or a model folder that cannot be used."""


@dataclass(frozen=True)
class StyleParams:
    """Settings of the writer classifier.

    start, fit (the recipe): ``start="backbone"`` (the default) starts from inkground's writer-style backbone
    (:mod:`~inkground_lib.components.style.backbone`, trained once on writers outside every evaluation set), and
    ``fit`` says what each benchmark trains on its words: ``"head"`` (the default) a multinomial logistic head on
    the frozen backbone's features (:mod:`~inkground_lib.components.style.head`, regularisation ``head_c``, no
    epochs), ``"last_stage"`` the backbone's last stage and a new last layer for ``epochs`` epochs, ``"all"``
    the whole network. ``start="random"`` (with ``fit="all"``) is the earlier recipe: the ResNet-18 from random
    weights, 12 epochs (held-out top-1 0.14-0.16 on the book's benchmarks, 1,400 CPU-s, 2026-12-06).

    height, width: network input in pixels (rows, cols). render: the renderer settings used to draw each ink
    before it is fitted into height x width. epochs, batch_size, lr (AdamW learning rate), weight_decay
    (AdamW), seed (model init, batch order, augmentation), augment (random shifts of up to ``shift`` px),
    threads (torch CPU threads while training and predicting; 1 by default: on a shared 2-core machine two
    OpenMP threads measured 20x slower than one - spinning threads starve each other - and one thread also
    makes the float summation order, hence the weights, independent of the machine's core count),
    eval_batch_size (inference batch), precision (the arithmetic of training and inference: "fp32", the
    default on every machine, or "bf16", torch's CPU bfloat16 autocast, ~2x faster but only allowed on a CPU
    with native bfloat16: :mod:`~inkground_lib.components.style.precision`), channels_last (the network's
    tensors in torch's channels-last memory format, the default: oneDNN's fastest convolutions on CPU, 1.3x
    the contiguous layout's training rate with AVX-512 and ~1.6x with AVX2 alone, measured in
    ``benchmarks/results/style_train.txt``; the same maths summed in another order, so other weights than
    the contiguous layout's, with held-out Style within its bootstrap interval there). precision, threads
    and channels_last are part of the recipe: a model saved with other values is not reused. epochs,
    batch_size, lr, weight_decay, augment and shift are not used by ``fit="head"``. head_c (the head's
    scikit-learn ``C``): 0.1, the value the shipped backbone's 60 validation writers chose by log score among
    0.01-3 (``data/models/STYLE-BACKBONE.md``).
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
    precision: str = "fp32"
    channels_last: bool = True
    start: str = "backbone"
    fit: str = "head"
    head_c: float = 0.1
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
        if self.precision not in PRECISIONS:
            raise StyleError(f"StyleParams.precision must be one of {list(PRECISIONS)}, got {self.precision!r}")
        if not isinstance(self.channels_last, bool):
            raise StyleError(f"StyleParams.channels_last must be True or False, got {self.channels_last!r}")
        if self.start not in STARTS:
            raise StyleError(f"StyleParams.start must be one of {list(STARTS)}, got {self.start!r}")
        if self.fit not in FITS:
            raise StyleError(f"StyleParams.fit must be one of {list(FITS)}, got {self.fit!r}")
        if self.start == "random" and self.fit != "all":
            raise StyleError(f"StyleParams: a classifier from random weights trains the whole network (fit='all'), "
                             f"got fit={self.fit!r}")
        if not self.head_c > 0:
            raise StyleError(f"StyleParams.head_c must be positive, got {self.head_c}")
        if isinstance(self.render, dict):
            object.__setattr__(self, "render", RenderSpec(**self.render))

    @classmethod
    def paper(cls, **kw) -> "StyleParams":
        """The heavier from-random-weights setting once used for paper-scale runs (hundreds of pages): more
        epochs, taller input (the backbone was trained at the default 48 x 192)."""
        base = dict(height=96, width=384, epochs=30, batch_size=64, lr=1e-3, weight_decay=5e-4, shift=8,
                    start="random", fit="all",
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
