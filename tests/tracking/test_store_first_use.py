"""First use of the embedded SQLite store: N processes that create it at once all land (one
creates and migrates it under the lock beside it, the others find it current), and a store that
cannot be opened (not a database, corrupt, half-migrated, a folder, locked for too long) is one
line and exit 2 for every command, never "internal error". Everything is read back with
``MlflowClient``; the half-migrated stores are made with MLflow's own migrations, stopped where a
real interrupted or concurrent one stops."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.mlflow_server import MlflowServer
from support.runs import assert_run_holds_report

from extract_mlflow import evaluate
from extract_mlflow.cli import main
from extract_mlflow.errors import TrackingError
from extract_mlflow.tracking.log import log_report
from extract_mlflow.tracking.store import LOCK_SUFFIX, sqlite_path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "invoices"
GOLD = str(EXAMPLE / "gold.jsonl")
BASELINE = str(EXAMPLE / "pred_baseline.jsonl")
IMPROVED = str(EXAMPLE / "pred_improved.jsonl")
CONFIG = str(EXAMPLE / "config.toml")
PROCESSES = 12
RECOVER = "restore it from a backup, or move it aside and run again to create a new store"


@pytest.fixture(autouse=True)
def _in_tmp_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every test works in its own folder: a store MLflow creates puts its default experiment's
    artifacts in ``./mlruns`` of the working directory, which must not be the checkout."""
    monkeypatch.chdir(tmp_path)


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and "internal error" not in lines[0], err
    return lines[0]


def client_for(uri: str):  # type: ignore[no-untyped-def]
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=uri)


def head_revision() -> str:
    from mlflow.store.db.utils import _get_latest_schema_revision

    return str(_get_latest_schema_revision())  # type: ignore[no-untyped-call]


def tables(db: Path) -> set[str]:
    with sqlite3.connect(db) as con:
        return {row[0] for row in con.execute("SELECT name FROM sqlite_master")}


def concurrent_scores(
    cwd: Path, uris: list[str | None], env_uris: list[str | None], *extra: str
) -> list[subprocess.CompletedProcess[str]]:
    """Start one `extract-mlflow score` per entry at once (`--tracking-uri` from `uris`,
    ``MLFLOW_TRACKING_URI`` from `env_uris`, None: not given) and wait for them all."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    procs = []
    for uri, env_uri in zip(uris, env_uris, strict=True):
        args = [sys.executable, "-m", "extract_mlflow", "score", GOLD, BASELINE]
        args += ["--config", CONFIG, "--format", "json", *extra]
        args += ["--tracking-uri", uri] if uri else []
        env = {**base, **({"MLFLOW_TRACKING_URI": env_uri} if env_uri else {})}
        procs.append(
            subprocess.Popen(
                args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
        )
    done = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return done


def assert_all_landed(
    done: list[subprocess.CompletedProcess[str]], uri: str, experiment: str, tmp_path: Path
) -> None:
    """Every process exited 0 with a run id; every run is FINISHED in `experiment` with the
    report's metrics and the gold dataset input; one of them holds the whole report (params,
    tags, every artifact; the runs are the same evaluation)."""
    failed = [(p.returncode, p.stderr.strip()[-400:]) for p in done if p.returncode != 0]
    assert not failed, f"{len(failed)} of {len(done)} failed: {failed}"
    run_ids = {json.loads(p.stdout)["run_id"] for p in done}
    assert len(run_ids) == len(done)
    client = client_for(uri)
    exp = client.get_experiment_by_name(experiment)
    assert exp is not None
    runs = client.search_runs([exp.experiment_id], max_results=100)
    assert {r.info.run_id for r in runs} == run_ids
    report = evaluate(GOLD, BASELINE, CONFIG)
    for run in runs:
        assert run.info.status == "FINISHED"
        assert run.data.metrics == report.metrics()
        (dataset,) = run.inputs.dataset_inputs
        assert dataset.dataset.digest == runs[0].inputs.dataset_inputs[0].dataset.digest
    assert_run_holds_report(client, min(run_ids), report, tmp_path / "download")


# -- which stores take the lock ----------------------------------------------------------------
def test_only_sqlite_file_stores_have_a_lock(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert sqlite_path("sqlite:///mlflow.db") == tmp_path / "mlflow.db"  # relative: to the cwd
    assert sqlite_path(f"sqlite:///{tmp_path}/mlflow.db") == tmp_path / "mlflow.db"
    assert sqlite_path("sqlite:///link/m.db") == tmp_path / "real" / "m.db"  # beside the file
    assert sqlite_path("sqlite:///sub/dir/m.db?timeout=20") == tmp_path / "sub" / "dir" / "m.db"
    for uri in (
        "sqlite://",
        "sqlite:///:memory:",
        "sqlite:///file:m.db?mode=memory&uri=true",
        "postgresql://u:p@127.0.0.1/mlflow",
        "mysql://127.0.0.1/mlflow",
        "http://127.0.0.1:5000",
        "databricks",
        f"file://{tmp_path}/mlruns",
        str(tmp_path / "mlruns"),
    ):
        assert sqlite_path(uri) is None, uri


def test_mlflow_default_here_is_a_sqlite_file_in_the_working_directory(mlflow_env: Path) -> None:
    """What the default store is in this MLflow: ``sqlite:///<cwd>/mlflow.db`` (the lock's
    case), unless ``./mlruns`` already holds a file store (then MLflow keeps that: no lock)."""
    import mlflow

    assert sqlite_path(mlflow.get_tracking_uri()) == mlflow_env / "mlflow.db"
    (mlflow_env / "mlruns" / "0").mkdir(parents=True)
    (mlflow_env / "mlruns" / "0" / "meta.yaml").write_text("name: Default\n")
    assert mlflow.get_tracking_uri().startswith("file://")
    assert sqlite_path(mlflow.get_tracking_uri()) is None


# -- N processes at once on a new store --------------------------------------------------------
@pytest.mark.slow
def test_concurrent_first_runs_in_a_fresh_folder_all_land(tmp_path: Path) -> None:
    """Twelve `score` processes started together in an empty folder, as a CI matrix would: a
    third on MLflow's default store, a third naming it relatively (``--tracking-uri
    sqlite:///mlflow.db``), a third absolutely in ``MLFLOW_TRACKING_URI``: one file, one lock.
    Without the lock all twelve exit 2 and leave the store half-migrated."""
    db = tmp_path / "mlflow.db"
    third = PROCESSES // 3
    uris = [None] * third + ["sqlite:///mlflow.db"] * third + [None] * third
    env_uris = [None] * (2 * third) + [f"sqlite:///{db}"] * third
    done = concurrent_scores(tmp_path, uris, env_uris, "--experiment", "matrix")
    assert_all_landed(done, f"sqlite:///{db}", "matrix", tmp_path)
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT version_num FROM alembic_version").fetchall() == [
            (head_revision(),)
        ]
    assert not {t for t in tables(db) if t.startswith("_alembic_tmp_")}
    assert (tmp_path / f"mlflow.db{LOCK_SUFFIX}").is_file()


@pytest.mark.slow
def test_concurrent_first_runs_on_a_fresh_server_experiment_all_land(
    mlflow_server: MlflowServer, tmp_path: Path
) -> None:
    """The same twelve against a real `mlflow server` (SQLite backend), into an experiment
    nobody has used: the server migrated its store itself when it started, so what is new here
    is the experiment and its first gold dataset, which all twelve create at once."""
    experiment = f"matrix-{uuid.uuid4().hex[:8]}"
    done = concurrent_scores(
        tmp_path, [mlflow_server.uri] * PROCESSES, [None] * PROCESSES, "--experiment", experiment
    )
    assert_all_landed(done, mlflow_server.uri, experiment, tmp_path)


# -- stores that cannot be opened --------------------------------------------------------------
@pytest.fixture(scope="module")
def made_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A current store holding one scored run (made once, by the CLI, in its own folder; tests
    copy it, so MLflow's cached engine for this path never sees their changes)."""
    db = tmp_path_factory.mktemp("made") / "mlflow.db"
    with contextlib.chdir(db.parent):  # the store's ./mlruns beside it
        code, _, err = cli(
            "score", GOLD, BASELINE, "--config", CONFIG, "--tracking-uri", f"sqlite:///{db}"
        )
    assert code == 0, err
    return db


def store_at(db: Path, revision: str) -> None:
    """A store created as MLflow creates one (its initial tables, then its migrations) but
    migrated only up to `revision`: where a migration that stopped after it leaves the store."""
    import sqlalchemy
    from alembic import command
    from mlflow.store.db.utils import _get_alembic_config
    from mlflow.store.tracking.dbmodels.initial_models import Base as InitialBase

    engine = sqlalchemy.create_engine(f"sqlite:///{db}")
    try:
        InitialBase.metadata.create_all(engine)
        config = _get_alembic_config(str(engine.url))  # type: ignore[no-untyped-call]
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, revision)
    finally:
        engine.dispose()


def interrupted_batch(db: Path) -> None:
    """Stopped inside the migration after 7f2a7d5fae7d: alembic's batch copy of ``params``
    (``_alembic_tmp_params``) made, the old table not yet replaced (what the twelve racing
    processes left, among other tables)."""
    store_at(db, "7f2a7d5fae7d")
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE _alembic_tmp_params (key VARCHAR(250), value VARCHAR(8000))")


def step_applied_twice(db: Path) -> None:
    """Another process added ``inputs.step`` (migration 6953534de441) but had not yet recorded
    the revision: the next migration fails on the duplicate column; no leftover table."""
    store_at(db, "400f98739977")
    with sqlite3.connect(db) as con:
        con.execute("ALTER TABLE inputs ADD COLUMN step BIGINT NOT NULL DEFAULT 0")


def truncated(made: Path) -> Callable[[Path], None]:
    def make(db: Path) -> None:
        shutil.copy(made, db)
        with db.open("r+b") as f:
            f.truncate(db.stat().st_size // 3)

    return make


def overwritten_middle(made: Path) -> Callable[[Path], None]:
    def make(db: Path) -> None:
        shutil.copy(made, db)
        with db.open("r+b") as f:
            f.seek(db.stat().st_size // 4)
            f.write(b"\xff" * 16384)

    return make


BROKEN: dict[str, tuple[str, str]] = {
    "random bytes": ("is not a SQLite database; " + RECOVER, ""),
    "text": ("is not a SQLite database; " + RECOVER, ""),
    "a folder": ("is not a file; point the tracking URI at a database file", ""),
    "truncated": ("is corrupt (database disk image is malformed); " + RECOVER, ""),
    "overwritten": ("is corrupt (", RECOVER),
    "interrupted migration": (
        "is half-migrated (schema revision 7f2a7d5fae7d, current {head}, leftover tables "
        "_alembic_tmp_params: a migration was interrupted or ran in several processes at once; "
        "it holds 0 run(s)); " + RECOVER,
        "",
    ),
    "a step applied twice": (
        "is half-migrated (schema revision 400f98739977, current {head}: a migration was "
        "interrupted or ran in several processes at once; it holds 0 run(s)); " + RECOVER,
        "",
    ),
}


@pytest.fixture
def break_store(made_store: Path) -> Callable[[str, Path], None]:
    makers: dict[str, Callable[[Path], object]] = {
        "random bytes": lambda db: db.write_bytes(os.urandom(5000)),
        "text": lambda db: db.write_text("not a database\n"),
        "a folder": lambda db: db.mkdir(),
        "truncated": truncated(made_store),
        "overwritten": overwritten_middle(made_store),
        "interrupted migration": interrupted_batch,
        "a step applied twice": step_applied_twice,
    }

    def make(kind: str, db: Path) -> None:
        db.parent.mkdir(parents=True, exist_ok=True)
        makers[kind](db)

    return make


def expected_line(kind: str, db: Path) -> tuple[str, str]:
    said, also = BROKEN[kind]
    return f"error: the MLflow store {db} " + said.format(head=head_revision()), also


@pytest.mark.parametrize("kind", BROKEN)
def test_a_broken_store_is_one_line_naming_it_and_the_way_out(
    kind: str, break_store: Callable[[str, Path], None], tmp_path: Path
) -> None:
    db = tmp_path / "store" / "mlflow.db"
    break_store(kind, db)
    before = db.read_bytes() if db.is_file() else None
    code, out, err = cli(
        "score", GOLD, BASELINE, "--config", CONFIG, "--tracking-uri", f"sqlite:///{db}"
    )
    assert code == 2 and out == ""
    line = one_error_line(err)
    start, also = expected_line(kind, db)
    assert line.startswith(start) and also in line, line
    if kind in ("random bytes", "text", "a folder"):  # refused before MLflow touched it
        assert (db.read_bytes() if db.is_file() else None) == before


def test_the_real_half_migrated_store_is_named_so(tmp_path: Path) -> None:
    """The state twelve unlocked processes left (reproduced with the unmodified CLI: schema
    7f2a7d5fae7d, three leftover ``_alembic_tmp_*`` tables), rebuilt the same way here."""
    db = tmp_path / "mlflow.db"
    interrupted_batch(db)
    with sqlite3.connect(db) as con:
        for table in ("runs", "latest_metrics"):
            con.execute(f"CREATE TABLE _alembic_tmp_{table} (x INTEGER)")
    code, _, err = cli("score", GOLD, BASELINE, "--tracking-uri", f"sqlite:///{db}")
    assert code == 2
    assert (
        "leftover tables _alembic_tmp_latest_metrics, _alembic_tmp_params, _alembic_tmp_runs"
        in (one_error_line(err))
    )


@pytest.fixture
def garbage_default_store(mlflow_env: Path) -> Iterator[Path]:
    """MLflow's default store in the working directory, holding random bytes."""
    db = mlflow_env / "mlflow.db"
    db.write_bytes(os.urandom(4096))
    yield db


def loop_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "loop"
    (folder / "01").mkdir(parents=True)
    shutil.copy(BASELINE, folder / "01" / "pred.jsonl")
    return folder


COMMANDS: dict[str, Callable[[Path], list[str]]] = {
    "score": lambda tmp: ["score", GOLD, BASELINE, "--config", CONFIG],
    "score --register": lambda tmp: ["score", GOLD, BASELINE, "--register", "m"],
    "score-iterations": lambda tmp: ["score-iterations", str(loop_folder(tmp)), "--gold", GOLD],
    "compare": lambda tmp: ["compare", "runs:/" + "a" * 32, "runs:/" + "b" * 32, "--min", "f1=0.5"],
    "promote": lambda tmp: ["promote", "m", "1", "--alias", "champion", "--min", "f1=0.5"],
    "demo": lambda tmp: ["demo"],
    "diff --log": lambda tmp: ["diff", GOLD, BASELINE, IMPROVED, "--log"],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_opens_the_default_store_through_the_check(
    command: str, garbage_default_store: Path, tmp_path: Path
) -> None:
    """Every command that touches the default store opens it the one way (the lock, the
    diagnosis): each says the same line about a broken one."""
    code, _, err = cli(*COMMANDS[command](tmp_path))
    assert code == 2
    line = one_error_line(err)
    assert (
        line
        == f"error: the MLflow store {garbage_default_store} is not a SQLite database; {RECOVER}"
    )


def test_the_python_api_raises_a_tracking_error(garbage_default_store: Path) -> None:
    with pytest.raises(TrackingError, match="is not a SQLite database; restore it"):
        log_report(evaluate(GOLD, BASELINE, CONFIG))


@pytest.mark.slow
def test_a_separate_sqlite_registry_is_opened_the_same_way(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``MLFLOW_REGISTRY_URI`` naming another SQLite file: it is created under its own lock, and
    a broken one is named like a broken tracking store."""
    registry = tmp_path / "registry.db"
    monkeypatch.setenv("MLFLOW_REGISTRY_URI", f"sqlite:///{registry}")
    tracking = f"sqlite:///{tmp_path / 'tracking.db'}"
    code, out, err = cli(
        "score", GOLD, BASELINE, "--tracking-uri", tracking, "--register", "m", "--format", "json"
    )
    assert code == 0, err
    assert (tmp_path / f"registry.db{LOCK_SUFFIX}").is_file()
    assert tables(registry) >= {"registered_models", "model_versions"}
    assert json.loads(out)["model_version"] == "1"

    broken = tmp_path / "broken-registry.db"
    broken.write_bytes(os.urandom(4096))
    monkeypatch.setenv("MLFLOW_REGISTRY_URI", f"sqlite:///{broken}")
    code, _, err = cli("score", GOLD, BASELINE, "--tracking-uri", tracking, "--register", "m")
    assert code == 2
    assert one_error_line(err) == (
        f"error: the MLflow store {broken} is not a SQLite database; {RECOVER}"
    )


# -- the lock itself ---------------------------------------------------------------------------
@contextlib.contextmanager
def holding_lock(db: Path) -> Iterator[None]:
    """Hold the store's lock as another process creating it would (flock on the lock file)."""
    db.parent.mkdir(parents=True, exist_ok=True)
    with open(db.with_name(db.name + LOCK_SUFFIX), "w") as f:
        f.write("ci-runner-7:4242\n")
        f.flush()
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


@pytest.mark.slow
def test_a_store_held_too_long_is_one_line_naming_the_holder(tmp_path: Path) -> None:
    db = tmp_path / "new" / "mlflow.db"
    with holding_lock(db):
        code, _, err = cli(
            "score", GOLD, BASELINE, "--tracking-uri", f"sqlite:///{db}", "--timeout", "1"
        )
    assert code == 2
    assert one_error_line(err) == (
        f"error: the MLflow store {db} was still being opened, created or migrated by another "
        "process (ci-runner-7:4242) after 1 s; wait for it to end or give a longer --timeout"
    )
    assert not db.exists()  # nothing was created behind the holder's back


def test_a_current_store_is_opened_without_waiting_for_the_lock(
    made_store: Path, tmp_path: Path
) -> None:
    """Once the store is at MLflow's schema nothing migrates it: runs do not queue for the lock
    (a holder that never lets go does not stop them)."""
    db = tmp_path / "mlflow.db"
    shutil.copy(made_store, db)
    with holding_lock(db):
        code, out, err = cli(
            "score", GOLD, BASELINE, "--config", CONFIG, "--tracking-uri", f"sqlite:///{db}",
            "--timeout", "1", "--format", "json",
        )  # fmt: skip
    assert code == 0, err
    assert (
        client_for(f"sqlite:///{db}").get_run(json.loads(out)["run_id"]).info.status == "FINISHED"
    )


@pytest.mark.slow
def test_a_store_created_before_with_an_older_schema_is_migrated_once(tmp_path: Path) -> None:
    """A consistent store at an older revision (an older MLflow made it) is not broken: the
    first run migrates it, under the lock, and logs."""
    db = tmp_path / "mlflow.db"
    store_at(db, "400f98739977")
    code, out, err = cli(
        "score", GOLD, BASELINE, "--tracking-uri", f"sqlite:///{db}", "--format", "json"
    )
    assert code == 0, err
    with sqlite3.connect(db) as con:
        (revision,) = con.execute("SELECT version_num FROM alembic_version").fetchone()
    assert revision == head_revision()
    assert (
        client_for(f"sqlite:///{db}").get_run(json.loads(out)["run_id"]).info.status == "FINISHED"
    )
