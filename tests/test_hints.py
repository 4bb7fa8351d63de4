"""`extract-mlflow hints GOLD --for ID`: example values per field from the other gold documents
only, as prompt text, never a value that scores as ID's own answer for that field (under the
field's comparison: types, tolerances, units, inferred types), with the number withheld on
stderr; `field_hints` reads a gold path as well as rows; bad input exits 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from extract_mlflow import evaluate, field_hints
from extract_mlflow.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "invoices"
GOLD = EXAMPLE / "gold.jsonl"
HEADER = "Example values from other documents (formats, not answers):"


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def leaves(value: Any, path: str = "") -> list[tuple[str, Any]]:
    """A plain reference walk: (path, value) of every scalar, `[]` after list names."""
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in leaves(v, f"{path}.{k}" if path else k)]
    if isinstance(value, list):
        return [x for v in value for x in leaves(v, f"{path}[]")]
    return [(path, value)]


def gold_docs() -> list[dict[str, Any]]:
    return [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines()]


def shown(line: str) -> tuple[str, list[Any]]:
    path, _, values = line[2:].partition(": ")
    return path, [json.loads(v) for v in values.split(" | ")]


def test_hints_come_from_other_documents_only() -> None:
    code, out, err = cli("hints", str(GOLD), "--for", "inv-003", "--per-field", "2")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == HEADER
    docs = gold_docs()
    others: dict[str, list[Any]] = {}
    for doc in docs:
        if doc["id"] != "inv-003":
            for path, value in leaves({k: v for k, v in doc.items() if k != "id"}):
                others.setdefault(path, []).append(value)
    own = {(p, json.dumps(v)) for p, v in leaves(next(d for d in docs if d["id"] == "inv-003"))}
    paths = []
    for line in lines[1:]:
        path, values = shown(line)
        paths.append(path)
        assert 1 <= len(values) <= 2 and len({json.dumps(v) for v in values}) == len(values)
        assert all(v in others[path] for v in values), line
        only_own = {v for p, v in own if p == path} - {json.dumps(v) for v in others[path]}
        assert not only_own & {json.dumps(v) for v in values}, line  # nothing from inv-003
    assert paths == sorted(others) and "id" not in paths
    assert "notes" in paths  # without --config nothing is ignored


def test_config_drops_ignored_fields_and_per_field_counts() -> None:
    code, out, err = cli(
        "hints", str(GOLD), "--for", "inv-001", "--config", str(EXAMPLE / "config.toml")
    )
    assert code == 0, err
    values = dict(shown(line) for line in out.splitlines()[1:])
    assert "notes" not in values  # ignore = true in the config
    assert len(values["currency"]) <= 3 and len(values["vendor.name"]) == 3  # default 3


def test_field_hints_reads_a_path_like_rows() -> None:
    rows = gold_docs()
    assert field_hints(GOLD, "inv-002") == field_hints(rows, "inv-002")
    assert field_hints(str(GOLD), "inv-002", per_field=1) == field_hints(
        rows, "inv-002", per_field=1
    )


def test_unknown_id_and_missing_gold_exit_2_with_one_line(tmp_path: Path) -> None:
    for args in (
        ["hints", str(GOLD), "--for", "inv-404"],
        ["hints", str(tmp_path / "none.jsonl"), "--for", "inv-001"],
    ):
        code, out, err = cli(*args)
        lines = [line for line in err.splitlines() if line.strip()]
        assert code == 2 and out == ""
        assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "inv-404" in cli("hints", str(GOLD), "--for", "inv-404")[2]


# -- never a value equal to the document's own (#26 item 4) -----------------------------------
KINETICS = Path(__file__).resolve().parents[1] / "examples" / "iterations"


@pytest.mark.parametrize("config", [None, KINETICS / "config.toml"])
def test_kin_03_is_shown_none_of_its_own_values(config: Path | None) -> None:
    """The issue's case: kin-03's kcat 8.7 s⁻¹, km 1.4 mM, pH 7.5 and 37 °C occur in other
    papers; none of them (nor its other values, nor its topic) is shown, with or without the
    config, and stderr says how many values were withheld, field by field."""
    args = ["hints", str(KINETICS / "gold.jsonl"), "--for", "kin-03"]
    code, out, err = cli(*args, *(["--config", str(config)] if config else []))
    assert code == 0, err
    lines = [line for line in out.splitlines()[1:] if not line.startswith("- title: ")]
    hints = dict(shown(line) for line in lines)  # (titles are cut at 60 characters)
    own: dict[str, list[Any]] = {
        "rows[].kcat": ["15.0 s⁻¹", "8.7 s⁻¹"], "rows[].km": ["7.5 mM", "4.1 mM", "1.4 mM"],
        "rows[].ph": [7.5], "rows[].temperature": ["37 °C"],
    }  # fmt: skip
    for path, values in own.items():
        assert hints[path] and not set(map(str, hints[path])) & set(map(str, values)), path
    assert "topic" not in hints  # every paper's topic is "kinetics"
    assert err == (
        "withheld 8 value(s) equal to kin-03's own gold: rows[].kcat 2, rows[].km 3, "
        "rows[].ph 1, rows[].temperature 1, topic 1\n"
    )


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def test_equal_means_equal_under_the_field_comparison(tmp_path: Path) -> None:
    """522 min⁻¹ is 8.7 s⁻¹ (a quantity inferred from every gold value, or configured); with a
    tolerance, 7.45 is 7.5; typed text, 522 min⁻¹ is another value and is shown."""
    gold = _jsonl(tmp_path / "gold.jsonl", [
        {"id": "x", "kcat": "8.7 s⁻¹", "ph": 7.5},
        {"id": "y", "kcat": "522 min⁻¹", "ph": 7.45},
        {"id": "z", "kcat": "3.2 s⁻¹", "ph": 6.0},
    ])  # fmt: skip
    _, out, err = cli("hints", str(gold), "--for", "x")
    assert dict(shown(line) for line in out.splitlines()[1:]) == {
        "kcat": ["3.2 s⁻¹"], "ph": [7.45, 6.0]
    }  # fmt: skip
    assert err == "withheld 1 value(s) equal to x's own gold: kcat 1\n"
    config = tmp_path / "config.toml"
    config.write_text('[fields."ph"]\ntype = "number"\ntol = 0.1\n[fields."kcat"]\ntype = "text"\n')
    _, out, err = cli("hints", str(gold), "--for", "x", "--config", str(config))
    assert dict(shown(line) for line in out.splitlines()[1:]) == {
        "kcat": ["522 min⁻¹", "3.2 s⁻¹"], "ph": [6.0]
    }  # fmt: skip
    assert err == "withheld 1 value(s) equal to x's own gold: ph 1\n"
    assert field_hints(gold, "x").withheld == {"kcat": 1}


POOLS: dict[str, list[Any]] = {
    "w": ["1.2 kg", "1200 g", "0.5 kg", "500 g", "2 kg", "1.21 kg"],
    "n": [7.5, 7.45, 7.0, 8, "7.5"],
    "t": ["Acme GmbH", "ACME GmbH", "acme  gmbh", "Other Ltd"],
    "rows[].k": ["8.7 s⁻¹", "522 min⁻¹", "3.2 s⁻¹", "31320 h⁻¹"],
}
RULES = {"w": {"rel_tol": 0.01}, "n": {"type": "number", "tol": 0.1}, "t": {"casefold": True}}
_doc = st.fixed_dictionaries(
    {},
    optional={
        "w": st.sampled_from(POOLS["w"]),
        "n": st.sampled_from(POOLS["n"]),
        "t": st.sampled_from(POOLS["t"]),
        "rows": st.lists(st.fixed_dictionaries({"k": st.sampled_from(POOLS["rows[].k"])}),
                         min_size=1, max_size=3),
    },
)  # fmt: skip


def _holding(path: str, value: Any) -> dict[str, Any]:
    """A document whose only value is `value` at `path`."""
    return {"rows": [{"k": value}]} if path == "rows[].k" else {path: value}


@pytest.mark.slow
@settings(max_examples=50, deadline=None)
@given(
    docs=st.lists(_doc, min_size=2, max_size=5),
    x=st.integers(0, 4),
    configured=st.booleans(),
)
def test_no_hint_scores_as_the_documents_own_value(
    docs: list[dict[str, Any]], x: int, configured: bool
) -> None:
    """Property: for any gold set and any document X, a shown hint, predicted for X alone,
    scores no TP at its field (the scorer, end to end, on the whole gold set), and every
    withheld value does; with room for all, shown + withheld are all the others' values."""
    rows = [{"id": f"d{i}", **d} for i, d in enumerate(docs)]
    target = rows[x % len(rows)]["id"]
    config = {"fields": RULES} if configured else {}
    from extract_mlflow.config_file import config_from_mapping

    hints = field_hints(rows, target, per_field=99, config=config_from_mapping(config))

    def scores(path: str, value: Any) -> bool:
        pred = [{"id": target, **_holding(path, value)}]
        report = evaluate(rows, pred, config)
        record = next(d for d in report.documents if d.id == target)
        return record.fields.get(path, [0])[0] > 0

    others: dict[str, set[str]] = {}
    for r in rows:
        if r["id"] != target:
            for path, value in leaves({k: v for k, v in r.items() if k != "id"}):
                others.setdefault(path, set()).add(json.dumps(value))
    for path, values in hints.items():
        assert not any(scores(path, v) for v in values), (path, values)
    for path, distinct in others.items():
        shown_here = {json.dumps(v) for v in hints.get(path, [])}
        withheld = distinct - shown_here
        assert len(withheld) == hints.withheld.get(path, 0)
        assert all(scores(path, json.loads(v)) for v in withheld), (path, withheld)
