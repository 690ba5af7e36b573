r"""The head a benchmark fits on the backbone's features: multinomial logistic regression (scikit-learn's
``LogisticRegression``, L-BFGS, L2 penalty) on standardised features.

Features :math:`f` (512 floats of a render, :mod:`~inkground_lib.components.style.backbone`) are standardised
with the training renders' mean :math:`\mu` and standard deviation :math:`\sigma` (per feature; a constant feature
keeps :math:`\sigma = 1`), and writer :math:`k`'s score is

.. math::

    z_k = w_k \cdot \frac{f - \mu}{\sigma} + b_k,

with :math:`W, b` minimising the mean cross-entropy of the training renders' writers plus
:math:`\lVert W \rVert^2 / (2 C n)` (scikit-learn's ``C``, :class:`~inkground_lib.components.style.params.StyleParams`
``head_c``). The fit runs on one BLAS thread, so its result does not depend on the machine's core count.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from inkground_lib.components.style.params import StyleError

HEAD_MAX_ITER = 2000
"""L-BFGS iterations at most (the book's heads converge in a few hundred)."""


@dataclass(frozen=True)
class LinearHead:
    """A fitted head: ``mean`` and ``scale`` (FEATURES,) of the standardisation, ``weight`` (K, FEATURES),
    ``bias`` (K,), float64; ``classes`` the writer of each row (sorted), ``iterations`` L-BFGS used and whether
    it ``converged`` within :data:`HEAD_MAX_ITER` (scikit-learn's ConvergenceWarning is recorded here, not
    printed)."""

    mean: np.ndarray
    scale: np.ndarray
    weight: np.ndarray
    bias: np.ndarray
    classes: tuple
    iterations: int = 0
    converged: bool = True

    def logits(self, features) -> np.ndarray:
        """Scores (n, K) float64 of features (n, FEATURES).

        >>> h = LinearHead(np.zeros(2), np.ones(2), np.array([[1.0, 0.0], [0.0, 1.0]]), np.zeros(2), ("a", "b"))
        >>> h.logits([[2.0, 1.0]]).tolist()
        [[2.0, 1.0]]
        """
        f = np.asarray(features, dtype=np.float64)
        return ((f - self.mean) / self.scale) @ self.weight.T + self.bias

    def arrays(self) -> dict[str, np.ndarray]:
        """The head's arrays by name (what its file holds)."""
        return {"mean": self.mean, "scale": self.scale, "weight": self.weight, "bias": self.bias}


def fit_head(features, labels, c: float = 1.0, seed: int = 0) -> LinearHead:
    """Fit a :class:`LinearHead` on ``features`` (n, FEATURES) with writer ``labels`` (n,) str; at least two
    writers. Deterministic: the same features and labels give the same head.

    >>> rng = np.random.default_rng(0)
    >>> f = np.vstack([rng.normal(0, 1, (20, 4)) + 3, rng.normal(0, 1, (20, 4)) - 3])
    >>> h = fit_head(f, ["a"] * 20 + ["b"] * 20)
    >>> h.classes, [h.classes[i] for i in h.logits([[3, 3, 3, 3], [-3, -3, -3, -3]]).argmax(axis=1)]
    (('a', 'b'), ['a', 'b'])
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    f = np.asarray(features, dtype=np.float64)
    labels = [str(v) for v in labels]
    if f.ndim != 2 or len(f) != len(labels):
        raise StyleError(f"fit_head: features {f.shape} and {len(labels)} labels do not match")
    classes = tuple(sorted(set(labels)))
    if len(classes) < 2:
        raise StyleError(f"fit_head: need items from at least 2 writers, got {len(classes)}")
    if not np.isfinite(f).all():
        raise StyleError("fit_head: features hold NaN or infinite values")
    mean = f.mean(axis=0)
    scale = f.std(axis=0)
    scale = np.where(scale > 1e-12, scale, 1.0)
    y = np.array([classes.index(v) for v in labels])
    with threadpool_limits(limits=1), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        lr = LogisticRegression(C=float(c), max_iter=HEAD_MAX_ITER, tol=1e-6, random_state=int(seed))
        lr.fit((f - mean) / scale, y)
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    W, b = lr.coef_, lr.intercept_
    if len(classes) == 2:  # scikit-learn keeps one row for two classes: the scores (0, z) give the same softmax
        W, b = np.vstack([np.zeros_like(W[0]), W[0]]), np.array([0.0, b[0]])
    return LinearHead(mean=mean, scale=scale, weight=np.asarray(W, np.float64), bias=np.asarray(b, np.float64),
                      classes=classes, iterations=int(np.max(lr.n_iter_)), converged=converged)


def fit_head_job(job) -> LinearHead:
    """Executor job: :func:`fit_head` of job = (features, labels, c, seed) (the same head as here: one BLAS
    thread, deterministic)."""
    features, labels, c, seed = job
    return fit_head(features, labels, c, seed)
