"""Two prediction files scored against the same gold, side by side: each field's F1 before → after,
the fields that regressed or improved by more than a tolerance, and the documents that flipped
between fully correct and not, with the fields whose counts changed. Pure.

The paired bootstrap and the document flips are those of :func:`~extract_mlflow.comparison.compare`
(A is the baseline, B the candidate), so ``diff`` and ``compare`` agree on every interval.

A field *regressed* when its F1 fell by more than `tolerance` (``after < before − tolerance``)
and *improved* when it rose by more than `tolerance`; a field whose F1 is n/a on either side
(0/0) is neither. So ``diff(a, a)`` finds nothing, and swapping A and B swaps the regressions
and the improvements.

>>> from extract_mlflow import evaluate
>>> gold = [{"id": "1", "total": 10, "name": "A"}, {"id": "2", "total": 20, "name": "B"}]
>>> a = evaluate(gold, [
...     {"id": "1", "total": 10, "name": "A"}, {"id": "2", "total": 21, "name": "B"}])
>>> b = evaluate(gold, [
...     {"id": "1", "total": 10, "name": "X"}, {"id": "2", "total": 20, "name": "B"}])
>>> d = diff(a, b)
>>> [f.path for f in d.regressions], [f.path for f in d.improvements]
(['name'], ['total'])
>>> [(f.id, f.direction, [c.path for c in f.fields]) for f in d.flips]
[('1', 'broke', ['name']), ('2', 'fixed', ['total'])]
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .comparison import Comparison, ScoredRun, _clean, compare
from .core.keys import field_key
from .errors import InputError
from .evaluation.paired import field_paths
from .evaluation.records import counts_frame
from .evaluation.stats import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, Interval
from .flips import BROKE, FIXED, FieldChange, Flip, Triple

if TYPE_CHECKING:
    import pandas as pd

    from .report import Report

TOLERANCE_ERROR = "tolerance (--tolerance) must be a finite number ≥ 0, not {value!r}"


@dataclass(frozen=True, slots=True)
class FieldDelta:
    """One field's F1 in A and in B (None: 0/0), with the paired-bootstrap interval of the
    change when there is one."""

    path: str
    key: str
    before: float | None
    after: float | None
    interval: Interval | None = None

    @property
    def delta(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before

    def to_dict(self) -> dict[str, Any]:
        iv = self.interval
        return {
            "field": self.path,
            "key": self.key,
            "before": self.before,
            "after": self.after,
            "delta": self.delta,
            "ci_low": iv.low if iv else None,
            "ci_high": iv.high if iv else None,
        }


@dataclass(frozen=True)
class Diff:
    """What changed from prediction file A to prediction file B (see the module docstring)."""

    fields: tuple[FieldDelta, ...]
    regressions: tuple[FieldDelta, ...]
    improvements: tuple[FieldDelta, ...]
    flips: tuple[Flip, ...]
    comparison: Comparison
    tolerance: float = 0.0
    report_a: Report | None = field(default=None, repr=False, compare=False)
    report_b: Report | None = field(default=None, repr=False, compare=False)

    @property
    def fixed(self) -> tuple[Flip, ...]:
        return tuple(f for f in self.flips if f.direction == FIXED)

    @property
    def broke(self) -> tuple[Flip, ...]:
        return tuple(f for f in self.flips if f.direction == BROKE)

    @property
    def micro(self) -> FieldDelta:
        """Micro F1 before → after, with its interval."""
        return self._headline("f1")

    @property
    def macro(self) -> FieldDelta:
        """Macro F1 before → after, with its interval."""
        return self._headline("macro_f1")

    def _headline(self, metric: str) -> FieldDelta:
        row = self.comparison.row(metric)
        if row is None:
            return FieldDelta(metric, metric, None, None)
        return FieldDelta(metric, metric, row.baseline, row.candidate, row.interval)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready data; its keys are a stable schema (NaN becomes None)."""
        c = self.comparison
        data: dict[str, Any] = _clean(
            {
                "a": c.baseline_ref,
                "b": c.candidate_ref,
                "tolerance": self.tolerance,
                "micro_f1": self.micro.to_dict(),
                "macro_f1": self.macro.to_dict(),
                "fields": [f.to_dict() for f in self.fields],
                "regressions": [f.to_dict() for f in self.regressions],
                "improvements": [f.to_dict() for f in self.improvements],
                "flips": [f.to_dict() for f in self.flips],
                "documents": {"paired": c.paired, "a_only": list(c.baseline_only),
                              "b_only": list(c.candidate_only)},
                "bootstrap": {"resamples": c.resamples, "seed": c.seed,
                              "confidence": c.confidence},
                "notes": list(c.notes),
            }
        )  # fmt: skip
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2) + "\n"


@dataclass(frozen=True)
class Sides:
    """One document as the gold set, A and B hold it (None: no line, or an unreadable one),
    and for A and B the leaf paths the scorer marked wrong, each with the wrong predicted
    values (empty for a missing value)."""

    gold: Mapping[str, Any] | None
    a: Mapping[str, Any] | None
    b: Mapping[str, Any] | None
    wrong_a: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    wrong_b: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    id_key: str = "id"


Wrong = dict[str, tuple[Any, ...]]
"""field path -> the predicted values the scorer marked wrong there"""


def _wrong(report: Report | None, ids: set[str]) -> dict[str, Wrong]:
    """What the scorer marked wrong in each of the documents `ids` (one pass over them)."""
    found: dict[str, Wrong] = {}
    for doc in report.documents if report is not None else ():
        if doc.id not in ids:
            continue
        out: dict[str, list[Any]] = {}
        for e in doc.errors:
            out.setdefault(e.path, [])
            if e.got is not None:
                out[e.path].append(e.got)
        found[doc.id] = {path: tuple(values) for path, values in out.items()}
    return found


def flip_sides(
    result: Diff,
    gold: Mapping[str, Mapping[str, Any]],
    docs_a: Mapping[str, Mapping[str, Any]],
    docs_b: Mapping[str, Mapping[str, Any]],
    limit: int | None = None,
) -> dict[str, Sides]:
    """Each flipped document's gold and predictions (documents by id, as read from the
    files), with what the scorer marked wrong on each side (from the diff's reports); the
    first `limit` flipped documents only, when given."""
    id_key = result.report_a.config.id_key if result.report_a is not None else "id"
    flips = result.flips[:limit]
    ids = {f.id for f in flips}
    wrong_a, wrong_b = _wrong(result.report_a, ids), _wrong(result.report_b, ids)
    return {
        f.id: Sides(
            gold.get(f.id),
            docs_a.get(f.id),
            docs_b.get(f.id),
            wrong_a.get(f.id, {}),
            wrong_b.get(f.id, {}),
            id_key,
        )
        for f in flips
    }


def fields_of(comparison: Comparison) -> tuple[FieldDelta, ...]:
    """The field F1 rows of a comparison as field deltas (named by their metric key suffix)."""
    return tuple(
        FieldDelta(r.metric.removeprefix("field_f1/"), r.metric, r.baseline, r.candidate,
                   r.interval)
        for r in comparison.rows
        if r.metric.startswith("field_f1/")
    )  # fmt: skip


def check_tolerance(tolerance: object) -> float:
    """`tolerance` as a float; an InputError unless it is a finite number ≥ 0."""
    ok = isinstance(tolerance, int | float) and not isinstance(tolerance, bool)
    if not ok or not math.isfinite(float(tolerance)) or float(tolerance) < 0:  # type: ignore[arg-type]
        raise InputError(TOLERANCE_ERROR.format(value=tolerance))
    return float(tolerance)  # type: ignore[arg-type]


def field_deltas(a: Report, b: Report, comparison: Comparison) -> list[FieldDelta]:
    """Every field of either report, in B's order then A's, with its F1 on both sides."""
    keys = {**a.field_keys(), **b.field_keys()}
    out = []
    for path in dict.fromkeys([*b.fields, *a.fields]):
        key = field_key("field_f1", path, keys)
        row = comparison.row(key)
        before = a.fields[path].counts.f1 if path in a.fields else None
        after = b.fields[path].counts.f1 if path in b.fields else None
        out.append(FieldDelta(path, key, before, after, row.interval if row else None))
    return out


def _moved(fields: Iterable[FieldDelta], tolerance: float, sign: int) -> tuple[FieldDelta, ...]:
    """The fields whose F1 moved by more than `tolerance` in direction `sign`, largest first."""
    moved = [f for f in fields if f.delta is not None and sign * f.delta > tolerance]
    return tuple(sorted(moved, key=lambda f: (-sign * (f.delta or 0.0), f.path)))


def _first_rows(frame: pd.DataFrame, ids: list[str]) -> list[int]:
    """The row of each of `ids` in the frame (its first row, when an id repeats)."""
    column = frame["id"].astype(str)
    hits = np.flatnonzero(column.isin(ids).to_numpy())
    at: dict[str, int] = {}
    for k, doc in zip(hits.tolist(), column.iloc[hits].tolist(), strict=True):
        at.setdefault(doc, k)
    return [at[i] for i in ids]


def _triples(frame: pd.DataFrame, rows: list[int], paths: list[str]) -> Any:
    """(document, path, TP/FP/FN): the counts of the frame's `rows` for every path, 0 where
    the frame has no column for the path."""
    out = np.zeros((len(rows), len(paths), 3), dtype=np.int64)
    for j, path in enumerate(paths):
        for k, prefix in enumerate(("field_tp", "field_fp", "field_fn")):
            name = f"{prefix}/{path}"
            if name in frame.columns:
                out[:, j, k] = frame[name].iloc[rows].to_numpy(dtype=np.int64)
    return out


def _statuses(frame: pd.DataFrame, rows: list[int]) -> list[str | None]:
    if "status" not in frame.columns:
        return [None] * len(rows)
    return [str(s) for s in frame["status"].iloc[rows]]


def flip_details(
    frame_a: pd.DataFrame, frame_b: pd.DataFrame, fixed: Iterable[str], broke: Iterable[str]
) -> tuple[Flip, ...]:
    """The flipped documents (ids from a comparison) with the fields whose per-document counts
    differ between the two count frames (``report_frame(report, "counts")``), ordered by id."""
    paths = list(dict.fromkeys([*field_paths(frame_b), *field_paths(frame_a)]))
    wanted = sorted([(i, FIXED) for i in fixed] + [(i, BROKE) for i in broke])
    ids = [doc_id for doc_id, _ in wanted]
    rows_a, rows_b = _first_rows(frame_a, ids), _first_rows(frame_b, ids)
    counts_a, counts_b = _triples(frame_a, rows_a, paths), _triples(frame_b, rows_b, paths)
    changed = (counts_a != counts_b).any(axis=2)
    status_a, status_b = _statuses(frame_a, rows_a), _statuses(frame_b, rows_b)
    flips = []
    for n, (doc_id, direction) in enumerate(wanted):
        changes = tuple(
            FieldChange(paths[j], _triple(counts_a[n, j]), _triple(counts_b[n, j]))
            for j in np.flatnonzero(changed[n])
        )
        flips.append(Flip(doc_id, direction, changes, status_a[n], status_b[n]))
    return tuple(flips)


def _triple(counts: Any) -> Triple:
    tp, fp, fn = (int(c) for c in counts)
    return (tp, fp, fn)


def diff(
    report_a: Report,
    report_b: Report,
    tolerance: float = 0.0,
    *,
    seed: int | None = 0,
    resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    labels: tuple[str, str] = ("A", "B"),
) -> Diff:
    """Compare two evaluations of the same gold set: A before, B after.

    Raises InputError for a bad `tolerance` (not a finite number ≥ 0), `seed` or `resamples`,
    and :class:`~extract_mlflow.comparison.IncomparableRunsError` when the two reports were
    scored differently (another gold set, config or scorer version).
    """
    tol = check_tolerance(tolerance)
    frame_a, frame_b = counts_frame(report_a), counts_frame(report_b)
    run_a = ScoredRun(report_a.metrics(), frame_a, report_a.signature(), labels[0])
    run_b = ScoredRun(report_b.metrics(), frame_b, report_b.signature(), labels[1])
    comparison = compare(
        run_a, run_b, None, seed=seed, resamples=resamples, confidence=confidence, min_documents=0
    )
    fields = field_deltas(report_a, report_b, comparison)
    flips = flip_details(frame_a, frame_b, comparison.fixed, comparison.broke)
    return Diff(
        fields=tuple(fields),
        regressions=_moved(fields, tol, -1),
        improvements=_moved(fields, tol, 1),
        flips=flips,
        comparison=comparison,
        tolerance=tol,
        report_a=report_a,
        report_b=report_b,
    )
