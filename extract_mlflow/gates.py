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

Direction: ``higher_is_better`` set on the gate wins; otherwise a metric family's own declaration
(:attr:`~extract_mlflow.families.base.Family.higher_is_better`: ``hallucination_rate``, ``cer``
are lower-is-better), else every metric is higher-is-better except those matching
:data:`LOWER_IS_BETTER` (``parse_failure_rate``, ``tokens_per_doc``, latencies and costs), and
their slices ``<metric>_by_<attribute>/<value>``.

How gates are evaluated against a comparison: :mod:`extract_mlflow.gate_checks`.
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
from .errors import ConfigError
from .families import lower_is_better as family_lower_is_better

if TYPE_CHECKING:
    pass

# Metrics where lower is better (fnmatch patterns over the base name: a slice suffix
# `_by_<attribute>/<value>` and the `best_` prefix of a loop's parent run are stripped first).
# Every other metric is higher-is-better.
LOWER_IS_BETTER: tuple[str, ...] = (
    "parse_failure_rate",
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
    """The metric's own direction: False for rates of failure, costs and latencies (also as the
    best iteration's, ``best_tokens_per_doc``).

    >>> higher_is_better("field_f1/total"), higher_is_better("parse_failure_rate_by_layout/a")
    (True, False)
    >>> higher_is_better("best_tokens_per_doc")
    False
    """
    slice_match = _SLICE.match(metric)
    base = slice_match.group("base") if slice_match else metric
    base = base.removeprefix("best_")
    if family_lower_is_better(base):  # a metric family's own declaration
        return False
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
