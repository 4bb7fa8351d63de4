"""A family of plain ratios (:class:`RatioFamily`): the defaults of every declaration beyond
:meth:`~.base.Family.document`, and the section every view shows of its
:class:`~.base.FamilySummary`."""

from __future__ import annotations

from typing import Any

from ..core.language import tr
from ..core.text import capped, escape_pipes, fmt, md_cell
from .base import FamilyPart, FamilySummary, FamilyValue


class RatioFamily:
    """The base of a family of plain ratios: the engine keeps its statistics, it logs no
    params of its own, has no top-level key in the JSON report, reads no gold key that would
    otherwise be a field, and every view shows its section the same way."""

    report_key: str | None = None
    reversed_names: tuple[str, ...] = ()

    def keys(self, section: Any) -> tuple[str, ...]:
        return ()

    def params(self, section: Any, ran: bool) -> dict[str, str]:
        return {}

    def start(self, section: Any, setup: Any) -> FamilyPart | None:
        return None

    def markdown(self, summary: FamilySummary) -> list[str]:
        return family_markdown(summary)

    def table(self, summary: FamilySummary) -> list[str]:
        return family_table(summary)


def _interval(v: FamilyValue) -> str:
    return f"{fmt(v.ci_low)}–{fmt(v.ci_high)}" if v.value is not None else fmt(None)


def _cell(v: FamilyValue | None) -> str:
    return f"{fmt(v.value)} ({_interval(v)})" if v is not None else fmt(None)


def _direction(summary: FamilySummary) -> str:
    return "higher is better" if summary.higher_is_better else "lower is better"


def family_markdown(summary: FamilySummary) -> list[str]:
    """The family's markdown section: its metrics with their intervals, its slices and its
    worst documents."""
    lines = [f"## {summary.title}", "", f"({_direction(summary)})", "", tr("md.structure_head")]
    lines.append("|---|---:|---|---:|")
    for name, v in summary.values.items():
        lines.append(f"| {md_cell(name)} | {fmt(v.value)} | {_interval(v)} | {v.documents} |")
    for attribute, slices in summary.slices.items():
        names = list(summary.values)
        lines += ["", tr("md.by", attribute=attribute), ""]
        lines.append(
            f"| {escape_pipes(attribute)} | {tr('md.documents_col')} | " + " | ".join(names) + " |"
        )
        lines.append("|---|---:|" + "---:|" * len(names))
        shown, more = capped(slices)
        for s in shown:
            cells = " | ".join(_cell(s.values.get(n)) for n in names)
            lines.append(f"| {escape_pipes(s.label)} | {s.documents} | {cells} |")
        lines += ["", more] if more else []
    if summary.worst:
        first = next(iter(summary.values), "")
        lines += ["", f"Worst documents by {first}:", ""]
        lines += [f"- {md_cell(doc_id)}: {fmt(value)}" for doc_id, value in summary.worst[:5]]
    return lines


def family_table(summary: FamilySummary) -> list[str]:
    """The family's lines of the terminal table: each metric with its interval."""
    lines = [f"{summary.title.lower()} ({_direction(summary)}, 95% bootstrap interval)"]
    for name, v in summary.values.items():
        interval = f"  [{fmt(v.ci_low)}, {fmt(v.ci_high)}]" if v.value is not None else ""
        lines.append(f"  {name:<20} {fmt(v.value)}{interval}  ({v.documents} documents)")
    return lines
