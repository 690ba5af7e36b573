"""Prediction cache and API adapter overheads (prints figures; not a test).

* append_record (one line, flush, fsync) per record, and load_cache of the resulting file;
* run_predictions through the real openai SDK against the loopback fake server (no delay): per-request
  overhead of the adapter + cache at concurrency 1 and 4;
* a rerun that asks nothing (hashing + loading only).

Usage: .venv/bin/python benchmarks/bench_cache.py [n_records]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from fakeserver import FakeServer  # noqa: E402

from inkground_lib.evaluation import asking, cache
from inkground_lib.evaluation.systems.registry import make_system


def main(n: int = 2000) -> None:
    from test_cache import REG, make_items

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        items = make_items(n)
        box = make_system("box")
        path = tmp / "box.jsonl"
        t = time.perf_counter()
        for it in items:
            cache.append_record(path, cache.make_record(box, it, box.request_key(it), box.predict(it)))
        dt = time.perf_counter() - t
        print(f"append_record + fsync: {dt / n * 1e3:.3f} ms per record ({n} records, "
              f"{path.stat().st_size / n:.0f} bytes each)")
        t = time.perf_counter()
        got = cache.load_cache(path)
        print(f"load_cache: {(time.perf_counter() - t) * 1e3:.1f} ms for {len(got)} records")

        m = min(n, 400)
        with FakeServer() as srv:
            os.environ.update(T_KEY="sk-bench", T_OPENAI_URL=srv.openai_url)
            for conc in (1, 4):
                sysm = make_system("oa", registry=REG)
                p = tmp / f"oa{conc}.jsonl"
                t = time.perf_counter()
                asking.run_predictions(sysm, items[:m], p, concurrency=conc, progress=False)
                dt = time.perf_counter() - t
                print(f"run_predictions (openai SDK, fake server, concurrency {conc}): "
                      f"{dt / m * 1e3:.2f} ms per request ({m} requests)")
            hits = srv.hits()
            t = time.perf_counter()
            asking.run_predictions(sysm, items[:m], p, concurrency=4, progress=False)
            print(f"rerun with everything cached: {(time.perf_counter() - t) * 1e3:.1f} ms for {m} items, "
                  f"{srv.hits() - hits} requests")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
