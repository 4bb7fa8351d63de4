"""Helpers for the prompt-optimisation loop itself (pure: no files, no network).

- :func:`feedback_text`: the diagnostics of a report as a compact text to feed the next prompt
  iteration: the headline, the weakest fields with mismatch examples, documents that produced
  nothing usable, missing sections.
- :func:`field_hints`: example values per field drawn from *other* gold documents, never from
  the document being extracted, and never a value that would score as that document's own
  answer (so a prompt can show the expected format without leaking the answer);
  :func:`hints_text` renders them.

>>> gold = {"a": {"id": "a", "total": 10}, "b": {"id": "b", "total": 12.5}}
>>> field_hints(gold, "a")
{'total': [12.5]}
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Config
from ..core.language import tr
from ..core.paths import document_leaves
from ..core.text import LISTED, compact, fmt, safe_lines
from ..fields.scorer import MISSING, DocCounts, FieldScorer
from ..io.loading import load_gold

if TYPE_CHECKING:
    from ..report import FieldResult, Report

ERROR_WORDS = {
    "wrong_value": "wrong value",
    "type_error": "unreadable as the field type",
    "missing": "missing",
    "hallucinated": "not in the document",
    "parse_failure": "output was not valid JSON",
}


def _value(value: Any, limit: int) -> str:
    """A value in a prompt line: strings quoted, None as "nothing"."""
    return compact(value, limit, none="nothing", quote=True)


def weakest_fields(report: Report, n: int = 5) -> list[FieldResult]:
    """The `n` fields with mistakes, lowest F1 first (then most mistakes, then path)."""
    with_errors = [f for f in report.fields.values() if f.counts.fp + f.counts.fn > 0]
    with_errors.sort(
        key=lambda f: (
            f.counts.f1 if f.counts.f1 is not None else 0.0,
            -(f.counts.fp + f.counts.fn),
            f.path,
        )
    )
    return with_errors[:n]


def _field_lines(f: FieldResult, max_examples: int, value_limit: int) -> list[str]:
    c = f.counts
    errors = ", ".join(f"{ERROR_WORDS.get(k, k)} {v}" for k, v in f.errors.items() if v)
    kind = "" if f.type == "unknown" else f" ({f.type})"
    lines = [f"- {f.path}{kind}: F1 {fmt(c.f1, 2)}; {errors or 'no categorised errors'}"]
    shown = [e for e in f.examples if e.get("category") != "parse_failure"][:max_examples]
    for e in shown:
        lines.append(
            f"    {e['id']}: expected {_value(e.get('expected'), value_limit)}, "
            f"got {_value(e.get('got'), value_limit)}"
        )
    return lines


def _document_lines(report: Report) -> list[str]:
    lines = []
    for d in report.documents:
        if d.status == "parse_failure":
            lines.append(f"- {d.id}: the output could not be read ({d.reason})")
        elif d.status == "missing":
            lines.append(f"- {d.id}: no output at all")
    more = len(lines) - LISTED
    return lines[:LISTED] + ([f"- … {more} more not shown"] if more > 0 else [])


def _section_lines(missing: Mapping[str, int]) -> list[str]:
    ranked = sorted(missing.items(), key=lambda kv: (-kv[1], kv[0]))
    return [f"- {name}: missing in {n} document(s)" for name, n in ranked if n > 0]


def feedback_text(
    report: Report,
    *,
    max_fields: int = 5,
    max_examples: int = 3,
    value_limit: int = 80,
    missing_sections: Mapping[str, int] | None = None,
) -> str:
    """The report's diagnostics as a compact text for the next prompt iteration.

    `missing_sections` maps a required section to the number of documents that lacked it;
    when None, the report's own (its pages' layout results) is used.
    """
    m = report.micro
    lines = [
        f"Score: F1 {fmt(m.f1, 2)} (precision {fmt(m.precision, 2)}, recall "
        f"{fmt(m.recall, 2)}) over {len(report.documents)} documents; "
        f"{m.fp} extra or wrong values, {m.fn} missed or wrong values."
    ]
    weak = weakest_fields(report, max_fields)
    if weak:
        lines += ["", "Weakest fields (with examples of mismatches):"]
        for f in weak:
            lines += _field_lines(f, max_examples, value_limit)
    docs = _document_lines(report)
    if docs:
        lines += ["", "Documents without usable output:", *docs]
    sections = missing_sections if missing_sections is not None else report.missing_sections
    section_lines = _section_lines(sections)
    if section_lines:
        lines += ["", "Missing sections:", *section_lines]
    if not weak and not docs and not section_lines:
        lines += ["", "No mistakes: every field matched."]
    return safe_lines(lines)


def _as_docs(
    gold: Mapping[str, Mapping[str, Any]] | Iterable[Mapping[str, Any]], id_key: str
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    if isinstance(gold, Mapping):
        for doc_id, doc in gold.items():
            yield str(doc_id), doc
        return
    for doc in gold:
        yield str(doc.get(id_key)), doc


def _hashable(value: Any) -> Any:
    return (
        type(value).__name__,
        value if isinstance(value, str | int | float | bool) else repr(value),
    )


class Hints(dict[str, list[Any]]):
    """Field path -> example values (a dict), and :attr:`withheld`: per path, how many distinct
    values of the other documents were left out because they equal the document's own."""

    def __init__(self, values: Mapping[str, list[Any]], withheld: Mapping[str, int]) -> None:
        super().__init__(values)
        self.withheld = dict(withheld)


def field_hints(
    gold: Mapping[str, Mapping[str, Any]] | Iterable[Mapping[str, Any]] | str | Path,
    doc_id: str,
    *,
    id_key: str = "id",
    per_field: int = 3,
    fields: Sequence[str] | None = None,
    ignore: Iterable[str] = (),
    config: Config | None = None,
) -> Hints:
    """Up to `per_field` distinct example values per field path, drawn in gold order from the
    gold documents other than `doc_id` (never from `doc_id` itself), leaving out every value
    that equals one of `doc_id`'s own gold values of that field as the scorer compares them
    under `config` (its types, tolerances and units, and the types inferred from the whole
    gold set: "522 min⁻¹" is withheld beside a gold "8.7 s⁻¹"); how many were left out is the
    result's ``withheld``.

    `gold` is a gold JSONL path, a mapping id → document (e.g. ``GoldSet.docs``) or an iterable
    of documents carrying `id_key`. `fields` restricts (and orders) the paths; `ignore` drops
    paths (e.g. fields the config ignores). Paths are sorted when `fields` is None.
    """
    cfg = config or Config()
    if cfg.id_key != id_key:
        cfg = cfg.model_copy(update={"id_key": id_key})
    if isinstance(gold, str | Path):
        gold = load_gold(gold, id_key).docs
    docs = list(_as_docs(gold, id_key))
    scorer = _scorer(cfg, [doc for _, doc in docs])
    own: dict[str, list[Any]] = {}
    for other_id, doc in docs:
        if other_id == str(doc_id):
            for path, value, _ in document_leaves(doc, {id_key}):
                own.setdefault(path, []).append(value)
    skip = set(ignore)
    hints: dict[str, list[Any]] = {}
    seen: dict[str, set[Any]] = {}
    withheld: dict[str, set[Any]] = {}
    for other_id, doc in docs:
        if other_id == str(doc_id):
            continue
        for path, value, _ in document_leaves(doc, {id_key}):
            if path in skip or (fields is not None and path not in fields):
                continue
            values, keys = hints.setdefault(path, []), seen.setdefault(path, set())
            key = _hashable(value)
            if key in keys or key in withheld.get(path, ()):
                continue
            if any(scorer.compare_leaf(path, g, value) is None for g in own.get(path, ())):
                withheld.setdefault(path, set()).add(key)
            elif len(values) < per_field:
                values.append(value)
                keys.add(key)
    order = list(fields) if fields is not None else sorted(hints)
    return Hints(
        {p: hints[p] for p in order if hints.get(p)},
        {p: len(withheld[p]) for p in order if p in withheld},
    )


def _scorer(config: Config, docs: list[Mapping[str, Any]]) -> FieldScorer:
    """The scorer of `config` on this gold set: the types it infers from all gold values
    (read off every gold value, as a scoring pass does) are those of the comparison."""
    seen = FieldScorer(config)
    for doc in docs:
        seen.expand_gold(dict(doc), MISSING, DocCounts())
    return FieldScorer(config, mixed=seen.state.mixed())


def hints_text(hints: Mapping[str, Sequence[Any]], value_limit: int = 60) -> str:
    """Field hints as prompt text, one field a line.

    >>> print(hints_text({"total": [12.5, 7], "currency": ["EUR"]}), end="")
    Example values from other documents (formats, not answers):
    - total: 12.5 | 7
    - currency: "EUR"
    """
    lines = [tr("hints.title")]
    for path, values in hints.items():
        shown = " | ".join(_value(v, value_limit) for v in values)
        lines.append(f"- {path}: {shown}")
    return safe_lines(lines)
