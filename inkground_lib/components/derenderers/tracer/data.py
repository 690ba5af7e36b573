"""The tracer's words: a UNIPEN release read, the evaluation writers refused, the rest split by writer into
training and validation writers."""

from __future__ import annotations

import hashlib
import os
from typing import Sequence

from inkground_lib.components.derenderers.tracer.eval_writers import read_eval_writers


class EvalWriterError(ValueError):
    """Training words of a writer on the evaluation list."""


def read_release_words(unipen_dir: str | os.PathLike, progress: bool = False):
    """Category-6 words (isolated words, any style, quality not BAD) of the UNIPEN release at ``unipen_dir``,
    as :func:`inkground_lib.datasets.recorded.unipen_dir_words` reads them, and its source record."""
    from inkground_lib.datasets.recorded import unipen_dir_words

    return unipen_dir_words(unipen_dir, category="6", style=None, quality="!BAD", progress=progress)


def _rank(writer: str, seed: int) -> str:
    return hashlib.sha256(f"{seed}:{writer}".encode()).hexdigest()


def split_words(words: Sequence, val_writers: int, seed: int, eval_writers: set[str] | None = None):
    """(train words, validation words, counts): the words of writers on the evaluation list (default
    :func:`read_eval_writers`) are dropped and counted; of the other writers, the ``val_writers`` first by a
    seeded hash of their id are validation writers. counts = {words_in, eval_writers_excluded,
    eval_words_excluded, train_writers, train_words, val_writers, val_words}."""
    banned = read_eval_writers() if eval_writers is None else set(eval_writers)
    kept = [w for w in words if w.writer not in banned]
    excluded = {w.writer for w in words if w.writer in banned}
    writers = sorted({w.writer for w in kept}, key=lambda wr: _rank(wr, seed))
    if val_writers >= len(writers):
        raise ValueError(f"split_words: {val_writers} validation writers asked, only {len(writers)} writers")
    val = set(writers[:val_writers])
    train = [w for w in kept if w.writer not in val]
    valw = [w for w in kept if w.writer in val]
    check_no_eval_writers(train, banned)
    return train, valw, {"words_in": len(words), "eval_writers_excluded": len(excluded),
                         "eval_words_excluded": len(words) - len(kept),
                         "train_writers": len(writers) - len(val), "train_words": len(train),
                         "val_writers": len(val), "val_words": len(valw)}


def check_no_eval_writers(words: Sequence, eval_writers: set[str] | None = None) -> None:
    """Raise :class:`EvalWriterError` if any word's writer is on the evaluation list."""
    banned = read_eval_writers() if eval_writers is None else set(eval_writers)
    bad = sorted({w.writer for w in words if w.writer in banned})
    if bad:
        raise EvalWriterError(f"refusing to train on {len(bad)} writer(s) of the evaluation list "
                              f"(e.g. {', '.join(bad[:3])})")
