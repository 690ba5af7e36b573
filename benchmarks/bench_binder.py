"""What Binder builds from this repository, as far as it can be known without Binder's servers or Docker (issue 43):
repo2docker's own build-pack detection and the Dockerfile it renders for binder/ (nothing is built). Checks that
it picks the Python build pack with Python 3.11, copies the repository before installing binder/requirements.txt
(the lock, which it names with `-r ../requirements.txt`), installs that with pip, and runs binder/postBuild (this
package, then `inkground restore --published`).

    python benchmarks/bench_binder.py --r2d-python /path/to/venv/bin/python

--r2d-python: a Python with jupyter-repo2docker installed (it is not in the lock: `python3 -m venv V && V/bin/pip
install jupyter-repo2docker`). Results: benchmarks/results/binder.txt.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RENDER = """
import repo2docker
from repo2docker.app import Repo2Docker
r = Repo2Docker()
picked = None
for BP in r.buildpacks:
    bp = BP(r.base_image)
    bp.platform = "linux/amd64"
    if bp.detect():
        picked = bp
        break
print("repo2docker", repo2docker.__version__)
print("buildpack", type(picked).__name__)
print("python", picked.python_version)
print("postBuild", picked.get_post_build_scripts())
print("-----")
print(picked.render())
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--r2d-python", default=None)
    a = ap.parse_args()
    if a.r2d_python is None:  # make bench runs every benchmark: say why nothing is measured
        print("bench_binder: nothing measured: give --r2d-python, a Python with jupyter-repo2docker installed")
        return 0
    proc = subprocess.run([a.r2d_python, "-c", RENDER], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"bench_binder: repo2docker failed:\n{proc.stderr[-3000:]}")
    head, dockerfile = proc.stdout.split("-----\n", 1)
    print(head.strip())
    steps = [ln for ln in dockerfile.splitlines()
             if re.match(r"(COPY --chown=\S+ src/|RUN .*(pip install|postBuild))", ln)]
    print("\n".join(steps))
    copy = next((i for i, ln in enumerate(steps) if re.match(r"COPY \S+ src/ ", ln)), None)
    pip = next((i for i, ln in enumerate(steps) if 'pip install --no-cache-dir -r "binder/requirements.txt"' in ln),
               None)
    post = next((i for i, ln in enumerate(steps) if ln.strip() == "RUN ./binder/postBuild"), None)
    checks = [("the Python build pack", "buildpack PythonBuildPack" in head),
              ("Python 3.11 (binder/runtime.txt)", "python 3.11" in head),
              ("the repository copied before the lock is installed", None not in (copy, pip) and copy < pip),
              ("binder/requirements.txt installed with pip", pip is not None),
              ("binder/postBuild run after it", None not in (pip, post) and pip < post)]
    for what, ok in checks:
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
