"""The synthetic benchmark data: the field scorer's counts equal what the generator did.

TP = kept, FP = changed + extra, FN = changed + dropped, under the default config (inferred
types), with the predicted line items shuffled.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import synth

from extract_mlflow import evaluate
from extract_mlflow.io.loading import load_gold, load_predictions
from extract_mlflow.report import Report


def _counts(report) -> tuple[int, int, int]:  # type: ignore[no-untyped-def]
    m = report.micro
    return m.tp, m.fp, m.fn


@pytest.mark.parametrize("seed", [0, 1, 2, 7, 42])
def test_counts_equal_generator_tally(seed: int) -> None:
    gold, pred, tally = synth.make_dataset(300, seed)
    report = evaluate(gold, pred)
    expected = (tally.kept, tally.changed + tally.extra, tally.changed + tally.dropped)
    assert _counts(report) == expected
    # every kind of noise actually happened, so the equality above says something
    assert tally.changed and tally.dropped and tally.extra
    assert report.micro.f1 == pytest.approx(tally.expected_f1)


@pytest.mark.slow
def test_heavy_noise_counts_still_match() -> None:
    # many items lose every value (they stay unpaired): the counts are the same either way
    gold, pred, tally = synth.make_dataset(200, 3, change=0.45, drop=0.35, extra=0.2)
    assert _counts(evaluate(gold, pred)) == (tally.tp, tally.fp, tally.fn)


@pytest.mark.parametrize("seed", [0, 5])
def test_long_shuffled_document(seed: int) -> None:
    gold, pred, tally = synth.make_long_document(200, seed)
    assert len(pred["line_items"]) == 200
    assert [it["sku"] for it in pred["line_items"]] != [it["sku"] for it in gold["line_items"]]
    assert tally.dropped == 0 and tally.extra == 0
    report = evaluate([gold], [pred])
    assert _counts(report) == (tally.kept, tally.changed, tally.changed)
    assert report.micro.f1 == pytest.approx(tally.unchanged_share)


def test_document_shape() -> None:
    gold, pred, _ = synth.make_dataset(50, 11)
    for g in gold:
        scalars = [k for k, v in g.items() if k != "id" and not isinstance(v, dict | list)]
        assert len(scalars) == 12
        assert sorted(g["vendor"]) == ["city", "country", "name", "vat_id"]
        assert len(g["line_items"]) == 5
        types = {type(v) for k, v in g.items() if k in scalars}
        assert {str, float, bool} <= types
        assert isinstance(g["line_items"][0]["qty"], int)
        for key in ("sku", "description", "qty", "unit_price", "amount"):
            values = [it[key] for it in g["line_items"]]
            assert len(set(values)) == len(values), key
    assert [g["id"] for g in gold] == [p["id"] for p in pred]


def test_line_item_values_unique_after_noise() -> None:
    # a changed value never equals another item's value of that key: alignment is unambiguous
    gold, pred, _ = synth.make_long_document(600, 2, change=0.5)
    for key in ("sku", "description", "qty", "unit_price", "amount"):
        g_values = {synth._key(it[key]) for it in gold["line_items"]}
        changed = [synth._key(it[key]) for it in pred["line_items"] if key in it]
        changed = [v for v in changed if v not in g_values]
        assert len(set(changed)) == len(changed), key


def test_changed_values_compare_unequal_one_by_one() -> None:
    rng = random.Random(0)
    for value in (3, 17.25, 0.19, "2024-02-29", "Net 30", "EUR", True, False):
        new = synth._change(rng, value, 0)
        gold = {"id": "x", "v": value}
        report = evaluate([gold], [{"id": "x", "v": new}])
        assert _counts(report) == (0, 1, 1), (value, new)


def test_deterministic() -> None:
    a = synth.make_dataset(20, 9)
    b = synth.make_dataset(20, 9)
    assert a[0] == b[0] and a[1] == b[1] and a[2] == b[2]
    assert synth.make_dataset(20, 10)[0] != a[0]


def test_written_files_score_the_same(tmp_path: Path) -> None:
    gold, pred, tally = synth.make_dataset(40, 4)
    gp, pp = synth.write_dataset(gold, pred, tmp_path)
    assert [json.loads(line) for line in gp.read_text(encoding="utf-8").splitlines()] == gold
    assert list(load_gold(gp).docs.values()) == gold
    assert len(load_predictions(pp).docs) == len(pred)
    assert _counts(evaluate(gp, pp)) == (tally.tp, tally.fp, tally.fn)


# -- the optional families (sources, pages, structure) and the streamed sets -------------------
def _read_rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_streamed_sets_are_prefixes_and_equal_make_dataset(tmp_path: Path) -> None:
    files = synth.write_sets([9, 4], seed=3, directory=tmp_path)
    assert sorted(files) == [4, 9]
    g_rows, p_rows, _ = synth.make_dataset(9, 3)
    for n, f in files.items():
        assert _read_rows(f["gold"]) == g_rows[:n] and _read_rows(f["pred"]) == p_rows[:n]
        assert [s["id"] for s in _read_rows(f["sources"])] == [g["id"] for g in g_rows[:n]]
        assert f["pages_config"].read_text(encoding="utf-8") == synth.PAGE_CONFIG
    for name in ("sources", "pages_gold", "pages_pred", "structure_gold", "structure_pred"):
        assert _read_rows(files[9][name])[:4] == _read_rows(files[4][name]), name
    again = synth.write_sets([4], seed=3, directory=tmp_path / "again", kinds=("structure",))
    assert set(again[4]) == {"structure_gold", "structure_pred"}
    assert _read_rows(again[4]["structure_pred"]) == _read_rows(files[4]["structure_pred"])
    with pytest.raises(ValueError, match="unknown kinds"):
        synth.write_sets([1], 0, tmp_path, kinds=("tables",))


def test_a_copied_prediction_is_grounded_in_its_source(tmp_path: Path) -> None:
    gold, pred, _ = synth.make_dataset(30, 2)
    sources = {g["id"]: synth.source_text(g) for g in gold}
    exact = evaluate(gold, gold, sources=sources).family("fidelity")
    assert exact is not None and exact.overall.checked > 30 * 20
    assert exact.overall.groundedness == 1.0 and exact.overall.bleu_proxy == 1.0
    noisy = evaluate(gold, pred, sources=sources).family("fidelity")
    assert noisy is not None and (noisy.overall.hallucination_rate or 0.0) > 0


def _page_report(gold_pages: list[dict[str, Any]], pred_pages: list[dict[str, Any]]) -> Report:
    import tomllib

    from extract_mlflow.config_file import config_from_mapping

    return evaluate(gold_pages, pred_pages, config_from_mapping(tomllib.loads(synth.PAGE_CONFIG)))


def test_pages_score_their_rows_and_their_layout() -> None:
    gold, pred, _ = synth.make_dataset(40, 6)
    rng = random.Random(0)
    pairs = [synth.page_documents(g, g, rng, drop_section=0.0) for g in gold]
    perfect = _page_report([a for a, _ in pairs], [b for _, b in pairs])
    assert perfect.micro.f1 == 1.0 and perfect.layout_score == 1.0
    pairs = [synth.page_documents(g, g, rng, drop_section=1.0) for g in gold]
    assert _page_report([a for a, _ in pairs], [b for _, b in pairs]).layout_score == 0.75
    # a noisy page's rows count as its items do when scored as JSON (keys gold lacks left out)
    pairs = [synth.page_documents(g, p, rng) for g, p in zip(gold, pred, strict=True)]
    paged = _page_report([a for a, _ in pairs], [b for _, b in pairs])
    as_json = evaluate(
        [{"id": g["id"], "rows": g["line_items"]} for g in gold],
        [
            {"id": p["id"], "rows": [{k: it[k] for k in synth.ROW_KEYS if k in it} for it in rows]}
            for p in pred
            for rows in [p["line_items"]]
        ],
    )
    assert _counts(paged) == _counts(as_json) and (paged.micro.f1 or 0.0) < 1.0


def test_structure_fields_score_one_against_themselves() -> None:
    gold, pred, _ = synth.make_dataset(20, 8)
    rng = random.Random(1)
    pairs = [synth.structure_documents(g, g, rng, swap=0.0) for g in gold]
    same = evaluate([a for a, _ in pairs], [b for _, b in pairs]).family("structure")
    assert same is not None
    values = {k: m.value for k, m in same.headline.items()}
    assert {"teds", "teds_s", "reading_order", "kendall_tau", "anls"} <= values.keys()
    assert values == pytest.approx(dict.fromkeys(values, 1.0))
    pairs = [synth.structure_documents(g, g, rng, swap=1.0) for g in gold]
    swapped = evaluate([a for a, _ in pairs], [b for _, b in pairs]).family("structure")
    assert swapped is not None
    assert swapped.headline["reading_order"].value == pytest.approx(1 - 2 / len(synth.BLOCKS))
    pairs = [synth.structure_documents(g, p, rng) for g, p in zip(gold, pred, strict=True)]
    noisy = evaluate([a for a, _ in pairs], [b for _, b in pairs]).family("structure")
    assert noisy is not None and noisy.headline["teds"].value < 1.0
