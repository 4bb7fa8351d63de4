"""Retake the README's MLflow UI screenshots from the current code and the installed MLflow.

    python docs/screenshots.py                 # writes docs/mlflow-ui-*.png, comparison-page.png
    python docs/screenshots.py --out /tmp/shots --chromium /usr/bin/chromium

Starts a real ``mlflow server`` on 127.0.0.1 (a free port, a temporary SQLite store and
artifact folder, its own process group), logs the demo into it with ``extract-mlflow demo
--tracking-uri``, and photographs MLflow's single-page app with headless Chromium
(``--virtual-time-budget`` lets the app fetch and render before the shot); then the comparison
page that ``extract-mlflow diff --format html`` writes for the invoice example. The whole process
group of the server is stopped afterwards, whatever happens. Nothing but 127.0.0.1 is
contacted. See docs/screenshots.md for what each picture must show.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parent
EXPERIMENT = "extract-mlflow-demo"
# Chromium reaches the server under this name (mapped to 127.0.0.1 by --host-resolver-rules):
# from localhost or 127.0.0.1 the MLflow UI opens its Assistant panel over the page on the
# first visit, and every screenshot is a first visit.
HOST = "mlflow-ui.test"
WINDOW = (1500, 950)


@dataclass(frozen=True)
class Shot:
    """One picture: its file name, the UI route (after ``#``, given the experiment id) or the
    local file it shows, and the window size."""

    name: str
    route: str
    window: tuple[int, int] = WINDOW


SHOTS = (
    # the training-runs view in chart mode: the demo's two runs, every metric family as a
    # chart section (field_f1/... first)
    Shot("mlflow-ui-field-charts.png", "/experiments/{exp}/runs?compareRunsMode=CHART"),
    # the evaluation-runs list: both runs with their dataset and metric columns
    Shot("mlflow-ui-evaluation-runs.png", "/experiments/{exp}/evaluation-runs"),
    # `extract-mlflow diff --format html` of the invoice example, baseline -> improved (a
    # self-contained page, opened as a file; no server involved)
    Shot("comparison-page.png", "comparison.html", (1000, 1300)),
)
EXAMPLE = DOCS.parent / "examples" / "invoices"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str, timeout: float = 2.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return bytes(resp.read())


@contextlib.contextmanager
def mlflow_server(root: Path, timeout: float = 120.0) -> Iterator[str]:
    """A ``mlflow server`` in `root` on a free 127.0.0.1 port; yields its URI and stops its
    whole process group (SIGTERM, then SIGKILL after 15 s) on exit."""
    port = free_port()
    mlflow = Path(sys.executable).with_name("mlflow")
    cmd = [
        str(mlflow) if mlflow.exists() else "mlflow",
        "server",
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
        "--allowed-hosts",
        f"127.0.0.1:{port},{HOST}:{port}",
        "--cors-allowed-origins",
        f"http://{HOST}:{port}",
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_TRACKING_")}
    env["MLFLOW_SERVER_ENABLE_JOB_EXECUTION"] = "false"
    with (root / "server.log").open("wb") as log:
        proc = subprocess.Popen(
            cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    uri = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"mlflow server exited with {proc.returncode}; see its log")
            with contextlib.suppress(urllib.error.URLError, OSError):
                if _get(uri + "/health") is not None:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"mlflow server at {uri} not healthy after {timeout:g} s")
            time.sleep(0.25)
        yield uri
    finally:
        _stop_group(proc)


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, 15.0), (signal.SIGKILL, 15.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            proc.poll()
            if not _group_alive(proc.pid):
                return
            time.sleep(0.1)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def experiment_id(uri: str, name: str) -> str:
    query = urllib.parse.urlencode({"experiment_name": name})
    body = _get(f"{uri}/api/2.0/mlflow/experiments/get-by-name?{query}", timeout=10)
    return str(json.loads(body)["experiment"]["experiment_id"])


def comparison_page(out: Path) -> Path:
    """The comparison page of the invoice example (baseline -> improved), written to `out`."""
    cmd = [sys.executable, "-m", "extract_mlflow", "diff", "gold.jsonl"]
    cmd += ["pred_baseline.jsonl", "pred_improved.jsonl", "--config", "config.toml"]
    cmd += ["--format", "html", "--out", str(out)]
    # run in the example folder so that the page names the files, not a path on this machine
    subprocess.run(cmd, check=True, cwd=EXAMPLE, timeout=300)
    return out


def screenshot(
    chromium: str, url: str, out: Path, profile: Path, budget_ms: int, window: tuple[int, int]
) -> None:
    """One headless Chromium screenshot of `url` at the window size, into `out`."""
    cmd = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        f"--host-resolver-rules=MAP {HOST} 127.0.0.1",
        f"--window-size={window[0]},{window[1]}",
        f"--virtual-time-budget={budget_ms}",
        f"--screenshot={out}",
        url,
    ]
    subprocess.run(cmd, check=True, capture_output=True, timeout=180)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DOCS, help="folder for the PNGs")
    parser.add_argument("--chromium", default="/usr/bin/chromium", help="Chromium binary")
    parser.add_argument(
        "--budget-ms", type=int, default=25000, help="virtual time the page gets to render"
    )
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="extract-mlflow-shots-") as tmp:
        root = Path(tmp)
        with mlflow_server(root) as uri:
            demo = [sys.executable, "-m", "extract_mlflow", "demo", "--tracking-uri", uri]
            subprocess.run(demo, check=True, cwd=root, timeout=600)
            exp = experiment_id(uri, EXPERIMENT)
            base = uri.replace("127.0.0.1", HOST)
            for shot in SHOTS:
                if shot.route.endswith(".html"):
                    url = comparison_page(root / shot.route).as_uri()
                else:
                    url = f"{base}/#{shot.route.format(exp=exp)}"
                target = args.out / shot.name
                profile = root / "chromium"
                screenshot(args.chromium, url, target, profile, args.budget_ms, shot.window)
                print(f"{target}  <-  {url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
