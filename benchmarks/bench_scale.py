"""Scale benchmark: the whole `score` command against the parse-and-walk floor, per set size.

    python benchmarks/bench_scale.py                          # 10,000 and 100,000 documents
    python benchmarks/bench_scale.py --sizes 10000,100000,1000000 --repeat 2
    python benchmarks/bench_scale.py --workers 2              # passed through to `score`

For each size it writes a synthetic set (synth.py's invoices, streamed to a temporary folder one
document at a time, so the generator holds no set in memory), then runs, each in its own
process: the *floor* (read both files, parse every line, join on id, visit every leaf, in plain
Python) and the whole ``extract-mlflow score GOLD PRED --format json --out FILE --no-log``,
in turns (best of ``--repeat``).
It prints whole-process wall and CPU seconds, documents/s, peak RSS of that process
(``os.wait4``) and the ratio of `score` to the floor. Prints figures and exits 0; it never
asserts timings (see benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synth


# -- data -----------------------------------------------------------------------------------
def write_sets(sizes: list[int], seed: int, directory: Path) -> dict[int, tuple[Path, Path]]:
    """Write `<n>/gold.jsonl` and `<n>/pred.jsonl` for every size in one streamed pass
    (:func:`synth.write_sets`: the sets are prefixes of one another and equal
    :func:`synth.make_dataset` of that size). Returns size -> (gold, pred)."""
    files = synth.write_sets(sizes, seed, directory, kinds=("base",))
    return {n: (f["gold"], f["pred"]) for n, f in files.items()}


def kept_sets(sizes: list[int], seed: int, directory: Path) -> dict[int, tuple[Path, Path]] | None:
    """The sets a former ``--keep`` run wrote to `directory` with this seed, when it wrote
    every size asked for (its ``sets.json`` says what it wrote); else None."""
    try:
        wrote = json.loads((directory / "sets.json").read_text())
    except (OSError, ValueError):
        return None
    if wrote.get("seed") != seed or not set(sizes) <= set(wrote.get("sizes", ())):
        return None
    files = {
        n: (directory / str(n) / "gold.jsonl", directory / str(n) / "pred.jsonl") for n in sizes
    }
    return files if all(p.is_file() for pair in files.values() for p in pair) else None


# -- the floor (runs in a child process) ----------------------------------------------------
def _leaves(value: Any) -> int:
    """Number of scalar leaves under a parsed JSON value (every node visited once)."""
    t = type(value)
    if t is dict:
        n = 0
        for v in value.values():
            n += _leaves(v)
        return n
    if t is list:
        n = 0
        for v in value:
            n += _leaves(v)
        return n
    return 1


def floor(gold: Path, pred: Path, id_key: str = "id") -> dict[str, Any]:
    """Parse both files, join predictions to gold on id, visit every leaf of both sides.

    The least any scorer of these files must do, written as plainly and quickly as Python
    allows (the standard json module, no checks)."""
    t0 = time.perf_counter()
    loads = json.loads
    preds: dict[Any, Any] = {}
    with pred.open("rb") as f:
        for line in f:
            if line.strip():
                doc = loads(line)
                preds[doc[id_key]] = doc
    docs = leaves = joined = 0
    with gold.open("rb") as f:
        for line in f:
            if line.strip():
                doc = loads(line)
                docs += 1
                leaves += _leaves(doc)
                p = preds.get(doc[id_key])
                if p is not None:
                    joined += 1
                    leaves += _leaves(p)
    return {
        "seconds": time.perf_counter() - t0,
        "documents": docs,
        "joined": joined,
        "leaves": leaves,
    }


# -- running a child and measuring it -------------------------------------------------------
@dataclass
class Run:
    seconds: float
    cpu_seconds: float
    """user + system CPU time of the process (and any it waited for): steadier than wall time
    on a busy machine, and with worker processes it adds up their work"""
    peak_rss_mb: float
    returncode: int
    stdout: str
    stderr: str


def run_measured(
    cmd: list[str],
    workdir: Path,
    limit_bytes: int | None = None,
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> Run:
    """Run `cmd` to its end (in `cwd`, with `env` when given); wall and CPU seconds and the
    peak RSS of that one process (``wait4``), and the last 64 KB of its stdout and stderr.

    `limit_bytes` caps the child's address space (``RLIMIT_AS``): a run too large for the
    machine fails with a MemoryError instead of pushing every other process out of memory."""
    out, err = workdir / "child.out", workdir / "child.err"

    def limit() -> None:
        if limit_bytes is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    with out.open("wb") as fo, err.open("wb") as fe:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            stdout=fo,
            stderr=fe,
            cwd=cwd,
            env=env,
            preexec_fn=limit if limit_bytes is not None else None,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    # ru_maxrss is in KiB on Linux (bytes on macOS)
    rss = usage.ru_maxrss / (1 << 20 if sys.platform == "darwin" else 1 << 10)
    return Run(
        seconds,
        usage.ru_utime + usage.ru_stime,
        rss,
        proc.returncode,
        _tail(out),
        _tail(err),
    )


def _tail(path: Path, limit: int = 1 << 16) -> str:
    """The last `limit` bytes of a file as text (a child may print a line per document; the
    measuring process stays small)."""
    with path.open("rb") as f:
        f.seek(max(0, path.stat().st_size - limit))
        return f.read().decode("utf-8", errors="replace")


def _physical_bytes() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 16 * 2**30


def _cli_command() -> list[str]:
    exe = Path(sys.executable).with_name("extract-mlflow")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("extract-mlflow")
    return [found] if found else [sys.executable, "-m", "extract_mlflow"]


def score_command(gold: Path, pred: Path, out: Path, extra: list[str]) -> list[str]:
    return [
        *_cli_command(),
        "score",
        str(gold),
        str(pred),
        "--format",
        "json",
        "--out",
        str(out),
        "--no-log",
        *extra,
    ]


def best_runs(
    cmds: list[list[str]], workdir: Path, repeat: int, limit_bytes: int | None
) -> list[Run]:
    """The fastest successful run of each command, the commands run in turns `repeat` times
    (a machine that speeds up or slows down meanwhile weighs on each alike: their ratio holds)."""
    runs: list[list[Run]] = [[] for _ in cmds]
    for _ in range(repeat):
        for cmd, done in zip(cmds, runs, strict=True):
            done.append(run_measured(cmd, workdir, limit_bytes))
    return [
        min([r for r in done if r.returncode == 0] or done, key=lambda r: r.seconds)
        for done in runs
    ]


# -- main -----------------------------------------------------------------------------------
def bench_size(
    n: int,
    gold: Path,
    pred: Path,
    repeat: int,
    extra: list[str],
    workdir: Path,
    limit_bytes: int | None = None,
) -> dict[str, Any]:
    floor_cmd = [sys.executable, str(Path(__file__).resolve()), "--floor", str(gold), str(pred)]
    report = workdir / f"report-{n}.json"
    scored = score_command(gold, pred, report, extra)
    fl, sc = best_runs([floor_cmd, scored], workdir, repeat, limit_bytes)
    inner = json.loads(fl.stdout) if fl.returncode == 0 else {}
    micro = None
    if sc.returncode == 0:
        with report.open(encoding="utf-8") as f:
            micro = json.load(f)["micro"]
        report.unlink()
    return {"n": n, "floor": fl, "floor_inner": inner, "score": sc, "micro": micro}


def bench_speedup(
    n: int,
    gold: Path,
    pred: Path,
    workers: int,
    repeat: int,
    extra: list[str],
    workdir: Path,
    limit_bytes: int | None = None,
) -> tuple[Run, Run, bool]:
    """`score --workers 1` and `--workers N` in turns, `repeat` times each (so a change of the
    machine's load falls on both): the best run of each, and whether their reports are the
    same bytes."""
    outs = {w: workdir / f"report-{n}-w{w}.json" for w in (1, workers)}
    runs: dict[int, list[Run]] = {1: [], workers: []}
    for _ in range(repeat):
        for w in (1, workers):
            cmd = score_command(gold, pred, outs[w], [*extra, "--workers", str(w)])
            runs[w].append(run_measured(cmd, workdir, limit_bytes))
    best = {w: min(rs, key=lambda r: (r.returncode != 0, r.seconds)) for w, rs in runs.items()}
    same = (
        all(o.exists() for o in outs.values()) and len({o.read_bytes() for o in outs.values()}) == 1
    )
    for o in outs.values():
        o.unlink(missing_ok=True)
    return best[1], best[workers], same


def same_word(same: bool) -> str:
    return "yes" if same else "NO"


def _row(label: str, n: int, r: Run, ratio: str) -> str:
    rate = n / r.seconds if r.seconds > 0 else float("inf")
    kb = r.peak_rss_mb * 1024 / n
    return (
        f"{n:>9,}  {label:<6} {r.seconds:9.2f} {r.cpu_seconds:9.2f} {rate:11,.0f}"
        f" {r.peak_rss_mb:9.0f} {kb:8.1f} {ratio:>16}  exit {r.returncode}"
    )


def add_set_options(ap: argparse.ArgumentParser) -> None:
    """``--keep`` and ``--limit-gb``: where the sets are kept, and the measured processes' cap
    (shared with bench_memory.py)."""
    ap.add_argument(
        "--keep",
        type=Path,
        help="write the sets here and keep them (a later run with the same seed reuses them)",
    )
    ap.add_argument(
        "--limit-gb",
        type=float,
        default=round(0.6 * _physical_bytes() / 2**30, 1),
        help="address-space cap of each measured process, GB (60%% of RAM; 0: none)",
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000", help="set sizes (10000,100000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1, help="runs per process, best kept (1)")
    ap.add_argument("--workers", help="passed to `score --workers` when given")
    ap.add_argument(
        "--speedup",
        type=int,
        metavar="N",
        help="also run `score --workers 1` and `--workers N` in turns per size: the speedup,"
        " and whether the two reports are the same bytes",
    )
    ap.add_argument("--engine", help="passed to `score --engine` when given")
    ap.add_argument("--spark-master", help="passed to `score --spark-master` when given")
    add_set_options(ap)
    ap.add_argument("--floor", nargs=2, metavar=("GOLD", "PRED"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.floor:  # the child process of the floor measurement
        print(json.dumps(floor(Path(args.floor[0]), Path(args.floor[1]))))
        return 0

    if args.speedup is not None and (args.workers is not None or args.speedup < 2):
        ap.error("--speedup N takes N >= 2 and no --workers")
    sizes = sorted({int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()})
    extra: list[str] = []
    if args.workers is not None:
        extra += ["--workers", args.workers]
    if args.engine is not None:
        extra += ["--engine", args.engine]
    if args.spark_master is not None:
        extra += ["--spark-master", args.spark_master]
    print(
        f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs;"
        f" score extra options: {' '.join(extra) or '(none)'}; best of {args.repeat}"
    )
    limit = int(args.limit_gb * 2**30) if args.limit_gb > 0 else None
    print(f"each process capped at {args.limit_gb:g} GB of address space" if limit else "no cap")
    tmp = None if args.keep else tempfile.mkdtemp(prefix="bench_scale_")
    root = args.keep or Path(tmp)  # type: ignore[arg-type]
    try:
        t0 = time.perf_counter()
        files = kept_sets(sizes, args.seed, root) if args.keep else None
        if files is None:
            files = write_sets(sizes, args.seed, root)
            (root / "sets.json").write_text(json.dumps({"seed": args.seed, "sizes": sizes}))
            what = "generate"
        else:
            what = "reuse   "
        mb = sum(p.stat().st_size for pair in files.values() for p in pair) / 1e6
        print(f"{what}   {time.perf_counter() - t0:.1f} s  ({mb:,.0f} MB of JSONL in {root})")
        print(
            f"{'docs':>9}  {'run':<6} {'seconds':>9} {'cpu s':>9} {'docs/s':>11} {'peak MB':>9}"
            f" {'KB/doc':>8} {'x floor (cpu)':>16}"
        )
        for n in sizes:
            res = bench_size(n, *files[n], args.repeat, extra, root, limit)
            fl, sc = res["floor"], res["score"]
            ok = fl.returncode == sc.returncode == 0 and fl.seconds > 0
            print(_row("floor", n, fl, ""))
            cpu = sc.cpu_seconds / max(fl.cpu_seconds, 1e-9)
            ratio = f"{sc.seconds / fl.seconds:.2f}x ({cpu:.2f}x)" if ok else "-"
            print(_row("score", n, sc, ratio))
            inner = res["floor_inner"]
            if inner:
                print(
                    f"{'':>11}floor inside its process {inner['seconds']:.2f} s,"
                    f" {inner['leaves']:,} leaves, {inner['joined']:,} joined"
                )
            if res["micro"] is not None:
                m = res["micro"]
                print(
                    f"{'':>11}score micro TP={m['tp']} FP={m['fp']} FN={m['fn']} F1={m['f1']:.4f}"
                )
            for r, name in ((fl, "floor"), (sc, "score")):
                if r.returncode != 0:
                    print(f"{'':>11}{name} stderr: {r.stderr.strip()[-500:]}")
            if args.speedup:
                w = args.speedup
                one, many, same = bench_speedup(n, *files[n], w, args.repeat, extra, root, limit)
                print(_row("w=1", n, one, ""))
                gain = f"{one.seconds / many.seconds:.2f}x" if many.seconds > 0 else "-"
                print(_row(f"w={w}", n, many, f"{gain} faster"))
                print(
                    f"{'':>11}--workers {w} report the same bytes as --workers 1: {same_word(same)}"
                )
            sys.stdout.flush()
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
