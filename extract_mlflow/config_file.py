"""A config as given: a TOML or JSON file, or a mapping, read into a :class:`Config` with the
section of every registered metric family (:mod:`extract_mlflow.families`); unknown keys and
wrong types are one error naming the key.

Above the families (their sections are theirs), so that a family module may sit at any layer
below; the config's own models (:mod:`extract_mlflow.config`) know no family.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .config import Config, read_settings
from .core.statistics import MOVED_FROM_STRUCTURE
from .errors import ConfigError
from .families import FAMILIES, Family, by_name

__all__ = ["config_from_mapping", "load_config"]


def _family(name: str) -> Family:
    found = by_name(name)
    assert found is not None  # the names come from FAMILIES
    return found


def _format_validation_error(source: str, err: ValidationError, within: str = "") -> str:
    errors = err.errors()
    # an unknown key explains a "field required" next to it (a typo), so it is named first
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    key = ".".join([*([within] if within else []), *(str(p) for p in first["loc"])]) or "<root>"
    if first["type"] == "extra_forbidden":
        return f"{source}: unknown config key '{key}'"
    return f"{source}: config key '{key}': {first['msg']}"


def config_from_mapping(data: dict[str, Any], source: str = "config") -> Config:
    """Validate a mapping into a :class:`Config`; errors name the offending key."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the config must be a table/object, not {type(data).__name__}")
    moved = data.get("structure")
    moved = [k for k in MOVED_FROM_STRUCTURE if k in moved] if isinstance(moved, dict) else []
    if moved:
        key = moved[0]
        raise ConfigError(f"{source}: config key 'structure.{key}' is now 'statistics.{key}'")
    sections = {
        f.name: data[f.name]
        for f in FAMILIES
        if f.name in data and f.name not in Config.model_fields
    }
    try:
        config = Config.model_validate({k: v for k, v in data.items() if k not in sections})
    except ValidationError as err:
        raise ConfigError(_format_validation_error(source, err)) from None
    for name, value in sections.items():  # a metric family's section (extract_mlflow.families)
        if not isinstance(value, dict):
            raise ConfigError(f"{source}: config key '{name}' must be a table")
        try:
            config = config.with_section(name, _family(name).section(**value))
        except ValidationError as err:
            raise ConfigError(_format_validation_error(source, err, name)) from None
    return config


def load_config(path: str | Path | None) -> Config:
    """Read a TOML (``.toml``) or JSON config file; ``None`` gives the defaults."""
    if path is None:
        return Config()
    p = Path(path)
    return config_from_mapping(read_settings(p, "config file"), str(p))
