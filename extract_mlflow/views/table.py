"""Plain-text tables for the terminal: the report and its metric family sections (rows aligned
with :func:`~extract_mlflow.core.text.aligned`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..core.language import tr
from ..core.text import FIELDS_LISTED, aligned, capped, fmt, safe_lines, truncate
from ..families import by_name
from ..fields.scorer import CATEGORIES
from .sections import fields_by_f1, report_notes, status_text

if TYPE_CHECKING:
    from ..report import FieldResult, Report


FIELD_WIDTH = 32  # field paths longer than this are cut with "…" in the terminal table
WORST_SHOWN = 5  # documents listed under "most errors"


def report_table(report: Report) -> str:
    """A plain-text table for the terminal: a header (documents, parse failures, unknown ids,
    the headline scores), one row per field worst first with its errors by kind, the documents
    with the most errors, the notes and a one-line legend."""
    fields, more = capped(fields_by_f1(report), FIELDS_LISTED)
    out = [*_header(report), "", *aligned(_field_rows(fields), left=2, last_left=True)]
    out += [more] if more else []
    out += _worst_lines(report)
    for name, summary in report.families.items():  # each metric family's own lines
        family = by_name(name)
        out += ["", *family.table(summary)] if family is not None else []
    notes = report_notes(report)
    if notes:
        out += ["", *notes]
    out += ["", tr("table.legend")]
    return safe_lines(out)


def _header(report: Report) -> list[str]:
    """Two lines: what was scored, then the headline scores."""
    m = report.micro
    counts = tr(
        "table.counts",
        documents=len(report.documents),
        failures=report.unreadable_lines,
        unknown=len(report.unknown_ids),
    )
    scores = tr(
        "table.scores",
        precision=fmt(m.precision),
        recall=fmt(m.recall),
        f1=fmt(m.f1),
        macro=fmt(report.macro_f1),
    )
    if report.layout_score is not None:
        scores += tr(
            "table.layout", layout=fmt(report.layout_score), composite=fmt(report.composite)
        )
    if report.tokens_per_doc is not None:
        scores += tr("table.tokens", tokens=report.tokens_per_doc)
    return [counts, scores]


def _field_rows(fields: Sequence[FieldResult]) -> list[tuple[str, ...]]:
    head = (tr("table.head_field"), tr("table.head_type"), "TP", "FP", "FN", "P", "R", "F1")
    rows: list[tuple[str, ...]] = [(*head, tr("table.head_errors"))]
    for f in fields:
        c = f.counts
        rows.append(
            (
                truncate(f.path, FIELD_WIDTH),
                f.type,
                str(c.tp),
                str(c.fp),
                str(c.fn),
                fmt(c.precision),
                fmt(c.recall),
                fmt(c.f1),
                error_counts(f.errors),
            )
        )
    return rows


def error_counts(errors: dict[str, int]) -> str:
    """``wrong_value=3 missing=1``: the non-zero error kinds, in the report's category order.

    >>> error_counts({"missing": 1, "wrong_value": 3, "hallucinated": 0})
    'wrong_value=3 missing=1'
    """
    order = {cat: n for n, cat in enumerate(CATEGORIES)}
    kinds = sorted((k for k, v in errors.items() if v), key=lambda k: (order.get(k, len(order)), k))
    return " ".join(f"{k}={errors[k]}" for k in kinds)


def _worst_lines(report: Report) -> list[str]:
    """The documents with the most errors (FP + FN), a few lines."""
    worst = report.worst_documents(WORST_SHOWN)
    if not worst:
        return []
    rows = [(tr("table.head_worst"), tr("table.head_status"), "FP", "FN", "F1")]
    for d in worst:
        c = d.counts
        rows.append((d.id, status_text(d.status), str(c.fp), str(c.fn), fmt(c.f1)))
    return ["", *aligned(rows, left=2)]
