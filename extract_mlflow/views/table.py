"""Plain-text tables for the terminal: the report, its fidelity and metric family sections, and
the aligned rows every other terminal table is drawn with."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..core.language import tr
from ..core.text import (
    capped,
    capped_lines,
    display_width,
    fmt,
    pad,
    safe_lines,
    terminal_safe,
    truncate,
)
from ..families import by_name
from ..fields.scorer import CATEGORIES
from .sections import (
    FIELDS_LISTED,
    _field_row,
    canaries_line,
    fidelity_fields_by_bleu,
    fidelity_notes,
    field_head,
    fields_by_f1,
    report_notes,
    status_text,
)

if TYPE_CHECKING:
    from ..fidelity.score import FidelitySummary
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
    if report.fidelity is not None:
        out += ["", *_fidelity_lines(report.fidelity)]
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


def fidelity_table(summary: FidelitySummary) -> str:
    """A plain-text table for the terminal: overall, then one row per field."""
    return safe_lines(_fidelity_lines(summary))


def _fidelity_lines(summary: FidelitySummary) -> list[str]:
    o = summary.overall
    head = tr(
        "table.fidelity",
        bleu=fmt(o.bleu_proxy),
        grounded=fmt(o.groundedness),
        rate=fmt(o.hallucination_rate),
        approved=o.approved,
    )
    fields, more = capped(fidelity_fields_by_bleu(summary), FIELDS_LISTED)
    rows = [field_head(), _field_row(tr("fid.all"), o)]
    rows += [_field_row(name, stats) for name, stats in fields]
    out = [head, "", *aligned(rows), *([more] if more else [])]
    injections = []
    for doc_id, findings in summary.injection.items():
        lines = ", ".join(
            tr("table.injection_line", line=f.line, pattern=f.pattern) for f in findings
        )
        injections.append(tr("table.injection", doc_id=doc_id, findings=lines))
    out += capped_lines(injections)
    line = canaries_line(summary)
    if line:
        out.append(line)
    out += fidelity_notes(summary)
    return out


def aligned(
    rows: Sequence[Sequence[str]], *, left: int = 1, rule: bool = True, last_left: bool = False
) -> list[str]:
    """Rows as aligned plain-text lines: the first `left` columns padded on the right, the
    others on the left (numbers), two spaces between columns, trailing blanks cut; with `rule`,
    a line of dashes under the first row (the header); with `last_left`, the last column is
    text, padded on the right too.

    >>> aligned([("name", "n"), ("a", "10")])
    ['name   n', '----  --', 'a     10']
    """
    rows = [[terminal_safe(c, one_line=True) for c in r] for r in rows]  # one line each
    widths = [max(display_width(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for n, r in enumerate(rows):
        cells = [
            pad(c, w, right=not (i < left or (last_left and i == len(widths) - 1)))
            for i, (c, w) in enumerate(zip(r, widths, strict=False))
        ]
        out.append("  ".join(cells).rstrip())
        if rule and n == 0:
            out.append("  ".join("-" * w for w in widths))
    return out
