"""Shared fixtures: a real ``mlflow server`` (once per session) and an embedded local store.

The server listens on 127.0.0.1 on a free port with a temporary SQLite backend and artifact
store, in its own process group (``mlflow server`` spawns uvicorn workers that outlive a killed
parent), and is stopped by signalling the whole group; teardown fails if any process of the
group is left. Tests that need it are marked ``server``; deselect them with ``-m "not server"``.

The tests mirror the package (tests/<subpackage>/ for extract_mlflow/<subpackage>/, tests of
top-level modules and of the repository itself in tests/); integration tests (real servers,
Spark, a browser, `mlflow run`, whole CLI runs against servers) are in tests/integration/ and
marked ``integration``. The helpers live in tests/support/ (the server itself in
``support.mlflow_server``, reading a run back in ``support.runs``); test modules import from
there, never from each other.

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

import os
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from support.mlflow_server import RUNNING, MlflowServer, assert_group_gone

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
    config.addinivalue_line(
        "markers",
        "integration: in tests/integration/ (real servers, Spark, a browser, `mlflow run`, whole "
        "CLI runs against servers); deselect with -m 'not integration'",
    )
    # the pinned outputs are English: a Korean locale on the developer's machine must not
    # change them (tests/core/test_language.py sets the language explicitly)
    os.environ["EXTRACT_MLFLOW_LANG"] = "en"


SERVER_FIXTURES = frozenset({"mlflow_server", "start_server"})
INTEGRATION = Path(__file__).resolve().parent / "integration"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that needs a real `mlflow server` (marked ``server``, or using `mlflow_server` or
    `start_server` directly or through another fixture) is marked ``server`` and ``slow``
    whether or not it says so: the session server alone takes seconds to start, so the quick
    loop (``-m "not slow"``) starts none. A test in tests/integration/ is marked
    ``integration``."""
    for item in items:
        if INTEGRATION in item.path.parents:
            item.add_marker(pytest.mark.integration)
        if item.get_closest_marker("server") or SERVER_FIXTURES & set(
            getattr(item, "fixturenames", ())
        ):
            item.add_marker(pytest.mark.server)
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    RUNNING.append(item)
    try:
        return (yield)
    finally:
        RUNNING.remove(item)


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
