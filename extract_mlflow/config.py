"""Config models (pydantic): how each field is compared, and the run-wide options.

A config is one TOML or JSON file; unknown keys are errors that name the key::

    id_key = "id"
    match_threshold = 0.0
    date_formats = ["%Y-%m-%d", "%d.%m.%Y"]

    [fields."total"]
    type = "number"
    rel_tol = 0.10
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import ConfigError
from .layout import LayoutConfig

FieldType = Literal["number", "quantity", "ratio", "date", "text", "id", "enum", "bool"]
FIELD_TYPES: tuple[str, ...] = FieldType.__args__  # type: ignore[attr-defined]

# A field path: dot-separated keys, each optionally followed by the list marker `[]`.
_PATH_RE = re.compile(r"^[^.\[\]]+(\[\])?(\.[^.\[\]]+(\[\])?)*$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FieldRule(_Strict):
    """How one field (leaf path) is compared."""

    # strict: `fuzzy = true` or `casefold = "yes"` is a wrong type, not 1.0 or True
    type: FieldType | None = None
    tol: float | None = Field(default=None, ge=0, strict=True, description="absolute tolerance")
    rel_tol: float | None = Field(
        default=None, ge=0, strict=True, description="tolerance relative to gold"
    )
    unit: str | None = Field(
        default=None, strict=True, description="unit assumed for a bare number"
    )
    fuzzy: float | None = Field(
        default=None, ge=0, le=1, strict=True, description="min text similarity"
    )
    casefold: bool = Field(default=False, strict=True)
    ignore: bool = Field(default=False, strict=True)


class Config(_Strict):
    """The whole scoring config."""

    id_key: str = Field(default="id", strict=True)
    text_key: str = Field(default="output", strict=True)
    match_threshold: float = Field(default=0.0, ge=0, le=1, strict=True)
    date_formats: tuple[str, ...] = ("%Y-%m-%d",)
    fields: dict[str, FieldRule] = Field(default_factory=dict)
    layout: LayoutConfig = Field(default_factory=LayoutConfig)

    @field_validator("fields")
    @classmethod
    def _check_paths(cls, value: dict[str, FieldRule]) -> dict[str, FieldRule]:
        for path in value:
            if not _PATH_RE.match(path):
                raise ValueError(
                    f"bad field path {path!r}: use dots for nesting and [] for list items, "
                    "e.g. 'vendor.name' or 'line_items[].qty'"
                )
        return value

    def digest(self) -> str:
        """A short, stable sha256 of the config's content (key order does not matter)."""
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    def to_toml(self) -> str:
        """The config as TOML (what a run stores as `eval/config.toml`)."""
        import tomli_w

        data = self.model_dump(mode="json", exclude_none=True)
        return tomli_w.dumps(data)


def _format_validation_error(source: str, err: ValidationError) -> str:
    errors = err.errors()
    # an unknown key explains a "field required" next to it (a typo), so it is named first
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    key = ".".join(str(p) for p in first["loc"]) or "<root>"
    if first["type"] == "extra_forbidden":
        return f"{source}: unknown config key '{key}'"
    return f"{source}: config key '{key}': {first['msg']}"


def config_from_mapping(data: dict[str, Any], source: str = "config") -> Config:
    """Validate a mapping into a :class:`Config`; errors name the offending key."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the config must be a table/object, not {type(data).__name__}")
    try:
        return Config.model_validate(data)
    except ValidationError as err:
        raise ConfigError(_format_validation_error(source, err)) from None


def load_config(path: str | Path | None) -> Config:
    """Read a TOML (``.toml``) or JSON config file; ``None`` gives the defaults."""
    if path is None:
        return Config()
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{p}: config file not found") from None
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read config: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError(f"{p}: config is not valid UTF-8") from None
    try:
        data = json.loads(text) if p.suffix.lower() == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{p}: cannot parse config: {exc}") from None
    return config_from_mapping(data, str(p))
