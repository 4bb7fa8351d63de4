"""MLflow tracking: pure helpers, then real stores (embedded SQLite and a real `mlflow server`),
every logged value read back through MlflowClient and compared with the report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.mlflow_server import MlflowServer, closed_port_uri
from support.runs import artifact_paths, assert_run_holds_report

from extract_mlflow import evaluate
from extract_mlflow.errors import InputError, TrackingError
from extract_mlflow.report import Report
from extract_mlflow.tracking.client import (
    FAST_HTTP_ENV,
    check_reachable,
    env_defaults,
    using_tracking_uri,
)
from extract_mlflow.tracking.log import log_report
from extract_mlflow.tracking.payload import (
    MAX_ENTITIES_PER_CALL,
    MAX_METRICS_PER_CALL,
    MAX_PARAM_LENGTH,
    MAX_PARAMS_TAGS_PER_CALL,
    MAX_TAG_LENGTH,
    PARENT_RUN_TAG,
    RUN_TYPE_EVALUATION,
    RUN_TYPE_TAG,
    SIGNATURE_TAG,
    fit,
    parse_key_values,
    plan_batches,
    prompt_file_names,
    report_params,
    report_tags,
    validate_prompt_uris,
)
from extract_mlflow.tracking.runs import LoggedRun

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "invoices"
ROOT = EXAMPLE.parents[1]
HANG_GUARD = 60.0
"""Seconds after which a call that must fail at once counts as hung (MLflow's own retries
against a dead server take minutes): a guard against a hang, never a speed bound."""


@pytest.fixture(scope="module")
def baseline() -> Report:
    return evaluate(
        EXAMPLE / "gold.jsonl", EXAMPLE / "pred_baseline.jsonl", EXAMPLE / "config.toml"
    )


@pytest.fixture(scope="module")
def improved() -> Report:
    return evaluate(
        EXAMPLE / "gold.jsonl", EXAMPLE / "pred_improved.jsonl", EXAMPLE / "config.toml"
    )


def wide_report(n_fields: int = 200, n_docs: int = 3) -> Report:
    """A report with `n_fields` fields (3 metrics each) for the batching checks."""
    gold = [{"id": f"d{d}", **{f"f{i:03d}": i + d for i in range(n_fields)}} for d in range(n_docs)]
    pred = [{**g, "f000": -1} for g in gold]
    return evaluate(gold, pred)


# -- pure helpers ----------------------------------------------------------------------------
def test_limits_match_installed_mlflow() -> None:
    from mlflow.utils import validation as v

    assert MAX_METRICS_PER_CALL == v.MAX_METRICS_PER_BATCH
    assert MAX_PARAMS_TAGS_PER_CALL == v.MAX_PARAMS_TAGS_PER_BATCH
    assert MAX_ENTITIES_PER_CALL == v.MAX_ENTITIES_PER_BATCH
    assert MAX_PARAM_LENGTH == v.MAX_PARAM_VAL_LENGTH
    assert MAX_TAG_LENGTH == v.MAX_TAG_VAL_LENGTH


def entities(prefix: str, n: int, value: Any = 1.0) -> list[SimpleNamespace]:
    return [SimpleNamespace(key=f"{prefix}{i}", value=value) for i in range(n)]


def test_200_fields_fit_one_batch() -> None:
    report = wide_report(200)
    metrics = report.metrics()
    assert len(metrics) >= 600
    batches = plan_batches(
        entities("m", len(metrics)),
        entities("p", len(report_params(report))),
        entities("t", len(report_tags(report))),
    )
    assert len(batches) == 1


@settings(max_examples=60, deadline=None)
@given(
    n_metrics=st.integers(0, 3500),
    n_params=st.integers(0, 250),
    n_tags=st.integers(0, 250),
    big=st.booleans(),
)
def test_batches_within_limits_and_complete(
    n_metrics: int, n_params: int, n_tags: int, big: bool
) -> None:
    value = "x" * (5000 if big else 10)
    metrics, params, tags = (
        entities("m", n_metrics),
        entities("p", n_params, value),
        entities("t", n_tags, value),
    )
    batches = plan_batches(metrics, params, tags)
    for b in batches:
        assert 0 < len(b) <= MAX_ENTITIES_PER_CALL
        assert len(b.metrics) <= MAX_METRICS_PER_CALL
        assert len(b.params) <= MAX_PARAMS_TAGS_PER_CALL and len(b.tags) <= MAX_PARAMS_TAGS_PER_CALL
        assert sum(len(e.key) + len(str(e.value)) for e in [*b.metrics, *b.params, *b.tags]) < 1e6
    assert [e for b in batches for e in b.metrics] == metrics
    assert [e for b in batches for e in b.params] == params
    assert [e for b in batches for e in b.tags] == tags
    if not big:  # small values: only the count limits bind, so the packing is minimal
        total = n_metrics + n_params + n_tags
        least = max(-(-total // 1000), -(-n_params // 100), -(-n_tags // 100), 1 if total else 0)
        assert len(batches) == least


def test_params_and_tags(baseline: Report) -> None:
    params = report_params(baseline, {"model": "gpt", "id_key": "user-value"})
    assert params["config_digest"] == baseline.config.digest()
    assert params["gold_digest"] == baseline.gold_digest
    assert params["pred_digest"] == baseline.pred_digest
    assert params["scorer_version"] == baseline.scorer_version
    assert params["id_key"] == "id"  # ours win over a user param of the same name
    assert params["model"] == "gpt"
    tags = report_tags(baseline, {"team": "ml"})
    assert tags[SIGNATURE_TAG] == baseline.signature()
    assert tags[RUN_TYPE_TAG] == RUN_TYPE_EVALUATION
    assert tags["team"] == "ml"
    assert len(report_params(baseline, {"long": "x" * 10_000})["long"]) == MAX_PARAM_LENGTH


def test_fit() -> None:
    assert fit("abc", 5) == "abc"
    cut = fit("abcdefgh", 5)
    assert len(cut) == 5 and cut.endswith("…")


def test_parse_key_values() -> None:
    assert parse_key_values(["a=1", "b=x=y", "c="]) == {"a": "1", "b": "x=y", "c": ""}
    with pytest.raises(InputError, match="--tag 'nokey'"):
        parse_key_values(["nokey"], "--tag")
    with pytest.raises(InputError):
        parse_key_values(["=v"])


def test_prompt_uris() -> None:
    good = ["prompts:/extract/3", "prompts:/extract@production"]
    assert validate_prompt_uris(good) == good
    for bad in ["extract/3", "prompts:/extract", "prompts:/", "runs:/abc/x"]:
        with pytest.raises(InputError, match="prompts:/NAME/VERSION"):
            validate_prompt_uris([bad])


def test_prompt_file_names_never_clash() -> None:
    names = [n for _, n in prompt_file_names(["a/p.txt", "b/p.txt", "c/p.txt", "q.md"])]
    assert names == ["p.txt", "p-2.txt", "p-3.txt", "q.md"]


def test_logged_run_url() -> None:
    http = LoggedRun("r1", "7", "http://h:5000/", "mlflow-artifacts:/7/r1/artifacts")
    assert http.url == "http://h:5000/#/experiments/7/runs/r1"
    assert LoggedRun("r1", "7", "sqlite:///x.db", "/x").url is None
    assert http.to_dict()["run_id"] == "r1" and "model_version" not in http.to_dict()


def test_env_defaults_restores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "7")
    monkeypatch.delenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", raising=False)
    with env_defaults(FAST_HTTP_ENV):
        assert os.environ["MLFLOW_HTTP_REQUEST_TIMEOUT"] == "7"  # the user's setting wins
        assert (
            os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"]
            == FAST_HTTP_ENV["MLFLOW_HTTP_REQUEST_MAX_RETRIES"]
        )
    assert "MLFLOW_HTTP_REQUEST_MAX_RETRIES" not in os.environ
    assert os.environ["MLFLOW_HTTP_REQUEST_TIMEOUT"] == "7"


def test_using_tracking_uri_restores(mlflow_env: Path) -> None:
    import mlflow

    mlflow.set_tracking_uri("sqlite:///outer.db")
    with using_tracking_uri("sqlite:///inner.db"):
        assert mlflow.get_tracking_uri() == "sqlite:///inner.db"
    assert mlflow.get_tracking_uri() == "sqlite:///outer.db"
    assert os.environ["MLFLOW_TRACKING_URI"] == "sqlite:///outer.db"


def test_unreachable_uri_fails_fast() -> None:
    uri = closed_port_uri()
    started = time.monotonic()
    with pytest.raises(TrackingError) as err:
        check_reachable(uri, timeout=2)
    assert time.monotonic() - started < HANG_GUARD  # one probe, no retries for minutes
    assert uri in str(err.value) and "\n" not in str(err.value)
    check_reachable("sqlite:///nowhere.db")  # local stores are not probed


# -- the embedded local store ------------------------------------------------------------------
@pytest.mark.slow
def test_log_report_local_store_roundtrip(
    mlflow_env: Path, local_store: str, baseline: Report, tmp_path: Path
) -> None:
    from mlflow import MlflowClient

    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Extract the invoice as JSON.\n", encoding="utf-8")
    logged = log_report(
        baseline,
        tracking_uri=local_store,
        experiment="tracking-roundtrip",
        run_name="baseline",
        prompts=[prompt],
        params={"model": "m-1"},
        tags={"team": "ml"},
        register="roundtrip-model",
    )
    client = MlflowClient(local_store)
    run = client.get_run(logged.run_id)
    assert run.info.status == "FINISHED" and run.info.run_name == "baseline"
    assert client.get_experiment(logged.experiment_id).name == "tracking-roundtrip"
    assert_run_holds_report(
        client,
        logged.run_id,
        baseline,
        tmp_path / "dl",
        prompts={"prompt.txt": "Extract the invoice as JSON.\n"},
        params={"model": "m-1"},
        tags={"team": "ml"},
    )
    assert logged.model_version is not None
    mv = client.get_model_version("roundtrip-model", logged.model_version)
    assert mv.run_id == logged.run_id and mv.source is not None and mv.source.endswith("/eval")
    assert mv.tags[SIGNATURE_TAG] == baseline.signature()


@pytest.mark.slow
def test_default_store_is_the_working_directory(mlflow_env: Path, baseline: Report) -> None:
    from mlflow import MlflowClient

    logged = log_report(baseline)  # no URI anywhere: MLflow's default local store
    assert logged.tracking_uri.startswith("sqlite:///")
    assert (mlflow_env / "mlflow.db").is_file()
    run = MlflowClient(logged.tracking_uri).get_run(logged.run_id)
    assert run.data.metrics == baseline.metrics()
    assert logged.experiment_id == "0"


@pytest.mark.slow
def test_env_uri_is_used(
    mlflow_env: Path, local_store: str, baseline: Report, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MLFLOW_TRACKING_URI", local_store)
    assert log_report(baseline, experiment="env-uri").tracking_uri == local_store


def test_inside_a_run_the_caller_started(
    mlflow_env: Path, local_store: str, baseline: Report
) -> None:
    import mlflow

    mlflow.set_tracking_uri(local_store)
    mlflow.set_experiment("caller-run")
    with mlflow.start_run(run_name="mine") as run:
        mlflow.log_param("lr", "0.1")
        logged = log_report(baseline, experiment="ignored")
        assert logged.run_id == run.info.run_id
        assert mlflow.get_run(run.info.run_id).info.status == "RUNNING"  # not ours to end
    finished = mlflow.get_run(run.info.run_id)
    assert finished.info.status == "FINISHED"
    assert finished.data.params["lr"] == "0.1"
    assert finished.data.metrics == baseline.metrics()
    assert finished.data.tags[RUN_TYPE_TAG] == RUN_TYPE_EVALUATION


def test_child_run_of_a_parent(mlflow_env: Path, local_store: str, baseline: Report) -> None:
    from mlflow import MlflowClient

    parent = log_report(baseline, tracking_uri=local_store, experiment="parents")
    child = log_report(baseline, tracking_uri=local_store, parent_run_id=parent.run_id)
    assert child.experiment_id == parent.experiment_id
    tags = MlflowClient(local_store).get_run(child.run_id).data.tags
    assert tags[PARENT_RUN_TAG] == parent.run_id


def runs_of(uri: str, experiment: str) -> list[Any]:
    from mlflow import MlflowClient

    client = MlflowClient(uri)
    exp = client.get_experiment_by_name(experiment)
    return [] if exp is None else client.search_runs([exp.experiment_id])


def test_failure_midway_leaves_run_failed(
    mlflow_env: Path, local_store: str, baseline: Report, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlflow import MlflowClient
    from mlflow.exceptions import MlflowException

    def broken(*args: Any, **kwargs: Any) -> None:
        raise MlflowException("artifact store refused the upload\nsecond line")

    monkeypatch.setattr(MlflowClient, "log_artifacts", broken)
    with pytest.raises(TrackingError) as err:
        log_report(baseline, tracking_uri=local_store, experiment="fails-midway")
    message = str(err.value)
    assert "FAILED" in message and "refused the upload" in message and "\n" not in message
    (run,) = runs_of(local_store, "fails-midway")
    assert run.info.status == "FAILED"
    assert run.info.run_id in message


def test_keyboard_interrupt_leaves_run_killed(
    mlflow_env: Path, local_store: str, baseline: Report, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlflow import MlflowClient

    def interrupted(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(MlflowClient, "log_table", interrupted)
    with pytest.raises(KeyboardInterrupt):
        log_report(baseline, tracking_uri=local_store, experiment="interrupted")
    (run,) = runs_of(local_store, "interrupted")
    assert run.info.status == "KILLED"


def test_bad_prompt_file_starts_no_run(
    mlflow_env: Path, local_store: str, baseline: Report
) -> None:
    with pytest.raises(InputError, match="prompt file not found"):
        log_report(baseline, tracking_uri=local_store, experiment="no-run", prompts=["nope.txt"])
    with pytest.raises(InputError, match="prompts:/NAME/VERSION"):
        log_report(baseline, tracking_uri=local_store, experiment="no-run", prompt_uris=["x"])
    with pytest.raises(InputError, match=r"--param 'x/\.\./y'"):
        log_report(baseline, tracking_uri=local_store, experiment="no-run", params={"x/../y": 1})
    with pytest.raises(InputError, match="--tag"):
        log_report(baseline, tracking_uri=local_store, experiment="no-run", tags={"a" * 300: 1})
    assert runs_of(local_store, "no-run") == []


def test_registered_prompt_is_linked(mlflow_env: Path, local_store: str, baseline: Report) -> None:
    import mlflow
    from mlflow import MlflowClient

    with using_tracking_uri(local_store):
        version = mlflow.genai.register_prompt(name="invoice-prompt", template="Extract {{doc}}")
    uri = f"prompts:/invoice-prompt/{version.version}"
    logged = log_report(baseline, tracking_uri=local_store, experiment="linked", prompt_uris=[uri])
    linked = json.loads(
        MlflowClient(local_store).get_run(logged.run_id).data.tags["mlflow.linkedPrompts"]
    )
    assert linked == [{"name": "invoice-prompt", "version": str(version.version)}]


def count_store_batches(monkeypatch: pytest.MonkeyPatch, store_cls: Any) -> list[int]:
    """Record the number of metrics in each store-level log_batch call (one per request)."""
    calls: list[int] = []
    original = store_cls.log_batch

    def spy(self: Any, run_id: str, metrics: Any, params: Any, tags: Any) -> Any:
        calls.append(len(metrics))
        return original(self, run_id, metrics, params, tags)

    monkeypatch.setattr(store_cls, "log_batch", spy)
    return calls


def test_200_fields_in_at_most_two_calls_local(
    mlflow_env: Path, local_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlflow import MlflowClient
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    report = wide_report(200)
    calls = count_store_batches(monkeypatch, SqlAlchemyStore)
    logged = log_report(report, tracking_uri=local_store, experiment="wide")
    assert len(calls) <= 2 and sum(calls) == len(report.metrics())
    assert MlflowClient(local_store).get_run(logged.run_id).data.metrics == report.metrics()


# -- a real mlflow server -------------------------------------------------------------------
@pytest.mark.server
def test_log_report_server_roundtrip(
    mlflow_env: Path, mlflow_server: MlflowServer, baseline: Report, tmp_path: Path
) -> None:
    from mlflow import MlflowClient

    prompt = tmp_path / "prompt.md"
    prompt.write_text("# Prompt\nExtract.\n", encoding="utf-8")
    logged = log_report(
        baseline,
        tracking_uri=mlflow_server.uri,
        experiment="server-roundtrip",
        run_name="baseline",
        prompts=[prompt],
        params={"model": "m-2"},
        tags={"stage": "dev"},
        register="server-model",
    )
    assert logged.artifact_uri.startswith("mlflow-artifacts:")
    assert logged.url and logged.url.startswith(mlflow_server.uri)
    client = MlflowClient(mlflow_server.uri)
    assert client.get_run(logged.run_id).info.status == "FINISHED"
    assert_run_holds_report(
        client,
        logged.run_id,
        baseline,
        tmp_path / "dl",
        prompts={"prompt.md": "# Prompt\nExtract.\n"},
        params={"model": "m-2"},
        tags={"stage": "dev"},
    )
    assert logged.model_version is not None
    mv = client.get_model_version("server-model", logged.model_version)
    assert mv.run_id == logged.run_id and mv.source == logged.artifact_uri + "/eval"
    client.set_registered_model_alias("server-model", "candidate", mv.version)
    assert client.get_model_version_by_alias("server-model", "candidate").run_id == logged.run_id


@pytest.mark.server
def test_200_fields_in_at_most_two_requests_server(
    mlflow_env: Path, mlflow_server: MlflowServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlflow import MlflowClient
    from mlflow.store.tracking.rest_store import RestStore

    report = wide_report(200)
    calls = count_store_batches(monkeypatch, RestStore)
    logged = log_report(report, tracking_uri=mlflow_server.uri, experiment="wide")
    assert len(calls) <= 2 and sum(calls) == len(report.metrics())
    assert MlflowClient(mlflow_server.uri).get_run(logged.run_id).data.metrics == report.metrics()


@pytest.mark.server
def test_failure_on_server_leaves_run_failed(
    mlflow_env: Path, mlflow_server: MlflowServer, baseline: Report, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlflow import MlflowClient

    def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(MlflowClient, "log_table", broken)
    with pytest.raises(TrackingError, match=r"FAILED.*disk full"):
        log_report(baseline, tracking_uri=mlflow_server.uri, experiment="server-fails")
    (run,) = runs_of(mlflow_server.uri, "server-fails")
    assert run.info.status == "FAILED"


@pytest.mark.slow
@pytest.mark.server
def test_killed_server_fails_fast_with_one_line(
    mlflow_env: Path, start_server: Any, baseline: Report, monkeypatch: pytest.MonkeyPatch
) -> None:
    from extract_mlflow.tracking.runs import Tracker

    server = start_server()
    original = Tracker.log_batches

    def die_first(self: Tracker, *args: Any, **kwargs: Any) -> int:
        server.stop()  # the server dies after the run was created
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Tracker, "log_batches", die_first)
    started = time.monotonic()
    with pytest.raises(TrackingError) as err:
        log_report(baseline, tracking_uri=server.uri, experiment="dies")
    assert time.monotonic() - started < HANG_GUARD  # no retries for minutes
    message = str(err.value)
    assert "\n" not in message and len(message) < 300
    assert "left unfinished (RUNNING: it could not be marked FAILED): server unreachable" in message
    assert not server.live_members()

    monkeypatch.setattr(Tracker, "log_batches", original)
    started = time.monotonic()
    with pytest.raises(TrackingError) as err:  # now dead before logging: one probe, one line
        log_report(baseline, tracking_uri=server.uri, experiment="gone")
    assert time.monotonic() - started < HANG_GUARD
    message = str(err.value)
    assert server.uri in message and "unreachable" in message and "\n" not in message


# -- demo and MLproject -------------------------------------------------------------------------
@pytest.mark.slow
def test_demo_logs_two_registered_runs(mlflow_env: Path, tmp_path: Path) -> None:
    from mlflow import MlflowClient

    from extract_mlflow.tracking.demo import run_demo, scoreboard

    uri = f"sqlite:///{tmp_path / 'demo.db'}"
    result = run_demo(tracking_uri=uri)
    assert [r.label for r in result.runs] == ["baseline", "improved"]
    assert [r.run.model_version for r in result.runs] == ["1", "2"]
    base, better = result.runs
    assert better.f1 is not None and base.f1 is not None and better.f1 > base.f1
    client = MlflowClient(uri)
    for r in result.runs:
        run = client.get_run(r.run.run_id)
        assert run.info.status == "FINISHED"
        assert any(p.startswith("eval/prompts/") for p in artifact_paths(client, r.run.run_id))
        assert r.prompt_uri and "mlflow.linkedPrompts" in run.data.tags
    text = scoreboard(result)
    assert "baseline" in text and "improved" in text
    assert f"mlflow ui --backend-store-uri {uri}" in text


def test_demo_example_dir_error(tmp_path: Path) -> None:
    from extract_mlflow.io.examples import find_example_dir

    with pytest.raises(InputError, match="invoice example not found"):
        find_example_dir(tmp_path)
    assert find_example_dir() == EXAMPLE


def test_mlproject_entry_points() -> None:
    from mlflow.projects._project_spec import load_project

    project = load_project(str(ROOT))  # type: ignore[no-untyped-call]
    points = project._entry_points
    assert set(points) >= {"score", "compare", "demo"}
    assert points["score"].parameters["gold"].type == "path"
    assert {"baseline", "candidate"} <= set(points["compare"].parameters)
    assert points["demo"].command.startswith("extract-mlflow demo")
    assert (ROOT / "conda.yaml").is_file()


@pytest.mark.slow
def test_mlflow_run_demo_entry_point(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env["MLFLOW_TRACKING_URI"] = f"sqlite:///{tmp_path / 'project.db'}"
    mlflow_bin = Path(sys.executable).with_name("mlflow")
    # as in an activated environment: the project's command `extract-mlflow` is on PATH
    env["PATH"] = os.pathsep.join([str(mlflow_bin.parent), env.get("PATH", "")])
    done = subprocess.run(
        [str(mlflow_bin), "run", str(ROOT), "-e", "demo", "--env-manager", "local"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "baseline" in done.stdout and "improved" in done.stdout
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=env["MLFLOW_TRACKING_URI"])
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()])
    by_name = {r.info.run_name: r for r in runs}
    assert {"demo-baseline", "demo-improved"} <= set(by_name)
    assert all(r.info.status == "FINISHED" for r in runs)
    assert by_name["demo-improved"].data.metrics["f1"] > by_name["demo-baseline"].data.metrics["f1"]


def test_modules_do_not_import_mlflow() -> None:
    """`import mlflow` costs seconds: our modules import it only inside functions."""
    code = (
        "import sys\n"
        "import extract_mlflow.tracking.client, extract_mlflow.tracking.iterations\n"
        "import extract_mlflow.views.feedback\n"
        "import extract_mlflow.tracking.evaluator, extract_mlflow.tracking.demo\n"
        "import extract_mlflow.cli\n"
        "print(sorted(m for m in ('mlflow', 'matplotlib') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
