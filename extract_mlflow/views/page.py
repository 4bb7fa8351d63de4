"""The comparison page of ``diff`` and ``compare``: one self-contained HTML file.

Nothing is fetched: the CSS, the bars (SVG) and a small sorting script are inline, and a
Content-Security-Policy forbids every other source. Every text that comes from the inputs (run
labels, document ids, field paths, values) is HTML-escaped, and the script reads no input text
(it sorts by ``data-v`` numbers), so a hostile prediction cannot run code or break the layout.

Sections: an overview (micro and macro F1 before → after with the paired-bootstrap interval),
the per-field table (sortable, worst change first, a bar per delta), the flipped documents and,
when the documents themselves are given (``diff``), gold vs A vs B side by side with the leaves
the scorer marked wrong highlighted; for a comparison kept on a run, where it is kept and the
comparisons kept there before it. Every human-readable string is a constant of this module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

from ..comparison import Comparison, MetricRow
from ..core.language import current_language, tr
from ..core.paths import document_leaves
from ..core.text import FIELDS_LISTED, capped, compact, fmt
from ..diffing import Diff, FieldDelta, Sides, fields_of
from ..flips import BROKE, FIXED, Flip
from .comparison import verdict
from .sections import status_text

SIDE_A, SIDE_B = "A", "B"
NONE = "—"
VALUE_LIMIT = 300  # characters of one value shown in the side-by-side tables
PAGE_FLIPS = 1000  # flipped documents listed per direction (fixed, broke); all are counted
SIDE_BY_SIDE = 200  # flipped documents shown side by side (the first ones of the diff)

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:72em;padding:0 1em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:.2em .6em;border-bottom:1px solid #eee;
text-align:right;vertical-align:top}td:first-child,th:first-child{text-align:left}
th[data-type]{cursor:pointer;user-select:none}th[data-dir=asc]::after{content:" ▲"}
th[data-dir=desc]::after{content:" ▼"}.neg{color:#b00020}.pos{color:#1b7f3b}
.sides td,.sides th{text-align:left;max-width:22em;overflow-wrap:anywhere}.wrong{background:#fde7e9}
mark{background:#f9c0c6}code{font-size:.95em}.muted{color:#777}
"""

SCRIPT = """
(function () {
  var table = document.getElementById("fields");
  if (!table) { document.documentElement.setAttribute("data-ready", "1"); return; }
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  function value(row, col, numeric) {
    var cell = row.cells[col];
    if (!numeric) { return cell.textContent; }
    var v = cell.getAttribute("data-v");
    return v === "" ? Infinity : parseFloat(v);
  }
  function sortBy(th, dir) {
    var col = th.cellIndex, numeric = th.getAttribute("data-type") === "num";
    var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = value(a, col, numeric), y = value(b, col, numeric);
      var order = x === y ? 0 : (x < y ? -1 : 1);
      return dir === "asc" ? order : -order;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    heads.forEach(function (h) { h.removeAttribute("data-dir"); });
    th.setAttribute("data-dir", dir);
    table.setAttribute("data-sorted", th.getAttribute("data-key") + " " + dir);
  }
  heads.forEach(function (th) {
    if (!th.getAttribute("data-type")) { return; }
    th.addEventListener("click", function () {
      sortBy(th, th.getAttribute("data-dir") === "asc" ? "desc" : "asc");
    });
  });
  sortBy(table.querySelector("th[data-key=delta]"), "asc");
  document.documentElement.setAttribute("data-ready", "1");
})();
"""

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)


@dataclass(frozen=True)
class Page:
    """What the page shows, gathered from a diff or a comparison."""

    title: str
    comparison: Comparison
    fields: tuple[FieldDelta, ...]
    flips: tuple[Flip, ...]
    sides: Mapping[str, Sides] = field(default_factory=dict)
    verdict: str | None = None


def _head_metric(confidence: float) -> tuple[str, ...]:
    ci = tr("diff.head_ci", confidence=confidence)
    return (tr("page.head_metric"), SIDE_A, SIDE_B, "Δ", ci, "")


def _head_fields(confidence: float) -> tuple[str, ...]:
    ci = tr("diff.head_ci", confidence=confidence)
    return (tr("table.head_field"), SIDE_A, SIDE_B, "Δ", ci, tr("page.head_bar"))


def _head_sides() -> tuple[str, ...]:
    return (tr("page.head_leaf"), tr("page.gold"), SIDE_A, SIDE_B)


def _head_regressed() -> tuple[str, ...]:
    return (tr("page.head_document"), "F1", tr("page.head_errors"))


def diff_page(d: Diff, sides: Mapping[str, Sides] | None = None) -> str:
    """The page of a diff; `sides` (document id → gold, A, B) adds the side-by-side view."""
    return render(Page(tr("page.diff_title"), d.comparison, d.fields, d.flips, sides or {}))


def comparison_page(c: Comparison, flips: Sequence[Flip] | None = None) -> str:
    """The page of a comparison of two runs (``compare``, ``promote``); `flips` with their
    changed fields when the per-document counts were at hand, else the flipped ids alone."""
    if flips is None:
        flips = c.flips
    if flips is None:
        flips = [Flip(i, FIXED, ()) for i in c.fixed] + [Flip(i, BROKE, ()) for i in c.broke]
    return render(Page(tr("page.compare_title"), c, fields_of(c), tuple(flips), {}, verdict(c)))


def e(value: Any) -> str:
    """Text made safe for HTML content and attribute values."""
    return escape(str(value), quote=True)


def render(page: Page) -> str:
    c = page.comparison
    a, b = c.baseline_ref or SIDE_A, c.candidate_ref or SIDE_B
    parts = [
        "<!doctype html>",
        f'<html lang="{current_language()}"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        f"<title>{e(page.title)}: {e(a)} → {e(b)}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>{e(page.title)}</h1>",
        f"<p>{SIDE_A}: <code>{e(a)}</code><br>{SIDE_B}: <code>{e(b)}</code></p>",
    ]
    if page.verdict:
        parts.append(f"<p><strong>{e(page.verdict)}</strong></p>")
    parts += _overview(c)
    parts += _fields(page.fields, c.confidence)
    parts += _flips(page.flips, _anchors(page.flips, page.sides))
    parts += _regressed(c) if not page.sides else []
    parts += _side_by_side(page.flips, page.sides)
    if c.notes:
        notes, more = capped(c.notes)
        parts += [
            f"<h2>{tr('page.notes')}</h2><ul>",
            *(f"<li>{e(n)}</li>" for n in notes),
            "</ul>",
            *_more(more),
        ]
    parts += _history(c)
    parts += [f"<script>{SCRIPT}</script>", "</body></html>"]
    return "\n".join(parts) + "\n"


def _history(c: Comparison) -> list[str]:
    """Where this comparison is kept on the candidate's run, and the ones kept before it
    (``eval/comparisons/<baseline run id>/<UTC time>``)."""
    if c.logged_as is None:
        return []
    out = [f"<h2>{tr('page.history')}</h2>"]
    out.append(f"<p>{e(tr('page.kept_as', path=c.logged_as.path))}</p>")
    if not c.earlier:
        return [*out, f'<p class="muted">{tr("page.no_earlier")}</p>']
    out.append(f"<p>{e(tr('page.earlier', n=len(c.earlier)))}</p>")
    earlier, more = capped(c.earlier)
    items = "".join(f"<li><code>{e(k.path)}</code></li>" for k in earlier)
    return [*out, f'<ul id="earlier">{items}</ul>', *_more(more)]


def _more(line: str | None) -> list[str]:
    """The paragraph saying how many entries of a listing are not shown (none if all are)."""
    return [f'<p class="muted">{e(line)}</p>'] if line else []


def _signed(value: float | None) -> str:
    return NONE if value is None else f"{value:+.3f}"


def _ci(low: float | None, high: float | None) -> str:
    return "" if low is None or high is None else f"[{low:+.3f}, {high:+.3f}]"


def _tone(delta: float | None) -> str:
    return "" if not delta else (' class="neg"' if delta < 0 else ' class="pos"')


def bar(
    delta: float | None, low: float | None = None, high: float | None = None, scale: float = 1.0
) -> str:
    """An inline SVG bar of a delta around a zero line, with its interval; `scale` is the
    largest magnitude shown (it spans half the width)."""
    if delta is None:
        return ""
    w, mid = 160, 80

    def x(v: float) -> float:
        return round(mid + max(-1.0, min(1.0, v / scale)) * mid, 1)

    left, right = sorted((x(0.0), x(delta)))
    colour = "#b00020" if delta < 0 else "#1b7f3b"
    shapes = [
        f'<rect x="{left}" y="3" width="{max(right - left, 1)}" height="10" fill="{colour}"/>'
    ]
    if low is not None and high is not None:
        shapes.append(f'<line x1="{x(low)}" x2="{x(high)}" y1="8" y2="8" stroke="#333"/>')
    shapes.append(f'<line x1="{mid}" x2="{mid}" y1="0" y2="16" stroke="#999"/>')
    label = _signed(delta)
    return f'<svg width="{w}" height="16" role="img" aria-label="{label}">{"".join(shapes)}</svg>'


def bar_scale(deltas: Iterable[FieldDelta]) -> float:
    """The largest |delta| or interval end among `deltas` (at least 0.05): the bars' scale."""
    ends = [0.05]
    for f in deltas:
        iv = f.interval
        values = [f.delta] + ([iv.low, iv.high] if iv is not None else [])
        ends += [abs(v) for v in values if v is not None]
    return max(ends)


def _row_delta(row: MetricRow | None, name: str) -> FieldDelta:
    if row is None:
        return FieldDelta(name, name, None, None)
    return FieldDelta(name, row.metric, row.baseline, row.candidate, row.interval)


def _overview(c: Comparison) -> list[str]:
    out = [f"<h2>{tr('page.overview')}</h2>"]
    if c.paired is not None:
        text = tr(
            "page.paired",
            paired=c.paired,
            resamples=c.resamples,
            seed=c.seed,
            confidence=c.confidence,
        )
        out.append(f'<p class="muted">{e(text)}</p>')
    head = "".join(f"<th>{e(h)}</th>" for h in _head_metric(c.confidence))
    out.append(f'<table id="overview"><thead><tr>{head}</tr></thead><tbody>')
    rows = [
        _row_delta(c.row(metric), name)
        for name, metric in ((tr("diff.micro"), "f1"), (tr("diff.macro"), "macro_f1"))
    ]
    scale = bar_scale(rows)
    for f in rows:
        name = f.path
        low, high = (f.interval.low, f.interval.high) if f.interval else (None, None)
        out.append(
            f"<tr><td>{e(name)}</td><td>{fmt(f.before)}</td><td>{fmt(f.after)}</td>"
            f"<td{_tone(f.delta)}>{_signed(f.delta)}</td><td>{_ci(low, high)}</td>"
            f"<td>{bar(f.delta, low, high, scale)}</td></tr>"
        )
    return [*out, "</tbody></table>"]


def _num_cell(value: float | None, text: str, extra: str = "") -> str:
    v = "" if value is None else repr(float(value))
    return f'<td data-v="{v}"{extra}>{text}</td>'


def _fields(fields: Sequence[FieldDelta], confidence: float) -> list[str]:
    keys = ("field", "a", "b", "delta", "ci", "bar")
    types = ("text", "num", "num", "num", "", "")
    head = "".join(
        f'<th data-key="{k}"' + (f' data-type="{t}"' if t else "") + f">{e(h)}</th>"
        for k, t, h in zip(keys, types, _head_fields(confidence), strict=True)
    )
    out = [f"<h2>{tr('page.fields')}</h2>", f'<p class="muted">{tr("page.fields_hint")}</p>']
    out.append(f'<table id="fields"><thead><tr>{head}</tr></thead><tbody>')
    scale = bar_scale(fields)
    shown, more = capped(fields, FIELDS_LISTED)
    for f in shown:
        iv = f.interval
        low, high = (iv.low, iv.high) if iv else (None, None)
        out.append(
            f"<tr><td><code>{e(f.path)}</code></td>"
            + _num_cell(f.before, fmt(f.before))
            + _num_cell(f.after, fmt(f.after))
            + _num_cell(f.delta, _signed(f.delta), _tone(f.delta))
            + f"<td>{_ci(low, high)}</td><td>{bar(f.delta, low, high, scale)}</td></tr>"
        )
    return [*out, "</tbody></table>", *_more(more)]


def _flip_line(f: Flip, anchor: str | None) -> str:
    name = f'<a href="#{anchor}">{e(f.id)}</a>' if anchor else e(f.id)
    details = []
    if f.status_before != f.status_after:
        details.append(
            e(
                tr(
                    "page.status",
                    before=status_text(f.status_before),
                    after=status_text(f.status_after),
                )
            )
        )
    if f.fields:
        details.append(e(tr("page.changed", fields=", ".join(c.path for c in f.fields))))
    return f"<li><code>{name}</code>" + (f": {'; '.join(details)}" if details else "") + "</li>"


def _anchors(flips: Sequence[Flip], sides: Mapping[str, Sides]) -> dict[str, str]:
    """The flipped documents shown side by side (the first :data:`SIDE_BY_SIDE` that have
    their sides), by id, with their anchors."""
    shown = [(i, f) for i, f in enumerate(flips) if f.id in sides][:SIDE_BY_SIDE]
    return {f.id: f"doc-{i}" for i, f in shown}


def _flips(flips: Sequence[Flip], anchors: Mapping[str, str]) -> list[str]:
    out = [f"<h2>{tr('page.flips')}</h2>"]
    for title, direction in ((tr("page.fixed"), FIXED), (tr("page.broke"), BROKE)):
        chosen = [f for f in flips if f.direction == direction]
        out.append(f"<h3>{e(title)} ({len(chosen)})</h3>")
        shown, more = capped(chosen, PAGE_FLIPS)
        items = [_flip_line(f, anchors.get(f.id)) for f in shown]
        out.append(f'<ul class="flips-{direction}">' + "".join(items) + "</ul>" if items else NONE)
        out += _more(more)
    return out


def _regressed(c: Comparison) -> list[str]:
    if not c.regressed:
        return []
    head = "".join(f"<th>{e(h)}</th>" for h in _head_regressed())
    out = [f"<h2>{tr('page.regressed_docs')}</h2>", f"<table><thead><tr>{head}</tr></thead><tbody>"]
    regressed, more = capped(c.regressed)
    for d in regressed:
        out.append(
            f"<tr><td><code>{e(d.id)}</code></td><td>{fmt(d.baseline_f1)} → "
            f"{fmt(d.candidate_f1)}</td><td>{d.baseline_errors} → {d.candidate_errors}</td></tr>"
        )
    return [*out, "</tbody></table>", *_more(more)]


def _leaves(doc: Mapping[str, Any] | None, skip: set[str]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for leaf in document_leaves(doc, skip) if doc is not None else ():
        out.setdefault(leaf.path, []).append(leaf.value)
    return out


def _cell(values: list[Any] | None, wrong: Mapping[str, tuple[Any, ...]], path: str) -> str:
    bad = wrong.get(path)
    shown = []
    for v in values or ():
        text = e(compact(v, VALUE_LIMIT))
        shown.append(f"<mark>{text}</mark>" if bad and v in bad else text)
    cls = ' class="wrong"' if bad is not None else ""
    return f"<td{cls}>{'<br>'.join(shown) or NONE}</td>"


def _sides_table(s: Sides) -> list[str]:
    skip = {s.id_key}
    gold, a, b = _leaves(s.gold, skip), _leaves(s.a, skip), _leaves(s.b, skip)
    paths = list(dict.fromkeys([*gold, *a, *b, *s.wrong_a, *s.wrong_b]))
    head = "".join(f"<th>{e(h)}</th>" for h in _head_sides())
    out = [f'<table class="sides"><thead><tr>{head}</tr></thead><tbody>']
    for path in paths:
        out.append(
            f"<tr><td><code>{e(path)}</code></td>{_cell(gold.get(path), {}, path)}"
            f"{_cell(a.get(path), s.wrong_a, path)}{_cell(b.get(path), s.wrong_b, path)}</tr>"
        )
    out.append("</tbody></table>")
    missing = [name for name, doc in ((SIDE_A, s.a), (SIDE_B, s.b)) if doc is None]
    out += [f'<p class="muted">{name}: {tr("page.no_line")}</p>' for name in missing]
    return out


def _side_by_side(flips: Sequence[Flip], sides: Mapping[str, Sides]) -> list[str]:
    anchors = _anchors(flips, sides)
    if not anchors:
        return []
    out = [f"<h2>{tr('page.side_by_side')}</h2>", f'<p class="muted">{tr("page.side_hint")}</p>']
    more = len(flips) - len(anchors)
    for f in flips:
        if f.id not in anchors:
            continue
        title = tr("page.fixed") if f.direction == FIXED else tr("page.broke")
        out.append(f'<section id="{anchors[f.id]}"><h3><code>{e(f.id)}</code> ({e(title)})</h3>')
        out += [*_sides_table(sides[f.id]), "</section>"]
    return out + _more(tr("list.more", n=more) if more > 0 else None)
