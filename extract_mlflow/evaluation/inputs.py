"""What an evaluation is given: the :class:`Setup` every part shares (decided by the config
and the call, before the pass), the :class:`Inputs` facts about the input sets that no part sees
alone, and the :class:`Extras` inputs of the optional families.

Plain Python, beside the compiled pass (:mod:`~extract_mlflow.evaluation.accumulator`): these
are built once per run, and as ordinary frozen dataclasses they pickle as they are.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..config import Config
from ..errors import ConfigError
from ..families import FAMILIES, section_of
from ..io.loading import GoldSet, PredictionSet
from ..io.source_file import SourceUse

if TYPE_CHECKING:
    from ..fidelity.approvals import Approvals
    from ..fidelity.canaries import Canary

__all__ = ["Extras", "Inputs", "Setup", "content_digest", "list_digest"]


@dataclass
class Extras:
    """Inputs of the optional families: source texts (text fidelity) and approvals."""

    sources: Mapping[str, str] | None = None
    source_key: str | None = None
    approvals: Approvals | None = None
    canaries: tuple[str, ...] = ()
    """prompt-injection canaries planted in the sources (``INSTRUCTION => PAYLOAD``)"""


def content_digest(value: Any) -> str:
    """sha256 of `value` as canonical JSON (what a signature compares, not how it was stored).

    >>> content_digest([["a", "text"]]) == content_digest([["a", "text"]])
    True
    """
    return hashlib.sha256(_canonical(value)).hexdigest()


def list_digest(items: Iterable[Any]) -> str:
    """:func:`content_digest` of the list of `items`, its JSON written an item at a time (the
    list is never held).

    >>> list_digest(iter([["a", "text"], ["b", ""]])) == content_digest([["a", "text"], ["b", ""]])
    True
    """
    digest = hashlib.sha256(b"[")
    for n, item in enumerate(items):
        digest.update(b"," + _canonical(item) if n else _canonical(item))
    digest.update(b"]")
    return digest.hexdigest()


def _canonical(value: Any) -> bytes:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.encode("utf-8")


@dataclass(frozen=True)
class Setup:
    """What every part of an evaluation must share, decided by the config and the call alone
    (never by the data): parts merge only under equal setups."""

    config: Config
    profile: str | None = None
    family_keys: tuple[str, ...] = ()
    """top-level keys that are not fields: the gold keys every metric family reads
    (:meth:`~extract_mlflow.families.base.Family.keys`),
    the top-level key of every ``--slice-by`` attribute (unless a ``[fields]`` rule of the
    config names a path under it: then it is a field too), and the ``--source-key`` field"""
    fidelity: bool = False
    """source texts were given (text fidelity runs)"""
    approvals: Approvals | None = None
    canaries: tuple[Canary, ...] = ()
    mixed: frozenset[str] = frozenset()
    """paths whose gold values are partly measurements ("1.2 kg" beside "n/a"): no
    ``quantity`` is inferred there. Known only after a pass over the gold set
    (:meth:`~extract_mlflow.evaluation.accumulator.Evaluation.rescored_setup`): a pass starts
    with none, and is scored again when it meets some"""

    @classmethod
    def of(cls, config: Config, profile: str | None = None, extras: Extras | None = None) -> Setup:
        """The setup of scoring under `config`, layout `profile` and `extras` (an unknown
        `profile` is a ConfigError)."""
        if profile is not None and profile not in config.layout.profiles:
            known = ", ".join(sorted(config.layout.profiles)) or "none configured"
            raise ConfigError(f"unknown layout profile '{profile}' (profiles: {known})")
        extras = extras or Extras()
        ruled = {path.split(".")[0].removesuffix("[]") for path in config.fields}
        tops = tuple(t for p in config.statistics.slice_by if (t := p.split(".")[0]) not in ruled)
        inputs = (k for f in FAMILIES for k in f.keys(section_of(config, f)))
        family = (*inputs, *tops)
        if extras.source_key:
            family += (extras.source_key,)
        fidelity = extras.sources is not None
        canaries: tuple[Canary, ...] = ()
        if extras.canaries:  # the canary matcher and fidelity's tokenizer (~4 ms): for canaries
            from ..fidelity.canaries import parse_canaries

            canaries = parse_canaries(extras.canaries)
        if canaries and not fidelity:
            raise ConfigError("canaries are looked for in the sources: give sources too")
        family = tuple(dict.fromkeys(family))
        return cls(config, profile, family, fidelity, extras.approvals, canaries)


@dataclass(frozen=True)
class Inputs:
    """Facts about the input sets that no part sees alone: where they came from, their digests,
    prediction ids not in gold, unreadable lines, the sources not used."""

    gold_source: str = "<rows>"
    pred_source: str = "<rows>"
    gold_digest: str | None = None
    pred_digest: str | None = None
    unknown_ids: tuple[str, ...] = ()
    unattributed: tuple[str, ...] = ()
    unattributed_count: int = 0
    sources_digest: str | None = None
    approvals_digest: str | None = None
    unused_sources: tuple[str, ...] = ()
    canaries_digest: str | None = None

    @classmethod
    def of(
        cls,
        gs: GoldSet,
        ps: PredictionSet,
        extras: Extras | None = None,
        used: SourceUse | None = None,
    ) -> Inputs:
        """The facts of loaded inputs (in-memory gold rows get a digest of their content);
        `used`: the sources the gold documents were given, if the pass noted them (else they
        are looked up for every gold document)."""
        if used is None and extras is not None and extras.sources is not None:
            used = SourceUse(extras.sources).add(gs.docs)
        return cls(
            gold_source=gs.source,
            pred_source=ps.source,
            gold_digest=gs.digest or content_digest(sorted(gs.docs.items())),
            pred_digest=ps.digest,
            unknown_ids=tuple(sorted(set(ps.docs).union(ps.parse_failures).difference(gs.docs))),
            unattributed=tuple(ps.unattributed),
            unattributed_count=ps.unattributed_count,
            **cls.extras_facts(extras, used),
        )

    @staticmethod
    def extras_facts(extras: Extras | None, used: SourceUse | None) -> dict[str, Any]:
        """The digests of the sources the gold documents used (`used`: given when there are
        sources), of the approvals and canaries, and the sources no gold document used."""
        extras = extras or Extras()
        sources_digest = approvals_digest = None
        unused: tuple[str, ...] = ()
        if extras.sources is not None:
            assert used is not None and used.sources is extras.sources
            sources_digest = list_digest(used.used())  # content_digest of the sorted pairs
            unused = tuple(used.unused())
        if extras.approvals:
            pairs = sorted([*key, note or ""] for key, note in extras.approvals.items())
            approvals_digest = content_digest(pairs)
        canaries = sorted(set(extras.canaries))
        return {
            "sources_digest": sources_digest,
            "approvals_digest": approvals_digest,
            "unused_sources": unused,
            "canaries_digest": content_digest(canaries) if canaries else None,
        }
