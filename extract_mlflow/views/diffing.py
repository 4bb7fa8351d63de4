"""A diff of two prediction files for people: the terminal table and the markdown (each field's
F1 before → after, the regressed and improved fields, the flipped documents, the interval of
micro F1). Every human-readable string is a constant of this module."""

from __future__ import annotations

from ..core.text import fmt, md_cell
from ..diffing import Diff, FieldDelta, Flip
from .table import aligned

TITLE = "diff A → B"
SIDE = "{name}: {label}"
HEADLINE = "{name} {before} → {after} ({delta}{interval})"
INTERVAL = ", {confidence:.0%} CI [{low:+.3f}, {high:+.3f}]"
PAIRED = "{paired} paired documents, {resamples} resamples (seed {seed})"
TOLERANCE = "tolerance {tolerance:g}"
MICRO, MACRO = "micro F1", "macro F1"
HEADER = ("field", "A", "B", "delta", "{confidence:.0%} CI")
FIELDS_SHOWN = 6  # changed fields named per flipped document in the table and markdown
MORE = "… (+{n})"
REGRESSED = "regressed fields ({n})"
IMPROVED = "improved fields ({n})"
FIXED = "not → fully correct ({n})"
BROKE = "fully correct → not ({n})"
NONE = "-"
NOTE = "note: {note}"
MD_TITLE = "## extract_mlflow diff: A → B"
MD_FIELDS = "### Field F1 (largest drop first)"
MD_DOCUMENTS = "### Documents that flipped"
MD_NOTES = "### Notes"


def signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"


def interval_text(f: FieldDelta) -> str:
    iv = f.interval
    return "" if iv is None else f"[{iv.low:+.3f}, {iv.high:+.3f}]"


def headline(name: str, f: FieldDelta) -> str:
    """``micro F1 0.866 → 0.991 (+0.125, 95% CI [+0.050, +0.200])``."""
    iv = f.interval
    extra = (
        "" if iv is None else INTERVAL.format(confidence=iv.confidence, low=iv.low, high=iv.high)
    )
    return HEADLINE.format(
        name=name, before=fmt(f.before), after=fmt(f.after), delta=signed(f.delta), interval=extra
    )


def by_drop(d: Diff) -> list[FieldDelta]:
    """The fields, the largest drop first, unchanged and n/a last, ties by path."""
    return sorted(d.fields, key=lambda f: (f.delta is None, f.delta or 0.0, f.path))


def labels(d: Diff) -> tuple[str, str]:
    c = d.comparison
    return c.baseline_ref or "A", c.candidate_ref or "B"


def _moves(fields: tuple[FieldDelta, ...]) -> str:
    return ", ".join(f"{f.path} {signed(f.delta)}" for f in fields) or NONE


def flip_text(flip: Flip) -> str:
    """``inv-004 (line_items[].qty, total)``; the statuses when they changed."""
    paths = [c.path for c in flip.fields]
    names = ", ".join(paths[:FIELDS_SHOWN])
    if len(paths) > FIELDS_SHOWN:
        names += " " + MORE.format(n=len(paths) - FIELDS_SHOWN)
    if flip.status_before != flip.status_after:
        names = f"{flip.status_before} → {flip.status_after}" + (f"; {names}" if names else "")
    return f"{flip.id} ({names})" if names else flip.id


def _sides(d: Diff) -> list[str]:
    c = d.comparison
    out = [TOLERANCE.format(tolerance=d.tolerance)]
    if c.paired is not None:
        out.insert(0, PAIRED.format(paired=c.paired, resamples=c.resamples, seed=c.seed))
    return out


def diff_table(d: Diff) -> str:
    """Plain text for the terminal."""
    a, b = labels(d)
    c = d.comparison
    out = [TITLE, SIDE.format(name="A", label=a), SIDE.format(name="B", label=b)]
    out += ["; ".join(_sides(d)), headline(MICRO, d.micro), headline(MACRO, d.macro)]
    head = tuple(h.format(confidence=c.confidence) for h in HEADER)
    rows = [head] + [
        (f.path, fmt(f.before), fmt(f.after), signed(f.delta), interval_text(f)) for f in by_drop(d)
    ]
    out += ["", *aligned(rows)]
    out += ["", f"{REGRESSED.format(n=len(d.regressions))}: {_moves(d.regressions)}"]
    out.append(f"{IMPROVED.format(n=len(d.improvements))}: {_moves(d.improvements)}")
    for title, flips in ((FIXED, d.fixed), (BROKE, d.broke)):
        shown = "; ".join(flip_text(f) for f in flips) or NONE
        out.append(f"{title.format(n=len(flips))}: {shown}")
    out += [NOTE.format(note=n) for n in c.notes]
    return "\n".join(out) + "\n"


def diff_markdown(d: Diff) -> str:
    """Markdown for a CI job summary."""
    a, b = labels(d)
    c = d.comparison
    lines = [MD_TITLE, "", f"- {SIDE.format(name='A', label=md_cell(a))}"]
    lines += [f"- {SIDE.format(name='B', label=md_cell(b))}", *[f"- {s}" for s in _sides(d)]]
    lines += [f"- {headline(MICRO, d.micro)}", f"- {headline(MACRO, d.macro)}", ""]
    lines.append(f"- {REGRESSED.format(n=len(d.regressions))}: {md_cell(_moves(d.regressions))}")
    lines.append(f"- {IMPROVED.format(n=len(d.improvements))}: {md_cell(_moves(d.improvements))}")
    head = [h.format(confidence=c.confidence) for h in HEADER]
    lines += ["", MD_FIELDS, "", "| " + " | ".join(head) + " |", "|---|---:|---:|---:|---:|"]
    lines += [
        f"| `{md_cell(f.path)}` | {fmt(f.before)} | {fmt(f.after)} | {signed(f.delta)} "
        f"| {interval_text(f)} |"
        for f in by_drop(d)
    ]
    lines += ["", MD_DOCUMENTS, ""]
    for title, flips in ((FIXED, d.fixed), (BROKE, d.broke)):
        shown = "; ".join(md_cell(flip_text(f)) for f in flips) or NONE
        lines.append(f"- {title.format(n=len(flips))}: {shown}")
    if c.notes:
        lines += ["", MD_NOTES, "", *[f"- {md_cell(n)}" for n in c.notes]]
    return "\n".join(lines) + "\n"
