"""Release gates: bars a candidate run must clear, alone or against a baseline run; pure.

A gates file (TOML or JSON) is a list of ``[[gate]]`` tables; ``metric`` may be a glob::

    [[gate]]
    metric = "f1"
    threshold = 0.80        # absolute bar (MLflow MetricThreshold.threshold)
    max_drop = 0.01         # candidate >= baseline - 0.01

    [[gate]]
    metric = "field_f1/*"
    max_drop = 0.05
    significant = true      # fail only when the bootstrap interval lies wholly below -max_drop

Checks, for a higher-is-better metric (every comparison mirrored when lower is better):

- ``threshold``: candidate >= threshold;
- ``min_absolute_change``: candidate >= baseline + change;
- ``min_relative_change``: (candidate - baseline) / |baseline| >= change, and with a zero
  baseline: candidate >= baseline + 1e-10 (MLflow's ``MetricThreshold`` semantics exactly);
- ``max_drop``: candidate >= baseline - max_drop; with ``significant = true`` the gate fails only
  when the whole interval of (candidate - baseline) lies below -max_drop (``significant`` without
  ``max_drop`` means ``max_drop = 0``: fail on any significant drop). A metric without an
  interval is checked on its point delta instead, and the check says so.

Direction: ``higher_is_better`` set on the gate wins; otherwise every metric is higher-is-better
except those matching :data:`LOWER_IS_BETTER` (``parse_failure_rate``, ``hallucination_rate``,
``tokens_per_doc``, latencies and costs, and their slices ``<metric>_by_<attribute>/<value>``).

A metric missing from the candidate fails its gate; missing from the baseline, it fails the
gate's change and drop checks. With no baseline run at all (a first promotion) those checks are
reported as skipped. A glob that matches no metric fails.

Every check is *evaluated* (passed or failed) or *skipped*; :func:`evaluated_checks` counts the
evaluated ones. A verdict resting on zero evaluated checks asserts nothing, so the comparison
built on these results refuses to call it a pass. A gates file that defines no gate is refused
when it is read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .config import read_settings
from .core.paths import strip_list_marks
from .core.text import fmt
from .errors import ConfigError, InputError

if TYPE_CHECKING:
    from .evaluation.stats import Interval
    from .report import Report

# Metrics where lower is better (fnmatch patterns over the base name: a slice suffix
# `_by_<attribute>/<value>` is stripped first). Every other metric is higher-is-better.
LOWER_IS_BETTER: tuple[str, ...] = (
    "parse_failure_rate",
    "hallucination_rate",
    "tokens_per_doc",
    "latency*",
    "*_latency*",
    "cost*",
    "*_cost*",
)
ZERO_BASELINE_EPSILON = 1e-10  # MLflow: a zero baseline must be beaten by this much
_GLOB_CHARS = re.compile(r"[*?\[]")
_SLICE = re.compile(r"^(?P<base>.+)_by_[^/]+/.*$")

CheckKind = Literal[
    "present", "threshold", "min_absolute_change", "min_relative_change", "max_drop", "glob"
]


def higher_is_better(metric: str) -> bool:
    """The metric's own direction: False for rates of failure, costs and latencies.

    >>> higher_is_better("field_f1/total"), higher_is_better("parse_failure_rate_by_layout/a")
    (True, False)
    """
    slice_match = _SLICE.match(metric)
    base = slice_match.group("base") if slice_match else metric
    return not any(fnmatchcase(base, pattern) for pattern in LOWER_IS_BETTER)


def normalize_metric(name: str) -> str:
    """A gate's metric name as logged: the `[]` list marker of a field path is dropped."""
    return strip_list_marks(name.strip())


class Gate(BaseModel):
    """One gate: a metric (or glob) and the checks it must pass."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metric: str = Field(min_length=1, strict=True)
    threshold: float | None = Field(default=None, strict=True, allow_inf_nan=False)
    min_absolute_change: float | None = Field(default=None, gt=0, strict=True, allow_inf_nan=False)
    min_relative_change: float | None = Field(
        default=None, ge=0, le=1, strict=True, allow_inf_nan=False
    )
    max_drop: float | None = Field(default=None, ge=0, strict=True, allow_inf_nan=False)
    significant: bool = Field(default=False, strict=True)
    higher_is_better: bool | None = Field(default=None, strict=True)

    @model_validator(mode="after")
    def _has_a_check(self) -> Gate:
        checks = (self.threshold, self.min_absolute_change, self.min_relative_change)
        if all(c is None for c in checks) and self.max_drop is None and not self.significant:
            raise ValueError(
                "a gate needs at least one of threshold, min_absolute_change, "
                "min_relative_change, max_drop or significant"
            )
        return self

    @property
    def pattern(self) -> str:
        return normalize_metric(self.metric)

    @property
    def is_glob(self) -> bool:
        return bool(_GLOB_CHARS.search(self.pattern))

    @property
    def drop_limit(self) -> float | None:
        """The allowed drop: ``max_drop``, or 0 for a bare ``significant = true``."""
        if self.max_drop is not None:
            return self.max_drop
        return 0.0 if self.significant else None

    def direction(self, metric: str) -> bool:
        """True when higher is better for `metric` under this gate."""
        return higher_is_better(metric) if self.higher_is_better is None else self.higher_is_better


@dataclass(frozen=True, slots=True)
class Check:
    """One check of one gate on one metric: passed, failed, or skipped (``passed is None``)."""

    kind: CheckKind
    passed: bool | None
    detail: str

    @property
    def evaluated(self) -> bool:
        """True when the check was decided (passed or failed), False when it was skipped."""
        return self.passed is not None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "passed": self.passed, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class GateResult:
    """A gate applied to one metric (a glob gives one result per matching metric)."""

    gate: Gate
    metric: str
    baseline: float | None
    candidate: float | None
    higher_is_better: bool
    checks: tuple[Check, ...] = field(default_factory=tuple)

    @property
    def passed(self) -> bool:
        return all(c.passed is not False for c in self.checks)

    @property
    def reasons(self) -> list[str]:
        """Why it failed: one sentence per failed check (empty when it passed)."""
        return [c.detail for c in self.checks if c.passed is False]

    @property
    def skipped(self) -> list[str]:
        return [c.detail for c in self.checks if c.passed is None]

    @property
    def evaluated(self) -> int:
        """How many of its checks were decided (not skipped)."""
        return sum(c.evaluated for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "gate": self.gate.model_dump(exclude_none=True),
            "metric": self.metric,
            "passed": self.passed,
            "baseline": self.baseline,
            "candidate": self.candidate,
            "higher_is_better": self.higher_is_better,
            "reasons": self.reasons,
            "evaluated": self.evaluated,
            "checks": [c.to_dict() for c in self.checks],
        }


# -- building gates -------------------------------------------------------------------------


def _validation_message(source: str, prefix: str, err: ValidationError) -> str:
    first = err.errors()[0]
    loc = ".".join(str(p) for p in first["loc"])
    where = ".".join(p for p in (prefix, loc) if p) or "<root>"
    if first["type"] == "extra_forbidden":
        return f"{source}: unknown gate key '{where}'"
    return f"{source}: gate key '{where}': {first['msg']}"


def gate_from_mapping(data: Any, source: str = "gates", where: str = "gate") -> Gate:
    """Validate one gate table; errors name the source and the key."""
    if not isinstance(data, Mapping):
        what = where or "a gate"
        raise ConfigError(f"{source}: {what} must be a table/object, not {type(data).__name__}")
    try:
        return Gate.model_validate(dict(data))
    except ValidationError as err:
        raise ConfigError(_validation_message(source, where, err)) from None


def gates_from_data(data: Any, source: str = "gates") -> list[Gate]:
    """Gates from parsed TOML/JSON: ``{"gate": [...]}`` (a bare JSON list is accepted too)."""
    if isinstance(data, Mapping):
        unknown = sorted(set(data) - {"gate"})
        if unknown:
            raise ConfigError(f"{source}: unknown gates key '{unknown[0]}' (use [[gate]] tables)")
        data = data.get("gate", [])
    if not isinstance(data, list):
        raise ConfigError(f"{source}: 'gate' must be a list of tables ([[gate]])")
    return [gate_from_mapping(g, source, f"gate[{i}]") for i, g in enumerate(data)]


def load_gates(path: str | Path) -> list[Gate]:
    """Read a gates file: TOML (``[[gate]]`` tables) or, for ``.json``, JSON."""
    p = Path(path)
    data = read_settings(p, "gates file")
    gates = gates_from_data(data, str(p))
    if not gates:
        raise ConfigError(
            f"{p}: the gates file defines no gate ([[gate]] tables), so no gate was evaluated"
        )
    return gates


def _split_shortcut(option: str, item: str) -> tuple[str, float]:
    metric, sep, raw = item.rpartition("=")
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not sep or not metric.strip():
        raise ConfigError(f"{option} {item!r}: expected METRIC=NUMBER, e.g. 'f1=0.8'")
    if not math.isfinite(value):
        raise ConfigError(
            f"{option} {item!r}: expected METRIC=NUMBER with a finite number, e.g. 'f1=0.8'"
        )
    return metric.strip(), value


def parse_shortcuts(
    min: Iterable[str] = (),
    max_drop: Iterable[str] = (),
    max: Iterable[str] = (),
) -> list[Gate]:
    """Gates from CLI shortcuts: ``--min f1=0.8`` (candidate >= 0.8), ``--max
    parse_failure_rate=0.05`` (candidate <= 0.05) and ``--max-drop f1=0.01`` (a drop in the
    metric's own direction). A metric may be a glob: ``--max-drop 'field_f1/*=0.05'``."""
    gates: list[Gate] = []
    for option, items, key, extra in (
        ("--min", min, "threshold", {"higher_is_better": True}),
        ("--max", max, "threshold", {"higher_is_better": False}),
        ("--max-drop", max_drop, "max_drop", {}),
    ):
        for item in items:
            metric, value = _split_shortcut(option, item)
            data = {"metric": metric, key: value, **extra}
            gates.append(gate_from_mapping(data, f"{option} {item!r}", ""))
    return gates


def from_metric_thresholds(thresholds: Mapping[str, Any]) -> list[Gate]:
    """Gates from MLflow ``MetricThreshold`` objects (duck-typed: ``threshold``,
    ``min_absolute_change``, ``min_relative_change``, ``greater_is_better``) or plain mappings
    of gate keys, keyed by metric name."""
    gates = []
    for metric, value in thresholds.items():
        if isinstance(value, Gate):
            gates.append(value.model_copy(update={"metric": metric}))
            continue
        if isinstance(value, Mapping):
            data = {"metric": metric, **value}
        else:
            data = {
                "metric": metric,
                "threshold": getattr(value, "threshold", None),
                "min_absolute_change": getattr(value, "min_absolute_change", None),
                "min_relative_change": getattr(value, "min_relative_change", None),
                "higher_is_better": getattr(value, "greater_is_better", None),
            }
        gates.append(gate_from_mapping(data, f"thresholds[{metric!r}]", ""))
    return gates


GatesLike = Sequence[Gate | Mapping[str, Any]] | Mapping[str, Any] | str | Path | None


def coerce_gates(gates: GatesLike) -> list[Gate]:
    """Any accepted form of gates as a list of :class:`Gate`: ``None``, a path to a gates file,
    a list of gates (or gate mappings), a parsed gates file (``{"gate": [...]}``), or a mapping
    of metric → ``MetricThreshold``."""
    if gates is None:
        return []
    if isinstance(gates, str | Path):
        return load_gates(gates)
    if isinstance(gates, Mapping):
        if isinstance(gates.get("gate"), list):  # a parsed gates file
            return gates_from_data(gates)
        return from_metric_thresholds(gates)
    return [
        g if isinstance(g, Gate) else gate_from_mapping(g, "gates", f"gate[{i}]")
        for i, g in enumerate(gates)
    ]


# -- evaluating gates -----------------------------------------------------------------------


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
        checks += [Check(k, None, f"{k} skipped: no baseline run") for k in kinds]
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


def evaluated_checks(results: Iterable[GateResult]) -> int:
    """How many checks of `results` were decided (passed or failed); 0 means the gates
    checked nothing (e.g. only change checks, and no baseline)."""
    return sum(r.evaluated for r in results)


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
    report: Report, min_f1: float | None, field_bars: list[tuple[str, float]]
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
    return failures
