"""Subsequence DTW: a query sequence aligned inside a reference with an open begin and end (the same local cost and
steps as :func:`~inkground_lib.components.metrics.trajectory.dtw`); section 02 aligns each derendered stroke inside
the writer's true trajectory with it."""

from __future__ import annotations

import numba as nb
import numpy as np

from inkground_lib.components.metrics.trajectory_kernels import _local_cost

__all__ = ["subsequence_dtw"]


@nb.njit(cache=True)
def _subseq_dtw(Q, R):
    n, m = Q.shape[0], R.shape[0]
    D = np.empty((n, m))
    for i in range(n):
        for j in range(m):
            c = _local_cost(Q[i, 0], Q[i, 1], R[j, 0], R[j, 1])
            if i == 0:
                best = 0.0  # open begin: the query may start anywhere in R
            elif j == 0:
                best = D[i - 1, 0]
            else:
                best = min(D[i - 1, j - 1], D[i - 1, j], D[i, j - 1])
            D[i, j] = c + best
    jend = 0
    for j in range(1, m):
        if D[n - 1, j] < D[n - 1, jend]:
            jend = j
    idx = np.empty(n, np.int64)
    i, j = n - 1, jend
    idx[i] = j
    while i > 0:
        if j > 0:
            a, b, c = D[i - 1, j - 1], D[i - 1, j], D[i, j - 1]
            if a <= b and a <= c:
                i -= 1
                j -= 1
            elif b <= c:
                i -= 1
            else:
                j -= 1
        else:
            i -= 1
        idx[i] = j
    return D[n - 1, jend], idx


def subsequence_dtw(Q: np.ndarray, R: np.ndarray) -> tuple[float, np.ndarray]:
    r"""Subsequence DTW: the best alignment of a whole query Q inside any stretch of a reference R.

    Open begin and open end in the reference: the path runs from Q's first to Q's last point but may
    start and end at any point of R. Same Euclidean local cost and steps (1, 0), (0, 1), (1, 1) as
    :func:`~inkground_lib.components.metrics.trajectory.dtw_points`, but the cost is not divided by anything.
    The points are used as given (no normalisation), so the cost is in their units.

    Parameters
    ----------
    Q : (n, 2) array_like
        The query points, x then y; non-empty.
    R : (m, 2) array_like
        The reference points, x then y; non-empty.

    Returns
    -------
    cost : float
        The accumulated cost of the best path, :math:`\min_j D_{n,j}`.
    idx : ndarray of int64, shape (n,)
        For each query point, the index in R of the point it is aligned to (non-decreasing). Where the
        path stays on one query point over several reference points, the first of them.

    Raises
    ------
    ValueError
        If an array is empty or not of shape (k, 2).

    Notes
    -----
    With :math:`c_{ij} = \lVert q_i - r_j \rVert_2` (:math:`i = 1, \dots, n`, :math:`j = 1, \dots, m`):

    .. math::

        D_{1,j} = c_{1j}, \qquad D_{i,1} = c_{i1} + D_{i-1,1} \quad (i > 1),

        D_{i,j} = c_{ij} + \min(D_{i-1,j-1}, D_{i-1,j}, D_{i,j-1}) \quad (i, j > 1),

        \mathrm{cost} = \min_{j} D_{n,j}.

    So a horizontal run in the first row costs only its last cell. The path ends at the first j that
    attains the minimum and is traced back preferring the diagonal, then (i - 1, j), then (i, j - 1).

    Examples
    --------
    A two-point query half a unit above the middle of a four-point reference:

    >>> import numpy as np
    >>> from inkground_lib.components.metrics.subsequence_dtw import subsequence_dtw
    >>> Q = np.array([[1.0, 0.5], [2.0, 0.5]])
    >>> R = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [3.0, 0.0]])
    >>> cost, idx = subsequence_dtw(Q, R)
    >>> round(cost, 4), idx.tolist()
    (1.0, [1, 2])
    """
    Q = np.ascontiguousarray(Q, dtype=np.float64)
    R = np.ascontiguousarray(R, dtype=np.float64)
    if Q.ndim != 2 or R.ndim != 2 or Q.shape[1] != 2 or R.shape[1] != 2 or not len(Q) or not len(R):
        raise ValueError(f"subsequence_dtw: need non-empty (n, 2) arrays, got {Q.shape} and {R.shape}")
    cost, idx = _subseq_dtw(Q, R)
    return float(cost), idx
