"""Benchmark of the OCR engine (RapidOCR) and the Style writer classifier on this machine.

Prints: RapidOCR words per second and share read right on rendered Hershey-script words (clean and with
2.5 % height jitter) for several render heights and batch sizes, and on the real UNIPEN words if present;
Style training time, held-out top-1 accuracy vs chance, and inference images per second, for synthetic
writers (Hershey words with a per-writer slant, width and jitter) and for the UNIPEN writers.

    .venv/bin/python benchmarks/bench_ocr_style.py                       # everything, default sizes
    .venv/bin/python benchmarks/bench_ocr_style.py --skip-ocr --writers 60 --words 25 --epochs 5
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from HersheyFonts import HersheyFonts  # noqa: E402

from inkground_lib.components import ocr, style
from inkground_lib.core.ink import as_ink  # noqa: E402
from inkground_lib.core.render import RenderSpec, render_ink  # noqa: E402

UNIPEN = Path(__file__).resolve().parents[1].parent / "shared/data/unipen_cursive/unipen_cursive_dev.json"
FALLBACK_WORDS = ("the and you that was for are with his they one have this from had not but what all were "
                  "when your can said there use each which she how their will other about out many then them "
                  "these some her would make like him into time has look two more write see number way could "
                  "people than first water been call who now find long down day did get come made may part "
                  "over new sound take only little work know place year live back give most very after thing "
                  "just name good sentence think great where help through much before line right mean same "
                  "tell follow came want show also around form three small large must big even such because "
                  "turn here why ask went read need land different home move kind hand picture again change "
                  "play spell away animal house point page letter mother answer found study still learn").split()

_FONT = HersheyFonts()
_FONT.load_default_font("scripts")
_FONT.normalize_rendering(100)


def hershey_ink(text: str, slant: float = 0.0, sx: float = 1.0, jitter: float = 0.0, rng=None):
    """Hershey 'scripts' word, y down; x stretched by sx and sheared by slant (x -= slant * y); Gaussian
    point jitter of ``jitter`` x the 100-unit font height."""
    strokes = []
    for seg in _FONT.strokes_for_text(text):
        a = np.array(seg, float)
        a[:, 1] *= -1
        a[:, 0] = a[:, 0] * sx - slant * a[:, 1]
        if jitter:
            a = a + rng.normal(0.0, jitter * 100.0, a.shape)
        strokes.append(a)
    return as_ink(strokes)


def unipen_samples():
    if not UNIPEN.is_file():
        return None
    return json.loads(UNIPEN.read_text())["samples"]


def vocabulary(samples) -> list[str]:
    if samples:
        return sorted({s["text"] for s in samples})
    return sorted(set(FALLBACK_WORDS))


def share_right(out, words) -> float:
    return float(np.mean([o.casefold() == w.casefold() for o, w in zip(out, words)]))


def bench_ocr(words, samples, reps: int) -> None:
    print(f"== RapidOCR (recognition only), {len(words)} Hershey-script words", flush=True)
    t = time.perf_counter()
    eng = ocr.make_engine("rapidocr", progress=False)
    print(f"load: {time.perf_counter() - t:.2f} s; model {ocr.rapidocr_rec_model().name}")
    rng = np.random.default_rng(0)
    clean = [hershey_ink(w) for w in words]
    jittered = [hershey_ink(w, jitter=0.025, rng=rng) for w in words]
    base = [render_ink(k) for k in clean]
    eng.read(base[:8])  # warm-up
    for bs in (1, 4, 16, 64):
        e = ocr.make_engine("rapidocr", batch_size=bs, progress=False)
        best = np.inf
        for _ in range(reps):
            t = time.perf_counter()
            out = e.read(base)
            best = min(best, time.perf_counter() - t)
        print(f"batch_size={bs:3d}: {len(base) / best:6.1f} words/s (best of {reps}), right {share_right(out, words):.3f}",
              flush=True)
    print("render height (pen and padding scaled from the default 64 / 3 / 6): share right, clean / 2.5% jitter")
    for h in (32, 48, 64, 96, 128):
        spec = RenderSpec(height=h, pen_width=3.0 * h / 64, padding=max(2, round(6 * h / 64)))
        r = [share_right(eng.read([render_ink(k, spec) for k in inks]), words) for inks in (clean, jittered)]
        print(f"  height {h:3d}: {r[0]:.3f} / {r[1]:.3f}", flush=True)
    print("pen width at height 64: share right, clean / 2.5% jitter")
    for pw in (2.0, 3.0, 4.0, 5.0):
        spec = RenderSpec(height=64, pen_width=pw, padding=6)
        r = [share_right(eng.read([render_ink(k, spec) for k in inks]), words) for inks in (clean, jittered)]
        print(f"  pen {pw:.0f}: {r[0]:.3f} / {r[1]:.3f}", flush=True)
    if samples:
        inks = [as_ink(s["strokes"]) for s in samples]
        texts = [s["text"] for s in samples]
        t = time.perf_counter()
        out = eng.read([render_ink(k) for k in inks])
        dt = time.perf_counter() - t
        print(f"UNIPEN real cursive ({len(inks)} words, default render): right {share_right(out, texts):.3f}, "
              f"{len(inks) / dt:.1f} words/s incl. rendering", flush=True)


def synthetic_writers(n_writers: int, n_words: int, words, seed: int):
    """n_writers synthetic writers, each writing n_words words with its own slant, width and jitter."""
    rng = np.random.default_rng(seed)
    items = []
    for w in range(n_writers):
        slant, sx, jit = rng.uniform(-0.3, 0.6), rng.uniform(0.75, 1.4), rng.uniform(0.005, 0.02)
        for text in rng.choice(words, n_words, replace=False):
            items.append((hershey_ink(str(text), slant + rng.normal(0, 0.03), sx * rng.uniform(0.97, 1.03), jit,
                                      rng), f"w{w:03d}"))
    return items


def bench_style_on(name, items, params, out_root: Path) -> None:
    labels = [lab for _, lab in items]
    tr, te = style.split_by_writer(labels, 0.75, params.seed)
    train = [items[i] for i in tr]
    test = [items[i] for i in te]
    k = len(set(labels))
    print(f"== Style on {name}: {k} writers, {len(train)} train / {len(test)} held-out items; "
          f"input {params.height}x{params.width}, epochs {params.epochs}, batch {params.batch_size}, "
          f"augment {params.augment}", flush=True)
    m = style.train_style(train, params, out_root / name, progress=True)
    print(f"training: {m.train_seconds:.1f} s ({len(train) * params.epochs / m.train_seconds:.1f} images/s); "
          f"losses {[round(v, 3) for v in m.losses]}")
    t = time.perf_counter()
    ev = style.evaluate_classifier(m, test)
    dt = time.perf_counter() - t
    print(f"held-out top-1 {ev.top1:.3f} vs chance {ev.chance:.3f}; mean true-writer probability "
          f"{ev.mean_true_proba:.3f}; inference {len(test) / dt:.1f} images/s (incl. rendering)")
    t = time.perf_counter()
    m2 = style.train_style(train, params, out_root / name, progress=False)
    print(f"reuse: second call loaded={not m2.trained} in {time.perf_counter() - t:.2f} s", flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--skip-ocr", action="store_true")
    ap.add_argument("--skip-style", action="store_true")
    ap.add_argument("--writers", type=int, default=60)
    ap.add_argument("--words", type=int, default=25)
    ap.add_argument("--epochs", type=int, default=None, help="override StyleParams().epochs")
    ap.add_argument("--height", type=int, default=None)
    ap.add_argument("--width", type=int, default=None)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--no-unipen", action="store_true")
    ap.add_argument("--out", type=Path, default=None, help="model folder (default: a temporary folder)")
    a = ap.parse_args(argv)
    samples = None if a.no_unipen else unipen_samples()
    words = vocabulary(samples)
    if not a.skip_ocr:
        bench_ocr(words, samples, a.reps)
    if not a.skip_style:
        over = {k: v for k, v in (("epochs", a.epochs), ("height", a.height), ("width", a.width)) if v is not None}
        params = replace(style.StyleParams(), **over)
        with tempfile.TemporaryDirectory() as tmp:
            root = a.out or Path(tmp)
            bench_style_on("synthetic", synthetic_writers(a.writers, a.words, words, 0), params, root)
            if samples:
                items = [(as_ink(s["strokes"]), s["writer_id"]) for s in samples]
                bench_style_on("unipen", items, params, root)


if __name__ == "__main__":
    main()
