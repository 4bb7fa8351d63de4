"""Feedback text and field hints for the prompt-optimisation loop (pure functions)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from extract_mlflow import evaluate
from extract_mlflow.core.paths import document_leaves
from extract_mlflow.io.loading import load_gold
from extract_mlflow.views.feedback import feedback_text, field_hints, hints_text, weakest_fields


def leaf_values(doc: dict[str, Any], id_key: str = "id") -> list[tuple[str, Any]]:
    """(path, value) of every present gold leaf, the id left out (the path convention's walk)."""
    return [(leaf.path, leaf.value) for leaf in document_leaves(doc, {id_key})]


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "invoices"


def baseline() -> Any:
    return evaluate(
        EXAMPLE / "gold.jsonl", EXAMPLE / "pred_baseline.jsonl", EXAMPLE / "config.toml"
    )


# -- feedback text ----------------------------------------------------------------------------
def test_feedback_names_weak_fields_examples_and_lost_documents() -> None:
    report = baseline()
    text = feedback_text(report, max_fields=3, max_examples=2)
    assert text.startswith("Score: F1 0.87 (precision 0.97, recall 0.78) over 10 documents")
    weak = weakest_fields(report, 3)
    assert [f.counts.f1 for f in weak] == sorted(f.counts.f1 or 0.0 for f in weak)
    for f in weak:
        assert f"- {f.path}" in text
    assert "inv-004: expected 3864.0, got 2980.0" in text  # total: net instead of gross
    assert "- inv-007: the output could not be read" in text
    assert "- inv-008: no output at all" in text
    assert "Missing sections" not in text


def test_feedback_limits_and_sections() -> None:
    report = baseline()
    text = feedback_text(
        report, max_fields=1, max_examples=1, missing_sections={"Catalyst": 3, "Abstract": 0}
    )
    field_lines = [line for line in text.splitlines() if line.startswith("- ") and ":" in line]
    assert sum(1 for line in field_lines if "F1" in line) == 1
    assert "Missing sections:\n- Catalyst: missing in 3 document(s)" in text
    assert "Abstract" not in text


def test_feedback_for_a_perfect_run() -> None:
    gold = [{"id": "a", "total": 1, "name": "X"}]
    text = feedback_text(evaluate(gold, gold))
    assert "F1 1.00" in text and "No mistakes" in text


def test_long_values_are_cut() -> None:
    gold = [{"id": "a", "note": "word " * 100}]
    text = feedback_text(evaluate(gold, [{"id": "a", "note": "other"}]), value_limit=30)
    example = next(line for line in text.splitlines() if "expected" in line)
    assert "…" in example and len(example) < 120


# -- field hints --------------------------------------------------------------------------------
def test_leaf_paths_are_the_scoring_paths() -> None:
    """leaf_values walks documents with the same paths the field scorer reports."""
    gold = load_gold(EXAMPLE / "gold.jsonl").docs
    report = evaluate(list(gold.values()), list(gold.values()))
    paths = {p for doc in gold.values() for p, _ in leaf_values(doc)}
    assert paths == set(report.fields)


def test_hints_of_the_example_never_come_from_the_document() -> None:
    gold = load_gold(EXAMPLE / "gold.jsonl").docs
    hints = field_hints(gold, "inv-001", ignore=["notes"], per_field=5)
    assert "Nordlicht Haustechnik GmbH" not in hints["vendor.name"]
    assert "notes" not in hints
    assert all(len(v) <= 5 for v in hints.values())
    assert list(hints) == sorted(hints)
    only = field_hints(gold, "inv-001", fields=["total", "currency"], per_field=2)
    assert list(only) == ["total", "currency"] and len(only["total"]) == 2


def test_hints_from_an_iterable_and_text() -> None:
    docs = [{"id": "a", "v": 1}, {"id": "b", "v": 2}, {"id": "c", "v": 2}]
    assert field_hints(docs, "a") == {"v": [2]}  # distinct values
    hints = field_hints(docs, "b")  # c's 2 is b's own answer: withheld
    assert hints == {"v": [1]} and hints.withheld == {"v": 1}
    assert field_hints([*docs, {"id": "d", "v": 3}], "a") == {"v": [2, 3]}  # gold order
    assert hints_text({"v": [1, "x"]}) == (
        'Example values from other documents (formats, not answers):\n- v: 1 | "x"\n'
    )


scalars = st.one_of(
    st.integers(-5, 5), st.sampled_from(["a", "b", "c", "EUR"]), st.booleans(), st.none()
)
documents = st.dictionaries(
    st.sampled_from(["x", "y", "z"]),
    st.one_of(
        scalars,
        st.lists(scalars, max_size=3),
        st.dictionaries(st.sampled_from(["p", "q"]), scalars, max_size=2),
        st.lists(st.dictionaries(st.sampled_from(["p", "q"]), scalars, max_size=2), max_size=2),
    ),
    max_size=3,
)


@settings(max_examples=150, deadline=None)
@given(
    docs=st.lists(documents, min_size=1, max_size=6),
    target=st.integers(0, 5),
    per_field=st.integers(1, 4),
)
def test_hints_are_drawn_only_from_other_documents(
    docs: list[dict[str, Any]], target: int, per_field: int
) -> None:
    gold = {f"d{i}": {"id": f"d{i}", **doc} for i, doc in enumerate(docs)}
    doc_id = f"d{target % len(docs)}"
    others: dict[str, list[Any]] = defaultdict(list)
    for other_id, doc in gold.items():
        if other_id != doc_id:
            for path, value in leaf_values(doc):
                others[path].append(value)
    hints = field_hints(gold, doc_id, per_field=per_field)
    assert set(hints) <= set(others)
    for path, values in hints.items():
        assert 0 < len(values) <= per_field
        for v in values:
            assert any(type(v) is type(o) and v == o for o in others[path])
    # every field another document has gets hints, unless all its values are the target's own
    assert set(hints) | set(hints.withheld) == set(others)
