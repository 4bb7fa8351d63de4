"""config: loading TOML/JSON, errors that name the key, digest and TOML round trip."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extract_mlflow.config import FIELD_TYPES, Config, FieldRule
from extract_mlflow.config_file import config_from_mapping, load_config
from extract_mlflow.errors import ConfigError, ExtractMlflowError

DESIGN_EXAMPLE = """\
id_key = "id"
match_threshold = 0.0
date_formats = ["%Y-%m-%d", "%d.%m.%Y"]

[fields."total"]
type = "number"
rel_tol = 0.10

[fields."line_items[].description"]
type = "text"
fuzzy = 0.85

[fields."notes"]
ignore = true
"""


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def config_error(data: Any) -> str:
    with pytest.raises(ConfigError) as info:
        config_from_mapping(data)
    return str(info.value)


# -- loading -------------------------------------------------------------------------------


def test_load_toml(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "eval.toml", DESIGN_EXAMPLE))
    assert config.id_key == "id"
    assert config.match_threshold == 0.0
    assert config.date_formats == ("%Y-%m-%d", "%d.%m.%Y")
    assert config.fields["total"] == FieldRule(type="number", rel_tol=0.10)
    assert config.fields["line_items[].description"] == FieldRule(type="text", fuzzy=0.85)
    assert config.fields["notes"].ignore is True
    assert config.fields["notes"].type is None


def test_load_json(tmp_path: Path) -> None:
    data = {
        "id_key": "doc_id",
        "match_threshold": 0.5,
        "date_formats": ["%d/%m/%Y"],
        "fields": {"rate": {"type": "quantity", "unit": "h⁻¹", "rel_tol": 0.05}},
    }
    config = load_config(write(tmp_path, "eval.json", json.dumps(data)))
    assert config.id_key == "doc_id"
    assert config.match_threshold == 0.5
    assert config.date_formats == ("%d/%m/%Y",)
    assert config.fields["rate"] == FieldRule(type="quantity", unit="h⁻¹", rel_tol=0.05)


def test_json_suffix_is_case_insensitive(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, "EVAL.JSON", '{"id_key": "k"}')).id_key == "k"


def test_no_path_gives_defaults() -> None:
    config = load_config(None)
    assert config == Config()
    assert config.id_key == "id"
    assert config.match_threshold == 0.0
    assert config.date_formats == ("%Y-%m-%d",)
    assert config.fields == {}


def test_empty_toml_gives_defaults(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, "empty.toml", "")) == Config()


@pytest.mark.parametrize(
    ("name", "text"), [("a.toml", 'id_key = "k"\n'), ("a.json", '{"id_key": "k"}')]
)
def test_utf8_bom_is_accepted(tmp_path: Path, name: str, text: str) -> None:
    path = write(tmp_path, name, b"\xef\xbb\xbf" + text.encode())
    assert load_config(path).id_key == "k"


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.toml"
    with pytest.raises(ConfigError, match="not found") as info:
        load_config(path)
    assert str(path) in str(info.value)


def test_a_directory_is_not_a_config(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("bad.toml", "id_key = \n"),
        ("bad.toml", "[fields.\"x\"\ntype = 'number'\n"),
        ("bad.toml", 'id_key = "a"\nid_key = "b"\n'),  # duplicate key
        ("bad.json", '{"id_key": '),
        ("bad.json", "id_key = 'x'"),  # TOML in a .json file
    ],
)
def test_unparseable_files(tmp_path: Path, name: str, content: str) -> None:
    path = write(tmp_path, name, content)
    with pytest.raises(ConfigError, match="cannot parse config") as info:
        load_config(path)
    assert str(path) in str(info.value)


def test_not_utf8(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="UTF-8"):
        load_config(write(tmp_path, "latin.toml", 'id_key = "caf\xe9"\n'.encode("latin-1")))


@pytest.mark.parametrize("data", [[1, 2], "text", 3, None])
def test_top_level_must_be_a_table(tmp_path: Path, data: Any) -> None:
    with pytest.raises(ConfigError, match="table/object"):
        load_config(write(tmp_path, "c.json", json.dumps(data)))


def test_config_error_is_an_extract_mlflow_error() -> None:
    assert issubclass(ConfigError, ExtractMlflowError)


# -- errors name the key -------------------------------------------------------------------


def test_unknown_top_level_key(tmp_path: Path) -> None:
    path = write(tmp_path, "c.toml", 'id_key = "id"\nmatch_treshold = 0.5\n')
    with pytest.raises(ConfigError, match="unknown config key 'match_treshold'") as info:
        load_config(path)
    assert str(path) in str(info.value)


def test_unknown_key_inside_a_field(tmp_path: Path) -> None:
    path = write(tmp_path, "c.toml", '[fields."line_items[].qty"]\ntype = "number"\nreltol = 0.1\n')
    with pytest.raises(ConfigError, match="unknown config key") as info:
        load_config(path)
    message = str(info.value)
    assert "reltol" in message
    assert "line_items[].qty" in message


def test_unknown_key_in_json(tmp_path: Path) -> None:
    path = write(tmp_path, "c.json", '{"fields": {"total": {"type": "number", "tolerance": 1}}}')
    with pytest.raises(ConfigError, match=r"unknown config key 'fields\.total\.tolerance'"):
        load_config(path)


@pytest.mark.parametrize(
    ("rule", "key"),
    [
        ({"type": "money"}, "type"),
        ({"rel_tol": "a"}, "rel_tol"),
        ({"rel_tol": "0.1"}, "rel_tol"),  # a string is not a number, even when it reads as one
        ({"rel_tol": -0.1}, "rel_tol"),
        ({"tol": -1}, "tol"),
        ({"tol": True}, "tol"),
        ({"tol": float("nan")}, "tol"),
        ({"fuzzy": 2}, "fuzzy"),
        ({"fuzzy": -0.5}, "fuzzy"),
        ({"fuzzy": True}, "fuzzy"),  # not silently 1.0
        ({"casefold": "yes"}, "casefold"),  # not silently True
        ({"ignore": 1}, "ignore"),
        ({"unit": 5}, "unit"),
    ],
)
def test_wrong_type_in_a_field_names_the_key(rule: dict[str, Any], key: str) -> None:
    message = config_error({"fields": {"total": rule}})
    assert f"'fields.total.{key}'" in message


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"match_threshold": 2}, "match_threshold"),
        ({"match_threshold": -0.1}, "match_threshold"),
        ({"match_threshold": "0.5"}, "match_threshold"),
        ({"match_threshold": True}, "match_threshold"),
        ({"id_key": 1}, "id_key"),
        ({"date_formats": "%Y-%m-%d"}, "date_formats"),
        ({"fields": []}, "fields"),
        ({"fields": {"total": 1}}, "fields.total"),
    ],
)
def test_wrong_type_at_top_level_names_the_key(data: dict[str, Any], key: str) -> None:
    assert f"'{key}'" in config_error(data)


def test_wrong_type_in_toml_file(tmp_path: Path) -> None:
    path = write(tmp_path, "c.toml", '[fields."total"]\ntype = "money"\n')
    with pytest.raises(ConfigError, match=r"'fields\.total\.type'"):
        load_config(path)


@pytest.mark.parametrize(
    "path", ["a..b", "a[]]", "a[", "a]", "a[0]", ".a", "a.", "", "[]", "a.[]", "a[][]", "a[].", "."]
)
def test_bad_field_paths_are_rejected(path: str) -> None:
    message = config_error({"fields": {path: {"type": "number"}}})
    assert "bad field path" in message
    assert repr(path) in message


@pytest.mark.parametrize(
    "path", ["total", "vendor.name", "line_items[].qty", "tags[]", "a[].b[].c", "rows[].TON", "a b"]
)
def test_good_field_paths(path: str) -> None:
    assert path in config_from_mapping({"fields": {path: {"type": "text"}}}).fields


def test_every_documented_type_is_accepted() -> None:
    assert set(FIELD_TYPES) == {"number", "quantity", "ratio", "date", "text", "id", "enum", "bool"}
    for type_ in FIELD_TYPES:
        assert config_from_mapping({"fields": {"f": {"type": type_}}}).fields["f"].type == type_


def test_integers_are_accepted_for_floats() -> None:
    config = config_from_mapping({"match_threshold": 1, "fields": {"f": {"tol": 2, "fuzzy": 1}}})
    assert config.match_threshold == 1.0
    assert config.fields["f"].tol == 2.0
    assert config.fields["f"].fuzzy == 1.0


# -- digest and TOML round trip ------------------------------------------------------------


def test_digest_is_stable_under_key_order() -> None:
    a = {
        "id_key": "id",
        "date_formats": ["%Y-%m-%d"],
        "fields": {
            "total": {"type": "number", "rel_tol": 0.1},
            "notes": {"ignore": True, "type": "text"},
        },
    }
    b = {
        "fields": {
            "notes": {"type": "text", "ignore": True},
            "total": {"rel_tol": 0.1, "type": "number"},
        },
        "date_formats": ["%Y-%m-%d"],
        "id_key": "id",
    }
    assert config_from_mapping(a).digest() == config_from_mapping(b).digest()


def test_the_statistics_section_kept_every_digest() -> None:
    """[statistics] holds what [structure] held (slices, bootstrap, confidence): the digests
    are those the same settings had there (pinned from before the move), so earlier runs stay
    comparable; the old place is refused with a line naming the new one."""
    assert Config().digest() == "791dd4dfe4f35f74"
    moved = {"slice_by": ["scan"], "bootstrap_resamples": 200, "confidence": 0.9}
    config = config_from_mapping({"statistics": moved, "structure": {"boundary_window": 1}})
    assert config.digest() == "40c79afa5f2e7153"
    assert config.statistics.slice_by == ("scan",)
    toml = config.to_toml()
    assert "[statistics]" in toml and "slice_by" not in toml.split("[statistics]")[0]
    assert tomllib.loads(toml)["statistics"]["bootstrap_resamples"] == 200
    for key in ("slice_by", "confidence", "bootstrap_seed"):
        with pytest.raises(ConfigError) as err:
            config_from_mapping({"structure": {key: moved.get(key, 1)}}, "c.toml")
        assert str(err.value) == f"c.toml: config key 'structure.{key}' is now 'statistics.{key}'"
    with pytest.raises(ConfigError, match=r"unknown config key 'statistics\.bootstrap'"):
        config_from_mapping({"statistics": {"bootstrap": 5}})


def test_digest_is_the_same_for_toml_and_json(tmp_path: Path) -> None:
    toml_config = load_config(write(tmp_path, "c.toml", DESIGN_EXAMPLE))
    as_json = json.dumps(toml_config.model_dump(mode="json"))
    json_config = load_config(write(tmp_path, "c.json", as_json))
    assert toml_config.digest() == json_config.digest()


def test_digest_changes_with_content() -> None:
    base = Config().digest()
    assert len(base) == 16
    assert all(c in "0123456789abcdef" for c in base)
    assert Config().digest() == base
    assert Config(id_key="doc").digest() != base
    assert (
        Config(fields={"x": FieldRule(rel_tol=0.1)}).digest()
        != Config(fields={"x": FieldRule(rel_tol=0.2)}).digest()
    )
    assert (
        Config(date_formats=("%d.%m.%Y", "%Y-%m-%d")).digest()
        != Config(date_formats=("%Y-%m-%d", "%d.%m.%Y")).digest()
    )  # the order of date formats matters: first that parses wins


def test_to_toml_round_trips(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "c.toml", DESIGN_EXAMPLE))
    again = load_config(write(tmp_path, "again.toml", config.to_toml()))
    assert again == config
    assert again.digest() == config.digest()


segment = st.text(
    alphabet=st.characters(exclude_characters=".[]", exclude_categories=["Cs"]), min_size=1
)
paths = st.builds(
    lambda parts, marks: ".".join(
        p + ("[]" if m else "") for p, m in zip(parts, marks, strict=False)
    ),
    st.lists(segment, min_size=1, max_size=3),
    st.lists(st.booleans(), min_size=3, max_size=3),
)
non_negative = st.one_of(st.none(), st.floats(min_value=0, max_value=1e9, allow_nan=False))
rules = st.builds(
    FieldRule,
    type=st.one_of(st.none(), st.sampled_from(FIELD_TYPES)),
    tol=non_negative,
    rel_tol=non_negative,
    unit=st.one_of(st.none(), st.text()),
    fuzzy=st.one_of(st.none(), st.floats(min_value=0, max_value=1)),
    casefold=st.booleans(),
    ignore=st.booleans(),
)
configs = st.builds(
    Config,
    id_key=st.text(),
    match_threshold=st.floats(min_value=0, max_value=1),
    date_formats=st.lists(st.text(), max_size=3).map(tuple),
    fields=st.dictionaries(paths, rules, max_size=4),
)


@given(configs)
def test_to_toml_round_trips_any_config(config: Config) -> None:
    import tomllib

    again = config_from_mapping(tomllib.loads(config.to_toml()))
    assert again == config
    assert again.digest() == config.digest()


@given(configs, st.randoms())
def test_digest_ignores_field_order(config: Config, rnd: Any) -> None:
    items = list(config.fields.items())
    rnd.shuffle(items)
    shuffled = Config(
        id_key=config.id_key,
        match_threshold=config.match_threshold,
        date_formats=config.date_formats,
        fields=dict(items),
    )
    assert shuffled.digest() == config.digest()
