"""Comparability read from what cannot be edited after a run: its params. A signature tag copied
onto another run through the API (``MlflowClient().set_tag``) is refused by `compare`, `promote`
and `compare_refs`, through run ids, ``models:/`` and ``prompts:/`` refs, against a real
`mlflow server`; runs scored alike still compare, and ``--allow-incomparable`` says what it let
through."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.mlflow_server import MlflowServer
from support.registry import CONFIG, client_for, link_prompt, register_prompt, score

from extract_mlflow.cli import main
from extract_mlflow.comparison import IncomparableRunsError
from extract_mlflow.core.signature import SIGNATURE_PARAMS, signature_of
from extract_mlflow.tracking.log import log_report
from extract_mlflow.tracking.payload import SIGNATURE_TAG
from extract_mlflow.tracking.refs import compare_refs
from extract_mlflow.tracking.registry import VERDICT_TAG

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Runs:
    """`a` and `b` scored with one config (baseline and improved predictions), `c` with another
    config whose signature tag was overwritten with `a`'s; versions 1 (a, @champion), 2 (c)
    and 3 (b) of `model`; `c` linked to version 1 of `prompt`, `a` to version 2."""

    uri: str
    a: str
    b: str
    c: str
    model: str
    prompt: str
    experiment_id: str


@pytest.fixture(scope="module")
def runs(mlflow_server: MlflowServer, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    uri, sfx = mlflow_server.uri, uuid.uuid4().hex[:8]
    model, prompt = f"forged-{sfx}", f"forged-prompt-{sfx}"
    other = tmp_path_factory.mktemp("forged") / "other.toml"
    other.write_text(CONFIG.read_text().replace("rel_tol = 0.001", "rel_tol = 0.002", 1))
    first = register_prompt(uri, prompt, "Extract (c).")
    second = register_prompt(uri, prompt, "Extract (a).")
    kwargs: dict[str, Any] = {"tracking_uri": uri, "experiment": model, "register": model}
    a = log_report(score("pred_baseline.jsonl"), **kwargs)
    c = log_report(score("pred_improved.jsonl", other), **kwargs)
    b = log_report(score("pred_improved.jsonl"), **kwargs)
    link_prompt(uri, c.run_id, f"prompts:/{prompt}/{first}")
    link_prompt(uri, a.run_id, f"prompts:/{prompt}/{second}")
    client = client_for(uri)
    client.set_registered_model_alias(model, "champion", "1")
    tags = client.get_run(a.run_id).data.tags
    client.set_tag(c.run_id, SIGNATURE_TAG, tags[SIGNATURE_TAG])  # the forgery
    return Runs(uri, a.run_id, b.run_id, c.run_id, model, prompt, a.experiment_id)


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


@pytest.mark.server
def test_the_forged_tag_is_a_copy_of_a_tag_that_compares(runs: Runs) -> None:
    """The setup is the attack: c's tag now equals a's, although its params differ."""
    client = client_for(runs.uri)
    a, c = client.get_run(runs.a).data, client.get_run(runs.c).data
    assert a.tags[SIGNATURE_TAG] == c.tags[SIGNATURE_TAG]
    assert a.params["config_digest"] != c.params["config_digest"]
    assert signature_of(a.params) == a.tags[SIGNATURE_TAG]


@pytest.mark.server
def test_compare_refuses_a_forged_tag_in_one_line_naming_both_runs(runs: Runs) -> None:
    """The hostile script itself: the installed command in a subprocess."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "extract_mlflow", "compare", runs.a, runs.c,
           "--tracking-uri", runs.uri, "--max-drop", "f1=0.01"]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    (line,) = lines(done.stderr)
    assert line.startswith("error: ") and runs.a in line and runs.c in line
    assert f"the {SIGNATURE_TAG} tag of run {runs.c} does not match its params" in line
    assert "config" in line and "--allow-incomparable" in line
    assert "Traceback" not in done.stderr


@pytest.mark.server
def test_runs_scored_alike_still_compare(runs: Runs) -> None:
    code, out, err = cli("compare", runs.a, runs.b, "--tracking-uri", runs.uri,
                         "--max-drop", "f1=0.01", "--format", "json")  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert data["passed"] and data["comparable"] is True
    assert not any("does not match" in n for n in data["notes"])


@pytest.mark.server
@pytest.mark.parametrize(
    ("baseline", "candidate", "named"),
    [
        ("{a}", "{c}", "run {c}"),
        ("{c}", "{a}", "run {c}"),  # the forged run as the baseline
        ("models:/{model}/1", "models:/{model}/2", "models:/{model}/2 (run {c})"),
        ("models:/{model}@champion", "runs:/{c}", "run {c}"),
        ("prompts:/{prompt}/2", "prompts:/{prompt}/1", "prompts:/{prompt}/1 (run {c})"),
    ],
)
def test_compare_refs_refuses_the_forged_run_through_every_ref_form(
    runs: Runs, baseline: str, candidate: str, named: str
) -> None:
    base, cand = baseline.format(**vars(runs)), candidate.format(**vars(runs))
    with pytest.raises(IncomparableRunsError) as info:
        compare_refs(base, cand, tracking_uri=runs.uri, gates=[{"metric": "f1", "max_drop": 1}])
    message = str(info.value)
    assert "\n" not in message and runs.a in message and runs.c in message
    assert f"tag of {named.format(**vars(runs))} does not match its params" in message


@pytest.mark.server
def test_allow_incomparable_compares_and_says_what_it_let_through(runs: Runs) -> None:
    code, out, err = cli("compare", runs.a, runs.c, "--tracking-uri", runs.uri,
                         "--max-drop", "f1=0.01", "--allow-incomparable",
                         "--format", "json")  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert data["comparable"] is False
    forged = [n for n in data["notes"] if "does not match its params" in n]
    assert len(forged) == 1 and runs.c in forged[0] and "--allow-incomparable" in forged[0]
    assert any("scored differently (config" in n for n in data["notes"])


@pytest.mark.server
def test_promote_refuses_a_forged_tag_and_tags_nothing(runs: Runs) -> None:
    code, out, err = cli("promote", runs.model, "2", "--tracking-uri", runs.uri,
                         "--max-drop", "f1=0.01")  # fmt: skip
    assert code == 2 and out == ""
    (line,) = lines(err)
    assert runs.a in line and runs.c in line and "does not match its params" in line
    client = client_for(runs.uri)
    assert client.get_model_version_by_alias(runs.model, "champion").version == "1"
    assert VERDICT_TAG not in client.get_model_version(runs.model, "2").tags


@pytest.mark.server
def test_a_deleted_tag_or_missing_params_is_refused(runs: Runs) -> None:
    client = client_for(runs.uri)
    a = client.get_run(runs.a)
    untagged = client.create_run(runs.experiment_id)
    for key, value in a.data.params.items():  # an evaluation's params, its tag deleted
        client.log_param(untagged.info.run_id, key, value)
    client.set_terminated(untagged.info.run_id, "FINISHED")
    with pytest.raises(
        IncomparableRunsError, match=f"run {untagged.info.run_id} has no {SIGNATURE_TAG} tag"
    ):
        compare_refs(runs.a, untagged.info.run_id, tracking_uri=runs.uri)
    bare = client.create_run(runs.experiment_id, tags={SIGNATURE_TAG: a.data.tags[SIGNATURE_TAG]})
    for key, value in a.data.metrics.items():  # the tag and the metrics, no params
        client.log_metric(bare.info.run_id, key, value)
    client.set_terminated(bare.info.run_id, "FINISHED")
    code, out, err = cli("compare", runs.a, bare.info.run_id, "--tracking-uri", runs.uri,
                         "--max-drop", "f1=0.01")  # fmt: skip
    assert code == 2 and out == ""
    (line,) = lines(err)
    assert runs.a in line and bare.info.run_id in line
    assert "has no scorer_version, config_digest, gold_digest param" in line


@pytest.mark.server
def test_every_signature_param_is_logged_so_none_can_be_added_later(runs: Runs) -> None:
    """An input a run did not have is logged as "": MLflow refuses to change a param, so no
    part can be slipped into the signature of a logged run afterwards."""
    from mlflow.exceptions import MlflowException

    client = client_for(runs.uri)
    params = client.get_run(runs.b).data.params
    assert set(SIGNATURE_PARAMS) <= set(params) and params["sources_digest"] == ""
    with pytest.raises(MlflowException, match="Changing param values is not allowed"):
        client.log_param(runs.b, "sources_digest", "0" * 64)
