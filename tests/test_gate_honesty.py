"""Verdicts that cannot be fooled, without a server: gates that check nothing, `significant` gates
on too few documents, and non-numbers or out-of-range options are refused (exit 2), never
passed. The CLI cases use a closed port, so a refusal that waited for the network would show up
as "unreachable" instead of its own message."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

from extract_mlflow.cli import main
from extract_mlflow.comparison import build_comparison, check_options
from extract_mlflow.errors import ConfigError, GateError, InputError
from extract_mlflow.gates import Gate, load_gates, parse_shortcuts
from extract_mlflow.tracking.promote import promote
from extract_mlflow.tracking.refs import compare_refs

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "invoices"
SIG = "extract_mlflow:0.1.0|config:abc|gold:111"
RUN = "0123456789abcdef0123456789abcdef"


def closed_port_uri() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def frame(wrong: int, n: int) -> pd.DataFrame:
    """`n` documents of one field `f`, the first `wrong` of them wrong (1 FP + 1 FN)."""
    rows = [
        (f"d{i}", "scored", 0 if i < wrong else 1, int(i < wrong), int(i < wrong)) for i in range(n)
    ]
    df = pd.DataFrame(rows, columns=["id", "status", "tp", "fp", "fn"])
    return df.assign(**{"field_tp/f": df.tp, "field_fp/f": df.fp, "field_fn/f": df.fn})


def f1_of(df: pd.DataFrame) -> dict[str, float]:
    tp, fp, fn = (int(df[c].sum()) for c in ("tp", "fp", "fn"))
    return {"f1": 2 * tp / (2 * tp + fp + fn)}


# -- gates that check nothing -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("empty.toml", ""),
        ("comments.toml", "# every gate was commented out\n# [[gate]]\n# metric = 'f1'\n"),
        ("empty-list.toml", "gate = []\n"),
        ("list.json", "[]"),
        ("table.json", '{"gate": []}'),
    ],
)
def test_a_gates_file_without_gates_is_refused(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="no gate was evaluated"):
        load_gates(path)
    for command in (["compare", RUN, RUN], ["promote", "inv", "2"]):
        code, out, err = cli(*command, "--gates", str(path), "--tracking-uri", closed_port_uri())
        assert code == 2 and out == ""
        (line,) = err.splitlines()
        assert line.startswith(f"error: {path}") and "no gate was evaluated" in line


def test_only_skipped_checks_is_no_verdict() -> None:
    gates = [Gate(metric="f1", max_drop=0.01), Gate(metric="recall", min_absolute_change=0.1)]
    result = build_comparison(None, {"f1": 0.9, "recall": 0.8}, gates=gates)
    assert (result.evaluated, result.passed, result.exit_code) == (0, False, 2)
    assert result.unchecked_reason() == (
        "no gate was evaluated: every check was skipped (max_drop skipped: no baseline run; "
        "min_absolute_change skipped: no baseline run)"
    )
    assert result.to_table().startswith("NOT GATED: 0 checked, 2 skipped: no baseline run\n")
    assert result.to_dict()["evaluated_checks"] == 0 and result.to_dict()["passed"] is False
    with_bar = [*gates, Gate(metric="f1", threshold=0.8)]
    result = build_comparison(None, {"f1": 0.9, "recall": 0.8}, gates=with_bar)
    assert (result.evaluated, result.passed, result.exit_code) == (1, True, 0)


def test_a_failed_check_is_evaluated() -> None:
    """A metric missing from the candidate is a decided (failed) check, not a skipped one."""
    result = build_comparison(None, {"recall": 0.8}, gates=[{"metric": "f1", "max_drop": 0.0}])
    assert (result.evaluated, result.exit_code) == (1, 1)


# -- significant gates on too few documents --------------------------------------------------
def test_a_significant_gate_on_few_documents_is_refused_not_passed() -> None:
    """One wrong document of six: the drop is real, but a bootstrap interval over six documents
    reaches 0, so a `significant` gate would pass it."""
    base, cand = frame(0, 6), frame(1, 6)
    gate = [Gate(metric="f1", max_drop=0.0, significant=True)]
    kwargs: dict[str, Any] = {"baseline_signature": SIG, "candidate_signature": SIG}
    with pytest.raises(GateError, match=r"only 6 documents are paired.*min_documents 30"):
        build_comparison(f1_of(base), f1_of(cand), base, cand, gate, **kwargs)
    loose = build_comparison(f1_of(base), f1_of(cand), base, cand, gate, min_documents=6, **kwargs)
    assert loose.passed  # what the default refuses: the interval over 6 documents reaches 0
    drop = [{"metric": "f1", "max_drop": 0.0}]
    plain = build_comparison(f1_of(base), f1_of(cand), base, cand, drop, **kwargs)
    assert not plain.passed  # a plain drop gate needs no document count
    big_base, big_cand = frame(0, 30), frame(1, 30)
    enough = build_comparison(f1_of(big_base), f1_of(big_cand), big_base, big_cand, gate, **kwargs)
    assert enough.paired == 30 and enough.evaluated == 1


# -- out-of-range and non-number options ------------------------------------------------------
@pytest.mark.parametrize(
    ("seed", "resamples", "min_documents", "message"),
    [
        (-1, 100, 30, "seed (--seed) must be a whole number ≥ 0, not -1"),
        (True, 100, 30, "seed"),
        (0, 0, 30, "resamples (--resamples) must be a whole number ≥ 1, not 0"),
        (0, -5, 30, "resamples"),
        (0, 1.5, 30, "resamples"),
        (0, 100, -1, "min_documents (--min-documents) must be a whole number ≥ 0, not -1"),
    ],
)
def test_bad_bootstrap_options(seed: Any, resamples: Any, min_documents: Any, message: str) -> None:
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_options(seed, resamples, min_documents)
    nowhere = closed_port_uri()
    options = {"seed": seed, "resamples": resamples, "min_documents": min_documents}
    options["gates"] = [{"metric": "f1", "threshold": 0}]
    with pytest.raises(InputError, match="must be a whole number"):
        compare_refs(RUN, RUN, tracking_uri=nowhere, **options)
    with pytest.raises(InputError, match="must be a whole number"):
        promote("inv", 1, tracking_uri=nowhere, **options)


def test_good_bootstrap_options() -> None:
    check_options(None, 1, 0)
    check_options(2**40, 10_000, 1000)


@pytest.mark.parametrize(
    "text",
    [
        "[[gate]]\nmetric = 'f1'\nthreshold = nan\n",
        "[[gate]]\nmetric = 'f1'\nmax_drop = inf\n",
        "[[gate]]\nmetric = 'f1'\nmin_absolute_change = -nan\n",
        "[[gate]]\nmetric = 'f1'\nmin_relative_change = nan\n",
    ],
)
def test_gates_files_with_non_numbers_are_refused(tmp_path: Path, text: str) -> None:
    path = tmp_path / "gates.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="finite number"):
        load_gates(path)
    as_json = tmp_path / "gates.json"
    key = text.split("\n")[2].split(" = ")[0]
    as_json.write_text(f'{{"gate": [{{"metric": "f1", "{key}": NaN}}]}}', encoding="utf-8")
    with pytest.raises(ConfigError, match="finite number"):
        load_gates(as_json)
    assert json.loads('{"x": NaN}')  # JSON NaN parses: the gate model is what refuses it


@pytest.mark.parametrize(
    "option",
    [
        ["--max-drop", "f1=nan"],
        ["--max-drop", "f1=-inf"],
        ["--min", "f1=nan"],
        ["--min", "f1=inf"],
        ["--max", "parse_failure_rate=nan"],
        ["--max", "tokens_per_doc=inf"],
        ["--seed", "-1"],
        ["--resamples", "0"],
        ["--resamples", "-5"],
        ["--min-documents", "-1"],
    ],
)
def test_bad_gate_options_exit_2_before_the_network(option: list[str]) -> None:
    gate = [] if option[0] in ("--min", "--max", "--max-drop") else ["--min", "f1=0.5"]
    for command in (["compare", RUN, RUN], ["promote", "inv", "2"]):
        code, out, err = cli(*command, *option, *gate, "--tracking-uri", closed_port_uri())
        assert code == 2 and out == ""
        (line,) = err.splitlines()
        assert line.startswith("error: ") and option[0] in line and "unreachable" not in line
    key = {"--min": "min", "--max": "max", "--max-drop": "max_drop"}.get(option[0])
    if key is not None:
        with pytest.raises(ConfigError, match="finite number"):
            parse_shortcuts(**{key: [option[1]]})


def test_score_min_f1_nan_exits_2() -> None:
    gold, pred = EXAMPLE / "gold.jsonl", EXAMPLE / "pred_improved.jsonl"
    for bad in ("nan", "NaN", "-nan"):
        code, out, err = cli("score", str(gold), str(pred), "--no-log", "--min-f1", bad)
        assert code == 2 and out == ""
        assert "--min-f1" in err and "is not a number" in err
    code, _, err = cli("score", str(gold), str(pred), "--no-log", "--min-f1", "0.5")
    assert code == 0, err
