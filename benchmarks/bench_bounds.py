"""Hostile inputs against the bounds of the CLI: garbage lines, flipped documents, --workers.

    python benchmarks/bench_bounds.py                         # 3,000,000 lines, 10,000 flips
    python benchmarks/bench_bounds.py --garbage 300000 --flips 2000 --workers 1000

Prints figures and exits 0; it never asserts anything (the bounds are tested in
tests/views/test_listings.py and tests/evaluation/test_workers.py). Each case runs the real CLI
(``python -m extract_mlflow``) as a child process and prints its wall time, peak resident
memory and the size of what it wrote:

- **garbage**: 100 synthetic invoices predicted, then ``--garbage`` lines that are not JSON
  (prediction lines without a usable id), scored with ``--format table`` and ``md``
  (``summary.md``'s text) and ``json``;
- **flips**: ``--flips`` synthetic invoices; A is the gold set itself (every document fully
  correct), B noisy predictions (nearly every document flips), diffed with ``--format
  html``, ``table`` and ``md``;
- **workers**: ``score --workers N`` on the flips' gold and B, with the most worker processes
  seen at once (Linux: children in /proc, polled every 20 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth import make_dataset, write_jsonl

CLI = [sys.executable, "-m", "extract_mlflow"]

_MEASURED = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
    "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(time.perf_counter() - t, rss, code)\n"
)
"""runs a command as its only child: its peak RSS is then the children's maximum"""


def measured(args: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak RSS in MB, exit code) of the CLI with `args`."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURED, *CLI, *args], capture_output=True, text=True, check=False
    )
    seconds, rss_kb, code = done.stdout.split()
    return float(seconds), int(rss_kb) / 1024, int(code)


def report(name: str, args: list[str], out: Path) -> None:
    seconds, rss, code = measured([*args, "--out", str(out)])
    size = out.stat().st_size if out.exists() else 0
    print(f"{name:<28} {seconds:7.2f} s  peak RSS {rss:7.1f} MB  output {size:>12,} B  exit {code}")


def garbage_case(folder: Path, lines: int) -> None:
    gold, pred, _ = make_dataset(100, 1)
    gold_path = write_jsonl(gold, folder / "gold.jsonl")
    pred_path = folder / "garbage.jsonl"
    with pred_path.open("w", encoding="utf-8") as f:
        f.writelines(json.dumps(d) + "\n" for d in pred)
        f.writelines(f"garbage line {n} {{not json\n" for n in range(lines))
    print(f"garbage: 100 documents and {lines:,} lines without a usable id")
    for fmt in ("table", "md", "json"):
        args = ["score", str(gold_path), str(pred_path), "--no-log", "--format", fmt]
        report(f"  score --format {fmt}", args, folder / f"garbage.{fmt}")


def flips_case(folder: Path, docs: int) -> tuple[Path, Path]:
    gold, pred, _ = make_dataset(docs, 2)
    gold_path = write_jsonl(gold, folder / "flips_gold.jsonl")
    pred_path = write_jsonl(pred, folder / "flips_b.jsonl")
    print(f"flips: {docs:,} documents, A = gold, B noisy")
    for fmt in ("html", "table", "md"):
        args = ["diff", str(gold_path), str(gold_path), str(pred_path), "--format", fmt]
        report(f"  diff --format {fmt}", args, folder / f"flips.{fmt}")
    return gold_path, pred_path


def _children(pid: int) -> int:
    n = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        n += int(fields[1]) == pid and fields[0] != "Z"
    return n


def workers_case(gold: Path, pred: Path, workers: int) -> None:
    command = [*CLI, "score", str(gold), str(pred), "--no-log", "--workers", str(workers)]
    start = time.perf_counter()
    proc = subprocess.Popen(
        [*command, "--out", os.devnull], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    most = 0
    while proc.poll() is None:
        if sys.platform.startswith("linux"):
            most = max(most, _children(proc.pid))
        time.sleep(0.02)
    warning = proc.stderr.read().decode().strip() if proc.stderr else ""
    seconds = time.perf_counter() - start
    print(f"workers: score --workers {workers:,}: {seconds:.2f} s, exit {proc.returncode}")
    print(f"  worker processes seen at once: {most}; stderr: {warning or '-'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--garbage", type=int, default=3_000_000, help="garbage prediction lines")
    ap.add_argument("--flips", type=int, default=10_000, help="documents of the diff")
    ap.add_argument("--workers", type=int, default=100_000, help="--workers asked for")
    args = ap.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        garbage_case(folder, args.garbage)
        gold, pred = flips_case(folder, args.flips)
        workers_case(gold, pred, args.workers)


if __name__ == "__main__":
    main()
