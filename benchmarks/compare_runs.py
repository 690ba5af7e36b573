"""Compare the run outputs of two checkouts: are the numbers the same?

    python benchmarks/compare_runs.py BEFORE_ROOT AFTER_ROOT

Reads every CSV, JSON and JSONL file under ``<root>/data/runs/`` of both checkouts and compares them after
masking only the fields that record time or code identity (wall times, a model's train time, whether it was
trained now, latencies, timestamps, source-file hashes and the cache keys built from them). Prints one line
per file (same / differs, with the first difference) and a summary; exits 1 when any file differs or is
present on one side only.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

# Fields that record when or how long something ran, or which source code ran it: they differ between two
# equivalent runs by design. Nothing else is masked.
MASKED_KEYS = {"timings", "seconds", "train_seconds", "fit_seconds", "trained_now", "latency", "latency_s", "timestamp",
               "source", "code_sha256", "fingerprint", "key", "attempts", "run_seconds", "created", "request_hash"}
# "code_sha256" is the tracer's source-file hash (recorded in the benchmark manifest's derenderer config).
# "key" and "request_hash" are cache keys that hash, among the inputs, the source file of the component that
# produced a result (so that a code change recomputes it): moving code changes them by design.


def _mask(obj):
    if isinstance(obj, dict):
        return {k: ("<masked>" if k in MASKED_KEYS else _mask(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_mask(v) for v in obj]
    return obj


def _load(path: Path):
    text = path.read_text("utf-8")
    if path.suffix == ".json":
        return _mask(json.loads(text))
    if path.suffix == ".jsonl":
        # append-only logs are written in completion order (a thread pool): compare them as sorted records
        recs = [_mask(json.loads(line)) for line in text.splitlines() if line.strip()]
        return sorted(recs, key=lambda r: json.dumps(r, sort_keys=True))
    rows = list(csv.DictReader(io.StringIO(text)))
    return [{k: ("<masked>" if k in MASKED_KEYS else v) for k, v in r.items()} for r in rows]


def _first_difference(a, b, where: str = "") -> str:
    if type(a) is not type(b):
        return f"{where or '/'}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{where}/{k}: only in {'after' if k not in a else 'before'}"
            if a[k] != b[k]:
                return _first_difference(a[k], b[k], f"{where}/{k}")
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{where or '/'}: {len(a)} vs {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _first_difference(x, y, f"{where}[{i}]")
    return f"{where or '/'}: {str(a)[:80]!r} vs {str(b)[:80]!r}"


def files(root: Path) -> dict[str, Path]:
    runs = root / "data" / "runs"
    return {p.relative_to(runs).as_posix(): p for p in sorted(runs.rglob("*"))
            if p.suffix in (".csv", ".json", ".jsonl") and p.is_file()}


def compare(before: Path, after: Path) -> int:
    fa, fb = files(before), files(after)
    bad = 0
    for rel in sorted(set(fa) | set(fb)):
        if rel not in fa or rel not in fb:
            print(f"ONLY IN {'AFTER' if rel not in fa else 'BEFORE'}  {rel}")
            bad += 1
            continue
        a, b = _load(fa[rel]), _load(fb[rel])
        if a == b:
            print(f"same     {rel}")
        else:
            print(f"DIFFERS  {rel}: {_first_difference(a, b)}")
            bad += 1
    print(f"{len(set(fa) | set(fb))} files compared, {bad} differ or are missing on one side "
          f"(masked fields: {', '.join(sorted(MASKED_KEYS))})")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(compare(Path(sys.argv[1]), Path(sys.argv[2])))
