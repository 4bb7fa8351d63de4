"""A diff of two prediction files for people: the terminal table and the markdown (each field's
F1 before → after, the regressed and improved fields, the flipped documents, the interval of
micro F1). Every human-readable string comes from the message catalogue."""

from __future__ import annotations

from ..core.language import tr
from ..core.text import FIELDS_LISTED, aligned, capped, capped_lines, fmt, md_cell, safe_lines
from ..diffing import Diff, FieldDelta
from ..flips import Flip
from .sections import status_text

FIELDS_SHOWN = 6  # changed fields named per flipped document in the table and markdown
MORE = "… (+{n})"


def signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"


def interval_text(f: FieldDelta) -> str:
    iv = f.interval
    return "" if iv is None else f"[{iv.low:+.3f}, {iv.high:+.3f}]"


def headline(name: str, f: FieldDelta) -> str:
    """``micro F1 0.866 → 0.991 (+0.125, 95% CI [+0.050, +0.200])``."""
    iv = f.interval
    extra = (
        ""
        if iv is None
        else tr("diff.interval", confidence=iv.confidence, low=iv.low, high=iv.high)
    )
    return tr(
        "diff.headline",
        name=name,
        before=fmt(f.before),
        after=fmt(f.after),
        delta=signed(f.delta),
        interval=extra,
    )


def by_drop(d: Diff) -> list[FieldDelta]:
    """The fields, the largest drop first, unchanged and n/a last, ties by path."""
    return sorted(d.fields, key=lambda f: (f.delta is None, f.delta or 0.0, f.path))


def labels(d: Diff) -> tuple[str, str]:
    c = d.comparison
    return c.baseline_ref or "A", c.candidate_ref or "B"


def _moves(fields: tuple[FieldDelta, ...]) -> str:
    shown, more = capped(fields)
    moves = ", ".join(f"{f.path} {signed(f.delta)}" for f in shown) or tr("diff.none")
    return f"{moves}, {more}" if more else moves


def _flip_texts(flips: tuple[Flip, ...]) -> list[str]:
    """The flipped documents of one direction as texts; bounded, the last saying how many
    more there are."""
    shown, more = capped(flips)
    return [flip_text(f) for f in shown] + ([more] if more else [])


def flip_text(flip: Flip) -> str:
    """``inv-004 (line_items[].qty, total)``; the statuses when they changed."""
    paths = [c.path for c in flip.fields]
    names = ", ".join(paths[:FIELDS_SHOWN])
    if len(paths) > FIELDS_SHOWN:
        names += " " + MORE.format(n=len(paths) - FIELDS_SHOWN)
    if flip.status_before != flip.status_after:
        statuses = f"{status_text(flip.status_before)} → {status_text(flip.status_after)}"
        names = statuses + (f"; {names}" if names else "")
    return f"{flip.id} ({names})" if names else flip.id


def _sides(d: Diff) -> list[str]:
    c = d.comparison
    out = [tr("diff.tolerance", tolerance=d.tolerance)]
    if c.paired is not None:
        out.insert(0, tr("diff.paired", paired=c.paired, resamples=c.resamples, seed=c.seed))
    return out


def _header(confidence: float) -> tuple[str, ...]:
    ci = tr("diff.head_ci", confidence=confidence)
    return (tr("table.head_field"), "A", "B", tr("diff.head_delta"), ci)


def diff_table(d: Diff) -> str:
    """Plain text for the terminal."""
    a, b = labels(d)
    c = d.comparison
    out = [tr("diff.title"), tr("diff.side", name="A", label=a), tr("diff.side", name="B", label=b)]
    out += ["; ".join(_sides(d)), headline(tr("diff.micro"), d.micro)]
    out.append(headline(tr("diff.macro"), d.macro))
    head = _header(c.confidence)
    fields, more = capped(by_drop(d), FIELDS_LISTED)
    rows = [head] + [
        (f.path, fmt(f.before), fmt(f.after), signed(f.delta), interval_text(f)) for f in fields
    ]
    out += ["", *aligned(rows), *([more] if more else [])]
    out += ["", f"{tr('diff.regressed', n=len(d.regressions))}: {_moves(d.regressions)}"]
    out.append(f"{tr('diff.improved', n=len(d.improvements))}: {_moves(d.improvements)}")
    for key, flips in (("diff.fixed", d.fixed), ("diff.broke", d.broke)):
        shown = "; ".join(_flip_texts(flips)) or tr("diff.none")
        out.append(f"{tr(key, n=len(flips))}: {shown}")
    out += [tr("diff.note", note=n) for n in capped_lines(c.notes)]
    return safe_lines(out)


def diff_markdown(d: Diff) -> str:
    """Markdown for a CI job summary."""
    a, b = labels(d)
    c = d.comparison
    lines = [tr("diff.md_title"), "", f"- {tr('diff.side', name='A', label=md_cell(a))}"]
    lines += [f"- {tr('diff.side', name='B', label=md_cell(b))}", *[f"- {s}" for s in _sides(d)]]
    lines += [f"- {headline(tr('diff.micro'), d.micro)}"]
    lines += [f"- {headline(tr('diff.macro'), d.macro)}", ""]
    regressed = md_cell(_moves(d.regressions))
    lines.append(f"- {tr('diff.regressed', n=len(d.regressions))}: {regressed}")
    improved = md_cell(_moves(d.improvements))
    lines.append(f"- {tr('diff.improved', n=len(d.improvements))}: {improved}")
    head = _header(c.confidence)
    lines += ["", tr("diff.md_fields"), "", "| " + " | ".join(head) + " |"]
    lines.append("|---|---:|---:|---:|---:|")
    fields, more = capped(by_drop(d), FIELDS_LISTED)
    lines += [
        f"| `{md_cell(f.path)}` | {fmt(f.before)} | {fmt(f.after)} | {signed(f.delta)} "
        f"| {interval_text(f)} |"
        for f in fields
    ]
    lines += ["", more] if more else []
    lines += ["", tr("diff.md_documents"), ""]
    for key, flips in (("diff.fixed", d.fixed), ("diff.broke", d.broke)):
        shown = "; ".join(md_cell(t) for t in _flip_texts(flips)) or tr("diff.none")
        lines.append(f"- {tr(key, n=len(flips))}: {shown}")
    if c.notes:
        notes = capped_lines(c.notes)
        lines += ["", tr("diff.md_notes"), "", *[f"- {md_cell(n)}" for n in notes]]
    return safe_lines(lines)
