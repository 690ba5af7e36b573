"""Page-cluster bootstrap: the replicate counts every interval of the book is drawn from, and the statistics
computed from them (a ratio of page sums, a weighted median of word values).

Pages are the clusters: a word's errors are correlated with its page's (one writer, one photo), so the book
resamples pages, not words.
"""

from __future__ import annotations

import numpy as np


def page_bootstrap_counts(n_pages: int, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, n_pages) int array: how often each page is drawn in each bootstrap replicate.

    Drawing ``n_pages`` page ids with replacement, uniformly, is a multinomial draw of the counts;
    ``np.random.default_rng(seed)`` makes it deterministic.

    >>> c = page_bootstrap_counts(3, 4, seed=0)
    >>> c.shape, bool((c.sum(axis=1) == 3).all())
    ((4, 3), True)
    """
    if n_pages < 1:
        raise ValueError("page_bootstrap_counts: need at least one page")
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_pages, np.full(n_pages, 1.0 / n_pages), size=n_boot)


def weighted_medians(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The lower weighted median of ``values`` (n,) under each row of ``weights`` (r, n) >= 0: per row, the
    smallest value v with sum(w[values <= v]) >= sum(w) / 2; NaN for a row of zero weight. NaN values are
    left out (their weight ignored).

    With all weights 1 it is the lower median (``np.median`` of an even count averages the two middle values):

    >>> weighted_medians(np.array([3.0, 1.0, 2.0, 10.0]), np.ones((1, 4)))
    array([2.])
    >>> weighted_medians(np.array([3.0, 1.0, 2.0]), np.array([[0, 0, 5], [1, 1, 0], [0, 0, 0]]))
    array([ 2.,  1., nan])
    """
    values = np.asarray(values, dtype=float)
    weights = np.atleast_2d(np.asarray(weights, dtype=float))
    ok = ~np.isnan(values)
    values, weights = values[ok], weights[:, ok]
    out = np.full(weights.shape[0], np.nan)
    if values.size == 0:
        return out
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[:, order], axis=1)
    total = cum[:, -1]
    has = total > 0
    idx = np.argmax(cum >= (total / 2.0)[:, None], axis=1)
    out[has] = values[order][idx[has]]
    return out
