"""Sources benchmark: a JSONL sources file opened, every text looked up, and the signature's
sources digest, read whole into a dict or indexed by offset (``io/source_file.py``).

    python benchmarks/bench_sources.py                                # 100k sources
    python benchmarks/bench_sources.py --sizes 20000,100000 --keep /work/tmp-bench

It uses synth.py's sources sets (bench_memory.py's, reused from ``--keep`` when there), then runs,
each in its own process (peak RSS from ``os.wait4``, as in bench_scale.py):

- ``whole``: the file read into a dict of every text, a line at a time with the json module,
  each id looked up, the digest over the sorted pairs (what the loader did before the index);
- ``indexed``: :class:`~extract_mlflow.io.source_file.SourceFile` opened (the file checked, an
  id hash and an offset kept per line), each id looked up (seek, parse, compare), the digest
  written a pair at a time (:class:`~extract_mlflow.io.source_file.SourceUse`).

Prints seconds per step, the whole process's seconds and peak RSS. Prints figures and exits 0;
it never asserts (see benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_memory
import bench_scale
import synth

MODES = ("whole", "indexed")


def child(mode: str, path: Path) -> dict[str, float]:
    """One mode on `path`, in this process: seconds to open, to look every id up, to digest."""
    from extract_mlflow.evaluation.inputs import Extras, Inputs, content_digest
    from extract_mlflow.io.source_file import SourceFile, SourceUse

    with path.open("rb") as f:
        ids = [json.loads(line)["id"] for line in f if line.strip()]
    t0 = time.perf_counter()
    if mode == "whole":
        texts: dict[str, str] = {}
        for raw in path.read_bytes().split(b"\n"):
            if raw.strip():
                row = json.loads(raw)
                texts[str(row["id"])] = row["text"]
        t1 = time.perf_counter()
        chars = sum(len(texts[i]) for i in ids)
        t2 = time.perf_counter()
        content_digest(sorted((i, texts[i]) for i in ids if i in texts))
    else:
        sources = SourceFile(path)
        t1 = time.perf_counter()
        used = SourceUse(sources)
        chars = sum(len(used.get(i) or "") for i in ids)
        t2 = time.perf_counter()
        Inputs.extras_facts(Extras(sources=sources), used)
    t3 = time.perf_counter()
    return {"open": t1 - t0, "lookups": t2 - t1, "digest": t3 - t2, "chars": chars}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000", help="set sizes (100000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    bench_scale.add_set_options(ap)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], Path(args.child[1]))))
        return 0
    sizes = sorted({int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()})
    limit = int(args.limit_gb * 2**30) if args.limit_gb > 0 else None
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench_sources_"))
    root.mkdir(parents=True, exist_ok=True)
    files = bench_memory.kept_sets(sizes, args.seed, root) if args.keep else None
    if files is None:
        files = synth.write_sets(sizes, args.seed, root, kinds=("base", "sources"))
    print(f"{'mode':<8} {'sources':>9} {'MB':>6} {'open s':>7} {'lookups s':>9} {'digest s':>8}"
          f" {'process s':>9} {'peak MB':>8}")  # fmt: skip
    for n in sizes:
        path = files[n]["sources"]
        for mode in MODES:
            cmd = [sys.executable, __file__, "--child", mode, str(path)]
            run = bench_scale.run_measured(cmd, root, limit)
            if run.returncode != 0:
                print(f"{mode:<8} {n:>9,}  exit {run.returncode}: {run.stderr.strip()[-300:]}")
                continue
            t = json.loads(run.stdout.strip().splitlines()[-1])
            print(
                f"{mode:<8} {n:>9,} {path.stat().st_size / 1e6:6.0f} {t['open']:7.2f}"
                f" {t['lookups']:9.2f} {t['digest']:8.2f} {run.seconds:9.2f}"
                f" {run.peak_rss_mb:8.0f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
