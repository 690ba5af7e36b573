"""Read a whole UNIPEN release (train_r01_v07) with the original-format reader and plan recorded pages from it.

    .venv/bin/python benchmarks/bench_unipen_release.py /path/to/train_r01_v07 [--pages 8]

Prints: files parsed and failed (reasons grouped), segments by category / style / quality, the category 6
cursive selection (words, writers), the pages it gives at paper-like density, the time per page on a sample
build, and whether the shipped JSON subset's words are read back identically. The release folder can also
be given by $INKGROUND_UNIPEN_RELEASE; without one the benchmark says so and does nothing (``make bench``).
A copy of the release: ``fetch`` / clone GreenCappuccino/train_r01_v07 and use its working tree.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from inkground_lib.core.layout import UNIPEN_SUBSET
from inkground_lib.datasets.recorded import PAPER_WORDS_PER_PAGE, build_recorded
from inkground_lib.datasets.recorded_pages import plan_pages
from inkground_lib.formats.unipen import read_unipen_json
from inkground_lib.formats.unipen_release import failure_kind, read_unipen_release


def _counts(c: Counter, order=None) -> str:
    keys = order if order is not None else sorted(c, key=lambda k: (-c[k], str(k)))
    return ", ".join(f"{k} {c[k]}" for k in keys if c.get(k))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("release", nargs="?", default=os.environ.get("INKGROUND_UNIPEN_RELEASE"))
    ap.add_argument("--pages", type=int, default=8, help="pages of the sample build (time per page)")
    a = ap.parse_args()
    if not a.release:
        print("bench_unipen_release: no release folder given (argument or $INKGROUND_UNIPEN_RELEASE); nothing done")
        return 0
    root = Path(a.release)
    print(f"date {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; machine {platform.machine()} {os.cpu_count()} cores, "
          f"{platform.system()} {platform.release()}; Python {platform.python_version()}")
    print(f"release {root}\n")

    # 1. every category, every level: what the reader makes of the whole release
    t0 = time.perf_counter()
    found = parsed = read = 0
    failed: list[tuple[str, str]] = []
    by_cat, by_level, by_style, by_quality, skipped, unknown = (Counter() for _ in range(6))
    damaged: list[str] = []
    files: dict[str, str] = {}
    cats = sorted(p.name for p in (root / "data").iterdir() if p.is_dir())
    for cat in cats:
        words, rep = read_unipen_release(root, category=cat, style=None, quality=None, level=None)
        found += rep.files_found
        parsed += rep.files_parsed
        read += rep.segments_read
        failed += rep.files_failed
        by_cat[cat] += rep.segments_read
        by_level.update(w.meta["level"] for w in words)
        by_style.update(rep.by_style)
        by_quality.update(rep.by_quality)
        skipped.update(rep.skipped)
        unknown.update(rep.unknown_keywords)
        damaged += [d for d in rep.damaged_components if d not in damaged]
        files.update(rep.files)
        del words
    t_all = time.perf_counter() - t0
    print(f"== whole release, all categories and levels: {t_all:.1f} s")
    print(f"top files: {found} found, {parsed} parsed, {len(failed)} failed; {len(files)} files read with includes")
    for kind, n in sorted(Counter(failure_kind(r) for _, r in failed).items()):
        print(f"  failed, {kind}: {n}")
        for f, r in [x for x in failed if failure_kind(x[1]) == kind]:
            print(f"    {f}: {r}")
    print(f"damaged components (their segments are skipped): {len(damaged)}")
    for d in damaged[:5]:
        print(f"    {d}")
    print(f"segments read: {read}; skipped: {sum(skipped.values())} {dict(skipped) or ''}")
    print(f"  by category: {_counts(by_cat, cats)}")
    print(f"  by level:    {_counts(by_level)}")
    print(f"  by style:    {_counts(by_style)}")
    print(f"  by quality:  {_counts(by_quality)}")
    print(f"keywords outside the format definition: {dict(unknown) or 'none'}\n")

    # 2. category 6 cursive words, not BAD: the recorded dataset's selection
    t0 = time.perf_counter()
    words, rep = read_unipen_release(root, category="6", style="CURSIVE", quality="!BAD")
    t_sel = time.perf_counter() - t0
    per_writer = Counter(w.writer for w in words)
    letters = [w for w in words if any(c.isalpha() for c in w.text)]
    print(f"== category 6, style CURSIVE, quality not BAD: {t_sel:.1f} s")
    print(rep.summary())
    print(f"words with letters: {len(letters)}; points per word: median "
          f"{np.median([w.ink.n_points for w in words]):.0f}; contributors: "
          f"{_counts(Counter(w.meta['contributor'] for w in words))}")
    n = np.array(sorted(per_writer.values()))
    print(f"words per writer: median {np.median(n):.0f}, max {n.max()}, writers with >= {PAPER_WORDS_PER_PAGE[0]}: "
          f"{int((n >= PAPER_WORDS_PER_PAGE[0]).sum())} of {len(n)}")
    lo, hi = PAPER_WORDS_PER_PAGE
    one = plan_pages(words, None, (lo, hi), np.random.default_rng([0, 0]))
    full = plan_pages(words, 10**6, (lo, hi), np.random.default_rng([0, 0]))
    for label, plan in (("default (pages=None: one page per eligible writer)", one),
                        ("all the words allow (pages=N large)", full)):
        wpp = [len(ws) for _, ws in plan]
        print(f"plan {lo}-{hi} words/page, {label}: {len(plan)} pages, {sum(wpp)} words, "
              f"{len({wr for wr, _ in plan})} writers, words/page mean {np.mean(wpp):.2f} "
              f"(min {min(wpp)}, max {max(wpp)})")
    print()

    # 3. a sample build: time per page (the build reads the category again; that time is subtracted)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        out = build_recorded(Path(tmp) / "rec", unipen_dir=root, pages=a.pages, seed=0, progress=False)
        t_build = time.perf_counter() - t0
        meta = json.loads((out / "manifest.json").read_text("utf-8"))["meta"]
        src = json.loads((out / "sources.json").read_text("utf-8"))["page_words"]
        n_words = sum(len(v) for v in src.values())
    per_page = (t_build - t_sel) / max(meta["pages_built"], 1)
    print(f"== sample build: {meta['pages_built']} pages, {n_words} words, {meta['writers']} writers in "
          f"{t_build:.1f} s (of which reading ~{t_sel:.1f} s): ~{per_page:.2f} s per page on this machine")
    if one:
        print(f"   -> the default plan ({len(one)} pages) would take ~{t_sel + per_page * len(one):.0f} s, all words "
              f"({len(full)} pages) ~{t_sel + per_page * len(full):.0f} s")
    print()

    # 4. the shipped JSON subset was cut from this release: its words must be read back identically
    if UNIPEN_SUBSET.is_file():
        subset = read_unipen_json(UNIPEN_SUBSET)
        contribs = sorted({w.meta["contributor"] for w in subset})
        mine, _ = read_unipen_release(root, category="6", style="CURSIVE", quality="!BAD")
        index: dict[tuple[str, str], list] = {}
        for w in mine:
            if w.meta["contributor"] in contribs:
                index.setdefault((w.writer, w.text), []).append(w)
        same = sum(any(w.ink == m.ink for m in index.get((w.writer, w.text), [])) for w in subset)
        print(f"== JSON subset {UNIPEN_SUBSET.name}: {same} of {len(subset)} words read back identically "
              "(same writer pseudonym, label, strokes, x, y, t)")
    print(f"\npeak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
