"""The paper's metrics, one record each, in one table (:data:`METRICS`): what scoring, the summaries and their
bootstrap intervals, section 04's ranks, fronts and variants, the CLI and the paper-scale tables read. A new metric
is one more record here (and, unless it is computed like one of the kinds below, its per-word function in
``word_value``); nothing else spells a metric's name, label or direction.

How a word's value is computed (``computed``):

* ``"geometry"``: the column of that name of
  :func:`~inkground_lib.components.metrics.trajectory.geometry_batch` (read by name:
  :func:`~inkground_lib.components.metrics.trajectory.geometry_columns`), the prediction against the reference
  in reference word heights;
* ``"ocr"``: from the edit counts S, D, I, N of the OCR reading of the prediction's render against the word's
  text (:class:`~inkground_lib.components.metrics.readability.EditCounts`, its attribute of the same name);
* ``"style"``: the writer classifier's probability of the true writer
  (:func:`~inkground_lib.components.style.metric.true_writer_probability`);
* ``"word"``: ``word_value(prediction, reference, page_size, word)`` of the record, per word (prediction None
  for an invalid output).

How a system's value is aggregated (``aggregate``): ``"mean"`` over the words that have a value (its ``column``
of the scores table), or ``"corpus"``: the rate (N - the sum of ``counts``) / N of S, D, I, N summed over the
words. Every aggregate is a ratio of page sums, so its interval (``ci``) is the page bootstrap of
:func:`inkground_lib.evaluation.scores.summarize`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

COMPUTED = ("geometry", "ocr", "style", "word")
"""How a word's value is computed (see the module doc)."""

AGGREGATES = ("mean", "corpus")
"""How a system's value is aggregated over its words (see the module doc)."""

PAGE_BOOTSTRAP = "page bootstrap: percentile interval over pages resampled with replacement (ratio of page sums)"


@dataclass(frozen=True)
class Metric:
    """One metric: ``name`` (its column in scores and summary tables), ``label`` (the paper's name), ``better``
    ("min" or "max"), ``unit``, how a word's value is ``computed`` (:data:`COMPUTED`) and a system's is
    aggregated (:data:`AGGREGATES`; ``counts``: the edit counts a corpus rate subtracts from N), its interval
    (``ci``), and where it takes part: ``valid_mean`` (the summary also has ``<name>_valid``, the mean over valid
    outputs only), ``reference`` (its value depends on the reference inks: section 04 compares the two
    references on it), ``reported`` (the paper gives per-system values of it: section 04's paper points)."""

    name: str
    label: str
    better: str
    unit: str
    computed: str
    aggregate: str = "mean"
    counts: tuple = ()
    ci: str = PAGE_BOOTSTRAP
    valid_mean: bool = True
    reference: bool = False
    reported: bool = False
    column: Optional[str] = None  # the scores column a mean reads (default: name)
    word_value: Optional[Callable] = None  # computed "word": (prediction or None, reference, page_size, word) -> float

    def __post_init__(self):
        if self.better not in ("min", "max"):
            raise ValueError(f"metric {self.name}: better must be 'min' or 'max', got {self.better!r}")
        if self.computed not in COMPUTED:
            raise ValueError(f"metric {self.name}: computed must be one of {COMPUTED}, got {self.computed!r}")
        if self.aggregate not in AGGREGATES:
            raise ValueError(f"metric {self.name}: aggregate must be one of {AGGREGATES}, got {self.aggregate!r}")
        if (self.aggregate == "corpus") != bool(self.counts):
            raise ValueError(f"metric {self.name}: a corpus rate, and only one, names the counts it subtracts")
        if (self.computed == "word") != (self.word_value is not None):
            raise ValueError(f"metric {self.name}: a metric computed per word, and only one, has a word_value")

    @property
    def scores_column(self) -> str:
        """The column of the per-word scores table a mean reads."""
        return self.column or self.name

    @property
    def lower_is_better(self) -> bool:
        return self.better == "min"


METRICS: dict[str, Metric] = {
    "dtw": Metric("dtw", "DTW", "min", "word heights", "geometry", reference=True, reported=True),
    "chamfer": Metric("chamfer", "Chamfer", "min", "word heights", "geometry", reference=True, reported=True),
    "ar": Metric("ar", "AR", "max", "share of characters", "ocr", "corpus", ("S", "D", "I"), valid_mean=False,
                 reported=True),
    "cr": Metric("cr", "CR", "max", "share of characters", "ocr", "corpus", ("S", "D"), valid_mean=False),
    "style": Metric("style", "Style", "max", "probability of the true writer", "style", reference=True,
                    reported=True),
}
"""Name -> :class:`Metric`, in the order every table shows them. Readers look records up here when they run, so
a record added (a test's toy metric: ``monkeypatch.setitem(METRICS, ...)``) is read everywhere."""


def metric(name: str) -> Metric:
    """The record of ``name``; ValueError naming the known ones.

    >>> metric("ar").counts, metric("dtw").better
    (('S', 'D', 'I'), 'min')
    """
    if name not in METRICS:
        raise ValueError(f"unknown metric {name!r}; known: {', '.join(METRICS)}")
    return METRICS[name]


def metric_names(*, computed: Optional[str] = None, aggregate: Optional[str] = None, **flags) -> tuple[str, ...]:
    """The names of the metrics (table order) computed as ``computed``, aggregated as ``aggregate`` and with
    each of ``flags`` (record fields: ``reference=True``, ``reported=True``, ``valid_mean=True``) as given.

    >>> metric_names(), metric_names(computed="geometry"), metric_names(aggregate="corpus")
    (('dtw', 'chamfer', 'ar', 'cr', 'style'), ('dtw', 'chamfer'), ('ar', 'cr'))
    >>> metric_names(reference=True), metric_names(reported=True)
    (('dtw', 'chamfer', 'style'), ('dtw', 'chamfer', 'ar', 'style'))
    """
    return tuple(m.name for m in METRICS.values()
                 if (computed is None or m.computed == computed) and (aggregate is None or m.aggregate == aggregate)
                 and all(getattr(m, k) == v for k, v in flags.items()))


def summary_statistics() -> tuple[str, ...]:
    """The statistics of a per-system summary, in its column order: the valid rate, each mean, each mean over
    valid outputs only, each corpus rate (each statistic X with ``X_lo`` / ``X_hi`` bounds in the summary).

    >>> summary_statistics()
    ('valid_rate', 'dtw', 'chamfer', 'style', 'dtw_valid', 'chamfer_valid', 'style_valid', 'ar', 'cr')
    """
    means = metric_names(aggregate="mean")
    return ("valid_rate", *means, *(f"{m}_valid" for m in means if METRICS[m].valid_mean),
            *metric_names(aggregate="corpus"))


def metric_labels() -> dict[str, str]:
    """Name -> the paper's name of every metric.

    >>> metric_labels()["chamfer"]
    'Chamfer'
    """
    return {m.name: m.label for m in METRICS.values()}


def metric_of_label(label: str) -> Optional[str]:
    """The name of the metric the paper calls ``label`` (``"AR"`` -> ``"ar"``), or None."""
    return next((m.name for m in METRICS.values() if m.label == label), None)

