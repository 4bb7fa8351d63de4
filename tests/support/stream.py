"""Writing JSONL test files line by line, and Hypothesis strategies for a gold file and a
prediction file with every kind of defect (the stream and worker tests share them)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import strategies as st


def write(path: Path, lines: list[str], bom: bool = False) -> Path:
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + "".join(lines).encode("utf-8"))
    return path


def doc(doc_id: str | int, value: int) -> str:
    return json.dumps({"id": doc_id, "total": value, "items": [{"id": 7, "q": value}]}) + "\n"


ids = st.lists(
    st.one_of(st.text('abcé"\\ \t', min_size=1, max_size=4), st.integers(-5, 50)),
    min_size=1,
    max_size=12,
    unique_by=str,
)


PRED_LINE_KINDS = [
    "object",
    "truncated",  # broken JSON whose id can be recovered: a parse failure of that id
    "garbage",  # no id: unattributed
    "array",  # JSON but not an object, naming an id: a parse failure of it
    "no_id",  # an object without the id key: unattributed
    "blank",
]


@st.composite
def prediction_lines(draw: st.DrawFn, gold_ids: list[str | int]) -> list[str]:
    chosen = draw(st.lists(st.sampled_from(gold_ids), max_size=len(gold_ids) + 3))
    if draw(st.booleans()):  # the usual case: every id once, in gold order
        chosen = list(gold_ids)
    extra = draw(st.lists(st.text("xyz", min_size=1, max_size=3), max_size=2))
    lines = []
    for doc_id in [*chosen, *extra]:
        kind = draw(st.sampled_from(PRED_LINE_KINDS[:1] * 6 + PRED_LINE_KINDS[1:]))
        value = draw(st.integers(0, 3))
        if kind == "object":
            lines.append(doc(doc_id, value))
        elif kind == "truncated":
            lines.append(doc(doc_id, value)[:-12] + "\n")
        elif kind == "garbage":
            lines.append("not json at all\n")
        elif kind == "array":
            lines.append("[" + doc(doc_id, value).strip() + "]\n")
        elif kind == "no_id":
            lines.append(json.dumps({"total": value}) + "\n")
        else:
            lines.append("  \n")
    return lines


@st.composite
def file_pairs(draw: st.DrawFn) -> tuple[list[str], list[str], bool, bool]:
    gold_ids = draw(ids)
    gold = [doc(i, 1) for i in gold_ids]
    defect = draw(st.sampled_from(["none"] * 6 + ["duplicate", "broken", "blank", "late_dup"]))
    if defect == "duplicate":
        gold.insert(draw(st.integers(0, len(gold))), doc(draw(st.sampled_from(gold_ids)), 2))
    elif defect == "broken":
        gold.insert(draw(st.integers(0, len(gold))), '{"id": "zz", "total": \n')
    elif defect == "blank":
        gold.insert(draw(st.integers(0, len(gold))), "\n")
    elif defect == "late_dup":  # a repeat early and a broken line late: the repeat wins
        gold.insert(1, doc(gold_ids[0], 3))
        gold.append('{"id": \n')
    preds = draw(prediction_lines(gold_ids))
    return gold, preds, draw(st.booleans()), draw(st.booleans())
