"""Sentences saying what produced a number."""

from __future__ import annotations


def describe_dataset(ds) -> str:
    """One sentence saying what produced a dataset (for the book's provenance lines)."""
    m = ds.meta or {}
    m = {**m, **m.get("params", {})}
    if ds.kind == "synth":
        return (f"synthetic photographed pages generated offline by inkground synth (seed {m.get('seed')}, "
                f"{len(ds.pages)} pages; Hershey script font, one synthetic writer per page; true trajectories known)")
    if ds.kind == "recorded":
        return (f"pages composed from real recorded cursive words ({m.get('source', 'recorded ink')}), one writer "
                f"per page, photographed by the same pipeline; recorded trajectories are the ground truth")
    if ds.kind == "benchmark":
        return f"benchmark set built by the pseudo-label pipeline from {m.get('candidates', 'a candidate set')}"
    return f"the inkGround pages loaded from {ds.root}"
