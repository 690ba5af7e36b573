"""Sentences about a dataset for the book: what produced it and how large it is (sections 01-03 print them
beside their tables; every number is read from the dataset or its manifest)."""

from __future__ import annotations

from inkground_lib.datasets.statistics import statistics


def recorded_sources(meta: dict) -> str:
    """What a recorded dataset was composed from, from its manifest meta (``sources``), e.g. "286 UNIPEN
    words from unipen_cursive_dev.json"."""
    parts = []
    for s in meta.get("sources", []):
        name = str(s.get("path", "")).replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
        kind = {"unipen": "UNIPEN words (JSON)", "unipen_dir": "UNIPEN words (.dat release)",
                "iamondb": "IAM-OnDB words"}.get(s.get("kind"), f"{s.get('kind')} words")
        parts.append(f"{s.get('words', '?')} {kind} from {name}")
    return "; ".join(parts) or "recorded ink"


def dataset_sentence(ds, stats: dict) -> str:
    """One sentence of a dataset's size for the book: pages, writers, words, words per page (mean, range)."""
    return (f"{stats['pages']} pages by {stats['writers']} writers, {stats['words']} words, "
            f"{stats['words_per_page_mean']:.2f} words per page (range {stats['words_per_page_min']} to "
            f"{stats['words_per_page_max']})")


def recorded_set_sentence(rec) -> str:
    """Section 01's sentence on the recorded set (``rec``: its Dataset, or None where none was built)."""
    if rec is None:
        return "No recorded dataset was built for this run."
    return (f"The recorded set, {describe_dataset(rec)}, has {dataset_sentence(rec, statistics(rec))}; "
            f"its statistics are the last column of the table below.")


def describe_dataset(ds) -> str:
    """One sentence saying what produced a dataset (for the book's provenance lines)."""
    m = ds.meta or {}
    m = {**m, **m.get("params", {})}
    if ds.kind == "synth":
        return (f"synthetic photographed pages generated offline by inkground synth (seed {m.get('seed')}, "
                f"{len(ds.pages)} pages; Hershey script font, one synthetic writer per page; true trajectories known)")
    if ds.kind == "recorded":
        return (f"pages composed from real recorded cursive words ({recorded_sources(ds.meta or {})}), one writer "
                f"per page, photographed by the same pipeline; recorded trajectories are the ground truth")
    if ds.kind == "benchmark":
        return f"benchmark set built by the pseudo-label pipeline from {m.get('candidates', 'a candidate set')}"
    return f"the inkGround pages loaded from {ds.root}"
