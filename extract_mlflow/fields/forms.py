"""Small lists of flat objects of exact types: their similarity matrix and the canonical forms
it read (:func:`exact_forms`), so that the pairs an assignment keeps are scored from those forms
without reading their values a second time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from .align import SMALL_PAIRS, ComparatorFor
from .normalize import TYPE_ERROR, Comparator


class ExactForms(NamedTuple):
    """The similarity of flat items whose keys each read by one exact comparator,
    with what it read: the scorer scores the pairs it assigns from these forms, without
    reading the values again."""

    similarity: list[list[float]]
    gold: list[list[tuple[str, Any, Comparator, Any]]]
    """per gold item, (key, value, comparator, canonical form) of each key, in item order"""
    pred: list[dict[str, Any]]
    """per predicted item, key -> canonical form (or TYPE_ERROR) of each key a gold item has"""


_FLAT = (str, int, float, bool)


def exact_forms(
    gold: list[dict[str, Any]], pred: list[dict[str, Any]], comparator_for: ComparatorFor
) -> ExactForms | None:
    """:func:`~extract_mlflow.fields.align.small_similarity` and the forms it read
    (:class:`ExactForms`), or None unless: there are at most as many pairs as
    :func:`~extract_mlflow.fields.align.bulk_similarity` leaves to it, every item is an object
    of present scalars only, every key is scored, and each key's gold values all read, without
    a type error, by one comparator of kind ``exact``. (Which pairs match is then a hash join
    of canonical forms, as in ``small_similarity``.)"""
    m = len(pred)
    if len(gold) * m > SMALL_PAIRS:
        return None
    if any(type(item) is not dict for item in gold) or any(type(item) is not dict for item in pred):
        return None  # a scalar among objects (or read as a list of one): compared pair by pair
    bits: dict[str, int] = {}  # key -> its bit in the key masks
    comps: dict[str, Comparator] = {}  # key -> the comparator of all its gold values
    gold_side = _gold_forms(gold, comparator_for, bits, comps)
    if gold_side is None:
        return None
    pred_side = _pred_forms(pred, comparator_for, bits, comps)
    if pred_side is None:
        return None
    (gforms, gmasks), (pforms, pmasks, by_form) = gold_side, pred_side
    sim = []
    for forms, gm in zip(gforms, gmasks, strict=True):
        row = [0] * m
        for k, _, _, c in forms:
            js = by_form[k].get(c)
            if js is not None:
                for j in js:
                    row[j] += 1
        sim.append([row[j] / ((gm | pm).bit_count() or 1) for j, pm in enumerate(pmasks)])
    return ExactForms(sim, gforms, pforms)


def _gold_forms(
    gold: list[dict[str, Any]],
    comparator_for: ComparatorFor,
    bits: dict[str, int],
    comps: dict[str, Comparator],
) -> tuple[list[list[tuple[str, Any, Comparator, Any]]], list[int]] | None:
    """Each gold item's (key, value, comparator, form) and key mask; None when a value is not
    a present scalar, a key is not scored or its values do not all read by one exact
    comparator."""
    resolvers: dict[str, Callable[[Any], Comparator]] = {}
    gforms = []
    gmasks = []
    for item in gold:
        gm = 0
        forms = []
        for k, v in item.items():
            tv = type(v)
            if tv not in _FLAT or (tv is str and (not v or v.isspace())):
                return None
            resolve = resolvers.get(k)
            if resolve is None:
                found = comparator_for(k)
                if found is None:
                    return None
                resolve = resolvers[k] = found
                bits[k] = 1 << len(bits)
            gm |= bits[k]
            comp = resolve(v)
            if comps.setdefault(k, comp) is not comp or comp.kind != "exact":
                return None
            c = comp.canon(v)
            if c is TYPE_ERROR:
                return None
            forms.append((k, v, comp, c))
        gforms.append(forms)
        gmasks.append(gm)
    return gforms, gmasks


def _pred_forms(
    pred: list[dict[str, Any]],
    comparator_for: ComparatorFor,
    bits: dict[str, int],
    comps: dict[str, Comparator],
) -> tuple[list[dict[str, Any]], list[int], dict[str, dict[Any, list[int]]]] | None:
    """Each predicted item's forms (read by its key's gold comparator) and key mask, and per
    key the items of each readable form; None when a value is not a present scalar or a key
    is not scored."""
    by_form: dict[str, dict[Any, list[int]]] = {k: {} for k in comps}
    pforms = []
    pmasks = []
    for j, item in enumerate(pred):
        pm = 0
        read = {}
        for k, pv in item.items():
            tv = type(pv)
            if tv not in _FLAT or (tv is str and (not pv or pv.isspace())):
                return None
            bit = bits.get(k)
            if bit is None:
                if comparator_for(k) is None:
                    return None
                bit = bits[k] = 1 << len(bits)
            pm |= bit
            known = comps.get(k)
            if known is not None:
                cp = read[k] = known.canon(pv)
                if cp is not TYPE_ERROR:
                    at = by_form[k].get(cp)
                    if at is None:
                        by_form[k][cp] = [j]
                    else:
                        at.append(j)
        pforms.append(read)
        pmasks.append(pm)
    return pforms, pmasks, by_form
