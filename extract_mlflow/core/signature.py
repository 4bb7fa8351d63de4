"""The signature of an evaluation, built from the params that record it: the one place that
makes the string.

A signature says how a run was scored: ``|``-separated ``name:value`` parts (docs/signature.md).
Every part comes from one param of :data:`SIGNATURE_PARAMS`; an evaluation run logs all of them
(an input it did not have as ``""``), and MLflow never lets a param change once logged. So the
signature a run really has is :func:`signature_of` its params, whatever its
``extract_mlflow.signature`` tag (which anyone may set) says.

>>> signature_of({"scorer_version": "0.1.0", "config_digest": "c0ffee", "gold_digest": "ab" * 32,
...               "sources_digest": ""})
'extract_mlflow:0.1.0|config:c0ffee|gold:abababababababab'
>>> differences("config:a|gold:b", "config:a|gold:c|teds:official")
['gold b vs c', 'teds — vs official']
"""

from __future__ import annotations

from collections.abc import Mapping

REQUIRED_PARAMS = ("scorer_version", "config_digest", "gold_digest")
"""The params every evaluation run has had from the start: without them a run cannot say how it
was scored."""

OPTIONAL_PARAMS = (
    "layout_profile",
    "sources_digest",
    "approvals_digest",
    "canaries_digest",
    "teds_definition",
    "anls_definition",
    "family_definitions",
)
"""The params of the inputs only some evaluations have (``""`` when absent). A run logged before
they were recorded lacks them; its signature is then read without those parts."""

SIGNATURE_PARAMS = REQUIRED_PARAMS + OPTIONAL_PARAMS

_PARTS = (
    ("layout_profile", "profile", None),
    ("sources_digest", "sources", 16),
    ("approvals_digest", "approvals", 16),
    ("canaries_digest", "canaries", 16),
    ("teds_definition", "teds", None),
    ("anls_definition", "anls", None),
    ("family_definitions", "families", None),
)


def signature_of(params: Mapping[str, str]) -> str:
    """The signature that `params` (a run's params, or :meth:`Report.signature_params`) record;
    a missing or empty optional param leaves its part out. The required params must be there
    (:func:`missing_params`)."""
    gold = params["gold_digest"] or "rows"  # in-memory gold without a digest
    parts = [
        f"extract_mlflow:{params['scorer_version']}",
        f"config:{params['config_digest']}",
        f"gold:{gold[:16]}",
    ]
    for param, name, digits in _PARTS:
        value = params.get(param) or ""
        if value:
            parts.append(f"{name}:{value[:digits] if digits else value}")
    return "|".join(parts)


def missing_params(params: Mapping[str, str]) -> list[str]:
    """The required params that `params` lacks (empty: :func:`signature_of` can be computed)."""
    return [p for p in REQUIRED_PARAMS if p not in params]


def signature_parts(signature: str) -> dict[str, str]:
    """``name -> value`` of a signature's parts (a part without ``:`` is named by position)."""
    parts = {}
    for i, piece in enumerate(signature.split("|")):
        name, sep, value = piece.partition(":")
        parts[name if sep else f"part{i}"] = value if sep else piece
    return parts


def differences(first: str, second: str) -> list[str]:
    """Each part in which two signatures differ, as ``name <first> vs <second>`` (``—``: a part
    one of them does not have)."""
    a, b = signature_parts(first), signature_parts(second)
    return [
        f"{k} {a.get(k, '—')} vs {b.get(k, '—')}"
        for k in dict.fromkeys([*a, *b])
        if a.get(k) != b.get(k)
    ]


def signature_difference(baseline: str | None, candidate: str | None) -> str | None:
    """Why two runs are not comparable, or None when their signatures agree."""
    if baseline is None or candidate is None:
        who = "the candidate run has no"
        if baseline is None:
            who = "neither run has a" if candidate is None else "the baseline run has no"
        return f"{who} signature: cannot tell how it was scored"
    if baseline == candidate:
        return None
    return "the runs were scored differently (" + "; ".join(differences(baseline, candidate)) + ")"
