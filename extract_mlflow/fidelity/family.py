"""Text fidelity as a metric family: each predicted value checked against its document's source
(:mod:`extract_mlflow.fidelity.score`, which defines every number).

Configured in ``[fidelity]`` (:class:`~extract_mlflow.config.FidelityConfig`, a field of the
config since before the seam); it runs when sources are given (the evaluation's setup says
so). Its own state (:class:`FidelityPart`) folds each document in as it is checked; its section
of the JSON report is the top-level ``fidelity`` key, its per-field metrics
(``field_bleu_proxy/<suffix>``) are named by the evaluation's field keys, and the digests of
the sources, approvals and canaries are inputs of the evaluation, as before the seam. The
scorers and views load with the first part (numpy, the tokenizer): never without sources.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..config import FidelityConfig

if TYPE_CHECKING:
    from .score import FidelityAccumulator, FidelitySummary, FidelityTools

METRICS: tuple[str, ...] = (
    "bleu_proxy",
    "ngram_p1",
    "ngram_p2",
    "ngram_p3",
    "ngram_p4",
    "groundedness",
    "hallucination_rate",
    "injection_obeyed_rate",
    "field_bleu_proxy",
)
"""the base names of the metrics it logs"""


class FidelityPart:
    """The fidelity of one part of an evaluation: its accumulator, and the working objects it
    checks with (rebuilt in each process, never pickled or merged)."""

    def __init__(self, section: FidelityConfig, setup: Any) -> None:
        from .score import FidelityAccumulator  # text fidelity (~20 ms): for sources only

        self.setup = setup
        self.accumulator: FidelityAccumulator = FidelityAccumulator(
            section, setup.approvals, setup.canaries
        )
        self._tools: FidelityTools | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"setup": self.setup, "accumulator": self.accumulator}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.setup, self.accumulator, self._tools = state["setup"], state["accumulator"], None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FidelityPart) and self.accumulator == other.accumulator

    def _build_tools(self) -> FidelityTools:
        from ..fields.normalize import Comparators

        setup, cfg = self.setup, self.setup.config
        skip = (cfg.text_key, *setup.family_keys)
        comparators = Comparators(cfg, setup.mixed)
        self._tools = self.accumulator.tools(comparators, cfg.id_key, skip)
        return self._tools

    def update(
        self,
        position: int,
        doc_id: str,
        gold: Mapping[str, Any],
        pred: Mapping[str, Any] | None,
        failure: str | None,
        source: str | None,
    ) -> None:
        """Check the document's predicted values against its source (none: unchecked)."""
        tools = self._tools or self._build_tools()
        self.accumulator.update(position, doc_id, gold, pred, source, tools)

    def merge(self, other: FidelityPart) -> FidelityPart:
        self.accumulator.merge(other.accumulator)
        return self

    def summary(self, documents: Any, inputs: Any, tools: Any) -> FidelitySummary:
        """The summary (`inputs`: the source ids not in gold are listed)."""
        return self.accumulator.result(list(inputs.unused_sources))


class Fidelity:
    """The family's declarations (:class:`~extract_mlflow.families.base.Family`)."""

    name: str = "fidelity"
    title: str = "Text fidelity"
    section: type[BaseModel] = FidelityConfig
    higher_is_better: bool = True
    metric_names: tuple[str, ...] = METRICS
    reversed_names: tuple[str, ...] = ("hallucination_rate", "injection_obeyed_rate")
    report_key: str | None = "fidelity"

    def active(self, section: FidelityConfig, setup: Any) -> bool:
        return bool(setup.fidelity)  # sources were given

    def definition(self, section: FidelityConfig) -> str:
        return ""  # its definitions are in its summary's signature

    def keys(self, section: FidelityConfig) -> tuple[str, ...]:
        return ()  # the source key is an input of the evaluation (``--source-key``)

    def params(self, section: FidelityConfig, ran: bool) -> dict[str, str]:
        return {}

    def start(self, section: FidelityConfig, setup: Any) -> FidelityPart:
        return FidelityPart(section, setup)

    def document(
        self, gold: Mapping[str, Any], pred: Mapping[str, Any] | None, section: FidelityConfig
    ) -> dict[str, tuple[float, float]]:
        return {}  # a value's fidelity needs its source: only its own state checks it

    def markdown(self, summary: FidelitySummary) -> list[str]:
        from .views import markdown_lines

        return markdown_lines(summary)

    def table(self, summary: FidelitySummary) -> list[str]:
        from .views import table_lines

        return table_lines(summary)


FIDELITY = Fidelity()
