"""Memory benchmark: peak RSS of the whole `score` command per path and set size.

    python benchmarks/bench_memory.py                                  # 100k and 1M documents
    python benchmarks/bench_memory.py --sizes 20000,200000 --paths no-log,logged
    python benchmarks/bench_memory.py --keep /work/tmp-bench           # keep the sets for later

It writes synth.py's sets (:func:`synth.write_sets`: invoices, their source texts, the invoices
as wiki pages and with structure fields, streamed one document at a time), then, per path and
size, runs ``extract-mlflow score ... --format json --out FILE`` in a process of its own and
measures it from the outside (``os.wait4``, an address-space cap as in bench_scale.py). The
logged paths log to an embedded store in a fresh working folder
(``MLFLOW_TRACKING_URI=sqlite:///<folder>/mlflow.db``, artifacts beside it). Per path it prints
the ratio of the peak RSS at the largest size to that at the smallest (target: ≤ 1.5× from
100k to 1M documents). Prints figures and exits 0; it never asserts (see benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_scale
import synth

TARGET = 1.5
"""peak RSS at the largest size / at the smallest (the issue's target, from 100k to 1M)"""

PATHS: dict[str, tuple[str, str, bool]] = {
    "no-log": ("gold", "pred", False),
    "logged": ("gold", "pred", True),
    "sources": ("gold", "pred", True),
    "pages": ("pages_gold", "pages_pred", True),
    "structure": ("structure_gold", "structure_pred", True),
}
"""path -> (gold file, prediction file, logged to MLflow)"""


def path_command(path: str, files: dict[str, Path], out: Path) -> list[str]:
    """The `score` command of one path on one set's `files`."""
    gold, pred, logged = PATHS[path]
    cmd = [*bench_scale._cli_command(), "score", str(files[gold]), str(files[pred])]
    cmd += ["--format", "json", "--out", str(out)]
    if not logged:
        cmd.append("--no-log")
    if path == "sources":
        cmd += ["--sources", str(files["sources"])]
    if path == "pages":
        cmd += ["--config", str(files["pages_config"])]
    return cmd


def kept_sets(sizes: list[int], seed: int, root: Path) -> dict[int, dict[str, Path]] | None:
    """The sets an earlier ``--keep`` run wrote to `root` with this seed and every file of
    every size asked for; else None."""
    try:
        wrote = json.loads((root / "memory_sets.json").read_text())
    except (OSError, ValueError):
        return None
    if wrote.get("seed") != seed or not set(sizes) <= set(wrote.get("sizes", ())):
        return None
    files = {n: {k: Path(p) for k, p in wrote["files"][str(n)].items()} for n in sizes}
    return files if all(p.is_file() for f in files.values() for p in f.values()) else None


def write_sets(sizes: list[int], seed: int, root: Path) -> dict[int, dict[str, Path]]:
    files = synth.write_sets(sizes, seed, root)
    record = {str(n): {k: str(p) for k, p in f.items()} for n, f in files.items()}
    (root / "memory_sets.json").write_text(
        json.dumps({"seed": seed, "sizes": sizes, "files": record})
    )
    return files


def measure(
    path: str, n: int, files: dict[str, Path], root: Path, limit: int | None
) -> tuple[bench_scale.Run, str]:
    """One run of `path` on the set of size `n`: its measurement and what it left (the size
    of its JSON report, the run id for a logged path)."""
    work = Path(tempfile.mkdtemp(prefix=f"mem-{path}-{n}-", dir=root))
    try:
        out = work / "report.json"
        env = dict(os.environ)
        if PATHS[path][2]:
            env["MLFLOW_TRACKING_URI"] = f"sqlite:///{work / 'mlflow.db'}"
        run = bench_scale.run_measured(
            path_command(path, files, out), work, limit, cwd=work, env=env
        )
        note = ""
        if out.is_file():
            note = f"report {out.stat().st_size / 1e6:,.1f} MB"
            if PATHS[path][2]:
                logged = '"run_id"' in bench_scale._tail(out, 4096)
                note += ", run logged" if logged else ", NO run id in the report"
        return run, note
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000,1000000", help="set sizes (100000,1000000)")
    ap.add_argument("--paths", default=",".join(PATHS), help=f"of {', '.join(PATHS)} (all)")
    ap.add_argument("--seed", type=int, default=0)
    bench_scale.add_set_options(ap)
    args = ap.parse_args(argv)
    sizes = sorted({int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()})
    paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    unknown = [p for p in paths if p not in PATHS]
    if unknown or not sizes:
        ap.error(f"unknown paths {unknown}; choose from {', '.join(PATHS)}" if unknown else "sizes")
    limit = int(args.limit_gb * 2**30) if args.limit_gb > 0 else None
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs")
    print(f"each process capped at {args.limit_gb:g} GB of address space" if limit else "no cap")
    tmp = None if args.keep else tempfile.mkdtemp(prefix="bench_memory_")
    root = args.keep or Path(tmp)  # type: ignore[arg-type]
    root.mkdir(parents=True, exist_ok=True)
    try:
        t0 = time.perf_counter()
        files = kept_sets(sizes, args.seed, root) if args.keep else None
        what = "reuse   "
        if files is None:
            files, what = write_sets(sizes, args.seed, root), "generate"
        mb = sum(p.stat().st_size for f in files.values() for p in f.values()) / 1e6
        print(f"{what}   {time.perf_counter() - t0:.1f} s  ({mb:,.0f} MB of inputs in {root})")
        print(f"{'path':<10} {'docs':>9} {'seconds':>9} {'peak MB':>9} {'KB/doc':>8}")
        for path in paths:
            peaks: dict[int, float] = {}
            for n in sizes:
                run, note = measure(path, n, files[n], root, limit)
                if run.returncode == 0:
                    peaks[n] = run.peak_rss_mb
                kb = run.peak_rss_mb * 1024 / n
                print(
                    f"{path:<10} {n:>9,} {run.seconds:9.1f} {run.peak_rss_mb:9.0f} {kb:8.2f}"
                    f"  exit {run.returncode}  {note}"
                )
                if run.returncode != 0:
                    print(f"{'':>11}stderr: {run.stderr.strip()[-500:]}")
                sys.stdout.flush()
            small, large = sizes[0], sizes[-1]
            if len(sizes) > 1 and small in peaks and large in peaks:
                ratio = peaks[large] / peaks[small]
                verdict = "within" if ratio <= TARGET else "OVER"
                print(
                    f"{path:<10} peak RSS {large:,} / {small:,}: {ratio:.2f}x"
                    f" ({verdict} the {TARGET:g}x target)"
                )
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
