"""Tracking under faults and hostile input, against real MLflow servers: forged tags and params,
credentials in the URI (``mlflow server --app-name basic-auth``), servers that hang or freeze
mid-logging, processes killed mid-logging, unknown prompt references, malformed URIs, endless
input streams. Each failure is one line and exit 2, within seconds, and never shows a secret.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.mlflow_server import MlflowServer, assert_group_gone, free_port
from support.servers import freezing_proxy, hanging_server, start_auth_server, uri_of

from extract_mlflow import evaluate
from extract_mlflow.cli import main
from extract_mlflow.errors import InputError
from extract_mlflow.tracking.client import one_line
from extract_mlflow.tracking.log import log_report
from extract_mlflow.tracking.payload import SIGNATURE_TAG
from extract_mlflow.tracking.runs import LoggedRun

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "invoices"
GOLD = str(EXAMPLE / "gold.jsonl")
BASELINE = str(EXAMPLE / "pred_baseline.jsonl")
CONFIG = str(EXAMPLE / "config.toml")
PROCESS_TIMEOUT = 60  # a hang fails the test instead of stalling the suite
RUN_A, RUN_B = "a" * 32, "b" * 32  # well-formed run ids that exist nowhere
ADMIN, PASSWORD = "admin", "Pw-7c1f9e2b-do-not-print"


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def run_cli(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`extract-mlflow ARGS` in a real process (killed when it outlives PROCESS_TIMEOUT)."""
    full_env = {**os.environ, **env}
    full_env.pop("MLFLOW_TRACKING_URI", None)
    return subprocess.run(
        [sys.executable, "-m", "extract_mlflow", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=PROCESS_TIMEOUT,
    )


def error_line(stderr: str, *must: str) -> str:
    """The one `error:` line of a failed command (progress lines aside)."""
    errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, stderr
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    for text in must:
        assert text in errors[0], (text, errors[0])
    return errors[0]


def client_for(uri: str) -> Any:
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=uri)


def runs_of(uri: str, experiment: str) -> list[Any]:
    client = client_for(uri)
    exp = client.get_experiment_by_name(experiment)
    return [] if exp is None else list(client.search_runs([exp.experiment_id]))


# -- item 3: the signature covers every input, and cannot be forged ------------------------------
PAGE_CONFIG = {
    "layout": {
        "profiles": {
            "short": {"required": ["Summary"], "min_words": 1},
            "long": {"required": ["Summary", "Table"], "min_words": 1},
        }
    }
}
PAGE_GOLD = [{"id": "a", "title": "Alpha", "rows": [{"k": "1"}]}]
PAGE_PRED = [{"id": "a", "title": "Alpha", "output": "Summary\nAlpha is here.\n"}]


def page_report(**changes: Any) -> Any:
    kwargs: dict[str, Any] = {
        "gold": PAGE_GOLD,
        "pred": PAGE_PRED,
        "config": PAGE_CONFIG,
        "profile": "short",
        "sources": {"a": "Alpha is here."},
        "approvals": {("a", "title"): None},
    }
    kwargs.update(changes)
    return evaluate(**kwargs)


def test_signature_changes_with_every_input_that_changes_a_number() -> None:
    base = page_report()
    assert page_report().signature() == base.signature()  # scored identically: comparable
    variants = {
        "gold": page_report(gold=[{**PAGE_GOLD[0], "title": "Beta"}]),
        "config": page_report(config={**PAGE_CONFIG, "match_threshold": 0.5}),
        "scorer version": dataclasses.replace(base, scorer_version="0.0.0-other"),
        "sources": page_report(sources={"a": "Alpha is somewhere else."}),
        "approvals": page_report(approvals={("a", "rows[].k"): None}),
        "no approvals": page_report(approvals=None),
        "layout profile": page_report(profile="long"),
        "text key": page_report(
            pred=[{"id": "a", "title": "Alpha", "page": PAGE_PRED[0]["output"]}],
            text_key="page",
        ),
    }
    signatures = {name: r.signature() for name, r in variants.items()}
    for name, signature in signatures.items():
        assert signature != base.signature(), name
    assert len(set(signatures.values())) == len(signatures)
    assert base.signature().startswith("extract_mlflow:")  # still readable: named parts
    assert "|profile:short|" in base.signature() and "|sources:" in base.signature()


def test_sources_digest_is_the_texts_used_whatever_their_form(tmp_path: Path) -> None:
    folder = tmp_path / "sources"
    folder.mkdir()
    (folder / "a.txt").write_text("Alpha is here.", encoding="utf-8")
    (folder / "unused.txt").write_text("not a gold document", encoding="utf-8")
    jsonl = tmp_path / "sources.jsonl"
    jsonl.write_text(json.dumps({"id": "a", "text": "Alpha is here."}) + "\n", encoding="utf-8")
    by_folder = page_report(sources=folder).sources_digest
    assert by_folder == page_report(sources=jsonl).sources_digest
    gold = [{**PAGE_GOLD[0], "source": "Alpha is here."}]
    assert page_report(gold=gold, sources=None, source_key="source").sources_digest == by_folder
    (folder / "a.txt").write_text("Alpha is elsewhere.", encoding="utf-8")
    assert page_report(sources=folder).sources_digest != by_folder


def test_signature_without_optional_inputs_keeps_its_format() -> None:
    r = evaluate(GOLD, BASELINE, CONFIG)
    gold = str(r.gold_digest)[:16]
    assert (
        r.signature() == f"extract_mlflow:{r.scorer_version}|config:{r.config.digest()}|gold:{gold}"
    )


@pytest.mark.parametrize(
    "option",
    [
        ["--tag", f"{SIGNATURE_TAG}=forged"],
        ["--tag", "mlflow.runType=forged"],
        ["--tag", "mlflow.note.content=forged"],
        ["--tag", "mlflow.parentRunId=forged"],
        ["--tag", "Extract_MLflow.anything=forged"],
        ["--param", "gold_digest=forged"],
        ["--param", "scorer_version=forged"],
    ],
)
@pytest.mark.server
def test_forged_tags_and_params_are_refused_before_any_run(
    mlflow_env: Path, mlflow_server: MlflowServer, option: list[str]
) -> None:
    experiment = f"forged-{option[1].split('=')[0]}"
    code, out, err = cli(
        "score", GOLD, BASELINE, "--config", CONFIG, "--tracking-uri", mlflow_server.uri,
        "--experiment", experiment, *option,
    )  # fmt: skip
    assert code == 2 and out == ""
    error_line(err, repr(option[1].split("=")[0]))
    assert runs_of(mlflow_server.uri, experiment) == []


def test_library_tags_cannot_replace_ours(mlflow_env: Path, tmp_path: Path) -> None:
    report = evaluate(GOLD, BASELINE, CONFIG)
    with pytest.raises(InputError, match=r"extract_mlflow\.signature"):
        log_report(
            report,
            tracking_uri=f"sqlite:///{tmp_path / 'lib.db'}",
            tags={SIGNATURE_TAG: "forged"},
        )


# -- item 7: credentials ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MlflowServer]:
    """``mlflow server --app-name basic-auth`` whose admin is ADMIN/PASSWORD."""
    server = start_auth_server(tmp_path_factory.mktemp("auth-server"), ADMIN, PASSWORD)
    try:
        yield server
    finally:
        server.stop()
        assert_group_gone(server)


def with_userinfo(uri: str, user: str, password: str) -> str:
    return uri.replace("http://", f"http://{user}:{password}@", 1)


@pytest.mark.server
@pytest.mark.slow
def test_credentials_in_the_uri_log_and_are_never_shown(
    auth_server: MlflowServer, tmp_path: Path
) -> None:
    uri = with_userinfo(auth_server.uri, ADMIN, PASSWORD)
    proc = run_cli(
        ["score", GOLD, BASELINE, "--config", CONFIG, "--tracking-uri", uri,
         "--experiment", "auth", "--register", "auth-model", "--format", "json"],
        tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert PASSWORD not in proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    env = {"MLFLOW_TRACKING_USERNAME": ADMIN, "MLFLOW_TRACKING_PASSWORD": PASSWORD}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        client = client_for(auth_server.uri)
        run = client.get_run(data["run_id"])
        assert run.info.status == "FINISHED"
        version = client.get_model_version("auth-model", data["model_version"])
        assert version.run_id == run.info.run_id
        logged = {**run.data.params, **run.data.tags}
        local = Path(client.download_artifacts(run.info.run_id, "eval", str(tmp_path / "dl")))
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    assert not [k for k, v in logged.items() if PASSWORD in v]
    for path in local.rglob("*"):
        if path.is_file():
            assert PASSWORD.encode() not in path.read_bytes(), path


@pytest.mark.server
@pytest.mark.slow
def test_wrong_password_is_one_line_without_the_password(
    auth_server: MlflowServer, tmp_path: Path
) -> None:
    wrong = "Wrong-5d0e-password-not-shown"
    proc = run_cli(
        ["score", GOLD, BASELINE, "--tracking-uri", with_userinfo(auth_server.uri, ADMIN, wrong),
         "--experiment", "auth-wrong"],
        tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    error_line(proc.stderr, auth_server.uri, "refused the credentials")
    assert wrong not in proc.stdout + proc.stderr and proc.stdout == ""
    # the same with the password in the environment (MLflow's own way)
    proc = run_cli(
        ["compare", RUN_A, RUN_B, "--tracking-uri", auth_server.uri],
        tmp_path,
        MLFLOW_TRACKING_USERNAME=ADMIN,
        MLFLOW_TRACKING_PASSWORD=wrong,
    )
    assert proc.returncode == 2 and wrong not in proc.stdout + proc.stderr, proc.stderr


def test_redaction_hides_userinfo_and_secret_values(monkeypatch: pytest.MonkeyPatch) -> None:
    from extract_mlflow.tracking.client import redact, split_credentials

    monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", "tok-0123456789")
    assert split_credentials("https://u:pa%3Aword@h:1/x") == ("https://h:1/x", "u", "pa:word")
    assert split_credentials("sqlite:///a@b.db") == ("sqlite:///a@b.db", None, None)
    text = "GET http://u:hunter22@h/api failed; token tok-0123456789; pa:word pa%3Aword"
    assert redact(text) == "GET http://***@h/api failed; token ***; *** ***"
    assert "tok-0123456789" not in one_line(RuntimeError(text))
    logged = LoggedRun("r", "0", "http://u:hunter22@127.0.0.1:5000", "mlflow-artifacts:/x")
    assert logged.url == "http://127.0.0.1:5000/#/experiments/0/runs/r"
    assert "hunter22" not in json.dumps(logged.to_dict())


# -- item 8: hangs ------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("command", ["score", "compare", "score-iterations"])
def test_server_that_hangs_after_health_fails_within_the_timeout(
    tmp_path: Path, command: str
) -> None:
    args = {
        "score": ["score", GOLD, BASELINE],
        "compare": ["compare", RUN_A, RUN_B],
        "score-iterations": ["score-iterations", str(tmp_path)],
    }[command]
    if command == "score-iterations":
        (tmp_path / "gold.jsonl").write_text(Path(GOLD).read_text(encoding="utf-8"))
        (tmp_path / "01").mkdir()
        (tmp_path / "01" / "pred.jsonl").write_text(Path(BASELINE).read_text(encoding="utf-8"))
    with hanging_server() as server:
        proc = run_cli([*args, "--tracking-uri", uri_of(server), "--timeout", "2"], tmp_path)
        assert server.hung.is_set()  # the probe passed and an API call hung
    assert proc.returncode == 2, proc.stderr
    error_line(proc.stderr, uri_of(server), "did not answer in time")


@pytest.mark.server
@pytest.mark.slow
def test_server_frozen_mid_logging_names_the_unfinished_run(
    mlflow_env: Path, mlflow_server: MlflowServer, tmp_path: Path
) -> None:
    experiment = f"frozen-{free_port()}"
    with freezing_proxy(mlflow_server.uri, lambda _m, path: path.endswith("/runs/create")) as px:
        proc = run_cli(
            ["score", GOLD, BASELINE, "--tracking-uri", uri_of(px), "--experiment", experiment,
             "--timeout", "2"],
            tmp_path,
        )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    (run,) = runs_of(mlflow_server.uri, experiment)
    line = error_line(proc.stderr, run.info.run_id, "left unfinished", "did not answer in time")
    assert "RUNNING" in line and run.info.status == "RUNNING"
    # item 9: the next score in that experiment warns about it, in one line
    code, _, err = cli(
        "score", GOLD, BASELINE, "--tracking-uri", mlflow_server.uri, "--experiment", experiment
    )
    assert code == 0, err
    (warning,) = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert run.info.run_id in warning and "RUNNING" in warning


@pytest.mark.slow
@pytest.mark.parametrize("which", ["gold", "pred"])
def test_endless_input_stream_stops_with_one_line(tmp_path: Path, which: str) -> None:
    small = tmp_path / "small.jsonl"
    small.write_text('{"id": "a", "x": 1}\n', encoding="utf-8")
    files = ["/dev/zero", str(small)] if which == "gold" else [str(small), "/dev/zero"]
    proc = run_cli(["score", *files, "--no-log"], tmp_path)
    assert proc.returncode == 2
    error_line(proc.stderr, "/dev/zero:1:", "without a line end", "16 MiB limit")


# -- item 9: crashes mid-logging, and registering only what is complete ----------------------------
@pytest.mark.server
def test_killed_mid_logging_is_reported_by_the_next_score(
    mlflow_env: Path, mlflow_server: MlflowServer, tmp_path: Path
) -> None:
    experiment = f"killed-{free_port()}"
    with freezing_proxy(mlflow_server.uri, lambda _m, path: "log-batch" in path) as px:
        env = {**os.environ}
        env.pop("MLFLOW_TRACKING_URI", None)
        proc = subprocess.Popen(
            [sys.executable, "-m", "extract_mlflow", "score", GOLD, BASELINE,
             "--tracking-uri", uri_of(px), "--experiment", experiment, "--timeout", "60"],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        try:
            assert px.hung.wait(PROCESS_TIMEOUT), "score never reached the metrics"
            proc.send_signal(signal.SIGKILL)  # no chance to clean up
            proc.wait(PROCESS_TIMEOUT)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()
    (run,) = runs_of(mlflow_server.uri, experiment)
    assert run.info.status == "RUNNING"  # a partial run, left behind by the kill
    code, out, err = cli(
        "score", GOLD, BASELINE, "--tracking-uri", mlflow_server.uri, "--experiment", experiment,
        "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and run.info.run_id in warnings[0], err
    assert json.loads(out)["run_id"] != run.info.run_id


@pytest.mark.server
def test_terminated_mid_logging_ends_the_run_killed_and_names_it(
    mlflow_env: Path, mlflow_server: MlflowServer, tmp_path: Path
) -> None:
    """SIGTERM (a cancelled CI job) while the metrics hang: the run ends KILLED, not RUNNING."""
    experiment = f"terminated-{free_port()}"
    with freezing_proxy(mlflow_server.uri, lambda _m, _p: False) as px:
        px.hang_when = lambda _m, path: "log-batch" in path
        env = {**os.environ}
        env.pop("MLFLOW_TRACKING_URI", None)
        proc = subprocess.Popen(
            [sys.executable, "-m", "extract_mlflow", "score", GOLD, BASELINE,
             "--tracking-uri", uri_of(px), "--experiment", experiment, "--timeout", "60"],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert px.hung.wait(PROCESS_TIMEOUT), "score never reached the metrics"
            proc.terminate()
            _, stderr = proc.communicate(timeout=PROCESS_TIMEOUT)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 2, stderr
    (run,) = runs_of(mlflow_server.uri, experiment)
    error_line(stderr, "interrupted", run.info.run_id, "marked KILLED")
    assert run.info.status == "KILLED"


@pytest.mark.server
def test_failure_after_the_run_exists_marks_it_failed(
    mlflow_env: Path, mlflow_server: MlflowServer, tmp_path: Path
) -> None:
    """The artifact upload breaks (a proxy that answers 500 there): the run ends FAILED, the
    line names it, and no model version is registered for the broken run."""
    experiment = f"broken-{free_port()}"
    with freezing_proxy(mlflow_server.uri, lambda _m, _p: False) as px:
        px.fail_when = lambda _m, path: "mlflow-artifacts" in path
        proc = run_cli(
            ["score", GOLD, BASELINE, "--tracking-uri", uri_of(px), "--experiment", experiment,
             "--register", f"{experiment}-model", "--timeout", "5"],
            tmp_path,
        )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    (run,) = runs_of(mlflow_server.uri, experiment)
    error_line(proc.stderr, run.info.run_id, "marked FAILED")
    assert run.info.status == "FAILED"
    found = client_for(mlflow_server.uri).search_model_versions(f"name = '{experiment}-model'")
    assert list(found) == []


@pytest.mark.server
def test_model_version_is_registered_after_the_run_finished(
    mlflow_env: Path, mlflow_server: MlflowServer
) -> None:
    code, out, err = cli(
        "score", GOLD, BASELINE, "--config", CONFIG, "--tracking-uri", mlflow_server.uri,
        "--experiment", "register-order", "--register", "order-model", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    client = client_for(mlflow_server.uri)
    run = client.get_run(data["run_id"])
    version = client.get_model_version("order-model", data["model_version"])
    assert run.info.status == "FINISHED" and version.run_id == run.info.run_id
    assert version.creation_timestamp >= run.info.end_time  # registered once complete


# -- item 10: prompt references are resolved before the run exists --------------------------------
@pytest.mark.server
def test_unknown_prompt_uri_is_refused_before_any_run(
    mlflow_env: Path, mlflow_server: MlflowServer
) -> None:
    experiment = f"prompt-nope-{free_port()}"
    code, out, err = cli(
        "score", GOLD, BASELINE, "--tracking-uri", mlflow_server.uri, "--experiment", experiment,
        "--prompt-uri", "prompts:/nope/1",
    )  # fmt: skip
    assert code == 2 and out == ""
    error_line(err, "prompts:/nope/1", "no such prompt")
    assert runs_of(mlflow_server.uri, experiment) == []


# -- item 11: malformed tracking URIs ----------------------------------------------------------
BAD_URIS = ["htp://x", "ftp://host", "", "   ", "http://[::1", "http://", "http://:5000"]


@pytest.mark.parametrize("uri", BAD_URIS)
def test_malformed_tracking_uri_is_one_clear_line(mlflow_env: Path, uri: str) -> None:
    for args in (["score", GOLD, BASELINE], ["compare", RUN_A, RUN_B]):
        code, out, err = cli(*args, "--tracking-uri", uri)
        assert code == 2 and out == ""
        error_line(err, "unsupported tracking URI")


@pytest.mark.parametrize(
    "uri",
    [
        "mlruns",
        "/tmp/mlruns",
        "file:///tmp/mlruns",
        "sqlite:///tmp/x.db",
        "postgresql://u@localhost/db",
        "mysql+pymysql://u@localhost/db",
        "http://127.0.0.1:5000",
        "https://mlflow.example.com/prefix",
        "http://[::1]:5000",
        "databricks",
        "databricks://profile",
    ],
)
def test_valid_tracking_uris_stay_valid(uri: str) -> None:
    from extract_mlflow.tracking.client import check_tracking_uri

    assert check_tracking_uri(uri) == uri


def test_unreachable_uri_with_credentials_names_the_host_not_the_password() -> None:
    port = free_port()  # closed: nothing listens
    code, out, err = cli(
        "score", GOLD, BASELINE, "--tracking-uri", f"http://bob:Sekr3t-pw@127.0.0.1:{port}"
    )
    assert code == 2
    error_line(err, f"127.0.0.1:{port}", "unreachable")
    assert "Sekr3t-pw" not in err + out


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "-inf"])
@pytest.mark.parametrize("command", ["score", "promote"])
def test_timeout_must_be_a_finite_positive_number(command: str, value: str) -> None:
    """nan and inf would bound nothing (inf once made a traceback): exit 2, one usage line."""
    args = [GOLD, BASELINE] if command == "score" else ["model", "1", "--max-drop", "f1=0"]
    code, _, err = cli(command, *args, "--timeout", value)
    assert code == 2 and "Invalid value for '--timeout'" in err and "Traceback" not in err
