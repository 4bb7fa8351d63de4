"""What the markdown and the table views both show, computed once: fields worst first, the
report's notes and the fidelity field rows; and how long a listing may grow.

Every listing for people is bounded (:func:`capped`): the terminal table, summary.md, the diff
and the comparison page show the first entries of a listing and say how many more there are,
so a report stays readable, and small, whatever the inputs hold; the counts are always whole.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.language import tr
from ..core.messages import MESSAGES
from ..core.text import LISTED, capped, capped_lines

if TYPE_CHECKING:
    from ..report import DocumentResult, FieldResult, Report


def fields_by_f1(report: Report) -> list[FieldResult]:
    """Fields by F1 ascending (undefined last), then by number of errors, then by path."""
    return sorted(
        report.fields.values(),
        key=lambda f: (
            f.counts.f1 is None,
            f.counts.f1 if f.counts.f1 is not None else 0.0,
            -(f.counts.fp + f.counts.fn),
            f.path,
        ),
    )


def status_text(status: str | None) -> str:
    """A document status (``scored``, ``missing``, ``parse_failure``) in the current language."""
    key = f"status.{status}"
    return tr(key) if key in MESSAGES else str(status)


def report_notes(report: Report) -> list[str]:
    """The notes of a report, each kind of note per document or per line bounded
    (:func:`capped_lines`)."""
    notes = [tr("note.warning", message=w) for w in report.warnings]
    failures, more = capped([d for d in report.documents if d.status == "parse_failure"])
    notes += [tr("note.parse_failure", doc_id=d.id, reason=d.reason) for d in failures]
    notes += [more] if more else []
    missing = [d.id for d in report.documents if d.status == "missing"]
    if missing:
        notes.append(tr("note.missing", n=len(missing), ids=", ".join(missing[:20])))
    if report.unknown_ids:
        ids = ", ".join(report.unknown_ids[:20])
        notes.append(tr("note.unknown", n=len(report.unknown_ids), ids=ids))
    unattributed = [tr("note.unattributed", line=u) for u in report.unattributed[:LISTED]]
    if report.unattributed_total > LISTED:
        unattributed.append(tr("list.more", n=report.unattributed_total - LISTED))
    notes += unattributed
    if report.skipped:
        notes.append(tr("note.skipped", paths=", ".join(f"`{s}`" for s in report.skipped)))
    if report.inferred_types:
        inferred = ", ".join(f"`{p}` {t}" for p, t in report.inferred_types.items())
        notes.append(tr("note.inferred", fields=inferred))
    for path, n in report.gold_type_errors.items():
        notes.append(tr("note.gold_type", n=n, path=path))
    pages = report.pages
    notes += capped_lines(
        [_layout_note(d) for d in report.layouts if d.layout and d.layout.missing],
        total=pages.with_missing if pages is not None else None,
    )
    notes += capped_lines(report.notes)
    return notes


def _layout_note(d: DocumentResult) -> str:
    assert d.layout is not None
    why = ", ".join(f"{t} ({w})" for t, w in d.layout.missing.items())
    return tr(
        "note.layout",
        doc_id=d.id,
        present=len(d.layout.present),
        required=d.layout.required,
        why=why,
    )
