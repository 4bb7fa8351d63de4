"""Compare benchmark: time to compare two runs of 10,000 documents with 1000 bootstrap resamples.

    python benchmarks/bench_compare.py [--docs 10000] [--fields 40] [--resamples 1000] [--repeat 3]

Prints figures and exits 0; it never asserts timings. Target (from the issue): comparing two
10,000-document runs with 1000 resamples in ≤ 2 s once the artifacts are downloaded, that is
from the two metric dicts and the two ``documents.parquet`` frames in memory to a finished
:class:`~extract_mlflow.compare.Comparison` (bootstrap, flips, regressed documents, gates).

The two runs are synthetic counts frames built directly with numpy (the shape of
``report_frame(report, "counts")``): every document has ``--fields`` fields with 0–3 gold leaves
each; the baseline gets 88 % of leaves right, the candidate 87 %, with independent errors.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from typing import Any

import numpy as np
import pandas as pd

from extract_mlflow.comparison import build_comparison
from extract_mlflow.core.keys import metric_key
from extract_mlflow.evaluation.paired import paired_bootstrap
from extract_mlflow.gates import Gate
from extract_mlflow.views.comparison import checks_text


def counts_frame(
    gold: np.ndarray, accuracy: float, rng: np.random.Generator, paths: list[str]
) -> pd.DataFrame:
    """A counts frame for gold leaf counts `gold` (documents × fields) at a given accuracy."""
    tp = rng.binomial(gold, accuracy)
    wrong = gold - tp
    fp_share = rng.binomial(wrong, 0.6)  # wrong values (FP + FN); the rest are missing (FN)
    fp = fp_share + rng.binomial(1, 0.02, gold.shape)  # a few hallucinated values
    fn = wrong
    n = gold.shape[0]
    data: dict[str, Any] = {
        "id": [f"doc-{i:06d}" for i in range(n)],
        "status": np.where(rng.random(n) < 0.01, "parse_failure", "scored"),
        "tp": tp.sum(axis=1),
        "fp": fp.sum(axis=1),
        "fn": fn.sum(axis=1),
    }
    for j, p in enumerate(paths):
        data[f"field_tp/{p}"] = tp[:, j]
        data[f"field_fp/{p}"] = fp[:, j]
        data[f"field_fn/{p}"] = fn[:, j]
    return pd.DataFrame(data)


def metrics_of(frame: pd.DataFrame, paths: list[str]) -> dict[str, float]:
    """The logged metrics of a counts frame (as ``Report.metrics()`` would give them)."""

    def f1(tp: float, fp: float, fn: float) -> float:
        return 2 * tp / (2 * tp + fp + fn)

    tp, fp, fn = (float(frame[c].sum()) for c in ("tp", "fp", "fn"))
    out = {
        "precision": tp / (tp + fp),
        "recall": tp / (tp + fn),
        "f1": f1(tp, fp, fn),
        "parse_failure_rate": float((frame["status"] == "parse_failure").mean()),
        "documents": float(len(frame)),
    }
    field_f1 = []
    for p in paths:
        s = [float(frame[f"field_{k}/{p}"].sum()) for k in ("tp", "fp", "fn")]
        out[metric_key("field_f1", p)] = f1(*s)
        out[metric_key("field_precision", p)] = s[0] / (s[0] + s[1])
        out[metric_key("field_recall", p)] = s[0] / (s[0] + s[2])
        field_f1.append(out[metric_key("field_f1", p)])
    out["macro_f1"] = sum(field_f1) / len(field_f1)
    return out


def best_of(repeat: int, func: Any) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = func()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--fields", type=int, default=40)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    paths = [f"field_{j:02d}" for j in range(args.fields // 2)]
    paths += [f"line_items[].col_{j:02d}" for j in range(args.fields - len(paths))]
    gold = rng.integers(0, 4, size=(args.docs, args.fields))
    base = counts_frame(gold, 0.88, rng, paths)
    cand = counts_frame(gold, 0.87, rng, paths)
    base_m, cand_m = metrics_of(base, paths), metrics_of(cand, paths)
    gates = [
        Gate(metric="f1", threshold=0.8, max_drop=0.005, significant=True),
        Gate(metric="field_f1/*", max_drop=0.02, significant=True),
        Gate(metric="parse_failure_rate", max_drop=0.005),
    ]

    print(f"python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs")
    print(
        f"runs: {args.docs:,} documents × {args.fields} fields "
        f"({base.shape[1]} columns per frame), {args.resamples} resamples, seed {args.seed}"
    )
    boot_time, boot = best_of(
        args.repeat,
        lambda: paired_bootstrap(base, cand, resamples=args.resamples, seed=args.seed),
    )
    print(
        f"paired_bootstrap: {boot_time:.3f} s best of {args.repeat} ({len(boot.intervals)} metrics)"
    )
    total, result = best_of(
        args.repeat,
        lambda: build_comparison(
            base_m,
            cand_m,
            base,
            cand,
            gates,
            seed=args.seed,
            resamples=args.resamples,
            baseline_signature="same",
            candidate_signature="same",
        ),
    )
    print(f"build_comparison: {total:.3f} s best of {args.repeat} (target ≤ 2 s)")
    start = time.perf_counter()
    text = result.to_markdown()
    print(f"to_markdown: {time.perf_counter() - start:.3f} s ({len(text):,} characters)")
    f1 = result.row("f1")
    if f1 is not None and f1.interval is not None:
        iv = f1.interval
        print(
            f"f1: {f1.baseline:.4f} → {f1.candidate:.4f}, delta {iv.delta:+.4f}, "
            f"95% CI [{iv.low:+.4f}, {iv.high:+.4f}], p {iv.p_value:.3f}"
        )
    print(
        f"verdict: {'PASSED' if result.passed else 'FAILED'} "
        f"({checks_text(result.tally)}); "
        f"flips {len(result.broke)} broke / {len(result.fixed)} fixed"
    )


if __name__ == "__main__":
    main()
