"""The page results of (a part of) an evaluation as columns: what a pass keeps of each page.

A page's :class:`~extract_mlflow.pages.LayoutResult` (its sections present and missing, why,
its CSV problems) costs a few KB; a run keeps it for the :data:`PAGES_LISTED` first pages in
gold order (what the JSON, the views and the CLI list) and the :data:`WORST_KEPT` with the most
errors (where the worst documents come from), and of every page only a few numbers in chunked
columns (:mod:`~extract_mlflow.evaluation.chunks`): whether it has a layout, its sections
present and required, its gold and predicted rows; besides them, how many pages lack each
required section and how often each CSV problem occurs. Every score and summary of the pages
is computed from those (:class:`~extract_mlflow.pages.PageSummary`), so none depends on how
many are listed. Parts merge in any order (:meth:`PageRecords.merge`) and give the same
summary as one pass.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..pages import LayoutResult, PageSummary
from .chunks import Chunked, Runs
from .field_counts import Smallest

if TYPE_CHECKING:
    from ..report import DocumentResult

PAGES_LISTED = 10_000
"""Pages whose full layout result a run keeps and lists (JSON ``layout.documents``, the pages
table of summary.md, the notes, the progress lines of ``score``): the first ones in gold order.
Every page's layout score is in the columns and in ``documents.parquet``."""

WORST_KEPT = 50
"""Pages with the most errors (FP + FN, ties by id) whose layout result is kept besides the
listed ones, so a report's worst documents (a few) carry theirs."""


class PageRecords:
    """The pages of a part as columns, tallies and a few full layouts (see the module)."""

    def __init__(self, listed: int | None = None) -> None:
        self.runs = Runs()
        """the pages' positions, in the order added"""
        self.values = Chunked(width=5)
        """per page: has a layout (0/1), present, required, gold rows + 1, predicted rows + 1"""
        self.missing: dict[str, int] = {}
        self.problems: dict[str, int] = {}
        self.listed: Smallest[int, LayoutResult] = Smallest(
            PAGES_LISTED if listed is None else listed
        )
        self.worst: Smallest[tuple[int, str], tuple[int, LayoutResult]] = Smallest(WORST_KEPT)

    def add(self, record: DocumentResult) -> None:
        """One scored page (or profiled document): `record`'s layout and rows."""
        layout, position = record.layout, record.position
        self.runs.add(position)
        present, required = (len(layout.present), layout.required) if layout else (0, 0)
        gold, pred = record.rows_gold, record.rows_pred
        self.values.append(
            (
                int(layout is not None),
                present,
                required,
                0 if gold is None else gold + 1,
                0 if pred is None else pred + 1,
            )
        )
        if layout is None:
            return
        for title in layout.missing:
            self.missing[title] = self.missing.get(title, 0) + 1
        for problem in layout.problems:
            self.problems[problem] = self.problems.get(problem, 0) + 1
        self.listed.offer(position, layout)
        errors = record.counts.fp + record.counts.fn
        self.worst.offer((-errors, record.id), (position, layout))

    def merge(self, other: PageRecords) -> PageRecords:
        """This part and `other` (disjoint positions) as one (`other` is left as it is)."""
        self.runs.extend(other.runs)
        self.values.extend(other.values)
        for mine, theirs in ((self.missing, other.missing), (self.problems, other.problems)):
            for key, n in theirs.items():
                mine[key] = mine.get(key, 0) + n
        self.listed.merge(other.listed)
        self.worst.merge(other.worst)
        return self

    def summary(self) -> PageSummary:
        """The pages in gold order (by position)."""
        positions = self.runs.positions()
        values = self.values.joined()
        if not isinstance(positions, range) and not self.runs.in_order():
            order = np.argsort(positions, kind="stable")
            positions, values = positions[order], values[order]
        layouts = dict(self.listed.items)
        layouts.update(item for _, item in self.worst.items)
        return PageSummary(
            positions,
            values,
            dict(self.missing),
            dict(self.problems),
            layouts,
            [p for p, _ in self.listed.items],
        )
