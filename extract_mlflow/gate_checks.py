"""Evaluating gates (:mod:`extract_mlflow.gates`) on a candidate, a baseline and the bootstrap
intervals of their difference, and the score-time bars of ``score --min-f1/--field-min``; pure.

A metric missing from the candidate fails its gate; missing from the baseline, it fails the
gate's change and drop checks. With no baseline run at all (a first promotion) those checks are
reported as skipped. A glob that matches no metric fails.

Every check is *evaluated* (passed or failed) or *skipped*; :func:`tally_checks` counts both
(the one place that does: every headline and summary of a verdict says what was checked, not
how many gates there were). A verdict resting on zero evaluated checks asserts nothing, so the
comparison built on these results refuses to call it a pass. A gates file that defines no gate
is refused when it is read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING

from .core.paths import strip_list_marks
from .core.text import fmt
from .errors import InputError
from .gates import ZERO_BASELINE_EPSILON, Check, CheckKind, Gate, GateResult

if TYPE_CHECKING:
    from .evaluation.stats import Interval
    from .report import Report


NO_BASELINE = "no baseline run"
"""Why a change or drop check is skipped: there is no baseline run to change from."""


def fmt_value(value: float) -> str:
    """A number for a reason sentence: 4 significant digits (plain for large values)."""
    return f"{value:.1f}" if abs(value) >= 1000 else f"{value:.4g}"


def _value(metrics: Mapping[str, float] | None, name: str) -> float | None:
    """The metric's value, None when absent or not a finite number."""
    if metrics is None or name not in metrics:
        return None
    value = float(metrics[name])
    return value if math.isfinite(value) else None


def _threshold_check(gate: Gate, name: str, cand: float, hib: bool) -> Check | None:
    if gate.threshold is None:
        return None
    bar = gate.threshold
    ok = cand >= bar if hib else cand <= bar
    rel = "<" if hib else ">"
    detail = f"{name} {fmt_value(cand)} {rel} threshold {fmt_value(bar)}"
    if ok:
        detail = f"{name} {fmt_value(cand)} meets threshold {fmt_value(bar)}"
    return Check("threshold", ok, detail)


def _move(name: str, base: float, cand: float) -> str:
    return f"{name} {fmt_value(base)} → {fmt_value(cand)}"


def _absolute_check(gate: Gate, name: str, base: float, cand: float, hib: bool) -> Check | None:
    need = gate.min_absolute_change
    if need is None:
        return None
    ok = cand >= base + need if hib else cand <= base - need
    change = cand - base if hib else base - cand
    detail = (
        f"{_move(name, base, cand)}: improvement {fmt_value(change)} {'≥' if ok else '<'} "
        f"min_absolute_change {fmt_value(need)}"
    )
    return Check("min_absolute_change", ok, detail)


def _relative_check(gate: Gate, name: str, base: float, cand: float, hib: bool) -> Check | None:
    need = gate.min_relative_change
    if need is None:
        return None
    if base == 0:
        ok = cand >= ZERO_BASELINE_EPSILON if hib else cand <= -ZERO_BASELINE_EPSILON
        verb = "exceed" if hib else "fall below"
        detail = (
            f"{name}: baseline is 0, so min_relative_change {fmt_value(need)} falls back to "
            f"'the candidate must {verb} 0' (candidate {fmt_value(cand)})"
        )
        return Check("min_relative_change", ok, detail)
    change = (cand - base) / abs(base) if hib else (base - cand) / abs(base)
    ok = change >= need
    detail = (
        f"{_move(name, base, cand)}: relative improvement {change:.2%} {'≥' if ok else '<'} "
        f"min_relative_change {need:.2%}"
    )
    return Check("min_relative_change", ok, detail)


def _ci_text(interval: Interval) -> str:
    return (
        f"{interval.confidence:.0%} CI of the delta "
        f"[{fmt_value(interval.low)}, {fmt_value(interval.high)}]"
    )


def _drop_check(
    gate: Gate, name: str, base: float, cand: float, hib: bool, interval: Interval | None
) -> Check | None:
    limit = gate.drop_limit
    if limit is None:
        return None
    drop = base - cand if hib else cand - base
    point_ok = cand >= base - limit if hib else cand <= base + limit
    bar = f"max_drop {fmt_value(limit)}"
    said = f"{name} {'dropped' if hib else 'rose'} {fmt_value(drop)}"
    point = f"{said} {'≤' if point_ok else '>'} {bar}"
    if drop < 0:
        said = f"{name} improved by {fmt_value(-drop)}"
        point = f"{said} ({bar})"
    if not gate.significant:
        return Check("max_drop", point_ok, point)
    if interval is None or not (math.isfinite(interval.low) and math.isfinite(interval.high)):
        note = "(no bootstrap interval for this metric: point delta checked)"
        return Check("max_drop", point_ok, f"{point} {note}")
    beyond = interval.high < -limit if hib else interval.low > limit
    verdict = "significantly beyond" if beyond else "not significantly beyond"
    return Check("max_drop", not beyond, f"{said}, {verdict} {bar} ({_ci_text(interval)})")


def _change_checks(
    gate: Gate,
    name: str,
    base: float,
    cand: float,
    hib: bool,
    interval: Interval | None,
) -> list[Check]:
    found = [
        _absolute_check(gate, name, base, cand, hib),
        _relative_check(gate, name, base, cand, hib),
        _drop_check(gate, name, base, cand, hib, interval),
    ]
    return [c for c in found if c is not None]


def _change_kinds(gate: Gate) -> list[CheckKind]:
    kinds: list[CheckKind] = []
    if gate.min_absolute_change is not None:
        kinds.append("min_absolute_change")
    if gate.min_relative_change is not None:
        kinds.append("min_relative_change")
    if gate.drop_limit is not None:
        kinds.append("max_drop")
    return kinds


def evaluate_gate(
    gate: Gate,
    name: str,
    baseline: Mapping[str, float] | None,
    candidate: Mapping[str, float],
    interval: Interval | None = None,
) -> GateResult:
    """Apply one gate to one (concrete) metric."""
    hib = gate.direction(name)
    cand, base = _value(candidate, name), _value(baseline, name)
    checks: list[Check] = []
    if cand is None:
        checks.append(Check("present", False, f"{name} is missing from the candidate run"))
    else:
        checks += [c for c in [_threshold_check(gate, name, cand, hib)] if c is not None]
    kinds = _change_kinds(gate)
    if kinds and baseline is None:
        checks += [Check(k, None, f"{k} skipped: {NO_BASELINE}") for k in kinds]
    elif kinds and base is None:
        checks.append(Check("present", False, f"{name} is missing from the baseline run"))
    elif kinds and cand is not None and base is not None:
        checks += _change_checks(gate, name, base, cand, hib, interval)
    return GateResult(gate, name, base, cand, hib, tuple(checks))


def expand(gate: Gate, names: Iterable[str]) -> list[str]:
    """The metrics a gate applies to: itself, or every name its glob matches (sorted)."""
    if not gate.is_glob:
        return [gate.pattern]
    return sorted(n for n in set(names) if fnmatchcase(n, gate.pattern))


_FIELD_METRIC = re.compile(r"^field_[a-z_0-9]+/(?P<path>.+)$")


def _prediction_only(name: str, baseline: Mapping[str, float] | None) -> bool:
    """A field metric of a field the baseline only predicted (it has no gold values there, so
    no recall): when the candidate stops hallucinating it, its metrics vanish. A glob skips
    such a field; a gate that names it still needs it."""
    m = _FIELD_METRIC.match(name)
    if m is None or baseline is None:
        return False
    return f"field_recall/{m.group('path')}" not in baseline


@dataclass(frozen=True)
class Tally:
    """What a verdict rests on: the checks decided (`checked`, of which `failed` failed) and
    those `skipped`, with the distinct reasons they were skipped (shown as ``2 checked,
    7 skipped: no baseline run`` by :func:`extract_mlflow.views.comparison.checks_text`)."""

    checked: int
    failed: int
    skipped: int
    reasons: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "checked": self.checked,
            "failed": self.failed,
            "skipped": self.skipped,
            "skipped_because": list(self.reasons),
        }


def tally_checks(results: Iterable[GateResult]) -> Tally:
    """Count the checks of `results`: decided (passed or failed), failed, skipped and why;
    ``checked == 0`` means the gates checked nothing (e.g. only change checks, no baseline)."""
    checks = [c for r in results for c in r.checks]
    skipped = [c for c in checks if c.passed is None]
    reasons = dict.fromkeys(c.detail.removeprefix(f"{c.kind} skipped: ") for c in skipped)
    return Tally(
        checked=sum(c.evaluated for c in checks),
        failed=sum(c.passed is False for c in checks),
        skipped=len(skipped),
        reasons=tuple(reasons),
    )


def evaluate_gates(
    gates: Sequence[Gate],
    baseline: Mapping[str, float] | None,
    candidate: Mapping[str, float],
    intervals: Mapping[str, Interval] | None = None,
) -> list[GateResult]:
    """Every gate on every metric it names, in gate order. ``baseline=None`` means there is no
    baseline run (change and drop checks are skipped); ``intervals`` are the bootstrap
    intervals of (candidate - baseline) by metric, used by ``significant`` gates."""
    names = set(candidate) | {n for n in baseline or {} if not _prediction_only(n, baseline)}
    results: list[GateResult] = []
    for gate in gates:
        matched = expand(gate, names)
        if not matched:
            detail = f"no metric matches '{gate.pattern}' in either run"
            check = Check("glob", False, detail)
            results.append(GateResult(gate, gate.pattern, None, None, True, (check,)))
            continue
        for name in matched:
            interval = (intervals or {}).get(name)
            results.append(evaluate_gate(gate, name, baseline, candidate, interval))
    return results


def check_report(
    report: Report,
    min_f1: float | None,
    field_bars: list[tuple[str, float]],
    bars: Sequence[Gate] = (),
) -> list[str]:
    """Every bar the report misses, each as one sentence; empty when all pass.

    A field is named by its path, or by its metric key without the prefix (`line_items.qty`
    for `line_items[].qty`).
    An undefined (n/a) or absent field fails its bar and says so. A bar that is not a finite
    number is refused (:class:`~extract_mlflow.errors.InputError`): NaN compares false both ways,
    so it would pass every report, and an infinite bar would fail every one.
    """
    if min_f1 is not None and not math.isfinite(min_f1):
        raise InputError(f"min_f1 must be a finite number, not {min_f1!r}")
    for path, bar in field_bars:
        if not math.isfinite(bar):
            raise InputError(f"the bar of field {path!r} must be a finite number, not {bar!r}")
    failures: list[str] = []
    if min_f1 is not None:
        f1 = report.micro.f1
        if f1 is None or f1 < min_f1:
            failures.append(f"f1 {fmt(f1)} is below {min_f1:g}")
    by_key = {suffix: p for p, suffix in report.field_keys().items()}
    for path, bar in field_bars:
        real = path if path in report.fields else by_key.get(strip_list_marks(path))
        if real is None:
            failures.append(f"field_f1/{path}: no such field in the report (bar {bar:g})")
            continue
        f1 = report.fields[real].counts.f1
        if f1 is None or f1 < bar:
            failures.append(f"field_f1/{real} {fmt(f1)} is below {bar:g}")
    if bars:  # --min / --max METRIC=X: a threshold on any metric the report logs (or a glob)
        for result in evaluate_gates(bars, None, report.metrics()):
            failures += result.reasons
    return failures


def check_gates(
    report: Report,
    min_f1: float | None = None,
    field_min: Mapping[str, float] | Iterable[tuple[str, float]] | None = None,
) -> list[str]:
    """The score-time bars a report misses (empty: it passes), as :func:`check_report` finds
    them: `min_f1` on micro F1, `field_min` a field's F1 bar by path (a mapping or pairs).

    >>> from extract_mlflow import evaluate
    >>> report = evaluate([{"id": 1, "a": 1, "b": 2}], [{"id": 1, "a": 1, "b": 3}])
    >>> check_gates(report, min_f1=0.4, field_min={"b": 0.5})
    ['field_f1/b 0.000 is below 0.5']
    """
    bars = list(field_min.items()) if isinstance(field_min, Mapping) else list(field_min or ())
    return check_report(report, min_f1, bars)
