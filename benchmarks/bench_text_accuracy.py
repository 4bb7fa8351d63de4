"""Text accuracy benchmark: microseconds per pair of ``char_edits`` and ``word_edits`` on two
typical shapes, a 40-character field value and a 300-word paragraph.

    python benchmarks/bench_text_accuracy.py                  # 100,000 pairs of each shape
    python benchmarks/bench_text_accuracy.py --pairs 10000 --reference   # jiwer beside ours

Each shape is a pool of ``--pool`` seeded pairs (``random.Random(seed)``), cycled until
``--pairs`` calls: values are made-up company names and addresses, half of them read exactly,
the rest with one to three character edits; paragraphs draw 300 words from a 2,000-word
vocabulary and are read with about 5 % of the words dropped, replaced, misspelt or added.
Per pair: the wall time of all calls (their results kept in a list, garbage collection
paused) divided by their number; then the time of ``corpus_rate`` over those counts.
``--reference`` also times jiwer's ``process_characters``/``process_words`` on
``--pairs // 10`` pairs (the dev extra). Prints figures and exits 0; it never asserts timings.
"""

from __future__ import annotations

import argparse
import gc
import random
import string
import time
from collections.abc import Callable
from itertools import cycle, islice
from typing import TypeVar

from extract_mlflow.text_accuracy import EditCounts, char_edits, corpus_rate, word_edits

Pair = tuple[str, str]
T = TypeVar("T")
LETTERS = string.ascii_letters + "éüøß"


def random_word(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(2, 9)))


def misspell(rng: random.Random, text: str, edits: int) -> str:
    """``edits`` random character deletions, substitutions or insertions."""
    for _ in range(edits):
        k, new = rng.randrange(len(text)), rng.choice(LETTERS)
        text = rng.choice([text[:k] + text[k + 1 :], text[:k] + new + text[k + 1 :]])
        text = text or new
        if rng.random() < 1 / 3:
            text = text[:k] + new + text[k:]
    return text


def value_pair(rng: random.Random) -> Pair:
    """A field value of about 40 characters and its reading."""
    name = " ".join(random_word(rng).capitalize() for _ in range(2))
    value = f"{name} Ltd, {rng.randint(1, 999)} High Street, London"[:40]
    return value, value if rng.random() < 0.5 else misspell(rng, value, rng.randint(1, 3))


def paragraph_pair(rng: random.Random, vocab: list[str]) -> Pair:
    """300 words and a reading with about 5 % of them dropped, replaced, misspelt or added."""
    words = [rng.choice(vocab) for _ in range(300)]
    read: list[str] = []
    for w in words:
        r = rng.random()
        if r < 0.0125:
            continue
        read.append(rng.choice(vocab) if r < 0.025 else misspell(rng, w, 1) if r < 0.0375 else w)
        if 0.0375 <= r < 0.05:
            read.append(rng.choice(vocab))
    return " ".join(words), " ".join(read)


def timed(fn: Callable[[str, str], T], pairs: list[Pair], calls: int) -> tuple[float, list[T]]:
    """(µs per call, the results) of ``calls`` calls cycling through ``pairs``, gc paused."""
    work = list(islice(cycle(pairs), calls))
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        results = [fn(ref, hyp) for ref, hyp in work]
        elapsed = time.perf_counter() - start
    finally:
        gc.enable()
    return elapsed / calls * 1e6, results


def bench_shape(name: str, pairs: list[Pair], calls: int, reference: bool) -> None:
    avg_chars = sum(len(r) for r, _ in pairs) / len(pairs)
    avg_words = sum(len(r.split()) for r, _ in pairs) / len(pairs)
    print(f"{name}: {len(pairs)} distinct pairs, {avg_chars:.0f} chars / {avg_words:.0f} words")
    edits: tuple[tuple[str, Callable[[str, str], EditCounts]], ...] = (
        ("char_edits", char_edits),
        ("word_edits", word_edits),
    )
    for label, fn in edits:
        us, counts = timed(fn, pairs, calls)
        start = time.perf_counter()
        rate = corpus_rate(counts)
        merge_ms = (time.perf_counter() - start) * 1e3
        print(
            f"  {label:<24} {us:9.2f} µs/pair over {calls:,} pairs  corpus rate {rate:.4f}, "
            f"corpus_rate of the {calls:,} counts {merge_ms:.1f} ms",
            flush=True,
        )
    if reference:
        import jiwer

        few = max(1, calls // 10)
        for label, jfn in (
            ("jiwer.process_characters", jiwer.process_characters),
            ("jiwer.process_words", jiwer.process_words),
        ):
            us, _ = timed(jfn, pairs, few)
            print(f"  {label:<24} {us:9.2f} µs/pair over {few:,} pairs", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=100_000, help="calls per shape and function")
    parser.add_argument("--pool", type=int, default=1000, help="distinct pairs per shape")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reference", action="store_true", help="also time jiwer (dev extra)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    vocab = [random_word(rng) for _ in range(2000)]
    values = [value_pair(rng) for _ in range(args.pool)]
    paragraphs = [paragraph_pair(rng, vocab) for _ in range(args.pool)]
    bench_shape("40-character values", values, args.pairs, args.reference)
    bench_shape("300-word paragraphs", paragraphs, args.pairs, args.reference)


if __name__ == "__main__":
    main()
