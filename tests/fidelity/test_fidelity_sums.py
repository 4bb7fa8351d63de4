"""What text fidelity keeps per value (issue 26 item 3): an evaluation folds every checked value
into its field's counts and a compact sequence of BLEU proxies, keeps only the values the
outputs list, and gives the same summary, to the last bit of its float sums, from any partition
of the documents merged in any order."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from extract_mlflow.config import Config, FidelityConfig
from extract_mlflow.fidelity.score import FidelityAccumulator, score_fidelity
from extract_mlflow.fidelity.sums import BleuSequence, Smallest
from extract_mlflow.fields.normalize import Comparators

WORDS = ("alpha", "beta", "gamma", "delta", "zeta", "eta", "theta", "iota", "kappa", "mu", "nu")


def _set(n: int, seed: int = 0) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    """`n` documents whose values are partly copied, partly reworded: many distinct BLEU
    proxies (thirds, sevenths, ...), so the order of a float sum shows in its last bits."""
    rng = random.Random(seed)
    gold, pred, sources = {}, {}, {}
    for i in range(n):
        doc_id = f"d{i:04d}"
        text = " ".join(rng.choice(WORDS) for _ in range(40))
        names = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9))) for _ in range(3)]
        gold[doc_id] = {"id": doc_id, "name": names[0], "items": [{"d": x} for x in names[1:]]}
        pred[doc_id] = {"id": doc_id, "name": names[0], "items": [{"d": x} for x in names]}
        if i % 17:
            sources[doc_id] = text if i % 23 else ""
    return gold, pred, sources


def _dump(summary: Any) -> str:
    return json.dumps(summary.to_dict())


def test_an_evaluation_keeps_no_value_but_what_it_lists() -> None:
    gold, pred, sources = _set(300)
    config = FidelityConfig(worst=5)
    acc = FidelityAccumulator(config)
    tools = acc.tools(Comparators(Config()), "id", ())
    for position, (doc_id, g) in enumerate(gold.items()):
        acc.update(position, doc_id, g, pred.get(doc_id), sources.get(doc_id), tools)
    assert acc.kept == [] and len(acc.worst.items) == 5  # no approvals: nothing else kept
    assert len(acc.noted) == sum(1 for i in gold if sources.get(i, "") == "")  # the notes' own
    assert len(acc.bleu) > 3 * len(acc.noted) and len(acc.bleu.pairs) < len(acc.bleu) / 4
    got = acc.result([])
    want = score_fidelity(gold, pred, sources, config)  # keeps every value as well
    assert got.values == [] and len(want.values) == len(acc.bleu)  # every value: text
    assert _dump(got) == _dump(want)
    assert want.worst() == sorted(want.worst(), key=lambda v: v.bleu_proxy or 0.0)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_any_partition_in_any_order_gives_the_one_pass_summary(seed: int) -> None:
    gold, pred, sources = _set(240, seed)
    config = FidelityConfig(worst=7)
    one = score_fidelity(gold, pred, sources, config)
    rng = random.Random(seed)
    rows = list(enumerate(gold.items()))
    rng.shuffle(rows)
    parts = []
    for k in range(4):  # interleaved positions, each part checked out of gold order
        part = FidelityAccumulator(config)
        tools = part.tools(Comparators(Config()), "id", ())
        for position, (doc_id, g) in rows[k::4]:
            part.update(position, doc_id, g, pred.get(doc_id), sources.get(doc_id), tools)
        parts.append(part)
    rng.shuffle(parts)
    whole = parts[0]
    for part in parts[1:]:
        whole.merge(part)
    got = whole.result([])
    assert got.overall.bleu_sum == one.overall.bleu_sum  # bit for bit, not approximately
    assert list(got.fields) == list(one.fields)  # fields in the order they first occur
    assert _dump(got) == _dump(one)


def test_the_sequence_replays_a_python_loop_and_widens() -> None:
    rng = random.Random(5)
    seq, other = BleuSequence(), BleuSequence()
    docs = []
    for position in range(6000):
        values = [(f"f{rng.randint(0, 4)}", rng.random()) for _ in range(rng.randint(0, 30))]
        docs.append((position, values))
    for position, values in docs[:3000]:
        seq.add(position, values)
    for position, values in reversed(docs[3000:]):  # a part checked backwards
        other.add(position, values)
    seq.merge(other)
    assert seq.codes.typecode == "I"  # > 65,535 distinct (field, proxy) pairs
    total, per = 0.0, dict[str, float]()
    for _, values in docs:  # the sums of one pass in gold order
        for path, bleu in values:
            total += bleu
            per[path] = per.get(path, 0.0) + bleu
    got_total, got_per = seq.sums()
    assert got_total == total and got_per == per


def test_smallest_keeps_the_k_smallest_of_a_union() -> None:
    a, b = Smallest[int, str](3), Smallest[int, str](3)
    for key in (9, 4, 7, 1):
        a.offer(key, str(key))
    for key in (8, 2, 6):
        b.offer(key, str(key))
    a.merge(b)
    assert a.values() == ["1", "2", "4"]
    empty = Smallest[int, str](0)
    empty.offer(1, "1")
    assert empty.items == []
