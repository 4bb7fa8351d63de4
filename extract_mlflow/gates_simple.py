"""The bars `score` can check on its own report (`--min-f1`, `--field-min`); pure."""

from __future__ import annotations

from .render import fmt
from .report import Report


def check_score_gates(
    report: Report, min_f1: float | None, field_bars: list[tuple[str, float]]
) -> list[str]:
    """Every bar the report misses, each as one sentence; empty when all pass.

    A field is named by its path, or by its metric key without the prefix (`line_items.qty`
    for `line_items[].qty`).
    An undefined (n/a) or absent field fails its bar and says so.
    """
    failures: list[str] = []
    if min_f1 is not None:
        f1 = report.micro.f1
        if f1 is None or f1 < min_f1:
            failures.append(f"f1 {fmt(f1)} is below {min_f1:g}")
    by_key = {suffix: p for p, suffix in report.field_keys().items()}
    for path, bar in field_bars:
        real = path if path in report.fields else by_key.get(path.replace("[]", ""))
        if real is None:
            failures.append(f"field_f1/{path}: no such field in the report (bar {bar:g})")
            continue
        f1 = report.fields[real].counts.f1
        if f1 is None or f1 < bar:
            failures.append(f"field_f1/{real} {fmt(f1)} is below {bar:g}")
    return failures
