"""What the writer-style backbone trains on, and what it never trains on.

Two kinds of writers, each kept apart from every writer the book or its checks evaluate:

* **UNIPEN writers**: the words of a whole UNIPEN release (train_r01_v07; category 6, any style, quality not BAD,
  as the tracer reads it) whose writer is not on ``data/unipen_eval_writers.txt`` (the book's 36 shipped writers
  and the 46 held-out writers kept for checks): :func:`~inkground_lib.components.derenderers.tracer.data.
  split_words` drops them, counts them and refuses to go on if one slipped through. Of the others, a seeded
  hash picks ``unipen_val_writers`` validation writers (never trained on: they choose the head's regularisation);
  each training writer gives at most ``unipen_max_words`` words (a seeded choice) and writers with fewer than
  ``unipen_min_words`` are left out.
* **Synthetic writers**: styles drawn by the synthetic generator's own sampler
  (:func:`~inkground_lib.datasets.synth.writers.sample_writer`) from a stream of their own
  (``default_rng([BACKBONE_STREAM, k])``, a seed list no dataset uses), each compared *by its style parameters*
  with the writers of every synthetic set the book, paper scale, the tracer's check and the tests draw
  (:data:`EVALUATION_SYNTH_SETS`); a style equal to one of them is skipped and counted. Their words are
  greeting-card message words (:func:`~inkground_lib.datasets.synth.texts.message_words`) written by
  :func:`~inkground_lib.datasets.synth.writers.write_word`.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass

import numpy as np

from inkground_lib.core.defaults import BOOK_CANDIDATE_PAGES, PAPER_CANDIDATE_PAGES, PAPER_SCALE_SEED

BACKBONE_STREAM = 0x57B1E
"""First entry of the seed list of the backbone's synthetic writers (``default_rng([BACKBONE_STREAM, k])``)."""

EVALUATION_SYNTH_SETS = (
    # (seed, pages, writers): the synthetic datasets whose writers are evaluated somewhere
    (0, BOOK_CANDIDATE_PAGES, None),               # the book's candidate pages (and its benchmark, a subset)
    (PAPER_SCALE_SEED, PAPER_CANDIDATE_PAGES, None),  # the paper's scale (make paper-scale)
    (1000, 20, None),                              # the tracer's check (pseudo.tracer_eval: seed + 1000)
    (0, 64, None), (3, 64, None), (5, 64, None), (11, 64, None),  # the tests' small sets
)
"""Synthetic sets whose writers the backbone may not share a style with; per page writers (``writers`` None)
are the first ``pages`` of the seed, so a smaller set of the same seed is covered."""

STYLE_FIELDS = ("slant_deg", "x_stretch", "ascender", "descender", "letter_spacing", "word_spacing", "jitter",
                "baseline_slope_deg", "baseline_wander", "line_spacing", "ms_per_letter")
"""The style parameters compared (those independent of the page size)."""


@dataclass(frozen=True)
class CorpusRecipe:
    """What the backbone trains on (the data half of
    :class:`~inkground_lib.components.style.backbone_training.BackboneRecipe`)."""

    unipen_max_words: int = 150
    unipen_min_words: int = 20
    unipen_val_writers: int = 20
    synth_writers: int = 400
    synth_val_writers: int = 40
    synth_words: int = 60
    seed: int = 0


def style_vector(style) -> np.ndarray:
    """The compared parameters (:data:`STYLE_FIELDS`) of a WriterStyle, float64."""
    return np.array([float(getattr(style, f)) for f in STYLE_FIELDS])


def evaluation_synth_styles(sets=EVALUATION_SYNTH_SETS) -> np.ndarray:
    """(n, len(STYLE_FIELDS)) style vectors of every writer of ``sets``."""
    from inkground_lib.datasets.synth.generate import SynthParams, page_writer

    rows = []
    for seed, pages, writers in sets:
        p = SynthParams(pages=pages, seed=seed, writers=writers)
        n = pages if writers is None else writers
        rows += [style_vector(page_writer(p, i)[1]) for i in range(n)]
    return np.array(rows)


def synthetic_writers(n: int, taken: np.ndarray | None = None) -> tuple[list[tuple[str, object]], int]:
    """([(writer id, WriterStyle)], skipped): ``n`` synthetic writers of the backbone's stream whose style equals
    none of ``taken`` (default :func:`evaluation_synth_styles`); ``skipped`` counts the equal ones passed over."""
    from inkground_lib.datasets.synth.writers import sample_writer

    taken = evaluation_synth_styles() if taken is None else taken
    out, k, skipped = [], 0, 0
    while len(out) < n:
        style = sample_writer(np.random.default_rng([BACKBONE_STREAM, k]))
        if len(taken) and bool(np.any(np.all(np.isclose(taken, style_vector(style), rtol=0, atol=1e-9), axis=1))):
            skipped += 1
        else:
            out.append((f"synth-bb-{k:04d}", style))
        k += 1
    return out, skipped


def synthetic_words(writer: str, style, n_words: int, k: int):
    """``n_words`` (ink, writer) items written by ``style`` (message words, seeded by the writer's index k)."""
    from inkground_lib.datasets.synth.texts import message_words
    from inkground_lib.datasets.synth.writers import write_word

    rng = np.random.default_rng([BACKBONE_STREAM, k, 1])
    words = [w for w, _ in message_words(rng, n_words)]
    return [(write_word(w, style, rng), writer) for w in words]


def _choose(items: list, n: int, key: str) -> list:
    """At most ``n`` of ``items``, a seeded choice (by ``key``) in their order."""
    if len(items) <= n:
        return list(items)
    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little"))
    return [items[i] for i in sorted(rng.choice(len(items), n, replace=False))]


@dataclass
class Corpus:
    """The backbone's items: ``train`` and ``val`` [(ink, writer)], and ``record`` (counts, the writers, how
    they were kept apart) for the card."""

    train: list
    val: list
    record: dict


def unipen_items(words, recipe: CorpusRecipe, eval_writers: set[str] | None = None):
    """(train items, val items, record) of UNIPEN words (RecordedWord) under ``recipe`` (module doc)."""
    from inkground_lib.components.derenderers.tracer.data import check_no_eval_writers, split_words

    train_w, val_w, counts = split_words(words, recipe.unipen_val_writers, recipe.seed, eval_writers)
    by: dict[str, list] = {}
    for w in train_w:
        by.setdefault(w.writer, []).append(w)
    kept = {wr: _choose(ws, recipe.unipen_max_words, f"{recipe.seed}:{wr}") for wr, ws in sorted(by.items())
            if len(ws) >= recipe.unipen_min_words}
    train = [(w.ink, wr) for wr, ws in kept.items() for w in ws]
    vby: dict[str, list] = {}
    for w in val_w:
        vby.setdefault(w.writer, []).append(w)
    val = [(w.ink, wr) for wr, ws in sorted(vby.items()) for w in _choose(ws, recipe.unipen_max_words,
                                                                           f"{recipe.seed}:{wr}")]
    check_no_eval_writers([w for ws in kept.values() for w in ws] + list(val_w), eval_writers)
    record = {**counts, "train_writers_kept": len(kept),
              "train_writers_too_few_words": len(by) - len(kept), "train_words_used": len(train),
              "val_words_used": len(val), "writers": sorted(kept), "val_writer_ids": sorted(vby)}
    return train, val, record


def synthetic_items(recipe: CorpusRecipe):
    """(train items, val items, record) of the synthetic writers under ``recipe`` (module doc)."""
    taken = evaluation_synth_styles()
    writers, skipped = synthetic_writers(recipe.synth_writers + recipe.synth_val_writers, taken)
    items = [synthetic_words(wid, style, recipe.synth_words, int(wid.rsplit("-", 1)[1])) for wid, style in writers]
    train = [it for group in items[:recipe.synth_writers] for it in group]
    val = [it for group in items[recipe.synth_writers:] for it in group]
    dists = [float(np.min(np.abs(taken - style_vector(s)).max(axis=1))) for _, s in writers]
    record = {"stream": BACKBONE_STREAM, "train_writers": recipe.synth_writers,
              "val_writers": recipe.synth_val_writers, "words_per_writer": recipe.synth_words,
              "skipped_equal_styles": skipped, "evaluation_sets": [list(s) for s in EVALUATION_SYNTH_SETS],
              "evaluation_writers_compared": len(taken), "style_fields": list(STYLE_FIELDS),
              "min_style_distance": min(dists) if dists else None,
              "writers": [wid for wid, _ in writers[:recipe.synth_writers]],
              "val_writer_ids": [wid for wid, _ in writers[recipe.synth_writers:]]}
    return train, val, record


def build_corpus(words, recipe: CorpusRecipe, source: dict | None = None,
                 eval_writers: set[str] | None = None) -> Corpus:
    """The backbone's :class:`Corpus` from UNIPEN ``words`` (a release read by
    :func:`~inkground_lib.components.derenderers.tracer.data.read_release_words`) and the synthetic writers."""
    ut, uv, urec = unipen_items(words, recipe, eval_writers)
    st, sv, srec = synthetic_items(recipe)
    return Corpus(train=ut + st, val=uv + sv,
                  record={"recipe": dataclasses.asdict(recipe), "unipen": {**urec, "source": source or {}},
                          "synthetic": srec, "train_items": len(ut) + len(st), "val_items": len(uv) + len(sv),
                          "train_writers": urec["train_writers_kept"] + srec["train_writers"]})
