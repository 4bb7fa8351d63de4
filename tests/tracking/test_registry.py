"""Comparing and promoting runs on a tracking server (extract_mlflow.tracking.promote): refs parsed
without a server, then every ref form resolved, compared and promoted against a real
`mlflow server`, with every result read back through MlflowClient. MLflow is never mocked."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from support.mlflow_server import MlflowServer
from support.registry import (
    DROP,
    World,
    aliases,
    client_for,
    fresh_model,
    link_prompt,
    log_world,
    register_prompt,
    score,
    version_tags,
)

from extract_mlflow.comparison import IncomparableRunsError, ScoredRun, compare
from extract_mlflow.core.narrow import narrowest
from extract_mlflow.errors import ConfigError, InputError
from extract_mlflow.gates import Gate
from extract_mlflow.report import Report
from extract_mlflow.tracking.promote import (
    SUMMARY_LIMIT,
    criteria,
    promote,
    promotion_tags,
    summary,
)
from extract_mlflow.tracking.refs import compare_refs, fetch_scored_run, parse_ref, resolve_ref
from extract_mlflow.tracking.registry import (
    ALIAS_TAG,
    BASELINE_TAG,
    CRITERIA_TAG,
    SUMMARY_TAG,
    VERDICT_TAG,
    check_alias,
    parse_target,
)
from extract_mlflow.views.frames import report_frame

RUN_A = "0123456789abcdef0123456789abcdef"


# -- pure: refs, targets, tags --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        (RUN_A, {"kind": "run", "run_id": RUN_A}),
        (f"runs:/{RUN_A}", {"kind": "run", "run_id": RUN_A, "path": None}),
        (f"runs:/{RUN_A}/eval/x", {"kind": "run", "run_id": RUN_A, "path": "eval/x"}),
        ("models:/inv/3", {"kind": "model", "name": "inv", "version": "3"}),
        ("models:/inv@champion", {"kind": "model", "name": "inv", "alias": "champion"}),
        ("prompts:/p.x_1/12", {"kind": "prompt", "name": "p.x_1", "version": "12"}),
        ("prompts:/p@prod", {"kind": "prompt", "name": "p", "alias": "prod"}),
    ],
)
def test_parse_ref_forms(ref: str, expected: dict[str, str | None]) -> None:
    parsed = parse_ref(ref)
    assert {k: getattr(parsed, k) for k in expected} == expected
    assert parsed.ref == ref


@pytest.mark.parametrize(
    "ref",
    [
        "",
        "abc",
        RUN_A.upper(),
        RUN_A[:-1],
        "runs:/",
        "runs:/not-a-run",
        "models:/inv",
        "models:/inv/",
        "models:/inv/latest",
        "models:/inv/0",
        "models:/a/b/3",
        "models:/@champion",
        "models:/inv@",
        "prompts:/p",
        "prompts:/p/v1",
        "s3://bucket/run",
    ],
)
def test_parse_ref_rejects_with_the_ref_named(ref: str) -> None:
    with pytest.raises(InputError, match="bad reference") as info:
        parse_ref(ref)
    assert repr(ref) in str(info.value)


def test_parse_target() -> None:
    assert (parse_target("inv").name, parse_target("inv").kind) == ("inv", "model")
    assert parse_target("models:/inv").kind == "model"
    assert (parse_target("prompts:/p").name, parse_target("prompts:/p").kind) == ("p", "prompt")
    for bad in ("", "prompts:/", "models:/inv/3", "inv@champion"):
        with pytest.raises(InputError):
            parse_target(bad)


@pytest.mark.parametrize("alias", ["latest", "v3", "bad alias", ""])
def test_check_alias_refuses_what_mlflow_refuses(alias: str) -> None:
    with pytest.raises(InputError, match="--alias"):
        check_alias(alias)
    check_alias("champion")


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    return {"baseline": score("pred_baseline.jsonl"), "improved": score("pred_improved.jsonl")}


def test_summary_and_tags_say_why(reports: dict[str, Report]) -> None:
    base, cand = (ScoredRun.from_report(reports[k]) for k in ("baseline", "improved"))
    gates = [Gate(metric="f1", threshold=0.8, max_drop=0.01), Gate(metric="recall", threshold=0.9)]
    passed = compare(base, cand, gates)
    text = summary(passed)
    assert text == "f1 0.991 vs 0.865 (+0.126); 3 checked"  # f1's two checks, recall's one
    failed = compare(cand, base, gates)
    tags = promotion_tags(failed, gates, "champion", "7")
    assert tags[VERDICT_TAG] == "failed" and tags[BASELINE_TAG] == "7"
    assert tags[ALIAS_TAG] == "champion"
    assert tags[SUMMARY_TAG] == (
        "f1 0.865 vs 0.991 (-0.126); 3 checked, 2 failed; gate failed: f1 dropped 0.1257 > "
        "max_drop 0.01; recall 0.7789 < threshold 0.9"
    )
    assert json.loads(tags[CRITERIA_TAG]) == [
        {"metric": "f1", "threshold": 0.8, "max_drop": 0.01},
        {"metric": "recall", "threshold": 0.9},
    ]
    first = promotion_tags(compare(None, cand, gates), gates, "champion", None)
    assert first[BASELINE_TAG] == "none"
    assert "no version held @champion: absolute thresholds only" in first[SUMMARY_TAG]


def test_summary_is_one_short_line(reports: dict[str, Report]) -> None:
    base, cand = (ScoredRun.from_report(reports[k]) for k in ("improved", "baseline"))
    failed = compare(base, cand, [{"metric": "field_f1/*", "max_drop": 0.0}])
    text = summary(failed)
    assert len(text) <= SUMMARY_LIMIT and "\n" not in text and text.endswith("…")
    assert len(json.loads(criteria([Gate(metric="field_f1/*", max_drop=0.0)]))) == 1


def test_bad_input_fails_before_any_network_call() -> None:
    nowhere = "http://127.0.0.1:1"  # nothing listens: a network call would be a TrackingError
    with pytest.raises(InputError, match="bad reference 'runs:/x'"):
        compare_refs(RUN_A, "runs:/x", tracking_uri=nowhere)
    with pytest.raises(ConfigError):
        compare_refs(RUN_A, RUN_A, tracking_uri=nowhere, gates=[{"metric": "f1"}])
    with pytest.raises(InputError, match="resamples"):
        compare_refs(RUN_A, RUN_A, tracking_uri=nowhere, resamples=0)
    with pytest.raises(InputError, match="at least one gate"):
        promote("inv", 1, tracking_uri=nowhere)
    with pytest.raises(InputError, match="version 'x'"):
        promote("inv", "x", tracking_uri=nowhere, gates=DROP)
    with pytest.raises(InputError, match="--alias 'latest'"):
        promote("inv", 1, alias="latest", tracking_uri=nowhere, gates=DROP)


def test_importing_registry_does_not_import_mlflow() -> None:
    code = "import sys, extract_mlflow.tracking.promote; print('mlflow' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_package_exports_the_gating_api() -> None:
    import importlib

    import extract_mlflow
    from extract_mlflow import gates
    from extract_mlflow.tracking import promote as registry

    compare_module = importlib.import_module("extract_mlflow.comparison")
    expected = {
        "compare": compare_module.compare,
        "Comparison": compare_module.Comparison,
        "ScoredRun": compare_module.ScoredRun,
        "Gate": gates.Gate,
        "load_gates": gates.load_gates,
        "promote": registry.promote,
    }
    for name, value in expected.items():
        assert name in extract_mlflow.__all__ and getattr(extract_mlflow, name) is value
    assert issubclass(IncomparableRunsError, InputError)


@pytest.mark.parametrize(
    "first",
    ["import extract_mlflow.comparison", "from extract_mlflow.comparison import ScoredRun", ""],
)
def test_exported_compare_is_the_function_whatever_was_imported_first(first: str) -> None:
    """`extract_mlflow.compare` is the function, however the package was imported."""
    code = f"{first}\nfrom extract_mlflow import compare\nprint(type(compare).__name__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "function"


# -- a tracking server with evaluations, model versions and prompt versions -----------------------


@pytest.fixture(scope="module")
def world(mlflow_server: MlflowServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield log_world(mlflow_server.uri, tmp_path_factory.mktemp("registry"))


REF_FORMS = [
    ("{baseline}", "baseline", "run"),
    ("runs:/{improved}", "improved", "run"),
    ("runs:/{improved}/eval/summary.md", "improved", "run"),
    ("models:/{model}/1", "baseline", "model"),
    ("models:/{model}/2", "improved", "model"),
    ("models:/{model}@champion", "baseline", "model"),
    ("prompts:/{prompt}/1", "baseline", "prompt"),
    ("prompts:/{prompt}/2", "improved", "prompt"),
    ("prompts:/{prompt}@champion", "improved", "prompt"),
]


@pytest.mark.server
@pytest.mark.parametrize(("template", "which", "kind"), REF_FORMS)
def test_resolve_every_ref_form(world: World, template: str, which: str, kind: str) -> None:
    ref = template.format(**vars(world))
    resolved = resolve_ref(client_for(world.uri), ref)
    assert (resolved.run_id, resolved.kind) == (getattr(world, which), kind)
    assert resolved.description.startswith(ref) or resolved.description == ref
    assert resolved.description.endswith(resolved.run_id) or "ignored" in resolved.description
    if "@" in ref:
        version = "1" if which == "baseline" else "2"
        assert f"→ version {version} →" in resolved.description


@pytest.mark.server
@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("ffffffffffffffffffffffffffffffff", "not found"),
        ("models:/{model}/9", "not found"),
        ("models:/{model}@nobody", "alias nobody not found"),
        ("models:/no-such-model-{prompt}/1", "not found"),
        ("prompts:/{prompt}/9", "not found"),
        ("prompts:/{prompt}@nobody", "alias nobody not found"),
        ("prompts:/{model}/1", "registered as a model"),
        ("models:/{prompt}/1", "not found"),
    ],
)
def test_unknown_refs_are_input_errors_naming_the_ref(
    world: World, template: str, message: str
) -> None:
    ref = template.format(**vars(world))
    with pytest.raises(InputError, match=message) as info:
        fetch_scored_run(client_for(world.uri), ref)
    assert repr(ref) in str(info.value)


@pytest.mark.server
def test_fetch_reads_metrics_signature_and_documents(world: World) -> None:
    import pandas as pd

    run = fetch_scored_run(client_for(world.uri), f"models:/{world.model}/2")
    report = score("pred_improved.jsonl")
    assert run.metrics == report.metrics()
    assert run.signature == report.signature()
    assert run.documents is not None
    logged = report_frame(report, "counts")
    pd.testing.assert_frame_equal(run.documents, logged, check_dtype=False)  # counts read narrow
    for column in logged.columns[logged.dtypes == "int64"]:
        assert run.documents[column].dtype == narrowest(logged[column].to_numpy()).dtype
    assert run.ref == f"models:/{world.model}/2 (run {world.improved})"


@pytest.mark.server
def test_a_run_without_documents_compares_without_intervals(world: World) -> None:
    assert fetch_scored_run(client_for(world.uri), world.bare).documents is None
    result = compare_refs(world.baseline, world.bare, tracking_uri=world.uri, gates=DROP)
    assert result.passed and result.paired is None
    f1 = result.row("f1")
    assert f1 is not None and f1.interval is None
    assert any(f"{world.bare} has no eval/documents.parquet" in n for n in result.notes)


@pytest.mark.server
def test_a_failed_run_is_refused(world: World) -> None:
    with pytest.raises(InputError, match="ended FAILED"):
        compare_refs(world.baseline, world.failed, tracking_uri=world.uri)


@pytest.mark.server
def test_regressed_candidate_fails_its_gate(world: World) -> None:
    result = compare_refs(
        f"models:/{world.model}/2", f"prompts:/{world.prompt}/1", tracking_uri=world.uri,
        gates=[*DROP, {"metric": "precision", "threshold": 0.5}],
    )  # fmt: skip
    assert not result.passed and result.exit_code == 1
    assert [g.metric for g in result.failed_gates] == ["f1"]
    assert result.failed_gates[0].reasons == ["f1 dropped 0.1257 > max_drop 0.01"]
    assert result.paired == 10 and "inv-007" in result.broke
    interval = result.row("f1").interval  # type: ignore[union-attr]
    assert interval is not None and interval.high < 0


@pytest.mark.server
def test_improved_candidate_passes_with_seeded_intervals(world: World) -> None:
    def run() -> Any:
        return compare_refs(
            f"models:/{world.model}@champion", f"prompts:/{world.prompt}@champion",
            tracking_uri=world.uri, gates=DROP, seed=3, resamples=300,
        )  # fmt: skip

    result = run()
    assert result.passed and result.exit_code == 0
    assert result.baseline_ref == f"models:/{world.model}@champion (run {world.baseline})"
    assert result.candidate_ref == f"prompts:/{world.prompt}@champion (run {world.improved})"
    again = run()  # the same numbers; kept as a comparison of its own, after the first
    assert result.resamples == 300 and result == again and result.to_dict()["passed"]
    assert result.logged_as is not None and result.logged_as in again.earlier
    assert any("→ version 2 →" in n for n in result.notes)


@pytest.mark.server
def test_metric_thresholds_from_mlflow(world: World) -> None:
    from mlflow.models import MetricThreshold

    gates = {
        "f1": MetricThreshold(  # type: ignore[no-untyped-call]
            threshold=0.9, min_absolute_change=0.05, greater_is_better=True
        )
    }
    good = compare_refs(world.baseline, world.improved, tracking_uri=world.uri, gates=gates)
    bad = compare_refs(world.improved, world.baseline, tracking_uri=world.uri, gates=gates)
    assert good.passed and not bad.passed
    assert {c.kind for g in bad.failed_gates for c in g.checks if c.passed is False} == {
        "threshold",
        "min_absolute_change",
    }


@pytest.mark.server
def test_signature_mismatch_is_refused_unless_allowed(world: World) -> None:
    with pytest.raises(IncomparableRunsError, match="scored differently") as info:
        compare_refs(world.baseline, world.other, tracking_uri=world.uri)
    assert world.baseline in str(info.value) and world.other in str(info.value)
    result = compare_refs(
        world.baseline, world.other, tracking_uri=world.uri, allow_incomparable=True
    )
    assert not result.comparable
    assert any("compared although" in n for n in result.notes)


@pytest.mark.server
def test_prompt_version_linked_to_several_runs_uses_the_newest_evaluation(world: World) -> None:
    name = f"multi-{uuid.uuid4().hex[:8]}"
    version = register_prompt(world.uri, name, "Extract.")
    uri = f"prompts:/{name}/{version}"
    client = client_for(world.uri)
    with pytest.raises(InputError, match="no evaluation run is linked"):
        resolve_ref(client, uri)
    plain = client.create_run(world.experiment_id)  # not an evaluation: no signature tag
    link_prompt(world.uri, plain.info.run_id, uri)
    with pytest.raises(InputError, match="1 linked run"):
        resolve_ref(client, uri)
    for run_id in (world.baseline, world.improved, world.failed):
        link_prompt(world.uri, run_id, uri)
    resolved = resolve_ref(client, uri)
    assert resolved.run_id == world.improved  # newer than baseline; the FAILED run is skipped
    assert "the newest of 2 evaluation runs linked to it" in resolved.description


# -- promotion ------------------------------------------------------------------------------------


@pytest.mark.server
def test_promote_moves_the_alias_on_pass_and_tags_the_version(world: World) -> None:
    name = fresh_model(world, world.baseline, world.improved)
    client_for(world.uri).set_registered_model_alias(name, "champion", "1")
    result = promote(
        name, 2, gates=[*DROP, {"metric": "f1", "threshold": 0.9}], tracking_uri=world.uri
    )
    assert result.promoted and result.exit_code == 0 and result.previous_version == "1"
    assert aliases(world, name) == {"champion": "2"}
    tags = version_tags(world, name, "2")
    assert tags == dict(result.tags)
    assert tags[VERDICT_TAG] == "passed" and tags[BASELINE_TAG] == "1"
    assert tags[SUMMARY_TAG] == "f1 0.991 vs 0.865 (+0.126); 2 checked"
    assert json.loads(tags[CRITERIA_TAG]) == [
        {"metric": "f1", "max_drop": 0.01},
        {"metric": "f1", "threshold": 0.9},
    ]
    assert json.loads(result.to_json())["tags"] == tags


@pytest.mark.server
def test_promote_keeps_the_alias_on_failure_and_tags_the_version(world: World) -> None:
    name = fresh_model(world, world.improved, world.baseline)
    client_for(world.uri).set_registered_model_alias(name, "champion", "1")
    result = promote(name, "2", gates=DROP, tracking_uri=world.uri)
    assert not result.promoted and result.exit_code == 1
    assert aliases(world, name) == {"champion": "1"}
    tags = version_tags(world, name, "2")
    assert tags[VERDICT_TAG] == "failed" and tags[BASELINE_TAG] == "1"
    assert "f1 dropped 0.1257 > max_drop 0.01" in tags[SUMMARY_TAG]
    assert "@champion stays on version 1" in result.to_table()


@pytest.mark.server
def test_promote_without_holder_applies_only_thresholds(world: World) -> None:
    name = fresh_model(world, world.baseline)
    failed = promote(name, 1, gates=[{"metric": "f1", "threshold": 0.9}], tracking_uri=world.uri)
    assert not failed.promoted and aliases(world, name) == {}
    assert version_tags(world, name, "1")[VERDICT_TAG] == "failed"
    gates = [{"metric": "f1", "threshold": 0.8, "max_drop": 0.0}]
    passed = promote(name, 1, alias="prod", gates=gates, tracking_uri=world.uri)
    assert passed.promoted and passed.previous_version is None
    assert aliases(world, name) == {"prod": "1"}
    tags = version_tags(world, name, "1")
    assert tags[VERDICT_TAG] == "passed" and tags[BASELINE_TAG] == "none"
    assert tags[ALIAS_TAG] == "prod"
    assert [g.skipped for g in passed.comparison.gates] == [["max_drop skipped: no baseline run"]]


@pytest.mark.server
def test_promote_the_holder_again_judges_it_on_thresholds(world: World) -> None:
    name = fresh_model(world, world.improved)
    client_for(world.uri).set_registered_model_alias(name, "champion", "1")
    result = promote(name, 1, gates=[{"metric": "f1", "threshold": 0.9}], tracking_uri=world.uri)
    assert result.promoted and not result.comparison.has_baseline
    assert aliases(world, name) == {"champion": "1"}
    assert "already holds the alias" in " ".join(result.comparison.notes)


@pytest.mark.server
def test_promote_accepts_metric_thresholds(world: World) -> None:
    from mlflow.models import MetricThreshold

    name = fresh_model(world, world.baseline, world.improved)
    client_for(world.uri).set_registered_model_alias(name, "champion", "1")
    gates = {
        "f1": MetricThreshold(  # type: ignore[no-untyped-call]
            min_relative_change=0.5, greater_is_better=True
        )
    }
    result = promote(name, 2, gates=gates, tracking_uri=world.uri)
    assert not result.promoted and aliases(world, name) == {"champion": "1"}
    assert json.loads(version_tags(world, name, "2")[CRITERIA_TAG]) == [
        {"metric": "f1", "min_relative_change": 0.5, "higher_is_better": True}
    ]


@pytest.mark.server
def test_promote_refuses_incomparable_runs_and_writes_nothing(world: World) -> None:
    name = fresh_model(world, world.other, world.improved)
    client_for(world.uri).set_registered_model_alias(name, "champion", "1")
    with pytest.raises(IncomparableRunsError):
        promote(name, 2, gates=DROP, tracking_uri=world.uri)
    assert version_tags(world, name, "2") == {} and aliases(world, name) == {"champion": "1"}
    result = promote(name, 2, gates=DROP, tracking_uri=world.uri, allow_incomparable=True)
    assert result.promoted
    assert "scored differently" in version_tags(world, name, "2")[SUMMARY_TAG]


@pytest.mark.server
def test_promote_unknown_model_or_version_is_input_error(world: World) -> None:
    name = fresh_model(world, world.baseline)
    with pytest.raises(InputError, match="not found"):
        promote(f"{name}-missing", 1, gates=DROP, tracking_uri=world.uri)
    with pytest.raises(InputError, match=f"models:/{name}/5"):
        promote(name, 5, gates=DROP, tracking_uri=world.uri)


@pytest.mark.server
def test_promote_a_prompt_version(world: World) -> None:
    name = f"promo-prompt-{uuid.uuid4().hex[:8]}"
    for run_id in (world.baseline, world.improved):
        version = register_prompt(world.uri, name, f"Extract ({run_id[:6]}).")
        link_prompt(world.uri, run_id, f"prompts:/{name}/{version}")
    client = client_for(world.uri)
    client.set_prompt_alias(name, "champion", 1)
    passed = promote(f"prompts:/{name}", 2, gates=DROP, tracking_uri=world.uri)
    assert passed.promoted and passed.kind == "prompt"
    assert client.get_prompt_version_by_alias(name, "champion").version == 2
    tags = client.get_prompt_version(name, 2).tags
    assert tags[VERDICT_TAG] == "passed" and tags[BASELINE_TAG] == "1"
    failed = promote(f"prompts:/{name}", 1, gates=DROP, tracking_uri=world.uri)
    assert not failed.promoted
    assert client.get_prompt_version_by_alias(name, "champion").version == 2
    assert client.get_prompt_version(name, 1).tags[VERDICT_TAG] == "failed"
    assert passed.to_markdown().startswith(f"## ✅ promoted prompts:/{name}/2 to @champion")
