r"""The Style metric: the probability a writer classifier gives to an ink's true writer (numpy only).

A classifier's raw class scores (logits) :math:`z_{i,k}` of item :math:`i` for the :math:`K` writers become
probabilities by the softmax; an item's Style is the probability of its true writer :math:`y_i`
(:func:`true_writer_probability`). Invalid or missing outputs are scored on a blank render, per the design's
rule, by whoever computes the logits.
"""

from __future__ import annotations

import numpy as np

__all__ = ["true_writer_probability", "softmax_rows"]


def softmax_rows(logits) -> np.ndarray:
    r"""Softmax of each row of ``logits`` (n, K): float64 probabilities, each row summing to 1.

    .. math::

        p_{i,k} = \frac{\exp(z_{i,k} - m_i)}{\sum_{j=1}^{K} \exp(z_{i,j} - m_i)}, \qquad m_i = \max_j z_{i,j}

    (subtracting the row's maximum changes nothing mathematically and keeps ``exp`` from overflowing).

    >>> softmax_rows([[0.0, 0.0], [1.0, 1.0 + np.log(3.0)]]).round(6)
    array([[0.5 , 0.5 ],
           [0.25, 0.75]])
    """
    z = np.asarray(logits, dtype=np.float64)
    if z.ndim != 2:
        raise ValueError(f"softmax_rows: logits must be (n, K), got shape {z.shape}")
    if len(z) == 0:
        return z
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def true_writer_probability(logits, true_class) -> np.ndarray:
    r"""Style of each item: the classifier's softmax probability of its true writer, in [0, 1].

    ``logits``: (n, K) raw class scores :math:`z_{i,k}` of n items for K writers; ``true_class``: (n,) the
    column :math:`y_i` of each item's true writer (0 <= y_i < K). Returns float64 (n,):

    .. math::

        \mathrm{Style}_i = p_{i,y_i} = \frac{\exp(z_{i,y_i} - m_i)}{\sum_{k=1}^{K} \exp(z_{i,k} - m_i)},
        \qquad m_i = \max_k z_{i,k}

    (:func:`softmax_rows`). Chance level is 1 / K: a classifier that cannot tell the writers apart gives
    every writer 1 / K.

    >>> logits = np.array([[2.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 5.0]])
    >>> true_writer_probability(logits, [0, 1, 1]).round(4)
    array([0.787 , 0.3333, 0.0179])
    >>> true_writer_probability(np.zeros((0, 3)), [])
    array([], dtype=float64)
    """
    z = np.asarray(logits, dtype=np.float64)
    if z.ndim != 2:
        raise ValueError(f"true_writer_probability: logits must be (n, K), got shape {z.shape}")
    idx = np.asarray(true_class, dtype=np.int64).reshape(-1)
    if len(idx) != len(z):
        raise ValueError(f"true_writer_probability: {len(z)} rows of logits but {len(idx)} true classes")
    if len(idx) and (idx.min() < 0 or idx.max() >= z.shape[1]):
        raise ValueError(f"true_writer_probability: a true class is outside 0..{z.shape[1] - 1}")
    return softmax_rows(z)[np.arange(len(idx)), idx]
