"""The seam of a metric family: what a family declares, and the plain summary it reports.

A *family* (text accuracy, …) is statistics first, scores from statistics: per document it
gives, for each of its metrics, a numerator and a denominator (:meth:`Family.document`); the
value of a metric over any set of documents is Σnumerator / Σdenominator. Everything else is the
engine's and reads only these declarations (:mod:`extract_mlflow.evaluation.families`): the
state is the per-document statistics (merged by concatenation, so any partition of the
documents gives the same numbers), the intervals resample documents and recompute each ratio
from the resample's sums, the slices are the same ratios over a slice's documents, the paired
comparison of two runs reads the statistics from the runs' per-document counts
(``<family>/<metric>_num`` and ``_den`` columns), gates read each metric's direction from
:attr:`Family.higher_is_better`, and every view renders a :class:`FamilySummary` the same way.

A family is one module under :mod:`extract_mlflow.families` and one line in its registry
(``FAMILIES``); docs/architecture.md, "Adding a metric family", walks through one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel

from ..core.curves import Curves
from ..core.keys import slice_key

Statistics = Mapping[str, tuple[float, float]]
"""metric -> (numerator, denominator) of one document; a metric it lacks is left out"""


class Summary(Protocol):
    """What a family found over an evaluation, as the report keeps it: plain data (a
    :class:`FamilySummary` for a family of plain ratios)."""

    @property
    def name(self) -> str:
        """the family's name"""
        ...

    def metrics(self, keys: Mapping[str, str] | None = None) -> dict[str, float]:
        """Its MLflow metrics (`keys`: the evaluation's field keys, :meth:`field_paths`'s
        among them, which name a metric per field)."""
        ...

    def field_paths(self) -> Sequence[str]:
        """The field paths it reports a metric of (``field_bleu_proxy/<suffix>``) that may not
        be scored fields: they get field keys of their own, distinct from every other's."""
        ...

    def to_dict(self) -> dict[str, Any]:
        """Its section of the JSON report."""
        ...

    def frame_columns(self, start: int, stop: int) -> dict[str, Any]:
        """Its per-document columns of the counts frame for the rows [`start`, `stop`) (gold
        order), each named ``<family>/...``: what ``compare``'s paired bootstrap resamples
        (``<family>/<metric>_num`` and ``_den``) and ``documents.parquet`` stores."""
        ...

    def curves(self) -> dict[str, Curves]:
        """Numeric slice attribute -> its metric-against-attribute curves, which a logged run
        plots; empty for none."""
        ...


class Tools(Protocol):
    """The engine's statistics, given to a family's own state when it summarizes
    (:meth:`FamilyPart.summary`), so that a family module needs nothing above it."""

    def ratio_interval(
        self, num: Any, den: Any, *, resamples: int, seed: int | None, confidence: float
    ) -> Any:
        """Σnum/Σden with its percentile bootstrap interval over the documents."""
        ...

    def grouped_rows(
        self, values: Any, config: Any
    ) -> tuple[dict[str, list[int]], dict[str, list[float]], bool]:
        """The rows of each slice label of one attribute's values, their numeric values and
        whether the attribute is numeric."""
        ...

    def mean_value(self, values: list[float] | None) -> float | None:
        """The mean of a numeric slice's values (None: not numeric)."""
        ...


class Documents(Protocol):
    """What a family's state reads of the evaluation's document table when it summarizes."""

    @property
    def positions(self) -> Any: ...
    @property
    def ids(self) -> Any: ...
    @property
    def attributes(self) -> Any: ...


class FamilyPart(Protocol):
    """A family's own state over the documents of one part of an evaluation (for a family
    that is more than plain ratios, :meth:`Family.start`): plain data, picklable; parts merge
    in any order and give the same summary as one pass."""

    def update(
        self,
        position: int,
        doc_id: str,
        gold: Mapping[str, Any],
        pred: Mapping[str, Any] | None,
        failure: str | None,
        source: str | None,
    ) -> None:
        """Score one document (`pred`: the prediction line as read, `failure`: why it could
        not be used, else None; `source`: its source text, when sources were given)."""
        ...

    def merge(self, other: Any) -> Any:
        """Add `other`'s documents (disjoint from this part's) and return this part."""
        ...

    def summary(self, documents: Documents, inputs: Any, tools: Tools) -> Summary | None:
        """The family's summary over every document (`documents`: the evaluation's table, in
        gold order; `inputs`: what the readers found of the inputs, e.g. ``unused_sources``);
        None when it found nothing to report."""
        ...


class Family(Protocol):
    """What a metric family declares (a module-level instance, registered in ``FAMILIES``).

    A family of plain ratios subclasses :class:`RatioFamily` and declares :meth:`document`;
    a family with more (details per document, notes, intervals per metric) keeps its own
    state (:meth:`start`) and renders its own sections (:meth:`markdown`, :meth:`table`).
    """

    name: str
    """its config section (``[name]``), its column prefix and its key in ``to_dict()``"""
    title: str
    """the heading of its section in every view"""
    section: type[BaseModel]
    """its config section; the defaults must leave the family off"""
    higher_is_better: bool
    """the direction of every metric it logs (``<metric>``, ``<metric>/<part>``, slices)"""
    metric_names: tuple[str, ...]
    """the base names of the metrics it logs (``cer`` of ``cer/title``): gates read their
    direction from :attr:`higher_is_better`"""
    reversed_names: tuple[str, ...]
    """those of :attr:`metric_names` whose direction is the other one (a failure rate of a
    family whose scores are higher-is-better)"""

    def active(self, section: Any, setup: Any) -> bool:
        """Whether the family runs under this section of a config and the evaluation's `setup`
        (what was given beside the files: sources, …)."""
        ...

    def definition(self, section: Any) -> str:
        """Its part of the signature: the version of its definitions (the section's values
        are in the config digest already)."""
        ...

    def document(
        self, gold: Mapping[str, Any], pred: Mapping[str, Any] | None, section: Any
    ) -> Statistics:
        """The statistics of one document (gold line, prediction or None when missing or
        unreadable). Pure, and the same for a document whichever part scores it."""
        ...

    report_key: str | None
    """the top-level key of its section in the JSON report (null there when it did not run),
    for a family that had one before the seam; None: under ``families``"""

    def keys(self, section: Any) -> tuple[str, ...]:
        """The top-level gold keys that are its inputs, never scored as fields."""
        ...

    def params(self, section: Any, ran: bool) -> dict[str, str]:
        """Signature params of its own (every run logs them, ``""`` when unused), for a family
        that had them before the seam; a family with a :meth:`definition` has none."""
        ...

    def start(self, section: Any, setup: Any) -> FamilyPart | None:
        """Its own state for one part of an evaluation (`setup`: the evaluation's
        :class:`~extract_mlflow.evaluation.inputs.Setup`: the config, whose ``statistics``
        say how to slice and resample, and the inputs given beside the files); None: the
        engine's, the statistics of :meth:`document`
        (:class:`~extract_mlflow.evaluation.families.FamilyState`)."""
        ...

    def markdown(self, summary: Any) -> list[str]:
        """Its section of the markdown report."""
        ...

    def table(self, summary: Any) -> list[str]:
        """Its lines of the terminal table."""
        ...


@dataclass(frozen=True, slots=True)
class FamilyValue:
    """A metric over a set of documents: Σnum/Σden with its bootstrap interval."""

    value: float | None
    """None when no document has reference (Σden = 0)"""
    ci_low: float | None
    ci_high: float | None
    documents: int
    """documents with this metric"""

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "documents": self.documents,
        }


@dataclass(frozen=True, slots=True)
class FamilySlice:
    label: str
    documents: int
    values: dict[str, FamilyValue]


@dataclass
class FamilySummary:
    """What a family found over an evaluation: plain data, rendered by the views."""

    name: str
    title: str
    higher_is_better: bool
    values: dict[str, FamilyValue]
    """metric -> its value, in the order the family gave them"""
    slices: dict[str, list[FamilySlice]] = field(default_factory=dict)
    """slice attribute -> its slices, in label order"""
    worst: list[tuple[str, float]] = field(default_factory=list)
    """(document id, value of the first metric): the worst documents, worst first"""
    rows: Any = field(default=None, compare=False)
    """the row (gold order) of each document with statistics (numpy int64)"""
    columns: dict[str, tuple[Any, Any]] = field(default_factory=dict, compare=False)
    """metric -> (num, den) per row of :attr:`rows` (numpy float64, NaN: not this metric)"""

    def metrics(self, keys: Mapping[str, str] | None = None) -> dict[str, float]:
        """The MLflow metrics: each value, its ``_ci_low``/``_ci_high``, and the slices'
        (``<metric>_by_<attribute>/<label>``); a metric without a value is left out."""
        out: dict[str, float] = {}
        for name, v in self.values.items():
            if v.value is not None:
                out[name] = v.value
            if v.ci_low is not None and v.ci_high is not None:
                out[f"{name}_ci_low"], out[f"{name}_ci_high"] = v.ci_low, v.ci_high
        for attribute, slices in self.slices.items():
            for s in slices:
                for name, v in s.values.items():
                    if v.value is not None:
                        out[slice_key(name, attribute, s.label)] = v.value
        return out

    def frame_columns(self, start: int, stop: int) -> dict[str, Any]:
        """The per-document statistics of the rows [`start`, `stop`) (gold order) as the
        counts frame's ``<family>/<metric>_num`` and ``_den`` columns (NaN where a document
        lacks the metric), which the paired comparison of two runs resamples."""
        import numpy as np

        rows = np.asarray(self.rows, dtype=np.int64)
        lo, hi = np.searchsorted(rows, [start, stop])
        at = rows[lo:hi] - start
        out: dict[str, Any] = {}
        for metric, (num, den) in self.columns.items():
            for part, values in (("_num", num), ("_den", den)):
                full = np.full(stop - start, np.nan)
                full[at] = values[lo:hi]
                out[f"{self.name}/{metric}{part}"] = full
        return out

    def curves(self) -> dict[str, Curves]:
        """None: a family of plain ratios plots no curves."""
        return {}

    def field_paths(self) -> Sequence[str]:
        return ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "higher_is_better": self.higher_is_better,
            "metrics": {name: v.to_dict() for name, v in self.values.items()},
            "slices": {
                attribute: [
                    {
                        "label": s.label,
                        "documents": s.documents,
                        "metrics": {n: v.to_dict() for n, v in s.values.items()},
                    }
                    for s in slices
                ]
                for attribute, slices in self.slices.items()
            },
            "worst_documents": [{"id": i, "value": v} for i, v in self.worst],
        }
