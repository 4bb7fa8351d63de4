"""The ``[statistics]`` config section: how every metric is sliced and how its interval is drawn.

Run-wide: the field metrics, every metric family (structure, text accuracy, …) and the paired
comparison read the same settings. Below the config and the families (it is plain data), so
that the scorers and the engine can take it without importing either.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["MOVED_FROM_STRUCTURE", "StatisticsConfig"]


class StatisticsConfig(BaseModel):
    """The ``[statistics]`` config section."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    slice_by: tuple[str, ...] = ()
    """gold attributes (dotted paths) every metric is also reported by"""
    max_slices: int = Field(default=20, ge=1, strict=True)
    """a numeric attribute with more distinct values is cut into `numeric_bins` bins"""
    numeric_bins: int = Field(default=5, ge=2, strict=True)
    bootstrap_resamples: int = Field(default=1000, ge=1, strict=True)
    bootstrap_seed: int = Field(default=0, strict=True)
    confidence: float = Field(default=0.95, gt=0, lt=1, strict=True)


MOVED_FROM_STRUCTURE: tuple[str, ...] = tuple(StatisticsConfig.model_fields)
"""the keys that were under ``[structure]`` until they got a section of their own (a config
that still has them there is refused with a line naming the new place; the config digest keeps
them under ``structure``, so digests, and so the comparability of earlier runs, are unchanged)"""
