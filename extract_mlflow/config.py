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
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
    model_validator,
)

from .core.paths import EMPTY_KINDS, PATH_PATTERN, EmptyKind
from .core.statistics import StatisticsConfig
from .errors import ConfigError
from .structure.section import StructureConfig as StructureConfig  # its home: the scorers

FieldType = Literal["number", "quantity", "ratio", "date", "text", "id", "enum", "bool"]
FIELD_TYPES: tuple[str, ...] = FieldType.__args__  # type: ignore[attr-defined]

# A field path: dot-separated keys, each optionally followed by the list marker `[]`.


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


# -- sections of the config (one model each) ----------------------------------------


class LayoutProfile(BaseModel):
    """What a page about one topic must contain."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    required: tuple[str, ...] = Field(min_length=1)
    min_words: int = Field(default=20, ge=0, strict=True)
    table_section: str | None = None


class LayoutConfig(BaseModel):
    """The ``[layout]`` config section."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    profiles: dict[str, LayoutProfile] = Field(default_factory=dict)
    topic_key: str = Field(default="topic", strict=True)
    rows_key: str = Field(default="rows", strict=True)


class FidelityConfig(BaseModel):
    """The ``[fidelity]`` section of the config.

    ``fields`` / ``grounding_fields`` are paths or globs (``*`` matches within one path segment,
    ``**`` across segments, ``[]`` is literal: ``line_items[].*``). Unset, ``fields`` means every
    text leaf and ``grounding_fields`` every text, id, number and quantity leaf, except fields
    with ``ignore = true``; a field listed explicitly is checked even when ignored.
    ``exclude`` removes paths from both. ``casefold`` folds case for the n-gram scores (kept
    by default: a change of case is a change of wording); ``ground_casefold`` lets the span
    alignment and the fuzzy grounding ignore case (on by default: a value in capitals was not
    invented).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    fields: tuple[str, ...] | None = None
    grounding_fields: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()
    casefold: bool = Field(default=False, strict=True)
    fuzzy_threshold: float = Field(default=0.90, ge=0, le=1, strict=True)
    ground_casefold: bool = Field(default=True, strict=True)
    excellent: float = Field(default=0.70, ge=0, le=1, strict=True)
    good: float = Field(default=0.50, ge=0, le=1, strict=True)
    new_vocabulary_p1: float = Field(default=0.80, ge=0, le=1, strict=True)
    paraphrase_p1: float = Field(default=0.85, ge=0, le=1, strict=True)
    paraphrase_p4: float = Field(default=0.50, ge=0, le=1, strict=True)
    worst: int = Field(default=10, ge=0, strict=True, description="values listed worst first")
    scan_injection: bool = Field(default=True, strict=True)

    @field_validator("fields", "grounding_fields", "exclude")
    @classmethod
    def _check_patterns(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        for pattern in value or ():
            if not pattern.strip():
                raise ValueError("an empty field pattern")
        return value

    @model_validator(mode="after")
    def _check_bands(self) -> FidelityConfig:
        if self.good > self.excellent:
            raise ValueError(f"good ({self.good}) must not exceed excellent ({self.excellent})")
        return self


class Config(_Strict):
    """The whole scoring config."""

    id_key: str = Field(default="id", strict=True)
    text_key: str = Field(default="output", strict=True)
    match_threshold: float = Field(default=0.0, ge=0, le=1, strict=True)
    date_formats: tuple[str, ...] = ("%Y-%m-%d",)
    empty_as_null: tuple[EmptyKind, ...] = EMPTY_KINDS
    """Which empty values count as absent (null always does): ``empty_string`` (empty or
    blank), ``empty_list``, ``empty_object``. A kind left out is scored as a value."""
    fields: dict[str, FieldRule] = Field(default_factory=dict)
    layout: LayoutConfig = Field(default_factory=LayoutConfig)
    fidelity: FidelityConfig = Field(default_factory=FidelityConfig)
    structure: StructureConfig = Field(default_factory=StructureConfig)
    statistics: StatisticsConfig = Field(default_factory=StatisticsConfig)
    """how every metric is sliced and how its interval is drawn (run-wide)"""
    _sections: dict[str, BaseModel] = PrivateAttr(default_factory=dict)
    """the sections of the metric families (:mod:`extract_mlflow.families`) that the config
    sets and that are not fields of it, by family name"""

    def section(self, family: str) -> BaseModel | None:
        """The config section of the metric family `family` as set (a field of the config, or
        one it was given with :meth:`with_section`); None when it sets none (the family's
        defaults: :func:`extract_mlflow.families.section_of`)."""
        if family in type(self).model_fields:  # a section the config has had as a field
            return getattr(self, family)  # type: ignore[no-any-return]
        return self._sections.get(family)

    def with_section(self, family: str, section: BaseModel) -> Config:
        """A copy with the section of the metric family `family` set."""
        if family in type(self).model_fields:
            return self.model_copy(update={family: section})
        copy = self.model_copy()
        copy._sections = {**self._sections, family: section}
        return copy

    @field_validator("fields")
    @classmethod
    def _check_paths(cls, value: dict[str, FieldRule]) -> dict[str, FieldRule]:
        for path in value:
            if not PATH_PATTERN.match(path):
                raise ValueError(
                    f"bad field path {path!r}: use dots for nesting and [] for list items, "
                    "e.g. 'vendor.name' or 'line_items[].qty'"
                )
        return value

    @field_validator("empty_as_null")
    @classmethod
    def _sort_empties(cls, value: tuple[EmptyKind, ...]) -> tuple[EmptyKind, ...]:
        return tuple(sorted(set(value)))  # order and repeats mean nothing

    def _dump(self, **kwargs: Any) -> dict[str, Any]:
        data = self.model_dump(mode="json", **kwargs)
        if self.empty_as_null == EMPTY_KINDS:
            # the default, which is the rule from before the key existed: left out, so the
            # digest of every config that does not set it is what it always was
            del data["empty_as_null"]
        if self.structure.anls == "normalized":
            del data["structure"]["anls"]  # likewise: the rule from before the key existed
        for name, section in sorted(self._sections.items()):
            if section != type(section)():  # a family left at its defaults is off: left out
                data[name] = section.model_dump(mode="json", **kwargs)
        return data

    def digest(self) -> str:
        """A short, stable sha256 of the config's content (key order does not matter). The
        ``[statistics]`` keys count as the ``[structure]`` keys they were before they had a
        section, so a config's digest did not change when they moved."""
        data = self._dump()
        data["structure"] |= data.pop("statistics")
        canonical = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    def to_toml(self) -> str:
        """The config as TOML (what a run stores as `eval/config.toml`)."""
        import tomli_w

        return tomli_w.dumps(self._dump(exclude_none=True))


def read_settings(path: str | Path, label: str) -> Any:
    """The data of a TOML file (JSON for ``.json``): one ConfigError naming the file when it is
    missing, unreadable, not UTF-8 or does not parse. `label` says what it is ("config file")."""
    p = Path(path)
    try:
        text = p.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(f"{p}: {label} not found") from None
    except OSError as exc:
        raise ConfigError(f"{p}: cannot read {label}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{p}: {label} is not valid UTF-8") from None
    try:
        return json.loads(text) if p.suffix.lower() == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{p}: cannot parse {label}: {exc}") from None
