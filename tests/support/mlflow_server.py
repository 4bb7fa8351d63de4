"""A real ``mlflow server`` for the tests: started on 127.0.0.1 on a free port with a temporary
SQLite backend and artifact store, in its own process group (``mlflow server`` spawns uvicorn
workers that outlive a killed parent), and stopped by signalling the whole group. The fixtures
that start one (``mlflow_server``, ``start_server``) are in tests/conftest.py, which also fills
:data:`RUNNING`, the test being set up, run or torn down."""

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
from dataclasses import dataclass
from pathlib import Path

import pytest

SERVER_START_TIMEOUT = 120.0
SERVER_STOP_TIMEOUT = 15.0
MLFLOW = Path(sys.executable).with_name("mlflow")

RUNNING: list[pytest.Item] = []
"""The test being set up, run or torn down (innermost last; tests/conftest.py fills it)."""


def check_may_start_a_server() -> None:
    """Starting a server inside a test that is not marked slow is a mistake: it would put
    seconds into the quick loop. Fail with the fix instead."""
    if RUNNING and RUNNING[-1].get_closest_marker("slow") is None:
        raise RuntimeError(
            f"{RUNNING[-1].nodeid} starts an `mlflow server` but is not marked slow: "
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
