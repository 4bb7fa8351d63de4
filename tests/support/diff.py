"""A gold set of three documents and two prediction sets that differ from it and from each other
field by field (the diff and page tests share them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

GOLD: list[dict[str, Any]] = [
    {"id": "d1", "a": 1, "b": "x"},
    {"id": "d2", "a": 2, "b": "y"},
    {"id": "d3", "a": 3, "b": "z"},
]


PRED_A: list[dict[str, Any]] = [
    {"id": "d1", "a": 1, "b": "x"},
    {"id": "d2", "a": 5, "b": "y"},
    {"id": "d3", "a": 3, "b": "q"},
]


PRED_B: list[dict[str, Any]] = [
    {"id": "d1", "a": 1, "b": "w"},
    {"id": "d2", "a": 2, "b": "y"},
    {"id": "d3", "a": 3, "b": "q"},
]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
