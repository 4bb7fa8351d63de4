"""Seeded synthetic invoices (gold) and noisy predictions of them, with exact tallies.

Pure Python (standard library only), deterministic for a given seed.

A gold document looks like an invoice an LLM would extract::

    {"id": "doc-000001",
     "invoice_number": "INV-2023-048213", "issue_date": "2023-04-17", "due_date": "2023-05-17",
     "currency": "EUR", "po_number": "PO-7731-22", "customer_name": "Halden Medical GmbH",
     "vendor": {"name": "Brightmoor Supplies Ltd", "city": "Leeds", "country": "United Kingdom",
                "vat_id": "GB481203377"},
     "subtotal": 1834.5, "tax_rate": 0.2, "tax_amount": 366.9, "total": 2201.4,
     "paid": false, "payment_terms": "Net 30",
     "line_items": [{"sku": "HX-40213", "description": "Galvanised steel hinge 40 mm",
                     "qty": 12, "unit_price": 3.45, "amount": 41.4}, ...]}

Shape (the choice made for "12 scalar fields with a nested object"): the 12 scalar fields sit at
the top level and the nested ``vendor`` object (4 scalar leaves) sits *beside* them, so a
document has 12 + 4 + 5 × 5 = 41 scored leaves with the default 5 line items. Every leaf type the
scorer infers by default occurs: JSON numbers (ints and floats) → number, ISO date strings →
date, other strings → text, booleans → bool.

Within a document the values of each line-item key are unique (and so are the changed values
the noise puts in their place), so a predicted item shares a value only with its own gold item:
the content alignment has exactly one right answer.

Noise, drawn independently for every gold leaf (the document id is never touched):

- with probability ``change`` the value is **changed** to one that compares unequal under the
  default config (numbers: ints → round(x·1.37)+1, floats → round(x·1.37+1, 2); ISO dates
  shifted by 1–45 days; strings get a suffix word; bools are flipped);
- else with probability ``drop`` it is **dropped** (its key is removed from the prediction);
- else it is **kept** (copied as is);
- independently, with probability ``extra`` an **extra** key that gold does not have is added
  beside it (in the document, in ``vendor`` or in the same line item).

The predicted line items are then shuffled. The tallies give the counts the field scorer must
report under the default config:

    TP = kept,  FP = changed + extra,  FN = changed + dropped

(an item whose values were all changed or dropped shares nothing with its gold item and stays
unpaired, which gives the same counts: its gold leaves FN, its predicted leaves FP).
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "KINDS",
    "PAGE_CONFIG",
    "Tally",
    "make_dataset",
    "make_document",
    "make_long_document",
    "page_documents",
    "perturb_document",
    "source_text",
    "structure_documents",
    "write_dataset",
    "write_jsonl",
    "write_sets",
]

LEAVES_PER_DOCUMENT = 12 + 4  # top-level scalars + vendor leaves (line items: 5 each)


# -- vocabularies (made up) -----------------------------------------------------------------
def _words(text: str) -> tuple[str, ...]:
    return tuple(w.strip() for w in text.split("|"))


_COMPANY_A = _words(
    "Brightmoor|Halden|Northwind|Ostara|Kestrel|Vantor|Lindqvist|Marrow|Caldera|Tessaly|Quillon"
    "|Ambergate|Rowan|Silvercrest|Falkner|Orrin|Bexley|Duvall|Greyfield|Yarrow|Pellham|Stroud"
    "|Auberon|Kinsale"
)
_COMPANY_B = _words(
    "Supplies|Medical|Logistics|Industrial|Foods|Textiles|Systems|Office|Engineering|Trading"
    "|Hardware|Packaging|Laboratories|Print|Energy"
)
_COMPANY_C = _words("GmbH|Ltd|SARL|B.V.|AB|S.p.A.|Inc.|AG|Oy|s.r.o.")
_PLACES = tuple(
    tuple(p.split(","))
    for p in _words(
        "Leeds,United Kingdom,GB|Bristol,United Kingdom,GB|Hamburg,Germany,DE|Leipzig,Germany,DE"
        "|Freiburg,Germany,DE|Lyon,France,FR|Nantes,France,FR|Utrecht,Netherlands,NL"
        "|Eindhoven,Netherlands,NL|Malmö,Sweden,SE|Uppsala,Sweden,SE|Bologna,Italy,IT"
        "|Turin,Italy,IT|Graz,Austria,AT|Tampere,Finland,FI|Brno,Czechia,CZ|Porto,Portugal,PT"
        "|Ghent,Belgium,BE|Aarhus,Denmark,DK|Cork,Ireland,IE"
    )
)
_CURRENCIES = _words("EUR|EUR|EUR|GBP|SEK|DKK|CZK|USD|CHF")
_TAX_RATES = (0.05, 0.07, 0.1, 0.12, 0.19, 0.2, 0.21, 0.25)
_TERM_DAYS = dict(
    (t.rsplit("=", 1)[0], int(t.rsplit("=", 1)[1]))
    for t in _words(
        "Net 14=14|Net 30=30|Net 45=45|Net 60=60|Due on receipt=0|2/10 Net 30=30|End of month=21"
    )
)
_TERMS = tuple(_TERM_DAYS)
_ADJ = _words(
    "Galvanised|Stainless|Heavy-duty|Compact|Insulated|Reinforced|Matte|Anodised|Recycled"
    "|Flexible|Waterproof|Low-voltage|Brushed|Coated|Lightweight|Ergonomic|Sealed|Tempered"
    "|Modular|Industrial"
)
_MATERIAL = _words(
    "steel|aluminium|brass|oak|nylon|copper|polymer|glass|ceramic|rubber|cotton|PVC|titanium"
    "|bamboo|silicone"
)
_NOUN = _words(
    "hinge|bracket|cable tie|door handle|shelf|pipe clamp|fan housing|junction box|tool case"
    "|valve|washer set|mounting plate|gasket|hose|desk lamp|filter|caster wheel|storage bin"
    "|sensor cover|drawer slide|cable tray|hook rail|spacer|lever|bearing"
)
_SIZES = _words("10 mm|25 mm|40 mm|60 mm|M6|M8|M10|1/2 in|3/4 in|2 m|5 m|small|large|pack of 10")
_SKU_PREFIX = _words("HX|BR|KT|ZN|PL|MQ|TR|VA|CF|DL")

# Hallucinated keys a model might add (never present in gold).
_EXTRA_KEYS = {
    "doc": _words(
        "shipping_cost|discount|bank_iban|reference|notes|order_date|contact_email|delivery_terms"
    ),
    "vendor": _words("street|postcode|phone|email|website"),
    "item": _words("discount|tax_code|unit|category|weight_kg|origin"),
}
_SUFFIX_WORDS = _words("revised|approx|copy|draft|est|pending|alt|misc")


@dataclass
class Tally:
    """What the noise did, counted in scored leaves."""

    kept: int = 0
    changed: int = 0
    dropped: int = 0
    extra: int = 0

    @property
    def tp(self) -> int:
        return self.kept

    @property
    def fp(self) -> int:
        return self.changed + self.extra

    @property
    def fn(self) -> int:
        return self.changed + self.dropped

    @property
    def expected_f1(self) -> float | None:
        """F1 the scorer must report: 2TP / (2TP + FP + FN); None when 0/0."""
        den = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / den if den else None

    @property
    def unchanged_share(self) -> float | None:
        """Share of gold values that were kept (= F1 when nothing is dropped or added)."""
        den = self.kept + self.changed + self.dropped
        return self.kept / den if den else None

    def __iadd__(self, other: Tally) -> Tally:
        self.kept += other.kept
        self.changed += other.changed
        self.dropped += other.dropped
        self.extra += other.extra
        return self

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


# -- gold -----------------------------------------------------------------------------------
def _company(rng: random.Random) -> str:
    return f"{rng.choice(_COMPANY_A)} {rng.choice(_COMPANY_B)} {rng.choice(_COMPANY_C)}"


def _description(r: random.Random) -> str:
    return f"{r.choice(_ADJ)} {r.choice(_MATERIAL)} {r.choice(_NOUN)} {r.choice(_SIZES)}"


def _unique(rng: random.Random, make: Any, taken: set[Any]) -> Any:
    for _ in range(1000):
        v = make(rng)
        if v not in taken:
            taken.add(v)
            return v
    raise RuntimeError("could not draw a unique value (vocabulary too small)")


def _line_items(rng: random.Random, n: int) -> list[dict[str, Any]]:
    """`n` line items whose values are unique per key (amount = qty × unit_price)."""
    qty_max = max(60, 4 * n)
    skus: set[str] = set()
    descs: set[str] = set()
    qtys: set[int] = set()
    prices: set[float] = set()
    amounts: set[float] = set()
    items = []
    for _ in range(n):
        sku = _unique(rng, lambda r: f"{r.choice(_SKU_PREFIX)}-{r.randint(10000, 99999)}", skus)
        desc = _unique(rng, _description, descs)
        while True:
            qty = rng.randint(1, qty_max)
            price = round(10 ** rng.uniform(-0.4, 3.2), 2)  # 0.40 .. ~1,585
            amount = round(qty * price, 2)
            if qty not in qtys and price not in prices and amount not in amounts:
                qtys.add(qty)
                prices.add(price)
                amounts.add(amount)
                break
        items.append(
            {"sku": sku, "description": desc, "qty": qty, "unit_price": price, "amount": amount}
        )
    return items


def make_document(rng: random.Random, doc_id: str, n_items: int = 5) -> dict[str, Any]:
    """One gold invoice: 12 top-level scalars, a `vendor` object (4 leaves), `n_items` items."""
    city, country, cc = rng.choice(_PLACES)
    issue = dt.date(2019, 1, 1) + dt.timedelta(days=rng.randint(0, 7 * 365))
    terms = rng.choice(_TERMS)
    items = _line_items(rng, n_items)
    subtotal = round(sum(it["amount"] for it in items), 2)
    rate = rng.choice(_TAX_RATES)
    tax = round(subtotal * rate, 2)
    return {
        "id": doc_id,
        "invoice_number": f"INV-{issue.year}-{rng.randint(1, 999_999):06d}",
        "issue_date": issue.isoformat(),
        "due_date": (issue + dt.timedelta(days=_TERM_DAYS[terms])).isoformat(),
        "currency": rng.choice(_CURRENCIES),
        "po_number": f"PO-{rng.randint(1000, 9999)}-{rng.randint(10, 99)}",
        "customer_name": _company(rng),
        "vendor": {
            "name": _company(rng),
            "city": city,
            "country": country,
            "vat_id": f"{cc}{rng.randint(100_000_000, 999_999_999)}",
        },
        "subtotal": subtotal,
        "tax_rate": rate,
        "tax_amount": tax,
        "total": round(subtotal + tax, 2),
        "paid": rng.random() < 0.4,
        "payment_terms": terms,
        "line_items": items,
    }


# -- noise ----------------------------------------------------------------------------------
def _key(value: Any) -> Any:
    """What "the same value" means for uniqueness: numbers by value, strings normalised."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", float(value))
    return ("s", " ".join(str(value).split()))


def _is_iso_date(value: str) -> bool:
    if len(value) != 10 or value[4] != "-" or value[7] != "-":
        return False
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _change(rng: random.Random, value: Any, attempt: int) -> Any:
    """A value that compares unequal to `value` under the default (inferred-type) config."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return round(value * 1.37) + 1 + attempt
    if isinstance(value, float):
        return round(value * 1.37 + 1 + 0.01 * attempt, 2)
    if isinstance(value, str):
        if _is_iso_date(value):
            shift = rng.randint(1, 45) * rng.choice((-1, 1)) + attempt * 50
            return (dt.date.fromisoformat(value) + dt.timedelta(days=shift)).isoformat()
        word = rng.choice(_SUFFIX_WORDS)
        return f"{value} {word}" if attempt == 0 else f"{value} {word} {attempt}"
    raise TypeError(f"unsupported gold value {value!r}")


def _extra_value(rng: random.Random, key: str) -> Any:
    if key in ("shipping_cost", "discount", "weight_kg"):
        return round(rng.uniform(0.5, 90.0), 2)
    if key in ("order_date",):
        return (dt.date(2019, 1, 1) + dt.timedelta(days=rng.randint(0, 2500))).isoformat()
    if key in ("bank_iban",):
        return f"DE{rng.randint(10, 99)} {rng.randint(1000, 9999)} {rng.randint(1000, 9999)} 00"
    if key in ("contact_email", "email"):
        return f"billing{rng.randint(1, 99)}@example.com"
    if key in ("phone",):
        return f"+44 {rng.randint(100, 999)} {rng.randint(100000, 999999)}"
    if key in ("postcode",):
        return f"{rng.randint(10000, 99999)}"
    return rng.choice(("see attachment", "per contract", "standard", "A1", "box", "pcs", "EU"))


class _Noise:
    def __init__(self, rng: random.Random, change: float, drop: float, extra: float) -> None:
        self.rng = rng
        self.change = change
        self.drop = drop
        self.extra = extra

    def container(
        self,
        gold: dict[str, Any],
        kind: str,
        tally: Tally,
        taken: dict[str, set[Any]] | None = None,
        skip: frozenset[str] = frozenset(),
    ) -> dict[str, Any]:
        """Perturb the scalar leaves of one object (keys in `skip` are copied untouched).

        `taken` (key -> values already used in the list) keeps changed values unique.
        """
        rng = self.rng
        out: dict[str, Any] = {}
        extras = 0
        for key, value in gold.items():
            if key in skip or isinstance(value, dict | list):
                out[key] = value
                continue
            u = rng.random()
            if u < self.change:
                attempt = 0
                new = _change(rng, value, attempt)
                if taken is not None:
                    used = taken[key]
                    while _key(new) in used:
                        attempt += 1
                        new = _change(rng, value, attempt)
                    used.add(_key(new))
                out[key] = new
                tally.changed += 1
            elif u < self.change + self.drop:
                tally.dropped += 1
            else:
                out[key] = value
                tally.kept += 1
            if rng.random() < self.extra:
                extras += 1
        names = [k for k in _EXTRA_KEYS[kind] if k not in gold]
        for n in range(extras):
            name = names[n] if n < len(names) else f"extra_{n}"
            out[name] = _extra_value(rng, name)
            tally.extra += 1
        return out


def perturb_document(
    gold: dict[str, Any],
    rng: random.Random,
    *,
    change: float = 0.10,
    drop: float = 0.05,
    extra: float = 0.03,
    shuffle: bool = True,
    id_key: str = "id",
) -> tuple[dict[str, Any], Tally]:
    """A noisy prediction of `gold` (an invoice from :func:`make_document`) and its tally."""
    noise = _Noise(rng, change, drop, extra)
    tally = Tally()
    pred = noise.container(gold, "doc", tally, skip=frozenset({id_key}))
    if "vendor" in gold:
        pred["vendor"] = noise.container(gold["vendor"], "vendor", tally)
    if "line_items" in gold:
        items = gold["line_items"]
        taken: dict[str, set[Any]] = {}
        for it in items:
            for k, v in it.items():
                taken.setdefault(k, set()).add(_key(v))
        p_items = [noise.container(it, "item", tally, taken) for it in items]
        if shuffle:
            rng.shuffle(p_items)
        pred["line_items"] = p_items
    return pred, tally


def make_dataset(
    n_docs: int = 10_000,
    seed: int = 0,
    *,
    n_items: int = 5,
    change: float = 0.10,
    drop: float = 0.05,
    extra: float = 0.03,
    shuffle: bool = True,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], Tally]:
    """`n_docs` gold invoices, their noisy predictions (same order) and the total tally."""
    rng = random.Random(seed)
    noise_rng = random.Random(rng.getrandbits(64))
    gold_rows: list[dict[str, Any]] = []
    pred_rows: list[dict[str, Any]] = []
    total = Tally()
    for i in range(n_docs):
        g = make_document(rng, f"doc-{i + 1:06d}", n_items)
        p, t = perturb_document(
            g, noise_rng, change=change, drop=drop, extra=extra, shuffle=shuffle
        )
        gold_rows.append(g)
        pred_rows.append(p)
        total += t
    return gold_rows, pred_rows, total


def make_long_document(
    n_items: int,
    seed: int = 0,
    *,
    change: float = 0.10,
    drop: float = 0.0,
    extra: float = 0.0,
) -> tuple[dict[str, Any], dict[str, Any], Tally]:
    """One invoice with `n_items` line items, shuffled in the prediction, `change` of its
    values changed (by default nothing dropped or added, so F1 = the unchanged share)."""
    rng = random.Random(seed)
    noise_rng = random.Random(rng.getrandbits(64))
    g = make_document(rng, f"long-{n_items}", n_items)
    p, t = perturb_document(g, noise_rng, change=change, drop=drop, extra=extra, shuffle=True)
    return g, p, t


# -- the optional families: sources, pages, structure -----------------------------------------
ROW_KEYS = ("sku", "description", "qty", "unit_price", "amount")
"""the line-item keys: the columns of a page's CSV block"""

PAGE_SECTIONS = ("Summary", "Parties", "Line items", "Terms")

PAGE_CONFIG = """\
# The layout profile of synth.py's invoice pages (see benchmarks/README.md).
id_key = "id"
text_key = "output"

[layout]
topic_key = "topic"
rows_key = "rows"

[layout.profiles.invoice]
required = ["Summary", "Parties", "Line items", "Terms"]
min_words = 8
table_section = "Line items"
"""
"""The config a page set is scored with: the profile its pages are written for."""

BLOCKS = ("header", "vendor", "customer", "items", "totals", "terms")
"""the reading order of an invoice's blocks in gold"""


def source_text(gold: dict[str, Any]) -> str:
    """The text of the document an invoice was extracted from: every gold value written out
    (numbers with two decimals), so a kept value is found in it and a changed one is not."""
    v, cur = gold["vendor"], gold["currency"]
    lines = [
        f"INVOICE {gold['invoice_number']}",
        f"From {v['name']}, {v['city']}, {v['country']}. VAT number {v['vat_id']}.",
        f"Bill to {gold['customer_name']}. Purchase order {gold['po_number']}.",
        f"Issued {gold['issue_date']}, due {gold['due_date']}. Terms: {gold['payment_terms']}.",
        "SKU | Description | Qty | Unit price | Amount",
        *(
            f"{it['sku']} | {it['description']} | {it['qty']} | {it['unit_price']:.2f} | "
            f"{it['amount']:.2f}"
            for it in gold["line_items"]
        ),
        f"Subtotal {gold['subtotal']:.2f} {cur}. Tax rate {gold['tax_rate']}: "
        f"{gold['tax_amount']:.2f} {cur}. Total {gold['total']:.2f} {cur}.",
        "Status: paid." if gold["paid"] else "Status: open.",
    ]
    return "\n".join(lines) + "\n"


def _csv_block(items: list[dict[str, Any]]) -> str:
    """The items as a CSV block: the row keys as columns, a key an item lacks an empty cell
    (keys gold does not have are left out)."""
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(ROW_KEYS)
    for it in items:
        writer.writerow(["" if it.get(k) is None else it[k] for k in ROW_KEYS])
    return out.getvalue()


def page_documents(
    gold: dict[str, Any], pred: dict[str, Any], rng: random.Random, *, drop_section: float = 0.1
) -> tuple[dict[str, Any], dict[str, Any]]:
    """An invoice as a page run (scored with :data:`PAGE_CONFIG`): the gold line (its line items
    as ``rows``, a ``topic`` and a ``title``) and the prediction, a wiki page written from the
    prediction `pred` (prose sections and the items as a CSV block under "Line items") with
    its token usage. With probability `drop_section` one prose section is left out."""
    gold_page = {
        "id": gold["id"],
        "topic": "invoice",
        "title": f"Invoice {gold['invoice_number']}",
        "rows": [{k: it[k] for k in ROW_KEYS} for it in gold["line_items"]],
    }
    v = pred.get("vendor", {})
    items = pred.get("line_items", [])
    prose = {
        "Summary": (
            f"Invoice {pred.get('invoice_number', 'unknown')} was issued on "
            f"{pred.get('issue_date', 'an unknown date')} for a total of "
            f"{pred.get('total', 'an unknown amount')} {pred.get('currency', '')}, "
            f"with {len(items)} line items."
        ),
        "Parties": (
            f"The vendor is {v.get('name', 'not named')} of {v.get('city', 'an unknown city')}, "
            f"and the customer is {pred.get('customer_name', 'not named')}."
        ),
        "Terms": (
            f"Payment terms are {pred.get('payment_terms', 'not stated')}, due on "
            f"{pred.get('due_date', 'an unknown date')}; the invoice is "
            f"{'paid' if pred.get('paid') else 'open'}."
        ),
    }
    if rng.random() < drop_section:
        del prose[rng.choice(sorted(prose))]
    parts = [f"= Invoice {pred.get('invoice_number', '')} ="]
    for title in PAGE_SECTIONS:
        if title == "Line items":
            parts.append(f"== {title} ==\n```csv\n{_csv_block(items)}```")
        elif title in prose:
            parts.append(f"== {title} ==\n{prose[title]}")
    page = "\n\n".join(parts) + "\n"
    usage = {"input_tokens": 900 + rng.randint(0, 300), "output_tokens": len(page) // 4}
    return gold_page, {"id": gold["id"], "output": page, "usage": usage}


TABLE_KEYS = ("sku", "qty")
"""the columns of a document's table (its first :data:`TABLE_ROWS` line items): small, so a
set of a million documents scores in reasonable time"""

TABLE_ROWS = 3


def _table_html(items: list[dict[str, Any]]) -> str:
    from html import escape

    head = "".join(f"<th>{k}</th>" for k in TABLE_KEYS)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(it.get(k, '')))}</td>" for k in TABLE_KEYS) + "</tr>"
        for it in items[:TABLE_ROWS]
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def structure_documents(
    gold: dict[str, Any], pred: dict[str, Any], rng: random.Random, *, swap: float = 0.2
) -> tuple[dict[str, Any], dict[str, Any]]:
    """An invoice with document-structure fields beside its own: its first line items as an
    HTML table (``tables``, for TEDS), its blocks in reading order (``blocks``) and two answer
    regions (``regions``, for ANLS: the total and the vendor's name). The prediction's are
    written from `pred` (its items in its order, its values); with probability `swap` two
    neighbouring blocks trade places."""
    blocks = list(BLOCKS)
    if rng.random() < swap:
        i = rng.randrange(len(blocks) - 1)
        blocks[i], blocks[i + 1] = blocks[i + 1], blocks[i]

    def regions(doc: dict[str, Any]) -> list[dict[str, str]]:
        total = doc.get("total")
        return [
            {"id": "total", "text": "" if total is None else f"{total} {doc.get('currency', '')}"},
            {"id": "vendor", "text": str(doc.get("vendor", {}).get("name", ""))},
        ]

    gold_s = {
        **gold,
        "tables": [_table_html(gold["line_items"])],
        "blocks": list(BLOCKS),
        "regions": regions(gold),
    }
    pred_s = {
        **pred,
        "tables": [_table_html(pred.get("line_items", []))],
        "blocks": blocks,
        "regions": regions(pred),
    }
    return gold_s, pred_s


# -- files ----------------------------------------------------------------------------------
def write_jsonl(rows: Iterable[dict[str, Any]], path: str | Path) -> Path:
    """Write rows as JSONL (UTF-8, one compact object per line)."""
    p = Path(path)
    with p.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")))
            f.write("\n")
    return p


def write_dataset(
    gold_rows: Iterable[dict[str, Any]],
    pred_rows: Iterable[dict[str, Any]],
    directory: str | Path,
    prefix: str = "",
) -> tuple[Path, Path]:
    """Write `<prefix>gold.jsonl` and `<prefix>pred.jsonl` in `directory`; returns both paths."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    return (
        write_jsonl(gold_rows, d / f"{prefix}gold.jsonl"),
        write_jsonl(pred_rows, d / f"{prefix}pred.jsonl"),
    )


KINDS = ("base", "sources", "pages", "structure")
"""What :func:`write_sets` writes per set: the invoices (``gold.jsonl``, ``pred.jsonl``), their
source texts (``sources.jsonl``), the invoices as page runs (``pages_gold.jsonl``,
``pages_pred.jsonl``, scored with ``pages.toml``) and with structure fields
(``structure_gold.jsonl``, ``structure_pred.jsonl``)."""

_FILES = {
    "base": ("gold", "pred"),
    "sources": ("sources",),
    "pages": ("pages_gold", "pages_pred"),
    "structure": ("structure_gold", "structure_pred"),
}


def write_sets(
    sizes: Iterable[int], seed: int, directory: str | Path, kinds: Iterable[str] = KINDS
) -> dict[int, dict[str, Path]]:
    """Write the files of `kinds` for every size under `directory`/<size>/ in one streamed
    pass, one document at a time (nothing of a set is held in memory).

    Document i is the same whatever the size (the generator draws documents in order, the
    pages and structure from their own generator), so each is drawn once and written to every
    set that holds it: the sets are prefixes of one another, and the invoices equal
    :func:`make_dataset` of that size. Returns size -> file name (``gold``, ``sources``,
    ``pages_gold``, ``pages_config``, …) -> path."""
    kinds = tuple(kinds)
    unknown = set(kinds) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown kinds {sorted(unknown)}: choose from {', '.join(KINDS)}")
    sizes = sorted(set(sizes))
    rng = random.Random(seed)
    noise_rng = random.Random(rng.getrandbits(64))
    pages_rng, structure_rng = random.Random(f"{seed}-pages"), random.Random(f"{seed}-structure")
    names = [name for kind in kinds for name in _FILES[kind]]
    files: dict[int, dict[str, Path]] = {}
    handles: list[tuple[int, dict[str, Any]]] = []

    def line(row: dict[str, Any]) -> str:
        return json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"

    try:
        for n in sizes:
            d = Path(directory) / str(n)
            d.mkdir(parents=True, exist_ok=True)
            files[n] = {name: d / f"{name}.jsonl" for name in names}
            if "pages" in kinds:
                files[n]["pages_config"] = d / "pages.toml"
                files[n]["pages_config"].write_text(PAGE_CONFIG, encoding="utf-8")
            handles.append((n, {m: files[n][m].open("w", encoding="utf-8") for m in names}))
        for i in range(sizes[-1] if sizes else 0):
            gold = make_document(rng, f"doc-{i + 1:06d}")
            pred, _ = perturb_document(gold, noise_rng)
            rows: dict[str, dict[str, Any]] = {"gold": gold, "pred": pred}
            if "sources" in kinds:
                rows["sources"] = {"id": gold["id"], "text": source_text(gold)}
            if "pages" in kinds:
                rows["pages_gold"], rows["pages_pred"] = page_documents(gold, pred, pages_rng)
            if "structure" in kinds:
                pair = structure_documents(gold, pred, structure_rng)
                rows["structure_gold"], rows["structure_pred"] = pair
            lines = {name: line(rows[name]) for name in names}
            for n, out in handles:
                if i < n:
                    for name, f in out.items():
                        f.write(lines[name])
    finally:
        for _, out in handles:
            for f in out.values():
                f.close()
    return files


if __name__ == "__main__":  # pragma: no cover - a quick look at the data
    import argparse

    ap = argparse.ArgumentParser(description="Write a synthetic gold/prediction pair as JSONL.")
    ap.add_argument("directory")
    ap.add_argument("--docs", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    g_rows, p_rows, tally = make_dataset(a.docs, a.seed)
    gp, pp = write_dataset(g_rows, p_rows, a.directory)
    print(f"wrote {gp} and {pp}: {tally.to_dict()} (TP={tally.tp} FP={tally.fp} FN={tally.fn})")
