"""A comparison for people: the markdown of a CI job summary and the terminal table (verdict,
failing gates, metrics with intervals and p-values, documents that flipped)."""

from __future__ import annotations

from ..comparison import Comparison, MetricRow
from ..core.text import fmt
from .table import aligned

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


def verdict(c: Comparison) -> str:
    """One line: passed or failed, and how many gates."""
    total, failed = len(c.gates), len(c.failed_gates)
    if not c.checked:
        return "NOT GATED: no gate was evaluated"
    if failed:
        return f"FAILED: {failed} of {total} gated metric{'s' if total != 1 else ''} failed"
    if total == 1:
        return "PASSED: the gated metric passed"
    return f"PASSED: all {total} gated metrics passed"


def _sides(c: Comparison) -> str:
    base = (c.baseline_ref or "baseline") if c.has_baseline else "no baseline"
    text = f"{base} → {c.candidate_ref or 'candidate'}"
    if c.paired is not None:
        text += f"; {c.paired} paired documents, {c.resamples} resamples (seed {c.seed})"
    return text


def _main_rows(c: Comparison) -> list[MetricRow]:
    return [r for r in c.rows if not r.metric.startswith("field_")]


def _field_rows(c: Comparison) -> list[MetricRow]:
    rows = [r for r in c.rows if r.metric.startswith("field_f1/")]
    return sorted(rows, key=lambda r: (r.worsening is not None, -(r.worsening or 0.0), r.metric))


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
        lines += ["", "### Failing gates", ""]
        lines += [f"- {r}" for g in c.failed_gates for r in g.reasons]
    skipped = [f"- {g.metric}: {s}" for g in c.gates for s in g.skipped]
    if skipped:
        lines += ["", "### Skipped checks", "", *skipped]
    head = f"| metric | baseline | candidate | Δ | {c.confidence:.0%} CI of Δ | p |"
    lines += ["", "### Metrics", ""]
    if c.paired is not None:
        lines += [
            f"Δ = candidate − baseline; {c.confidence:.0%} percentile interval and two-sided "
            f"p-value from {c.resamples} paired resamples of the documents (seed {c.seed}).",
            "",
        ]
    lines += [head, "|---|---:|---:|---:|---:|---:|"]
    lines += [_md_row(r, r.metric) for r in _main_rows(c)]
    fields = _field_rows(c)
    if fields:
        lines += ["", "### Field F1 (worst change first)", "", head.replace("metric", "field", 1)]
        lines += ["|---|---:|---:|---:|---:|---:|"]
        lines += [_md_row(r, r.metric.removeprefix("field_f1/")) for r in fields]
    lines += _md_documents(c)
    if c.notes:
        lines += ["", "### Notes", "", *[f"- {n}" for n in c.notes]]
    return "\n".join(lines) + "\n"


def _md_documents(c: Comparison) -> list[str]:
    if c.paired is None:
        return []
    lines = ["", "### Documents", ""]
    lines.append(f"- fully correct → not ({len(c.broke)}): {_md_ids(c.broke) or '—'}")
    lines.append(f"- not → fully correct ({len(c.fixed)}): {_md_ids(c.fixed) or '—'}")
    if c.regressed:
        lines += ["", "| most regressed document | F1 | errors (FP+FN) | status |"]
        lines.append("|---|---:|---:|---|")
        for d in c.regressed:
            status = f"{d.baseline_status} → {d.candidate_status}" if d.baseline_status else ""
            lines.append(
                f"| `{d.id}` | {_num(d.baseline_f1)} → {_num(d.candidate_f1)} "
                f"| {d.baseline_errors} → {d.candidate_errors} | {status} |"
            )
    return lines


def comparison_table(c: Comparison) -> str:
    out = [verdict(c), _sides(c)]
    for g in c.failed_gates:
        out += [f"  gate failed: {r}" for r in g.reasons]
    out += [f"  skipped: {g.metric}: {s}" for g in c.gates for s in g.skipped]
    header = ("metric", "baseline", "candidate", "delta", f"{c.confidence:.0%} CI", "p")
    rows: list[tuple[str, ...]] = [header]
    for r in _main_rows(c) + _field_rows(c):
        rows.append(
            (r.metric, _num(r.baseline), _num(r.candidate), _signed(r.delta), _ci(r), _p(r))
        )
    out += ["", *aligned(rows)]
    if c.paired is not None:
        out += [
            "",
            f"fully correct → not ({len(c.broke)}): {', '.join(c.broke[:LIST_LIMIT]) or '-'}",
        ]
        out.append(
            f"not → fully correct ({len(c.fixed)}): {', '.join(c.fixed[:LIST_LIMIT]) or '-'}"
        )
        for d in c.regressed:
            out.append(
                f"regressed {d.id}: F1 {_num(d.baseline_f1)} → {_num(d.candidate_f1)}, "
                f"errors {d.baseline_errors} → {d.candidate_errors}"
            )
    out += [f"note: {n}" for n in c.notes]
    return "\n".join(out) + "\n"
