"""Compare-runs benchmark: the whole `extract-mlflow compare A B` of two logged runs.

    python benchmarks/bench_compare_runs.py                       # two runs of 100,000 documents
    python benchmarks/bench_compare_runs.py --docs 20000 --repeat 5
    python benchmarks/bench_compare_runs.py --keep /work/tmp-cmp  # keep the runs for later

It writes synth.py's invoices (:func:`synth.write_sets`) and a second prediction set of the
same gold with noise of its own seed, logs both with ``extract-mlflow score GOLD PRED`` to an
embedded store (``MLFLOW_TRACKING_URI=sqlite:///<folder>/mlflow.db``, artifacts beside it), then
runs ``extract-mlflow compare RUN_A RUN_B --format json --out FILE`` in a process of its own,
in turns with ``python -c "import mlflow"`` (``--repeat`` times each), and measures both from
the outside (``os.wait4``, as bench_scale.py). Before each compare the store is put back as
the two ``score`` runs left it (compare stores its comparison on run B), so every compare sees
the same store and writes the same JSON. Printed: wall and CPU seconds and peak RSS of each
(best and median), compare's ratio to ``import mlflow``, and the sha256 of the JSON without
``logged_as`` (the one field that names the time). Prints figures and exits 0; it never
asserts (see benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_scale
import synth

STATE = "compare_runs.json"
"""what a --keep folder holds: documents, seed and the two run ids"""


def second_predictions(gold: Path, out: Path, seed: int) -> Path:
    """Predictions of every gold document of `gold` with noise of its own generator (the
    same gold, so both runs are scored alike and can be compared), streamed line by line."""
    rng = random.Random(f"{seed}-candidate")
    with gold.open(encoding="utf-8") as src, out.open("w", encoding="utf-8") as dst:
        for line in src:
            pred, _ = synth.perturb_document(json.loads(line), rng)
            dst.write(json.dumps(pred, ensure_ascii=False, separators=(",", ":")) + "\n")
    return out


def store_env(store: Path) -> dict[str, str]:
    return {**os.environ, "MLFLOW_TRACKING_URI": f"sqlite:///{store / 'mlflow.db'}"}


def log_runs(n: int, seed: int, root: Path, limit: int | None) -> list[str]:
    """Write the set of `n` documents, log run A and run B, and record them in `root`."""
    files = synth.write_sets([n], seed, root, kinds=("base",))[n]
    pred_b = second_predictions(files["gold"], files["gold"].with_name("pred_b.jsonl"), seed)
    store = root / "store"
    shutil.rmtree(store, ignore_errors=True)
    store.mkdir()
    runs = []
    for pred in (files["pred"], pred_b):
        report = root / "score.json"
        cmd = [*bench_scale._cli_command(), "score", str(files["gold"]), str(pred)]
        cmd += ["--format", "json", "--out", str(report)]
        run = bench_scale.run_measured(cmd, root, limit, cwd=store, env=store_env(store))
        if run.returncode != 0:
            raise SystemExit(f"score {pred.name} failed: {run.stderr.strip()[-500:]}")
        print(f"score {pred.name:<12} {run.seconds:7.1f} s  {run.peak_rss_mb:6.0f} MB peak")
        runs.append(str(json.loads(report.read_text(encoding="utf-8"))["run_id"]))
        report.unlink()
    shutil.copy2(store / "mlflow.db", root / "mlflow.db.logged")
    (root / STATE).write_text(json.dumps({"docs": n, "seed": seed, "runs": runs}))
    return runs


def kept_runs(n: int, seed: int, root: Path) -> list[str] | None:
    """The two run ids an earlier ``--keep`` run logged in `root` for `n` and `seed`, else None."""
    try:
        state = json.loads((root / STATE).read_text())
    except (OSError, ValueError):
        return None
    ok = state.get("docs") == n and state.get("seed") == seed
    return list(state["runs"]) if ok and (root / "mlflow.db.logged").is_file() else None


def restore(root: Path) -> None:
    """The store as the two `score` runs left it: their database, no stored comparison."""
    store = root / "store"
    shutil.copy2(root / "mlflow.db.logged", store / "mlflow.db")
    for stored in store.glob("**/artifacts/eval/comparisons"):
        shutil.rmtree(stored)


def json_digest(path: Path) -> str:
    """sha256 of the comparison's JSON with ``logged_as`` (the time it was stored) left out."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data.pop("logged_as", None)
    return hashlib.sha256(json.dumps(data, ensure_ascii=False, indent=2).encode()).hexdigest()


def _figures(label: str, runs: list[bench_scale.Run]) -> str:
    wall = [r.seconds for r in runs]
    cpu = [r.cpu_seconds for r in runs]
    rss = [r.peak_rss_mb for r in runs]
    return (
        f"{label:<14} wall {min(wall):6.2f} / {statistics.median(wall):6.2f} s"
        f"   cpu {min(cpu):6.2f} / {statistics.median(cpu):6.2f} s"
        f"   peak {min(rss):6.0f} / {statistics.median(rss):6.0f} MB"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=100_000, help="documents per run (100000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each command, in turns (3)")
    ap.add_argument("--resamples", type=int, help="passed to `compare --resamples` when given")
    bench_scale.add_set_options(ap)
    args = ap.parse_args(argv)
    limit = int(args.limit_gb * 2**30) if args.limit_gb > 0 else None
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs")
    tmp = None if args.keep else tempfile.mkdtemp(prefix="bench_compare_runs_")
    root: Path = args.keep or Path(str(tmp))
    root.mkdir(parents=True, exist_ok=True)
    try:
        t0 = time.perf_counter()
        runs = kept_runs(args.docs, args.seed, root) if args.keep else None
        what = "reuse"
        if runs is None:
            runs, what = log_runs(args.docs, args.seed, root, limit), "generate+log"
        print(f"{what} {time.perf_counter() - t0:.1f} s: runs {runs[0]} (A), {runs[1]} (B)")
        store, out = root / "store", root / "comparison.json"
        compare = [*bench_scale._cli_command(), "compare", *runs, "--format", "json"]
        compare += ["--out", str(out)]
        if args.resamples is not None:
            compare += ["--resamples", str(args.resamples)]
        bare = [sys.executable, "-c", "import mlflow"]
        timed: dict[str, list[bench_scale.Run]] = {"import mlflow": [], "compare": []}
        digests = set()
        for _ in range(args.repeat):
            timed["import mlflow"].append(bench_scale.run_measured(bare, root, limit))
            restore(root)
            out.unlink(missing_ok=True)
            run = bench_scale.run_measured(compare, root, limit, cwd=store, env=store_env(store))
            timed["compare"].append(run)
            if not out.is_file():  # exit 2 with a JSON: no gate given, the report printed
                print(f"compare exit {run.returncode}: {run.stderr.strip()[-500:]}")
                continue
            digests.add(json_digest(out))
        print(f"{args.docs:,} documents per run; best / median of {args.repeat}")
        for label, done in timed.items():
            print(_figures(label, done))
        ratio = statistics.median(r.seconds for r in timed["compare"]) / statistics.median(
            r.seconds for r in timed["import mlflow"]
        )
        print(f"compare / import mlflow (median wall): {ratio:.2f}x")
        exits = sorted({r.returncode for r in timed["compare"]})
        print(f"compare exit {exits}; JSON sha256 (without logged_as): {', '.join(digests)}")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
