"""The text accuracy family (CER, WER) through the whole product: equal to jiwer on generated
documents, the same from rows, streamed files, worker processes, logged to a real MLflow store,
gated at score time and compared between two runs with paired intervals.

jiwer is the independent reference: its corpus CER and WER (``process_characters`` and
``process_words`` over every (reference, hypothesis) pair, summed) are Σedits / Σreference
length, the family's definition. Its WER transform is given every whitespace character as a
word boundary, as ``str.split`` has (jiwer's default splits on the space only)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import jiwer
import jiwer.transforms as jt
import pytest
from click.testing import CliRunner

from extract_mlflow import evaluate
from extract_mlflow.cli import main
from extract_mlflow.errors import ConfigError
from extract_mlflow.gates import higher_is_better
from extract_mlflow.views.frames import report_frame

TOL = 1e-12
ANY_WHITESPACE = jt.Compose(
    [
        jt.SubstituteRegexes({r"\s": " "}),
        jt.RemoveMultipleSpaces(),
        jt.Strip(),
        jt.ReduceToListOfListOfWords(),
    ]
)
WORDS = ["invoice", "Straße", "ﬁle", "café", "naïve", "日本語", "total", "Ltd.", "€12,00", "a"]
SPACES = [" ", " ", " ", "  ", "\t", "\n", "\u00a0"]
CONFIG = {"text_accuracy": {"fields": ["title", "vendor.name"], "regions": True}}


def _text(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(0, 6))]
    text = "".join(w + rng.choice(SPACES) for w in words)
    return rng.choice(["", " "]) + text if rng.random() < 0.3 else text


def _noisy(rng: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(rng.randint(0, 3)):
        op = rng.random()
        at = rng.randint(0, len(chars))
        if op < 0.4 and chars:
            chars[min(at, len(chars) - 1)] = rng.choice("xyzé ")
        elif op < 0.7 and chars:
            del chars[min(at, len(chars) - 1)]
        else:
            chars.insert(at, rng.choice("qß "))
    return "".join(chars)


def documents(n: int, seed: int = 3) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """`n` gold documents with two text fields and regions, and noisy predictions: empty
    references, missing gold values, missing predictions, non-text values, unicode."""
    rng = random.Random(seed)
    gold, pred = [], []
    for i in range(n):
        g: dict[str, Any] = {"id": f"d{i}", "kind": rng.choice(["memo", "letter"])}
        p: dict[str, Any] = {"id": f"d{i}"}
        if rng.random() < 0.9:
            g["title"] = _text(rng)
        if rng.random() < 0.85:
            p["title"] = _noisy(rng, g.get("title") or "") if rng.random() < 0.9 else 7
        g["vendor"] = {"name": _text(rng)} if rng.random() < 0.8 else {"name": None}
        if rng.random() < 0.8:
            p["vendor"] = {"name": _noisy(rng, g["vendor"]["name"] or "")}
        texts = [_text(rng) for _ in range(rng.randint(0, 3))]
        if texts or rng.random() < 0.5:
            g["regions"] = [{"id": k, "text": t} for k, t in enumerate(texts)]
            kept = [{"id": k, "text": _noisy(rng, t)} for k, t in enumerate(texts)]
            if rng.random() < 0.2:
                rng.shuffle(kept)  # reading order wrong: its edits count
            p["regions"] = kept
        gold.append(g)
        if rng.random() < 0.95:
            pred.append(p)
    return gold, pred


def _pairs(gold: list[dict[str, Any]], pred: list[dict[str, Any]], target: str) -> list[Any]:
    """(reference, hypothesis) pairs of one target by the family's rules, written plainly."""
    by_id = {p["id"]: p for p in pred}
    out = []
    for g in gold:
        p = by_id.get(g["id"])
        ref: Any
        hyp: Any
        if target == "regions":
            if not isinstance(g.get("regions"), list):
                continue
            ref = "\n".join(r["text"] for r in g["regions"])
            hyp = "\n".join(r["text"] for r in p["regions"]) if p and "regions" in p else ""
        else:
            ref = g.get(target) if target == "title" else g["vendor"]["name"]
            vendor = (p or {}).get("vendor") or {}
            hyp = (p or {}).get("title") if target == "title" else vendor.get("name")
            hyp = hyp if isinstance(hyp, str) else ""
            if ref is None and not hyp:
                continue
            ref = ref or ""
        out.append((ref, hyp))
    return out


def _jiwer_rates(pairs: list[Any]) -> tuple[float, float]:
    refs, hyps = [r for r, _ in pairs], [h for _, h in pairs]
    c = jiwer.process_characters(refs, hyps)
    w = jiwer.process_words(refs, hyps, ANY_WHITESPACE, ANY_WHITESPACE)
    cer_n = c.substitutions + c.deletions + c.hits
    wer_n = w.substitutions + w.deletions + w.hits
    cer = (c.substitutions + c.deletions + c.insertions) / cer_n
    return cer, (w.substitutions + w.deletions + w.insertions) / wer_n


def test_corpus_rates_equal_jiwer_on_600_generated_documents() -> None:
    gold, pred = documents(600)
    metrics = evaluate(gold, pred, CONFIG).metrics()
    everything = []
    for target, key in (("title", "title"), ("vendor", "vendor.name"), ("regions", "regions")):
        pairs = _pairs(gold, pred, target)
        assert len(pairs) > 300
        everything += pairs
        cer, wer = _jiwer_rates(pairs)
        assert abs(metrics[f"cer/{key}"] - cer) <= TOL, key
        assert abs(metrics[f"wer/{key}"] - wer) <= TOL, key
    cer, wer = _jiwer_rates(everything)
    assert abs(metrics["cer"] - cer) <= TOL and abs(metrics["wer"] - wer) <= TOL
    assert metrics["cer_ci_low"] <= metrics["cer"] <= metrics["cer_ci_high"]


def _json(report: Any) -> str:
    """The report's JSON but for where the inputs came from (rows or files)."""
    data = report.to_dict()
    for key in ("gold", "predictions", "signature"):
        del data[key]
    return json.dumps(data, sort_keys=True, default=str)


@pytest.mark.slow
def test_every_source_gives_the_same_json(tmp_path: Path) -> None:
    gold, pred = documents(300, seed=5)
    g, p = tmp_path / "gold.jsonl", tmp_path / "pred.jsonl"
    g.write_text("".join(json.dumps(d) + "\n" for d in gold), encoding="utf-8")
    p.write_text("".join(json.dumps(d) + "\n" for d in pred), encoding="utf-8")
    cfg = {**CONFIG, "statistics": {"slice_by": ["kind"]}}
    want = evaluate(gold, pred, cfg)
    assert "cer_by_kind/memo" in want.metrics()
    text = _json(want)
    for kwargs in ({"stream": False}, {}, {"workers": 2}):
        got = evaluate(g, p, cfg, **kwargs)
        assert _json(got) == text, kwargs
        frame = report_frame(got, "counts")
        assert {"text_accuracy/cer_num", "text_accuracy/cer/title_den"} <= set(frame.columns)


def test_off_by_default_and_every_output_unchanged() -> None:
    gold, pred = documents(20)
    report = evaluate(gold, pred)
    assert "text_accuracy" not in report.families and "families" not in report.to_dict()
    assert "cer" not in report.metrics() and "families:" not in report.signature()
    on = evaluate(gold, pred, CONFIG)
    assert on.signature().endswith("|families:text_accuracy=1")
    assert on.config.digest() != report.config.digest()


def test_direction_and_bad_config() -> None:
    for name in ("cer", "wer/title", "cer_by_kind/memo", "cer/title_ci_low"):
        assert not higher_is_better(name), name
    with pytest.raises(ConfigError, match=r"config key 'text_accuracy\.fields'"):
        evaluate([], [], {"text_accuracy": {"fields": ["items[].name"]}})
    with pytest.raises(ConfigError, match=r"unknown config key 'text_accuracy\.field'"):
        evaluate([], [], {"text_accuracy": {"field": ["title"]}})


def _write(folder: Path, gold: list[Any], pred: list[Any], name: str) -> tuple[str, str]:
    g, p = folder / "gold.jsonl", folder / f"{name}.jsonl"
    g.write_text("".join(json.dumps(d) + "\n" for d in gold), encoding="utf-8")
    p.write_text("".join(json.dumps(d) + "\n" for d in pred), encoding="utf-8")
    return str(g), str(p)


@pytest.mark.server
def test_logged_gated_and_compared_on_a_real_store(local_store: str, tmp_path: Path) -> None:
    from mlflow.tracking import MlflowClient

    gold, pred = documents(120, seed=9)
    cfg = tmp_path / "config.toml"
    cfg.write_text('[text_accuracy]\nfields = ["title", "vendor.name"]\nregions = true\n')
    g, p = _write(tmp_path, gold, pred, "pred")
    worse = [
        dict(d, title=_noisy(random.Random(i), str(d.get("title", "")))) for i, d in enumerate(pred)
    ]
    _, p2 = _write(tmp_path, gold, worse, "worse")
    runner = CliRunner()
    common = [
        "--config",
        str(cfg),
        "--tracking-uri",
        local_store,
        "--experiment",
        "ta",
        "--format",
        "json",
    ]
    ids = []
    for path in (p, p2):
        result = runner.invoke(main, ["score", g, path, *common], catch_exceptions=False)
        assert result.exit_code == 0, result.stderr
        ids.append(json.loads(result.stdout)["run_id"])
    client = MlflowClient(local_store)
    base, cand = (client.get_run(i).data for i in ids)
    assert base.metrics["cer"] == pytest.approx(evaluate(gold, pred, str(cfg)).metrics()["cer"])
    assert cand.metrics["cer/title"] > base.metrics["cer/title"]
    assert base.params["family_definitions"] == "text_accuracy=1"
    gated = runner.invoke(
        main, ["score", g, p2, "--config", str(cfg), "--no-log", "--max", "cer=0.0001"]
    )
    assert gated.exit_code == 1 and "cer" in gated.stderr
    out = runner.invoke(
        main,
        ["compare", f"runs:/{ids[0]}", f"runs:/{ids[1]}", "--tracking-uri", local_store,
         "--max-drop", "cer/title=0.0", "--format", "json"],
    )  # fmt: skip
    assert out.exit_code == 1, out.stderr
    verdict = json.loads(out.stdout)
    rows = {r["metric"]: r for r in verdict["metrics"]}
    assert rows["cer/title"]["higher_is_better"] is False
    assert rows["cer/title"]["ci_low"] > 0  # paired: the candidate is worse, surely
    assert rows["cer"]["ci_low"] is not None and rows["cer"]["p_value"] is not None
