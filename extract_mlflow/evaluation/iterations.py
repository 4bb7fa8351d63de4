"""Scoring a prompt-optimisation loop: one report per iteration against one gold set and config
(read once), with the options of :func:`evaluate`, and a hand-made baseline scored the same way.

>>> scorer = IterationScorer("examples/iterations/gold.jsonl")  # doctest: +SKIP
>>> [it.name for it in scorer.score_folder("examples/iterations")]  # doctest: +SKIP
['iter_1', 'iter_2', 'iter_3']
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..io.iterations import default_gold, find_iterations, read_prompt
from ..io.loading import load_gold
from .evaluate import evaluate, resolve_config

if TYPE_CHECKING:
    from ..config import Config
    from ..report import Report

BASELINE = "baseline"
"""The name of the baseline's row (metrics.csv, tables) and of its child run."""


@dataclass
class Iteration:
    """One pass of the loop: its report, the prompt that produced it, its token cost."""

    report: Report
    prompt: str | None = None
    name: str | None = None
    tokens_per_doc: float | None = None

    def metrics(self) -> dict[str, float]:
        """The report's metrics, plus ``tokens_per_doc`` when given and not already there."""
        out = self.report.metrics()
        if self.tokens_per_doc is not None and "tokens_per_doc" not in out:
            out["tokens_per_doc"] = float(self.tokens_per_doc)
        return out


class IterationScorer:
    """Scores prediction files of one loop against `gold` (read once) with one config and the
    keyword options of :func:`evaluate` (``text_key``, ``profile``, ``sources``,
    ``source_key``, ``approvals``, ``slice_by``)."""

    def __init__(
        self,
        gold: str | Path,
        config: Config | str | Path | Mapping[str, Any] | None = None,
        *,
        id_key: str | None = None,
        **options: Any,
    ) -> None:
        self.config = resolve_config(config, id_key)
        self.gold = load_gold(gold, self.config.id_key)
        self.options = {k: v for k, v in options.items() if v is not None and v != ()}

    def score(self, pred: str | Path, name: str, prompt: str | None = None) -> Iteration:
        """One prediction file as an iteration named `name`."""
        path = Path(pred)
        if not path.is_file():
            raise InputError(f"{path}: prediction file not found")
        report = evaluate(self.gold, path, self.config, **self.options)
        return Iteration(report, prompt, name, report.tokens_per_doc)

    def score_folder(self, folder: str | Path) -> Iterator[Iteration]:
        """Every iteration folder of `folder`, scored lazily in natural order. The folder and
        every prompt are checked first: a bad one is an InputError before anything is scored."""
        items = find_iterations(folder)
        prompts = [read_prompt(i.prompt) if i.prompt is not None else None for i in items]
        return (self.score(i.pred, i.name, p) for i, p in zip(items, prompts, strict=True))


def resolve_gold(folder: str | Path, gold: str | Path | None) -> Path:
    """`gold`, else ``<folder>/gold.jsonl``; an InputError when neither exists, or when
    `folder` is not a folder of iterations (checked first)."""
    find_iterations(folder)
    if gold is not None:
        return Path(gold)
    found = default_gold(folder)
    if found is None:
        raise InputError(f"{folder}: no gold given and no {Path(folder) / 'gold.jsonl'}")
    return found
