"""Speed of the Style classifier's training and inference per configuration of the same recipe (ResNet-18,
48 x 192 px, batch 32, AdamW one-cycle, seed 0): float32 (the default), float32 in channels-last layout, two
torch threads, bfloat16 autocast, bfloat16 in channels-last layout.

Data of the book's shapes: the first 784 training-split words of the synthetic candidate pages (true inks;
section 03's two large classifiers train on 784 words) and the 163 training words of the recorded set (the
third classifier). Each configuration trains ``--epochs`` epochs of the 12-epoch recipe on the 784 words (the
same schedule as the full training, so the steps cost what they cost there) and classifies ``--infer`` held-out
words; it prints images per second of training (wall clock and per CPU-second), the estimated seconds per
model (12 epochs plus the BatchNorm pass, for 784 and 163 words), inference images per second (render
included), and whether its weights after those epochs are bit-identical to the float32 recipe's. A
configuration this CPU cannot run at full speed (bf16 without native bfloat16) prints the refusal. With
``--full``, the 784- and 163-word classifiers are trained to the end per configuration and timed, not
estimated.

    .venv/bin/python benchmarks/bench_style_train.py                # ~10 min on a quiet 2-core machine
    .venv/bin/python benchmarks/bench_style_train.py --epochs 1 --configs fp32 bf16
    .venv/bin/python benchmarks/bench_style_train.py --isa avx2 --words 128 --epochs 1 --configs fp32 bf16

``--isa avx2`` runs the benchmark as on an x86 CPU without AVX-512 (GitHub's hosted runners): torch's own
kernels and oneDNN's limited to AVX2 (``ATEN_CPU_CAPABILITY=avx2``, ``ONEDNN_MAX_CPU_ISA=AVX2``); bf16, which
the library refuses there, is measured anyway to show what the refusal saves.

The header names the machine and its load (``uptime``): timings taken under load are not the machine's.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from inkground_lib.components import style  # noqa: E402
from inkground_lib.components.style.inputs import as_float, inks_darkness, random_shifts  # noqa: E402
from inkground_lib.components.style.model import StyleModel  # noqa: E402
from inkground_lib.components.style.network import build_resnet18  # noqa: E402
from inkground_lib.components.style.precision import BF16_CPU_FLAGS, check_precision, cpu_flags  # noqa: E402
from inkground_lib.core.dataset import load_dataset  # noqa: E402
from inkground_lib.evaluation.items import reference_inks, target_dataset  # noqa: E402

CONFIGS = {
    "fp32": {},
    "fp32+channels_last": {"channels_last": True},
    "fp32 threads=2": {"threads": 2},
    "bf16": {"precision": "bf16"},
    "bf16+channels_last": {"precision": "bf16", "channels_last": True},
}
BOOK_LARGE, BOOK_SMALL = 784, 163


def train_items(folder: Path, reference: str, split: str, limit: int | None = None):
    ds = target_dataset(load_dataset(folder))
    inks = reference_inks(ds, reference)
    words = [(w, p.writer) for p in ds.pages for w in p.words]
    items = [(k, wr) for k, (w, wr) in zip(inks, words) if w.split == split]
    return items[:limit] if limit else items


def digest(state: dict) -> str:
    h = hashlib.sha256()
    for k in sorted(state):
        h.update(k.encode() + state[k].contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def header() -> str:
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    flags = cpu_flags()
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if ln.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else "?"
    return (f"# benchmarks/bench_style_train.py {' '.join(sys.argv[1:])}\n"
            f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} cores, {cpu}; "
            f"native bf16: {sorted(set(BF16_CPU_FLAGS) & flags) or 'no'}; AVX2: {'avx2' in flags}; "
            f"torch {torch.__version__} ({torch.backends.cpu.get_cpu_capability()})\n"
            f"# uptime: {load}")


def time_training(items, params: style.StyleParams, epochs: int | None):
    """(wall s, CPU s, state) of ``epochs`` epochs (None: the whole training) of the recipe ``params``."""
    w0, c0 = time.perf_counter(), time.process_time()
    state = style.train_epochs(items, params, epochs=epochs)
    return time.perf_counter() - w0, time.process_time() - c0, state


def time_inference(state, n_classes: int, params: style.StyleParams, inks) -> float:
    """Images per second of :meth:`StyleModel.logits` (renders included) under the weights of ``state``."""
    model = build_resnet18(n_classes, params.seed)
    model.load_state_dict(state.model)
    sm = StyleModel(model=model, classes=[str(i) for i in range(n_classes)], params=params, input_hash="")
    sm.logits(inks[:params.eval_batch_size])  # warm-up (oneDNN's kernels are made on first use)
    t = time.perf_counter()
    sm.logits(inks)
    return len(inks) / (time.perf_counter() - t)


def pipeline_seconds(items, params: style.StyleParams) -> tuple[float, float]:
    """(CPU s to render the training images once, CPU s per epoch of making batches: float and shifts)."""
    t = time.thread_time()
    x = inks_darkness([k for k, _ in items], params)
    render = time.thread_time() - t
    gen = torch.Generator().manual_seed(0)
    t = time.thread_time()
    perm = torch.randperm(len(x), generator=gen)
    for b in range(0, len(x), params.batch_size):
        random_shifts(as_float(x[perm[b:b + params.batch_size]]), params.shift, gen)
    return render, time.thread_time() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--synth", default="data/datasets/synth", help="the synthetic candidate pages (make book)")
    ap.add_argument("--recorded", default="data/datasets/recorded", help="the recorded set (make book)")
    ap.add_argument("--epochs", type=int, default=2, help="epochs timed per configuration (of the recipe's 12)")
    ap.add_argument("--infer", type=int, default=512, help="held-out words classified per configuration")
    ap.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=list(CONFIGS))
    ap.add_argument("--full", action="store_true", help="train both classifiers to the end per configuration")
    ap.add_argument("--words", type=int, default=BOOK_LARGE, help="training words timed (estimates are for 784)")
    ap.add_argument("--isa", choices=["native", "avx2"], default="native",
                    help="avx2: torch and oneDNN limited to AVX2, as on a CPU without AVX-512")
    a = ap.parse_args()
    if a.isa == "avx2" and os.environ.get("ONEDNN_MAX_CPU_ISA") != "AVX2":  # set before torch loads: start again
        env = dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2", ATEN_CPU_CAPABILITY="avx2")
        os.execve(sys.executable, [sys.executable, *sys.argv], env)

    big = train_items(Path(a.synth), "true", "train", a.words)
    small = train_items(Path(a.recorded), "reference", "train")
    held = [k for k, _ in train_items(Path(a.synth), "true", "test", a.infer)]
    recipe = style.StyleParams()
    print(header())
    print(f"# {len(big)} training words of {len({w for _, w in big})} writers (synthetic, true inks); "
          f"{len(small)} of {len({w for _, w in small})} (recorded); {len(held)} held-out words classified; "
          f"recipe {recipe.epochs} epochs, batch {recipe.batch_size}, {recipe.height} x {recipe.width} px")
    render, batches = pipeline_seconds(big, recipe)
    print(f"# input pipeline: {render:.2f} CPU-s to render the {len(big)} images once per training, "
          f"{batches:.3f} CPU-s per epoch to make the batches (float, shifts)", flush=True)
    what = "trained to the end" if a.full else f"{a.epochs} epochs timed, 12 estimated"
    print(f"\n{'configuration':<20} {'train img/s':>11} {'img/CPU-s':>9} {'s/model 784':>11} {'s/model 163':>11} "
          f"{'infer img/s':>11}  weights vs fp32 ({what})", flush=True)
    ref = None
    for name in a.configs:
        params = replace(recipe, **CONFIGS[name])
        try:
            check_precision(params.precision, name)
        except style.StyleError as e:
            print(f"{name:<20} refused: {e}", flush=True)
            continue
        if a.isa == "avx2" and params.precision == "bf16":
            print(f"{name:<20} (refused by the library on a CPU without native bf16; measured here)", flush=True)
        wall, cpu, state = time_training(big, params, None if a.full else a.epochs)
        n_imgs = len(big) * (params.epochs if a.full else a.epochs)
        infer = time_inference(state, len({w for _, w in big}), params, held)
        if a.full:
            wall_small = time_training(small, params, None)[0]
            s_big, s_small = f"{wall:.0f}", f"{wall_small:.0f}"
        else:  # the epochs left at this rate, and the BatchNorm pass (a forward pass: ~ the inference rate)
            rate = n_imgs / wall
            s_big = f"~{params.epochs * BOOK_LARGE / rate + BOOK_LARGE / infer:.0f}"
            s_small = f"~{params.epochs * len(small) / rate + len(small) / infer:.0f}"
        d = digest(state.model)
        ref = d if name == "fp32" else ref
        same = "(the recipe)" if name == "fp32" else ("bit-identical" if d == ref else "differ") if ref else "?"
        print(f"{name:<20} {n_imgs / wall:>11.1f} {n_imgs / cpu:>9.1f} {s_big:>11} {s_small:>11} {infer:>11.1f}  "
              f"{d} {same}", flush=True)
    print(f"# uptime after: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")


if __name__ == "__main__":
    main()
