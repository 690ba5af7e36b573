"""How many skeleton traces and tracer network calls sections 02 and 03 of a built book made (issue 32).

    python benchmarks/count_traces.py ROOT [ROOT ...]

ROOT is a checkout after ``make book`` (its data/runs and data/datasets). Counted from the files the runs leave:

* section 02 without a trace store: every derender pass (a derender log: the pseudo-labels' tracer log, the
  comparison's logs of the candidate and the recorded pages) traced each of its words, and the tracer called its
  network once for each word with ink. With the store (``traces.jsonl``): its ``strokes`` entries are the traces
  made, its ``arrangement`` entries with strokes to order the network calls.
* section 03: each skeleton or tracer prediction record traced its word (the tracer: and one network call when
  it drew ink), unless the pseudo-label run's store holds the word's keys (the systems read them there: on the
  benchmark, and on the recorded pages section 02 compared derenderers on, which
  :func:`~inkground_lib.evaluation.run.section_traces` links), and the tracer system reads what the skeleton
  system traced in the same process: then only the words missing from the store are traced, once, and the
  network is called for those the tracer has no arrangement of.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def _jsonl(path: Path):
    if not path.is_file():
        return []
    return [json.loads(x) for x in path.read_text("utf-8").splitlines() if x.strip()]


def _log_words(path: Path) -> dict:
    words = {}
    for r in _jsonl(path):
        words.update(r["words"])  # the last record of a page wins
    return words


def section_02(run: Path) -> dict:
    sets = {"candidates": run, "recorded": run / "derenderers" / "recorded pages"}
    traces = net = 0
    for folder in sets.values():
        skel = _log_words(folder / "derender-skeleton.jsonl")
        inked = {w for w, ink in skel.items() if ink}
        for d in ("skeleton", "tracer"):
            words = _log_words(folder / f"derender-{d}.jsonl")
            traces += len(words)
            net += len(set(words) & inked) if d == "tracer" else 0
    out = {"without store: traces": traces, "without store: network calls": net}
    store = run / "traces.jsonl"
    if store.is_file():
        entries = [e for r in _jsonl(store) for e in r["entries"]]
        out["store: traces"] = sum(e["kind"] == "strokes" for e in entries)
        out["store: network calls"] = sum(e["kind"] == "arrangement" and bool(e["order"]) for e in entries)
        out["store: MB"] = round(store.stat().st_size / 1e6, 1)
    return out


def section_03(root: Path) -> dict:
    from inkground_lib.components.derenderers.base import as_gray, crop_word
    from inkground_lib.components.derenderers.skeleton import SkeletonDerenderer
    from inkground_lib.components.derenderers.traces import TraceStore, crop_digest
    from inkground_lib.components.derenderers.tracer.derenderer import TracerDerenderer
    from inkground_lib.core.dataset import load_dataset
    from inkground_lib.evaluation.items import target_dataset
    from inkground_lib.evaluation.run import section_traces
    from inkground_lib.evaluation.systems.local import benchmark_traces

    runs = root / "data" / "runs"
    pseudo = runs / "synth" / "02_pseudo_labels"
    sets = {"benchmark": (pseudo / "benchmark", runs / "synth" / "03_evaluation"),
            "recorded": (root / "data" / "datasets" / "recorded", runs / "recorded" / "03_evaluation")}
    has_store = (pseudo / "traces.jsonl").is_file()  # a checkout before issue 32 has none
    linked = section_traces(load_dataset(sets["benchmark"][0])) if has_store else ()  # what run.py passes
    skel, tracer = SkeletonDerenderer(), TracerDerenderer()
    out = {}
    for name, (ds_dir, run) in sets.items():
        recs = {s: {r["word_id"]: r for r in _jsonl(run / "predictions" / f"{s}.jsonl")} for s in ("skeleton", "tracer")}
        out[f"{name}: words"] = len(recs["skeleton"])  # without the store (the code before issue 32):
        out[f"{name}: without store: traces"] = len(recs["skeleton"]) + len(recs["tracer"])
        out[f"{name}: without store: network calls"] = sum(bool(r.get("strokes")) for r in recs["tracer"].values())
        if not has_store:
            continue
        ds = target_dataset(load_dataset(ds_dir))
        found = benchmark_traces(str(Path(ds.pages[0].image).parent))  # the store the systems find, if any
        paths = list(dict.fromkeys(Path(p).resolve() for p in ([found] if found else []) + list(linked)))
        stores = [TraceStore(p) for p in paths]
        out[f"{name}: stores read"] = ", ".join(os.path.relpath(p, root.resolve()) for p in paths) or "none"
        traced, called = set(), 0
        for p in ds.pages:
            photo = p.load_image()
            for w in p.words:
                crop, _ = crop_word(photo, w.box, grow=0.1)
                tkey = skel.trace_key(crop_digest(as_gray(crop)))
                if not any(tkey in st for st in stores):
                    traced.add(tkey)
                inked = bool(recs["skeleton"].get(w.id, {}).get("strokes"))
                akey = tracer.arrangement_key(tkey, w.text)
                called += inked and not any(akey in st for st in stores)  # one call per word
        out[f"{name}: with store: traces"] = len(traced)
        out[f"{name}: with store: network calls"] = called
    return out


def main(argv) -> int:
    for root in map(Path, argv):
        print(f"== {root}")
        for k, v in section_02(root / "data" / "runs" / "synth" / "02_pseudo_labels").items():
            print(f"section 02 {k}: {v}")
        for k, v in section_03(root).items():
            print(f"section 03 {k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
