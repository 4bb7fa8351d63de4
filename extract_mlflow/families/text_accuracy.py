"""Text accuracy: character and word error rates (CER, WER) of text fields and of a page's
regions, as a metric family (:mod:`.base`).

Configured in ``[text_accuracy]``::

    [text_accuracy]
    fields = ["title", "vendor.name"]   # text fields (dotted paths, not inside lists)
    regions = true                       # the page text of the gold line's regions

For each document and each target (a field, or the regions) the reference is the gold text
and the hypothesis the predicted one; the statistics are the edit operations and the
reference's length (:mod:`extract_mlflow.text_accuracy`, which defines the tokens). Logged:
``cer`` and ``wer`` over every target of every document, and ``cer/<target>``,
``wer/<target>`` per target, each Σedits / Σreference length over the documents, lower is
better. A region page's text is its regions' texts in order, one per line (regions as a list
of objects with a text, or an object of texts by id; of several accepted texts the first), so
reading order mistakes count as edits.

Which texts count: a gold value that is a string is a reference (``""`` too); a missing or null
gold value is an empty reference when the prediction has text there (its characters are all
insertions, adding nothing to the reference length) and nothing otherwise; a gold value of
another type (a number, a list) is not text and is left out. A prediction that is missing,
unreadable or not a string there reads as ``""`` (every reference token deleted).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..core.keys import key_suffix
from ..core.paths import lookup
from .base import Statistics
from .ratio import RatioFamily


class TextAccuracyConfig(BaseModel):
    """The ``[text_accuracy]`` section: off unless it names fields or turns regions on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fields: tuple[str, ...] = ()
    """text fields to score (dotted paths, not inside lists)"""
    regions: bool = Field(default=False, strict=True)
    """score the page text made from the gold line's regions"""
    regions_key: str = Field(default="regions", min_length=1, strict=True)
    region_text_key: str = Field(default="text", min_length=1, strict=True)

    @field_validator("fields")
    @classmethod
    def _plain_paths(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for path in value:
            if not path or "[]" in path or any(not part for part in path.split(".")):
                raise ValueError(
                    f"bad text field {path!r}: a dotted path to a text value, not inside a list"
                )
        return tuple(dict.fromkeys(value))


def _on(section: TextAccuracyConfig) -> bool:
    return bool(section.fields) or section.regions


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _region_text(doc: Mapping[str, Any] | None, section: TextAccuracyConfig) -> str | None:
    """The page text of a document's regions: a list of regions (objects with a text) or an
    object of texts by region id, in order; a region with several accepted texts (a list)
    reads as its first. None without regions."""
    regions = doc.get(section.regions_key) if doc is not None else None
    if isinstance(regions, Mapping):
        items = list(regions.values())
    elif isinstance(regions, list):
        key = section.region_text_key
        items = [r.get(key) if isinstance(r, Mapping) else r for r in regions]
    else:
        return None
    texts = [v[0] if isinstance(v, list) and v else v for v in items]
    return "\n".join(t for t in texts if isinstance(t, str))


class TextAccuracy(RatioFamily):
    """The family: CER and WER per target and over all targets."""

    name: str = "text_accuracy"
    title: str = "Text accuracy"
    section: type[BaseModel] = TextAccuracyConfig
    higher_is_better: bool = False
    metric_names: tuple[str, ...] = ("cer", "wer")

    def active(self, section: TextAccuracyConfig, setup: Any) -> bool:
        return _on(section)

    def definition(self, section: TextAccuracyConfig) -> str:
        return "1" if _on(section) else ""

    def document(
        self,
        gold: Mapping[str, Any],
        pred: Mapping[str, Any] | None,
        section: TextAccuracyConfig,
    ) -> Statistics:
        from ..text_accuracy import char_edits, word_edits  # rapidfuzz: for scored texts only

        pairs: list[tuple[str, str | None, str | None]] = []
        for path in section.fields:
            gold_value = lookup(gold, path)
            if gold_value is not None and not isinstance(gold_value, str):
                continue  # not text
            hyp = _text(lookup(pred, path)) if pred is not None else None
            pairs.append((key_suffix(path), _text(gold_value), hyp))
        if section.regions:
            hyp = _region_text(pred, section)
            pairs.append((key_suffix(section.regions_key), _region_text(gold, section), hyp))
        out: dict[str, tuple[float, float]] = {}
        totals = [0, 0, 0, 0]
        for key, ref, hyp in pairs:
            if ref is None and not hyp:
                continue  # no reference and nothing predicted: nothing to count
            c, w = char_edits(ref or "", hyp or ""), word_edits(ref or "", hyp or "")
            out[f"cer/{key}"] = (c.errors, c.reference_length)
            out[f"wer/{key}"] = (w.errors, w.reference_length)
            for i, v in enumerate((c.errors, c.reference_length, w.errors, w.reference_length)):
                totals[i] += v
        if not out:
            return {}
        return {"cer": (totals[0], totals[1]), "wer": (totals[2], totals[3]), **out}


TEXT_ACCURACY = TextAccuracy()
