"""Setup.of_files (a prescan that loads nothing) == Setup.of on the loaded files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extract_mlflow.config import Config
from extract_mlflow.evaluation.accumulator import Setup
from extract_mlflow.io.loading import load_gold, load_predictions
from extract_mlflow.io.stream import top_keys

KEYS = ["tables", "blocks", "meta", "layout", "x"]


def _escaped(key: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in key)


def _line(doc: dict[str, Any], escape: bool) -> str:
    text = json.dumps(doc)
    if escape:  # spell every key with \u escapes (the same JSON)
        for key in KEYS:
            text = text.replace(json.dumps(key) + ":", '"' + _escaped(key) + '":')
    return text


def _config(slice_by: tuple[str, ...]) -> Config:
    cfg = Config()
    structure = cfg.structure.model_copy(update={"slice_by": slice_by})
    return cfg.model_copy(update={"structure": structure})


value = st.one_of(
    st.integers(0, 3),
    st.sampled_from(KEYS),
    st.dictionaries(st.sampled_from(KEYS), st.integers(0, 2), max_size=2),
)
doc_body = st.dictionaries(st.sampled_from(KEYS), value, max_size=3)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    gold=st.lists(doc_body, min_size=1, max_size=4),
    pred=st.lists(st.tuples(doc_body, st.sampled_from(["ok", "broken", "noid"])), max_size=4),
    escape=st.booleans(),
    slice_by=st.lists(st.sampled_from(["meta.layout", "layout", "x", "tables"]), max_size=2),
)
def test_of_files_equals_of(
    tmp_path: Path,
    gold: list[dict[str, Any]],
    pred: list[tuple[dict[str, Any], str]],
    escape: bool,
    slice_by: list[str],
) -> None:
    g, p = tmp_path / "g.jsonl", tmp_path / "p.jsonl"
    g.write_text("".join(_line({"id": f"d{i}", **d}, escape) + "\n" for i, d in enumerate(gold)))
    lines = []
    for i, (d, kind) in enumerate(pred):
        line = _line({"id": f"d{i}", **d}, escape)
        if kind == "broken":
            line = line[:-1]  # a parse failure: never carries a key
        elif kind == "noid":
            line = _line(d, escape)  # no id: unattributed
        lines.append(line + "\n")
    p.write_text("".join(lines) or "\n")
    cfg = _config(tuple(slice_by))
    gs = load_gold(g)
    try:
        ps = load_predictions(p)
    except Exception:
        return  # an unreadable prediction file: the stream reports it
    assert Setup.of_files(g, p, cfg) == Setup.of(gs, ps, cfg)


def test_raw_match_is_not_enough(tmp_path: Path) -> None:
    """The key spelled as a value or nested: found by the byte search, refuted by the parse."""
    g = tmp_path / "g.jsonl"
    g.write_text('{"id": "a", "note": "tables", "x": {"tables": 1}}\n')
    assert top_keys(g, ("tables",), gold=True) == set()
    g.write_text('{"id": "a"}\n{"id": "b", "\\u0074ables": []}\n')
    assert top_keys(g, ("tables",), gold=True) == {"tables"}


@pytest.mark.parametrize("escape", [False, True])
def test_structure_and_slices(tmp_path: Path, escape: bool) -> None:
    g, p = tmp_path / "g.jsonl", tmp_path / "p.jsonl"
    g.write_text(_line({"id": "a", "tables": [], "meta": {"layout": "x"}}, escape) + "\n")
    p.write_text(_line({"id": "a", "layout": 1}, escape) + "\n")
    cfg = _config(("meta.layout", "layout"))
    setup = Setup.of_files(g, p, cfg)
    assert setup.structure
    assert setup == Setup.of(load_gold(g), load_predictions(p), cfg)
    assert "meta" in setup.family_keys and "layout" not in setup.family_keys
