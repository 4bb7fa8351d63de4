"""The suite's own rules (tests/conftest.py), checked on sample test files run by a separate
pytest: every server test is slow, so the quick loop (``-m "not slow"``) starts no server; a
server started by a test not marked slow fails; an unreachable server is a closed port."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.mlflow_server import closed_port_uri

TESTS = Path(__file__).resolve().parent
CONFTEST = TESTS / "conftest.py"
SUPPORT = TESTS / "support"

SAMPLE = """
import pytest
from support.mlflow_server import MlflowServer

def test_plain():
    pass

@pytest.mark.server
def test_marked_server():
    raise AssertionError("never run in the quick loop")

def test_session_server(mlflow_server):
    raise AssertionError("never run in the quick loop")

def test_own_server(start_server):
    raise AssertionError("never run in the quick loop")

@pytest.fixture
def world(mlflow_server):
    return mlflow_server

def test_through_a_fixture(world):
    raise AssertionError("never run in the quick loop")

def test_sneaky(tmp_path):
    MlflowServer.start(tmp_path).stop()
"""


@pytest.fixture(scope="module")
def quick_loop(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """The sample run as the quick loop, by a separate pytest next to a copy of our conftest
    and its support package."""
    folder = tmp_path_factory.mktemp("suite-rules")
    (folder / "conftest.py").write_text(CONFTEST.read_text(encoding="utf-8"), encoding="utf-8")
    shutil.copytree(SUPPORT, folder / "support", ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "test_sample.py").write_text(textwrap.dedent(SAMPLE), encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_the_quick_loop_deselects_every_server_test(
    quick_loop: subprocess.CompletedProcess[str],
) -> None:
    assert "1 failed, 1 passed, 4 deselected" in quick_loop.stdout, quick_loop.stdout


@pytest.mark.slow
def test_a_server_started_by_a_test_not_marked_slow_fails(
    quick_loop: subprocess.CompletedProcess[str],
) -> None:
    assert quick_loop.returncode == 1, quick_loop.stdout + quick_loop.stderr
    assert "test_sneaky starts an `mlflow server` but is not marked slow" in quick_loop.stdout


def test_a_closed_port_refuses_connections() -> None:
    port = int(closed_port_uri().rsplit(":", 1)[1])
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


@pytest.mark.slow
def test_no_test_module_imports_another() -> None:
    """Shared helpers live in tests/support/ (or are fixtures): no test module imports a test
    module, so each file can move or run alone."""
    import ast

    tests = {p.stem for p in TESTS.rglob("test_*.py")}
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                if name.split(".")[-1] in tests or name.split(".")[0] in tests:
                    found.append(f"{path.relative_to(TESTS)}:{node.lineno} imports {name}")
    assert found == []
