"""Time and peak memory of `verify` on a hostile results archive: a small archive holding GiBs of zeros.

    .venv/bin/python benchmarks/bench_archive_verify.py [--gib 2]

Issue 44's probe: a 17 MB archive with 2 GiB of zeros took 4.2 GB of memory and 23 s at ed2f909 (each member
read whole). Builds, in a temporary folder, a book of one section (as tests/test_publish_results.py does), packs
its archive, and adds one member of ``--gib`` GiB of zeros twice over: once with the manifest stating a small
size (refused unread), once with its true size and sha256 (streamed and hashed, the read limit raised to fit).
Each verify runs in a child process so its peak resident memory (ru_maxrss) is its own. Targets: the refusal
reads nothing (its time is verify's first imports); the streamed check within the memory of the interpreter and
its libraries plus a few MiB. Results: benchmarks/results/archive_verify.txt (78 MiB peak both ways; 15 s to
stream 2 GiB under load).
"""

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

CHILD = """
import resource, sys, time
from pathlib import Path
from inkground_lib.publish import results
t = time.perf_counter()
problems = results.verify(Path(sys.argv[1]), [Path(sys.argv[2])], max_bytes=int(sys.argv[3]))
print(f"{time.perf_counter() - t:.2f} s, peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB, "
      f"problems: {problems}")
"""


def zeros_member(z: zipfile.ZipFile, name: str, n: int) -> str:
    """Write ``n`` zero bytes as member ``name`` in 16 MiB pieces; returns their sha256."""
    h, block = hashlib.sha256(), bytes(16 * 2**20)
    info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    with z.open(info, "w", force_zip64=True) as f:
        left = n
        while left:
            piece = block[:min(left, len(block))]
            f.write(piece)
            h.update(piece)
            left -= len(piece)
    return h.hexdigest()


def build(out: Path, items: list, manifest: dict, n: int, stated: int) -> float:
    """The packed archive ``items`` with a member of ``n`` zeros, the manifest stating ``stated`` bytes for it;
    returns the seconds taken."""
    t = time.perf_counter()
    with zipfile.ZipFile(out, "w") as z:
        for info, body in items:
            if info.filename != "MANIFEST.json":
                z.writestr(info, body)
        digest = zeros_member(z, "zeros.csv", n)
        files = manifest["files"] + [{"path": "zeros.csv", "sha256": digest, "bytes": stated}]
        z.writestr("MANIFEST.json", json.dumps(dict(manifest, files=files)))
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gib", type=float, default=2.0)
    args = ap.parse_args()
    n = int(args.gib * 2**30)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from test_publish_results import _book  # the one-section book of the tests

    from inkground_lib.publish import results

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        _, ex = _book(tmp)
        out = tmp / "r.zip"
        results.pack(out, [ex])
        with zipfile.ZipFile(out) as z:
            items = [(i, z.read(i.filename)) for i in z.infolist()]
            manifest = json.loads(z.read(results.MANIFEST))
        for what, stated in (("size stated as 3 bytes", 3), ("true size and sha256 stated", n)):
            took = build(out, items, manifest, n, stated)
            print(f"archive: {out.stat().st_size / 1e6:.1f} MB holding {n / 2**30:.2f} GiB of zeros "
                  f"(built in {took:.0f} s)")
            r = subprocess.run([sys.executable, "-c", CHILD, str(out), str(ex), str(n + 2**20)],
                               capture_output=True, text=True, check=True)
            print(f"verify, {what}: {r.stdout.strip()}")


if __name__ == "__main__":
    main()
