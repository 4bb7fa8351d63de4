"""TEDS benchmark: our exact TEDS against the plain apted + lxml reference of the official
definition in the tests (and our normalised variant, timed alone).

    python benchmarks/bench_teds.py                       # 10x10, 20x10, 50x10 (~1 min)
    python benchmarks/bench_teds.py --sizes 10x10,20x10 --repeat 7 --seed 3
    python benchmarks/bench_teds.py --no-reference        # ours only

Each size is one seeded pair from ``tests/teds_reference.random_official_pair`` (a near-full
grid, a few spanning cells, header rows of th in a thead, tbody/tfoot sections, inline tags and
white space in cells, then dropped/added/swapped rows, merged/split cells and edited text).
Both sides are timed from the HTML strings (parsing included). Ours: best of ``--repeat`` calls; the
reference: one call (it takes tens of seconds at 50x10). Prints figures and exits 0; it never
asserts timings. The reference needs the dev extra (apted, lxml).
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support import teds_reference as ref

from extract_mlflow.structure.table_text import parse_tables
from extract_mlflow.structure.teds import timed_teds


def best_of(repeat: int, fn: Callable[[], float]) -> tuple[float, float]:
    """(best wall time, result) of ``repeat`` calls."""
    best, result = float("inf"), 0.0
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def ours(gold: str, pred: str, structure_only: bool = False, normalized: bool = False) -> float:
    return timed_teds(
        parse_tables(gold)[0],
        parse_tables(pred)[0],
        structure_only=structure_only,
        normalized=normalized,
        budget_s=None,
    )[0]


def bench_size(rows: int, cols: int, seed: int, repeat: int, reference: bool) -> None:
    gold, pred = ref.random_official_pair(random.Random(seed * 1000 + rows), rows, cols, merge=0.02)
    g, p = parse_tables(gold)[0], parse_tables(pred)[0]
    t_ours, score = best_of(repeat, lambda: ours(gold, pred))
    t_ours_s, score_s = best_of(repeat, lambda: ours(gold, pred, True))
    t_norm, score_norm = best_of(repeat, lambda: ours(gold, pred, normalized=True))
    line = (
        f"{rows:>3}x{cols:<3} elements {g.n_elements:>4}/{p.n_elements:<4}  "
        f"ours TEDS {t_ours * 1e3:7.1f} ms ({score:.6f})  TEDS-S {t_ours_s * 1e3:6.1f} ms "
        f"({score_s:.6f})  normalised {t_norm * 1e3:6.1f} ms ({score_norm:.6f})"
    )
    if not reference:
        print(line, flush=True)
        return
    start = time.perf_counter()
    expected = ref.official_teds(gold, pred)
    t_ref = time.perf_counter() - start
    print(
        f"{line}  reference TEDS {t_ref:7.2f} s ({expected:.6f})  "
        f"|diff| {abs(score - expected):.1e}  speed-up {t_ref / t_ours:,.0f}x",
        flush=True,
    )


def bench_budget(seed: int) -> None:
    """A pair too big for a 0.5 s budget: the labelled fallback, and how long it took."""
    gold, pred = ref.random_official_pair(random.Random(seed), 1000, 20, merge=0.02)
    g, p = parse_tables(gold)[0], parse_tables(pred)[0]
    start = time.perf_counter()
    score, approximate = timed_teds(g, p, budget_s=0.5)
    took = time.perf_counter() - start
    label = "approximate (lower bound)" if approximate else "exact"
    print(
        f"budget 0.5 s, {g.n_elements}/{p.n_elements} elements: {label} TEDS {score:.4f} "
        f"in {took:.2f} s"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes", default="10x10,20x10,50x10", help="rows x columns, comma-separated"
    )
    parser.add_argument("--repeat", type=int, default=5, help="calls of ours per size (best kept)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated pairs")
    parser.add_argument("--no-reference", action="store_true", help="skip the apted reference")
    args = parser.parse_args(argv)
    print(f"python {sys.version.split()[0]}; TEDS of one generated pair per size")
    for size in args.sizes.split(","):
        rows, cols = (int(v) for v in size.lower().split("x"))
        bench_size(rows, cols, args.seed, args.repeat, not args.no_reference)
    bench_budget(args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
