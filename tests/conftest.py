"""Shared fixtures: a real ``mlflow server`` (once per session) and an embedded local store.

The server listens on 127.0.0.1 on a free port with a temporary SQLite backend and artifact
store, in its own process group (``mlflow server`` spawns uvicorn workers that outlive a killed
parent), and is stopped by signalling the whole group; teardown fails if any process of the
group is left. Tests that need it are marked ``server``; deselect them with ``-m "not server"``.

Tests that take more than a few seconds are marked ``slow``; ``python -m pytest -m "not slow"``
is the quick loop (CI runs everything). Every test that is marked ``server`` or uses a server
(``mlflow_server`` or ``start_server``) is marked ``slow`` automatically, so the quick loop
starts no server; a server started by a test not marked slow is an error. Share the session
server (unique experiment and model names); start an extra one only to stop or break it. An
unreachable server is a closed port (``closed_port_uri``), never a server started and stopped.

The suite runs on pytest-xdist (``addopts`` in pyproject.toml: ``-n auto --dist loadfile``):
every worker is a session of its own, with its own session server and local store in its own
temporary folder; ``-n 0`` runs it in one process. A test writes only below ``tmp_path`` (never
in the checkout, which every worker shares).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

SERVER_START_TIMEOUT = 120.0
SERVER_STOP_TIMEOUT = 15.0
MLFLOW = Path(sys.executable).with_name("mlflow")

# no per-example time limit (Hypothesis' default is 200 ms): a busy machine must not fail a
# property that holds
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "server: needs a real `mlflow server` (started once per session, ~15 s)"
    )
    config.addinivalue_line(
        "markers", "slow: takes more than a few seconds; deselect with -m 'not slow'"
    )
    # the pinned outputs are English: a Korean locale on the developer's machine must not
    # change them (tests/test_language.py sets the language explicitly)
    os.environ["EXTRACT_MLFLOW_LANG"] = "en"


SERVER_FIXTURES = frozenset({"mlflow_server", "start_server"})
_running: list[pytest.Item] = []  # the test being set up, run or torn down


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that needs a real `mlflow server` (marked ``server``, or using `mlflow_server` or
    `start_server` directly or through another fixture) is marked ``server`` and ``slow``
    whether or not it says so: the session server alone takes seconds to start, so the quick
    loop (``-m "not slow"``) starts none."""
    for item in items:
        if item.get_closest_marker("server") or SERVER_FIXTURES & set(
            getattr(item, "fixturenames", ())
        ):
            item.add_marker(pytest.mark.server)
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    _running.append(item)
    try:
        return (yield)
    finally:
        _running.remove(item)


def check_may_start_a_server() -> None:
    """Starting a server inside a test that is not marked slow is a mistake: it would put
    seconds into the quick loop. Fail with the fix instead."""
    if _running and _running[-1].get_closest_marker("slow") is None:
        raise RuntimeError(
            f"{_running[-1].nodeid} starts an `mlflow server` but is not marked slow: "
            "mark it @pytest.mark.slow (or use the mlflow_server/start_server fixtures)"
        )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def closed_port_uri() -> str:
    """An http URI on 127.0.0.1 where nothing listens: a free port, bound once and closed."""
    return f"http://127.0.0.1:{free_port()}"


def group_members(pgid: int) -> list[int]:
    """Pids whose process group is `pgid` (zombies included), read from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid:
            found.append(int(entry.name))
    return found


@dataclass
class MlflowServer:
    """One ``mlflow server`` process group."""

    uri: str
    proc: subprocess.Popen[bytes]
    root: Path

    @classmethod
    def start(
        cls, root: Path, *, app_name: str | None = None, env: dict[str, str] | None = None
    ) -> MlflowServer:
        """Start ``mlflow server`` in `root` (``--app-name`` and extra environment when
        given) and wait until it answers ``/health``."""
        check_may_start_a_server()
        port = free_port()
        cmd = [
            str(MLFLOW) if MLFLOW.exists() else "mlflow",
            "server",
            *(["--app-name", app_name] if app_name else []),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--backend-store-uri",
            f"sqlite:///{root / 'mlflow.db'}",
            "--serve-artifacts",
            "--artifacts-destination",
            str(root / "artifacts"),
            "--workers",
            "1",
        ]
        full_env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false", **(env or {})}
        for var in ("MLFLOW_TRACKING_URI", "MLFLOW_TRACKING_USERNAME", "MLFLOW_TRACKING_PASSWORD"):
            full_env.pop(var, None)
        log = (root / "server.log").open("wb")
        proc = subprocess.Popen(
            cmd,
            cwd=root,
            env=full_env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        server = cls(f"http://127.0.0.1:{port}", proc, root)
        server.wait_healthy()
        return server

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self.uri + "/health", timeout=1) as resp:
                return bool(resp.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def wait_healthy(self) -> None:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.stop()
                log = (self.root / "server.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"mlflow server exited with {self.proc.returncode}:\n{log}")
            if self.healthy():
                return
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"mlflow server at {self.uri} not healthy after {SERVER_START_TIMEOUT}s")

    @property
    def pgid(self) -> int:
        return self.proc.pid  # start_new_session: the leader's pid is the group id

    def stop(self) -> None:
        """SIGTERM the whole group, SIGKILL what is left after a timeout, reap the leader."""
        self._signal(signal.SIGTERM)
        deadline = time.monotonic() + SERVER_STOP_TIMEOUT
        while self._alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        if self._alive():
            self._signal(signal.SIGKILL)
            deadline = time.monotonic() + SERVER_STOP_TIMEOUT
            while self._alive() and time.monotonic() < deadline:
                time.sleep(0.1)

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pgid, sig)

    def _alive(self) -> bool:
        self.proc.poll()  # reap the leader when it has exited
        return bool(self.live_members())

    def live_members(self) -> list[int]:
        """Processes of the group that are not zombies."""
        live = []
        for pid in group_members(self.pgid):
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state != "Z":
                live.append(pid)
        return live


def assert_group_gone(server: MlflowServer, wait: float = 5.0) -> None:
    """No process of the server's group is running (exited workers may linger a moment as
    zombies until the init process reaps them; they are not running)."""
    deadline = time.monotonic() + wait
    while group_members(server.pgid) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = server.live_members()
    assert not left, f"mlflow server processes left behind: {left}"


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MlflowServer]:
    """A real `mlflow server` for the session; no process of it survives the session."""
    server = MlflowServer.start(tmp_path_factory.mktemp("mlflow-server"))
    try:
        yield server
    finally:
        server.stop()
        assert_group_gone(server)


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[[], MlflowServer]]:
    """Start extra servers inside one test; each is stopped, and checked gone, at its end."""
    started: list[MlflowServer] = []

    def start() -> MlflowServer:
        folder = tmp_path / f"server-{len(started)}"
        folder.mkdir()
        started.append(MlflowServer.start(folder))
        return started[-1]

    yield start
    for server in started:
        server.stop()
        assert_group_gone(server)


@pytest.fixture(scope="session")
def local_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An embedded (in-process) SQLite tracking store shared by the session, created here with
    its default experiment's artifacts beside it (MLflow would put them in ``./mlruns`` of the
    working directory at first use: the checkout)."""
    from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

    root = tmp_path_factory.mktemp("mlflow-local")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    SqlAlchemyStore(uri, (root / "mlruns").as_uri())  # type: ignore[no-untyped-call]
    return uri


@pytest.fixture
def mlflow_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """A clean MLflow environment for one test: working directory `tmp_path` (MLflow's default
    artifact root ``./mlruns`` lands there), no tracking URI, run or experiment from the outside,
    and MLflow's process-wide tracking URI restored afterwards."""
    for var in (
        "MLFLOW_TRACKING_URI",
        "MLFLOW_RUN_ID",
        "MLFLOW_EXPERIMENT_ID",
        "MLFLOW_EXPERIMENT_NAME",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    import mlflow

    yield tmp_path
    while mlflow.active_run() is not None:
        mlflow.end_run()
    mlflow.set_tracking_uri(None)  # type: ignore[arg-type]
    mlflow.tracking.fluent._active_experiment_id = None


# -- reading a logged evaluation back ----------------------------------------------------------
def artifact_paths(client: Any, run_id: str, path: str | None = None) -> set[str]:
    """Every artifact file of the run under `path`, recursively."""
    out: set[str] = set()
    for item in client.list_artifacts(run_id, path):
        out |= artifact_paths(client, run_id, item.path) if item.is_dir else {item.path}
    return out


def assert_run_holds_report(
    client: Any,
    run_id: str,
    report: Any,
    tmp_path: Path,
    *,
    prompts: dict[str, str] | None = None,
    params: dict[str, str] | None = None,
    tags: dict[str, str] | None = None,
    dataset: bool = True,
    exact: bool = True,
) -> None:
    """Read one evaluation run back through MlflowClient and compare everything with `report`:
    metrics, params, tags, the gold dataset input, every ``eval/`` artifact and the table."""
    import json

    import pandas as pd

    from extract_mlflow.tracking.client import using_tracking_uri
    from extract_mlflow.tracking.payload import (
        RUN_TYPE_EVALUATION,
        RUN_TYPE_TAG,
        SIGNATURE_TAG,
        TABLE_FILE,
        report_params,
    )
    from extract_mlflow.views.frames import report_frame
    from extract_mlflow.views.markdown import report_markdown

    run = client.get_run(run_id)
    metrics = report.metrics()
    if exact:
        assert run.data.metrics == metrics
        assert run.data.params == report_params(report, params)
    else:
        assert {k: run.data.metrics[k] for k in metrics} == metrics
        assert report_params(report, params).items() <= run.data.params.items()
    expected_tags = {SIGNATURE_TAG: report.signature(), RUN_TYPE_TAG: RUN_TYPE_EVALUATION}
    assert {**expected_tags, **(tags or {})}.items() <= run.data.tags.items()
    if dataset:
        (inp,) = [d for d in run.inputs.dataset_inputs if d.dataset.name != "dataset"]
        assert inp.dataset.digest == (report.gold_digest or "")[:36] or not report.gold_digest
        assert json.loads(inp.dataset.profile)["num_rows"] == len(report.documents)
        assert {t.key: t.value for t in inp.tags}["mlflow.data.context"] == "gold"
    prompt_files = {f"eval/prompts/{name}" for name in (prompts or {})}
    expected = {
        "eval/summary.md",
        "eval/diagnostics.json",
        "eval/documents.parquet",
        "eval/config.toml",
        TABLE_FILE,
    } | prompt_files
    assert expected <= artifact_paths(client, run_id, "eval")
    local = Path(client.download_artifacts(run_id, "eval", str(tmp_path)))
    assert (local / "summary.md").read_text(encoding="utf-8") == report_markdown(report)
    diagnostics = json.loads((local / "diagnostics.json").read_text(encoding="utf-8"))
    assert diagnostics == json.loads(json.dumps(report.to_dict(), default=str))
    frame = pd.read_parquet(local / "documents.parquet")
    pd.testing.assert_frame_equal(frame, report_frame(report, "counts"))
    assert (local / "config.toml").read_text(encoding="utf-8") == report.config.to_toml()
    for name, text in (prompts or {}).items():
        assert (local / "prompts" / name).read_text(encoding="utf-8") == text
    with using_tracking_uri(client.tracking_uri):  # load_table searches the global store
        table = client.load_table(run.info.experiment_id, TABLE_FILE, run_ids=[run_id])
    docs = report_frame(report, "documents")
    assert list(table["id"]) == list(docs["id"])
    assert list(table["tp"]) == list(docs["tp"]) and list(table["fn"]) == list(docs["fn"])
    assert json.loads(run.data.tags["mlflow.loggedArtifacts"]) == [
        {"path": TABLE_FILE, "type": "table"}
    ]
