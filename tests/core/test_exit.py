"""The CLI's quick exit (core.runtime.exit_now): the status, the streams and the atexit callbacks
of a normal exit, without the interpreter's teardown; a normal exit while another thread runs."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_status_streams_and_atexit_callbacks(tmp_path: Path) -> None:
    """What a normal exit guarantees: the status, every byte written to stdout and stderr
    (buffered, not flushed by the caller), and the atexit callbacks, in their order."""
    done = run_python(
        """
        import atexit, sys
        from extract_mlflow.core.runtime import exit_now
        atexit.register(print, "second")
        atexit.register(print, "first")
        sys.stdout.write("x" * 200_000)
        sys.stderr.write("to stderr")
        exit_now(3)
        print("never")
        """,
        tmp_path,
    )
    assert done.returncode == 3
    assert done.stdout == "x" * 200_000 + "first\nsecond\n"
    assert done.stderr == "to stderr"


def test_none_and_message_codes(tmp_path: Path) -> None:
    """sys.exit's rules: None is 0; a message goes to stderr with status 1."""
    ok = run_python("from extract_mlflow.core.runtime import exit_now; exit_now(None)", tmp_path)
    assert (ok.returncode, ok.stderr) == (0, "")
    said = run_python("from extract_mlflow.core.runtime import exit_now; exit_now('no')", tmp_path)
    assert (said.returncode, said.stderr) == (1, "no\n")


def test_another_thread_is_waited_for(tmp_path: Path) -> None:
    """With another (non-daemon) thread running, the exit is Python's own: it waits for it."""
    done = run_python(
        """
        import threading, time
        from extract_mlflow.core.runtime import exit_now
        def late():
            time.sleep(0.3)
            print("thread done", flush=True)
        threading.Thread(target=late).start()
        exit_now(4)
        """,
        tmp_path,
    )
    assert (done.returncode, done.stdout) == (4, "thread done\n")


def test_the_cli_exits_with_its_status_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    """`python -m extract_mlflow`: a score exits 0 with its whole JSON on stdout, a bad file 2
    with its message; the spilled counts' temporary files are gone after both."""
    gold, pred = EXAMPLES / "invoices" / "gold.jsonl", EXAMPLES / "invoices" / "pred_baseline.jsonl"
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    cmd = [sys.executable, "-m", "extract_mlflow", "score", str(gold), str(pred)]
    ok = subprocess.run([*cmd, "--format", "json", "--no-log"], capture_output=True, env=env)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.rstrip().endswith(b"}") and b'"documents": 10' in ok.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a"}\n[1]\n')
    failed = subprocess.run(
        [*cmd[:-2], str(bad), str(pred), "--no-log"], capture_output=True, env=env
    )
    assert failed.returncode == 2 and b"bad.jsonl:2" in failed.stderr
    assert not list(tmp_path.glob("extract_mlflow-*")), list(tmp_path.iterdir())


def test_the_cli_runs_without_the_cyclic_collector(tmp_path: Path) -> None:
    """`run` switches the collector off for the command (the atexit callback sees it off),
    and the command still does its work."""
    done = run_python(
        """
        import atexit, gc, sys
        from extract_mlflow.__main__ import run
        atexit.register(lambda: print("collector on:", gc.isenabled()))
        sys.argv = ["extract-mlflow", "--help"]
        run()
        """,
        tmp_path,
    )
    assert done.returncode == 0 and "Usage: extract-mlflow" in done.stdout
    assert done.stdout.rstrip().endswith("collector on: False")
