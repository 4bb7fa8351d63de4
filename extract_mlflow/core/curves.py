"""A metric's value with its bootstrap interval (:class:`MetricValue`, what the engine's
``ratio_interval`` gives), and metrics against a numeric slice attribute (:class:`Curves`,
what a logged run plots): plain data of the metric families' summaries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Curves", "MetricValue"]


@dataclass(frozen=True)
class Curves:
    """Metrics against a numeric slice attribute, with their intervals."""

    title: str
    names: list[str]
    """the metrics, in the order of their lines"""
    slices: list[Any]
    """the slices, each with ``x`` (its value or bin mean) and ``values`` (``<metric>``,
    ``<metric>_ci_low``, ``<metric>_ci_high``)"""
    confidence: float


@dataclass(frozen=True, slots=True)
class MetricValue:
    """A headline metric: its value, bootstrap interval and how many documents carry it."""

    value: float
    ci_low: float
    ci_high: float
    documents: int
    degenerate: bool = False
    resamples: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "documents": self.documents,
            "degenerate_interval": self.degenerate,
            "resamples": self.resamples,
        }
