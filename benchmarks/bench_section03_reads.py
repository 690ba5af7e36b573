"""What section 03 does twice: dataset loads, photo decodes, OCR reads and Style scorings of one run (issue 32).

    python benchmarks/bench_section03_reads.py --benchmark BENCH --recorded REC --out ROOT [--systems ...]
        [--style-epochs N]

Runs :func:`inkground_lib.evaluation.run.evaluate_section` as the book's section 03 does (the benchmark against
its references and the true inks, the recorded set against its trajectories) into ``ROOT/data/runs/synth/
03_evaluation`` and ``ROOT/data/runs/recorded/03_evaluation`` (so ``benchmarks/compare_runs.py`` can compare two
ROOTs), counting in this process:

* dataset loads: manifests read and validated (``core.dataset.load_dataset``);
* photo decodes: page photos decoded whole (``core.dataset.check_photos``);
* OCR reads: renders given to the OCR engine;
* Style scorings: renders given to a writer classifier (``StyleModel.logits``; the held-out accuracy of each
  classifier counts too, the same on both sides);
* the derenderer answers (skeleton traces, tracer arrangements) made in this process and read from section 02's
  trace store (``traces.jsonl`` beside the benchmark);
* the distinct inks the systems drew and the distinct drawings among them (the same strokes in another order or
  direction: :func:`inkground_lib.core.ink.drawing_digest`, where the checkout has it).

Run it once per checkout (e.g. ``PYTHONPATH=<other checkout>`` for the code before) on the same data; the Style
classifiers train in the run (``--style-epochs``: fewer epochs for a quick count; the counts do not depend on
it). Prints one line per figure.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--benchmark", required=True)
    ap.add_argument("--recorded", default="")
    ap.add_argument("--out", required=True, help="ROOT: runs go to ROOT/data/runs/...")
    ap.add_argument("--systems", nargs="+", default=["reference", "skeleton", "tracer", "font", "box"])
    ap.add_argument("--style-epochs", type=int, default=None)
    ap.add_argument("--n-boot", type=int, default=200)
    a = ap.parse_args(argv)

    import inkground_lib
    import inkground_lib.core.dataset as dsmod
    from inkground_lib.components.ocr.rapidocr import RapidOCREngine
    from inkground_lib.components.style.model import StyleModel
    from inkground_lib.core.ink import ink_digest
    from inkground_lib.evaluation.run import evaluate_section
    from inkground_lib.evaluation.settings import EvalSettings

    counts = {"dataset loads": 0, "photo decodes": 0, "OCR reads": 0, "Style scorings": 0}

    def counting(obj, name, key, n=lambda *args, **kw: 1):
        orig = getattr(obj, name)

        def wrapped(*args, **kw):
            counts[key] += n(*args, **kw)
            return orig(*args, **kw)
        setattr(obj, name, wrapped)

    counting(dsmod, "_read_manifest", "dataset loads")
    counting(dsmod, "_check_photo_size", "photo decodes", lambda *ar, decode=False, **kw: int(bool(decode)))
    counting(RapidOCREngine, "read", "OCR reads", lambda self, images: len(images))
    counting(StyleModel, "logits", "Style scorings", lambda self, inks, *ar, **kw: len(list(inks)))

    root = Path(a.out)
    bench_run = root / "data" / "runs" / "synth" / "03_evaluation"
    rec_run = root / "data" / "runs" / "recorded" / "03_evaluation"
    settings = EvalSettings(n_boot=a.n_boot, style={} if a.style_epochs is None else {"epochs": a.style_epochs})
    t0, c0 = time.perf_counter(), time.process_time()
    bench, bench_true, rec = evaluate_section(a.benchmark, a.recorded, a.systems, bench_run, rec_run, settings,
                                              progress=False)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"code: {Path(inkground_lib.__file__).parent}")
    print(f"systems run: {', '.join(bench.runs)}; words: benchmark {len(bench.scores) // max(len(bench.runs), 1)}"
          + (f", recorded {len(rec.scores) // max(len(rec.runs), 1)}" if rec is not None else ""))
    for k, v in counts.items():
        print(f"{k}: {v}")
    inks = [ink for res in (bench, rec) if res is not None for r in res.runs.values() for ink in r.inks
            if ink is not None]
    print(f"inks drawn (valid predictions, both sets): {len(inks)}; distinct inks: {len({ink_digest(k) for k in inks})}")
    try:
        from inkground_lib.core.ink import drawing_digest
    except ImportError:
        pass
    else:
        print(f"distinct drawings (any stroke order and direction): {len({drawing_digest(k) for k in inks})}")
    from inkground_lib.components.derenderers.traces import opened_store, process_store

    own = process_store()
    sec02 = opened_store(Path(a.benchmark).parent / "traces.jsonl")
    print(f"derenderer answers made here: {dict(own.made)}; read from section 02's store: "
          f"{dict(sec02.hits) if sec02 is not None else 'no store'}")
    print(f"wall {wall:.1f} s, CPU of this process {cpu:.1f} s, load average {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
