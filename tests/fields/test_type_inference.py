"""Type inference from *all* of a field's gold values: a field without a configured type whose
every gold value is a measurement ("1.2 kg", "34.4 l") is a quantity, so "1200 g" matches
"1.2 kg"; one gold value that is not ("n/a", "6 pcs") keeps it as before. The outputs and the
logged run say which types were inferred; a configured type always wins.

The reference is a plain walk over the gold documents that applies the rule by hand and writes
the decided types into a config: scoring without a config must give the same counts."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.mlflow_server import MlflowServer

from extract_mlflow import evaluate
from extract_mlflow.cli import main
from extract_mlflow.fields.scorer import FieldScorer
from extract_mlflow.fields.units import is_measurement

ROOT = Path(__file__).resolve().parents[2]
RECEIPTS = ROOT / "examples" / "receipts"
GOLD, PRED = str(RECEIPTS / "gold.jsonl"), str(RECEIPTS / "pred.jsonl")
INFERRED = {"fuel_volume": "quantity", "items[].amount": "quantity"}
NOTE = (
    "types inferred from all gold values (no type in the config): "
    "`fuel_volume` quantity, `items[].amount` quantity"
)


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def counts(report: Any) -> dict[str, tuple[int, int, int, dict[str, int]]]:
    return {p: (f.counts.tp, f.counts.fp, f.counts.fn, f.errors) for p, f in report.fields.items()}


# -- the receipts example through the CLI ----------------------------------------------------
def test_receipts_infer_quantities_and_say_so() -> None:
    code, out, err = cli("score", GOLD, PRED, "--no-log", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["inferred_types"] == INFERRED
    assert data["micro"]["f1"] == pytest.approx(186 / 203)  # TP 93, FP 7, FN 10 (README)
    assert {p: f["type"] for p, f in data["fields"].items() if p in INFERRED} == INFERRED
    assert data["fields"]["items[].count"]["type"] == "text"  # "6 pcs", "12 items"
    assert data["fields"]["loyalty_card"]["type"] == "text"  # "A4-1182", "v2-0093"
    code, table, _ = cli("score", GOLD, PRED, "--no-log")
    assert code == 0 and NOTE in table.splitlines()
    code, md, _ = cli("score", GOLD, PRED, "--no-log", "--format", "md")
    assert code == 0 and f"- {NOTE}" in md.splitlines()


def test_a_configured_type_wins_and_is_not_inferred() -> None:
    """Typed quantity by hand: the numbers of the run without a config. Typed text: the
    numbers from before the inference (every amount in another unit a wrong value)."""
    plain = evaluate(GOLD, PRED)
    by_hand = evaluate(GOLD, PRED, RECEIPTS / "config_quantity.toml")
    as_text = evaluate(GOLD, PRED, RECEIPTS / "config_text.toml")
    assert counts(by_hand) == counts(plain) and by_hand.inferred_types == {}
    assert as_text.inferred_types == {} and "inferred_types" not in as_text.to_dict()
    assert (as_text.micro.tp, as_text.micro.fp, as_text.micro.fn) == (84, 16, 19)
    assert as_text.fields["items[].amount"].errors == {"wrong_value": 11, "missing": 1}
    code, out, _ = cli(
        "score", GOLD, PRED, "--config", str(RECEIPTS / "config_text.toml"), "--no-log"
    )
    assert code == 0 and "types inferred" not in out


# -- one gold value that is no measurement keeps the field as before -------------------------
MIXED_GOLD = [
    {"id": "a", "weight": "1.2 kg", "temp": "4 °C"},
    {"id": "b", "weight": "3 kg", "temp": "277.15 K"},
    {"id": "c", "weight": "n/a", "temp": "-18 °C"},  # matched to the letter below
]
MIXED_PRED = [
    {"id": "a", "weight": "1200 g", "temp": "277.15 K"},
    {"id": "b", "weight": "3000 g", "temp": "4 °C"},
    {"id": "c", "weight": "n/a", "temp": "255.15 K"},
]


def _write(folder: Path, name: str, rows: list[dict[str, Any]]) -> Path:
    path = folder / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


@pytest.mark.parametrize("how", ["rows", "files", "workers"])
def test_a_field_partly_measurements_stays_text(tmp_path: Path, how: str) -> None:
    """`weight` has "n/a" beside its measurements, and that value is matched to the letter (so
    it is never read as a type): still it keeps `weight` text, in memory, streamed, and
    streamed in two worker processes. `temp` is a quantity (4 °C == 277.15 K)."""
    if how == "rows":
        report = evaluate(MIXED_GOLD, MIXED_PRED)
    else:
        gold = _write(tmp_path, "gold.jsonl", MIXED_GOLD)
        pred = _write(tmp_path, "pred.jsonl", MIXED_PRED)
        report = evaluate(gold, pred, workers=2 if how == "workers" else 1)
    assert report.inferred_types == {"temp": "quantity"}
    assert counts(report)["weight"] == (1, 2, 2, {"wrong_value": 2})
    assert counts(report)["temp"] == (3, 0, 0, {})  # -18 °C is 255.15 K
    assert report.fields["weight"].type == "text"
    assert report.notes == [
        "`weight`: not inferred a quantity, as some of its gold values are numbers with a unit "
        "and some are not (a type in the config decides)"
    ]


def test_hostile_values_are_no_quantities() -> None:
    gold = [
        {"id": "1", "n": "12 items", "v": "v2", "d": "2024-01-05", "k": "50K", "s": "5 stars"},
        {"id": "2", "n": "3 pcs", "v": "A4", "d": "05/01/2024", "k": "120K", "s": "4 stars"},
    ]
    pred = [dict(g) for g in gold]
    report = evaluate(gold, pred)
    assert report.inferred_types == {}
    assert {p: f.type for p, f in report.fields.items() if p != "d"} == dict.fromkeys(
        "knsv", "text"
    )
    assert "quantity" not in report.fields["d"].type


# -- the rule against a reference that decides it by hand -------------------------------------
MEASUREMENTS = ["1.2 kg", "1200 g", "0.5 l", "500 ml", "37 °C", "310.15 K", "12%", "8.7 s⁻¹"]
OTHERS = ["n/a", "6 pcs", "A4", "50K", "large"]  # strings, so that "as before" is text
value = st.sampled_from(MEASUREMENTS + OTHERS)
item = st.fixed_dictionaries({}, optional={"x": value, "y": value})
document = st.fixed_dictionaries(
    {},
    optional={
        "a": value,
        "b": value,
        "tags": st.lists(value, max_size=3),
        "items": st.lists(item, max_size=3),
    },
)


def _leaves(value: Any, path: str) -> list[tuple[str, Any]]:
    """(path, value) of every scalar: the path convention written out plainly."""
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in _leaves(v, f"{path}.{k}" if path else k)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v, f"{path}[]")]
    return [(path, value)]


def reference_types(gold: list[dict[str, Any]]) -> dict[str, str]:
    """Per gold path: quantity when every gold value is a measurement, else text."""
    seen: dict[str, list[Any]] = {}
    for doc in gold:
        for path, v in _leaves({k: v for k, v in doc.items() if k != "id"}, ""):
            seen.setdefault(path, []).append(v)
    return {
        p: "quantity" if all(is_measurement(v) for v in vs) else "text" for p, vs in seen.items()
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gold=st.lists(document, min_size=1, max_size=5), pred=st.lists(document, max_size=5))
def test_inference_equals_the_rule_decided_by_hand(
    gold: list[dict[str, Any]], pred: list[dict[str, Any]]
) -> None:
    """Property: scoring without a config gives the counts of a config that types every path by
    the rule (read off a plain walk of all gold values), in memory and streamed, and the
    report's inferred types are exactly the quantity paths of the rule."""
    gold_rows = [{"id": f"d{i}", **d} for i, d in enumerate(gold)]
    pred_rows = [{"id": f"d{i}", **d} for i, d in enumerate(pred)]
    types = reference_types(gold_rows)
    config = {"fields": {p: {"type": t} for p, t in types.items()}}
    expected = counts(evaluate(gold_rows, pred_rows, config))
    report = evaluate(gold_rows, pred_rows)
    assert counts(report) == expected
    assert report.inferred_types == {p: t for p, t in sorted(types.items()) if t == "quantity"}
    with tempfile.TemporaryDirectory() as tmp:
        g = _write(Path(tmp), "gold.jsonl", gold_rows)
        p = _write(Path(tmp), "pred.jsonl", pred_rows or [{"id": "none"}])
        streamed = evaluate(g, p)
        by_hand = evaluate(g, p, config)
    assert counts(streamed) == counts(by_hand)
    assert streamed.inferred_types == report.inferred_types


@settings(max_examples=80, deadline=None)
@given(gold=st.lists(document, min_size=1, max_size=4), pred=st.lists(document, max_size=4))
def test_the_scorer_notes_every_gold_value(
    gold: list[dict[str, Any]], pred: list[dict[str, Any]]
) -> None:
    """Property: whatever the prediction (equal to the letter, different, absent), the scorer
    notes every gold value of every path as a measurement or not, as a plain walk does."""
    scorer = FieldScorer()
    for i, g in enumerate(gold):
        scorer.score(g, pred[i] if i < len(pred) else None)
    measured: set[str] = set()
    plain: set[str] = set()
    for doc in gold:
        for path, v in _leaves(doc, ""):
            (measured if is_measurement(v) else plain).add(path)
    assert scorer.state.measured == measured and scorer.state.plain == plain


# -- the logged run --------------------------------------------------------------------------
def test_the_logged_run_holds_the_inferred_types(
    mlflow_server: MlflowServer, tmp_path: Path
) -> None:
    """Logged to a real server: the run's param `inferred_types` and its diagnostics say which
    types were inferred, read back through MlflowClient; a run with every type configured has
    no such param."""
    from mlflow import MlflowClient

    code, out, err = cli(
        "score", GOLD, PRED, "--tracking-uri", mlflow_server.uri, "--experiment", "inference",
        "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    client = MlflowClient(tracking_uri=mlflow_server.uri)
    run_id = json.loads(out)["run_id"]
    run = client.get_run(run_id)
    assert json.loads(run.data.params["inferred_types"]) == INFERRED
    local = client.download_artifacts(run_id, "eval/diagnostics.json", str(tmp_path))
    assert json.loads(Path(local).read_text(encoding="utf-8"))["inferred_types"] == INFERRED
    summary = client.download_artifacts(run_id, "eval/summary.md", str(tmp_path))
    assert f"- {NOTE}" in Path(summary).read_text(encoding="utf-8").splitlines()
    code, out, err = cli(
        "score", GOLD, PRED, "--config", str(RECEIPTS / "config_quantity.toml"),
        "--tracking-uri", mlflow_server.uri, "--experiment", "inference", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    assert "inferred_types" not in client.get_run(json.loads(out)["run_id"]).data.params
    code, out, err = cli(
        "score", GOLD, PRED, "--tracking-uri", mlflow_server.uri, "--experiment", "forged",
        "--param", 'inferred_types={"total": "quantity"}',
    )  # fmt: skip
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert err.startswith("error: --param 'inferred_types': ")
    forged = client.get_experiment_by_name("forged")
    assert forged is None or not client.search_runs([forged.experiment_id])
