"""The ``[structure]`` config section: the key names the structure scorers read, their
definitions and tolerances (the run-wide slice and bootstrap settings are ``[statistics]``:
:class:`~extract_mlflow.core.statistics.StatisticsConfig`).

Beside the scorers, below the config and the metric families (:mod:`extract_mlflow.families`),
so that a family module can declare it as its section and call the scorers; the config keeps it
as its ``structure`` field (:class:`extract_mlflow.config.Config`), so its digest and every
output are what they were.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["METRICS", "StructureConfig"]

METRICS: tuple[str, ...] = (
    "teds",
    "teds_s",
    "teds_normalized",
    "teds_s_normalized",
    "header_association",
    "reading_order",
    "kendall_tau",
    "continuity",
    "anls",
    "anls_official",
    "boundary_precision",
    "boundary_recall",
    "boundary_f1",
)
"""every structure metric, in the order of every listing"""


class StructureConfig(BaseModel):
    """The ``[structure]`` config section."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tables_key: str = Field(default="tables", min_length=1, strict=True)
    blocks_key: str = Field(default="blocks", min_length=1, strict=True)
    regions_key: str = Field(default="regions", min_length=1, strict=True)
    boundaries_key: str = Field(default="boundaries", min_length=1, strict=True)
    block_id_key: str = Field(default="id", min_length=1, strict=True)
    page_key: str = Field(default="page", min_length=1, strict=True)
    region_id_key: str = Field(default="id", min_length=1, strict=True)
    region_text_key: str = Field(default="text", min_length=1, strict=True)
    boundary_window: float = Field(default=0.0, ge=0, strict=True)
    anls_threshold: float = Field(default=0.5, gt=0, le=1, strict=True)
    teds_time_budget_s: float = Field(default=10.0, gt=0, strict=True)
    teds: Literal["official", "normalized"] = "official"
    """TEDS definition: the public PubTabNet evaluation's (``teds``, ``teds_s``), or the
    normalised variant (``teds_normalized``, ``teds_s_normalized``)."""
    anls: Literal["normalized", "official"] = "normalized"
    """ANLS rule: NL = distance / the longer normalised string (``anls``), or the DocVQA
    evaluation script's, which divides by the longer raw string (``anls_official``)."""

    def input_keys(self) -> tuple[str, ...]:
        """The top-level gold keys the scorers read: a document whose gold line has one is
        scored for structure; they are never scored as fields."""
        return (self.tables_key, self.blocks_key, self.regions_key, self.boundaries_key)
