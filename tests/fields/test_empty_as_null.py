"""Config `empty_as_null`: which empty values count as absent (null always does).

By default (every kind listed) an empty or blank string, an empty list and an empty object are
absent, as they always were; a kind left out is scored as a value, compared like any other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extract_mlflow import evaluate
from extract_mlflow.config import Config
from extract_mlflow.config_file import config_from_mapping, load_config
from extract_mlflow.errors import ConfigError
from extract_mlflow.fields.scorer import FieldScorer

ALL = ["empty_string", "empty_list", "empty_object"]
NONE: list[str] = []


def counts(gold: dict[str, Any], pred: dict[str, Any] | None, empties: list[str]) -> dict[str, Any]:
    """path → (TP, FP, FN) of one document, paths with nothing counted left out."""
    scorer = FieldScorer(Config(empty_as_null=tuple(empties)))  # type: ignore[arg-type]
    got = scorer.score(gold, pred).counts
    return {path: tuple(c) for path, c in got.items() if any(c)}


# -- hand-computed cases -----------------------------------------------------------------


def test_the_default_is_every_kind() -> None:
    assert set(Config().empty_as_null) == set(ALL)


@pytest.mark.parametrize("blank", ["", "   "])
def test_gold_empty_string_vs_pred_absent(blank: str) -> None:
    gold, pred = {"id": 1, "a": blank, "b": "x"}, {"id": 1, "b": "x"}
    # listed: the gold "" is absent, nothing is missing
    assert counts(gold, pred, ALL) == {"b": (1, 0, 0)}
    # not listed: the gold "" is a value the prediction misses (1 FN)
    assert counts(gold, pred, ["empty_list", "empty_object"]) == {
        "a": (0, 0, 1),
        "b": (1, 0, 0),
    }


def test_pred_empty_list_vs_gold_absent() -> None:
    gold, pred = {"id": 1, "b": "x"}, {"id": 1, "b": "x", "tags": []}
    assert counts(gold, pred, ALL) == {"b": (1, 0, 0)}
    # not listed: the predicted [] is a value gold does not have (1 FP at the list's path)
    assert counts(gold, pred, ["empty_string", "empty_object"]) == {
        "b": (1, 0, 0),
        "tags": (0, 1, 0),
    }


def test_nested_empty_object() -> None:
    gold = {"id": 1, "v": {"x": {}, "n": "A"}}
    same = {"id": 1, "v": {"x": {}, "n": "A"}}
    assert counts(gold, same, ALL) == {"v.n": (1, 0, 0)}
    assert counts(gold, same, NONE) == {"v.n": (1, 0, 0), "v.x": (1, 0, 0)}
    # a gold object holding only an empty object: absent as a whole, or one value at v.x
    gold2, pred2 = {"id": 1, "v": {"x": {}}}, {"id": 1}
    assert counts(gold2, pred2, ALL) == {}
    assert counts(gold2, pred2, ["empty_string", "empty_list"]) == {"v.x": (0, 0, 1)}


def test_empties_inside_lists() -> None:
    gold = {"id": 1, "tags": ["a", ""]}
    pred = {"id": 1, "tags": ["a"]}
    assert counts(gold, pred, ALL) == {"tags[]": (1, 0, 0)}
    assert counts(gold, pred, NONE) == {"tags[]": (1, 0, 1)}
    assert counts(gold, {"id": 1, "tags": ["a", " "]}, NONE) == {"tags[]": (2, 0, 0)}


def test_a_missing_prediction_counts_kept_empties() -> None:
    gold = {"id": 1, "a": "", "b": []}
    assert counts(gold, None, ALL) == {}
    assert counts(gold, None, NONE) == {"a": (0, 0, 1), "b": (0, 0, 1)}


def test_null_is_always_absent() -> None:
    assert counts({"id": 1, "a": None}, {"id": 1}, NONE) == {}
    assert counts({"id": 1}, {"id": 1, "a": None}, NONE) == {}


def test_from_a_toml_config(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('empty_as_null = ["empty_list"]\n', encoding="utf-8")
    gold = [{"id": "1", "a": "", "b": "x"}]
    pred = [{"id": "1", "b": "x"}]
    report = evaluate(gold, pred, config=cfg)
    assert report.fields["a"].counts.fn == 1
    assert evaluate(gold, pred).micro.fn == 0


# -- the config ------------------------------------------------------------------------------


def test_bad_kind_is_a_config_error_naming_the_key() -> None:
    with pytest.raises(ConfigError, match="empty_as_null"):
        config_from_mapping({"empty_as_null": ["blank"]})
    with pytest.raises(ConfigError, match="empty_as_null"):
        config_from_mapping({"empty_as_null": ""})


def test_it_enters_the_digest() -> None:
    default = Config()
    # the default is the rule from before the key: the digest of a config without it is kept
    assert Config(empty_as_null=tuple(reversed(ALL))).digest() == default.digest()  # type: ignore[arg-type]
    digests = {
        Config(empty_as_null=tuple(kinds)).digest()  # type: ignore[arg-type]
        for kinds in ([], ["empty_string"], ["empty_list"], ["empty_object"], ALL)
    }
    assert len(digests) == 5
    assert "empty_as_null" not in default.to_toml()


def test_it_round_trips_through_the_stored_toml(tmp_path: Path) -> None:
    cfg = Config(empty_as_null=("empty_object",))
    path = tmp_path / "config.toml"
    path.write_text(cfg.to_toml(), encoding="utf-8")
    assert load_config(path) == cfg
    assert load_config(path).digest() == cfg.digest()


# -- the property ------------------------------------------------------------------------------

KEYS = st.sampled_from(["a", "b", "c", "d"])
SCALARS = st.one_of(st.sampled_from(["x", "y", "z"]), st.integers(0, 3))
EMPTIES: st.SearchStrategy[Any] = st.sampled_from(["", " ", [], {}, None])

json_values = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(KEYS, inner, max_size=3),
    ),
    max_leaves=8,
)
documents = st.dictionaries(KEYS, json_values, max_size=4)


def with_empties(value: Any, data: st.DataObject) -> Any:
    """`value` with empty values added at random places: new keys in objects, new items in
    lists (never a present value replaced)."""
    if isinstance(value, dict):
        out = {k: with_empties(v, data) for k, v in value.items()}
        for key in data.draw(st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=2)):
            if key not in out:
                out[key] = data.draw(EMPTIES)
        return out
    if isinstance(value, list):
        out_list = [with_empties(v, data) for v in value]
        for _ in range(data.draw(st.integers(0, 2))):
            out_list.insert(data.draw(st.integers(0, len(out_list))), data.draw(EMPTIES))
        return out_list
    return value


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(gold=documents, pred=documents, data=st.data())
def test_adding_empties_to_a_prediction_never_changes_the_counts(
    gold: dict[str, Any], pred: dict[str, Any], data: st.DataObject
) -> None:
    padded = with_empties(pred, data)
    gold, pred, padded = {"id": 1, **gold}, {"id": 1, **pred}, {"id": 1, **padded}
    assert counts(gold, padded, ALL) == counts(gold, pred, ALL)


def test_the_property_is_not_vacuous() -> None:
    """With empties as values, the same padding does change the counts."""
    gold, pred = {"id": 1, "a": "x"}, {"id": 1, "a": "x"}
    padded = {"id": 1, "a": "x", "b": ""}
    assert counts(gold, padded, ALL) == counts(gold, pred, ALL)
    assert counts(gold, padded, NONE) != counts(gold, pred, NONE)
