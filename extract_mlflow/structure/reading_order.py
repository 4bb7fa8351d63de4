"""Reading order of blocks: ROAcc, Kendall tau, coverage, per-page ROAcc and cross-page
continuity. Pure.

A ``blocks`` field lists block ids in reading order, or objects ``{id, page}``; ids are compared
as strings (``1`` and ``"1"`` are the same block).

- ROAcc = 1 − Levenshtein(pred ids, gold ids) / max(lengths) over the whole sequences (an
  insertion, deletion or substitution of one id costs 1); both empty → None (0/0).
- Kendall tau (``scipy.stats.kendalltau``) between the gold and predicted positions of the blocks
  present in both (first occurrence of a repeated id); fewer than 2 common blocks → None.
- coverage = distinct gold ids the prediction has / distinct gold ids.
- Per page (when gold blocks carry a page): ROAcc of the gold blocks of that page against the
  predicted blocks of that page (a predicted block's own page, else the gold page of its id).
- Cross-page continuity: of the gold successor links (consecutive gold blocks) that cross a page
  break, the share the prediction keeps (the successor directly follows in the prediction);
  no such link → None.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from rapidfuzz.distance import Levenshtein


@dataclass(frozen=True, slots=True)
class Block:
    """One block in reading order, and the page it is on (if given)."""

    id: str
    page: str | None = None


def parse_blocks(value: Any, id_key: str = "id", page_key: str = "page") -> list[Block]:
    """Blocks from a list of ids or of ``{id, page}`` objects; anything else → TypeError."""
    if not isinstance(value, (list, tuple)):
        raise TypeError("blocks must be a list of block ids or of {id, page} objects")
    return [_block(item, id_key, page_key) for item in value]


def _block(item: Any, id_key: str, page_key: str) -> Block:
    if isinstance(item, Mapping):
        if item.get(id_key) is None:
            raise TypeError(f"a block object lacks its '{id_key}'")
        page = item.get(page_key)
        return Block(str(item[id_key]), None if page is None else str(page))
    if isinstance(item, (str, int)) and not isinstance(item, bool):
        return Block(str(item))
    raise TypeError(f"a block must be an id or an object with '{id_key}', not {item!r}")


def roacc(gold: Sequence[str], pred: Sequence[str]) -> float | None:
    """1 − Levenshtein distance of the id sequences / the longer length (None when both are
    empty).

    >>> roacc(["a", "b", "c", "d"], ["a", "c", "b", "d"])
    0.5
    """
    longest = max(len(gold), len(pred))
    if not longest:
        return None
    return 1.0 - Levenshtein.distance(list(gold), list(pred)) / longest


def _first_positions(ids: Sequence[str]) -> dict[str, int]:
    positions: dict[str, int] = {}
    for i, block in enumerate(ids):
        positions.setdefault(block, i)
    return positions


def kendall_tau(gold: Sequence[str], pred: Sequence[str]) -> float | None:
    """Kendall tau between the gold and predicted positions of the common blocks (None with
    fewer than 2)."""
    from scipy.stats import kendalltau

    in_pred = _first_positions(pred)
    gold_pos = _first_positions(gold)
    common = [b for b in gold_pos if b in in_pred]
    if len(common) < 2:
        return None
    tau = float(kendalltau([gold_pos[b] for b in common], [in_pred[b] for b in common]).statistic)
    return None if math.isnan(tau) else tau


def coverage(gold: Sequence[str], pred: Sequence[str]) -> float | None:
    """Distinct gold ids found in the prediction / distinct gold ids (None without gold)."""
    wanted = set(gold)
    return len(wanted & set(pred)) / len(wanted) if wanted else None


def cross_page_links(gold: Sequence[Block], pred: Sequence[str]) -> tuple[int, int]:
    """(links kept, gold successor links that cross a page break)."""
    follows: dict[str, str] = {}
    for a, b in pairwise(pred):
        follows.setdefault(a, b)
    links = [
        (a.id, b.id)
        for a, b in pairwise(gold)
        if a.page is not None and b.page is not None and a.page != b.page
    ]
    return sum(1 for a, b in links if follows.get(a) == b), len(links)


def page_roacc(gold: Sequence[Block], pred: Sequence[Block]) -> dict[str, float | None]:
    """ROAcc per gold page (pages in order of first appearance); empty without pages."""
    gold_page = {b.id: b.page for b in gold}
    pages = list(dict.fromkeys(b.page for b in gold if b.page is not None))
    out: dict[str, float | None] = {}
    for page in pages:
        g = [b.id for b in gold if b.page == page]
        p = [b.id for b in pred if (b.page if b.page is not None else gold_page.get(b.id)) == page]
        out[page] = roacc(g, p)
    return out


@dataclass(frozen=True, slots=True)
class ReadingOrderResult:
    """The reading-order scores of one document."""

    roacc: float | None
    kendall_tau: float | None
    coverage: float | None
    gold_blocks: int
    pred_blocks: int
    pages: dict[str, float | None] = field(default_factory=dict)
    links_kept: int = 0
    cross_page_links: int = 0

    @property
    def continuity(self) -> float | None:
        """Share of the cross-page gold links the prediction keeps (None without any)."""
        return self.links_kept / self.cross_page_links if self.cross_page_links else None

    @property
    def page_roacc(self) -> float | None:
        """Mean of the defined per-page ROAcc values."""
        values = [v for v in self.pages.values() if v is not None]
        return sum(values) / len(values) if values else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "reading_order": self.roacc,
            "kendall_tau": self.kendall_tau,
            "coverage": self.coverage,
            "gold_blocks": self.gold_blocks,
            "pred_blocks": self.pred_blocks,
            "pages": dict(self.pages),
            "page_reading_order": self.page_roacc,
            "cross_page_links": self.cross_page_links,
            "cross_page_links_kept": self.links_kept,
            "cross_page_continuity": self.continuity,
        }


def score_reading_order(gold: Sequence[Block], pred: Sequence[Block]) -> ReadingOrderResult:
    """Every reading-order score of one document.

    >>> g = [Block("a", "1"), Block("b", "1"), Block("c", "2")]
    >>> r = score_reading_order(g, [Block("a"), Block("c"), Block("b")])
    >>> r.roacc, r.kendall_tau, r.coverage, r.continuity
    (0.33333333333333337, 0.33333333333333337, 1.0, 0.0)
    """
    g, p = [b.id for b in gold], [b.id for b in pred]
    kept, links = cross_page_links(gold, p)
    return ReadingOrderResult(
        roacc=roacc(g, p),
        kendall_tau=kendall_tau(g, p),
        coverage=coverage(g, p),
        gold_blocks=len(g),
        pred_blocks=len(p),
        pages=page_roacc(gold, pred),
        links_kept=kept,
        cross_page_links=links,
    )
