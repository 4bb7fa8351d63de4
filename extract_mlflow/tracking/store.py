"""The embedded SQLite store: created and migrated by one process at a time, and a broken one
named as such.

MLflow creates a SQLite tracking store, and migrates it to the current schema, the first time a
process opens it, with nothing to stop a second process doing the same meanwhile: twelve CI jobs
that log into a new ``mlflow.db`` at once run twelve migrations against each other, all fail
(``table _alembic_tmp_params already exists``) and leave the store half-migrated. While MLflow
opens a SQLite file store that is not at its current schema (new, or made by an older MLflow),
:func:`opening` holds an exclusive lock (``fcntl.flock``) on ``<database>.lock`` beside it: the
first process creates and migrates the store, the others wait and find it current. A current
store, which MLflow only reads when it opens it, takes no lock. Other stores (a server,
PostgreSQL, MySQL, an in-memory SQLite database) are opened as before. On a platform without
``fcntl`` (Windows) there is no lock.

A store MLflow cannot open (not a SQLite file, a corrupt one, one left half-migrated) is a
:class:`~extract_mlflow.errors.TrackingError` in one line that says what is wrong and how to
recover, never the database driver's error.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..errors import ExtractMlflowError, TrackingError

if TYPE_CHECKING:
    import sqlite3

LOCK_SUFFIX = ".lock"
SQLITE_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""
POLL_SECONDS = 0.05
"""How often a process waiting for the lock tries again."""
RECOVER = "restore it from a backup, or move it aside and run again to create a new store"


def sqlite_path(uri: str) -> Path | None:
    """The database file of a ``sqlite:`` tracking URI (absolute, symlinks resolved), else None:
    other stores, and in-memory or ``file:`` URI databases, which take no lock.

    >>> sqlite_path("sqlite:////tmp/ci/mlflow.db")
    PosixPath('/tmp/ci/mlflow.db')
    >>> sqlite_path("sqlite:///:memory:"), sqlite_path("http://127.0.0.1:5000")
    (None, None)
    """
    if urlsplit(uri).scheme.lower() != "sqlite":
        return None
    from sqlalchemy.engine import make_url

    database = make_url(uri).database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database).resolve()


@contextlib.contextmanager
def opening(uri: str, timeout: float) -> Iterator[None]:
    """Run the block, which opens the store at `uri` (``MlflowClient(uri)``), so that it is
    created and migrated once: when the SQLite file store at `uri` is not at MLflow's current
    schema, the block runs holding its lock (waiting at most `timeout` seconds for another
    process's creation or migration), unless that process made it current meanwhile. A store
    that cannot be opened is a TrackingError saying what is wrong with it. Not a SQLite file
    store: the block runs as it is."""
    db = sqlite_path(uri)
    if db is None:
        yield
        return
    refuse_non_database(db)
    head = current_revision()
    with contextlib.ExitStack() as lock:
        if schema_revision(db) != head:
            lock.enter_context(_locked(db, timeout))
            if schema_revision(db) == head:  # another process made it current meanwhile
                lock.close()
        try:
            yield
        except ExtractMlflowError:
            raise
        except Exception as exc:
            raise broken_store(uri, db, exc, head) from exc


@functools.cache
def current_revision() -> str:
    """The schema revision this MLflow migrates a store to. Also imports MLflow's SQL store
    before any lock is taken: seconds on a busy machine, which need not be spent in turn."""
    import mlflow.store.tracking.sqlalchemy_store  # noqa: F401
    from mlflow.store.db.utils import _get_latest_schema_revision

    return str(_get_latest_schema_revision())  # type: ignore[no-untyped-call]


def schema_revision(db: Path) -> str | None:
    """The schema revision the store `db` records (MLflow migrates it to the current one when
    it opens it), or None: no store yet, no revision, or it cannot be read right now."""
    import sqlite3

    if not db.is_file() or db.stat().st_size == 0:
        return None
    try:
        with contextlib.closing(
            sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=0)
        ) as con:
            row = con.execute("SELECT version_num FROM alembic_version").fetchone()
    except sqlite3.Error:  # no such table, busy (being migrated), corrupt: MLflow opens it locked
        return None
    return str(row[0]) if row else None


def refuse_non_database(db: Path) -> None:
    """A TrackingError when `db` exists but cannot be a SQLite database (a folder, a file of
    other bytes), before MLflow tries it (it retries a folder for 100 s). An empty
    file is a new database."""
    if not db.exists():
        return
    if not db.is_file():
        raise TrackingError(
            f"the MLflow store {db} is not a file; point the tracking URI at a database file"
        )
    with db.open("rb") as f:
        head = f.read(len(SQLITE_HEADER))
    if head and head != SQLITE_HEADER:
        raise TrackingError(f"the MLflow store {db} is not a SQLite database; {RECOVER}")


@contextlib.contextmanager
def _locked(db: Path, timeout: float) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # Windows: MLflow's own first-use lock is Unix-only too
        yield
        return
    lock = db.with_name(db.name + LOCK_SUFFIX)
    try:
        db.parent.mkdir(parents=True, exist_ok=True)  # as MLflow would, to create the store
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise TrackingError(f"cannot lock the MLflow store {db}: {lock}: {exc.strerror}") from None
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "?"
                    raise TrackingError(
                        f"the MLflow store {db} was still being opened, created or migrated by "
                        f"another process ({holder}) after {timeout:g} s; wait for it to end or "
                        f"give a longer --timeout"
                    ) from None
                time.sleep(POLL_SECONDS)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{socket.gethostname()}:{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock; the file stays (removing it would race a waiter)


def broken_store(uri: str, db: Path, exc: Exception, head: str) -> TrackingError:
    """Why MLflow could not open the SQLite store `db` (`exc`; `head`: MLflow's current schema
    revision), with the way out, in one line.
    Read with Python's own sqlite3, read-only: a corrupt file, a half-migrated schema (an
    interrupted migration's ``_alembic_tmp_*`` tables, or a failed migration that stopped short
    of the current revision), else MLflow's or the database's own message."""
    import sqlite3

    from .client import one_line, redact

    try:
        with contextlib.closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)) as con:
            (check,) = con.execute("PRAGMA quick_check(1)").fetchone()
            tables = {row[0] for row in con.execute("SELECT name FROM sqlite_master")}
            revision = _one(con, "SELECT version_num FROM alembic_version", tables)
            runs = _one(con, "SELECT count(*) FROM runs", tables)
    except sqlite3.Error as err:
        return TrackingError(f"the MLflow store {db} is corrupt ({err}); {RECOVER}")
    if check != "ok":
        return TrackingError(f"the MLflow store {db} is corrupt ({check}); {RECOVER}")
    from mlflow.exceptions import MlflowException

    leftovers = sorted(t for t in tables if t.startswith("_alembic_tmp_"))
    failed_migration = not isinstance(exc, MlflowException) and bool(tables) and revision != head
    if leftovers or failed_migration:
        left = f", leftover tables {', '.join(leftovers)}" if leftovers else ""
        held = f"; it holds {runs} run(s)" if runs is not None else ""
        return TrackingError(
            f"the MLflow store {db} is half-migrated (schema revision {revision}, current "
            f"{head}{left}: a migration was interrupted or ran in several processes at "
            f"once{held}); {RECOVER}"
        )
    cause = getattr(exc, "orig", None) or exc  # SQLAlchemy's errors wrap the driver's
    return TrackingError(f"MLflow tracking at {redact(uri)}: {one_line(cause)}")


def _one(con: sqlite3.Connection, query: str, tables: set[str]) -> object:
    """The single value of `query`, or None when the table it reads is missing or empty."""
    if query.rsplit(" ", 1)[-1] not in tables:
        return None
    row = con.execute(query).fetchone()
    return row[0] if row else None
