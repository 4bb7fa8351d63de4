"""A comparison for people: the markdown of a CI job summary and the terminal table (verdict,
failing gates, metrics with intervals and p-values, documents that flipped)."""

from __future__ import annotations

from ..comparison import Comparison, MetricRow
from ..core.language import tr
from ..core.text import FIELDS_LISTED, aligned, capped, capped_lines, fmt, safe_lines
from ..gate_checks import Tally
from .sections import status_text

LIST_LIMIT = 20  # ids shown per list in the markdown and table views


def _num(value: float | None) -> str:
    """A metric value: 3 decimals, whole numbers above 1 (document counts) without them."""
    if value is not None and abs(value) > 1 and float(value).is_integer():
        return str(int(value))
    return fmt(value)


def _signed(value: float | None) -> str:
    return "—" if value is None else f"{value:+.3f}"


def _ci(row: MetricRow) -> str:
    iv = row.interval
    return "" if iv is None else f"[{iv.low:+.3f}, {iv.high:+.3f}]"


def _p(row: MetricRow) -> str:
    return "" if row.interval is None else f"{row.interval.p_value:.3f}"


def checks_text(t: Tally) -> str:
    """What a verdict rests on, e.g. ``2 checked, 7 skipped: no baseline run``: the count of
    :func:`~extract_mlflow.gate_checks.tally_checks`, never the number of gates."""
    parts = [tr("cmp.checks_checked", n=t.checked)]
    if t.failed:
        parts.append(tr("cmp.checks_failed", n=t.failed))
    if t.skipped:
        parts.append(tr("cmp.checks_skipped", n=t.skipped, reasons="; ".join(t.reasons)))
    return ", ".join(parts)


def verdict(c: Comparison) -> str:
    """One line: passed or failed, and how many checks were decided, failed and skipped."""
    t = c.tally
    if not c.checked:
        return (
            tr("cmp.not_gated_checks", checks=checks_text(t)) if t.skipped else tr("cmp.not_gated")
        )
    return tr("cmp.passed" if c.passed else "cmp.failed", checks=checks_text(t))


def _sides(c: Comparison) -> str:
    base = (c.baseline_ref or tr("cmp.baseline")) if c.has_baseline else tr("cmp.no_baseline")
    text = f"{base} → {c.candidate_ref or tr('cmp.candidate')}"
    if c.paired is not None:
        text += tr("cmp.paired", paired=c.paired, resamples=c.resamples, seed=c.seed)
    return text


def _main_rows(c: Comparison) -> list[MetricRow]:
    return [r for r in c.rows if not r.metric.startswith("field_")]


def _field_rows(c: Comparison) -> tuple[list[MetricRow], str | None]:
    """The field F1 rows, the most worsened first, bounded (and the line saying how many
    more there are)."""
    rows = [r for r in c.rows if r.metric.startswith("field_f1/")]
    rows.sort(key=lambda r: (r.worsening is not None, -(r.worsening or 0.0), r.metric))
    shown, more = capped(rows, FIELDS_LISTED)
    return list(shown), more


def _reasons(c: Comparison) -> list[str]:
    """Why each failing gate failed (a glob gate: one reason per field), bounded."""
    return capped_lines([r for g in c.failed_gates for r in g.reasons], FIELDS_LISTED)


def _md_row(r: MetricRow, name: str) -> str:
    return (
        f"| `{name}` | {_num(r.baseline)} | {_num(r.candidate)} | {_signed(r.delta)} "
        f"| {_ci(r)} | {_p(r)} |"
    )


def _md_ids(ids: tuple[str, ...]) -> str:
    shown = ", ".join(f"`{i}`" for i in ids[:LIST_LIMIT])
    return shown + (f" … (+{len(ids) - LIST_LIMIT})" if len(ids) > LIST_LIMIT else "")


def comparison_markdown(c: Comparison) -> str:
    mark = "✅" if c.passed else ("⚠️" if not c.checked else "❌")
    lines = [f"## {mark} extract_mlflow compare: {verdict(c)}", "", _sides(c)]
    if c.failed_gates:
        lines += ["", tr("cmp.failing_gates"), ""]
        lines += [f"- {r}" for r in _reasons(c)]
    skipped = [f"- {g.metric}: {s}" for g in c.gates for s in g.skipped]
    if skipped:
        lines += ["", tr("cmp.skipped_checks"), "", *skipped]
    head = tr("cmp.md_head", confidence=c.confidence)
    lines += ["", tr("cmp.metrics"), ""]
    if c.paired is not None:
        method = tr("cmp.method", confidence=c.confidence, resamples=c.resamples, seed=c.seed)
        lines += [method, ""]
    lines += [head, "|---|---:|---:|---:|---:|---:|"]
    lines += [_md_row(r, r.metric) for r in _main_rows(c)]
    fields, more = _field_rows(c)
    if fields:
        field_head = tr("cmp.md_field_head", confidence=c.confidence)
        lines += ["", tr("cmp.field_f1"), "", field_head]
        lines += ["|---|---:|---:|---:|---:|---:|"]
        lines += [_md_row(r, r.metric.removeprefix("field_f1/")) for r in fields]
        lines += ["", more] if more else []
    lines += _md_documents(c)
    if c.notes:
        lines += ["", tr("diff.md_notes"), "", *[f"- {n}" for n in capped_lines(c.notes)]]
    return safe_lines(lines)


def _md_documents(c: Comparison) -> list[str]:
    if c.paired is None:
        return []
    lines = ["", tr("cmp.documents"), ""]
    lines.append(tr("cmp.md_broke", n=len(c.broke), ids=_md_ids(c.broke) or "—"))
    lines.append(tr("cmp.md_fixed", n=len(c.fixed), ids=_md_ids(c.fixed) or "—"))
    if c.regressed:
        lines += ["", tr("cmp.md_regressed_head")]
        lines.append("|---|---:|---:|---|")
        regressed, more = capped(c.regressed)
        for d in regressed:
            status = (
                f"{status_text(d.baseline_status)} → {status_text(d.candidate_status)}"
                if d.baseline_status
                else ""
            )
            lines.append(
                f"| `{d.id}` | {_num(d.baseline_f1)} → {_num(d.candidate_f1)} "
                f"| {d.baseline_errors} → {d.candidate_errors} | {status} |"
            )
        lines += ["", more] if more else []
    return lines


def comparison_table(c: Comparison) -> str:
    out = [verdict(c), _sides(c)]
    out += [tr("cmp.gate_failed", reason=r) for r in _reasons(c)]
    out += [tr("cmp.skipped", metric=g.metric, reason=s) for g in c.gates for s in g.skipped]
    header = (
        tr("cmp.head_metric"),
        tr("cmp.baseline"),
        tr("cmp.candidate"),
        tr("cmp.head_delta"),
        tr("diff.head_ci", confidence=c.confidence),
        "p",
    )
    rows: list[tuple[str, ...]] = [header]
    fields, more = _field_rows(c)
    for r in _main_rows(c) + fields:
        rows.append(
            (r.metric, _num(r.baseline), _num(r.candidate), _signed(r.delta), _ci(r), _p(r))
        )
    out += ["", *aligned(rows), *([more] if more else [])]
    if c.paired is not None:
        none = tr("diff.none")
        broke = ", ".join(c.broke[:LIST_LIMIT]) or none
        out += ["", tr("cmp.broke", n=len(c.broke), ids=broke)]
        fixed = ", ".join(c.fixed[:LIST_LIMIT]) or none
        out.append(tr("cmp.fixed", n=len(c.fixed), ids=fixed))
        regressed, more = capped(c.regressed)
        for d in regressed:
            out.append(
                tr(
                    "cmp.regressed",
                    doc_id=d.id,
                    before=_num(d.baseline_f1),
                    after=_num(d.candidate_f1),
                    errors_before=d.baseline_errors,
                    errors_after=d.candidate_errors,
                )
            )
        out += [more] if more else []
    out += [tr("diff.note", note=n) for n in capped_lines(c.notes)]
    return safe_lines(out)
