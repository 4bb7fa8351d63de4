"""Field-scoring benchmark: throughput on many invoices, latency on long shuffled lists.

    python benchmarks/bench_fields.py [--docs N] [--seed S] [--repeat R] [--long 200,600,1000]

Prints figures and exits 0; it never asserts timings (see benchmarks/README.md for the targets).
Everything it writes goes to a temporary directory that is removed afterwards.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synth

import extract_mlflow
from extract_mlflow import Config
from extract_mlflow.evaluation.evaluate import score_sets
from extract_mlflow.io.loading import (
    gold_from_rows,
    load_gold,
    load_predictions,
    predictions_from_rows,
)

T = TypeVar("T")


def _best_of(repeat: int, fn: Callable[[], T]) -> tuple[float, T]:
    """(best wall time, last result) of `repeat` calls. The garbage collector stays on (as in
    real use); a full collection before each call keeps one call's garbage out of the next."""
    best = float("inf")
    result: T | None = None
    for _ in range(repeat):
        result = None
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    assert result is not None
    return best, result


def _cli_command() -> list[str]:
    exe = Path(sys.executable).with_name("extract-mlflow")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("extract-mlflow")
    return [found] if found else [sys.executable, "-m", "extract_mlflow"]


def _counts_line(label: str, tp: int, fp: int, fn: int) -> str:
    return f"{label:<10} TP={tp:<8} FP={fp:<8} FN={fn:<8}"


def bench_set(n_docs: int, seed: int, repeat: int, tmp: Path, cfg: Config) -> None:
    print(f"== {n_docs} documents (seed {seed}): 12 scalars + vendor{{4}} + 5 line items x 5")
    t0 = time.perf_counter()
    gold_rows, pred_rows, tally = synth.make_dataset(n_docs, seed)
    gen_s = time.perf_counter() - t0
    gold_path, pred_path = synth.write_dataset(gold_rows, pred_rows, tmp)
    del gold_rows, pred_rows
    size_mb = (gold_path.stat().st_size + pred_path.stat().st_size) / 1e6
    print(f"generate          {gen_s:8.3f} s   (written: {size_mb:.1f} MB of JSONL)")
    print(f"generator tally   {tally.to_dict()}")

    t0 = time.perf_counter()
    gs = load_gold(gold_path, cfg.id_key)
    ps = load_predictions(pred_path, cfg.id_key)
    load_s = time.perf_counter() - t0
    print(f"load (both files) {load_s:8.3f} s   (excluded from documents/s)")

    best, report = _best_of(repeat, lambda: score_sets(gs, ps, cfg))
    n = len(gs.docs)
    print(
        f"score_sets        {best:8.3f} s   best of {repeat}  ->  {n / best:,.0f} documents/s"
        "   (target >= 10,000/s)"
    )

    m = report.micro
    print(_counts_line("expected", tally.tp, tally.fp, tally.fn))
    print(_counts_line("scored", m.tp, m.fp, m.fn))
    same = (m.tp, m.fp, m.fn) == (tally.tp, tally.fp, tally.fn)
    print(
        f"counts match generator: {'yes' if same else 'NO'}   micro F1 {m.f1:.4f}"
        f" (expected {tally.expected_f1:.4f})"
    )

    cmd = [
        *_cli_command(),
        "score",
        str(gold_path),
        str(pred_path),
        "--format",
        "json",
        "--out",
        os.devnull,
    ]
    if cfg.match_threshold:
        config_path = tmp / "config.toml"
        config_path.write_text(f"match_threshold = {cfg.match_threshold!r}\n", encoding="utf-8")
        cmd += ["--config", str(config_path)]
    help_text = subprocess.run(
        [*_cli_command(), "score", "--help"], capture_output=True, text=True, check=False
    ).stdout
    if "--no-log" in help_text:
        cmd.append("--no-log")
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    cli_s = time.perf_counter() - t0
    shown = " ".join(Path(c).name if i == 0 else c for i, c in enumerate(cmd))
    print(f"whole CLI         {cli_s:8.3f} s   exit {proc.returncode}   (target <= 3 s)")
    print(f"  {shown}")
    if proc.returncode != 0:
        print(f"  stderr: {proc.stderr.strip()[:500]}")


def bench_long(sizes: list[int], seed: int, repeat: int, cfg: Config) -> None:
    print(
        "== single long documents: shuffled line items, 10% of values changed"
        " (target <= 1 s each, F1 = unchanged share)"
    )
    for n_items in sizes:
        gold, pred, tally = synth.make_long_document(n_items, seed)
        gs = gold_from_rows([gold], cfg.id_key)
        ps = predictions_from_rows([pred], cfg.id_key)
        t0 = time.perf_counter()
        score_sets(gs, ps, cfg)
        first = time.perf_counter() - t0
        best, report = _best_of(repeat, functools.partial(score_sets, gs, ps, cfg))
        m = report.micro
        share = tally.unchanged_share or 0.0
        ok = (m.tp, m.fp, m.fn) == (tally.tp, tally.fp, tally.fn)
        ms, first_ms = best * 1000, first * 1000
        print(
            f"{n_items:>5} items {ms:8.1f} ms  best of {repeat} (first {first_ms:.1f} ms)"
            f"   F1 {m.f1:.4f}  unchanged share {share:.4f}"
            f"  ({tally.kept} kept / {tally.changed} changed; counts {'match' if ok else 'DIFFER'})"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=10_000, help="documents in the set (10000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="timed repeats, best kept (3)")
    ap.add_argument("--long", default="200,600,1000", help="line items of the long documents")
    ap.add_argument(
        "--match-threshold",
        type=float,
        default=0.0,
        help="config match_threshold (0); above 0 heavily changed items stay unpaired, so the"
        " counts no longer equal the generator's tally",
    )
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.long.split(",") if s.strip()]
    cfg = Config(match_threshold=args.match_threshold)

    print(
        f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs;"
        f" extract_mlflow {extract_mlflow.__version__} from"
        f" {Path(extract_mlflow.__file__).resolve().parent}"
    )
    with tempfile.TemporaryDirectory(prefix="bench_fields_") as d:
        bench_set(args.docs, args.seed, args.repeat, Path(d), cfg)
    print()
    bench_long(sizes, args.seed, args.repeat, cfg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
