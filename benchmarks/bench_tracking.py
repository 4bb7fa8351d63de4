"""MLflow logging benchmark: time to log an evaluation to a local `mlflow server`, beyond scoring.

    python benchmarks/bench_tracking.py [--docs 10000] [--fields 200] [--repeat 3]

Prints figures and exits 0; it never asserts timings. Targets (from the issue): logging a
10,000-document evaluation to a local server ≤ 3 s beyond scoring; a 200-field run logs all its
metrics in ≤ 2 batched calls; ``extract-mlflow --help`` ≤ 0.5 s. It starts its own server on a
free port (temporary SQLite store and artifact root, its own process group) and stops the whole
group at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synth

from extract_mlflow import evaluate
from extract_mlflow.report import Report
from extract_mlflow.tracking.log import log_report


def help_time(repeat: int) -> float:
    """Best wall time of ``extract-mlflow --help`` (a fresh interpreter each time)."""
    exe = Path(sys.executable).with_name("extract-mlflow")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "extract_mlflow"]
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([*cmd, "--help"], check=True, capture_output=True)
        best = min(best, time.perf_counter() - t0)
    return best


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def mlflow_server(root: Path) -> Iterator[str]:
    """A local `mlflow server` for the duration; the whole process group is stopped after."""
    port = _free_port()
    mlflow_bin = Path(sys.executable).with_name("mlflow")
    cmd = [
        str(mlflow_bin), "server", "--host", "127.0.0.1", "--port", str(port),
        "--backend-store-uri", f"sqlite:///{root / 'mlflow.db'}",
        "--serve-artifacts", "--artifacts-destination", str(root / "artifacts"),
        "--workers", "1",
    ]  # fmt: skip
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    log = (root / "server.log").open("wb")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=log, start_new_session=True)
    uri = f"http://127.0.0.1:{port}"
    try:
        t0 = time.perf_counter()
        _wait_healthy(uri, proc)
        print(f"server        healthy after {time.perf_counter() - t0:.1f} s at {uri}")
        yield uri
    finally:
        _stop_group(proc)


def _wait_healthy(uri: str, proc: subprocess.Popen[bytes], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(uri + "/health", timeout=1) as resp,
        ):
            if resp.status == 200:
                return
        time.sleep(0.25)
    raise RuntimeError(f"mlflow server at {uri} did not become healthy")


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=15)
            return
        except subprocess.TimeoutExpired:
            continue


def count_batches() -> list[int]:
    """Patch the REST store to record the metrics of each log_batch request."""
    from mlflow.store.tracking.rest_store import RestStore

    calls: list[int] = []
    original = RestStore.log_batch

    def spy(self: Any, run_id: str, metrics: Any, params: Any, tags: Any) -> Any:
        calls.append(len(metrics))
        return original(self, run_id, metrics, params, tags)

    RestStore.log_batch = spy  # type: ignore[method-assign]
    return calls


def wide_report(n_fields: int) -> Report:
    gold = [{"id": f"d{d}", **{f"f{i:03d}": i + d for i in range(n_fields)}} for d in range(5)]
    return evaluate(gold, [{**g, "f000": -1} for g in gold])


def bench_log(uri: str, report: Report, label: str, repeat: int, calls: list[int]) -> None:
    best = float("inf")
    for _ in range(repeat):
        calls.clear()
        t0 = time.perf_counter()
        log_report(report, tracking_uri=uri, experiment="bench", run_name=label)
        best = min(best, time.perf_counter() - t0)
    print(
        f"{label:<13} log_report best of {repeat}: {best:.2f} s "
        f"({len(report.metrics())} metrics in {len(calls)} log_batch request(s))"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--docs", type=int, default=10_000)
    ap.add_argument("--fields", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    print(f"--help        best of {args.repeat}: {help_time(args.repeat):.2f} s (target ≤ 0.5 s)")
    with tempfile.TemporaryDirectory(prefix="bench-tracking-") as tmp:
        root = Path(tmp)
        gold, pred, _ = synth.make_dataset(args.docs, seed=0)
        gold_path, pred_path = synth.write_dataset(gold, pred, root / "data")
        t0 = time.perf_counter()
        report = evaluate(gold_path, pred_path)
        print(
            f"scoring       {args.docs} documents: {time.perf_counter() - t0:.2f} s (not logging)"
        )
        t0 = time.perf_counter()
        import mlflow  # noqa: F401  (the one-off import cost, reported apart)

        print(f"import mlflow {time.perf_counter() - t0:.2f} s (once per process)")
        calls = count_batches()
        (root / "server").mkdir()
        with mlflow_server(root / "server") as uri:
            bench_log(uri, report, f"{args.docs} docs", args.repeat, calls)
            bench_log(uri, wide_report(args.fields), f"{args.fields} fields", args.repeat, calls)
    print("targets: 10,000 documents ≤ 3 s beyond scoring; 200 fields in ≤ 2 batched calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
